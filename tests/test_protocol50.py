"""The MQTT 5.0 protocol theorems: statuses, mutants, the engines behind them, and their
counterexamples replayed against the 5.0 sessions."""

from __future__ import annotations

import pytest

from pubproof.model.editions import Edition
from pubproof.model.explore50 import (
    Explorer50,
    Flows50,
    local_closure,
    unacknowledged,
)
from pubproof.model.flows import Method
from pubproof.model.replay import replay
from pubproof.model.rules import RULES
from pubproof.proofs import protocol50 as P
from pubproof.proofs.catalog import load
from pubproof.proofs.protocol50_z3 import flow_control, topic_alias
from pubproof.proofs.registry import Theorem

V50 = Edition.V50
THEOREMS_50 = [t for t in load() if t.id.startswith("proto.v5.")]


def test_the_required_50_theorems_are_registered() -> None:
    ids = {t.id for t in THEOREMS_50}
    assert ids == {t.id for t in P.THEOREM_ORDER}
    assert {
        "proto.v5.flow-control",
        "proto.v5.qos1-at-least-once",
        "proto.v5.qos2-exactly-once-method-a",
        "proto.v5.qos2-exactly-once-method-b",
        "proto.v5.error-ends-the-flow",
        "proto.v5.topic-alias-resolves",
        "proto.v5.refute.topic-alias-kept-across-reconnect",
        "proto.v5.refute.flow-control-when-pubrec-frees-quota",
        "proto.v5.refute.at-most-once-when-resending-after-an-error",
        "proto.v5.methods-a-and-b-deliver-the-same-sequence",
        "proto.v5.refute.methods-agree-with-mixed-qos",
        "proto.v5.refute.methods-agree-when-a-refusal-is-reversed",
    } <= ids


@pytest.mark.parametrize("theorem", THEOREMS_50, ids=lambda t: t.id)
def test_50_theorem_metadata(theorem: Theorem) -> None:
    assert theorem.editions == (V50,) and theorem.statement and theorem.method
    for rule_id in theorem.rules:
        assert RULES.by_id(rule_id, V50).quotes, rule_id  # a 5.0 rule, flow or wire
    assert theorem.mutants and len({m.name for m in theorem.mutants}) == len(theorem.mutants)


def test_flow_control_is_proved_for_a_symbolic_receive_maximum_for_both_methods() -> None:
    for method in Method:
        status, details, states = flow_control(Flows50(method=method, refusals=True))
        assert status == "proved", details
        assert "quota + unacknowledged = Receive Maximum" in details and states >= 15
    status, _, _ = flow_control(Flows50(refusals=True, mutations=P.PUBREC_FREES_QUOTA))
    assert status == "unknown"  # not inductive: the explicit search gives the trace


def test_the_explicit_search_finds_the_bound_at_receive_maximum_two() -> None:
    """With the bound at 2 the search reaches two messages in flight, never three."""
    explorer = Explorer50(Flows50(refusals=True), (2, 1, 2), receive_maximum=2)
    worlds, found = explorer.search(
        {"three": lambda w: unacknowledged(w) < 2, "bound": lambda w: unacknowledged(w) <= 2}
    )
    assert worlds > 100 and "three" in found and "bound" not in found


def test_the_local_state_space_is_finite_and_resumed_sessions_keep_it_small() -> None:
    flows = Flows50(method=Method.A, refusals=True)
    assert 0 < len(local_closure(flows, (2,), clean=False)) <= len(local_closure(flows, (2,)))


def test_the_flow_control_counterexample_replays_to_a_0x93() -> None:
    """PUBREC 0x00 freeing quota: the receiver, holding Receive Maximum 1 flows, gets one
    more and must send DISCONNECT 0x93; the real tables would have held that PUBLISH back
    (the app-publish that the mutant sent at once waits in the replay)."""
    trace = P.flow_control_fails_when_pubrec_frees_quota.check().counterexample
    assert trace is not None
    judged = replay(trace, receive_maximum=1)
    assert [d.reason_code for d in judged.disconnects()] == [0x93]
    assert any(o.kind == "wait" for _, outs in judged.steps for o in outs)


def test_the_resend_after_error_counterexample_delivers_a_refused_message() -> None:
    trace = P.resend_after_error_breaks_at_most_once.check().counterexample
    assert trace is not None
    codes = [e.get("reason_code") for e in trace if e.get("type") == "PUBACK"]
    assert codes == [0x80]
    judged = replay(trace, edition=V50)
    delivered = judged.deliveries()
    assert len(delivered) == 1 and delivered[0].get("dup") is True  # the re-sent one
    reconnect = next(outs for entry, outs in judged.steps if entry.get("event") == "reconnect")
    assert reconnect == []  # the real sender re-sends nothing after an error [MQTT-4.4.0-2]


def test_the_topic_alias_counterexample_is_an_unknown_alias() -> None:
    trace = P.topic_alias_kept_fails.check().counterexample
    assert trace is not None and len(trace) == 5  # the shortest: set, lose, reconnect, use
    judged = replay(trace, topic_alias_maximum=1)
    assert [d.reason_code for d in judged.disconnects()] == [0x82]
    assert judged.disconnects()[0].rules == ("PP50-3.3.2-topic-alias-unknown",)


def test_topic_alias_is_proved_by_spacer_for_any_maximum() -> None:
    status, details = topic_alias(Flows50())
    assert status == "proved" and "Spacer" in details
    assert topic_alias(Flows50(mutations=P.ALIASES_KEPT))[0] == "refuted"


def test_a_reversed_refusal_makes_the_methods_deliver_in_different_orders() -> None:
    """The 5.0 difference: message 1 refused, its PUBREC 0x80 lost with the connection,
    message 2 accepted meanwhile, the re-sent message 1 accepted. Replayed, Method B has
    delivered 2 then 1, Method A only 1 so far (it delivers 2 on its PUBREL)."""
    trace = P.methods_differ_after_a_reversed_refusal.check().counterexample
    assert trace is not None
    assert any(e.get("refuse") for e in trace)
    payloads = {
        method: [p["payload_hex"] for p in replay(trace, method=method).deliveries()]  # type: ignore[typeddict-item]
        for method in Method
    }
    assert payloads[Method.B] == ["02", "01"] and payloads[Method.A] == ["01"]
