"""pubproof explore's wrong answers (MISANSWER) and the client that keeps holding back:
the table of wrong answers read from the model, the moves and plans, the close judge that
does not charge the broker with the client's own fault, coverage, and reproducers that
carry the fault; a live example against mosquitto is in test_explore_live."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis.stateful import RULE_MARKER
from support.explore_evidence import (
    CONNACK,
    PUBACK,
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

from pubproof.judge.findings import TOLERATED, VIOLATION
from pubproof.model import flows as f3
from pubproof.model import flows50 as f5
from pubproof.model.editions import Edition
from pubproof.model.flows import SenderState, Undefined
from pubproof.probe.check import Closes, close_findings
from pubproof.probe.view import View
from pubproof.testing import replayer
from pubproof.testing.answers import COPIES, answers, misanswers, wrong_at
from pubproof.testing.coverage import Coverage
from pubproof.testing.moves import Move, MoveKind, Plan
from pubproof.testing.reproducer import program
from pubproof.testing.verdicts import judge_example

V50 = Edition.V50
WRONG = "AWAIT_PUBACK PUBREC"  # a PUBREC for a QoS 1 copy


# -- the table --------------------------------------------------------------------------------


def test_the_wrong_answers_are_every_acknowledgement_but_the_sessions_own() -> None:
    assert set(misanswers(V311)) == {
        "AWAIT_PUBACK PUBREC", "AWAIT_PUBACK PUBCOMP", "AWAIT_PUBREC PUBACK",
        "AWAIT_PUBREC PUBCOMP", "AWAIT_PUBCOMP PUBACK", "AWAIT_PUBCOMP PUBREC",
    }  # fmt: skip
    v50 = misanswers(V50)
    assert len(v50) == 3 * 6 - 3  # six acknowledgement inputs at three states, less the own
    for own in ("AWAIT_PUBACK PUBACK_OK", "AWAIT_PUBREC PUBREC_OK", "AWAIT_PUBCOMP PUBCOMP_OK"):
        assert own not in v50
    assert v50["AWAIT_PUBACK PUBACK_ERROR"].packet(7) == bytes.fromhex("4003000780")
    assert v50["AWAIT_PUBCOMP PUBCOMP_NOT_FOUND"].packet(7) == bytes.fromhex("7003000792")
    assert misanswers(V311)["AWAIT_PUBREC PUBACK"].packet(7) == bytes.fromhex("40020007")


@pytest.mark.parametrize("edition", [V311, V50])
def test_a_wrong_answer_breaks_the_clients_rules_exactly_where_the_table_leaves_it_undefined(
    edition: Edition,
) -> None:
    for answer in misanswers(edition).values():
        state = SenderState[answer.awaiting]
        inputs: Any = f5.SenderInput50 if edition is V50 else f3.SenderInput
        step = (f5.sender_step50 if edition is V50 else f3.sender_step)(state, inputs[answer.input])
        undefined = isinstance(step, Undefined)
        assert (answer.verdict == "defined") is not undefined
        assert bool(answer.breaks) is undefined, answer
    # the QoS 1 receiver's rule, 3.1.1 and 5.0 numbering
    assert "MQTT-4.3.2-2" in misanswers(V311)[WRONG].breaks
    assert "MQTT-4.3.2-4" in misanswers(V50)["AWAIT_PUBACK PUBREC_OK"].breaks
    assert set(COPIES) == {s.name for s in SenderState} - {"FREE"}


# -- moves and plans ------------------------------------------------------------------------


def test_a_wrong_answer_is_wrong_somewhere_and_names_where() -> None:
    assert answers(V311) == ("PUBREC", "PUBCOMP", "PUBACK")
    assert set(answers(V50)) == {i.name for i in f5.SenderInput50
                                 if i.name.startswith(("PUBACK", "PUBREC", "PUBCOMP"))}  # fmt: skip
    assert wrong_at(V311, "PUBREC") == ("AWAIT_PUBACK", "AWAIT_PUBCOMP")
    assert wrong_at(V50, "PUBACK_OK") == ("AWAIT_PUBREC", "AWAIT_PUBCOMP")
    assert wrong_at(V50, "PUBCOMP_NOT_FOUND") == ("AWAIT_PUBACK", "AWAIT_PUBREC", "AWAIT_PUBCOMP")


def withholding(plan: Plan) -> bool:
    return plan.states[0].withholding


def test_a_wrong_answer_is_a_move_of_a_client_that_holds_back() -> None:
    move = Move(kind=MoveKind.MISANSWER, client=1, what="PUBREC")
    assert Move.from_json(move.to_json()) == move
    assert "PUBREC" in move.describe()
    with pytest.raises(ValueError):
        Move(kind=MoveKind.MISANSWER, what="PUBREL")  # no acknowledgement of a copy
    with pytest.raises(ValueError):
        Move(kind=MoveKind.MISANSWER, what="AWAIT_PUBACK PUBREC")
    with pytest.raises(ValueError):
        Move(kind=MoveKind.PUBLISH, topic="a", keep=True)  # only an ACKNOWLEDGE keeps
    plan = Plan(V311, 2)
    for client in (0, 1):
        plan.apply(Move(kind=MoveKind.CONNECT, client=client))
    plan.apply(Move(kind=MoveKind.SUBSCRIBE, topic="a/+", qos=1))
    plan.apply(Move(kind=MoveKind.PUBLISH, client=1, topic="a/b", qos=1))
    assert not plan.enabled(MoveKind.MISANSWER, 0)  # it answers as its session does
    plan.apply(Move(kind=MoveKind.WITHHOLD))
    assert not plan.enabled(MoveKind.MISANSWER, 0)  # no copy since it holds back
    for topic, qos in (("b/a", 1), ("a/c", 0)):  # no subscription matches; QoS 0
        plan.apply(Move(kind=MoveKind.PUBLISH, client=1, topic=topic, qos=qos))
    assert not plan.enabled(MoveKind.MISANSWER, 0)
    plan.apply(Move(kind=MoveKind.PUBLISH, client=1, topic="a/c", qos=2))
    assert plan.enabled(MoveKind.MISANSWER, 0) and not plan.enabled(MoveKind.MISANSWER, 1)
    plan.apply(Move(kind=MoveKind.ACKNOWLEDGE, keep=True))
    assert withholding(plan) and plan.enabled(MoveKind.MISANSWER, 0)
    plan.apply(Move(kind=MoveKind.ACKNOWLEDGE))
    assert not withholding(plan) and not plan.enabled(MoveKind.MISANSWER, 0)
    plan.apply(Move(kind=MoveKind.DROP))  # the session's subscriptions outlive it ...
    plan.apply(Move(kind=MoveKind.CONNECT, clean=False))
    plan.apply(Move(kind=MoveKind.WITHHOLD))
    plan.apply(Move(kind=MoveKind.PUBLISH, client=1, topic="a/b", qos=1))
    assert plan.enabled(MoveKind.MISANSWER, 0)
    plan.apply(Move(kind=MoveKind.DROP))  # ... but not a clean session
    plan.apply(Move(kind=MoveKind.CONNECT))
    plan.apply(Move(kind=MoveKind.WITHHOLD))
    plan.apply(Move(kind=MoveKind.PUBLISH, client=1, topic="a/b", qos=1))
    assert not plan.enabled(MoveKind.MISANSWER, 0)


def test_the_machine_makes_a_wrong_answer_only_with_the_invalid_moves_chance() -> None:
    from pubproof.probe.target import Target
    from pubproof.testing.machine import Exploration, machine_class
    from pubproof.testing.world import Example

    base = Example(target=Target.parse("mqtt://127.0.0.1:1"), edition=V311, readings=R311,
                   run_id=TOKEN, number=0, clients=1)  # fmt: skip
    machine: Any = machine_class(Exploration.of(base, budget=0.0))()  # idle: no broker
    machine.move(Move(kind=MoveKind.CONNECT))
    machine.move(Move(kind=MoveKind.SUBSCRIBE, topic="#", qos=2))
    machine.move(Move(kind=MoveKind.WITHHOLD))
    machine.move(Move(kind=MoveKind.PUBLISH, topic="a", qos=2))
    kinds = ("puback", "pubrec", "pubcomp")
    rules = [getattr(type(machine), f"misanswer_{k}", None) for k in kinds]
    assert all(rules)

    def enabled() -> bool:
        return all(p(machine) for r in rules for p in getattr(r, RULE_MARKER).preconditions)

    assert not enabled()  # the example may not make its invalid moves
    machine.invalid_ok = True
    assert enabled()
    machine.move(Move(kind=MoveKind.ACKNOWLEDGE))
    assert not enabled()  # a client that answers as its session does answers rightly


# -- the close judge --------------------------------------------------------------------------


def wrong_answer(*, breaks: bool = True) -> Evidence:
    """c1 subscribed at QoS 1 holds back the copy of c0's message and answers it with
    PUBREC (a fault of its own, marked as such when ``breaks``); the broker closes."""
    marked: dict[str, Any] = {"breaks": ["MQTT-4.3.2-2"]} if breaks else {}
    return (
        Evidence()
        .sent("c0", connect(f"pp{TOKEN}c001n0")).got("c0", CONNACK)
        .sent("c1", connect(f"pp{TOKEN}c001n1")).got("c1", CONNACK)
        .sent("c1", subscribe(1, T, 1)).got("c1", "9003000101")
        .sent("c0", publish(T, b"m", qos=1)).got("c0", ack(PUBACK, 1))
        .got("c1", publish(T, b"m", qos=1, packet_id=3))
        .sent("c1", ack(PUBREC, 3), **marked)
    )  # fmt: skip


def test_a_close_after_the_clients_own_fault_is_not_the_brokers() -> None:
    entries = wrong_answer().event("closed", "c1").entries
    found = close_findings(View(entries, V311, R311))
    assert [f.verdict for f in found] == [TOLERATED]
    verdict = judge_example(entries, V311, R311)
    assert verdict.failures == ()
    coverage = Coverage(V311)
    coverage.feed(entries)
    rows = {(r.table, r.state, r.input): r.broker for r in coverage.table()}
    assert rows["sender", "AWAIT_PUBACK", "PUBREC"] == 1


def test_the_mutant_that_reads_no_fault_charges_the_broker() -> None:
    """Mutant: the wrong answer not marked (or the mark ignored): the close is a violation."""
    entries = wrong_answer(breaks=False).event("closed", "c1").entries
    assert [f.verdict for f in close_findings(View(entries, V311, R311))] == [VIOLATION]
    assert judge_example(entries, V311, R311).keys == ("close: no rule named",)


def test_the_fault_excuses_a_close_only_until_the_broker_reads_on() -> None:
    """The broker answered a PINGREQ sent after the fault: it kept the connection, and a
    later close is its own (the mutant that excuses every later close is told apart)."""
    read_on = wrong_answer().sent("c1", "c000").got("c1", "d000").event("closed", "c1")
    assert [f.verdict for f in close_findings(View(read_on.entries, V311, R311))] == [VIOLATION]
    not_yet = wrong_answer().sent("c1", "c000").event("closed", "c1")
    assert [f.verdict for f in close_findings(View(not_yet.entries, V311, R311))] == [TOLERATED]
    again = wrong_answer().sent("c1", "c000").got("c1", "d000").sent("c1", ack(PUBREC, 3),
                                                                     breaks=["MQTT-4.3.2-2"])
    closes = Closes(V311)
    closes.feed(again.event("closed", "c1").entries)
    assert [f.verdict for f in closes.findings] == [TOLERATED]  # a second fault excuses anew


def test_what_the_broker_owed_after_the_clients_fault_is_void_when_it_closes() -> None:
    """After the wrong answer, c1 publishes at QoS 1 and the broker closes without a PUBACK:
    it may close at once for the client's protocol violation, so the PUBACK is not missing
    (nor the close its fault). Unmarked, the same evidence charges both (the mutant that
    voids nothing after a fault is told apart by the marked one)."""
    after = wrong_answer().sent("c1", publish(T, b"n", qos=1, packet_id=7))
    entries = after.event("quiet").event("closed", "c1").entries
    assert judge_example(entries, V311, R311).failures == ()
    plain = wrong_answer(breaks=False).sent("c1", publish(T, b"n", qos=1, packet_id=7))
    keys = judge_example(plain.event("quiet").event("closed", "c1").entries, V311, R311).keys
    assert "MQTT-4.3.2-1" in " ".join(keys) or "MQTT-4.3.2-2" in " ".join(keys), keys
    # what the broker owed before the fault is missing all the same
    owed = Evidence()
    owed.entries = wrong_answer().entries[:-1]
    owed.sent("c1", publish(T, b"o", qos=1, packet_id=8)).event("quiet")
    owed.sent("c1", ack(PUBREC, 3), breaks=["MQTT-4.3.2-2"]).event("closed", "c1")
    missing = judge_example(owed.entries, V311, R311).failures
    assert [f.verdict for f in missing] == ["missing"], missing


# -- reproducers ------------------------------------------------------------------------------


def test_a_reproducer_carries_the_fault_to_its_replay() -> None:
    entries = wrong_answer().event("closed", "c1").entries
    made = program(entries)
    sent = [a for a in made if a[0] == "send" and a[1] == "c1" and a[2] == ack(PUBREC, 3)]
    assert sent == [["send", "c1", ack(PUBREC, 3), 0, False, ["MQTT-4.3.2-2"]]]
    plain = [a for a in made if a[0] == "send" and a[2] == ack(PUBACK, 1)]
    assert all(len(a) == 5 for a in plain)  # the program of a faultless packet as before
    from pubproof.testing.reproducer import evidence

    kept = ("dir", "client", "hex", "t", "event", "case", "breaks")
    trace = [{k: v for k, v in e.items() if k in kept} for e in entries]
    again = evidence(trace, V311, R311)
    assert [e.get("breaks") for e in again if e.get("breaks")] == [["MQTT-4.3.2-2"]]
    assert judge_example(again, V311, R311).failures == ()


def test_the_standalone_replayer_sends_the_fault_marked() -> None:
    noted: list[dict[str, Any]] = []
    replay = replayer.Replay.__new__(replayer.Replay)
    replay.token, replay.fresh, replay.socks = TOKEN, TOKEN, {}
    replay.note = lambda **entry: noted.append(entry)  # type: ignore[method-assign]
    replay.send("c1", bytes.fromhex(ack(PUBREC, 3)), False, ["MQTT-4.3.2-2"])
    replay.send("c1", bytes.fromhex(ack(PUBREL, 3)))
    assert noted[0]["breaks"] == ["MQTT-4.3.2-2"] and "breaks" not in noted[1]
