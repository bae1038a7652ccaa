"""Judging captured packets: the codec's wire rules and the flow tables' rules show up in
``violations`` with the right rule id, kind, role, frame and byte offset; summary examples
are chosen deterministically."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.pipeline_builder import (
    CONNACK,
    Conn,
    Outcome,
    ack,
    connect,
    ether,
    mqtt,
    pcap,
    publish,
    run_check,
)

from pubproof.model.editions import Edition


def _run(
    tmp_path: Path,
    *packets: tuple[str, bytes],
    level: int = 4,
    name: str = "j.pcap",
    out: str = "out",
    edition: Edition | None = None,
) -> tuple[Outcome, list[int]]:
    """One session; returns the outcome and each packet's stream offset in its direction."""
    conn = Conn()
    frames = [
        *conn.handshake(),
        conn.segment("c2s", connect("cli", level=level)),
        conn.segment("s2c", CONNACK),
    ]
    offsets = []
    for direction, data in packets:
        offsets.append(conn.seq[direction] - conn.isn[direction] - 1)
        frames.append(conn.segment(direction, data))
    frames += conn.close()
    outcome = run_check(
        tmp_path, {name: pcap([ether(f) for f in frames])}, out=out, edition=edition
    )
    assert outcome.reconciliation["ok"] is True
    return outcome, offsets


FIRST = 6  # the frame of the first packet after CONNECT (4) and CONNACK (5)


@pytest.mark.parametrize(
    ("packet", "rule", "kind", "at"),
    [
        (publish("a", b"x", first=0x36, packet_id=1), "MQTT-3.3.1-4", "malformed", 0),
        (publish("a/+", b"x"), "MQTT-3.3.2-2", "violation", 2 + 2 + 2),
        (publish("a", b"x", dup=True), "MQTT-3.3.1-2", "violation", 0),
        (publish("a", b"x", qos=1, packet_id=0), "MQTT-2.3.1-1", "violation", 2 + 2 + 1),
        (ack("PUBREL", 5, flags=0), "MQTT-3.6.1-1", "malformed", 0),
        (ack("PUBACK", 5, flags=1), "MQTT-2.2.2-1", "malformed", 0),
    ],
)
def test_wire_rules(tmp_path: Path, packet: bytes, rule: str, kind: str, at: int) -> None:
    outcome, offsets = _run(tmp_path, ("c2s", publish("ok", b"1")), ("c2s", packet))
    (row,) = outcome.tables["violations"]
    assert (row["rule"], row["kind"], row["role"], row["direction"]) == (
        rule,
        kind,
        "client",
        "c2s",
    )
    assert (row["frame"], row["offset"]) == (FIRST + 1, offsets[1] + at)
    assert row["endpoint"] == "cli"
    (entry,) = json.loads(str(row["evidence"]))
    assert entry["error"]["rule"] == rule and entry["frame"] == FIRST + 1
    assert entry["dir"] == "c2s" and entry["conn"] == row["connection"]
    (bad,) = outcome.rows("packets", error_rule=rule)
    assert bad["error_kind"] == kind
    # a sound fixed header: framing goes on after the malformed packet
    assert outcome.tables["packets"][-1]["frame"] == FIRST + 1
    assert outcome.tables["summary"][0]["count"] == 1


def test_edition_from_connect_and_forced(tmp_path: Path) -> None:
    dup0 = publish("a", b"x", dup=True)
    outcome, _ = _run(tmp_path, ("c2s", dup0), level=3)
    assert outcome.tables["connections"][0]["edition"] == "3.1"
    assert outcome.tables["violations"] == []  # 3.1: DUP on QoS 0 "is not used" (ignored)
    forced, _ = _run(tmp_path / "..", ("c2s", dup0), level=3, out="forced", edition=Edition.V311)
    assert [r["rule"] for r in forced.tables["violations"]] == ["MQTT-3.3.1-2"]


def test_unsupported_protocol_level_is_framed_not_judged(tmp_path: Path) -> None:
    # level 5 is MQTT 5.0 (tests/test_pipeline_v5.py); 6 names no edition
    outcome, _ = _run(tmp_path, ("c2s", publish("a/+", b"x", first=0x36)), level=6)
    row = outcome.tables["connections"][0]
    assert row["status"] == "unsupported-level" and row["level"] == 6
    assert outcome.tables["violations"] == []
    assert [r["type"] for r in outcome.tables["packets"]][-1] == "PUBLISH"


def test_unsound_fixed_header_stops_the_direction(tmp_path: Path) -> None:
    outcome, offsets = _run(
        tmp_path,
        ("c2s", bytes((0x00, 0x02, 1, 2))),
        ("c2s", publish("x")),
        ("s2c", publish("still", b"framed")),
    )
    (row,) = outcome.tables["violations"]
    assert (row["rule"], row["kind"], row["offset"]) == (
        "PP311-2.2.1-reserved-type",
        "malformed",
        offsets[0],
    )
    unparsed = json.loads(str(outcome.tables["connections"][0]["unparsed"]))
    assert unparsed == {"after-malformed": 4 + len(publish("x"))}
    assert outcome.tables["packets"][-1]["topic"] == "still"


def test_flow_violation_pubrel_before_pubrec(tmp_path: Path) -> None:
    outcome, offsets = _run(
        tmp_path,
        ("c2s", publish("q2", b"m", qos=2, packet_id=9)),
        ("c2s", ack("PUBREL", 9)),
        ("s2c", ack("PUBREC", 9)),
    )
    (row,) = outcome.rows("violations", kind="violation")
    assert (row["rule"], row["role"], row["frame"], row["offset"]) == (
        "MQTT-4.3.3-1",
        "client",
        FIRST + 1,
        offsets[1],
    )
    trail = json.loads(str(row["evidence"]))
    assert [(e["type"], e["packet_id"]) for e in trail] == [("PUBLISH", 9), ("PUBREL", 9)]


def test_flow_findings_about_the_server(tmp_path: Path) -> None:
    outcome, offsets = _run(
        tmp_path,
        ("s2c", ack("PUBACK", 44)),  # nobody awaits it: tolerated by the tables
        ("s2c", publish("f", b"1", qos=1, packet_id=3)),
        ("s2c", publish("f", b"1", qos=1, packet_id=3)),  # re-sent with DUP 0
    )
    rows = [
        (r["kind"], r["rule"], r["role"], r["frame"], r["offset"])
        for r in outcome.tables["violations"]
    ]
    assert rows == [
        ("tolerated", "MQTT-3.3.4-1", "server", FIRST, offsets[0]),
        ("violation", "MQTT-3.3.1-1", "server", FIRST + 2, offsets[2]),
    ]
    assert {r["endpoint"] for r in outcome.tables["violations"]} == {"10.0.0.2:1883"}


def test_a_correct_qos2_flow_has_no_findings(tmp_path: Path) -> None:
    outcome, _ = _run(
        tmp_path,
        ("c2s", publish("q", b"1", qos=2, packet_id=1)),
        ("s2c", ack("PUBREC", 1)),
        ("c2s", ack("PUBREL", 1)),
        ("s2c", ack("PUBCOMP", 1)),
        ("s2c", publish("q", b"1", qos=2, packet_id=1)),
        ("c2s", ack("PUBREC", 1)),
        ("s2c", ack("PUBREL", 1)),
        ("c2s", ack("PUBCOMP", 1)),
        ("c2s", mqtt(0xC0, b"")),
        ("s2c", mqtt(0xD0, b"")),
    )
    assert outcome.tables["violations"] == []
    assert len(outcome.tables["packets"]) == 12


def test_an_unanswered_publish_is_no_finding(tmp_path: Path) -> None:
    outcome, _ = _run(tmp_path, ("c2s", publish("q", b"1", qos=1, packet_id=1)))
    assert outcome.tables["violations"] == []


def test_summary_example_is_the_smallest_capture_frame_offset(tmp_path: Path) -> None:
    bad = publish("a/#", b"x")
    conn = Conn()
    frames = [
        *conn.handshake(),
        conn.segment("c2s", connect("cli")),
        conn.segment("c2s", bad + bad),
    ]
    conn = Conn()
    late = [*conn.handshake(), conn.segment("c2s", connect("cli")), conn.segment("c2s", bad)]
    files = {
        "b.pcap": pcap([ether(f) for f in frames]),
        "a.pcap": pcap([ether(f) for f in [b"\x00" * 20, *late]]),
    }
    outcome = run_check(tmp_path, files)
    (row,) = outcome.tables["summary"]
    # b.pcap is named first on the command line and holds two (framing goes on after a
    # violation); the example is still a.pcap's, the smallest capture name
    assert (row["rule"], row["count"], row["connections"]) == ("MQTT-3.3.2-2", 3, 2)
    assert (row["example_capture"], row["example_frame"], row["example_offset"]) == (
        "a.pcap",
        6,
        len(connect("cli")) + 2 + 2 + 2,
    )
