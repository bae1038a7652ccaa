"""The MQTT 5.0 link judge (pubproof.judge.link50 through BothEnds): each 5.0 fault found
under its rule ids (Receive Maximum, Topic Aliases, what the server declared, error
acknowledgements, re-sends, identifiers in use), what an offence leaves owed; the edition
of both ends and the old API, the negotiated limits, a live peer judge's deliveries."""

from __future__ import annotations

import pytest
from support.link50_packets import OPEN, V5, ack, connack, connect, pub, run

from pubproof.judge.ends import C2S, S2C, BothEnds
from pubproof.judge.findings import Finding
from pubproof.judge.link import LinkJudge
from pubproof.judge.link50 import FlowOffence, LinkJudge50, link_judge, topic_alias
from pubproof.model.editions import Edition
from pubproof.model.flows import SenderState, Undefined
from pubproof.model.flows50 import SenderInput50, sender_step50

# -- each 5.0 fault --------------------------------------------------------------------------


def test_receive_maximum_each_way() -> None:
    ends, found = run(
        (C2S, connect(receive_maximum=1)), (S2C, connack(receive_maximum=2)),
        (C2S, pub(1)), (C2S, pub(2, qos=2)), (S2C, ack("PUBACK", 1)), (C2S, pub(4)),
        (C2S, pub(5)), (S2C, pub(7)), (S2C, pub(8)),
    )  # fmt: skip
    assert found[2] == found[3] == found[4] == found[5] == found[7] == []  # within the quota
    assert found[6] == [("violation", ("MQTT-3.3.4-7", "MQTT-4.9.0-2"), None)]
    assert found[8] == [("violation", ("MQTT-3.3.4-9", "MQTT-4.9.0-2"), None)]
    assert ends.offence == FlowOffence(
        "MQTT-3.3.4-9",
        "a new QoS 1 or 2 PUBLISH while 1 are unacknowledged, the receiver's Receive Maximum",
        0x93,
    )
    # QoS 0 takes no unit
    _, found = run(
        (C2S, connect(receive_maximum=1)), (S2C, connack()),
        (S2C, pub(1)), (S2C, pub(None, qos=0)), (S2C, pub(None, qos=0)),
    )  # fmt: skip
    assert all(f == [] for f in found)


def test_the_quota_is_released_by_each_ack_the_table_names() -> None:
    # PUBACK (any code), PUBREC >= 0x80 and PUBCOMP release; PUBREC < 0x80 does not
    _, found = run(
        (C2S, connect()), (S2C, connack(receive_maximum=1)),
        (C2S, pub(1)), (S2C, ack("PUBACK", 1, 0x80)), (C2S, pub(2, qos=2)),
        (S2C, ack("PUBREC", 2, 0x87)), (C2S, pub(3, qos=2)), (S2C, ack("PUBREC", 3)),
        (C2S, ack("PUBREL", 3)), (C2S, pub(4)),
    )  # fmt: skip
    assert all(f == [] for f in found[:-1])
    assert found[-1] == [("violation", ("MQTT-3.3.4-7", "MQTT-4.9.0-2"), None)]
    _, found = run(
        (C2S, connect()), (S2C, connack(receive_maximum=1)),
        (C2S, pub(3, qos=2)), (S2C, ack("PUBREC", 3)), (C2S, ack("PUBREL", 3)),
        (S2C, ack("PUBCOMP", 3)), (C2S, pub(4)),
    )  # fmt: skip
    assert all(f == [] for f in found)


def test_the_quota_starts_afresh_with_each_connection() -> None:
    _, found = run(
        (C2S, connect()), (S2C, connack(receive_maximum=1)), (C2S, pub(1)),
        (C2S, connect()), (S2C, connack(receive_maximum=1)), (C2S, pub(2)),
    )  # fmt: skip
    assert all(f == [] for f in found)


def topic_of(ends: BothEnds) -> str | None:
    return ends.topic  # read afresh after each feed (no narrowing)


def code_of(ends: BothEnds) -> int | None:
    return None if ends.offence is None else ends.offence.reason_code


def test_topic_alias_resolution_and_faults() -> None:
    ends = BothEnds(edition=V5)
    ends.feed(C2S, connect(topic_alias_maximum=2))
    ends.feed(S2C, connack(topic_alias_maximum=1))
    assert ends.feed(C2S, pub(1, topic="a/b", alias=1)) == [] and topic_of(ends) == "a/b"
    assert ends.feed(C2S, pub(2, topic="", alias=1)) == [] and topic_of(ends) == "a/b"
    assert ends.feed(S2C, pub(5, topic="s", alias=2)) == [] and topic_of(ends) == "s"
    assert ends.feed(S2C, pub(6, topic="", alias=2)) == [] and topic_of(ends) == "s"
    # the directions have their own maps
    (found,) = ends.feed(S2C, pub(7, topic="", alias=1))
    assert found.rules == ("PP50-3.3.2-topic-alias-unknown",) and found.role == "server"
    assert topic_of(ends) is None and code_of(ends) == 0x82
    (found,) = ends.feed(C2S, pub(3, topic="x", alias=2))
    assert found.rules == ("PP50-3.3.4-topic-alias-maximum", "MQTT-3.3.2-9")
    assert code_of(ends) == 0x94
    (found,) = ends.feed(S2C, pub(8, qos=0, topic="x", alias=3))
    assert found.rules == ("PP50-3.3.4-topic-alias-maximum", "MQTT-3.3.2-11")
    (found,) = ends.feed(C2S, pub(4, topic="x", alias=0))
    assert found.rules == ("MQTT-3.3.2-8",) and code_of(ends) == 0x94
    (found,) = ends.feed(C2S, pub(4, topic="", alias=None))
    assert found.rules == ("PP50-3.3.2-topic-or-alias",)
    # a new topic replaces the mapping; a new connection drops it [MQTT-3.3.2-7]
    assert ends.feed(C2S, pub(9, topic="n", alias=1)) == []
    assert ends.feed(C2S, pub(10, qos=0, topic="", alias=1)) == [] and topic_of(ends) == "n"
    ends.feed(C2S, connect(topic_alias_maximum=2))
    ends.feed(S2C, connack(topic_alias_maximum=1))
    (found,) = ends.feed(C2S, pub(11, topic="", alias=1))
    assert found.rules == ("PP50-3.3.2-topic-alias-unknown",)


def test_alias_only_publish_is_compared_by_its_resolved_topic() -> None:
    # a re-send owed on a resumed session, sent with the alias alone on... the new
    # connection needs the topic again; within a connection a same-topic alias-only
    # PUBLISH on an identifier in use is a re-send, not a new message
    _, found = run(
        (C2S, connect(topic_alias_maximum=2)), (S2C, connack()),
        (S2C, pub(1, topic="a", alias=1)), (S2C, pub(1, topic="", alias=1, dup=True)),
        (S2C, pub(1, topic="b", dup=True)),
    )  # fmt: skip
    assert found[3] == [("violation", ("MQTT-4.4.0-1",), None)]
    assert found[4] == [("violation", ("MQTT-4.3.2-1",), None)]


def test_what_the_server_declared_binds_the_client() -> None:
    ends = BothEnds(edition=V5)
    ends.feed(C2S, connect())
    ends.feed(S2C, connack(maximum_qos=1, retain_available=0))
    (found,) = ends.feed(C2S, pub(1, qos=2))
    assert found.rules == ("MQTT-3.2.2-11",) and found.role == "client"
    assert ends.offence is not None and ends.offence.reason_code == 0x9B
    (found,) = ends.feed(C2S, pub(None, qos=0, retain=True))
    assert found.rules == ("MQTT-3.2.2-14",)
    assert ends.offence is not None and ends.offence.reason_code == 0x9A
    assert ends.feed(C2S, pub(2, qos=1)) == []
    # the server is not bound by its own declaration
    assert ends.feed(S2C, pub(3, qos=2, retain=True)) == []
    # Maximum QoS 0
    ends.feed(C2S, connect())
    ends.feed(S2C, connack(maximum_qos=0))
    assert [f.rules for f in ends.feed(C2S, pub(4, qos=1))] == [("MQTT-3.2.2-11",)]
    assert ends.feed(C2S, pub(None, qos=0, retain=True)) == []


def test_error_acknowledgements_end_the_flow() -> None:
    _, found = run(
        *OPEN,
        (S2C, pub(1)), (C2S, ack("PUBACK", 1, 0x80)), (S2C, pub(1, dup=True)),
        (S2C, pub(2, qos=2)), (C2S, ack("PUBREC", 2, 0x97)), (S2C, ack("PUBREL", 2)),
        (S2C, pub(3, qos=2)), (C2S, ack("PUBREC", 3, 0x80)), (S2C, pub(3, qos=2, dup=True)),
    )  # fmt: skip
    assert found[4] == [("violation", ("MQTT-4.4.0-2",), None)]
    assert found[7] == [("violation", ("MQTT-4.3.3-4", "MQTT-4.4.0-2"), None)]
    assert found[10] == [("violation", ("MQTT-4.4.0-2",), None)]
    # after an error, a new message on the identifier is no re-send
    _, found = run(
        *OPEN, (C2S, pub(1)), (S2C, ack("PUBACK", 1, 0x80)), (C2S, pub(1, payload="01")),
        (C2S, pub(2)), (S2C, ack("PUBACK", 2, 0x80)), (C2S, pub(2, payload="02", dup=True)),
    )  # fmt: skip
    assert all(f == [] for f in found)


def test_a_resend_only_on_a_resumed_session() -> None:
    resumed = ((C2S, connect(clean=False)), (S2C, connack(present=True)))
    _, found = run(
        *OPEN, (S2C, pub(1)), (S2C, pub(2, qos=2)), (C2S, ack("PUBREC", 2)),
        (S2C, pub(1, dup=True)), *resumed, (S2C, pub(1, dup=True)), (S2C, ack("PUBREL", 2)),
    )  # fmt: skip
    assert found[5] == [("violation", ("MQTT-4.4.0-1",), None)]  # same connection
    assert found[8] == found[9] == []  # the re-sends the resumed session owes
    _, found = run(
        *OPEN, (S2C, pub(1)), *resumed, (S2C, pub(1)), (S2C, pub(1, dup=True, payload="ff")),
    )  # fmt: skip
    assert found[5] == [("violation", ("MQTT-3.3.1-1",), None)]
    assert found[6] == [("violation", ("MQTT-4.3.2-1",), None)]
    _, found = run(*OPEN, (S2C, pub(1)), *resumed, (S2C, pub(1, dup=True, payload="ff")))
    assert found[5] == [("violation", ("MQTT-4.4.0-1",), None)]


@pytest.mark.parametrize("present", [False, True])
def test_session_present_0_is_a_clean_session_not_a_finding(present: bool) -> None:
    _, found = run(
        *OPEN, (S2C, pub(1)), (C2S, connect(clean=False)), (S2C, connack(present=present)),
        (S2C, pub(1, payload="ff")),
    )  # fmt: skip
    # resumed: a new message on an identifier still in use; expired: a new flow
    assert found[-1] == ([("violation", ("MQTT-3.3.1-1",), None),
                          ("violation", ("MQTT-4.4.0-1",), None)] if present else [])  # fmt: skip
    assert all(f == [] for f in found[:-1])


def test_pubrel_for_an_unknown_identifier_is_owed_pubcomp_0x92() -> None:
    ends, found = run(
        *OPEN, (C2S, ack("PUBREL", 9)), (S2C, ack("PUBCOMP", 9, 0x92)),
        (C2S, ack("PUBREL", 8)), (S2C, ack("PUBCOMP", 8, 0x00)),
    )  # fmt: skip
    assert found[2] == found[4] == [("tolerated", ("MQTT-4.3.3-11",), None)]
    assert found[3] == []
    assert found[5] == [("tolerated", ("MQTT-4.3.3-11", "MQTT-3.7.2-1"), None)]
    # a PUBREC for no flow is owed PUBREL 0x92
    ends, found = run(*OPEN, (C2S, ack("PUBREC", 4)))
    assert ends.owed_by(S2C) == [("PUBREL", 4)]
    assert run(*OPEN, (C2S, ack("PUBREC", 4)), (S2C, ack("PUBREL", 4, 0x92)))[1][-1] == []


def test_the_qos2_sender_and_identifiers_in_use() -> None:
    _, found = run(
        *OPEN, (S2C, pub(1, qos=2)), (S2C, ack("PUBREL", 1)), (C2S, ack("PUBREC", 1)),
        (S2C, ack("PUBREL", 1)), (S2C, pub(1, qos=2, dup=True)), (S2C, ack("PUBREL", 1)),
        (S2C, pub(1, qos=2, payload="ee")),
    )  # fmt: skip
    assert found[3] == [("violation", ("MQTT-4.3.3-4",), None)]  # before PUBREC
    assert found[5] == []
    assert found[6] == [("violation", ("MQTT-4.3.3-6",), None)]
    assert found[7] == [("violation", ("MQTT-4.4.0-1",), None)]  # PUBREL re-sent
    assert found[8] == [("violation", ("MQTT-4.3.3-1",), None)]


def test_a_refused_qos2_message_frees_the_identifier() -> None:
    # PUBREC 0x80: the receiver holds nothing; the same identifier carries a new message
    _, found = run(
        *OPEN, (C2S, pub(1, qos=2)), (S2C, ack("PUBREC", 1, 0x80)),
        (C2S, pub(1, qos=1, payload="01")), (S2C, ack("PUBACK", 1)),
    )  # fmt: skip
    assert all(f == [] for f in found)
    _, found = run(*OPEN, (C2S, pub(1, qos=2)), (S2C, ack("PUBREC", 1)), (C2S, pub(1, qos=1)))
    # the model receiver still holds 1 for QoS 2: a QoS 1 on it
    assert ("violation", ("MQTT-4.3.3-1",), None) in found[-1]


def test_acks_nobody_awaits_are_tolerated_as_the_table_says() -> None:
    _, found = run(*OPEN, (S2C, ack("PUBACK", 5)), (C2S, ack("PUBCOMP", 6, 0x92)))
    step = sender_step50(SenderState.FREE, SenderInput50.PUBACK_OK)
    assert isinstance(step, Undefined)
    assert found[2] == [(step.verdict, step.rules, None)]
    assert found[3] == [("tolerated", ("MQTT-4.3.3-5",), None)]


def test_an_offence_changes_no_flow_and_owes_no_ack() -> None:
    ends, found = run(
        (C2S, connect(receive_maximum=1)), (S2C, connack(receive_maximum=1)),
        (C2S, pub(1)), (C2S, pub(2)),
    )  # fmt: skip
    assert found[3] and ends.offence is not None
    assert ends.owed_by(S2C) == [("PUBACK", 1)]  # PUBLISH 2 is owed DISCONNECT 0x93 only


# -- the edition, the old API ----------------------------------------------------------------


def test_the_edition_of_both_ends_and_the_old_api() -> None:
    ends = BothEnds()
    assert ends.edition is Edition.V311 and ends.v311
    assert BothEnds(v311=False).edition is Edition.V31
    assert BothEnds(edition=Edition.V31).edition is Edition.V31
    ends.edition = V5
    assert ends.edition is V5 and isinstance(ends.of_server, LinkJudge50)
    assert ends.of_server.server and not ends.of_client.server  # type: ignore[attr-defined]
    ends.edition = Edition.V311
    assert type(ends.of_server) is LinkJudge and ends.v311
    # 3.x: Session Present 0 after a resumed session is still a violation there
    old = BothEnds()
    old.feed(C2S, {"type": "CONNECT", "clean_session": False})
    old.feed(S2C, {"type": "CONNACK", "session_present": False, "return_code": 0})
    old.feed(C2S, {"type": "CONNECT", "clean_session": False})
    (lost,) = old.feed(S2C, {"type": "CONNACK", "session_present": False, "return_code": 0})
    assert lost.rules == ("MQTT-3.2.2-2", "MQTT-3.1.2-4")
    assert BothEnds().negotiated.client.receive_maximum == 65535
    with pytest.raises(TypeError):
        LinkJudge("c", "broker", edition=V5)
    assert not LinkJudge("c", "broker", edition=Edition.V31).v311
    assert isinstance(link_judge("c", "broker", edition=V5), LinkJudge50)
    assert type(link_judge("c", "broker", edition=Edition.V311)) is LinkJudge


def test_the_negotiated_limits_and_topic_alias_field() -> None:
    ends = BothEnds(edition=V5)
    ends.feed(C2S, connect(receive_maximum=4, topic_alias_maximum=3, maximum_packet_size=99))
    ends.feed(S2C, connack(topic_alias_maximum=5))
    assert ends.limits_for(S2C).maximum_packet_size == 99
    assert ends.limits_for(S2C).topic_alias_maximum == 3
    assert ends.limits_for(C2S).topic_alias_maximum == 5
    assert ends.negotiated.client.receive_maximum == 4
    assert topic_alias({"properties": {"topic_alias": 4}}) == 4
    assert topic_alias({"topic_alias": 2, "properties": {}}) == 2
    assert topic_alias({"topic_alias": None}) is None


def test_a_live_peer_judge_keeps_deliveries_with_the_resolved_topic() -> None:
    judge = LinkJudge50("c", "broker", server=True, keep=True)
    judge.peer_sent("CONNECT", connect(topic_alias_maximum=1), 0)
    found: list[Finding] = []
    judge.judged_sent("CONNACK", connack(), found, 1)
    judge.judged_sent("PUBLISH", pub(1, topic="a", alias=1), found, 2)
    judge.judged_sent("PUBLISH", {**pub(2, topic="", alias=1), "properties": {
        "topic_alias": 1, "user_properties": [["k", "v"]]}}, found, 3)  # fmt: skip
    assert found == []
    assert [d["topic"] for d in judge.deliveries] == ["a", "a"]
    assert judge.deliveries[1]["properties"] == {"user_properties": [["k", "v"]]}
    # the broker owes PUBACK 3 to the client: missing after a wait
    judge.peer_sent("PUBLISH", pub(3), 4)
    (missing,) = judge.close(10)
    assert (
        missing.verdict == "missing"
        and missing.message == "c: no PUBACK 3 (the answer to PUBLISH 3 (QoS 1) on t)"
    )


@pytest.mark.parametrize("by_client", [True, False])
def test_a_receiver_answering_an_offence_is_the_close_judge_s_alone(by_client: bool) -> None:
    """After a PUBLISH its receiver must close for, an answer from that receiver is no link
    finding (the close judge says it read on), and the sender's flow goes on as usual. (The
    receiver is modelled as not holding the message: a PUBCOMP 0x00 after it is tolerated
    as for an identifier not held.)"""
    sender, receiver = (C2S, S2C) if by_client else (S2C, C2S)
    ends = BothEnds(edition=V5)
    ends.feed(C2S, connect(topic_alias_maximum=1))
    ends.feed(S2C, connack(topic_alias_maximum=1, maximum_qos=1))
    offending = pub(3, qos=2, alias=2) if not by_client else pub(3, qos=2)
    (found,) = ends.feed(sender, offending)
    assert ends.offence is not None and found.role == ("client" if by_client else "server")
    assert ends.owed_by(receiver) == []  # the table owes only the DISCONNECT
    assert ends.feed(receiver, ack("PUBREC", 3)) == []
    assert ends.feed(sender, ack("PUBREL", 3)) == []
    assert ends.feed(receiver, ack("PUBCOMP", 3, 0x92)) == []
