"""Packet identifiers are never shared by two in-flight messages: an unbounded proof.

A counter abstraction of the sender, for one arbitrary identifier (all identifiers are
alike, so one stands for each): how many messages on that identifier are in each sender
state. The application may publish any number of messages; the allocator may hand out the
identifier only when no message in a state that holds it is in flight (the explorer's
``holds_identifier``, which mutations change); every sender table entry moves one message
between states, whenever a message is in its source state (an over-approximation of the
channel: any acknowledgement may arrive at any time, and reconnects act on one message at
a time). Spacer proves that at most one message is ever in flight on the identifier.
"""

from __future__ import annotations

import z3

from pubproof.model.explore import Explorer
from pubproof.model.flows import SENDER, SenderInput, SenderState
from pubproof.proofs.protocol_z3 import System

_STATES = [s for s in SenderState if s is not SenderState.FREE]


def check_identifiers(system: System, timeout_ms: int = 60_000) -> tuple[str, str]:
    """("proved" | "refuted" | "unknown", details) for: never two in-flight messages on one
    identifier, over unboundedly many messages."""
    rules = Explorer(system.env, system.mutations)
    now = {s: z3.Int(f"n_{s.name}") for s in _STATES}
    nxt = {s: z3.Int(f"n_{s.name}_next") for s in _STATES}

    def moved(source: SenderState | None, target: SenderState) -> z3.BoolRef:
        changes = {
            s: now[s] - (1 if s is source else 0) + (1 if s is target else 0) for s in _STATES
        }
        return z3.And([nxt[s] == changes[s] for s in _STATES])

    steps: list[z3.BoolRef] = []
    holding = z3.Sum([now[s] for s in _STATES if rules.holds_identifier(s)])
    for event in (SenderInput.PUBLISH_QOS1, SenderInput.PUBLISH_QOS2):
        step = rules.sender_rule(SenderState.FREE, event)
        assert step is not None
        steps.append(z3.And(holding == 0, moved(None, step.next)))  # type: ignore[arg-type]
    for (state, event), _ in SENDER.items():
        if state is SenderState.FREE or event in (
            SenderInput.PUBLISH_QOS1,
            SenderInput.PUBLISH_QOS2,
        ):
            continue
        step = rules.sender_rule(state, event)
        assert step is not None
        target: SenderState = step.next  # type: ignore[assignment]
        if target is SenderState.FREE:
            changes = {s: now[s] - (1 if s is state else 0) for s in _STATES}
            effect = z3.And([nxt[s] == changes[s] for s in _STATES])
        else:
            effect = moved(state, target)
        steps.append(z3.And(now[state] > 0, effect))

    fp = z3.Fixedpoint()
    fp.set(engine="spacer")
    fp.set("timeout", timeout_ms)
    reach = z3.Function("Reach", *([z3.IntSort()] * len(_STATES)), z3.BoolSort())
    error = z3.Function("Error", z3.BoolSort())
    fp.register_relation(reach, error)
    fp.declare_var(*now.values(), *nxt.values())
    xs, ys = [now[s] for s in _STATES], [nxt[s] for s in _STATES]
    fp.rule(reach(*[z3.IntVal(0)] * len(_STATES)))
    fp.rule(reach(*ys), [reach(*xs), z3.Or(steps)])
    fp.rule(error(), [reach(*xs), z3.Sum(xs) >= 2])
    answer = fp.query(error())
    if answer == z3.unsat:
        return "proved", f"inductive invariant found by Spacer: {fp.get_cover_delta(-1, reach)}"
    if answer == z3.sat:
        return "refuted", "two in-flight messages on one identifier are reachable"
    return "unknown", f"Spacer: {fp.reason_unknown()}"
