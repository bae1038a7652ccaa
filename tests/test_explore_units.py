"""pubproof explore without a peer: moves and plans, the failure classes shrinking keeps
apart, the verdicts (Method A's reading included), coverage, reproducers' programs and
the standalone replayer's pieces."""

from __future__ import annotations

import json
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any, cast

import pytest
from support.explore_evidence import (
    CONNACK,
    PUBACK,
    PUBCOMP,
    PUBREC,
    PUBREL,
    R311,
    TOKEN,
    V311,
    Evidence,
    T,
    ack,
    connect,
    publish,
    subscribe,
)

from pubproof.judge.findings import VIOLATION, Finding, Source
from pubproof.model.editions import Edition, resolve_readings
from pubproof.probe.check import distribution_findings
from pubproof.probe.evidence import Entry
from pubproof.probe.view import View
from pubproof.testing import replayer
from pubproof.testing.coverage import Coverage
from pubproof.testing.explore import candidates, polish
from pubproof.testing.judging import Judging
from pubproof.testing.machine import ExplorationFailure, Found, Run, failure_class, unspent_invalid
from pubproof.testing.moves import INVALID, Move, MoveKind, Plan, invalid_moves
from pubproof.testing.reproducer import program, token_of
from pubproof.testing.verdicts import Failure, Verdict, as_method_a, judge_example, key_of
from pubproof.testing.world import invalid_packet

V50 = Edition.V50


def subscribed_pair() -> Evidence:
    """c0 and c1 connected, c1 subscribed to T at QoS 0."""
    return (
        Evidence()
        .sent("c0", connect(f"pp{TOKEN}c001n0")).got("c0", CONNACK)
        .sent("c1", connect(f"pp{TOKEN}c001n1")).got("c1", CONNACK)
        .sent("c1", subscribe(1, T, 0)).got("c1", "9003000100")
    )  # fmt: skip


# -- moves and plans -------------------------------------------------------------------


def test_a_move_round_trips_through_json_and_says_what_it_does() -> None:
    move = Move(kind=MoveKind.PUBLISH, client=2, topic="a/b", qos=1, retain=True)
    assert Move.from_json(json.loads(json.dumps(move.to_json()))) == move
    assert move.to_json() == {"kind": "publish", "client": 2, "topic": "a/b", "qos": 1,
                              "retain": True}  # fmt: skip
    assert move.describe() == "c2 publish a/b QoS 1 retain"


@pytest.mark.parametrize(
    "fields",
    [
        {"kind": MoveKind.PUBLISH, "topic": "#"},  # a filter is no topic name
        {"kind": MoveKind.SUBSCRIBE, "topic": "a/c"},  # a name no filter of the set
        {"kind": MoveKind.INVALID, "what": "nonsense"},
        {"kind": MoveKind.STRAY, "what": "SUBACK"},
        {"kind": MoveKind.PUBLISH, "topic": "a", "qos": 3},
        {"kind": MoveKind.SUBSCRIBE, "topic": "a", "retain_handling": 3},
        {"kind": MoveKind.PUBLISH, "topic": "a", "empty": True},  # not retained
        {"kind": MoveKind.SUBSCRIBE, "topic": "a", "retain": True, "empty": True},
    ],
)
def test_a_move_refuses_fields_that_mean_nothing(fields: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Move(**fields)


def test_from_json_refuses_an_unknown_field_or_kind() -> None:
    with pytest.raises(ValueError, match="no field"):
        Move.from_json({"kind": "publish", "topic": "a", "colour": "red"})
    with pytest.raises(ValueError, match="kind"):
        Move.from_json({"kind": "dance"})


def test_the_plan_enables_moves_from_the_moves_alone() -> None:
    plan = Plan(V311, 2)
    assert plan.able(MoveKind.PUBLISH) == [] and plan.able(MoveKind.CONNECT) == [0, 1]
    plan.apply(Move(kind=MoveKind.CONNECT, client=0))
    assert plan.able(MoveKind.PUBLISH) == [0] and not plan.enabled(MoveKind.RESEND, 0)
    plan.apply(Move(kind=MoveKind.WITHHOLD, client=0))
    plan.apply(Move(kind=MoveKind.PUBLISH, client=0, topic="a", qos=0))
    assert not plan.enabled(MoveKind.RESEND, 0)  # a QoS 0 message has no flow to re-send
    plan.apply(Move(kind=MoveKind.PUBLISH, client=0, topic="a", qos=2))
    assert plan.enabled(MoveKind.RESEND, 0) and plan.enabled(MoveKind.ACKNOWLEDGE, 0)
    plan.apply(Move(kind=MoveKind.INVALID, client=0, what="publish-qos3"))
    assert not plan.states[0].connected and not plan.enabled(MoveKind.INVALID, 1)
    with pytest.raises(ValueError, match="not enabled"):
        plan.apply(Move(kind=MoveKind.PUBLISH, client=0, topic="a"))


def test_the_plan_allows_one_empty_retained_publish_per_topic() -> None:
    """Copies are told apart by topic name and payload: two empty payloads on one topic in
    an example would be alike."""
    plan = Plan(V311, 2)
    plan.apply(Move(kind=MoveKind.CONNECT, client=0))
    plan.apply(Move(kind=MoveKind.CONNECT, client=1))
    empty = Move(kind=MoveKind.PUBLISH, client=0, topic="a", retain=True, empty=True)
    assert empty.describe() == "c0 publish a QoS 0 retain empty payload"
    assert Move.from_json(json.loads(json.dumps(empty.to_json()))) == empty
    assert plan.can_empty("a")
    plan.apply(empty)
    assert not plan.can_empty("a") and plan.can_empty("b")
    with pytest.raises(ValueError, match="second empty"):
        plan.apply(Move(kind=MoveKind.PUBLISH, client=1, topic="a", retain=True, empty=True))


def test_the_plan_keeps_a_client_within_the_servers_receive_maximum() -> None:
    plan = Plan(V50, 1, receive_maximum=1)
    plan.apply(Move(kind=MoveKind.CONNECT, client=0))
    plan.apply(Move(kind=MoveKind.WITHHOLD, client=0))
    plan.apply(Move(kind=MoveKind.PUBLISH, client=0, topic="a", qos=1))
    assert not plan.enabled(MoveKind.PUBLISH, 0)


@pytest.mark.parametrize("edition", list(Edition))
def test_every_invalid_move_is_a_packet_the_model_rejects(edition: Edition) -> None:
    from pubproof.judge.close import expectation
    from pubproof.model.editions import Limits

    limits = Limits(topic_alias_maximum=0) if edition is V50 else None
    for name in invalid_moves(edition):
        data = invalid_packet(name, "pubproof/x/e1/a", edition, 0)
        verdict = expectation(data, edition, resolve_readings(edition, {}), limits)
        if name == "over-receive-maximum":
            assert verdict.failure is None  # the flow, not the bytes, makes it one too many
            continue
        if edition is Edition.V31 and name in ("puback-flags", "pubrel-flags"):
            continue  # MQTT 3.1 does not fix the flags of acknowledgements
        if edition is Edition.V31 and name == "topic-wildcard":
            assert verdict.alternatives  # MQTT 3.1 rejects it under a reading only
            continue
        assert verdict.failure is not None, (edition, name, INVALID[name].title)


# -- failures keep their rule through shrinking --------------------------------------------


def test_each_rule_fails_with_an_exception_class_of_its_own() -> None:
    one, again, other = failure_class("MQTT-3.3.5-1"), failure_class("MQTT-3.3.5-1"), (
        failure_class("MQTT-4.3.3-2"))  # fmt: skip
    assert one is again and one is not other
    assert issubclass(one, ExplorationFailure) and one.key == "MQTT-3.3.5-1"
    assert failure_class("close: no rule named").__name__ == "Fails_close_no_rule_named"


def test_a_findings_key_is_its_rules_or_its_judge() -> None:
    named = Finding(verdict="violation", rules=("A", "B"), message="m", source=Source.LINK)
    unnamed = Finding(verdict="violation", rules=(), message="m", source=Source.CLOSE)
    assert key_of(named) == "A B" and key_of(unnamed) == "close: no rule named"


# -- verdicts -------------------------------------------------------------------------------


def test_a_copy_above_the_granted_qos_fails_its_rule() -> None:
    evidence = (
        subscribed_pair()
        .sent("c0", publish(T, b"m", qos=1)).got("c0", ack(PUBACK, 1))
        .got("c1", publish(T, b"m", qos=1, packet_id=7)).sent("c1", ack(PUBACK, 7))
        .event("quiet", seconds=0.03)
    )  # fmt: skip
    verdict = judge_example(evidence.entries, V311, R311)
    assert "MQTT-3.8.4-6" in verdict.keys, verdict.failures


def test_the_same_copy_at_the_granted_qos_passes() -> None:
    evidence = (
        subscribed_pair()
        .sent("c0", publish(T, b"m", qos=1)).got("c0", ack(PUBACK, 1))
        .got("c1", publish(T, b"m", qos=0)).event("quiet", seconds=0.03)
    )  # fmt: skip
    assert judge_example(evidence.entries, V311, R311).failures == ()


def test_a_missing_copy_fails_only_once_the_example_has_ended() -> None:
    evidence = subscribed_pair().sent("c0", publish(T, b"m", qos=1)).got("c0", ack(PUBACK, 1))
    assert judge_example(evidence.entries, V311, R311, final=False).failures == ()
    evidence.event("quiet", seconds=0.03)
    assert "MQTT-4.5.0-1" in judge_example(evidence.entries, V311, R311).keys


def test_method_a_moves_each_pubrec_to_the_publishers_pubrel() -> None:
    evidence = (
        subscribed_pair()
        .sent("c0", publish(T, b"m", qos=2)).got("c0", ack(PUBREC, 1))
        .sent("c0", publish(T, b"m", qos=2) .replace("34", "3c", 1)).got("c0", ack(PUBREC, 1))
        .sent("c0", ack(PUBREL, 1)).got("c0", ack(PUBCOMP, 1))
        .sent("c0", publish(T, b"n", qos=2, packet_id=2)).got("c0", ack(PUBREC, 2))
    )  # fmt: skip
    moved = as_method_a(evidence.entries)
    kinds = [(e.get("type"), e.get("packet_id"), e.get("dir")) for e in moved[-7:]]
    assert kinds == [
        ("PUBLISH", 1, "to-broker"), ("PUBLISH", 1, "to-broker"),
        ("PUBREC", 1, "from-broker"), ("PUBREC", 1, "from-broker"),  # just before the PUBREL
        ("PUBREL", 1, "to-broker"), ("PUBCOMP", 1, "from-broker"),
        ("PUBLISH", 2, "to-broker"),  # its PUBREC left out: no PUBREL came
    ]  # fmt: skip


def old_retained_while_the_new_awaits_pubrel() -> Evidence:
    """c0 replaces the retained message at QoS 2 and holds its PUBREL; c1 subscribes and
    gets the old one: what a Method A server does (it owns the new one on PUBREL)."""
    return (
        Evidence()
        .sent("c0", connect(f"pp{TOKEN}c001n0")).got("c0", CONNACK)
        .sent("c0", publish(T, b"old", qos=1, retain=True)).got("c0", ack(PUBACK, 1))
        .sent("c0", publish(T, b"new", qos=2, packet_id=2, retain=True)).got("c0", ack(PUBREC, 2))
        .sent("c1", connect(f"pp{TOKEN}c001n1")).got("c1", CONNACK)
        .sent("c1", subscribe(1, T, 0)).got("c1", "9003000100")
        .got("c1", publish(T, b"old", retain=True)).event("quiet", seconds=0.03)
    )  # fmt: skip


def test_the_old_retained_message_while_the_new_awaits_pubrel_is_method_a() -> None:
    """The distribution judge alone (Method B) calls it a violation; the explorer must
    not."""
    evidence = old_retained_while_the_new_awaits_pubrel()
    verdict = judge_example(evidence.entries, V311, R311)
    assert verdict.failures == ()
    tolerated = [f for f in verdict.findings if "Method A" in f.message]
    assert tolerated and all(f.verdict == "tolerated" for f in tolerated)


class _MethodBOnly(Judging):
    """Mutant: the Method A reading is the evidence as it is (the PUBRECs not held)."""

    def _method_a_keys(self, entries: Sequence[Entry]) -> set[str]:
        found = distribution_findings(View(entries, self.edition, self.readings))
        return {key_of(f) for f in found if f.verdict == VIOLATION}


@pytest.mark.parametrize("mutant", [None, _MethodBOnly])
def test_the_method_a_reading_while_the_example_runs(mutant: type[Judging] | None) -> None:
    """Judged after every entry, as the explorer does, the Method A reading keeps the
    retained message's case from failing, as the whole-example judging does; the mutant
    that reads the evidence as it is fails it."""
    entries = old_retained_while_the_new_awaits_pubrel().entries
    judging = (mutant or Judging)(V311, R311)
    failed: list[Failure] = []
    for end in range(1, len(entries) + 1):
        new = judging.verdict(entries[:end]).failures
        assert mutant or new == judge_example(entries[:end], V311, R311, final=False).failures
        failed += new
    assert bool(failed) is (mutant is not None)


# -- coverage -------------------------------------------------------------------------------


def test_coverage_counts_each_end_of_a_qos2_flow_and_a_resumed_session() -> None:
    evidence = (
        subscribed_pair()
        .sent("c0", publish(T, b"m", qos=2)).got("c0", ack(PUBREC, 1))
        .sent("c0", ack(PUBREL, 1)).got("c0", ack(PUBCOMP, 1))
        .event("dropped", "c0")
        .sent("c0", connect(f"pp{TOKEN}c001n0", clean=False)).got("c0", "20020000")
    )  # fmt: skip
    coverage = Coverage(V311)
    coverage.feed(evidence.entries)
    rows = {(r.table, r.state, r.input): r for r in coverage.table()}
    assert rows["receiver", "FREE", "PUBLISH_QOS2"].broker == 1  # the broker received it
    assert rows["receiver", "ID_HELD", "PUBREL"].broker == 1
    assert rows["sender", "FREE", "PUBLISH_QOS2"].client == 1  # c0 sent it
    assert rows["sender", "AWAIT_PUBREC", "PUBREC"].client == 1
    assert rows["sender", "AWAIT_PUBCOMP", "PUBCOMP"].client == 1
    # the second CONNECT did not keep the first session: CLEAN at FREE, at both ends
    assert rows["sender", "FREE", "CLEAN"].broker == 1
    assert rows["receiver", "FREE", "CLEAN"].client == 1
    reached = {(r.table, r.state, r.input) for r in coverage.table() if r.broker}
    never = {(r.table, r.state, r.input) for r, _ in coverage.unreached()}
    assert reached.isdisjoint(never) and len(reached) + len(never) == len(coverage.table())


def test_coverage_names_the_distribution_rules_the_judge_named() -> None:
    evidence = (
        subscribed_pair()
        .sent("c0", publish(T, b"m", qos=1)).got("c0", ack(PUBACK, 1))
        .got("c1", publish(T, b"m")).event("quiet", seconds=0.03)
    )  # fmt: skip
    coverage = Coverage(V311)
    coverage.observe(None, evidence.entries, judge_example(evidence.entries, V311, R311))
    named = dict(coverage.distribution_rules())
    assert named["MQTT-3.8.4-6"] >= 1 and named["MQTT-4.5.0-1"] >= 1


def test_a_silence_the_link_judge_names_is_one_failure_not_two() -> None:
    """A PUBREL of an identifier nobody uses, and no PUBCOMP: the link judge names the rule
    (MQTT-4.3.3-2) and the probe's wait ran out; one failure, else a run finds the same
    silence again under "probe: no rule named". A wait the judges name nothing for stays."""
    silent = (
        Evidence().sent("c2", connect(f"pp{TOKEN}c001n2")).got("c2", CONNACK)
        .sent("c2", ack(PUBREL, 4242))
        .event("timeout", "c2", seconds=1.0, waiting_for="PUBCOMP 4242")
        .sent("c2", "c000").got("c2", "d000").event("quiet", seconds=0.03)
    )  # fmt: skip
    verdict = judge_example(silent.entries, V311, R311)
    assert verdict.keys == ("MQTT-4.3.3-2",), verdict.keys
    assert any(f.source == Source.PROBE for f in verdict.findings)  # found, not a failure
    other = (
        Evidence().sent("c0", connect(f"pp{TOKEN}c001n0")).got("c0", CONNACK)
        .event("timeout", "c0", seconds=1.0, waiting_for="SUBACK 1")
        .sent("c0", "c000").got("c0", "d000").event("quiet", seconds=0.03)
    )  # fmt: skip
    assert judge_example(other.entries, V311, R311).keys == ("probe: no rule named",)


# -- reproducers ----------------------------------------------------------------------------


def test_a_program_opens_before_connect_waits_for_what_came_and_answers_by_place() -> None:
    evidence = (
        subscribed_pair()
        .event("step", None, n=0, move={"kind": "publish", "client": 0, "topic": "a", "qos": 1})
        .sent("c0", publish(T, b"m", qos=1)).got("c0", ack(PUBACK, 1))
        .got("c1", publish(T, b"m", qos=1, packet_id=9)).sent("c1", ack(PUBACK, 9))
        .event("closed", "c1")
    )  # fmt: skip
    made = program(evidence.entries)
    assert made[0] == ["open", "c0"]
    c1_connect = made.index(["open", "c1"])
    assert made[c1_connect + 1] == ["expect", {"c0": 1}]  # c0's CONNACK came first
    assert made[-2:] == [["send", "c1", ack(PUBACK, 9), 0, False], ["closed", "c1"]]
    assert ["expect", {"c0": 2, "c1": 3}] in made  # before c1's PUBACK: what had come
    assert ["step", 0, "c0 publish a QoS 1"] in made
    assert token_of(evidence.entries) == TOKEN


def test_a_program_drops_a_link_only_after_what_had_come_before_the_drop() -> None:
    """A copy the broker sent before a client dropped its link is owed again when the
    session resumes (with DUP), one it had not sent is owed for the first time: the
    replay waits for what had come before it drops, or it races the broker."""
    evidence = (
        subscribed_pair()
        .sent("c0", publish(T, b"m", qos=1)).got("c0", ack(PUBACK, 1))
        .got("c1", publish(T, b"m", qos=1, packet_id=9)).event("dropped", "c1")
    )  # fmt: skip
    made = program(evidence.entries)
    assert made[-2:] == [["expect", {"c0": 2, "c1": 3}], ["drop", "c1"]]
    again = program([*evidence.entries, {"event": "dropped", "client": "c0"}])
    assert again[-1] == ["drop", "c0"] and again[-2] == ["drop", "c1"]  # nothing new came


def test_the_replayers_pieces_read_packets_as_the_probe_does() -> None:
    buffer = bytearray(bytes.fromhex(publish(T, b"m", qos=2, packet_id=513) + ack(PUBREL, 7)))
    first, second = replayer.frame(buffer), replayer.frame(buffer)
    assert first is not None and second is not None and replayer.frame(buffer) is None
    assert replayer.numbered(first) == 513 and replayer.numbered(second) == 7
    assert replayer.summary(first, TOKEN) == "PUBLISH QoS 2 pubproof/{run}/e1/a 6d"
    assert replayer.summary(second, TOKEN) == "PUBREL "  # the identifier is the broker's
    partial = bytearray(first[:-1])
    assert replayer.frame(partial) is None and len(partial) == len(first) - 1


def test_a_long_wait_follows_only_a_message_that_may_expire_in_it() -> None:
    """MQTT 5.0: the wait rule's long wait (a Message Expiry Interval of 1 s past) is drawn
    only when a message that may expire in it, and that the server may hold that long,
    was published since the last long wait; else the wait is a moment (a second long wait
    in a row expires nothing more; a message sent on at once expires nowhere)."""
    from pubproof.probe.target import Target
    from pubproof.testing.machine import LONG_WAIT, SHORT_WAIT, Exploration, machine_class
    from pubproof.testing.world import Example

    base = Example(target=Target.parse("mqtt://127.0.0.1:1"), edition=V50,
                   readings=resolve_readings(V50, {}), run_id=TOKEN, number=0)  # fmt: skip
    machine: Any = machine_class(Exploration.of(base, budget=0.0))()
    assert machine.world is None  # past the budget: the moves are the plan's alone
    made = _recording(machine)

    def waited(*expiries: int, retain: bool = True, qos: int = 0) -> float:
        for expiry in expiries:
            machine.move(Move(kind=MoveKind.PUBLISH, topic="a", expiry=expiry, retain=retain,
                              qos=qos, client=0))  # fmt: skip
        machine.wait(long=True)
        return float(made[-1].seconds)

    for client in range(4):  # c1's session ends with its connection all the same (5.0)
        machine.move(Move(kind=MoveKind.CONNECT, client=client, clean=client != 1))
    assert waited() == SHORT_WAIT  # nothing published that may expire
    assert waited(1) == LONG_WAIT  # a retained message
    assert waited() == SHORT_WAIT, "a second long wait in a row"
    assert waited(60) == SHORT_WAIT, "a minute's interval does not run out in it"
    assert waited(60, 1, 0) == LONG_WAIT
    machine.move(Move(kind=MoveKind.PUBLISH, topic="a", expiry=1, retain=True))
    machine.wait(long=False)
    assert made[-1].seconds == SHORT_WAIT and waited() == LONG_WAIT, "a short wait expires none"
    # not retained: held only where a copy waits
    assert waited(1, retain=False) == SHORT_WAIT, "no subscriber: nothing held"
    machine.move(Move(kind=MoveKind.SUBSCRIBE, client=1, topic="a/#", qos=1))
    assert waited(1, retain=False) == SHORT_WAIT, "a subscriber that answers gets it at once"
    machine.move(Move(kind=MoveKind.WITHHOLD, client=1))
    assert waited(1, retain=False) == LONG_WAIT, "copies past the Receive Maximum wait"
    machine.move(Move(kind=MoveKind.ACKNOWLEDGE, client=1))
    machine.move(Move(kind=MoveKind.DISCONNECT, client=1))
    assert waited(1, retain=False) == SHORT_WAIT, "a session that ended with its connection"
    machine.move(Move(kind=MoveKind.CONNECT, client=1, clean=False, session_expiry=60))
    machine.move(Move(kind=MoveKind.SUBSCRIBE, client=1, topic="a", qos=0))
    machine.move(Move(kind=MoveKind.DROP, client=1))
    assert waited(1, retain=False) == LONG_WAIT, "queued for a session whose client is away"
    machine.move(Move(kind=MoveKind.UNSUBSCRIBE, client=2, topic="a"))  # no matter
    machine.move(Move(kind=MoveKind.WITHHOLD, client=0))
    machine.move(Move(kind=MoveKind.CONNECT, client=1, clean=True))
    assert waited(1, retain=False, qos=1) == SHORT_WAIT, "QoS 1: owned and sent at once"
    assert waited(1, retain=False, qos=2) == LONG_WAIT, "QoS 2: held until the PUBREL"


def test_the_plan_follows_the_copies_a_client_holds_back_to_the_servers_state() -> None:
    """A withholding subscriber at QoS 2 holds a QoS 2 copy back (the server's flow awaits
    PUBREC); an acknowledgement that keeps holding back answers it and keeps the PUBREL
    (the flow awaits PUBCOMP); a QoS 1 copy, or a QoS 1 subscription, is neither."""
    plan = Plan(V311, 2)
    for move in (
        Move(kind=MoveKind.CONNECT, client=0), Move(kind=MoveKind.CONNECT, client=1),
        Move(kind=MoveKind.SUBSCRIBE, client=1, topic="a/#", qos=2),
        Move(kind=MoveKind.SUBSCRIBE, client=1, topic="b", qos=1),
        Move(kind=MoveKind.WITHHOLD, client=1),
        Move(kind=MoveKind.PUBLISH, client=0, topic="a", qos=1),
        Move(kind=MoveKind.PUBLISH, client=0, topic="b", qos=2),
    ):  # fmt: skip
        plan.apply(move)
    assert plan.states[1].awaiting() == set() and plan.states[1].copies == 2
    plan.apply(Move(kind=MoveKind.PUBLISH, client=0, topic="a/b", qos=2))
    assert plan.states[1].awaiting() == {"AWAIT_PUBREC"}
    plan.apply(Move(kind=MoveKind.ACKNOWLEDGE, client=1, keep=True))
    assert plan.states[1].awaiting() == {"AWAIT_PUBCOMP"}
    plan.apply(Move(kind=MoveKind.PUBLISH, client=0, topic="a", qos=2))
    assert plan.states[1].awaiting() == {"AWAIT_PUBREC", "AWAIT_PUBCOMP"}
    assert plan.states[0].awaiting() == set()
    plan.apply(Move(kind=MoveKind.ACKNOWLEDGE, client=1))
    assert plan.states[1].awaiting() == set()


def test_coverage_leads_to_the_entries_not_reached_where_a_copy_is_held_back() -> None:
    """The wanted entries are the broker's sender entries at AWAIT_PUBREC or AWAIT_PUBCOMP
    not reached yet whose input a client makes (a new connection, a wrong answer); while
    a client holds such a copy back, ``reconnect`` ends its connection and connects again
    as the wanted entry needs (RESUME only for a session that outlives the connection),
    and ``misanswer_wanted`` sends the wrong answer a wanted entry names."""

    from pubproof.probe.target import Target
    from pubproof.testing.machine import Exploration, machine_class, wanted
    from pubproof.testing.world import Example

    coverage = Coverage(V311)
    every = wanted(coverage)
    assert ("AWAIT_PUBCOMP", "RESUME") in every and ("AWAIT_PUBREC", "PUBACK") in every
    assert all(s in ("AWAIT_PUBREC", "AWAIT_PUBCOMP", "ID_HELD") for s, _ in every)
    assert {("ID_HELD", "RESUME"), ("ID_HELD", "CLEAN")} <= every
    assert ("ID_HELD", "PUBREL") not in every and ("FREE", "RESUME") not in every
    assert ("AWAIT_PUBACK", "RESUME") not in every and ("AWAIT_PUBREC", "PUBREC") not in every
    assert wanted(Coverage(V311, judged="client")) == frozenset(), "a client's run: none"

    base = Example(target=Target.parse("mqtt://127.0.0.1:1"), edition=V311, readings=R311,
                   run_id=TOKEN, number=0, clients=2)  # fmt: skip
    run = Exploration.of(base, budget=0.0)
    run.wanted = frozenset({("AWAIT_PUBCOMP", "RESUME"), ("AWAIT_PUBCOMP", "PUBACK")})
    machine: Any = machine_class(run)()
    made = _recording(machine)
    for step in (
        Move(kind=MoveKind.CONNECT, client=0),
        Move(kind=MoveKind.CONNECT, client=1, clean=False),
        Move(kind=MoveKind.SUBSCRIBE, client=1, topic="#", qos=2),
        Move(kind=MoveKind.WITHHOLD, client=1),
        Move(kind=MoveKind.PUBLISH, client=0, topic="a", qos=2),
    ):  # fmt: skip
        machine.move(step)
    assert machine.reconnecting() == [] and machine.misanswering() == [], "awaits PUBREC"
    wanted_before = run.wanted
    run.wanted = frozenset({("AWAIT_PUBREC", "CLEAN")})
    assert machine.keeping() == [], "no entry wanted at AWAIT_PUBCOMP"
    run.wanted = wanted_before
    assert machine.keeping() == [1], "toward AWAIT_PUBCOMP, where entries are wanted"
    del made[:]
    machine.acknowledge_wanted(_Chosen())
    assert made == [Move(kind=MoveKind.ACKNOWLEDGE, client=1, keep=True)]
    assert machine.keeping() == [], "nothing awaits PUBREC now"
    assert machine.reconnecting() == [1]
    assert machine.misanswering() == [1]
    del made[:]
    machine.misanswer_wanted(_Chosen())
    assert made == [Move(kind=MoveKind.MISANSWER, client=1, what="PUBACK")]
    assert machine.reconnecting() == [] and machine.misanswering() == [], (
        "after a wrong answer the plan does not know what the server's flow awaits"
    )
    machine.plan.states[1].releases = 1  # as if the copy still awaited PUBCOMP
    machine.reconnect(_Chosen(), lose=True)
    assert made[1:] == [Move(kind=MoveKind.DROP, client=1),
                        Move(kind=MoveKind.CONNECT, client=1, clean=False)]  # fmt: skip
    assert machine.reconnecting() == [], "the new connection holds nothing back"
    # a session that ends with its connection cannot resume: CLEAN, when wanted
    for step in (
        Move(kind=MoveKind.DISCONNECT, client=1), Move(kind=MoveKind.CONNECT, client=1),
        Move(kind=MoveKind.SUBSCRIBE, client=1, topic="a", qos=2),
        Move(kind=MoveKind.WITHHOLD, client=1),
        Move(kind=MoveKind.PUBLISH, client=0, topic="a", qos=2),
        Move(kind=MoveKind.ACKNOWLEDGE, client=1, keep=True),
    ):  # fmt: skip
        machine.move(step)
    assert machine.reconnecting() == []
    run.wanted = frozenset({("AWAIT_PUBCOMP", "RESUME"), ("AWAIT_PUBCOMP", "CLEAN")})
    assert machine.reconnecting() == [1]
    del made[:]
    machine.reconnect(_Chosen(), lose=False)
    assert made == [Move(kind=MoveKind.DISCONNECT, client=1),
                    Move(kind=MoveKind.CONNECT, client=1, clean=True)]  # fmt: skip
    # a publisher holding back the PUBREL of its QoS 2 message: the receiver's ID_HELD
    run.wanted = frozenset({("ID_HELD", "CLEAN")})
    assert machine.keeping() == [] and machine.reconnecting() == []
    machine.move(Move(kind=MoveKind.WITHHOLD, client=0))
    machine.move(Move(kind=MoveKind.PUBLISH, client=0, topic="b", qos=1))
    assert machine.reconnecting() == [], "QoS 1: no identifier held until a PUBREL"
    machine.move(Move(kind=MoveKind.PUBLISH, client=0, topic="b", qos=2))
    assert machine.reconnecting() == [0]
    run.wanted = frozenset({("ID_HELD", "RESUME")})
    assert machine.reconnecting() == [], "its session ends with the connection: no RESUME"
    run.wanted = frozenset({("ID_HELD", "CLEAN")})
    machine.move(Move(kind=MoveKind.ACKNOWLEDGE, client=0, keep=True))
    assert machine.reconnecting() == [], "the PUBREL sent frees the identifier"


class _Chosen:
    """Draws for a machine's rules called by hand: ``choices`` by label, else the first
    element of a ``sampled_from``, else a connection's default options."""

    def __init__(self, **choices: Any) -> None:
        self.choices = choices

    def draw(self, strategy: Any, label: str = "") -> Any:
        if label.replace(" ", "_") in self.choices:
            return self.choices[label.replace(" ", "_")]
        elements = getattr(strategy, "elements", None)
        return elements[0] if elements is not None else {}


def test_the_wanted_entries_at_held_flows_are_reached_in_fewer_draws() -> None:
    """Coverage-guided, and not left to three rules in a row: an example that opens with the
    catcher may also open with a QoS 2 copy it holds back, while an entry at a held flow is
    wanted; a client that lets its session answer a held QoS 2 copy may make at once the
    wrong answer wanted at AWAIT_PUBCOMP; and a wanted wrong answer is made in any example
    of a run that allows invalid moves at all (never with ``--invalid 0``)."""
    from pubproof.probe.target import Target
    from pubproof.testing.machine import Exploration, machine_class
    from pubproof.testing.world import Example

    base = Example(target=Target.parse("mqtt://127.0.0.1:1"), edition=V311, readings=R311,
                   run_id=TOKEN, number=0, clients=2)  # fmt: skip
    held = Move(kind=MoveKind.PUBLISH, client=0, topic="a", qos=2)
    opened = []
    for wanted in ({("AWAIT_PUBCOMP", "PUBACK")}, {("ID_HELD", "CLEAN")}, set()):
        run = Exploration.of(base, budget=0.0, invalid_percent=20)
        run.wanted = frozenset(wanted)
        machine: Any = machine_class(run)()
        made = _recording(machine)
        machine.begin(gate=99, data=_Chosen(catcher=0, held_copy=True))
        opened.append(made[-1] == held)
        assert machine.wanted_wrong_ok and not machine.invalid_ok
    assert opened == [True, False, False]
    run = Exploration.of(base, budget=0.0, invalid_percent=20)
    run.wanted = frozenset({("AWAIT_PUBCOMP", "PUBACK"), ("AWAIT_PUBCOMP", "PUBREC")})
    for percent, at_once in ((20, True), (0, False)):
        run.invalid_percent = percent
        machine = machine_class(run)()
        made = _recording(machine)
        machine.begin(gate=99, data=_Chosen(catcher=0, held_copy=True))
        assert machine.keeping() == [1]
        del made[:]
        machine.acknowledge_wanted(_Chosen(misanswer_now=True))
        wrong = [Move(kind=MoveKind.MISANSWER, client=1, what="PUBACK")] if at_once else []
        assert made == [Move(kind=MoveKind.ACKNOWLEDGE, client=1, keep=True), *wrong]
        assert machine.wanted_wrong_ok is at_once  # --invalid 0: misanswer_wanted is off


def test_each_batch_wants_the_entries_the_run_has_not_reached() -> None:
    """:func:`explore` gives each batch the wanted entries as the run's coverage stands at
    its start (an entry reached is wanted no more)."""
    from hypothesis.stateful import RuleBasedStateMachine, rule

    from pubproof.probe.target import Target
    from pubproof.testing.explore import explore
    from pubproof.testing.machine import Exploration
    from pubproof.testing.world import Example

    coverage = Coverage(V311)
    coverage.counts["broker", "sender", "AWAIT_PUBCOMP", "RESUME"] = 1
    base = Example(target=Target.parse("mqtt://127.0.0.1:1"), edition=V311, readings=R311,
                   run_id=TOKEN, number=0)  # fmt: skip
    run = Exploration.of(base, most_moves=1)
    seen: list[frozenset[tuple[str, str]]] = []

    class Nothing(RuleBasedStateMachine):
        @rule()
        def nothing(self) -> None:
            run.moves += 1

    def machine(run: Any) -> type[RuleBasedStateMachine]:
        seen.append(run.wanted)
        return Nothing

    explore(run, machine=machine, coverage=coverage, batch=1, moves_per_example=1)
    assert len(seen) == 1 and ("AWAIT_PUBCOMP", "CLEAN") in seen[0], seen
    assert ("AWAIT_PUBCOMP", "RESUME") not in seen[0]


def _idle_world(quiet: float) -> Any:
    """An example none of whose clients connected (nothing to read: the quiet window is
    the clock's alone)."""
    from pubproof.probe.target import Target
    from pubproof.probe.timing import Timing
    from pubproof.testing.world import Example, World

    timing = Timing(check=60.0, answer=1.0, quiet=quiet, liveness=0.5)
    return World(Example(target=Target.parse("mqtt://127.0.0.1:1"), edition=V311,
                         readings=R311, run_id=TOKEN, number=1, timing=timing))  # fmt: skip


def test_the_last_quiet_window_ends_early_only_when_the_judges_find_nothing() -> None:
    """With a test of the evidence (``settled``), the last quiet window ends once the broker
    has been silent for a share of it and the test passes the evidence, a ``quiet`` event
    recorded first (what was owed before it counts as missing); when the test fails, the
    window is listened out in full (a second ``quiet``) before the judges rule. Without
    a test (a replay, a polish), the whole window, once."""
    import time

    from pubproof.testing.world import QUIET_SHARE

    window = 0.3
    seen: list[list[Entry]] = []

    def quiets(entries: list[Entry]) -> list[float]:
        return [e["seconds"] for e in entries if e.get("event") == "quiet"]

    def passes(entries: list[Entry]) -> bool:
        seen.append(list(entries))
        return True

    started = time.monotonic()
    early = quiets(_idle_world(window).end(passes))
    took = time.monotonic() - started
    assert len(early) == 1 and early[0] < window / 2 and took < window / 2, (early, took)
    assert early[0] >= window * QUIET_SHARE - 0.002
    assert len(seen) == 1 and seen[0][-1]["event"] == "quiet", "judged after the quiet"

    started = time.monotonic()
    full = quiets(_idle_world(window).end(lambda entries: False))
    assert len(full) == 2 and sum(full) >= window - 0.002, full
    assert time.monotonic() - started >= window
    assert quiets(_idle_world(window).end()) == [window]


# -- polish: the shrunk failure made smaller -----------------------------------------------


def _resumed(moves: Sequence[Move]) -> bool:
    """The fake broker's fault: c1 connects keeping its session, disconnects, connects
    keeping it again (its moves in that order, others' in between)."""
    want = [(MoveKind.CONNECT, False), (MoveKind.DISCONNECT, True), (MoveKind.CONNECT, False)]
    for move in moves:
        if want and move.client == 1 and (move.kind, move.clean) == want[0]:
            want.pop(0)
    return not want


class _FakeRun:
    """A run whose replay needs no broker: the moves fail ``MQTT-3.2.2-2`` when
    :func:`_resumed` says so; it counts its replays."""

    def __init__(self) -> None:
        self.replays = 0
        self.failure = Failure(key="MQTT-3.2.2-2", rules=("MQTT-3.2.2-2",), verdict=VIOLATION,
                               source="link", message="Session Present 0")  # fmt: skip

    def replay(self, moves: Sequence[Move]) -> Any:
        plan = Plan(V311, 4)
        try:
            for move in moves:
                plan.apply(move)
        except ValueError:
            return None
        self.replays += 1
        failures = (self.failure,) if _resumed(moves) else ()
        verdict = Verdict(findings=(), failures=failures, errors=(), broker_alive=True)
        return SimpleNamespace(steps=list(moves), number=self.replays), [], verdict


def test_polish_takes_out_a_clients_moves_together_down_to_the_fault() -> None:
    """18 moves, 3 of them the fault (the last three of c1's): the other clients' moves
    and c1's first connection (its CONNECT and DISCONNECT: neither goes alone, the rest
    would not be a plan) all go, which taking out one move at a time cannot do."""
    c, d = MoveKind.CONNECT, MoveKind.DISCONNECT
    moves = [
        Move(kind=c, client=0), Move(kind=c, client=1), Move(kind=c, client=2),
        Move(kind=c, client=3), Move(kind=MoveKind.SUBSCRIBE, client=0, topic="a"),
        Move(kind=MoveKind.PUBLISH, client=2, topic="a", qos=1),
        Move(kind=MoveKind.PUBLISH, client=1, topic="b"), Move(kind=d, client=1),
        Move(kind=d, client=0), Move(kind=c, client=1, clean=False), Move(kind=d, client=1),
        Move(kind=MoveKind.PUBLISH, client=3, topic="a"), Move(kind=c, client=0),
        Move(kind=MoveKind.PUBLISH, client=2, topic="b", qos=2),
        Move(kind=c, client=1, clean=False), Move(kind=MoveKind.PUBLISH, client=1, topic="a"),
        Move(kind=MoveKind.WAIT), Move(kind=d, client=3),
    ]  # fmt: skip
    run = _FakeRun()
    found = Found(failure=run.failure, moves=tuple(moves), entries=(), example=1, seconds=0.0)
    polished = polish(cast(Run, run), found)
    assert [(m.kind, m.client, m.clean) for m in polished.moves] == [
        (c, 1, False), (d, 1, True), (c, 1, False)
    ]  # fmt: skip
    assert run.replays < 60, run.replays


def test_the_candidates_start_with_the_skipped_moves_and_end_one_at_a_time() -> None:
    moves = [Move(kind=MoveKind.CONNECT, client=n) for n in range(4)]
    tried = list(candidates(moves, {2}))
    assert tried[0] == (moves[0], moves[1], moves[3])
    singles = [t for t in tried if len(t) == 3]
    assert tried[-4:] == [tuple(m for m in moves if m is not gone) for gone in moves[::-1]]
    assert len(singles) >= 4


def test_a_publish_with_duplicates_is_a_withholding_publishers_at_qos_1_or_2() -> None:
    """The duplicates sent at once (the matrix's ``qos2.duplicates-before-pubrel``, as a
    move): only of a PUBLISH at QoS 1 or 2, by a client that holds back its answers."""
    burst = Move(kind=MoveKind.PUBLISH, client=0, topic="a", qos=2, duplicates=3)
    assert burst.describe() == "c0 publish a QoS 2 and 3 duplicates at once"
    assert Move.from_json(burst.to_json()) == burst
    for qos, duplicates in ((0, 3), (2, 4)):
        with pytest.raises(ValueError, match="duplicates"):
            Move(kind=MoveKind.PUBLISH, topic="a", qos=qos, duplicates=duplicates)
    plan = Plan(V311, 1)
    plan.apply(Move(kind=MoveKind.CONNECT))
    with pytest.raises(ValueError, match="answers at once"):
        plan.apply(burst)
    plan.apply(Move(kind=MoveKind.WITHHOLD))
    plan.apply(burst)
    assert plan.states[0].unacknowledged == 1


def test_a_batch_draws_the_invalid_moves_not_spent_yet() -> None:
    every = invalid_moves(V311)
    assert unspent_invalid(V311, set()) == every
    assert unspent_invalid(V311, {every[0]}) == every[1:]
    assert unspent_invalid(V311, set(every)) == every


def test_failures_of_one_key_after_different_faults_are_told_apart() -> None:
    """Keeping the connection open after a topic name with a wildcard and after packet
    identifier 0 both fail MQTT-4.8.0-1: the exploration reports each (its id names the
    fault), so a known one does not hide the other."""

    def kept_open(*provoked: str) -> Failure:
        return Failure(key="MQTT-4.8.0-1", rules=("MQTT-4.8.0-1",), verdict=VIOLATION,
                       source="close", message="kept open", provoked=provoked)  # fmt: skip

    wildcard, zero, plain = kept_open("MQTT-3.3.2-2"), kept_open("MQTT-2.3.1-1"), kept_open()
    assert wildcard.id == "MQTT-4.8.0-1 after MQTT-3.3.2-2" and plain.id == "MQTT-4.8.0-1"
    assert wildcard.to_json()["provoked"] == ["MQTT-3.3.2-2"] and "provoked" not in plain.to_json()
    verdict = Verdict(findings=(), failures=(zero, wildcard), errors=(), broker_alive=True)
    assert verdict.first(skip=(zero.id,)) == wildcard
    assert verdict.keys == ("MQTT-4.8.0-1",)  # what a replay asks still fails


def _recording(machine: Any) -> list[Move]:
    """The moves ``machine`` makes from now on, recorded as it makes them."""
    made: list[Move] = []
    make = machine.move

    def recorded(move: Move) -> None:
        made.append(move)
        make(move)

    machine.move = recorded
    return made
