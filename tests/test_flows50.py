"""The MQTT 5.0 flow tables and the Topic Alias tables: every (state, input) pair decided,
what each 5.0 rule makes of the entries, the rules they cite registered for 5.0, and the
diagrams drawn from them."""

from __future__ import annotations

import itertools

import pytest

from pubproof.model import flows, flows50
from pubproof.model import topic_alias as ta
from pubproof.model.diagrams import dot, mermaid, tables, tables50
from pubproof.model.editions import Edition
from pubproof.model.flows import Method, ReceiverState, SenderState, Undefined
from pubproof.model.flows50 import (
    ACTION_CODE,
    RECEIVER_STATES50,
    SENDER50,
    TABLES_BY_EDITION,
    ReceiverAction50,
    ReceiverInput50,
    SenderAction50,
    SenderInput50,
    Step50,
    receiver_step50,
    receiver_table50,
    sender_step50,
)
from pubproof.model.rules import RULES

SA, SI, RA, RI = SenderAction50, SenderInput50, ReceiverAction50, ReceiverInput50
S, RS = SenderState, ReceiverState
V50 = Edition.V50


def test_every_state_and_input_pair_of_the_50_tables_is_decided() -> None:
    """Each pair is a table entry or an explicit undefined case with a verdict and rules."""
    pairs = 0
    for state, event in itertools.product(SenderState, SenderInput50):
        step = sender_step50(state, event)
        assert isinstance(step, Step50 | Undefined) and step.rules, (state, event)
        if isinstance(step, Undefined):
            assert step.verdict in ("violation", "tolerated") and step.note
        pairs += 1
    for method in Method:
        for r_state, r_event in itertools.product(RECEIVER_STATES50[method], ReceiverInput50):
            r_step = receiver_step50(method, r_state, r_event)
            assert isinstance(r_step, Step50 | Undefined) and r_step.rules, (r_state, r_event)
            pairs += 1
        with pytest.raises(ValueError):
            other = RS.ID_HELD if method is Method.A else RS.STORED
            receiver_step50(method, other, RI.PUBREL_OK)
    assert pairs == 4 * 10 + 2 * 2 * 10
    for in_state, alias_event in itertools.product(ta.AliasIn, ta.AliasInInput):
        assert ta.RECEIVER_ALIAS[in_state, alias_event].rules  # no undefined pair at all
    for out_state, out_event in itertools.product(ta.AliasOut, ta.AliasOutInput):
        assert ta.SENDER_ALIAS[out_state, out_event].rules
    assert len(ta.RECEIVER_ALIAS) == 2 * 4 and len(ta.SENDER_ALIAS) == 2 * 3


def test_the_edition_selects_the_tables_and_3x_is_unchanged() -> None:
    assert TABLES_BY_EDITION == {Edition.V31: "3.x", Edition.V311: "3.x", Edition.V50: "5.0"}
    assert len(flows.SENDER) == 14 and len(flows.RECEIVER_COMMON) == 11
    assert flows.METHODS_BY_EDITION[Edition.V311] == (Method.A, Method.B)


def test_an_error_acknowledgement_ends_the_flow_frees_the_quota_and_resends_nothing() -> None:
    """[MQTT-4.4.0-2]: PUBACK / PUBREC >= 0x80 acknowledges; the PUBLISH is never re-sent."""
    for state, event in ((S.AWAIT_PUBACK, SI.PUBACK_ERROR), (S.AWAIT_PUBREC, SI.PUBREC_ERROR)):
        step = SENDER50[state, event]
        assert step.next is S.FREE and "MQTT-4.4.0-2" in step.rules
        assert set(step.actions) == {SA.COMPLETE, SA.RELEASE_QUOTA}
        assert sender_step50(S.FREE, SI.RESUME) == SENDER50[S.FREE, SI.RESUME]
        assert SENDER50[S.FREE, SI.RESUME].actions == ()  # a free identifier re-sends nothing


def test_pubrel_only_after_a_pubrec_below_0x80() -> None:
    """[MQTT-4.3.3-4]: the only entries that send PUBREL 0x00 answer PUBREC < 0x80 or re-send
    a PUBREL already due on a resumed session."""
    for (state, event), step in SENDER50.items():
        if SA.SEND_PUBREL in step.actions:
            assert event is SI.PUBREC_OK or (state is S.AWAIT_PUBCOMP and event is SI.RESUME)
        if event is SI.PUBREC_ERROR:
            assert SA.SEND_PUBREL not in step.actions


def test_the_quota_is_taken_per_publish_sent_and_released_on_the_right_acknowledgements() -> None:
    """[MQTT-4.9.0-2], [MQTT-3.3.4-7]: taken by every QoS > 0 PUBLISH sent (re-sends too),
    released by PUBACK (any code), PUBCOMP (any code) and PUBREC >= 0x80 only."""
    releasing = {SI.PUBACK_OK, SI.PUBACK_ERROR, SI.PUBREC_ERROR, SI.PUBCOMP_OK,
                 SI.PUBCOMP_NOT_FOUND}  # fmt: skip
    for (state, event), step in SENDER50.items():
        sends_publish = SA.SEND_PUBLISH in step.actions or SA.RESEND_PUBLISH in step.actions
        if sends_publish:
            assert SA.TAKE_QUOTA in step.actions, (state, event)
        assert (SA.RELEASE_QUOTA in step.actions) == (event in releasing), (state, event)
        assert (SA.RELEASE_QUOTA in step.actions) == (SA.COMPLETE in step.actions)
    assert SA.RELEASE_QUOTA not in SENDER50[S.AWAIT_PUBREC, SI.PUBREC_OK].actions


def test_resending_happens_on_a_resumed_session_only() -> None:
    """[MQTT-4.4.0-1]: re-sends only on RESUME; CLEAN (Clean Start 1, or an expired session)
    drops every state and sends nothing."""
    for (_, event), step in SENDER50.items():
        if SA.RESEND_PUBLISH in step.actions:
            assert event is SI.RESUME
        if event is SI.CLEAN:
            assert step.actions == () and step.next is S.FREE
    assert SA.RESEND_PUBLISH in SENDER50[S.AWAIT_PUBACK, SI.RESUME].actions
    assert SA.RESEND_PUBLISH in SENDER50[S.AWAIT_PUBREC, SI.RESUME].actions
    assert SENDER50[S.AWAIT_PUBCOMP, SI.RESUME].actions == (SA.TAKE_QUOTA, SA.SEND_PUBREL)


@pytest.mark.parametrize("method", list(Method))
def test_the_receiver_answers_0x92_and_0x93(method: Method) -> None:
    free = receiver_step50(method, RS.FREE, RI.PUBREL_OK)
    assert isinstance(free, Step50) and free.actions == (RA.SEND_PUBCOMP_NOT_FOUND,)
    assert ACTION_CODE[RA.SEND_PUBCOMP_NOT_FOUND] == 0x92
    over = receiver_step50(method, RS.FREE, RI.PUBLISH_OVER_RECEIVE_MAXIMUM)
    assert isinstance(over, Step50) and over.actions == (RA.DISCONNECT_RECEIVE_MAXIMUM,)
    assert ACTION_CODE[RA.DISCONNECT_RECEIVE_MAXIMUM] == 0x93
    refused = receiver_step50(method, RS.FREE, RI.PUBLISH_QOS2_REFUSED)
    assert isinstance(refused, Step50) and refused.next is RS.FREE  # [MQTT-4.3.3-9]
    assert RA.DELIVER not in refused.actions
    held = RECEIVER_STATES50[method][1]
    duplicate = receiver_step50(method, held, RI.PUBLISH_QOS2)
    assert isinstance(duplicate, Step50) and duplicate.actions == (RA.SEND_PUBREC,)


def test_the_alias_tables_reset_on_a_new_connection_and_refuse_unknown_aliases() -> None:
    for in_state in ta.AliasIn:
        assert ta.RECEIVER_ALIAS[in_state, ta.AliasInInput.NEW_CONNECTION].next is ta.AliasIn.UNSET
    for out in ta.AliasOut:
        assert ta.SENDER_ALIAS[out, ta.AliasOutInput.NEW_CONNECTION].next is ta.AliasOut.NONE
    unknown = ta.RECEIVER_ALIAS[ta.AliasIn.UNSET, ta.AliasInInput.ALIAS_ONLY]
    assert unknown.actions == (ta.AliasInAction.DISCONNECT_PROTOCOL_ERROR,)
    known = ta.RECEIVER_ALIAS[ta.AliasIn.SET, ta.AliasInInput.ALIAS_ONLY]
    assert known.actions == (ta.AliasInAction.RESOLVE,)


def _cited_50() -> set[str]:
    steps: list[Step50 | Undefined | ta.AliasStep] = [
        *SENDER50.values(),
        *flows50.UNDEFINED_SENDER50.values(),
        *flows50.UNDEFINED_RECEIVER50.values(),
        *ta.RECEIVER_ALIAS.values(),
        *ta.SENDER_ALIAS.values(),
    ]
    for method in Method:
        steps += receiver_table50(method).values()
    return {rule_id for step in steps for rule_id in step.rules}


def test_every_id_the_50_tables_cite_is_a_registered_50_rule() -> None:
    cited = _cited_50()
    assert len(cited) >= 25
    for rule_id in cited:
        found = RULES.by_id(rule_id, V50)  # a flow rule, or a wire rule of 5.0
        assert found.quotes and found.quotes[0].text, rule_id
    assert {"MQTT-4.4.0-1", "MQTT-4.4.0-2", "MQTT-4.9.0-1", "MQTT-4.9.0-2", "MQTT-3.3.4-7",
            "MQTT-3.3.4-9", "MQTT-3.3.2-7", "MQTT-4.3.3-4"} <= cited  # fmt: skip


def test_the_50_diagrams_have_one_edge_per_table_entry() -> None:
    named = tables50()
    assert set(named) == {"sender-5.0", "receiver-5.0-method-a", "receiver-5.0-method-b",
                          "topic-alias-receiver", "topic-alias-sender"}  # fmt: skip
    for name, table in named.items():
        graph = mermaid(table)
        assert graph.count(" --> ") == len(table) + 1, name
        assert dot(table, name).count(" -> ") == len(table)
    assert "[*] --> UNSET" in mermaid(named["topic-alias-receiver"])
    assert "[*] --> FREE" in mermaid(tables()["sender"])  # 3.x unchanged


def test_no_publish_is_re_sent_once_its_pubrel_was_sent() -> None:
    """[MQTT-4.3.3-6]: a flow awaiting PUBCOMP re-sends PUBREL, never the PUBLISH."""
    for (state, _), step in SENDER50.items():
        if state is S.AWAIT_PUBCOMP:
            assert SA.SEND_PUBLISH not in step.actions and SA.RESEND_PUBLISH not in step.actions
    assert "MQTT-4.3.3-6" in SENDER50[S.AWAIT_PUBCOMP, SI.RESUME].rules
