"""The QoS flows as a Z3 transition system, built from the model's tables, and checked
unboundedly with Spacer (Z3's engine for constrained Horn clauses).

The system is one application message on one packet identifier, a sender, a receiver, a
connection that may be lost and re-established any number of times, and two channels.
Channels hold counts of packets by kind; under in-order delivery that is exact, because
within one connection the receiver's channel always reads PUBLISH* PUBREL* (PUBREL is only
sent after a PUBREC, which answers a PUBLISH already consumed) and the sender's reads
PUBACK* or PUBREC* PUBCOMP*. So a PUBREL can be taken only when no PUBLISH is ahead of it,
and a PUBCOMP only when no PUBREC is ahead of it. A channel that may reorder drops those
two guards (and may carry packets over a lost connection); one that duplicates does not
consume what it delivers.

Each transition is read from :mod:`pubproof.model.flows` (through the explorer's rule
look-up, so mutations apply to both engines alike); nothing here restates the tables.
A property is *proved* when Spacer finds an inductive invariant that excludes every bad
state (``unsat``), and *refuted* when a bad state is reachable (``sat``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import z3

from pubproof.model.explore import Environment, Explorer, Mutations
from pubproof.model.flows import (
    RECEIVER_STATES,
    ReceiverAction,
    ReceiverInput,
    ReceiverState,
    SenderAction,
    SenderInput,
    SenderState,
)

RA, RI, SA, SI = ReceiverAction, ReceiverInput, SenderAction, SenderInput

#: The state variables: name -> meaning.
VARIABLES = {
    "pub": "the application has published the message (0/1)",
    "s": "sender state (index into SenderState)",
    "rec_seen": "the sender has received a PUBREC for the message (0/1)",
    "done": "the sender has completed the message and freed its identifier (0/1)",
    "r": "receiver state (index into ReceiverState)",
    "stored": "the receiver holds the message (Method A) (0/1)",
    "conn": "the connection is up (0/1)",
    "n_publish": "PUBLISH packets in flight to the receiver",
    "n_pubrel": "PUBREL packets in flight to the receiver",
    "n_puback": "PUBACK packets in flight to the sender",
    "n_pubrec": "PUBREC packets in flight to the sender",
    "n_pubcomp": "PUBCOMP packets in flight to the sender",
    "d": "deliveries of the message to the application",
}
NAMES = tuple(VARIABLES)
SENDER_INDEX = {state: index for index, state in enumerate(SenderState)}
RECEIVER_INDEX = {state: index for index, state in enumerate(ReceiverState)}


@dataclass(frozen=True, slots=True, kw_only=True)
class System:
    """The flows of one message at one QoS, under an environment, possibly mutated."""

    qos: int
    env: Environment
    mutations: Mutations = field(default_factory=Mutations)


State = dict[str, z3.ArithRef]


def _state(suffix: str) -> State:
    return {name: z3.Int(f"{name}{suffix}") for name in NAMES}


def _assign(now: State, nxt: State, **changes: z3.ArithRef | int) -> z3.BoolRef:
    return z3.And([nxt[n] == changes.get(n, now[n]) for n in NAMES])


def _sender_actions(
    actions: tuple[SenderAction, ...], x: State, ch: dict[str, z3.ArithRef | int]
) -> None:
    for action in actions:
        if action in (SA.SEND_PUBLISH, SA.RESEND_PUBLISH):
            ch["n_publish"] = ch.get("n_publish", x["n_publish"]) + 1
        elif action is SA.SEND_PUBREL:
            ch["n_pubrel"] = ch.get("n_pubrel", x["n_pubrel"]) + 1
        elif action is SA.COMPLETE:
            ch["done"] = 1


def _receiver_actions(
    actions: tuple[ReceiverAction, ...], x: State, ch: dict[str, z3.ArithRef | int]
) -> None:
    for action in actions:
        if action is RA.DELIVER:
            ch["d"] = ch.get("d", x["d"]) + 1
        elif action is RA.STORE:
            ch["stored"] = 1
        elif action is RA.DELIVER_STORED:
            ch["d"] = ch.get("d", x["d"]) + x["stored"]
            ch["stored"] = 0
        else:
            name = {
                RA.SEND_PUBACK: "n_puback",
                RA.SEND_PUBREC: "n_pubrec",
                RA.SEND_PUBCOMP: "n_pubcomp",
            }[action]
            ch[name] = ch.get(name, x[name]) + 1


def transitions(system: System, x: State, y: State) -> z3.BoolRef:
    """The transition relation: one step of the world, from ``x`` to ``y``."""
    env, rules = system.env, Explorer(system.env, system.mutations)
    consume = 0 if env.duplicate else 1
    moves: list[z3.BoolRef] = []

    # The application publishes (once).
    publish = SI.PUBLISH_QOS1 if system.qos == 1 else SI.PUBLISH_QOS2
    if system.qos == 0:
        moves.append(
            z3.And(
                x["pub"] == 0, x["conn"] == 1, _assign(x, y, pub=1, n_publish=x["n_publish"] + 1)
            )
        )
    else:
        step = rules.sender_rule(SenderState.FREE, publish)
        assert step is not None
        ch: dict[str, z3.ArithRef | int] = {"pub": 1, "s": SENDER_INDEX[step.next]}  # type: ignore[index]
        _sender_actions(step.actions, x, ch)  # type: ignore[arg-type]
        moves.append(
            z3.And(
                x["pub"] == 0,
                x["conn"] == 1,
                x["s"] == SENDER_INDEX[SenderState.FREE],
                _assign(x, y, **ch),
            )
        )

    # A packet reaches the receiver.
    event = (RI.PUBLISH_QOS0, RI.PUBLISH_QOS1, RI.PUBLISH_QOS2)[system.qos]
    for kind, count, guard in (
        (event, "n_publish", x["n_publish"] > 0),
        (
            RI.PUBREL,
            "n_pubrel",
            z3.And(x["n_pubrel"] > 0, x["n_publish"] == 0)
            if not env.reorder
            else x["n_pubrel"] > 0,
        ),
    ):
        for state in RECEIVER_STATES[env.method]:
            ch = {count: x[count] - consume}
            step = (
                rules.receiver_rule(state, kind)
                if kind is not RI.PUBLISH_QOS0
                else rules.receiver_rule(ReceiverState.FREE, kind)
            )
            if step is not None:
                if kind is not RI.PUBLISH_QOS0:
                    ch["r"] = RECEIVER_INDEX[step.next]  # type: ignore[index]
                _receiver_actions(step.actions, x, ch)  # type: ignore[arg-type]
            moves.append(z3.And(guard, x["r"] == RECEIVER_INDEX[state], _assign(x, y, **ch)))

    # A packet reaches the sender.
    for ack_kind, count, s_guard in (
        (SI.PUBACK, "n_puback", x["n_puback"] > 0),
        (SI.PUBREC, "n_pubrec", x["n_pubrec"] > 0),
        (
            SI.PUBCOMP,
            "n_pubcomp",
            z3.And(x["n_pubcomp"] > 0, x["n_pubrec"] == 0)
            if not env.reorder
            else x["n_pubcomp"] > 0,
        ),
    ):
        for s_state in SenderState:
            ch = {count: x[count] - consume}
            s_step = rules.sender_rule(s_state, ack_kind)
            if s_step is not None:
                ch["s"] = SENDER_INDEX[s_step.next]  # type: ignore[index]
                if ack_kind is SI.PUBREC:
                    ch["rec_seen"] = 1
                _sender_actions(s_step.actions, x, ch)  # type: ignore[arg-type]
            moves.append(z3.And(s_guard, x["s"] == SENDER_INDEX[s_state], _assign(x, y, **ch)))

    # The connection is lost: the packets in flight with it (or, on a network that
    # reorders, delayed past the next connection).
    empty = {n: 0 for n in ("n_publish", "n_pubrel", "n_puback", "n_pubrec", "n_pubcomp")}
    moves.append(z3.And(x["conn"] == 1, _assign(x, y, conn=0, **empty)))
    if env.reorder:
        moves.append(z3.And(x["conn"] == 1, _assign(x, y, conn=0)))

    # Reconnect with the session resumed: the sender re-sends as its table says.
    for s_state in SenderState:
        s_step = rules.sender_rule(s_state, SI.RESUME)
        assert s_step is not None
        ch = {"conn": 1, "s": SENDER_INDEX[s_step.next]}  # type: ignore[index]
        _sender_actions(s_step.actions, x, ch)  # type: ignore[arg-type]
        moves.append(z3.And(x["conn"] == 0, x["s"] == SENDER_INDEX[s_state], _assign(x, y, **ch)))
    if env.clean_reconnect:
        free_s, free_r = SENDER_INDEX[SenderState.FREE], RECEIVER_INDEX[ReceiverState.FREE]
        moves.append(z3.And(x["conn"] == 0, _assign(x, y, conn=1, s=free_s, r=free_r, stored=0)))
    return z3.Or(moves)


def initial(x: State) -> z3.BoolRef:
    return z3.And(
        [x[n] == 0 for n in NAMES if n not in ("s", "r", "conn")]
        + [
            x["s"] == SENDER_INDEX[SenderState.FREE],
            x["r"] == RECEIVER_INDEX[ReceiverState.FREE],
            x["conn"] == 1,
        ]
    )


Bad = Callable[[State], z3.BoolRef]


def check_safety(
    system: System, bad: Bad, timeout_ms: int = 60_000
) -> tuple[Literal["proved", "refuted", "unknown"], str]:
    """("proved" | "refuted" | "unknown", details): can a bad state be reached?"""
    x, y = _state(""), _state("_next")
    fp = z3.Fixedpoint()
    fp.set(engine="spacer")
    fp.set("timeout", timeout_ms)
    sorts = [z3.IntSort()] * len(NAMES)
    reach = z3.Function("Reach", *sorts, z3.BoolSort())
    error = z3.Function("Error", z3.BoolSort())
    fp.register_relation(reach, error)
    fp.declare_var(*x.values(), *y.values())
    xs, ys = [x[n] for n in NAMES], [y[n] for n in NAMES]
    fp.rule(reach(*xs), initial(x))
    fp.rule(reach(*ys), [reach(*xs), transitions(system, x, y)])
    fp.rule(error(), [reach(*xs), bad(x)])
    answer = fp.query(error())
    if answer == z3.unsat:
        invariant = fp.get_cover_delta(-1, reach)
        return "proved", f"inductive invariant found by Spacer: {invariant}"
    if answer == z3.sat:
        return "refuted", "a bad state is reachable"
    return "unknown", f"Spacer: {fp.reason_unknown()}"
