"""Method A and Method B side by side: a Z3 product system over two messages, checked
unboundedly with Spacer, and the argument that makes two messages enough for any number.

The claim
---------
Run the *same* exchange twice, once with a Method A receiver (store, deliver on PUBREL) and
once with a Method B receiver (deliver on PUBLISH, hold the identifier until PUBREL). Both
receivers answer every packet with the same packets (PUBREC for a PUBLISH, PUBCOMP for a
PUBREL, in either state), so the sender and the network cannot tell them apart and one
run serves both. Then, at every moment, the sequence A has delivered is a prefix of the
sequence B has delivered (A only lags: it waits for PUBREL), each delivers each message at
most once, and once the sender has completed every message the two sequences are equal.

The product system
------------------
One sender, one receiver that carries *both* methods' per-identifier states and feeds each
arriving packet to both tables, and two first-in first-out channels. The packets both
tables send must be the same, or the product sets ``diverged`` (a bad state): so the claim
that one run serves both is itself proved, not assumed. Transitions are read from
:mod:`pubproof.model.flows` through :class:`~pubproof.model.explore.Explorer`'s rule
look-up, so a mutation changes this encoding and the explorer alike.

Channels are exact: a channel is a sequence of at most ``CAPACITY`` packet codes with its
length. Within one connection a message puts at most one PUBLISH and one PUBREL on the way
to the receiver, and at most one PUBACK, or one PUBREC and one PUBCOMP, on the way back
(the sender sends PUBLISH on publish or on resume, PUBREL on PUBREC or on resume, never
both in one connection; a receiver answers each packet once), so four slots suffice for two
messages; pushing onto a full channel sets ``overflow``, a bad state, so that bound is
proved too rather than trusted.

Two messages are enough
-----------------------
"A's sequence is a prefix of B's" holds for a set of messages exactly when, for every two
messages ``i`` (published first) and ``j``, it holds for the sequences restricted to
``{i, j}``: a sequence is a prefix of another when no message of the first is missing from
the second and every two of its messages are in the same order in both. The projection of
a run with any number of messages onto two of them is a run of this system: each end's
tables act per packet identifier and in-flight identifiers are distinct (theorem
``proto.unique-packet-identifiers``), so steps of other messages leave ``i``'s and ``j``'s
states alone; a first-in first-out channel restricted to some packets is first-in
first-out; a lost connection loses everything; re-sending in sending order
[MQTT-4.6.0-1] restricts to re-sending in sending order. ``j`` either has its own
identifier or reuses ``i``'s after ``i`` completed: this module checks both systems
(``shared_identifier``). So the two-message proofs give the claim for any number of QoS 2
messages, over any number of connection losses with the session resumed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

import z3

from pubproof.model.explore import Environment, Explorer, Mutations
from pubproof.model.flows import (
    Method,
    ReceiverAction,
    ReceiverInput,
    ReceiverState,
    SenderAction,
    SenderInput,
    SenderState,
    Step,
)

RA, RI, RS = ReceiverAction, ReceiverInput, ReceiverState
SA, SI, SS = SenderAction, SenderInput, SenderState

CAPACITY = 4
MESSAGES = (1, 2)
SENDER_INDEX = {state: index for index, state in enumerate(SenderState)}
RECEIVER_INDEX = {state: index for index, state in enumerate(ReceiverState)}
_SENDS = {RA.SEND_PUBACK: "PUBACK", RA.SEND_PUBREC: "PUBREC", RA.SEND_PUBCOMP: "PUBCOMP"}
_ACK_CODE = {"PUBACK": 0, "PUBREC": 2, "PUBCOMP": 4}  # + identifier (1 or 2)
_ACK_INPUT = {"PUBACK": SI.PUBACK, "PUBREC": SI.PUBREC, "PUBCOMP": SI.PUBCOMP}


@dataclass(frozen=True, slots=True, kw_only=True)
class Product:
    """Two messages through one sender and a receiver running Method A and Method B."""

    qos: tuple[int, int] = (2, 2)
    shared_identifier: bool = False  # the second message reuses the first one's identifier
    reorder: bool = False  # may a channel deliver out of order (and across connections)?
    a_mutations: Mutations = field(default_factory=Mutations)
    b_mutations: Mutations = field(default_factory=Mutations)
    sender_mutations: Mutations = field(default_factory=Mutations)

    def identifier(self, message: int) -> int:
        return 1 if self.shared_identifier else message


# The encoding is written once and evaluated two ways: over Z3 terms (the transition
# relation the proof checks) and over Python integers (the successor function that
# enumerates the reachable states). So the states Z3 is asked about are exactly the ones
# the relation it checks produces.
Term: TypeAlias = z3.ArithRef | int
Cond: TypeAlias = z3.BoolRef | bool
State: TypeAlias = Mapping[str, Term]


def _ite(cond: Cond, then: Term, other: Term) -> Term:
    if isinstance(cond, bool):
        return then if cond else other
    return z3.If(cond, then, other)


def _all(conds: Sequence[Cond]) -> Cond:
    if all(isinstance(c, bool) for c in conds):
        return all(conds)
    return z3.And([c for c in conds if c is not True])


def _any(conds: Sequence[Cond]) -> Cond:
    if all(isinstance(c, bool) for c in conds):
        return any(conds)
    return z3.Or([c for c in conds if c is not False])


def names(product: Product) -> tuple[str, ...]:
    """The state variables of the product (identifier-indexed ones once per identifier)."""
    ids = sorted({product.identifier(m) for m in MESSAGES})
    out = ["pub", "conn", "diverged", "overflow"]
    out += [f"{v}{m}" for m in MESSAGES for v in ("s", "done")]
    out += [f"{v}{i}" for i in ids for v in ("ra", "sa", "rb", "sb")]
    out += [f"to_r{k}" for k in range(CAPACITY)] + ["to_r_len"]
    out += [f"to_s{k}" for k in range(CAPACITY)] + ["to_s_len"]
    out += [f"{v}{e}" for e in ("A", "B") for v in ("c1_", "c2_", "first_")]
    return tuple(out)


@dataclass(slots=True)
class _Move:
    """One transition: the conditions under which it is enabled, and what it changes."""

    x: State
    guard: list[Cond] = field(default_factory=list)
    ch: dict[str, Term] = field(default_factory=dict)

    def get(self, name: str) -> Term:
        return self.ch.get(name, self.x[name])

    def push(self, channel: str, code: int) -> None:
        length = self.get(f"{channel}_len")
        for k in range(CAPACITY):
            self.ch[f"{channel}{k}"] = _ite(length == k, code, self.get(f"{channel}{k}"))
        self.ch["overflow"] = _ite(length >= CAPACITY, 1, self.get("overflow"))
        self.ch[f"{channel}_len"] = _ite(length < CAPACITY, length + 1, length)

    def take(self, channel: str, index: int) -> None:
        slots = [self.get(f"{channel}{k}") for k in range(CAPACITY)]
        rest = [*slots[:index], *slots[index + 1 :], 0]
        for k in range(CAPACITY):
            self.ch[f"{channel}{k}"] = rest[k]
        self.ch[f"{channel}_len"] = self.get(f"{channel}_len") - 1

    def deliver(self, end: str, message: Term) -> None:
        for m in MESSAGES:
            count = f"c{m}_{end}"  # saturates at 2: a second delivery is already bad
            self.ch[count] = _ite(_all([message == m, self.get(count) < 2]),
                                  self.get(count) + 1, self.get(count))  # fmt: skip
        first = f"first_{end}"
        self.ch[first] = _ite(_all([self.get(first) == 0, message != 0]), message, self.get(first))


def _lookups(product: Product) -> tuple[Explorer, Explorer, Explorer]:
    a = Explorer(Environment(method=Method.A), product.a_mutations)
    b = Explorer(Environment(method=Method.B), product.b_mutations)
    sender = Explorer(Environment(), product.sender_mutations)
    return a, b, sender


def _receive(
    product: Product, x: State, *, event: ReceiverInput, ident: int, message: int | None,
    guard: list[Cond], take: Callable[[_Move], None],
) -> list[_Move]:  # fmt: skip
    """Every way one packet (PUBLISH of ``message`` or PUBREL of ``ident``) reaches the
    receiver: one move per pair of Method A and Method B states of its identifier."""
    rule_a, rule_b, _ = _lookups(product)
    moves = []
    for state_a in (RS.FREE, RS.STORED):
        for state_b in (RS.FREE, RS.ID_HELD):
            move = _Move(x, guard=[*guard, x[f"ra{ident}"] == RECEIVER_INDEX[state_a],
                                   x[f"rb{ident}"] == RECEIVER_INDEX[state_b]])  # fmt: skip
            take(move)
            steps = rule_a.receiver_rule(state_a, event), rule_b.receiver_rule(state_b, event)
            sends = [[_SENDS[a] for a in s.actions if a in _SENDS] if s else None for s in steps]
            if sends[0] != sends[1]:
                move.ch["diverged"] = 1
            for end, step in zip(("A", "B"), steps, strict=True):
                if step is None:
                    continue  # the table leaves the pair undefined: the packet is dropped
                state, store = ("ra", "sa") if end == "A" else ("rb", "sb")
                for action in step.actions:
                    if action is RA.DELIVER and message is not None:
                        move.deliver(end, message)
                    elif action is RA.STORE and message is not None:
                        move.ch[f"{store}{ident}"] = message
                    elif action is RA.DELIVER_STORED:
                        move.deliver(end, move.get(f"{store}{ident}"))
                        move.ch[f"{store}{ident}"] = 0
                move.ch[f"{state}{ident}"] = RECEIVER_INDEX[step.next]  # type: ignore[index]
            for kind in sends[0] or ():
                move.push("to_s", _ACK_CODE[kind] + ident)
            moves.append(move)
    return moves


def _sender_sends(move: _Move, product: Product, message: int, step: Step) -> None:
    ident = product.identifier(message)
    for action in step.actions:
        if action in (SA.SEND_PUBLISH, SA.RESEND_PUBLISH):
            move.push("to_r", message)  # codes 1, 2: PUBLISH of message 1, 2
        elif action is SA.SEND_PUBREL:
            move.push("to_r", 2 + ident)  # codes 3, 4: PUBREL of identifier 1, 2
        elif action is SA.COMPLETE:
            move.ch[f"done{message}"] = 1


def moves(product: Product, x: State) -> list[_Move]:
    """Every transition of the product from ``x`` (enabled or not: see each guard)."""
    _, _, rules = _lookups(product)
    out: list[_Move] = []
    free = SENDER_INDEX[SS.FREE]

    # The application publishes its next message; with one identifier for both, the second
    # waits until the first has freed it [MQTT-2.3.1-2].
    for message in MESSAGES:
        event = SI.PUBLISH_QOS1 if product.qos[message - 1] == 1 else SI.PUBLISH_QOS2
        step = rules.sender_rule(SS.FREE, event)
        assert step is not None
        waits = [x["s1"] == free] if product.shared_identifier and message == 2 else []
        move = _Move(x, guard=[x["pub"] == message - 1, x["conn"] == 1,
                               x[f"s{message}"] == free, *waits])  # fmt: skip
        move.ch["pub"] = message
        move.ch[f"s{message}"] = SENDER_INDEX[step.next]  # type: ignore[index]
        _sender_sends(move, product, message, step)
        out.append(move)

    # A packet reaches the receiver: index 0 of a FIFO channel, any index if it reorders.
    for index in range(CAPACITY if product.reorder else 1):
        at, present = x[f"to_r{index}"], x["to_r_len"] > index

        def take_r(move: _Move, i: int = index) -> None:
            move.take("to_r", i)

        for message in MESSAGES:
            arrives = (RI.PUBLISH_QOS0, RI.PUBLISH_QOS1, RI.PUBLISH_QOS2)[product.qos[message - 1]]
            out += _receive(product, x, event=arrives, ident=product.identifier(message),
                            message=message, guard=[present, at == message],
                            take=take_r)  # fmt: skip
        for ident in sorted({product.identifier(m) for m in MESSAGES}):
            out += _receive(product, x, event=RI.PUBREL, ident=ident, message=None,
                            guard=[present, at == 2 + ident], take=take_r)  # fmt: skip

    # A packet reaches the sender; it is about the message that holds its identifier now.
    for index in range(CAPACITY if product.reorder else 1):
        at, present = x[f"to_s{index}"], x["to_s_len"] > index
        for kind, base in _ACK_CODE.items():
            for message in MESSAGES:
                ident = product.identifier(message)
                holder: list[Cond] = []
                if product.shared_identifier:
                    holder = [x["pub"] == 2] if message == 2 else [x["pub"] < 2]
                for state in SenderState:
                    move = _Move(x, guard=[present, at == base + ident, *holder,
                                           x[f"s{message}"] == SENDER_INDEX[state]])  # fmt: skip
                    move.take("to_s", index)
                    step = rules.sender_rule(state, _ACK_INPUT[kind])
                    if step is not None:
                        move.ch[f"s{message}"] = SENDER_INDEX[step.next]  # type: ignore[index]
                        _sender_sends(move, product, message, step)
                    out.append(move)

    # The connection is lost, with what is in flight (a reordering network may deliver it
    # later instead).
    lost = _Move(x, guard=[x["conn"] == 1])
    lost.ch["conn"] = 0
    for channel in ("to_r", "to_s"):
        lost.ch[f"{channel}_len"] = 0
        for k in range(CAPACITY):
            lost.ch[f"{channel}{k}"] = 0
    out.append(lost)
    if product.reorder:
        out.append(_Move(x, guard=[x["conn"] == 1], ch={"conn": 0}))

    # Reconnect, session resumed: re-send in the order the sender's mutations say (by
    # default the original sending order [MQTT-4.6.0-1]).
    order = tuple(reversed(MESSAGES)) if product.sender_mutations.resend_reversed else MESSAGES
    for s1 in SenderState:
        for s2 in SenderState:
            states = {1: s1, 2: s2}
            move = _Move(x, guard=[x["conn"] == 0, x["s1"] == SENDER_INDEX[s1],
                                   x["s2"] == SENDER_INDEX[s2]])  # fmt: skip
            move.ch["conn"] = 1
            for message in order:
                step = rules.sender_rule(states[message], SI.RESUME)
                assert step is not None
                move.ch[f"s{message}"] = SENDER_INDEX[step.next]  # type: ignore[index]
                _sender_sends(move, product, message, step)
            out.append(move)
    return out


def initial(product: Product) -> dict[str, int]:
    return {n: (1 if n == "conn" else 0) for n in names(product)}


def bad_conditions(x: State) -> dict[str, Cond]:
    """The bad states, by name: A's deliveries not a prefix of B's, a message delivered
    twice, the two differing once the sender has completed both, the methods answering
    differently, or a channel over its bound."""
    counts = [(m, x[f"c{m}_A"], x[f"c{m}_B"]) for m in MESSAGES]
    return {
        "the methods send different packets": x["diverged"] == 1,
        "a channel exceeds its bound": x["overflow"] == 1,
        **{f"message {m} delivered twice": _any([a > 1, b > 1]) for m, a, b in counts},
        **{f"Method A delivered message {m} before Method B": a > b for m, a, b in counts},
        "Method A delivered first a message Method B did not": _all(
            [x["first_A"] != 0, x["first_A"] != x["first_B"]]
        ),
        "the sequences differ once both messages are complete": _all(
            [x["done1"] == 1, x["done2"] == 1, _any([a != b for _, a, b in counts])]
        ),
    }


def bad(x: State) -> Cond:
    return _any(list(bad_conditions(x).values()))


def reachable(product: Product, limit: int = 200_000) -> tuple[list[tuple[int, ...]], str | None]:
    """Every state the product reaches (breadth first), or, as soon as one is bad, the
    states seen so far and the name of what is bad about it."""
    order = names(product)
    start = initial(product)
    seen = {tuple(start[n] for n in order)}
    queue: deque[dict[str, int]] = deque([start])
    while queue:
        x = queue.popleft()
        broken = [name for name, cond in bad_conditions(x).items() if cond]
        if broken:
            return sorted(seen), broken[0]
        for move in moves(product, x):
            if _all(move.guard):
                y = {n: int(move.get(n)) for n in order}
                key = tuple(y[n] for n in order)
                if key not in seen:
                    if len(seen) >= limit:
                        raise RuntimeError(f"more than {limit} states")
                    seen.add(key)
                    queue.append(y)
    return sorted(seen), None


def check_product(product: Product) -> tuple[Literal["proved", "refuted"], str]:
    """Prove the claim by an inductive invariant that Z3 checks, or refute it.

    The invariant is the set of reachable states, enumerated with the encoding's own
    successor function. Z3 then checks, against the symbolic transition relation built
    from the tables, that the initial state is in the set, that the set is closed under
    every transition (``Inv(x) and T(x, y) and not Inv(y)`` is unsatisfiable) and that no
    state in it is bad. Those three checks are the proof; the enumeration only proposes
    the invariant, so a mistake in it can make the proof fail, never pass wrongly.
    """
    order = names(product)
    states, broken = reachable(product)
    shape = "one identifier reused" if product.shared_identifier else "two identifiers"
    if broken is not None:
        return "refuted", f"reachable ({shape}, {product.qos}): {broken}"
    x: dict[str, Term] = {n: z3.Int(n) for n in order}
    y: dict[str, Term] = {n: z3.Int(f"{n}'") for n in order}

    def inv(v: State) -> z3.BoolRef:
        return z3.Or([z3.And([v[n] == value for n, value in zip(order, s, strict=True)])
                      for s in states])  # fmt: skip

    relation = z3.Or([
        z3.And(*[g for g in m.guard if g is not True], *[y[n] == m.get(n) for n in order])
        for m in moves(product, x)
        if not any(g is False for g in m.guard)
    ])  # fmt: skip
    obligations = {
        "the initial state is in the invariant": z3.Not(inv(initial(product))),
        "the invariant is closed under every transition": z3.And(inv(x), relation, z3.Not(inv(y))),
        "no state of the invariant is bad": z3.And(inv(x), bad(x)),
    }
    for what, negation in obligations.items():
        solver = z3.Solver()
        solver.add(negation)
        if solver.check() != z3.unsat:
            return "refuted", f"Z3 could not show that {what} ({shape})"
    return "proved", (
        f"inductive invariant of {len(states)} states ({shape}, {len(order)} variables) "
        "checked by Z3: initial, closed under the transition relation, excludes every bad state"
    )
