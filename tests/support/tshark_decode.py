"""tshark's own decoding of a capture, for the pipeline tests to compare against.

tshark is a required tool of the test suite (``scripts/system-deps`` installs it): when it
is missing the tests that need it fail, they do not skip.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

TSHARK = shutil.which("tshark")

#: the MQTT packet type numbers tshark reports in ``mqtt.msgtype`` (MQTT section 2.2.1)
MSGTYPE_NAMES = {
    1: "CONNECT", 2: "CONNACK", 3: "PUBLISH", 4: "PUBACK", 5: "PUBREC", 6: "PUBREL",
    7: "PUBCOMP", 8: "SUBSCRIBE", 9: "SUBACK", 10: "UNSUBSCRIBE", 11: "UNSUBACK",
    12: "PINGREQ", 13: "PINGRESP", 14: "DISCONNECT",
}  # fmt: skip

#: expert-info severity "error" (PI_ERROR): malformed packets and the like
PI_ERROR = 0x00800000


def tshark() -> str:
    assert TSHARK is not None, "tshark is not installed (scripts/system-deps installs it)"
    return TSHARK


def preferences(ports: Sequence[int] = (1883,)) -> list[str]:
    """Options that make tshark decode MQTT the way a capture reader should: out-of-order
    segments reassembled, MQTT on the given ports."""
    options = ["-o", "tcp.reassemble_out_of_order:TRUE"]
    for port in ports:
        if port != 1883:  # 1883 is MQTT's registered port: tshark decodes it unasked
            options += ["-d", f"tcp.port=={port},mqtt"]
    return options


def fields(
    path: Path | str, names: Sequence[str], *, options: Sequence[str] = (), timeout: float = 600
) -> list[list[str]]:
    """One row per frame: the values of ``names`` (several PDUs in a frame give
    comma-separated values). Fails if tshark fails or complains on stderr."""
    argv = [tshark(), "-r", str(path), "-n", "-T", "fields", "-E", "separator=/t"]
    argv += [*options, *(arg for name in names for arg in ("-e", name))]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    complaints = [
        line
        for line in result.stderr.splitlines()
        if line.strip() and "Running as user" not in line
    ]
    assert result.returncode == 0 and not complaints, (result.returncode, complaints[:10])
    return [line.split("\t") for line in result.stdout.splitlines()]


def split(value: str) -> list[str]:
    """The values of one multi-valued field (empty: none)."""
    return value.split(",") if value else []


@dataclass(frozen=True, slots=True, kw_only=True)
class Pdu:
    """One MQTT packet as tshark decodes it (in the frame where its last byte arrives)."""

    frame: int
    stream: int
    src_port: int
    msgtype: int
    fields: dict[str, str]

    @property
    def type_name(self) -> str:
        return MSGTYPE_NAMES.get(self.msgtype, f"RESERVED-{self.msgtype}")


def mqtt_pdus(
    path: Path | str, extra: Sequence[str] = (), *, options: Sequence[str] = ()
) -> list[Pdu]:
    """Every MQTT packet tshark finds, in capture order, with the ``extra`` fields.

    Multi-valued fields are paired up by position with ``mqtt.msgtype`` when they have
    one value per PDU (``mqtt.len``, ``mqtt.hdrflags``); fields that only some packet types
    carry (``mqtt.topic``, ``mqtt.msgid``) are listed per frame and assigned in order to the
    PDUs of types that carry them, as tshark emits them in PDU order.
    """
    carriers = {
        "mqtt.topic": {3, 8, 10},  # SUBSCRIBE and UNSUBSCRIBE filters too (one each here)
        "mqtt.msgid": {3, 4, 5, 6, 7, 8, 9, 10, 11},
        "mqtt.qos": {3},
        "mqtt.dupflag": {3},
        "mqtt.retain": {3},
        "mqtt.msg": {3},
        "mqtt.clientid": {1},
    }
    names = ["frame.number", "tcp.stream", "tcp.srcport", "mqtt.msgtype", *extra]
    out: list[Pdu] = []
    for row in fields(path, names, options=options):
        types = [int(t) for t in split(row[3])]
        if not types:
            continue
        per_pdu: list[dict[str, str]] = [{} for _ in types]
        for name, value in zip(extra, row[4:], strict=True):
            values = split(value)
            if name in carriers:
                slots = [i for i, t in enumerate(types) if t in carriers[name]]
                # a QoS 0 PUBLISH carries no msgid: assign msgids only where present
                if name == "mqtt.msgid" and len(values) != len(slots):
                    slots = _msgid_slots(types, per_pdu, len(values))
                for i, v in zip(slots, values, strict=False):
                    per_pdu[i][name] = v
            elif len(values) == len(types):
                for i, v in enumerate(values):
                    per_pdu[i][name] = v
            else:
                for i in range(len(types)):
                    per_pdu[i][name] = value
        out += [
            Pdu(frame=int(row[0]), stream=int(row[1]), src_port=int(row[2]), msgtype=t, fields=f)
            for t, f in zip(types, per_pdu, strict=True)
        ]
    return out


def _msgid_slots(types: list[int], per_pdu: list[dict[str, str]], count: int) -> list[int]:
    """Which PDUs of a frame carry a packet identifier, when some are QoS 0 PUBLISH."""
    slots = []
    for i, t in enumerate(types):
        if t == 3:
            qos = per_pdu[i].get("mqtt.qos")
            if qos is None:
                raise AssertionError("list mqtt.qos before mqtt.msgid to pair identifiers")
            if qos != "0":
                slots.append(i)
        elif t in (4, 5, 6, 7, 8, 9, 10, 11):
            slots.append(i)
    assert len(slots) == count, (types, count)
    return slots


def tool(name: str) -> str:
    path = shutil.which(name)
    assert path is not None, f"{name} is not installed (scripts/system-deps installs it)"
    return path


def start_capture(path: Path, port: int) -> subprocess.Popen[bytes]:
    """tshark on loopback, filtered to the broker's port; returns once it captures."""
    argv = [tshark(), "-i", "lo", "-f", f"tcp port {port}", "-w", str(path), "-q"]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    end = time.monotonic() + 30
    seen = b""
    while time.monotonic() < end:
        line = process.stderr.readline()
        seen += line
        if b"Capturing on" in line:
            time.sleep(0.3)  # the filter is attached once tshark says so; a margin anyway
            return process
        if process.poll() is not None:
            break
    process.kill()
    raise AssertionError(f"tshark did not start capturing: {seen.decode(errors='replace')}")


def stop_capture(process: subprocess.Popen[bytes]) -> None:
    time.sleep(0.5)  # the last segments reach the capture
    process.send_signal(signal.SIGINT)  # tshark writes out and exits cleanly
    try:
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
