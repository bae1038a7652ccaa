"""The driver of libmosquitto through Debian's ``mosquitto_sub`` and ``mosquitto_pub`` for
``pubproof probe-client`` (the protocol: :mod:`pubproof.probe.clients.driver`).

A plan that subscribes runs ``mosquitto_sub`` (one filter per ``-t``, every message printed
as QoS, RETAIN, topic and the payload in hex, turned into the protocol's lines here); a
plan that publishes runs ``mosquitto_pub -l``, which publishes each line of its standard
input as one message on one connection (so all of a plan's messages share its first
topic, QoS and RETAIN). Both reconnect as libmosquitto's loop does.

MQTT 5.0 (``-V mqttv5``): the client's limits and Session Expiry Interval go in CONNECT
(``-D connect ...``, ``-x``), a message's properties with ``-D publish ...`` (one set for
every line: a plan whose messages differ in topic or properties, or whose Correlation Data
or payload is not text on one line, is ``unsupported``), and ``mosquitto_sub -F`` prints
the properties of each message it receives.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import threading
from typing import Any

from pubproof.probe.drivers.common import message, plan, say

_VERSION = re.compile(r"running on libmosquitto (\S+?)\.?$", re.M)
#: mosquitto_sub's output: QoS, RETAIN, payload (hex), then "|"-separated 5.0 properties
#: (Content Type, Correlation Data, Message Expiry, Payload Format, User Properties,
#: Response Topic) and the topic last
FORMAT50 = "%q %r %x %C|%D|%E|%F|%P|%R|%t"
VERSIONS = {"3.1": "mqttv31", "3.1.1": "mqttv311", "5.0": "mqttv5"}
#: a plan's limit -> mosquitto's CONNECT property name
LIMITS = {
    "receive_maximum": "receive-maximum",
    "topic_alias_maximum": "topic-alias-maximum",
    "maximum_packet_size": "maximum-packet-size",
}


def library_version() -> str | None:
    """libmosquitto's version, as ``mosquitto_sub --help`` gives it ("unknown" if it does
    not); None when ``mosquitto_sub`` is not installed."""
    if shutil.which("mosquitto_sub") is None:
        return None
    out = subprocess.run(["mosquitto_sub", "--help"], capture_output=True, text=True, check=False)
    found = _VERSION.search(out.stdout + out.stderr)
    return found.group(1) if found else "unknown"


def _publish_properties(properties: dict[str, Any]) -> list[str] | str:
    """``-D publish`` options for a message's properties, or why they cannot be given."""
    out: list[str] = []
    for key, value in properties.items():
        if key == "user_properties":
            for name, text in value:
                out += ["-D", "publish", "user-property", str(name), str(text)]
            continue
        if key == "correlation_data_hex":
            data = bytes.fromhex(value)
            if not data.isascii() or not data.decode().isprintable():
                return "mosquitto_pub takes Correlation Data as a command-line string"
            value = data.decode()
        name = key.replace("_", "-").removesuffix("-hex")
        out += ["-D", "publish", name, str(value)]
    return out


def _unsupported(p: dict[str, Any]) -> str | None:
    """Why mosquitto_pub cannot publish the plan's messages as asked (5.0 only: 3.1 and
    3.1.1 keep the first message's topic, QoS and RETAIN for all)."""
    messages = p["publish"]
    if p["edition"] != "5.0" or not messages:
        return None
    first = messages[0]
    if any(m["topic"] != first["topic"] or m.get("properties") != first.get("properties")
           for m in messages):  # fmt: skip
        return "mosquitto_pub -l publishes every line to one topic with one set of properties"
    for m in messages:
        payload = bytes.fromhex(m["payload_hex"])
        try:
            text = payload.decode()
        except UnicodeDecodeError:
            return "mosquitto_pub -l publishes lines of text"
        if "\n" in text:
            return "mosquitto_pub -l publishes lines of text"
    found = _publish_properties(first.get("properties") or {})
    return found if isinstance(found, str) else None


def main() -> None:
    p = plan()
    if shutil.which("mosquitto_sub") is None:
        say("error", message="mosquitto_sub is not installed (Debian: mosquitto-clients)")
        sys.exit(2)
    say("hello", library="libmosquitto (mosquitto_sub/mosquitto_pub)", version=library_version())
    why = _unsupported(p)
    if why is not None:
        say("unsupported", message=why)
        for _ in sys.stdin:  # until standard input closes
            pass
        return
    v5 = p["edition"] == "5.0"
    common = [
        "-h",
        p["host"],
        "-p",
        str(p["port"]),
        "-i",
        p["client_id"],
        "-k",
        str(p["keepalive"]),
    ]
    common += ["-V", VERSIONS[p["edition"]]]
    if not p["clean_session"]:
        common.append("-c")
    if v5:
        if p.get("session_expiry_interval") is not None:
            common += ["-x", str(p["session_expiry_interval"])]
        for key, value in p.get("limits", {}).items():
            common += ["-D", "connect", LIMITS[key], str(value)]
    if p["subscribe"]:
        argv = ["mosquitto_sub", *common, "-F", FORMAT50 if v5 else "%q %r %x %t"]
        for s in p["subscribe"]:
            argv += ["-t", s["topic"], "-q", str(s["qos"])]
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, errors="replace")
        threading.Thread(target=_messages, args=(process, v5), daemon=True).start()
    else:
        first = p["publish"][0]
        argv = ["mosquitto_pub", *common, "-l", "-t", first["topic"], "-q", str(first["qos"])]
        if first["retain"]:
            argv.append("-r")
        options = _publish_properties(first.get("properties") or {})
        assert isinstance(options, list)
        argv += options
        process = subprocess.Popen(argv, stdin=subprocess.PIPE, text=True)
        assert process.stdin is not None
        for m in p["publish"]:
            process.stdin.write(bytes.fromhex(m["payload_hex"]).decode() + "\n")
        process.stdin.flush()
    for _ in sys.stdin:  # until standard input closes
        pass
    if process.stdin is not None:
        process.stdin.close()
    try:
        process.wait(1.0)
    except subprocess.TimeoutExpired:
        process.terminate()
        process.wait(2.0)
    _ended(argv[0], process.returncode)


def _ended(program: str, code: int | None) -> None:
    """mosquitto_sub and mosquitto_pub end with a status of their own when libmosquitto
    reports a protocol error (the library closed the connection: the application ends);
    only a death by a signal other than the driver's own stop is a crash."""
    if code is not None and code < 0 and code != -15:
        say("error", message=f"{program} died by signal {-code}")
        sys.exit(1)
    if code:
        say("connection-lost", message=f"{program} ended with status {code}")


def _properties50(fields: list[str]) -> dict[str, Any]:
    """The P form of what ``FORMAT50`` printed (empty fields: absent)."""
    content, correlation, expiry, indicator, users, response = fields
    out: dict[str, Any] = {}
    if indicator:
        out["payload_format_indicator"] = int(indicator)
    if expiry:
        out["message_expiry_interval"] = int(expiry)
    if response:
        out["response_topic"] = response
    if correlation:
        out["correlation_data_hex"] = correlation.encode("utf-8", errors="replace").hex()
    if users:
        out["user_properties"] = [list(pair.split(":", 1)) for pair in users.split(" ")]
    if content:
        out["content_type"] = content
    return out


def _messages(process: subprocess.Popen[str], v5: bool) -> None:
    assert process.stdout is not None
    for line in process.stdout:
        if not v5:
            qos, retain, payload, topic = line.rstrip("\n").split(" ", 3)
            message(topic, int(qos), retain == "1", bytes.fromhex(payload))
            continue
        qos, retain, payload, rest = line.rstrip("\n").split(" ", 3)
        fields = rest.split("|", 6)
        say(
            "message", topic=fields[6], qos=int(qos), retain=retain == "1",
            payload_hex=payload, properties=_properties50(fields[:6]),
        )  # fmt: skip
    _ended("mosquitto_sub", process.wait())


if __name__ == "__main__":
    main()
