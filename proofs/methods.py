"""Theorems comparing the two QoS 2 receiver methods run by run.

Each is checked by two engines that must agree: Z3 on the two-message product systems of
:mod:`.methods_z3` (an inductive invariant checked by Z3; two messages are enough for any
number, as that module's docstring argues) and the lockstep explorer of
:mod:`pubproof.model.lockstep` on three messages over two packet identifiers (so one is
reused), over any number of connection losses with the session resumed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import combinations

from pubproof.model.editions import Edition
from pubproof.model.explore import Environment, Mutations
from pubproof.model.lockstep import Lockstep, explore
from pubproof.proofs.methods_z3 import Product, check_product
from pubproof.proofs.protocol import A_DELIVERS_EARLY, B_DELIVERS_DUPLICATE
from pubproof.proofs.registry import Broken, Result, Status, theorem


@dataclass(frozen=True, slots=True, kw_only=True)
class SideBySide:
    """What both engines check: messages at these QoS levels, in publish order, under one
    environment and the same deliberate faults."""

    qos: tuple[int, ...] = (2, 2, 2)
    reorder: bool = False
    disconnects: int | None = None  # the explorer's bound; None: any number of losses
    a_mutations: Mutations = field(default_factory=Mutations)
    b_mutations: Mutations = field(default_factory=Mutations)
    sender_mutations: Mutations = field(default_factory=Mutations)

    def products(self) -> list[Product]:
        """The two-message systems Z3 checks: every pair of QoS levels that occurs in
        publish order, each with two identifiers and with one reused."""
        pairs: dict[tuple[int, int], None] = dict.fromkeys(
            (self.qos[i], self.qos[j]) for i, j in combinations(range(len(self.qos)), 2)
        )
        return [
            Product(qos=pair, shared_identifier=shared, reorder=self.reorder,
                    a_mutations=self.a_mutations, b_mutations=self.b_mutations,
                    sender_mutations=self.sender_mutations)
            for pair in pairs for shared in (False, True)
        ]  # fmt: skip

    def lockstep(self) -> Lockstep:
        # both sides get the sender's faults; the receivers get their own
        merge = self.sender_mutations
        return Lockstep(
            env=Environment(qos=self.qos, packet_ids=2, disconnects=self.disconnects,
                            reorder=self.reorder),
            a_mutations=replace(merge, receiver=self.a_mutations.receiver),
            b_mutations=replace(merge, receiver=self.b_mutations.receiver),
        )  # fmt: skip


def check_side_by_side(case: SideBySide) -> Result:
    """Z3 on every two-message product, the lockstep explorer on the whole; they must agree."""
    z3_results = [(p, *check_product(p)) for p in case.products()]
    refuted = [(p, details) for p, status, details in z3_results if status == "refuted"]
    z3_status: Status = "refuted" if refuted else "proved"
    outcome = explore(case.lockstep())
    explicit = "refuted" if outcome.broken else "proved"
    bound = f"lockstep explorer: {outcome.pairs} pairs of worlds, {len(case.qos)} messages, " + (
        "any number of losses" if case.disconnects is None else f"{case.disconnects} losses"
    )
    z3_said = "; ".join(details for _, _, details in z3_results)
    if z3_status != explicit:
        return Result(
            status="failed",
            counterexample=outcome.trace,
            details=f"engines disagree: Z3 says {z3_status} ({z3_said}); {bound} says {explicit}",
        )
    found = f"; broken: {outcome.broken}" if outcome.broken else ""
    return Result(
        status=z3_status,
        counterexample=outcome.trace,
        details=f"Z3: {z3_said}; {bound}{found}",
    )


_REVERSED = Mutations(resend_reversed=True)

methods_agree = theorem(
    id="proto.methods-a-and-b-deliver-the-same-sequence",
    statement="Run for run, Method A and Method B deliver the same sequence of QoS 2 "
    "messages: at every moment Method A's deliveries are a prefix of Method B's, neither "
    "delivers a message twice, and once the sender has completed every message the two "
    "sequences are equal (and both answer every packet alike). For any number of messages "
    "(every two of them, with their own identifiers or one reused), over any number of "
    "connection losses with the session resumed, on an in-order channel.",
    rules=["MQTT-4.3.3-2", "MQTT-4.6.0-1", "MQTT-4.6.0-3", "MQTT-4.6.0-4", "MQTT-2.3.1-2"],
    editions=(Edition.V311,),
    method="z3 (inductive invariant, pairwise) + explicit (lockstep, 3 messages)",
    model=SideBySide(),
    mutants=[
        Broken(
            "B delivers duplicates",
            "Method B delivering a duplicate PUBLISH",
            SideBySide(b_mutations=B_DELIVERS_DUPLICATE),
        ),
        Broken(
            "A delivers on PUBLISH too",
            "Method A that delivers when it stores, and again on PUBREL",
            SideBySide(a_mutations=A_DELIVERS_EARLY),
        ),
        Broken(
            "re-send newest first",
            "on reconnect the sender re-sends in reverse order (against [MQTT-4.6.0-1])",
            SideBySide(sender_mutations=_REVERSED),
        ),
        Broken(
            "channel reorders",
            "a network that may deliver out of order",
            SideBySide(qos=(2, 2), reorder=True, disconnects=1),
        ),
    ],
)(check_side_by_side)

methods_differ_with_mixed_qos = theorem(
    id="proto.refute.methods-agree-with-mixed-qos",
    statement="Method A and Method B deliver the same sequence FAILS when QoS 2 and QoS 1 "
    "messages are mixed: a QoS 1 message published after a QoS 2 one is delivered on "
    "arrival by both, so Method A (which waits for PUBREL) delivers it first and Method B "
    "second. MQTT orders delivery only per QoS ([MQTT-4.6.0-6]: 'for the same Topic and "
    "QoS').",
    rules=["MQTT-4.3.3-2", "MQTT-4.3.2-2", "MQTT-4.6.0-6"],
    editions=(Edition.V311,),
    method="z3 (inductive invariant, pairwise) + explicit (lockstep, 2 messages)",
    expected="refuted",
    model=SideBySide(qos=(2, 1)),
    mutants=[
        Broken("QoS 2 only", "the same two messages, both at QoS 2", SideBySide(qos=(2, 2))),
    ],
)(check_side_by_side)

__all__ = ["SideBySide", "check_side_by_side", "methods_agree", "methods_differ_with_mixed_qos"]
