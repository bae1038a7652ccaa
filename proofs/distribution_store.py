"""The retained store's table in Z3: one topic's retained message over any sequence of inputs.

Rules / theory of operation
---------------------------
:func:`pubproof.model.retained.retained_table` is the store of one topic as data: per
(state, input) the next state, the action and the other outcomes the text allows. The
encoding reads that table, entry by entry (nothing is restated here): the state is the
table's state and the message held (an integer, 0 for none); an input is one of the
table's inputs with the message it brings (a fresh positive integer) and a choice among the
entry's outcomes (0: the oracle's action; 1, 2, ...: the alternatives, when the variant
allows them). STORE holds the input's message, DELETE holds none, KEEP changes nothing; an
input the table does not define cannot happen (the model raises on it). A :class:`Store`
is the table of an edition under readings, with the entries a mutant patches.

Two ghost variables say what the claim expects: ``last`` is the message of the last RETAIN 1
publication with a payload, or 0 when the last one was empty (or none came), and ``gone``
that a DISCARD or EXPIRE removed it since. :func:`claim` is the invariant the theorems check
(by induction, and by bounded model checking for the shortest counterexample):
the store holds ``last`` exactly when it is a message and was not removed, and nothing
otherwise.

:func:`drift` cross-checks the encoding (the oracle's choice) with the model's
:class:`~pubproof.model.retained.RetainedStore` on every input from every state the store
can be in (no message, a message held at QoS 0, at QoS 1 with an expiry), a second topic
beside it that no input may touch. The store alone decides that only a QoS 0 message may be
discarded (3.1: any) and only one with a Message Expiry Interval expire; the table lets
every held one go, which only widens what is proved.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from pubproof.model.editions import Edition
from pubproof.model.messages import Message, Properties, Publication
from pubproof.model.retained import (
    RetainedAction,
    RetainedInput,
    RetainedState,
    RetainedStep,
    RetainedStore,
    retained_table,
)
from pubproof.proofs.z3env import Expr, evaluate, z3

S, IN, A = RetainedState, RetainedInput, RetainedAction
STATES, INPUTS = tuple(S), tuple(IN)
Entry = tuple[tuple[RetainedState, RetainedInput], RetainedStep]


@dataclass(frozen=True, slots=True, kw_only=True)
class Store:
    """The retained table of ``edition`` under ``readings``, with ``patch`` applied."""

    edition: Edition
    readings: tuple[tuple[str, str], ...] = ()
    patch: tuple[Entry, ...] = ()
    alternatives: bool = True  # the outcomes the text allows beside the oracle's action

    def table(self) -> Mapping[tuple[RetainedState, RetainedInput], RetainedStep]:
        found = dict(retained_table(self.edition, dict(self.readings)))
        found.update(dict(self.patch))
        return found

    def describe(self) -> str:
        reading = "".join(f" {k}={v}" for k, v in self.readings)
        return f"{self.edition.value}{reading}"

    def outcomes(self, step: RetainedStep) -> list[tuple[RetainedState, RetainedAction]]:
        first = [(step.next, step.action)]
        return first + list(step.alternatives) if self.alternatives else first


@dataclass(frozen=True, slots=True)
class World:
    """One topic's store and the claim's ghosts, as Z3 terms."""

    state: Expr  # index into RetainedState
    held: Expr  # the message held, 0 for none
    last: Expr  # the last RETAIN 1 message with a payload (0: the last was empty, or none)
    gone: Expr  # a DISCARD or EXPIRE removed it since

    @classmethod
    def fresh(cls, tag: str) -> World:
        return cls(z3.Int(f"state{tag}"), z3.Int(f"held{tag}"), z3.Int(f"last{tag}"),
                   z3.Bool(f"gone{tag}"))  # fmt: skip

    @classmethod
    def initial(cls) -> World:
        return cls(z3.IntVal(STATES.index(S.NONE)), z3.IntVal(0), z3.IntVal(0), z3.BoolVal(False))


@dataclass(frozen=True, slots=True)
class Input:
    """One input to the store: its kind, the message it brings, the outcome chosen."""

    kind: Expr  # index into RetainedInput
    message: Expr  # a positive integer
    choice: Expr  # 0: the oracle's action; n: the n-th alternative

    @classmethod
    def fresh(cls, tag: str) -> Input:
        return cls(z3.Int(f"input{tag}"), z3.Int(f"message{tag}"), z3.Int(f"choice{tag}"))


def _is(term: Expr, member: RetainedState | RetainedInput) -> Expr:
    index = STATES.index(member) if isinstance(member, S) else INPUTS.index(member)
    return term == index


def step(store: Store, x: World, i: Input) -> tuple[Expr, World]:
    """Whether the input is defined in ``x`` (a table entry and an allowed outcome), and
    the world after it."""
    defined: list[Expr] = []
    state: Expr = x.state
    held: Expr = x.held
    for (before, event), entry in store.table().items():
        for number, (after, action) in enumerate(store.outcomes(entry)):
            here = z3.And(_is(x.state, before), _is(i.kind, event), i.choice == number)
            defined.append(here)
            state = z3.If(here, STATES.index(after), state)
            effect = {A.STORE: i.message, A.DELETE: z3.IntVal(0), A.KEEP: x.held}[action]
            held = z3.If(here, effect, held)
    published = z3.Or(_is(i.kind, IN.RETAIN), _is(i.kind, IN.RETAIN_EMPTY))
    last = z3.If(_is(i.kind, IN.RETAIN), i.message,
                 z3.If(_is(i.kind, IN.RETAIN_EMPTY), z3.IntVal(0), x.last))  # fmt: skip
    removed = z3.Or(_is(i.kind, IN.DISCARD), _is(i.kind, IN.EXPIRE))
    gone = z3.If(published, z3.BoolVal(False), z3.Or(x.gone, removed))
    return z3.And(i.message > 0, z3.Or(*defined)), World(state, held, last, gone)


def claim(x: World) -> Expr:
    """The store holds the last retained message with a payload, unless a discard or an
    expiry removed it; otherwise nothing."""
    holds = z3.And(_is(x.state, S.HELD), x.held == x.last, x.last > 0, z3.Not(x.gone))
    empty = z3.And(_is(x.state, S.NONE), x.held == 0, z3.Or(x.last == 0, x.gone))
    return z3.Or(holds, empty)


# -- the cross-check with the model --------------------------------------------------------

TOPIC, OTHER = "t", "u"


def _message(seq: int, topic: str, retain: bool, payload: bytes, qos: int = 0) -> Message:
    expiry = 1 if qos else None  # the QoS 1 one may expire (5.0)
    return Message(
        seq=seq,
        received_at=0,
        publication=Publication(
            publisher="pub", topic=topic, payload=payload, qos=qos, retain=retain,
            properties=Properties(message_expiry_interval=expiry),
        ),
    )  # fmt: skip


def _apply(store: RetainedStore, event: RetainedInput, incoming: Message) -> bool:
    """The model's store takes ``event`` (False when it refuses: undefined or not allowed)."""
    try:
        if event is IN.DISCARD:
            store.discard(TOPIC)
        elif event is IN.EXPIRE:
            if not store.expire(now=1_000):
                raise ValueError("nothing expires")
        elif event is not IN.SESSION_ENDS:
            # a Session ending never reaches the store: the model's server leaves it as it
            # is [MQTT-3.1.2-7] (DistributionModel ends the session alone)
            store.apply(incoming)
    except ValueError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class Drift:
    store: Store
    before: str
    event: RetainedInput
    says: str

    def describe(self) -> str:
        return (
            f"the Z3 encoding and the model disagree under {self.store.describe()}: from "
            f"{self.before}, {self.event.value}: {self.says}"
        )


@cache
def drift(store: Store) -> Drift | None:
    """The first (state, input) on which the encoding's oracle choice and the model's
    ``RetainedStore`` end in another state, or touch the other topic."""
    x, i = World.fresh("_x"), Input.fresh("_x")
    defined, y = step(store, x, i)
    other = _message(99, OTHER, True, b"o")
    starts: list[tuple[str, Message | None]] = [
        ("no message", None),
        ("a QoS 0 message", _message(1, TOPIC, True, b"a")),
        ("a QoS 1 message with an expiry", _message(1, TOPIC, True, b"a", qos=1)),
    ]
    for label, first in starts:
        for event in INPUTS:
            model = RetainedStore(store.edition, dict(store.readings))
            model.apply(other)
            if first is not None:
                model.apply(first)
            incoming = _message(2, TOPIC, event is not IN.NOT_RETAINED,
                                b"" if event is IN.RETAIN_EMPTY else b"b")  # fmt: skip
            took = _apply(model, event, incoming)
            values = [
                (x.state, STATES.index(S.NONE if first is None else S.HELD)),
                (x.held, 0 if first is None else 1), (x.last, 0), (x.gone, 0),
                (i.kind, INPUTS.index(event)), (i.message, 2), (i.choice, 0),
            ]  # fmt: skip
            encoded = bool(evaluate(defined, values))
            if took and not encoded:
                return Drift(store, label, event, "the model takes it, the table has no entry")
            if not took:
                # the store refuses what the table lets happen only where the store alone
                # decides: discarding a message that is not QoS 0 (3.1.1, 5.0), expiring
                # one without a Message Expiry Interval
                if encoded and event not in (IN.DISCARD, IN.EXPIRE):
                    return Drift(store, label, event, "the table takes it, the model refuses")
                continue
            held = model.get(TOPIC)
            state = evaluate(y.state, values)
            number = evaluate(y.held, values)
            model_number = 0 if held is None else held.seq
            if (STATES[state], number) != (S.HELD if held else S.NONE, model_number):
                return Drift(store, label, event, f"the encoding holds message {number}, the "
                             f"model message {model_number}")  # fmt: skip
            if model.get(OTHER) != other:
                return Drift(store, label, event, "the model touched another topic")
    return None


def drift_cases() -> int:
    return 3 * len(INPUTS)


__all__ = [
    "Drift",
    "Input",
    "Store",
    "World",
    "claim",
    "drift",
    "drift_cases",
    "step",
]
