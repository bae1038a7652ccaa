"""The 5.0 link judge against the 5.0 session model on arbitrary client traffic: a model
server (SessionModel50) receives random, often faulty, 5.0 packets; the judge, fed the same
packets and the model server's answers in order, must agree with it packet by packet:

- it names the same DISCONNECT Reason Code the model server sends (``BothEnds.offence``:
  Receive Maximum exceeded 0x93, Topic Alias invalid 0x94, Protocol Error 0x82), and none
  when the model sends none;
- the model server owes nothing once its answers are fed, and is never found at fault;
- the topic the judge resolves is the topic the model delivers.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pubproof.judge.ends import C2S, S2C, BothEnds
from pubproof.model.editions import Edition
from pubproof.model.rules import RULES
from pubproof.model.session50 import SessionModel50

V50 = Edition.V50


@st.composite
def client_packet(draw: st.DrawFn) -> dict[str, Any]:
    packet_id = draw(st.integers(1, 4))
    if draw(st.integers(0, 5)) == 0:
        return {"type": "PUBREL", "packet_id": packet_id,
                "reason_code": draw(st.sampled_from([0, 0x92])), "properties": {}}  # fmt: skip
    qos = draw(st.integers(0, 2))
    alias = draw(st.sampled_from([None, None, 0, 1, 2, 3]))
    properties = {} if alias is None else {"topic_alias": alias}
    return {
        "type": "PUBLISH", "dup": draw(st.booleans()), "qos": qos, "retain": False,
        "topic": draw(st.sampled_from(["", "a", "b/c"])),
        "packet_id": packet_id if qos else None,
        "payload_hex": draw(st.sampled_from(["", "00", "01"])), "properties": properties,
    }  # fmt: skip


def _open(ends: BothEnds, receive_maximum: int, alias_maximum: int) -> None:
    ends.feed(C2S, {"type": "CONNECT", "clean_start": True, "properties": {}})
    ends.feed(S2C, {"type": "CONNACK", "session_present": False, "reason_code": 0,
                    "properties": {"receive_maximum": receive_maximum,
                                   "topic_alias_maximum": alias_maximum}})  # fmt: skip


@settings(max_examples=1500, deadline=None)
@given(st.integers(1, 3), st.integers(0, 2), st.lists(client_packet(), max_size=40))
def test_the_judge_and_the_model_server_agree(
    receive_maximum: int, alias_maximum: int, packets: list[dict[str, Any]]
) -> None:
    server = SessionModel50(receive_maximum=receive_maximum, topic_alias_maximum=alias_maximum)
    ends = BothEnds(edition=V50)
    _open(ends, receive_maximum, alias_maximum)
    for packet in packets:
        ends.feed(C2S, packet)
        offence, topic = ends.offence, ends.topic
        model_packet: Any = packet
        outputs = server.receive(model_packet)
        codes = [o.reason_code for o in outputs if o.kind == "disconnect"]
        assert (offence.reason_code if offence else None) == (codes[0] if codes else None), (
            packet, offence, outputs,
        )  # fmt: skip
        for out in outputs:
            if out.kind == "deliver":
                delivered: Any = out.packet
                assert topic == delivered["topic"]
            elif out.kind == "send":
                answer: Any = out.packet
                assert ends.feed(S2C, answer) == []  # the model server is right
        assert ends.owed_by(S2C) == []  # every answer the judge says is owed was sent
        if codes:  # the model server closed: a new connection, a clean session
            server = SessionModel50(
                receive_maximum=receive_maximum, topic_alias_maximum=alias_maximum
            )
            _open(ends, receive_maximum, alias_maximum)


def test_the_agreement_is_not_vacuous() -> None:
    """Each Reason Code the property compares occurs, with the judge naming it."""
    server = SessionModel50(receive_maximum=1, topic_alias_maximum=1)
    ends = BothEnds(edition=V50)
    _open(ends, 1, 1)
    publish = {"type": "PUBLISH", "dup": False, "qos": 2, "retain": False, "topic": "a",
               "packet_id": 1, "payload_hex": "", "properties": {}}  # fmt: skip
    seen = []
    for packet in (
        publish,
        {**publish, "packet_id": 2},
        {**publish, "properties": {"topic_alias": 2}},
        {**publish, "topic": "", "properties": {"topic_alias": 1}},
        {**publish, "topic": ""},
    ):
        ends.feed(C2S, packet)
        model_packet: Any = packet
        outputs = server.receive(model_packet)
        for out in outputs:
            if out.kind == "send":
                sent: Any = out.packet
                ends.feed(S2C, sent)
        code = ends.offence.reason_code if ends.offence else None
        assert code == next((o.reason_code for o in outputs if o.kind == "disconnect"), None)
        seen.append(code)
        if code is not None:
            server = SessionModel50(receive_maximum=1, topic_alias_maximum=1)
            _open(ends, 1, 1)
    assert seen == [None, 0x93, 0x94, 0x82, 0x82]


@st.composite
def server_packet(draw: st.DrawFn) -> dict[str, Any]:
    packet_id = draw(st.integers(1, 3))
    kind = draw(st.sampled_from(["PUBLISH"] * 4 + ["PUBREL", "PUBACK", "PUBREC", "PUBCOMP"]))
    if kind != "PUBLISH":
        code = draw(st.sampled_from([0, 0, 0x80, 0x92]))
        if kind == "PUBREL":
            code = 0 if code == 0x80 else code
        if kind == "PUBCOMP" and code == 0x80:
            code = 0x92
        return {"type": kind, "packet_id": packet_id, "reason_code": code, "properties": {}}
    qos = draw(st.integers(0, 2))
    alias = draw(st.sampled_from([None, None, 0, 1, 2]))
    return {
        "type": "PUBLISH", "dup": draw(st.booleans()), "qos": qos, "retain": False,
        "topic": draw(st.sampled_from(["", "a", "b"])),
        "packet_id": packet_id if qos else None, "payload_hex": draw(st.sampled_from(["", "01"])),
        "properties": {} if alias is None else {"topic_alias": alias},
    }  # fmt: skip


@settings(max_examples=800, deadline=None)
@given(st.integers(1, 2), st.integers(0, 1), st.lists(server_packet(), max_size=30))
def test_what_the_model_client_finds_the_judge_finds(
    receive_maximum: int, alias_maximum: int, packets: list[dict[str, Any]]
) -> None:
    """A model client (SessionModel50) receives random server packets: every violation or
    toleration it reports is among the judge's findings about the server for that packet,
    and its DISCONNECT Reason Code is the judge's offence. One exception, the model's own:
    the PUBCOMP that answers the model client's PUBREL 0x92 is, for its sender table (FREE),
    a PUBCOMP nobody awaits (tolerated), where the judge counts it an answer owed."""
    client = SessionModel50(receive_maximum=receive_maximum, topic_alias_maximum=alias_maximum)
    ends = BothEnds(edition=V50)
    ends.feed(C2S, {"type": "CONNECT", "clean_start": True,
                    "properties": {"receive_maximum": receive_maximum,
                                   "topic_alias_maximum": alias_maximum}})  # fmt: skip
    ends.feed(S2C, {"type": "CONNACK", "session_present": False, "reason_code": 0,
                    "properties": {}})  # fmt: skip
    not_found: Counter[int] = Counter()  # the model client's PUBREL 0x92, by identifier
    for packet in packets:
        found = {(f.verdict, f.rules) for f in ends.feed(S2C, packet)}
        answers_not_found = packet["type"] == "PUBCOMP" and not_found[packet["packet_id"]] > 0
        if answers_not_found:
            not_found[packet["packet_id"]] -= 1
        offence, topic = ends.offence, ends.topic
        model_packet: Any = packet
        outputs = client.receive(model_packet)
        codes = [o.reason_code for o in outputs if o.kind == "disconnect"]
        assert (offence.reason_code if offence else None) == (codes[0] if codes else None)
        for out in outputs:
            if out.kind in ("violation", "tolerated") and not answers_not_found:
                assert (out.kind, out.rules) in found, (packet, out, found)
            elif out.kind == "deliver":
                delivered: Any = out.packet
                assert topic == delivered["topic"]
            elif out.kind == "send":
                answer: Any = out.packet
                assert ends.feed(C2S, answer) == []  # the model client is right
                if answer["type"] == "PUBREL" and answer["reason_code"] == 0x92:
                    not_found[answer["packet_id"]] += 1
        assert ends.owed_by(C2S) == []
        if codes:
            break  # the model client closed the connection


@st.composite
def any_packet(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    direction = draw(st.sampled_from([C2S, S2C]))
    kind = draw(st.sampled_from(["PUBLISH"] * 4 + ["PUBACK", "PUBREC", "PUBREL", "PUBCOMP",
                                 "CONNECT", "CONNACK", "DISCONNECT", "PINGREQ"]))  # fmt: skip
    if kind == "CONNECT":
        props = draw(st.fixed_dictionaries({}, optional={
            "receive_maximum": st.integers(0, 3), "topic_alias_maximum": st.integers(0, 2),
            "maximum_packet_size": st.integers(0, 50)}))  # fmt: skip
        return C2S, {"type": kind, "clean_start": draw(st.booleans()), "properties": props}
    if kind == "CONNACK":
        props = draw(st.fixed_dictionaries({}, optional={
            "receive_maximum": st.integers(0, 3), "topic_alias_maximum": st.integers(0, 2),
            "maximum_qos": st.integers(0, 2), "retain_available": st.integers(0, 1)}))  # fmt: skip
        code = draw(st.sampled_from([0, 0x80]))
        present = draw(st.booleans())
        return S2C, {"type": kind, "session_present": present, "reason_code": code,
                     "properties": props}  # fmt: skip
    if kind in ("DISCONNECT", "PINGREQ"):
        return direction, {"type": kind, "reason_code": 0, "properties": {}}
    if kind != "PUBLISH":
        return direction, {"type": kind, "packet_id": draw(st.integers(0, 3)),
                           "reason_code": draw(st.sampled_from([0, 0x10, 0x80, 0x92, 0x97])),
                           "properties": {}}  # fmt: skip
    qos = draw(st.integers(0, 2))
    alias = draw(st.sampled_from([None, None, 0, 1, 2, 3]))
    return direction, {
        "type": "PUBLISH", "dup": draw(st.booleans()), "qos": qos, "retain": draw(st.booleans()),
        "topic": draw(st.sampled_from(["", "a", "b"])),
        "packet_id": draw(st.integers(1, 3)) if qos else None,
        "payload_hex": draw(st.sampled_from(["", "01"])),
        "properties": {} if alias is None else {"topic_alias": alias},
    }  # fmt: skip


@settings(max_examples=1500, deadline=None)
@given(st.lists(any_packet(), max_size=40))
def test_any_traffic_is_judged_without_raising_and_with_5_0_rule_ids(
    packets: list[tuple[str, dict[str, Any]]],
) -> None:
    ends = BothEnds(edition=V50)
    for direction, fields in packets:
        for finding in ends.feed(direction, fields):
            assert finding.role == ("client" if direction == C2S else "server")
            assert finding.source == "link" and finding.verdict in ("violation", "tolerated")
            for rule_id in finding.rules:
                RULES.by_id(rule_id, V50)
        if ends.offence is not None:
            assert ends.offence.reason_code >= 0x80
            RULES.by_id(ends.offence.rule, V50)
        if fields["type"] == "PUBLISH" and ends.offence is None:
            assert ends.topic  # a PUBLISH its receiver takes has a topic name
