"""MQTT 5.0 flow control and Topic Alias as Z3 transition systems, checked unboundedly with
Spacer, built from the 5.0 tables through :mod:`pubproof.model.explore50`.

**Flow control** is a counter abstraction: every local state one message can reach
(:func:`~pubproof.model.explore50.local_closure`, projected on what the moves read) gets a
variable counting the messages in it, so the system has any number of messages. Its
other variables are the send quota, the connection, a flag for DISCONNECT 0x93, and the
Receive Maximum ``rm``, symbolic in 1..65,535 and never changed. A move of one message
takes one unit from its state's count to the next state's and moves the quota as its
table entry says; a new QoS 1 or 2 PUBLISH reaching a receiver that already holds ``rm``
flows sets the flag; losing the connection and reconnecting map every count at once (each
state to the one its RESUME or CLEAN entries give) and set the quota to ``rm`` less the
units the resumed flows take again [MQTT-4.9.0-1]. The abstraction forgets the order of
packets of *different* messages on a channel, so it has more runs than the real system:
a bound it proves holds there too.

**Topic Alias** is one alias ``a`` of a symbolic Topic Alias Maximum, with symbolic topic
names (integers): the sender's mapping of ``a``, the receiver's, and the in-order channel
of PUBLISH packets that carry ``a`` (at most one that sets it, which comes first, then
any number that use it alone: a sender maps an alias once per connection). A reconnect
empties the channel and applies both ends' NEW_CONNECTION entries.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import z3

from pubproof.model.explore50 import Flows50, Local, local_closure
from pubproof.model.flows import ReceiverState, SenderState
from pubproof.model.topic_alias import AliasOut, AliasOutAction, AliasOutInput

Status = Literal["proved", "refuted", "unknown"]

#: The state variables of the Topic Alias system (the relation's arguments, in order):
#: name -> meaning. The docs site reads Spacer's invariant over them.
TOPIC_ALIAS_VARIABLES = {
    "tam": "the receiver's Topic Alias Maximum",
    "a": "the alias",
    "s_set": "the sender has mapped the alias on this connection (0/1)",
    "s_topic": "the topic the sender mapped the alias to",
    "r_set": "the receiver holds a mapping for the alias (0/1)",
    "r_topic": "the topic the receiver mapped the alias to",
    "c_set": "a PUBLISH that sets the alias is in flight (0/1)",
    "c_topic": "the topic that PUBLISH sets",
    "c_uses": "PUBLISH packets in flight that use the alias alone",
    "conn": "the connection is up (0/1)",
    "bad": "a PUBLISH resolved to another topic than the sender meant, or was refused (0/1)",
}
Key = tuple[int, SenderState, ReceiverState, tuple[str, ...], tuple[str, ...]]


def _key(m: Local) -> Key:
    return (m.qos, m.s, m.r, m.to_r, m.to_s)


def _solve(
    names: list[str], init: z3.BoolRef, trans: z3.BoolRef, bad: z3.BoolRef,
    now: dict[str, z3.ArithRef], nxt: dict[str, z3.ArithRef], timeout_ms: int,
) -> tuple[Status, str]:  # fmt: skip
    fp = z3.Fixedpoint()
    fp.set(engine="spacer")
    fp.set("timeout", timeout_ms)
    reach = z3.Function("Reach", *([z3.IntSort()] * len(names)), z3.BoolSort())
    error = z3.Function("Error", z3.BoolSort())
    fp.register_relation(reach, error)
    fp.declare_var(*now.values(), *nxt.values())
    xs, ys = [now[n] for n in names], [nxt[n] for n in names]
    fp.rule(reach(*xs), init)
    fp.rule(reach(*ys), [reach(*xs), trans])
    fp.rule(error(), [reach(*xs), bad])
    answer = fp.query(error())
    if answer == z3.unsat:
        return "proved", f"inductive invariant found by Spacer: {fp.get_cover_delta(-1, reach)}"
    if answer == z3.sat:
        return "refuted", "a bad state is reachable"
    return "unknown", f"Spacer: {fp.reason_unknown()}"


def flow_control(flows: Flows50, timeout_ms: int = 30_000) -> tuple[Status, str, int]:
    """(status, details, local states): can more than ``rm`` QoS 1 and 2 PUBLISH be
    unacknowledged, or must the receiver send DISCONNECT 0x93, for any ``rm`` in 1..65,535
    and any number of messages and connection losses?"""
    locals_: dict[Key, Local] = {}
    for m in local_closure(flows):
        locals_.setdefault(_key(m), m)
    keys = list(locals_)
    index = {k: i for i, k in enumerate(keys)}
    names = [f"n{i}" for i in range(len(keys))] + ["q", "rm", "conn", "over"]
    x = {n: z3.Int(n) for n in names}
    y = {n: z3.Int(n + "_next") for n in names}
    counts = [x[f"n{i}"] for i in range(len(keys))]

    def keep(*changed: str) -> list[z3.BoolRef]:
        return [y[n] == x[n] for n in names if n not in changed]

    unacked = z3.Sum([counts[i] for i, k in enumerate(keys) if k[1] is not SenderState.FREE])
    holding = z3.Sum([counts[i] for i, k in enumerate(keys) if k[2] is not ReceiverState.FREE])
    moves: list[z3.BoolRef] = []
    for qos in (1, 2):
        move = flows.publish(qos)
        j = index[_key(move.nxt)]
        moves.append(z3.And(
            x["conn"] == 1, x["q"] > 0, y[f"n{j}"] == x[f"n{j}"] + 1,
            y["q"] == x["q"] + move.quota, *keep(f"n{j}", "q"),
        ))  # fmt: skip
    for i, k in enumerate(keys):
        for move in flows.moves(locals_[k]):
            j = index[_key(move.nxt)]
            changed = {f"n{i}", f"n{j}", "q"}
            step = [y[f"n{i}"] == x[f"n{i}"] - 1, y[f"n{j}"] == x[f"n{j}"] + 1] if i != j else []
            guard = [x["conn"] == 1, x[f"n{i}"] >= 1]
            if move.new_publish:
                moves.append(z3.And(*guard, holding >= x["rm"], y["over"] == 1, *keep("over")))
                guard.append(holding < x["rm"])
            moves.append(z3.And(
                *guard, *step, y["q"] == x["q"] + move.quota, *keep(*changed),
            ))  # fmt: skip

    def remap(image: dict[int, int]) -> list[z3.BoolRef]:
        return [
            y[f"n{j}"] == z3.Sum([z3.IntVal(0), *(counts[i] for i, t in image.items() if t == j)])
            for j in range(len(keys))
        ]

    lost = {i: index[_key(flows.lost(locals_[k]))] for i, k in enumerate(keys)}
    moves.append(z3.And(x["conn"] == 1, y["conn"] == 0, *remap(lost), *keep(*y_counts(keys),
                                                                              "conn")))  # fmt: skip
    for resume in (True, False):
        image, takes = {}, []
        for i, k in enumerate(keys):
            move = flows.reconnect(flows.lost(locals_[k]), resume=resume)
            image[i] = index[_key(move.nxt)]
            takes.append(move.takes_quota * counts[i])
        moves.append(z3.And(
            x["conn"] == 0, y["conn"] == 1, *remap(image),
            y["q"] == x["rm"] - z3.Sum([z3.IntVal(0), *takes]),
            *keep(*y_counts(keys), "conn", "q"),
        ))  # fmt: skip
    init = z3.And(
        *(c == 0 for c in counts), x["q"] == x["rm"], x["rm"] >= 1, x["rm"] <= 65535,
        x["conn"] == 1, x["over"] == 0,
    )  # fmt: skip
    bad = z3.Or(x["over"] == 1, unacked > x["rm"])

    def invariant(v: dict[str, z3.ArithRef]) -> z3.BoolRef:
        n = [v[f"n{i}"] for i in range(len(keys))]
        u = z3.Sum([n[i] for i, k in enumerate(keys) if k[1] is not SenderState.FREE])
        return z3.And(
            *(c >= 0 for c in n), v["q"] >= 0, v["q"] + u == v["rm"], v["rm"] >= 1,
            v["rm"] <= 65535, v["over"] == 0, z3.Or(v["conn"] == 0, v["conn"] == 1),
        )  # fmt: skip

    status, details = _inductive(invariant, init, z3.Or(moves), bad, x, y, timeout_ms)
    return status, details, len(keys)


INVARIANT_TEXT = (
    "every count >= 0, the send quota >= 0, quota + unacknowledged = Receive Maximum, "
    "no DISCONNECT 0x93"
)


def _inductive(
    invariant: Callable[[dict[str, z3.ArithRef]], z3.BoolRef], init: z3.BoolRef,
    trans: z3.BoolRef, bad: z3.BoolRef, x: dict[str, z3.ArithRef], y: dict[str, z3.ArithRef],
    timeout_ms: int,
) -> tuple[Status, str]:  # fmt: skip
    """Whether ``invariant`` holds initially, is closed under ``trans`` and excludes ``bad``
    (then the claim is proved); "unknown" with the first condition that fails."""
    inv_x, inv_y = invariant(x), invariant(y)
    for name, query in (
        ("initiation", z3.And(init, z3.Not(inv_x))),
        ("consecution", z3.And(inv_x, trans, z3.Not(inv_y))),
        ("safety", z3.And(inv_x, bad)),
    ):
        solver = z3.Solver()
        solver.set("timeout", timeout_ms)
        solver.add(query)
        answer = solver.check()
        if answer != z3.unsat:
            return "unknown", f"the invariant fails {name} ({answer})"
    return "proved", f"inductive invariant checked by Z3: {INVARIANT_TEXT}"


def y_counts(keys: list[Key]) -> list[str]:
    return [f"n{i}" for i in range(len(keys))]


def topic_alias(flows: Flows50, timeout_ms: int = 30_000) -> tuple[Status, str]:
    """(status, details): does a PUBLISH that uses alias ``a`` alone ever reach a receiver
    that has no mapping for ``a`` or maps it to another topic than the sender meant, for
    any Topic Alias Maximum, alias ``a`` and topic names, over any number of reconnects?"""
    names = list(TOPIC_ALIAS_VARIABLES)
    x = {n: z3.Int(n) for n in names}
    y = {n: z3.Int(n + "_next") for n in names}

    def keep(*changed: str) -> list[z3.BoolRef]:
        return [y[n] == x[n] for n in names if n not in changed]

    assign = flows.alias_sender(AliasOut.NONE, AliasOutInput.SEND_ALIAS_FREE)
    use = flows.alias_sender(AliasOut.ALIASED, AliasOutInput.SEND_ALIAS_FREE)
    kept = (
        flows.alias_sender(AliasOut.ALIASED, AliasOutInput.NEW_CONNECTION).next is AliasOut.ALIASED
    )
    moves: list[z3.BoolRef] = []
    if AliasOutAction.ASSIGN in assign.actions:
        # The sender maps ``a`` (it is the next free alias: a <= tam) to any topic name (the
        # next ``s_topic`` is left free) and sends the topic with the alias.
        moves.append(z3.And(
            x["conn"] == 1, x["s_set"] == 0, x["a"] <= x["tam"], x["c_uses"] == 0,
            x["c_set"] == 0, y["s_set"] == 1, y["c_set"] == 1, y["c_topic"] == y["s_topic"],
            *keep("s_set", "s_topic", "c_set", "c_topic"),
        ))  # fmt: skip
    if AliasOutAction.SEND_ALIAS_ONLY in use.actions:
        moves.append(z3.And(
            x["conn"] == 1, x["s_set"] == 1, y["c_uses"] == x["c_uses"] + 1, *keep("c_uses"),
        ))  # fmt: skip
    # The receiver takes the PUBLISH that sets ``a`` (it comes before the ones that use it).
    moves.append(z3.And(
        x["conn"] == 1, x["c_set"] == 1, y["c_set"] == 0, y["r_set"] == 1,
        y["r_topic"] == x["c_topic"], *keep("c_set", "r_set", "r_topic"),
    ))  # fmt: skip
    # The receiver takes a PUBLISH that uses ``a`` alone: it must resolve to the topic the
    # sender meant (the sender's mapping when it sent it, which it keeps on a connection).
    moves.append(z3.And(
        x["conn"] == 1, x["c_set"] == 0, x["c_uses"] >= 1, y["c_uses"] == x["c_uses"] - 1,
        y["bad"] == z3.If(z3.And(x["r_set"] == 1, x["r_topic"] == x["s_topic"]), x["bad"], 1),
        *keep("c_uses", "bad"),
    ))  # fmt: skip
    moves.append(z3.And(
        x["conn"] == 1, y["conn"] == 0, y["c_set"] == 0, y["c_uses"] == 0,
        *keep("conn", "c_set", "c_uses"),
    ))  # fmt: skip
    moves.append(z3.And(
        x["conn"] == 0, y["conn"] == 1, y["r_set"] == 0,
        y["s_set"] == (x["s_set"] if kept else 0), *keep("conn", "r_set", "s_set"),
    ))  # fmt: skip
    init = z3.And(
        x["tam"] >= 1, x["tam"] <= 65535, x["a"] >= 1, x["s_set"] == 0, x["r_set"] == 0,
        x["c_set"] == 0, x["c_uses"] == 0, x["conn"] == 1, x["bad"] == 0,
    )  # fmt: skip
    return _solve(names, init, z3.Or(moves), x["bad"] == 1, x, y, timeout_ms)
