"""The rows are the tables: each named tuple's fields are its table's columns, in order;
and a connection keeps its evidence trail with :meth:`Trail.note`."""

from __future__ import annotations

import pytest
from support.pipeline_builder import CONNACK, Conn, connect, ether, publish

from pubproof.judge import packets as control
from pubproof.model.editions import Edition
from pubproof.pipeline import rows, tables
from pubproof.pipeline.connection import Connection, Tracker
from pubproof.pipeline.connection_state import Config
from pubproof.pipeline.dissect import Segment, dissect
from pubproof.pipeline.rows import Sink
from pubproof.pipeline.trail import EVIDENCE_HISTORY, EVIDENCE_IDS, Recent, Trail
from pubproof.reference import Publish, encode
from pubproof.reference.properties import PublishProperties


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


def test_a_new_identifier_s_trail_holds_none_of_a_forgotten_one_s_packets() -> None:
    """The trail of the identifier forgotten is reused for the next new one (cleared)."""
    trail = Trail("conn")
    for frame in range(EVIDENCE_HISTORY):
        trail.note(1, _recent(frame))  # the least recently used, with a full trail
    for packet_id in range(2, EVIDENCE_IDS + 1):
        trail.note(packet_id, _recent(100 + packet_id))
    assert len(trail) == EVIDENCE_IDS
    kept = trail.note(EVIDENCE_IDS + 1, _recent(999))
    assert [r.frame for r in kept] == [999] and 1 not in trail.history
    assert [r.frame for r in trail.history[2]] == [102]


def _publish(edition: Edition, packet_id: int) -> bytes:
    if edition is Edition.V311:
        return publish("t", b"m", qos=1, packet_id=packet_id)
    packet = Publish(topic="t", payload=b"m", qos=1, packet_id=packet_id,
                     properties=PublishProperties())  # fmt: skip
    return encode(packet, edition=edition)


@pytest.mark.parametrize("edition", [Edition.V311, Edition.V50])
def test_the_connection_keeps_its_trail_as_trail_note_does(edition: Edition) -> None:
    """3.1.1 (``Connection._judge``) and 5.0 (``_judge5``) note every judged packet of
    the PUBLISH family, in order, under its identifier."""
    conn, sink = Conn(), Sink()
    tracker = Tracker("c.pcap", Config(), sink)
    if edition is Edition.V311:
        hello, answer = connect("c"), CONNACK
    else:
        hello = control.connect("c", clean=True, edition=edition, properties={})
        answer = control.connack(
            session_present=False, return_code=0, edition=edition, properties={}
        )
    frames = [*conn.handshake(), conn.segment("c2s", hello), conn.segment("s2c", answer)]
    sent: list[int] = []
    for i in range(3 * EVIDENCE_IDS):  # identifiers reused out of turn: trails of several
        packet_id = 1 + (i * 7) % (EVIDENCE_IDS + 5)
        sent.append(packet_id)
        frames.append(conn.segment("c2s", _publish(edition, packet_id)))
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
