"""The real parts: a real broker, real clients, a real recording, checked against tshark.

Debian's mosquitto runs on a free loopback port; tshark records that port on ``lo``;
mosquitto_pub and mosquitto_sub go through QoS 0, 1 and 2 flows, a retained message (and
its deletion), an empty payload, a 200 KB payload that spans many TCP segments and topics
in multi-byte UTF-8; then pubproof's own probe link sends crafted sessions over raw
sockets (QoS 3, a wildcard in the topic name, DUP on QoS 0, packet identifier 0, PUBREL
with bad flags, a QoS 1 PUBLISH on an identifier held for QoS 2). ``pubproof check``
(``--engine python``, then the default Spark engine) must find in the recording exactly
the MQTT packets tshark decodes, in the same frames (the frame that carries a packet's
last byte), with the same fields, and each crafted fault in ``violations`` with the rule
ids the project's codec and model give it. The crafted packets themselves are compared on
rule ids only (tshark reads some of them differently).

Nothing here skips: a missing broker, client or tshark fails the test.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from brokers import BROKERS, started
from support.tshark_decode import (
    Pdu,
    mqtt_pdus,
    preferences,
    start_capture,
    stop_capture,
    tool,
    tshark,
)

from pubproof.judge import packets as control
from pubproof.model.editions import Edition
from pubproof.pipeline.synth.faults import (
    Fault,
    checked_wire_fault,
    flow_findings,
)
from pubproof.probe.evidence import Recorder
from pubproof.probe.link import Link
from pubproof.probe.target import Target
from pubproof.reference import Publish, PubRel, encode

TOPIC_UTF8 = "pp/温度/été/\U0001f680"
LARGE = 200 * 1024
PUBLISHES: list[tuple[str, list[str]]] = [  # (topic, mosquitto_pub options)
    ("pp/q0", ["-q", "0", "-m", "zero"]),
    ("pp/q1", ["-q", "1", "-m", "one"]),
    ("pp/q2", ["-q", "2", "-m", "two"]),
    (TOPIC_UTF8, ["-q", "2", "-m", "utf-8 topic"]),
    ("pp/empty", ["-q", "1", "-n"]),
    ("pp/retained", ["-q", "1", "-r", "-m", "kept"]),
]


@dataclass(slots=True)
class Recording:
    """The capture, the broker's port, and the crafted sessions: client port -> (fault,
    the rule ids of each finding expected on the faulty packet)."""

    path: Path
    port: int
    crafted: dict[int, tuple[str, list[tuple[str, ...]]]] = field(default_factory=dict)


# -- recording ------------------------------------------------------------------------------


def run_clients(port: int, folder: Path) -> None:
    """Real clients through every flow; the subscriber must receive every message."""
    common = ["-h", "127.0.0.1", "-p", str(port)]
    expected_messages = len(PUBLISHES) + 2  # and the large one, and the retained deletion
    subscriber = subprocess.Popen(
        [tool("mosquitto_sub"), *common, "-i", "pp-sub", "-q", "2", "-t", "pp/#", "-v",
         "-C", str(expected_messages), "-W", "60", "-N"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    time.sleep(1.0)  # subscribed
    large = folder / "large.bin"
    large.write_bytes(bytes(range(256)) * (LARGE // 256))
    runs = [(topic, options) for topic, options in PUBLISHES]
    runs.append(("pp/large", ["-q", "1", "-f", str(large)]))
    for number, (topic, options) in enumerate(runs):
        subprocess.run(
            [tool("mosquitto_pub"), *common, "-i", f"pp-pub-{number}", "-t", topic, *options],
            check=True, timeout=30, capture_output=True,
        )  # fmt: skip
    # a new subscriber gets the retained message with RETAIN 1
    retained = subprocess.run(
        [tool("mosquitto_sub"), *common, "-i", "pp-late", "-q", "1", "-t", "pp/retained",
         "-C", "1", "-W", "20"],
        check=True, timeout=30, capture_output=True,
    )  # fmt: skip
    assert retained.stdout.strip() == b"kept"
    # an empty retained message deletes it (and reaches the subscriber with RETAIN 0)
    subprocess.run(
        [tool("mosquitto_pub"), *common, "-i", "pp-clear", "-t", "pp/retained", "-r", "-n",
         "-q", "1"],
        check=True, timeout=30, capture_output=True,
    )  # fmt: skip
    out, err = subscriber.communicate(timeout=90)
    assert subscriber.returncode == 0, err
    assert out.count(b"\n") >= expected_messages  # the large payload has newlines of its own


def open_link(port: int, name: str) -> Link:
    link = Link.open(
        Target.parse(f"mqtt://127.0.0.1:{port}"), name, Recorder(), 5.0, Edition.V311, {}
    )
    link.send(control.connect(name, clean=True))
    read_until(link, lambda types: "CONNACK" in types)
    return link


def read_until(link: Link, done: Any, seconds: float = 5.0) -> list[str]:
    """Read packets until ``done(types so far)`` or the link closes; the types read."""
    types: list[str] = []
    end = time.monotonic() + seconds
    while not link.closed and time.monotonic() < end and not done(types):
        types += [str(received.entry.get("type")) for received in link.read()]
    return types


def crafted_sessions(port: int) -> dict[int, tuple[str, list[tuple[str, ...]]]]:
    """One raw connection per fault; the faulty packet is the last the client sends."""
    crafted: dict[int, tuple[str, list[tuple[str, ...]]]] = {}
    for fault in (f for f in Fault if f.is_wire):
        link = open_link(port, f"pp-{fault.value}")
        data, rule = checked_wire_fault(fault, topic="pp/fault", packet_id=7, payload=b"bad")
        crafted[link.sock.getsockname()[1]] = (fault.value, [(rule,)])
        link.send(data)
        read_until(link, lambda types: False, seconds=1.5)  # the broker may close
        link.drop("done")
    # QoS 2 PUBLISH, PUBREC, then a QoS 1 PUBLISH on the same identifier (still held);
    # PUBREL and PUBCOMP complete the QoS 2 flow, then the client leaves
    link = open_link(port, "pp-flow")
    crafted[link.sock.getsockname()[1]] = (
        Fault.QOS1_ON_HELD_ID.value,
        list(flow_findings("pp/flow", 9)),
    )
    link.send(encode(Publish(topic="pp/flow", qos=2, packet_id=9, payload=b"two")))
    read_until(link, lambda types: "PUBREC" in types)
    link.send(encode(Publish(topic="pp/flow", qos=1, packet_id=9, payload=b"one")))
    read_until(link, lambda types: False, seconds=0.5)
    link.send(encode(PubRel(packet_id=9)))
    read_until(link, lambda types: "PUBCOMP" in types)
    link.send(control.DISCONNECT)
    link.drop("done")
    return crafted


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recording]:
    missing = BROKERS["mosquitto"].available()
    assert missing is None, missing
    folder = tmp_path_factory.mktemp("live")
    path = folder / "live.pcapng"
    with started("mosquitto") as broker:
        port = broker.port
        capture = start_capture(path, port)
        try:
            run_clients(port, folder)
            crafted = crafted_sessions(port)
        finally:
            stop_capture(capture)
        yield Recording(path=path, port=port, crafted=crafted)


# -- the pipeline and tshark --------------------------------------------------------------


def check(recording: Recording, out: Path, *engine: str) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-m", "pubproof", "check", str(recording.path), "--out", str(out),
         "--port", str(recording.port), "--json", "--quiet", *engine],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode in (0, 1), result.stderr[-3000:]
    summary: dict[str, Any] = json.loads(result.stdout)
    return summary


@pytest.fixture(scope="module")
def python_run(recording: Recording, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("check-python")
    check(recording, out, "--engine", "python")
    return out


@pytest.fixture(scope="module")
def tshark_pdus(recording: Recording) -> list[Pdu]:
    extra = ["mqtt.hdrflags", "mqtt.len", "mqtt.qos", "mqtt.dupflag", "mqtt.retain",
             "mqtt.topic_len", "mqtt.topic", "mqtt.msgid"]  # fmt: skip
    return mqtt_pdus(recording.path, extra, options=preferences([recording.port]))


def direction(pdu: Pdu, port: int) -> str:
    return "s2c" if pdu.src_port == port else "c2s"


def faulty_frames(recording: Recording, pdus: list[Pdu]) -> dict[tuple[str, int], int]:
    """(direction, frame) of each crafted session's faulty packet -> its client port."""
    points: dict[tuple[str, int], int] = {}
    for client_port, (fault, _) in recording.crafted.items():
        sent = [p for p in pdus if p.src_port == client_port]
        if fault == Fault.QOS1_ON_HELD_ID.value:
            bad = [p for p in sent if p.msgtype == 3 and p.fields.get("mqtt.qos") == "1"]
        else:
            bad = sent[-1:]
        assert len(bad) == 1, (fault, sent)
        points[("c2s", bad[0].frame)] = client_port
    return points


def tshark_row(pdu: Pdu) -> dict[str, Any]:
    """tshark's decoding in the pipeline's column names (only what both tell)."""
    f = pdu.fields
    row: dict[str, Any] = {"type": pdu.type_name}
    if pdu.msgtype == 3:
        qos = int(f["mqtt.qos"])
        topic_len = int(f["mqtt.topic_len"])
        row |= {
            "qos": qos, "dup": f["mqtt.dupflag"] in ("1", "True"),
            "retain": f["mqtt.retain"] in ("1", "True"), "topic": f.get("mqtt.topic", ""),
            "packet_id": int(f["mqtt.msgid"]) if qos else None,
            "payload_len": int(f["mqtt.len"]) - 2 - topic_len - (2 if qos else 0),
        }  # fmt: skip
    elif 4 <= pdu.msgtype <= 7:
        row["packet_id"] = int(f["mqtt.msgid"])
    return row


def pipeline_row(row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": row["type"]}
    if row["type"] == "PUBLISH":
        out |= {k: row[k] for k in ("qos", "dup", "retain", "topic", "payload_len")}
    if row["type"] in ("PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP"):
        out["packet_id"] = None if row["packet_id"] is None else int(row["packet_id"])
    return out


# -- the tests -----------------------------------------------------------------------------------


def test_the_recording_has_every_flow(recording: Recording, tshark_pdus: list[Pdu]) -> None:
    """The traffic is what the tests claim to check (so a broken client run cannot pass)."""
    port = recording.port
    published = [p for p in tshark_pdus if p.msgtype == 3]
    assert {int(p.fields["mqtt.qos"]) for p in published} >= {0, 1, 2, 3}
    assert {4, 5, 6, 7} <= {p.msgtype for p in tshark_pdus}
    assert any(p.fields.get("mqtt.topic") == TOPIC_UTF8 for p in published)
    published = [p for p in published if p.fields["mqtt.qos"] != "3"]
    rows = [tshark_row(p) for p in published]
    assert any(r["payload_len"] == 0 for r in rows)
    pairs = zip(rows, published, strict=True)
    assert any(r["retain"] and direction(p, port) == "s2c" for r, p in pairs)
    large = [p for p in published if p.fields.get("mqtt.topic") == "pp/large"]
    assert len(large) == 2 and all(tshark_row(p)["payload_len"] == LARGE for p in large)
    assert len(recording.crafted) == len(Fault)


def test_packets_equal_tsharks_decoding(
    recording: Recording, python_run: Path, tshark_pdus: list[Pdu]
) -> None:
    port = recording.port
    faulty = faulty_frames(recording, tshark_pdus)
    theirs: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for pdu in tshark_pdus:
        theirs[(direction(pdu, port), pdu.frame)].append(tshark_row(pdu))
    ours: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    table = pq.read_table(python_run / "packets").to_pylist()
    for row in sorted(table, key=lambda r: (r["frame"], r["direction"], r["offset"])):
        ours[(row["direction"], int(row["frame"]))].append(pipeline_row(row))
    for point in faulty:  # compared on rule ids only (the violations test)
        theirs.pop(point, None)
        ours.pop(point, None)
    differences = [
        (point, theirs.get(point), ours.get(point))
        for point in sorted(set(theirs) | set(ours), key=lambda p: p[1])
        if theirs.get(point) != ours.get(point)
    ]
    assert not differences, differences[:5]
    assert sum(len(v) for v in ours.values()) > 50


def test_connections_are_tsharks_streams(
    recording: Recording, python_run: Path, tshark_pdus: list[Pdu]
) -> None:
    by_stream: dict[int, set[int]] = defaultdict(set)
    for pdu in tshark_pdus:
        by_stream[pdu.stream].add(pdu.frame)
    by_connection: dict[str, set[int]] = defaultdict(set)
    for row in pq.read_table(python_run / "packets").to_pylist():
        by_connection[row["connection"]].add(int(row["frame"]))
    assert sorted(map(sorted, by_stream.values())) == sorted(map(sorted, by_connection.values()))


def test_crafted_faults_are_violations_with_the_right_rules(
    recording: Recording, python_run: Path, tshark_pdus: list[Pdu]
) -> None:
    faulty = faulty_frames(recording, tshark_pdus)
    violations = pq.read_table(python_run / "violations").to_pylist()
    findings: dict[tuple[str, int], list[set[str]]] = defaultdict(list)
    for row in violations:
        if row["kind"] in ("violation", "malformed"):
            rules = {row["rule"], *(r for r in (row.get("rules") or "").split(",") if r)}
            findings[(row["direction"], int(row["frame"]))].append(rules)
    for point, client_port in faulty.items():
        fault, wanted = recording.crafted[client_port]
        got = findings.get(point, [])
        for wanted_rules in wanted:
            assert any(set(wanted_rules) <= found for found in got), (fault, point, wanted, got)
    # the real clients are well-behaved: nothing they send is a violation
    crafted_frames = {p.frame for p in tshark_pdus if p.src_port in recording.crafted}
    clean = [
        (point, rules)
        for point, rules in findings.items()
        if point[0] == "c2s" and point[1] not in crafted_frames
    ]
    assert not clean, clean


def test_reconciliation_accounts_for_every_frame(recording: Recording, python_run: Path) -> None:
    reconciliation = json.loads((python_run / "reconciliation.json").read_text())
    frames = tshark_frame_count(recording.path)
    assert reconciliation["frames_in"] == frames
    assert reconciliation["frames_used"] + reconciliation["frames_quarantined"] == frames


def tshark_frame_count(path: Path) -> int:
    result = subprocess.run(
        [tshark(), "-r", str(path), "-T", "fields", "-e", "frame.number"],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    return len(result.stdout.splitlines())


def test_spark_engine_writes_the_same_tables(
    recording: Recording, python_run: Path, tmp_path: Path
) -> None:
    summary = check(recording, tmp_path / "spark")  # the default engine: Spark, local[*]
    assert summary.get("engine", "spark") == "spark"
    for table in ("packets", "violations", "connections"):
        ours = pq.read_table(tmp_path / "spark" / table).to_pylist()
        reference = pq.read_table(python_run / table).to_pylist()
        key = lambda row: json.dumps(row, sort_keys=True, default=str)  # noqa: E731
        assert sorted(ours, key=key) == sorted(reference, key=key), table
