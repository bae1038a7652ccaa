"""The MQTT 5.0 link judge: the judged end's obligations after each (state, input) the
model's flow tables' own, as sender and as receiver, in both directions, and after each
reconnection (the compiled twin's tables are held equal to the model's in
test_judge_twins)."""

from __future__ import annotations

from collections import Counter

import pytest
from support.link50_packets import V5, ack, connack, connect, pub

from pubproof.judge.ends import C2S, S2C, BothEnds
from pubproof.judge.link50 import LinkJudge50
from pubproof.model.flows import Method, ReceiverState, SenderState, Undefined
from pubproof.model.flows50 import (
    ReceiverInput50,
    SenderAction50,
    SenderInput50,
    Step50,
    receiver_step50,
    sender_step50,
)

# -- exhaustive (state, input) for the judged end as sender, both ends ----------------------

#: how to bring a judged sender's flow on identifier 1 into each state: (QoS, the acks)
_INTO = {
    SenderState.FREE: None,
    SenderState.AWAIT_PUBACK: (1, ()),
    SenderState.AWAIT_PUBREC: (2, ()),
    SenderState.AWAIT_PUBCOMP: (2, (("PUBREC", 0),)),
}
_ACK_INPUTS = {
    SenderInput50.PUBACK_OK: ("PUBACK", 0x00), SenderInput50.PUBACK_ERROR: ("PUBACK", 0x80),
    SenderInput50.PUBREC_OK: ("PUBREC", 0x00), SenderInput50.PUBREC_ERROR: ("PUBREC", 0x80),
    SenderInput50.PUBCOMP_OK: ("PUBCOMP", 0x00),
    SenderInput50.PUBCOMP_NOT_FOUND: ("PUBCOMP", 0x92),
}  # fmt: skip


@pytest.mark.parametrize("sender", [C2S, S2C])
@pytest.mark.parametrize("state", list(SenderState))
@pytest.mark.parametrize("event", list(_ACK_INPUTS))
def test_each_ack_in_each_sender_state(
    sender: str, state: SenderState, event: SenderInput50
) -> None:
    """The judged sender's obligations after each (state, acknowledgement) are the table's:
    a PUBREL owed (with the table's code) exactly when the entry sends one, the quota unit
    released when it says so, the flow in its next state."""
    receiver = S2C if sender == C2S else C2S
    ends = BothEnds(edition=V5)
    ends.feed(C2S, connect(receive_maximum=1))
    ends.feed(S2C, connack(receive_maximum=1))
    into = _INTO[state]
    if into is not None:
        qos, acks = into
        assert ends.feed(sender, pub(1, qos=qos)) == []
        for kind, code in acks:
            assert ends.feed(receiver, ack(kind, 1, code)) == []
            assert ends.feed(sender, ack("PUBREL", 1)) == []
    judge = ends.of_client if sender == C2S else ends.of_server
    assert isinstance(judge, LinkJudge50)
    kind, code = _ACK_INPUTS[event]
    ends.feed(receiver, ack(kind, 1, code))
    step = sender_step50(state, event)
    owed = ends.owed_by(sender)
    flow = judge.judged_tx.get(1)
    if isinstance(step, Undefined):
        assert owed == [] and (flow is None) == (state is SenderState.FREE)
        return
    pubrel = [a for a in step.actions if a.name.startswith("SEND_PUBREL")]
    assert owed == ([("PUBREL", 1)] if pubrel else [])
    holds = state is not SenderState.FREE and SenderAction50.RELEASE_QUOTA not in step.actions
    assert (1 in judge.judged_quota) == holds
    assert (SenderState.FREE if flow is None else flow.state) is step.next
    # and a new QoS 1 PUBLISH on identifier 2 meets the quota the table left
    found = ends.feed(sender, pub(2, qos=1))
    if 1 in judge.judged_quota:
        assert [f.rules[1] for f in found] == ["MQTT-4.9.0-2"]
    else:
        assert found == []


@pytest.mark.parametrize("receiver", [C2S, S2C])
@pytest.mark.parametrize("held", [False, True])
@pytest.mark.parametrize(
    "event",
    [ReceiverInput50.PUBLISH_QOS1, ReceiverInput50.PUBLISH_QOS2, ReceiverInput50.PUBREL_OK,
     ReceiverInput50.PUBREL_NOT_FOUND, ReceiverInput50.PUBLISH_OVER_RECEIVE_MAXIMUM],
)  # fmt: skip
def test_each_input_in_each_receiver_state(
    receiver: str, held: bool, event: ReceiverInput50
) -> None:
    """The judged receiver owes what the table's entry sends, with its code; an input the
    table leaves undefined owes nothing."""
    sender = S2C if receiver == C2S else C2S
    ends = BothEnds(edition=V5)
    ends.feed(C2S, connect(receive_maximum=2))
    ends.feed(S2C, connack(receive_maximum=2))
    if held:
        ends.feed(sender, pub(1, qos=2))
        ends.feed(receiver, ack("PUBREC", 1))
    state = ReceiverState.ID_HELD if held else ReceiverState.FREE
    before = ends.owed_by(receiver)
    if event is ReceiverInput50.PUBLISH_OVER_RECEIVE_MAXIMUM:
        for packet_id in (5, 6):
            ends.feed(sender, pub(packet_id, qos=1))
        before = ends.owed_by(receiver)
        ends.feed(sender, pub(1 if held else 7, qos=1))
        if not held:
            assert ends.offence is not None and ends.offence.reason_code == 0x93
        # beyond the quota the table owes DISCONNECT 0x93; on a held identifier the input
        # is undefined (a QoS 1 PUBLISH on it): nothing owed either way
        assert ends.owed_by(receiver) == before
        return
    if event in (ReceiverInput50.PUBLISH_QOS1, ReceiverInput50.PUBLISH_QOS2):
        ends.feed(sender, pub(1, qos=1 if event is ReceiverInput50.PUBLISH_QOS1 else 2,
                              dup=held))  # fmt: skip
    else:
        code = 0 if event is ReceiverInput50.PUBREL_OK else 0x92
        ends.feed(sender, ack("PUBREL", 1, code))
    step = receiver_step50(Method.B, state, event)
    new = list((Counter(ends.owed_by(receiver)) - Counter(before)).elements())
    if isinstance(step, Undefined):
        assert new == []
        return
    replies = [a.name.split("_")[1] for a in step.actions if a.name.startswith("SEND_")]
    assert [kind for kind, _ in new] == replies


@pytest.mark.parametrize("sender", [C2S, S2C])
@pytest.mark.parametrize("state", list(SenderState))
@pytest.mark.parametrize("event", [SenderInput50.RESUME, SenderInput50.CLEAN])
def test_each_reconnection_in_each_sender_state(
    sender: str, state: SenderState, event: SenderInput50
) -> None:
    """After a reconnection the judged sender owes what the table's RESUME or CLEAN entry
    sends (the PUBLISH again with DUP 1, or the PUBREL), holds the quota units it takes, and
    keeps the flow in the entry's next state."""
    receiver = S2C if sender == C2S else C2S
    ends = BothEnds(edition=V5)
    ends.feed(C2S, connect())
    ends.feed(S2C, connack())
    into = _INTO[state]
    if into is not None:
        qos, acks = into
        ends.feed(sender, pub(1, qos=qos))
        for kind, code in acks:
            ends.feed(receiver, ack(kind, 1, code))
            ends.feed(sender, ack("PUBREL", 1))
    resume = event is SenderInput50.RESUME
    ends.feed(C2S, connect(clean=not resume))
    ends.feed(S2C, connack(present=resume))
    step = sender_step50(state, event)
    assert isinstance(step, Step50)
    judge = ends.of_client if sender == C2S else ends.of_server
    assert isinstance(judge, LinkJudge50)
    owed = ends.owed_by(sender)
    expected = []
    if SenderAction50.RESEND_PUBLISH in step.actions:
        expected.append(("PUBLISH", 1))
    if SenderAction50.SEND_PUBREL in step.actions:
        expected.append(("PUBREL", 1))
    assert owed == expected
    assert (1 in judge.judged_quota) == (SenderAction50.TAKE_QUOTA in step.actions)
    flow = judge.judged_tx.get(1)
    assert (SenderState.FREE if flow is None else flow.state) is step.next
    # the owed re-send, made as the table says, is no finding
    if ("PUBLISH", 1) in expected:
        assert ends.feed(sender, pub(1, qos=into[0] if into else 1, dup=True)) == []
    if ("PUBREL", 1) in expected:
        assert ends.feed(sender, ack("PUBREL", 1)) == []
