"""The MQTT 5.0 flow statements the 5.0 sessions carry out, each shown by a run of the
model's 5.0 session (:class:`pubproof.model.session50.SessionModel50`) that names it.

Each of these statements has a 3.1.1 statement of the same number or is cited only by
the 5.0 tables, so the traceability matrix counts a test for it in 5.0 only when the test
says 5.0: every test here states the edition (``EDITION``) and checks that the outputs
the session produces cite the statement's 5.0 rule, so a table entry that stopped citing
it, or a session that stopped doing what it says, fails here.
"""

from __future__ import annotations

from pubproof.model.flows import Method, SenderState
from pubproof.model.flows50 import SENDER50, SenderInput50
from pubproof.model.rules import RULES
from pubproof.model.session50 import Output50, SessionModel50, ack50, publish50
from pubproof.model.topic_alias import RECEIVER_ALIAS, AliasIn, AliasInInput
from pubproof.model.trace import PublishP

EDITION = "5.0"
#: the rules the 5.0 tables cite where the session's outputs cannot show them (entries
#: that send nothing: the PUBCOMP that ends a flow; the receiver setting an alias mapping)
PUBCOMP_RULES = SENDER50[SenderState.AWAIT_PUBCOMP, SenderInput50.PUBCOMP_OK].rules
ALIAS_SET_RULES = RECEIVER_ALIAS[AliasIn.UNSET, AliasInInput.TOPIC_AND_ALIAS].rules


def _rule_50(key: str, rule_id: str) -> None:
    """The key is the registered 5.0 flow rule of the id (what the matrix links)."""
    rule = RULES.by_id(rule_id, RULES.flow(key).editions[0])
    assert rule.key == key and rule.ids[rule.editions[0]] == rule_id
    assert rule.editions[0].value == "5.0"


def _sent(outputs: list[Output50]) -> list[tuple[str, int | None, int]]:
    found: list[tuple[str, int | None, int]] = []
    for out in outputs:
        if out.kind == "send" and out.packet is not None:
            code = out.packet.get("reason_code", 0)
            assert isinstance(code, int)
            found.append((out.packet["type"], out.packet.get("packet_id"), code))
    return found


def _publishes(outputs: list[Output50]) -> list[PublishP]:
    """The PUBLISH packets among the outputs (sent, or delivered), in order."""
    found: list[PublishP] = []
    for out in outputs:
        if out.packet is not None and out.packet["type"] == "PUBLISH":
            found.append(out.packet)
    return found


def _cites(outputs: list[Output50], rule_id: str) -> bool:
    return any(rule_id in o.rules for o in outputs)


def _publish(packet_id: int | None, qos: int, *, dup: bool = False) -> PublishP:
    return {**publish50("a/b", b"x", qos, False, packet_id), "dup": dup}


def test_the_receiver_responds_as_the_qos_requires_in_5_0() -> None:
    """[MQTT-3.3.4-1] (5.0, flow50.publish.response): QoS 0 nothing, QoS 1 PUBACK, QoS 2
    PUBREC; each answer cites the statement or the QoS's own receiver statement."""
    _rule_50("flow50.publish.response", "MQTT-3.3.4-1")
    assert EDITION == "5.0"
    for method in Method:
        end = SessionModel50(method=method)
        qos0 = end.receive(_publish(None, 0))
        assert _sent(qos0) == [] and [o.kind for o in qos0] == ["deliver"]
        assert _cites(qos0, "MQTT-3.3.4-1")
        assert _sent(end.receive(_publish(1, 1))) == [("PUBACK", 1, 0)]
        assert _sent(end.receive(_publish(2, 2))) == [("PUBREC", 2, 0)]


def test_qos0_is_sent_once_with_dup_0_and_leaves_no_state_in_5_0() -> None:
    """[MQTT-4.3.1-1] (5.0, flow50.qos0.sender): QoS 0, DUP 0, no identifier, no quota."""
    _rule_50("flow50.qos0.sender", "MQTT-4.3.1-1")
    end = SessionModel50(peer_receive_maximum=1)
    out = end.publish("a/b", b"x", 0)
    assert _cites(out, "MQTT-4.3.1-1")
    [packet] = [o.packet for o in out if o.kind == "send"]
    assert packet is not None and packet["type"] == "PUBLISH"
    assert packet["qos"] == 0 and packet["dup"] is False and packet["packet_id"] is None
    assert end.quota == 1 and end.outgoing == {}
    assert end.reconnect(resume=True) == []  # nothing to re-send
    assert EDITION == "5.0"


def test_after_puback_a_publish_on_that_identifier_is_a_new_message_in_5_0() -> None:
    """[MQTT-4.3.2-5] (5.0, flow50.qos1.new-after-puback): the receiver delivers it again,
    whatever its DUP flag."""
    _rule_50("flow50.qos1.new-after-puback", "MQTT-4.3.2-5")
    end = SessionModel50()
    first = end.receive(_publish(7, 1))
    again = end.receive(_publish(7, 1, dup=True))
    for out in (first, again):
        assert [o.kind for o in out] == ["deliver", "send"]
        assert _sent(out) == [("PUBACK", 7, 0)] and _cites(out, "MQTT-4.3.2-5")
    assert end.incoming == {} and EDITION == "5.0"


def test_a_new_qos2_message_gets_an_unused_identifier_in_5_0() -> None:
    """[MQTT-4.3.3-1] (5.0, flow50.qos2.unused-id): each new QoS 2 message takes an
    identifier no flow holds; a receiver that gets a QoS 1 PUBLISH on an identifier still
    held for QoS 2 finds the sender broke the statement."""
    _rule_50("flow50.qos2.unused-id", "MQTT-4.3.3-1")
    sender = SessionModel50()
    ids = []
    for _ in range(3):
        out = sender.publish("a/b", b"x", 2)
        assert _cites(out, "MQTT-4.3.3-1")
        ids += [i for _, i, _ in _sent(out)]
    assert len(set(ids)) == 3 and set(sender.outgoing) == set(ids)
    receiver = SessionModel50(method=Method.B)
    receiver.receive(_publish(5, 2))
    [judged] = receiver.receive(_publish(5, 1))
    assert judged.kind == "violation" and judged.rules == ("MQTT-4.3.3-1",)
    assert EDITION == "5.0"


def test_a_qos2_publish_stays_unacknowledged_until_its_pubrec_in_5_0() -> None:
    """[MQTT-4.3.3-3] (5.0, flow50.qos2.unacknowledged): before the PUBREC a resumed
    session re-sends the PUBLISH (DUP 1); the PUBREC (which cites the statement) ends that,
    and afterwards the PUBREL, not the PUBLISH, is re-sent."""
    _rule_50("flow50.qos2.unacknowledged", "MQTT-4.3.3-3")
    sender = SessionModel50()
    [(_, packet_id, _)] = _sent(sender.publish("a/b", b"x", 2))
    assert packet_id is not None
    resent = [o.packet for o in sender.reconnect(resume=True) if o.kind == "send"]
    assert [(p["type"], p.get("dup")) for p in resent if p is not None] == [("PUBLISH", True)]
    answered = sender.receive(ack50("PUBREC", packet_id))
    assert _cites(answered, "MQTT-4.3.3-3") and _sent(answered) == [("PUBREL", packet_id, 0)]
    assert _sent(sender.reconnect(resume=True)) == [("PUBREL", packet_id, 0)]
    assert EDITION == "5.0"


def test_after_pubcomp_a_publish_on_that_identifier_is_a_new_message_in_5_0() -> None:
    """[MQTT-4.3.3-12] (5.0, flow50.qos2.new-after-pubcomp): once PUBCOMP is sent the
    receiver holds nothing, and a PUBLISH on the identifier is delivered again, with both
    QoS 2 methods."""
    _rule_50("flow50.qos2.new-after-pubcomp", "MQTT-4.3.3-12")
    for method in Method:
        end = SessionModel50(method=method)
        delivered = 0
        for dup in (False, True):
            out = end.receive(_publish(3, 2, dup=dup))
            released = end.receive(ack50("PUBREL", 3))
            assert _sent(released) == [("PUBCOMP", 3, 0)]
            assert _cites(released, "MQTT-4.3.3-12")
            delivered += sum(o.kind == "deliver" for o in out + released)
        assert delivered == 2 and end.incoming == {}, method
    assert EDITION == "5.0"


def test_session_state_is_kept_on_resume_and_dropped_when_the_session_ends_in_5_0() -> None:
    """[MQTT-4.1.0-1] (5.0, flow50.session.store): a held QoS 2 flow survives a resumed
    connection; [MQTT-4.1.0-2] (5.0, flow50.session.expire): Clean Start 1 or an expired
    session drops every flow of both directions."""
    _rule_50("flow50.session.store", "MQTT-4.1.0-1")
    _rule_50("flow50.session.expire", "MQTT-4.1.0-2")
    end = SessionModel50(method=Method.A)
    end.receive(_publish(4, 2))
    end.publish("c/d", b"y", 1)
    end.reconnect(resume=True)
    assert 4 in end.incoming and len(end.outgoing) == 1
    duplicate = end.receive(_publish(4, 2, dup=True))
    assert _sent(duplicate) == [("PUBREC", 4, 0)]  # still held: no second delivery
    assert end.reconnect(resume=False) == []
    assert end.incoming == {} and end.outgoing == {}
    assert EDITION == "5.0"


def test_a_protocol_error_with_a_reason_code_closes_the_connection_in_5_0() -> None:
    """[MQTT-4.13.1-1] (5.0, flow50.close.with-reason-code): the faults the 5.0 flows name a
    Reason Code for end in ``disconnect`` with that code (the end closes the connection and
    handles nothing more on it): an unknown Topic Alias (0x82), an alias above the
    maximum (0x94), and a new PUBLISH beyond the Receive Maximum (0x93)."""
    _rule_50("flow50.close.with-reason-code", "MQTT-4.13.1-1")
    unknown: PublishP = {**_publish(None, 0), "topic": "", "properties": {"topic_alias": 1}}
    above: PublishP = {**_publish(None, 0), "properties": {"topic_alias": 3}}
    end = SessionModel50(topic_alias_maximum=2, receive_maximum=1)
    for packet, code in ((unknown, 0x82), (above, 0x94)):
        [closed] = end.receive(packet)
        assert closed.kind == "disconnect" and closed.reason_code == code
    end.receive(_publish(1, 2))
    [closed] = end.receive(_publish(2, 2))
    assert closed.kind == "disconnect" and closed.reason_code == 0x93
    assert EDITION == "5.0"


def test_a_qos1_flow_statement_by_statement_in_5_0() -> None:
    """[MQTT-4.3.2-1] an unused identifier per new message, [MQTT-4.3.2-2] the PUBLISH with
    it, QoS 1 and DUP 0, [MQTT-4.3.2-3] unacknowledged until the PUBACK (a resumed session
    re-sends it, [MQTT-3.3.1-1] with DUP 1; after the PUBACK nothing), [MQTT-4.3.2-4] the
    receiver's PUBACK with the identifier (5.0: flow50.qos1.*, flow50.dup.on-resend)."""
    for key, rule_id in (
        ("flow50.qos1.unused-id", "MQTT-4.3.2-1"),
        ("flow50.qos1.send", "MQTT-4.3.2-2"),
        ("flow50.qos1.unacknowledged", "MQTT-4.3.2-3"),
        ("flow50.qos1.puback", "MQTT-4.3.2-4"),
        ("flow50.dup.on-resend", "MQTT-3.3.1-1"),
    ):
        _rule_50(key, rule_id)
    sender, receiver = SessionModel50(), SessionModel50()
    first, second = sender.publish("a/b", b"1", 1), sender.publish("a/b", b"2", 1)
    for out in (first, second):
        assert _cites(out, "MQTT-4.3.2-1") and _cites(out, "MQTT-4.3.2-2")
    sent = _publishes(first + second)
    assert [(p["qos"], p["dup"]) for p in sent] == [(1, False), (1, False)]
    ids = [p["packet_id"] for p in sent]
    assert len(set(ids)) == 2 and None not in ids
    resent = sender.reconnect(resume=True)  # both unacknowledged: both again, DUP 1
    assert [p["dup"] for p in _publishes(resent)] == [True, True]
    assert all(_cites([o], "MQTT-3.3.1-1") for o in resent)
    acked = receiver.receive(sent[0])
    first_id = ids[0]
    assert first_id is not None
    assert _sent(acked) == [("PUBACK", first_id, 0)] and _cites(acked, "MQTT-4.3.2-4")
    sender.receive(ack50("PUBACK", first_id))  # ends that flow: [MQTT-4.3.2-3]
    again = sender.reconnect(resume=True)
    assert [p["packet_id"] for p in _publishes(again)] == [ids[1]]
    assert EDITION == "5.0"


def test_a_qos2_flow_statement_by_statement_in_5_0() -> None:
    """[MQTT-4.3.3-2] PUBLISH with the identifier, QoS 2, DUP 0; [MQTT-4.3.3-8] PUBREC;
    [MQTT-4.3.3-10] a duplicate before PUBREL gets PUBREC again and no second delivery;
    [MQTT-4.3.3-11] PUBREL gets PUBCOMP with the identifier; [MQTT-4.3.3-5] the PUBREL is
    unacknowledged until the PUBCOMP (re-sent on a resumed session); [MQTT-4.3.3-9] after a
    PUBREC of 0x80 or more a PUBLISH on the identifier is a new message (5.0: flow50.qos2.*)."""
    for key, rule_id in (
        ("flow50.qos2.send", "MQTT-4.3.3-2"),
        ("flow50.qos2.pubrec", "MQTT-4.3.3-8"),
        ("flow50.qos2.until-pubrel", "MQTT-4.3.3-10"),
        ("flow50.qos2.pubcomp", "MQTT-4.3.3-11"),
        ("flow50.qos2.pubrel-unacknowledged", "MQTT-4.3.3-5"),
        ("flow50.qos2.new-after-error", "MQTT-4.3.3-9"),
    ):
        _rule_50(key, rule_id)
    for method in Method:
        sender, receiver = SessionModel50(), SessionModel50(method=method)
        out = sender.publish("a/b", b"x", 2)
        [publish] = _publishes(out)
        assert _cites(out, "MQTT-4.3.3-2") and (publish["qos"], publish["dup"]) == (2, False)
        packet_id = publish["packet_id"]
        assert packet_id is not None
        first = receiver.receive(publish)
        assert _sent(first) == [("PUBREC", packet_id, 0)] and _cites(first, "MQTT-4.3.3-8")
        resent: PublishP = {**publish, "dup": True}
        duplicate = receiver.receive(resent)
        assert _sent(duplicate) == [("PUBREC", packet_id, 0)]
        assert _cites(duplicate, "MQTT-4.3.3-10")
        assert not any(o.kind == "deliver" for o in duplicate)
        pubrel = sender.receive(ack50("PUBREC", packet_id))
        assert _sent(pubrel) == [("PUBREL", packet_id, 0)]
        assert _sent(sender.reconnect(resume=True)) == [("PUBREL", packet_id, 0)]
        assert "MQTT-4.3.3-5" in PUBCOMP_RULES  # the PUBCOMP ends it, nothing before
        done = receiver.receive(ack50("PUBREL", packet_id))
        assert _sent(done) == [("PUBCOMP", packet_id, 0)] and _cites(done, "MQTT-4.3.3-11")
        delivered = sum(o.kind == "deliver" for o in first + duplicate + done)
        assert delivered == 1, method
        sender.receive(ack50("PUBCOMP", packet_id))
        assert sender.outgoing == {} and sender.reconnect(resume=True) == []
        # a refusal: PUBREC 0x80 frees the identifier, and the next PUBLISH on it is new
        other: PublishP = {**publish, "packet_id": 9}
        refused = receiver.receive(other, refuse=0x80)
        assert _sent(refused) == [("PUBREC", 9, 0x80)] and _cites(refused, "MQTT-4.3.3-9")
        again: PublishP = {**other, "dup": True}
        assert _sent(receiver.receive(again)) == [("PUBREC", 9, 0)]
    assert EDITION == "5.0"


def test_every_alias_up_to_the_maximum_is_accepted_in_5_0() -> None:
    """[MQTT-3.3.2-10] (Client) and [MQTT-3.3.2-12] (Server): a receiver accepts every
    Topic Alias from 1 to the Topic Alias Maximum it sent, and resolves each afterwards
    (5.0: flow50.topic-alias.client-accepts, flow50.topic-alias.server-accepts)."""
    _rule_50("flow50.topic-alias.client-accepts", "MQTT-3.3.2-10")
    _rule_50("flow50.topic-alias.server-accepts", "MQTT-3.3.2-12")
    maximum = 4
    end = SessionModel50(topic_alias_maximum=maximum)
    for alias in range(1, maximum + 1):
        named: PublishP = {**_publish(None, 0), "topic": f"t/{alias}",
                           "properties": {"topic_alias": alias}}  # fmt: skip
        got = end.receive(named)
        assert [p["topic"] for p in _publishes(got)] == [f"t/{alias}"]
        assert got[0].kind == "deliver"
        assert {"MQTT-3.3.2-10", "MQTT-3.3.2-12"} <= set(ALIAS_SET_RULES)
    for alias in range(1, maximum + 1):
        alone: PublishP = {**_publish(None, 0), "topic": "", "properties": {"topic_alias": alias}}
        got = end.receive(alone)
        assert [p["topic"] for p in _publishes(got)] == [f"t/{alias}"]
        assert got[0].kind == "deliver"
    above: PublishP = {**_publish(None, 0), "properties": {"topic_alias": maximum + 1}}
    [closed] = end.receive(above)
    assert closed.kind == "disconnect" and closed.reason_code == 0x94
    assert EDITION == "5.0"
