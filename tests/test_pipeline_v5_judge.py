"""MQTT 5.0 connections in built captures: the edition from CONNECT's level (or forced),
each direction judged with the limits its receiver declared, the judgements a capture can
show (a packet over the receiver's Maximum Packet Size, an alias above the receiver's
maximum, a QoS above Maximum QoS, RETAIN without Retain Available, Receive Maximum
exceeded), the receiver's DISCONNECT Reason Code, the ``packets`` table's 5.0 columns, AUTH,
and 3.1.1 and 5.0 connections side by side in one capture. The live test
(``test_pipeline_v5.py``) holds the same against a real broker and tshark."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest
from support.pipeline_builder import (
    CONNACK,
    Conn,
    Outcome,
    connect,
    ether,
    pcap,
    read_tables,
    run_check,
)

from pubproof.judge import packets as control
from pubproof.main import main
from pubproof.model.editions import Edition, Limits
from pubproof.reference import PubAck, PubComp, Publish, PubRec, PubRel, encode
from pubproof.reference.properties import AckProperties, PublishProperties

V50 = Edition.V50


def connect5(**properties: Any) -> bytes:
    return control.connect("cli5", clean=True, edition=V50, properties=properties)


def connack5(**properties: Any) -> bytes:
    return control.connack(session_present=False, return_code=0, edition=V50, properties=properties)


def publish5(
    topic: str, *, qos: int = 0, packet_id: int | None = None, retain: bool = False, **props: Any
) -> bytes:
    packet = Publish(
        topic=topic, qos=qos, packet_id=packet_id, payload=b"m", retain=retain,
        properties=PublishProperties(**props),
    )  # fmt: skip
    return encode(packet, edition=V50)


def puback5(packet_id: int, code: int = 0) -> bytes:
    return encode(
        PubAck(packet_id=packet_id, reason_code=code, properties=AckProperties()), edition=V50
    )


def session(
    *packets: tuple[str, bytes],
    first: bytes | None = None,
    answer: bytes | None = None,
    client: tuple[str, int] = ("10.0.0.1", 50000),
) -> list[bytes]:
    """One connection's frames: handshake, CONNECT, CONNACK, the packets (one segment
    each), FIN both ways."""
    conn = Conn(client=client)
    frames = [
        *conn.handshake(),
        conn.segment("c2s", connect5() if first is None else first),
        conn.segment("s2c", connack5() if answer is None else answer),
    ]
    frames += [conn.segment(direction, data) for direction, data in packets]
    return frames + conn.close()


def run(tmp_path: Path, *sessions: list[bytes], **options: Any) -> Outcome:
    frames = [f for s in sessions for f in s]
    return run_check(tmp_path, {"v5.pcap": pcap([ether(f) for f in frames])}, **options)


def findings(outcome: Outcome) -> list[tuple[str, str, str, str]]:
    """(direction, role, first rule, kind) of each finding, in frame order."""
    return [
        (str(r["direction"]), str(r["role"]), str(r["rule"]), str(r["kind"]))
        for r in outcome.tables["violations"]
    ]


FIRST = 6  # the frame of the first packet after CONNECT (4) and CONNACK (5)


def test_a_valid_session_writes_the_5_0_columns_and_no_finding(tmp_path: Path) -> None:
    outcome = run(
        tmp_path,
        session(
            ("c2s", publish5("a/b", qos=1, packet_id=1, topic_alias=2,
                             user_properties=(("k", "v"), ("k", "w"))))  ,
            ("s2c", puback5(1, 0x10)),
            ("c2s", publish5("", topic_alias=2)),
            ("c2s", control.disconnect(0)),
            first=connect5(receive_maximum=10), answer=connack5(topic_alias_maximum=5),
        ),
    )  # fmt: skip
    assert outcome.tables["violations"] == []
    (connection,) = outcome.tables["connections"]
    assert (connection["edition"], connection["level"], connection["status"]) == (
        "5.0", 5, "complete",
    )  # fmt: skip
    rows = outcome.tables["packets"]
    assert {r["edition"] for r in rows} == {"5.0"}
    shown = [(r["type"], r["topic"], r["topic_alias"], r["reason_code"]) for r in rows]
    assert shown == [
        ("CONNECT", None, None, None), ("CONNACK", None, None, 0),
        ("PUBLISH", "a/b", 2, None), ("PUBACK", None, None, 0x10),
        ("PUBLISH", "a/b", 2, None),  # the alias alone, resolved
        ("DISCONNECT", None, None, 0),
    ]  # fmt: skip
    assert json.loads(str(rows[0]["properties"])) == {"receive_maximum": 10}
    assert json.loads(str(rows[1]["properties"])) == {"topic_alias_maximum": 5}
    assert json.loads(str(rows[2]["properties"])) == {
        "topic_alias": 2, "user_properties": [["k", "v"], ["k", "w"]],
    }  # fmt: skip
    assert rows[3]["properties"] == "{}"


def test_each_direction_has_its_receivers_limits(tmp_path: Path) -> None:
    """The server's Topic Alias Maximum (CONNACK) binds the client, the client's (CONNECT)
    the server: alias 4 is fine one way and above the maximum the other."""
    outcome = run(
        tmp_path,
        session(
            ("c2s", publish5("a", topic_alias=4)),
            ("s2c", publish5("b", topic_alias=4)),
            first=connect5(topic_alias_maximum=3), answer=connack5(topic_alias_maximum=4),
        ),
    )  # fmt: skip
    assert findings(outcome) == [("s2c", "server", "PP50-3.3.4-topic-alias-maximum", "violation")]
    (row,) = outcome.tables["violations"]
    assert row["frame"] == FIRST + 1 and row["source"] == "codec"


def test_before_the_connack_the_client_has_the_defaults(tmp_path: Path) -> None:
    """A client that sends an alias before the server declared any breaks the default
    Topic Alias Maximum of 0."""
    conn = Conn()
    frames = [
        *conn.handshake(),
        conn.segment("c2s", connect5() + publish5("a", topic_alias=1)),
        conn.segment("s2c", connack5(topic_alias_maximum=5)),
        *conn.close(),
    ]
    outcome = run(tmp_path, frames)
    assert findings(outcome) == [("c2s", "client", "PP50-3.3.4-topic-alias-maximum", "violation")]


def test_a_control_packet_over_the_receivers_maximum_packet_size(tmp_path: Path) -> None:
    big = control.subscribe(1, [("x" * 200, 1)], edition=V50)
    outcome = run(tmp_path, session(("c2s", big), answer=connack5(maximum_packet_size=100)))
    ((direction, role, rule, kind),) = findings(outcome)
    assert (direction, role, rule, kind) == ("c2s", "client", "PP50-3.1.2-packet-too-large",
                                             "violation")  # fmt: skip
    assert "MQTT-3.2.2-15" in str(outcome.tables["violations"][0]["rules"])
    assert outcome.tables["violations"][0]["source"] == "wire"


def test_a_publish_over_the_receivers_maximum_packet_size(tmp_path: Path) -> None:
    outcome = run(
        tmp_path,
        session(("s2c", publish5("t" * 300)), first=connect5(maximum_packet_size=200)),
    )
    assert findings(outcome) == [("s2c", "server", "PP50-3.1.2-packet-too-large", "violation")]


@pytest.mark.parametrize(
    ("answer", "packet", "rule"),
    [
        (connack5(maximum_qos=1), publish5("a", qos=2, packet_id=3), "MQTT-3.2.2-11"),
        (connack5(retain_available=0), publish5("a", retain=True), "MQTT-3.2.2-14"),
    ],
    ids=["maximum-qos", "retain-available"],
)
def test_what_the_server_declared_binds_the_client(
    tmp_path: Path, answer: bytes, packet: bytes, rule: str
) -> None:
    outcome = run(tmp_path, session(("c2s", packet), answer=answer))
    assert findings(outcome) == [("c2s", "client", rule, "violation")]
    (row,) = outcome.tables["violations"]
    assert (row["source"], row["frame"]) == ("link", FIRST)


def test_receive_maximum_and_the_receivers_disconnect(tmp_path: Path) -> None:
    """Three QoS 1 messages in flight against a Receive Maximum of 2: the third breaks it;
    the server answers DISCONNECT 0x93, the code the model calls for (no close finding);
    a server that answers 0x82 instead is tolerated, 0x00 a deviation (4.13.1: it SHOULD
    send the Reason Code)."""
    publishes = [("c2s", publish5("q", qos=1, packet_id=n)) for n in (1, 2, 3)]
    verdicts = {}
    for code in (0x93, 0x82, 0x00):
        (tmp_path / f"{code:02x}").mkdir()
        outcome = run(
            tmp_path / f"{code:02x}",
            session(*publishes, ("s2c", control.disconnect(code)),
                    answer=connack5(receive_maximum=2)),
        )  # fmt: skip
        found = findings(outcome)
        assert found[0] == ("c2s", "client", "MQTT-3.3.4-7", "violation")
        assert outcome.tables["violations"][0]["frame"] == FIRST + 2
        verdicts[code] = [(role, kind) for _, role, _, kind in found[1:]]
    assert verdicts == {0x93: [], 0x82: [("server", "tolerated")],
                        0x00: [("server", "deviation")]}  # fmt: skip
    # the server's finding shows the offending PUBLISH as its fields: no payload (the
    # judges' P of a QoS 1 PUBLISH carries the payload's hex; its evidence does not)
    row = outcome.tables["violations"][-1]
    offending = json.loads(str(row["evidence"]))[0]
    assert {k: v for k, v in offending.items() if k not in ("conn", "offset")} == {
        "type": "PUBLISH", "dup": False, "qos": 1, "retain": False, "topic": "q",
        "packet_id": 3, "properties": {}, "dir": "c2s", "frame": FIRST + 2,
    }  # fmt: skip
    # the client's finding shows it as judged, with the head of its payload
    client = outcome.tables["violations"][0]
    assert client["role"] == "client"
    judged = json.loads(str(client["evidence"]))[-1]
    assert {k: v for k, v in judged.items() if k not in ("conn", "offset")} == {
        "type": "PUBLISH", "dup": False, "qos": 1, "retain": False, "topic": "q",
        "packet_id": 3, "properties": {}, "payload_hex": "6d", "payload_len": 1,
        "dir": "c2s", "frame": FIRST + 2,
    }  # fmt: skip


def test_an_unknown_alias_is_a_finding_and_its_topic_null(tmp_path: Path) -> None:
    outcome = run(
        tmp_path,
        session(("c2s", publish5("", topic_alias=1)), answer=connack5(topic_alias_maximum=5)),
    )
    assert findings(outcome) == [("c2s", "client", "PP50-3.3.2-topic-alias-unknown", "violation")]
    publish = outcome.rows("packets", type="PUBLISH")[0]
    assert (publish["topic"], publish["topic_alias"]) == (None, 1)


def test_auth_is_framed_in_5_0(tmp_path: Path) -> None:
    outcome = run(
        tmp_path,
        session(("s2c", control.auth(0x18, {"authentication_method": "x"})),
                ("c2s", control.auth(0x18, {"authentication_method": "x"}))),
    )  # fmt: skip
    assert outcome.tables["violations"] == []
    auth = outcome.rows("packets", type="AUTH")
    assert [r["reason_code"] for r in auth] == [0x18, 0x18]
    assert json.loads(str(auth[0]["properties"])) == {"authentication_method": "x"}


def test_3_1_3_1_1_and_5_0_connections_share_a_capture(tmp_path: Path) -> None:
    v311 = Conn(client=("10.0.0.9", 40000))
    old = [
        *v311.handshake(),
        v311.segment("c2s", connect("old")),
        v311.segment("s2c", CONNACK),
        v311.segment("c2s", encode(Publish(topic="a", payload=b"x"))),
        *v311.close(),
    ]
    v31 = Conn(client=("10.0.0.8", 30000))
    oldest = [
        *v31.handshake(),
        v31.segment("c2s", connect("oldest", level=3)),
        v31.segment("s2c", CONNACK),
        v31.segment("c2s", encode(Publish(topic="a", payload=b"x"), edition=Edition.V31)),
        *v31.close(),
    ]
    new = session(("c2s", publish5("a", topic_alias=1)), answer=connack5(topic_alias_maximum=1))
    outcome = run(tmp_path, old, oldest, new)
    editions = {str(r["client"]): r["edition"] for r in outcome.tables["connections"]}
    assert editions == {
        "10.0.0.9:40000": "3.1.1", "10.0.0.8:30000": "3.1", "10.0.0.1:50000": "5.0"
    }  # fmt: skip
    old_rows = [r for r in outcome.tables["packets"] if r["edition"] in ("3.1", "3.1.1")]
    assert old_rows and all(r["properties"] is None for r in old_rows)
    assert outcome.tables["violations"] == []


def test_forcing_5_0(tmp_path: Path) -> None:
    """``--edition 5.0`` reads a 3.1.1 PUBLISH as 5.0: its payload's first byte becomes
    a Property Length."""
    conn = Conn()
    frames = [
        *conn.handshake(),
        conn.segment("c2s", connect("c")),
        conn.segment("s2c", CONNACK),
        conn.segment("c2s", encode(Publish(topic="a", payload=b"\x05"))),
        *conn.close(),
    ]
    outcome = run(tmp_path, frames, edition=V50)
    assert outcome.tables["connections"][0]["edition"] == "5.0"
    assert [r["rule"] for r in outcome.tables["violations"]][-1] == "PP50-2.2.2-property-length"


def test_the_command_line_forces_5_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capture = tmp_path / "c.pcap"
    conn = Conn()
    frames = [*conn.handshake(), conn.segment("c2s", connect("c")), *conn.close()]
    capture.write_bytes(pcap([ether(f) for f in frames]))
    out = tmp_path / "out"
    args = ["check", str(capture), "--out", str(out), "--engine", "python", "--json"]
    assert main([*args, "--edition", "5.0"]) == 0
    capsys.readouterr()
    (row,) = read_tables(str(out))["connections"]
    assert row["edition"] == "5.0"  # a 3.1.1 CONNECT, read as 5.0 (its description fails)
    with pytest.raises(SystemExit):
        main([*args, "--edition", "6.0"])


def test_a_3_1_1_server_refusing_level_5(tmp_path: Path) -> None:
    """A 3.1.1 server answers a level 5 CONNECT with its own CONNACK, return code 0x01
    [MQTT-3.1.2-2]: no finding, though it is no 5.0 CONNACK; any other 4-byte CONNACK
    still is malformed in 5.0 (no Property Length)."""
    refused = run(tmp_path, session(answer=bytes((0x20, 2, 0, 1))))
    assert refused.tables["violations"] == []
    (tmp_path / "other").mkdir()
    other = run(tmp_path / "other", session(answer=bytes((0x20, 2, 0, 5))))
    assert findings(other) == [("s2c", "server", "None", "malformed")]


def test_qos0_publishes_the_fast_path_leaves_unjudged_change_nothing(tmp_path: Path) -> None:
    """The fast path feeds the link judges a QoS 0 PUBLISH only when they can learn from it
    or find something in it (a mapping set, an alias no mapping stands for, RETAIN without
    Retain Available); the general way feeds every one. Both write the same rows on a
    session with each kind, a second CONNECT (the judges' alias maps go) included."""
    from support.fast_path import both_paths, keyed_capture

    frames = session(
        ("c2s", publish5("a", topic_alias=1)),  # sets the mapping: judged
        ("c2s", publish5("", topic_alias=1)),  # known: left unjudged
        ("c2s", publish5("", qos=1, packet_id=5, topic_alias=1)),  # QoS 1: judged, known
        ("s2c", puback5(5)),
        ("c2s", publish5("b")),  # no alias: left unjudged
        ("c2s", publish5("", topic_alias=2)),  # unknown: judged, a finding
        ("c2s", publish5("c", retain=True)),  # RETAIN, Retain Available 0: judged, a finding
        # a second CONNECT: the judges start a new session (the maps go, the server's
        # declarations too, until a CONNACK), so alias 1 is now above the maximum
        ("c2s", connect5()),
        ("c2s", publish5("", topic_alias=1)),
        answer=connack5(topic_alias_maximum=5, retain_available=0),
    )
    capture = tmp_path / "q0.pcap"
    capture.write_bytes(pcap([ether(f) for f in frames]))
    rows = both_paths(keyed_capture(capture))
    rules = [row[5] for row in rows["violations"]]
    assert rules == [
        "PP50-3.3.2-topic-alias-unknown", "MQTT-3.2.2-14", "PP50-3.3.4-topic-alias-maximum"
    ]  # fmt: skip
    topics = [row[11] for row in rows["packets"] if row[7] == "PUBLISH"]
    assert topics == ["a", "a", "a", "b", None, "c", None]


def _ack5(kind: type[PubAck | PubRec | PubRel | PubComp], packet_id: int, code: int) -> bytes:
    return encode(
        kind(packet_id=packet_id, reason_code=code, properties=AckProperties()), edition=V50
    )


def test_acknowledgements_on_one_identifier_are_judged_each_as_itself(tmp_path: Path) -> None:
    """The fast path shares the fields of acknowledgements without properties (one dict
    per type, Reason Code and identifier): acknowledgements that differ in only one of
    them are judged as themselves, as the general way judges them. A PUBACK 0x80 after a
    PUBACK 0x00 on identifier 5 ends its flow (the re-send after it is a finding); a
    PUBCOMP after a PUBREC on 7 completes the flow (7 is free for the next message); a
    PUBACK on 6 answers 6."""
    from support.fast_path import both_paths, keyed_capture

    again = Publish(topic="b", qos=1, packet_id=5, payload=b"m", dup=True,
                    properties=PublishProperties())  # fmt: skip
    resent = encode(again, edition=V50)
    frames = session(
        ("c2s", publish5("a", qos=1, packet_id=5)),
        ("s2c", _ack5(PubAck, 5, 0x00)),
        ("c2s", publish5("b", qos=1, packet_id=5)),
        ("s2c", _ack5(PubAck, 5, 0x80)),
        ("c2s", publish5("c", qos=1, packet_id=6)),
        ("s2c", _ack5(PubAck, 6, 0x00)),
        ("c2s", publish5("d", qos=2, packet_id=7)),
        ("s2c", _ack5(PubRec, 7, 0x00)),
        ("c2s", _ack5(PubRel, 7, 0x00)),
        ("s2c", _ack5(PubComp, 7, 0x00)),
        ("c2s", resent),  # after PUBACK 0x80: a finding
        ("c2s", publish5("e", qos=1, packet_id=7)),  # 7 is free again
        ("s2c", _ack5(PubAck, 7, 0x00)),
    )
    capture = tmp_path / "acks.pcap"
    capture.write_bytes(pcap([ether(f) for f in frames]))
    for _ in range(2):  # the second time, every acknowledgement's fields are shared ones
        rows = both_paths(keyed_capture(capture))
        assert [row[5] for row in rows["violations"]] == ["MQTT-4.4.0-2"]
        assert [row[17] for row in rows["packets"] if row[7] == "PUBACK"] == [0, 0x80, 0, 0]


def test_properties_are_shown_once_per_value_across_decoders() -> None:
    """Two decoders' objects for the same section share one JSON text and one dict
    (:data:`~pubproof.pipeline.describe.SHOWN_BY_VALUE`); different values get their
    own; a list where the decoder makes tuples is shown, not kept by value."""
    from pubproof.pipeline import describe as D

    first = PublishProperties(topic_alias=7, user_properties=(("k", "v"),))
    second = PublishProperties(topic_alias=7, user_properties=(("k", "v"),))
    other = PublishProperties(topic_alias=8, user_properties=(("k", "v"),))
    assert first is not second
    text, shown = D.shown_properties(first)
    assert json.loads(text) == {"topic_alias": 7, "user_properties": [["k", "v"]]}
    again = D.shown_properties(second)
    assert again[0] == text and again[1] is shown
    assert json.loads(D.shown_properties(other)[0])["topic_alias"] == 8
    assert json.loads(D.shown_properties(AckProperties(reason_string="r"))[0]) == {
        "reason_string": "r"
    }
    listed = PublishProperties(topic_alias=9)
    object.__setattr__(listed, "user_properties", [("a", "b")])  # unhashable
    assert json.loads(D.shown_properties(listed)[0])["user_properties"] == [["a", "b"]]


def test_a_control_packet_is_described_once_per_edition_and_bytes() -> None:
    """:func:`~pubproof.pipeline.describe.describe` keeps control packets' descriptions by
    edition and bytes (the same CONNACK on many connections): a kept one is the one
    described first, each edition describes the bytes as itself, and the PUBLISH family
    (judged with the receiver's limits) and bytes that are not ``bytes`` are described
    every time."""
    from pubproof.pipeline import describe as D

    disconnect = control.disconnect(0)
    first = D.describe(disconnect, V50, None)
    assert D.describe(bytes(disconnect), V50, None) is first
    assert (first.type, first.reason_code, first.properties) == ("DISCONNECT", 0, "{}")
    # the same bytes in 3.1.1: its own description (no Reason Code, no properties)
    old = D.describe(b"\xe0\x00", Edition.V311, None)
    assert (old.type, old.reason_code, old.properties) == ("DISCONNECT", None, None)
    assert D.describe(b"\xe0\x00", V50, None) is D.describe(b"\xe0\x00", V50, None)
    assert D.describe(b"\xe0\x00", V50, None).reason_code == 0
    # a PUBLISH with a Topic Alias: each receiver's limits judge it
    aliased = publish5("a", topic_alias=3)
    assert D.describe(aliased, V50, None, Limits(topic_alias_maximum=5)).error is None
    refused = D.describe(aliased, V50, None, Limits(topic_alias_maximum=2)).error
    assert refused is not None and refused.rule == "PP50-3.3.4-topic-alias-maximum"
    # bytes in a bytearray (outside the signature): described, not kept (unhashable)
    assert D.describe(cast(bytes, bytearray(disconnect)), V50, None) == first
