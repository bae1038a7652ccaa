"""Both ends of a captured connection (:class:`pubproof.judge.ends.BothEnds`, two link
judges compiled from the tables) against the readable oracle over SessionModel
(``tests/link_oracle.py``): the same findings (verdict, rule ids, message), packet for
packet, on random packet sequences in both directions: every type, duplicates, DUP flags,
unknown identifiers, reconnects with and without a clean session, refused and
session-losing CONNACKs, QoS 0/3 and other types."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from link_oracle import ConnectionJudge

from pubproof.judge.ends import BothEnds
from pubproof.judge.findings import Finding, Source

IDS = st.integers(min_value=1, max_value=3)  # few identifiers: collisions are the point
TOPICS = st.sampled_from(["a", "b"])
PAYLOADS = st.sampled_from(["", "00", "ff"])


@st.composite
def packet(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    kind = draw(
        st.sampled_from(
            ["PUBLISH"] * 4 + ["PUBACK", "PUBREC", "PUBREL", "PUBCOMP"] * 2
            + ["CONNECT", "CONNACK"] * 2 + ["PINGREQ", "SUBSCRIBE"]
        )
    )  # fmt: skip
    # CONNECT is the client's and CONNACK the server's, mostly: reconnects are the point
    usual = {"CONNECT": ["c2s"] * 5 + ["s2c"], "CONNACK": ["s2c"] * 5 + ["c2s"]}
    direction = draw(st.sampled_from(usual.get(kind, ["c2s", "s2c"])))
    if kind == "PUBLISH":
        qos = draw(st.sampled_from([0, 1, 1, 2, 2, 3]))
        fields: dict[str, Any] = {
            "type": kind, "dup": draw(st.booleans()), "qos": qos, "retain": draw(st.booleans()),
            "topic": draw(TOPICS), "packet_id": draw(IDS) if qos else None,
            "payload_hex": draw(PAYLOADS),
        }  # fmt: skip
    elif kind == "CONNECT":
        fields = {"type": kind, "clean_session": draw(st.booleans()), "client_id": "c"}
    elif kind == "CONNACK":
        fields = {
            "type": kind,
            "session_present": draw(st.booleans()),
            "return_code": draw(st.sampled_from([0, 0, 0, 5])),
        }
    elif kind in ("PINGREQ", "SUBSCRIBE"):
        fields = {"type": kind}
    else:
        fields = {"type": kind, "packet_id": draw(IDS)}
    return direction, fields


@st.composite
def reconnect(draw: st.DrawFn) -> list[tuple[str, dict[str, Any]]]:
    """A CONNECT and its CONNACK, resuming or not, accepted or refused."""
    connect = {"type": "CONNECT", "clean_session": draw(st.booleans()), "client_id": "c"}
    connack = {
        "type": "CONNACK",
        "session_present": draw(st.booleans()),
        "return_code": draw(st.sampled_from([0, 0, 0, 5])),
    }
    return [("c2s", connect), ("s2c", connack)]


@st.composite
def flow(draw: st.DrawFn) -> list[tuple[str, dict[str, Any]]]:
    """A QoS 1 or 2 PUBLISH and some of what may follow it on its identifier: the
    acknowledgements either way, a PUBREL, the same message again (DUP or not)."""
    sender = draw(st.sampled_from(["c2s", "s2c"]))
    other = "s2c" if sender == "c2s" else "c2s"
    packet_id, qos = draw(IDS), draw(st.sampled_from([1, 2]))
    message = {
        "type": "PUBLISH", "dup": False, "qos": qos, "retain": False, "topic": draw(TOPICS),
        "packet_id": packet_id, "payload_hex": draw(PAYLOADS),
    }  # fmt: skip
    follow = st.sampled_from(
        [(other, "PUBACK"), (other, "PUBREC"), (other, "PUBCOMP"), (sender, "PUBREL"),
         (sender, "PUBLISH"), (sender, "DUP")]
    )  # fmt: skip
    packets = [(sender, message)]
    for direction, kind in draw(st.lists(follow, max_size=5)):
        if kind in ("PUBLISH", "DUP"):
            packets.append((direction, {**message, "dup": kind == "DUP"}))
        else:
            packets.append((direction, {"type": kind, "packet_id": packet_id}))
    return packets


SEQUENCES = st.lists(
    st.one_of(packet().map(lambda p: [p]), reconnect(), flow()), min_size=1, max_size=40
).map(lambda blocks: [p for block in blocks for p in block])


def _reference(v311: bool) -> ConnectionJudge:
    judge = ConnectionJudge(v311=v311)
    return judge


def _key(findings: list[Finding]) -> list[tuple[str, tuple[str, ...], str]]:
    return [(f.verdict, f.rules, f.message) for f in findings]


@settings(max_examples=1500, deadline=None)
@given(SEQUENCES, st.booleans())
def test_same_findings_as_link_judges(
    packets: list[tuple[str, dict[str, Any]]], v311: bool
) -> None:
    reference, fast = _reference(v311), BothEnds(v311=v311)
    for direction, fields in packets:
        expected = _key(reference.feed(direction, fields))
        found = fast.feed(direction, fields)
        assert _key(found) == expected, (direction, fields)
        assert all(f.source == Source.LINK for f in found)
        sender = "client" if direction == "c2s" else "server"
        assert all(f.role == sender for f in found)


def _session(*packets: tuple[str, dict[str, Any]]) -> list[list[tuple[str, tuple[str, ...], str]]]:
    fast = BothEnds()
    return [_key(fast.feed(d, f)) for d, f in packets]


def _pub(packet_id: int, *, dup: bool = False, qos: int = 1, topic: str = "a") -> dict[str, Any]:
    return {
        "type": "PUBLISH", "dup": dup, "qos": qos, "retain": False, "topic": topic,
        "packet_id": packet_id, "payload_hex": "00",
    }  # fmt: skip


CONNECT = {"type": "CONNECT", "clean_session": True}
CONNACK = {"type": "CONNACK", "session_present": False, "return_code": 0}


def test_finds_each_kind_of_flow_fault() -> None:
    """The differential test cannot pass on two judges that find nothing: these do find."""
    results = _session(
        ("c2s", CONNECT),
        ("s2c", CONNACK),
        ("s2c", {"type": "PUBACK", "packet_id": 9}),  # nobody awaits it: tolerated
        ("s2c", _pub(1, qos=2)),
        ("s2c", _pub(1, qos=2, topic="b")),  # a new message on an identifier in use
        ("s2c", {"type": "PUBREL", "packet_id": 1}),  # before the client's PUBREC
        ("c2s", _pub(2, dup=True)),  # DUP 1 from a client: [MQTT-3.3.1-3] is a server's
        ("c2s", _pub(2, topic="b")),  # the client's new message on an identifier in use
    )
    assert results[2] == [
        ("tolerated", ("MQTT-3.3.4-1",), "server: PUBACK 9: PUBACK for an identifier not "
         "awaiting one (unknown, or a QoS 2 flow): ignored"),
    ]  # fmt: skip
    assert [r[1] for r in results[4]] == [("MQTT-2.3.1-4", "MQTT-2.3.1-2")]
    assert results[5][0][:2] == ("violation", ("MQTT-4.3.3-1",))
    assert results[6] == []
    # the same fault by the client is judged by the Client's rule, not the Server's
    assert [r[1] for r in results[7]] == [("MQTT-2.3.1-2",)]
    assert "client: PUBLISH" in results[7][0][2]


def test_the_edition_reaches_the_judge_after_construction() -> None:
    """3.1 has no Session Present: a resumed session answered with 0 is no finding there."""
    packets = (
        ("c2s", {"type": "CONNECT", "clean_session": False}),
        ("s2c", CONNACK),
        ("c2s", {"type": "CONNECT", "clean_session": False}),
        ("s2c", CONNACK),
    )
    for v311, rules in ((True, [("MQTT-3.2.2-2", "MQTT-3.1.2-4")]), (False, [])):
        fast = BothEnds()
        fast.v311 = v311  # as the connection learns its level from CONNECT
        found = [f.rules for d, p in packets for f in fast.feed(d, p)]
        assert found == rules


@pytest.mark.parametrize("clean", [True, False])
def test_forwarded_dup_only_on_a_clean_session(clean: bool) -> None:
    fast = BothEnds()
    fast.feed("c2s", {"type": "CONNECT", "clean_session": clean})
    found = fast.feed("s2c", _pub(3, dup=True))
    assert [f.rules for f in found] == ([("MQTT-3.3.1-3",)] if clean else [])
