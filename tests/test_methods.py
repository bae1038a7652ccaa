"""Method A against Method B, run by run: the Z3 product and the lockstep explorer."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from functools import cache
from typing import cast

import pytest

from pubproof.model.explore import Environment, Mutations
from pubproof.model.flows import (
    SENDER,
    Method,
    ReceiverAction,
    ReceiverInput,
    ReceiverState,
    SenderAction,
    SenderState,
    Step,
    receiver_table,
)
from pubproof.model.lockstep import Lockstep, explore, judge
from pubproof.model.replay import replay
from pubproof.model.trace import is_publish
from pubproof.proofs.methods import SideBySide, check_side_by_side
from pubproof.proofs.methods_z3 import Product, bad_conditions, check_product, reachable


def test_the_claim_is_proved_for_two_and_for_one_reused_identifier() -> None:
    for shared in (False, True):
        status, details = check_product(Product(shared_identifier=shared))
        assert status == "proved", details
        assert "checked by Z3" in details


def test_the_channels_stay_within_their_four_slots() -> None:
    """The capacity argument in the module docstring: four slots per channel suffice (a
    fifth packet would be the ``overflow`` bad state). The reachable states hold at most two
    packets per channel, two identifiers, and one when the identifier is shared."""
    from pubproof.proofs.methods_z3 import names

    for product, most in ((Product(), 2), (Product(shared_identifier=True), 1)):
        states, broken = reachable(product)
        assert broken is None
        order = names(product)
        for channel in ("to_r_len", "to_s_len"):
            assert max(s[order.index(channel)] for s in states) == most


def test_mixed_qos_breaks_the_order_and_the_trace_shows_it() -> None:
    result = check_side_by_side(SideBySide(qos=(2, 1)))
    assert result.status == "refuted"
    trace = result.counterexample
    assert trace is not None
    last = dict(trace[-1])
    assert last["event"] == "deliveries"
    assert last["method-a"] == [2] and last["method-b"] == [1, 2]
    # the packets of the trace replayed through the model's Method B session deliver in
    # publish order
    packets = [dict(step) for step in trace if "dir" in step]
    delivered = replay(packets, method=Method.B).deliveries()
    publishes = [p for p in delivered if is_publish(p)]
    assert publishes == delivered  # what is delivered is PUBLISH packets
    assert [p["payload_hex"] for p in publishes] == ["01", "02"]


def test_judge_names_each_fault() -> None:
    from pubproof.model.explore import initial

    world = initial()
    assert judge(world, world, 1) is None
    assert judge(replace(world, delivered=(2,)), replace(world, delivered=(1, 2)), 2)
    assert judge(replace(world, delivered=(1, 1)), replace(world, delivered=(1, 1)), 1)
    done = replace(world, delivered=(1,), completed=(1, 2))
    assert judge(done, replace(done, delivered=(1, 2)), 2)


def test_bad_conditions_each_bite() -> None:
    clean = {name: 0 for name in ("diverged", "overflow", "done1", "done2", "first_A", "first_B")}
    clean |= {f"c{m}_{e}": 0 for m in (1, 2) for e in "AB"}
    assert not any(bad_conditions(clean).values())
    for change in (
        {"diverged": 1},
        {"overflow": 1},
        {"c1_A": 2, "c1_B": 2},
        {"c1_A": 1},
        {"first_A": 2, "first_B": 1, "c2_A": 1, "c1_B": 1, "c2_B": 1},
        {"done1": 1, "done2": 1, "c1_B": 1, "c2_B": 1, "c1_A": 1},
    ):
        assert any(bad_conditions({**clean, **change}).values()), change


def _single_entry_mutants() -> Iterator[tuple[str, SideBySide]]:
    """Every QoS 2 table entry with one of its actions dropped, for either method's
    receiver and for the sender."""
    for method in Method:
        for key, step in receiver_table(method).items():
            if "QOS2" not in key[1].name and key[1].name != "PUBREL":
                continue
            # a receiver table's steps take receiver actions
            receiver_actions = cast("tuple[ReceiverAction, ...]", step.actions)
            for index in range(len(receiver_actions)):
                actions = receiver_actions[:index] + receiver_actions[index + 1 :]
                broken = {key: Step(actions=actions, next=step.next, rules=("mutant",))}
                mutations = Mutations(receiver=broken)
                yield (
                    f"{method.value}:{key[0].name}/{key[1].name}-{index}",
                    SideBySide(qos=(2, 2), a_mutations=mutations)
                    if method is Method.A
                    else SideBySide(qos=(2, 2), b_mutations=mutations),
                )
    for sender_key, sender_step in SENDER.items():
        if (
            sender_key[1].name in ("PUBLISH_QOS1", "PUBACK", "CLEAN")
            or sender_key[0] is SenderState.AWAIT_PUBACK
        ):
            continue
        # the sender table's steps take sender actions
        sender_actions = cast("tuple[SenderAction, ...]", sender_step.actions)
        for index in range(len(sender_actions)):
            actions_s = sender_actions[:index] + sender_actions[index + 1 :]
            broken_s = {
                sender_key: Step(actions=actions_s, next=sender_step.next, rules=("mutant",))
            }
            yield (
                f"sender:{sender_key[0].name}/{sender_key[1].name}-{index}",
                SideBySide(qos=(2, 2), sender_mutations=Mutations(sender=broken_s)),
            )


MUTANTS = list(_single_entry_mutants())


@cache
def _z3_status(name: str) -> str:
    case = dict(MUTANTS)[name]
    return check_product(case.products()[0])[0]


@pytest.mark.parametrize(("name", "case"), MUTANTS, ids=[name for name, _ in MUTANTS])
def test_z3_and_the_lockstep_explorer_agree_on_every_single_entry_mutant(
    name: str, case: SideBySide
) -> None:
    """The second engine agrees with Z3 not only on the theorem and its named mutants but
    on every QoS 2 table entry with one action dropped (two messages, two identifiers)."""
    z3_status = _z3_status(name)
    outcome = explore(replace(case.lockstep(), env=Environment(qos=(2, 2), disconnects=None)))
    explicit = "refuted" if outcome.broken else "proved"
    assert z3_status == explicit, (name, outcome.broken)


def test_some_single_entry_mutants_survive_and_most_are_killed() -> None:
    """Dropping an action the claim does not depend on (e.g. the ``STORE`` of Method B's
    states, which has none) leaves it true; the claim is not so weak that nothing breaks it."""
    killed = sum(_z3_status(name) == "refuted" for name, _ in MUTANTS)
    assert killed > 0
    assert killed >= len(MUTANTS) // 2


def test_lockstep_reports_methods_that_answer_differently() -> None:
    """A receiver whose Method A stops answering PUBREL is told apart by what it sends."""
    silent = Step(actions=(), next=ReceiverState.FREE, rules=("mutant",))
    case = Lockstep(
        env=Environment(qos=(2,), disconnects=None),
        a_mutations=Mutations(receiver={(ReceiverState.STORED, ReceiverInput.PUBREL): silent}),
    )
    outcome = explore(case)
    assert outcome.broken is not None
    status, _ = check_product(
        Product(
            a_mutations=Mutations(receiver={(ReceiverState.STORED, ReceiverInput.PUBREL): silent})
        )
    )
    assert status == "refuted"
