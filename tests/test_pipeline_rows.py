"""The rows are the tables: each named tuple's fields are its table's columns, in order;
and a connection keeps its evidence trail as :meth:`Trail.note` does."""

from __future__ import annotations

from pipeline_builder import CONNACK, Conn, connect, ether, publish

from pubproof.pipeline import rows, tables
from pubproof.pipeline.connection import Config, Connection, Tracker
from pubproof.pipeline.dissect import Segment, dissect
from pubproof.pipeline.rows import Sink
from pubproof.pipeline.trail import EVIDENCE_HISTORY, EVIDENCE_IDS, Recent, Trail


def test_each_row_has_its_tables_columns() -> None:
    fields = {
        "packets": rows.PacketRow._fields, "violations": rows.ViolationRow._fields,
        "connections": rows.ConnectionRow._fields, "quarantine": rows.QuarantineRow._fields,
    }  # fmt: skip
    for table, names in fields.items():
        assert names == tuple(name for name, _ in tables.TABLES[table]), table
    assert "source" in rows.ViolationRow._fields


def _recent(frame: int) -> Recent:
    return Recent("c2s", frame, 0, {"type": "PUBACK"}, None, b"")


def test_a_trail_keeps_the_last_packets_of_the_most_recent_identifiers() -> None:
    trail = Trail("conn")
    for frame in range(EVIDENCE_HISTORY + 3):
        kept = trail.note(1, _recent(frame))
    assert [r.frame for r in kept] == list(range(3, EVIDENCE_HISTORY + 3))
    for packet_id in range(2, EVIDENCE_IDS + 2):
        trail.note(packet_id, _recent(0))
    assert len(trail) == EVIDENCE_IDS and 1 not in trail.history  # least recently used


def test_the_connection_keeps_its_trail_as_trail_note_does() -> None:
    conn, sink = Conn(), Sink()
    tracker = Tracker("c.pcap", Config(), sink)
    frames = [*conn.handshake(), conn.segment("c2s", connect("c")), conn.segment("s2c", CONNACK)]
    sent: list[int] = []
    for i in range(3 * EVIDENCE_IDS):  # identifiers reused out of turn: trails of several
        packet_id = 1 + (i * 7) % (EVIDENCE_IDS + 5)
        sent.append(packet_id)
        frames.append(conn.segment("c2s", publish("t", b"m", qos=1, packet_id=packet_id)))
    for number, frame in enumerate(frames, 1):
        segment = dissect(1, ether(frame))
        assert isinstance(segment, Segment)
        tracker.feed(number, segment)
    current = tracker.current
    assert isinstance(current, Connection)
    mirror = Trail("mirror")
    for packet_id in sent:  # what Trail.note keeps of the same packets, in the same order
        mirror.note(packet_id, _recent(0))
    assert list(mirror.history) == list(current.trail.history)
    assert [len(t) for t in mirror.history.values()] == [
        len(t) for t in current.trail.history.values()
    ]
    assert len(current.trail) == EVIDENCE_IDS
