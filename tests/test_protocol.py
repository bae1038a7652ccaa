"""The QoS flow tables, their theorems, and the two engines that check them."""

from __future__ import annotations

import itertools

import pytest

from pubproof.model.diagrams import dot, mermaid, tables
from pubproof.model.editions import Edition
from pubproof.model.flows import (
    METHODS_BY_EDITION,
    RECEIVER_STATES,
    Method,
    ReceiverInput,
    SenderInput,
    SenderState,
    Step,
    Undefined,
    receiver_step,
    sender_step,
)
from pubproof.model.replay import replay
from pubproof.model.trace import is_publish
from pubproof.proofs import protocol
from pubproof.proofs.catalog import load

PROTOCOL = [t for t in load() if t.id.startswith("proto.")]


def test_every_state_and_input_pair_is_decided() -> None:
    """h2-style: each pair is a table entry or an explicit undefined case with a verdict."""
    pairs = 0
    for state, event in itertools.product(SenderState, SenderInput):
        step = sender_step(state, event)
        assert isinstance(step, Step | Undefined)
        assert step.rules, (state, event)
        pairs += 1
    for method in Method:
        for receiver_state, receiver_event in itertools.product(
            RECEIVER_STATES[method], ReceiverInput
        ):
            step = receiver_step(method, receiver_state, receiver_event)
            assert isinstance(step, Step | Undefined)
            assert step.rules
            pairs += 1
    assert pairs == 4 * 7 + 2 * 2 * 6


def test_31_describes_method_a_only() -> None:
    assert METHODS_BY_EDITION[Edition.V31] == (Method.A,)
    assert set(METHODS_BY_EDITION[Edition.V311]) == {Method.A, Method.B}


@pytest.mark.parametrize("theorem", PROTOCOL, ids=lambda t: t.id)
def test_theorem_reaches_its_expected_status_and_kills_its_mutants(theorem: object) -> None:
    from pubproof.proofs.registry import Theorem

    assert isinstance(theorem, Theorem)
    result = theorem.check()
    assert result.status == theorem.expected, result.details
    if theorem.expected == "refuted":
        assert result.counterexample, "a refutation comes with its trace"
    assert theorem.mutants
    for mutant in theorem.mutants:
        assert theorem.kills(mutant.check()), f"mutant {mutant.name!r} survives"


def test_the_reordering_counterexample_replays_against_the_real_tables() -> None:
    trace = protocol.exactly_once_fails_with_reordering.check().counterexample
    assert trace is not None
    delivered = replay(trace, method=Method.B).deliveries()
    assert len(delivered) == 2
    first, second = delivered
    assert is_publish(first) and is_publish(second)
    assert first["payload_hex"] == second["payload_hex"]  # the same message twice
    # every step of the trace is a packet or an event the replay understands
    assert all("dir" in step or "event" in step for step in trace)


@pytest.mark.parametrize("method", list(Method))
def test_a_replayed_counterexample_finds_both_ends_following_the_tables(method: Method) -> None:
    """The reordering counterexample breaks exactly once through the network alone: replayed
    with its app-publish events, the sending end awaits the PUBREC that comes back, so
    neither end is judged (without the app-publish the sender would tolerate a PUBREC for
    an identifier it does not hold)."""
    trace = protocol.exactly_once_fails_with_reordering.check().counterexample
    assert trace is not None
    assert any(step.get("event") == "app-publish" for step in trace)
    replayed = replay(trace, method=method)
    assert replayed.judgements() == []
    published = [outs for step, outs in replayed.steps if step.get("event") == "app-publish"]
    assert [[o.packet["packet_id"] for o in outs if o.packet] for outs in published] == [[1]]


def test_a_replayed_counterexample_names_the_reused_identifier() -> None:
    """The counterexample of a sender reusing an identifier before PUBCOMP: the replay
    judges the second app-publish itself [MQTT-2.3.1-2], before any packet shows it."""
    trace = protocol.exactly_once_fails_reusing_ids.check().counterexample
    assert trace is not None
    replayed = replay(trace, method=Method.B)
    first = next(
        (step, o) for step, outs in replayed.steps for o in outs
        if o.kind in ("violation", "tolerated")
    )  # fmt: skip
    step, judged = first
    assert step["event"] == "app-publish" and step["msg"] == 2
    assert judged.kind == "violation" and judged.rules == ("MQTT-2.3.1-2",)
    assert "AWAIT_PUBCOMP" in judged.note


def test_an_end_allocates_past_a_chosen_identifier() -> None:
    from pubproof.model.session import SessionModel

    end = SessionModel()
    sent = end.publish("a", b"1", 1, packet_id=7)
    assert [o.packet["packet_id"] for o in sent if o.packet] == [7]
    assert [o.packet["packet_id"] for o in end.publish("a", b"2", 1) if o.packet] == [8]
    again = end.publish("a", b"3", 2, packet_id=8)
    assert [o.kind for o in again] == ["violation", "send"]
    assert [i for i, _, _ in end.snapshot()["outgoing"]] == [7, 8]


def test_the_required_theorems_are_registered() -> None:
    ids = {t.id for t in PROTOCOL}
    assert {
        "proto.qos0-at-most-once",
        "proto.qos1-at-least-once",
        "proto.qos2-exactly-once-method-a",
        "proto.qos2-exactly-once-method-b",
        "proto.unique-packet-identifiers",
        "proto.pubrel-only-after-pubrec",
        "proto.methods-a-and-b-deliver-the-same-sequence",
        "proto.refute.exactly-once-with-reordering",
        "proto.refute.exactly-once-forgetting-on-pubrec",
        "proto.refute.exactly-once-reusing-ids-before-pubcomp",
        "proto.refute.at-least-once-without-retransmission",
    } <= ids


def test_diagrams_have_one_edge_per_table_entry() -> None:
    for name, table in tables().items():
        assert mermaid(table).count("-->") == len(table) + 1
        assert dot(table, name).count("->") == len(table)


@pytest.mark.parametrize("method", list(Method))
def test_resent_messages_keep_their_original_order(method: Method) -> None:
    """[MQTT-4.6.0-1]: re-sends go out in the original order, so three QoS 2 messages on two
    identifiers reach the application in publish order, over any number of losses."""
    from pubproof.model.explore import Environment, Explorer, quiescent_deliveries

    explorer = Explorer(Environment(qos=(2, 2, 2), disconnects=None, method=method))
    _, _, worlds = explorer.search({}, max_depth=None)
    assert quiescent_deliveries(explorer, worlds) == {(1, 2, 3)}


def test_a_clean_session_discards_the_session_state() -> None:
    """[MQTT-3.1.2-6] a clean session discards any previous session state: every table entry
    for a clean reconnect leads to FREE and sends nothing, a session model forgets its
    in-flight flows, and so a QoS 1 message can be lost (the explorer shows how)."""
    from pubproof.model.explore import Environment, Explorer, delivered_when_quiet
    from pubproof.model.flows import RECEIVER_STATES, ReceiverState
    from pubproof.model.session import SessionModel

    for state in SenderState:
        step = sender_step(state, SenderInput.CLEAN)
        assert isinstance(step, Step) and step.next is SenderState.FREE and not step.actions
        assert "MQTT-3.1.2-6" in step.rules
    for method in Method:
        for r_state in RECEIVER_STATES[method]:
            r_step = receiver_step(method, r_state, ReceiverInput.CLEAN)
            assert isinstance(r_step, Step) and r_step.next is ReceiverState.FREE
    end = SessionModel()
    end.publish("a", b"x", 1)
    end.publish("a", b"y", 2)
    assert end.reconnect(resume=False) == [] and end.snapshot()["outgoing"] == []
    resumed = SessionModel()
    resumed.publish("a", b"x", 1)
    assert [o.packet["dup"] for o in resumed.reconnect(resume=True) if o.packet] == [True]  # type: ignore[typeddict-item]
    explorer = Explorer(Environment(qos=(1,), clean_reconnect=True, method=Method.B))
    _, findings, _ = explorer.search({"delivered": delivered_when_quiet((1,))}, max_depth=12)
    assert findings and any(e.get("session") == "clean" for e in findings[0].trace)
