"""Theorems on the retained store: after any sequence of publications, per topic, the last
retained message with a payload, or none.

Each check runs two engines on the encoding of :mod:`.distribution_store` (the model's
``retained_table``, read entry by entry) in every edition and reading it covers: an
induction (the claim holds initially and every table entry keeps it: a proof for sequences
of any length) and bounded model checking up to :data:`DEPTH` inputs from the empty store,
which gives the shortest sequence that breaks the claim. They must agree. A proof is then
cross-checked with the model's ``RetainedStore``, and the claim's premises must be met (a
store that holds a message, and one that holds none after holding one).

A counterexample is a trace of the server model: the publisher's PUBLISH packets (RETAIN 1
with a payload, RETAIN 1 empty, RETAIN 0), its session ending, the server discarding the
message or the clock passing its expiry, then a new subscriber; the last entry,
``retained-store``, says what the table under test holds at that point, and what a server
keeping it would send the subscriber follows (for the model's own table, exactly what the
model sends).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from pubproof.model import distribution_rules as D
from pubproof.model import distribution_rules50 as D50
from pubproof.model.editions import Edition
from pubproof.model.retained import RetainedAction, RetainedInput, RetainedState, RetainedStep
from pubproof.proofs.distribution_common import ALL, PUBLISHER, SUBSCRIBER, drain, rule_ids
from pubproof.proofs.distribution_run import (
    Action,
    Advance,
    Connect,
    Discard,
    Entry,
    Lost,
    Publish,
    Run,
    Subscribe,
    options,
)
from pubproof.proofs.distribution_store import (
    INPUTS,
    STATES,
    TOPIC,
    Input,
    Store,
    World,
    claim,
    drift,
    drift_cases,
    step,
)
from pubproof.proofs.registry import Broken, Result, theorem
from pubproof.proofs.z3env import Model, search, z3

S, IN, A = RetainedState, RetainedInput, RetainedAction
V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50
#: the longest sequence of inputs the bounded search tries
DEPTH = 3


@dataclass(frozen=True, slots=True, kw_only=True)
class Stores:
    """The tables a theorem checks: one per edition and reading."""

    stores: tuple[Store, ...]

    def patched(self, *entries: tuple[tuple[RetainedState, RetainedInput], RetainedStep]) -> Stores:
        return Stores(stores=tuple(replace(s, patch=(*s.patch, *entries)) for s in self.stores))


def _every_state(
    event: RetainedInput, after: RetainedState, action: RetainedAction
) -> tuple[tuple[tuple[RetainedState, RetainedInput], RetainedStep], ...]:
    return tuple(((s, event), RetainedStep(next=after, action=action, rules=())) for s in STATES)


# -- the two engines ----------------------------------------------------------------------


def inductive(store: Store) -> bool:
    """Whether the claim holds initially and every defined input keeps it."""
    x, i = World.fresh(""), Input.fresh("")
    defined, y = step(store, x, i)
    initial = search(z3.Not(claim(World.initial())))
    kept = search(z3.And(claim(x), defined, z3.Not(claim(y))))
    return (
        initial.model is None
        and kept.model is None
        and "unknown"
        not in (
            initial.outcome,
            kept.outcome,
        )
    )


def shortest(store: Store) -> tuple[list[int], list[int], Model] | None:
    """The shortest sequence of inputs (kinds, choices) from the empty store after which
    the claim fails, up to ``DEPTH``; None if there is none."""
    world, defined, inputs = World.initial(), [], []
    for length in range(1, DEPTH + 1):
        i = Input.fresh(f"_{length}")
        ok, world = step(store, world, i)
        defined += [ok, i.message == length]  # each input brings a new message
        inputs.append(i)
        answer = search(z3.And(*defined, z3.Not(claim(world))))
        if answer.model is not None:
            kinds = [int(answer.model.eval(n.kind).as_long()) for n in inputs]
            choices = [int(answer.model.eval(n.choice).as_long()) for n in inputs]
            return kinds, choices, answer.model
    return None


def reaches(store: Store, state: RetainedState, after_held: bool) -> bool:
    """Whether some sequence leaves the store in ``state`` (after holding a message, when
    ``after_held``): the claim's cases are met."""
    world, defined, held_once = World.initial(), [], z3.BoolVal(False)
    for length in range(1, DEPTH + 1):
        i = Input.fresh(f"_r{length}")
        ok, world = step(store, world, i)
        defined += [ok, i.message == length]
        held_once = z3.Or(held_once, world.held > 0)
        target = [world.state == STATES.index(state), *([held_once] if after_held else [])]
        if search(z3.And(*defined, *target)).model is not None:
            return True
    return False


# -- counterexamples as traces ------------------------------------------------------------


def _actions(store: Store, kinds: Sequence[int]) -> tuple[list[Action], dict[int, bytes]]:
    """The scenario of a sequence of inputs; the payload of each message by its number."""
    actions: list[Action] = [Connect(PUBLISHER)]
    payloads: dict[int, bytes] = {}
    expiry = 1 if store.edition is V50 else None
    for number, kind in enumerate(kinds, start=1):
        event = INPUTS[kind]
        payload = b"" if event is IN.RETAIN_EMPTY else f"m{number}".encode()
        payloads[number] = payload
        if event in (IN.RETAIN, IN.RETAIN_EMPTY, IN.NOT_RETAINED):
            retain = event is not IN.NOT_RETAINED
            actions.append(Publish(PUBLISHER, TOPIC, retain=retain, payload=payload,
                                   expiry=expiry))  # fmt: skip
        elif event is IN.SESSION_ENDS:
            actions += [Lost(PUBLISHER), Connect(PUBLISHER)]  # a clean session ends with it
        elif event is IN.DISCARD:
            actions.append(Discard(TOPIC))
        else:
            actions.append(Advance(1_000))
    return actions, payloads


def trace_of(store: Store, kinds: Sequence[int], held: int) -> list[Entry]:
    """The scenario on the model as far as the model takes it, then a new subscriber, what
    the table under test holds (message ``held``) and the copy a server holding it sends:
    the model's own when the model holds the same message."""
    actions, payloads = _actions(store, kinds)
    run = Run(store.edition, dict(store.readings))
    for action in actions:
        try:
            run.do(action)
        except ValueError:  # the model does not let it happen (a discard not allowed)
            run.trace.append(not_taken(action))
    payload = payloads.get(held)
    run.trace.append(store_note(payload))
    run.do(Subscribe(SUBSCRIBER, ((TOPIC, options(0)),)))
    owed = run.owed(SUBSCRIBER)
    if [c.message.publication.payload for c in owed] == ([] if payload is None else [payload]):
        return drain(run).trace
    if payload is not None:
        run.trace.append(table_copy(run, payload))
    return run.trace


def not_taken(action: Action) -> Entry:
    """The note of an input the model does not let happen (the table under test takes it)."""
    return {"event": "not-taken", "by": "the model", "action": repr(action)}


def store_note(payload: bytes | None) -> Entry:
    """The note of what the table under test holds (the payload; None: nothing)."""
    return {"event": "retained-store", "topic": TOPIC, "by": "the table under test",
            "holds": None if payload is None else payload.hex()}  # fmt: skip


def table_copy(run: Run, payload: bytes) -> Entry:
    """The retained copy a server whose store is the table under test sends the subscriber
    of :func:`trace_of` (QoS 0, as it subscribed), when the model does not."""
    copy: Entry = {"type": "PUBLISH", "dup": False, "qos": 0, "retain": True, "topic": TOPIC,
                   "packet_id": None, "payload_hex": payload.hex(), "dir": "s2c",
                   "conn": run.conn(SUBSCRIBER), "by": "the table under test"}  # fmt: skip
    if run.edition is V50:
        copy["properties"] = {}
    return copy


def _sequence(kinds: Sequence[int], choices: Sequence[int]) -> str:
    words = []
    for kind, choice in zip(kinds, choices, strict=True):
        alternative = f" (alternative {choice})" if choice else ""
        words.append(INPUTS[kind].value + alternative)
    return "; ".join(words)


def check_stores(stores: Stores) -> Result:
    """Both engines on every table; then non-vacuity and the cross-check."""
    lines = []
    for store in stores.stores:
        proved = inductive(store)
        found = shortest(store)
        if found is not None:
            kinds, choices, _ = found
            held = _held_after(store, kinds, choices)
            return Result(
                status="refuted",
                counterexample=trace_of(store, kinds, held),
                details=f"under {store.describe()}, after {_sequence(kinds, choices)}: the "
                f"table holds {'message ' + str(held) if held else 'nothing'}, against the "
                f"claim{' (the induction agrees)' if not proved else ''}",
            )
        if not proved:
            return Result(
                status="unknown",
                details=f"under {store.describe()} the claim is not inductive, yet no "
                f"sequence of up to {DEPTH} inputs breaks it",
            )
        for state, after in ((S.HELD, False), (S.NONE, True)):
            if not reaches(store, state, after):
                return Result(
                    status="failed",
                    counterexample=trace_of(store, [INPUTS.index(IN.RETAIN)], 1),
                    details=f"vacuous under {store.describe()}: no sequence leaves the store "
                    f"{state.value}{' after holding one' if after else ''}",
                )
        lines.append(store.describe())
    for store in stores.stores:
        found_drift = drift(replace(store, alternatives=False))
        if found_drift is not None:
            return Result(
                status="failed",
                counterexample=trace_of(store, [INPUTS.index(found_drift.event)], 0),
                details=found_drift.describe(),
            )
    return Result(
        status="proved",
        details=f"inductive under {', '.join(lines)} (every input of the table, any number of "
        f"them); no sequence of up to {DEPTH} inputs breaks it; the store both holds a "
        f"message and holds none after one; agrees with the model on {drift_cases()} "
        f"(state, input) pairs per table",
    )


def _held_after(store: Store, kinds: Sequence[int], choices: Sequence[int]) -> int:
    """The message the encoding holds after the inputs (evaluated step by step)."""
    world = World.initial()
    for number, (kind, choice) in enumerate(zip(kinds, choices, strict=True), start=1):
        _, world = step(store, world, Input(z3.IntVal(kind), z3.IntVal(number),
                                            z3.IntVal(choice)))  # fmt: skip
    return int(z3.simplify(world.held).as_long())


# -- the theorems --------------------------------------------------------------------------

EVERY = Stores(
    stores=(
        Store(edition=V31, readings=(("retained-empty-31", "delete"),)),
        Store(edition=V31, readings=(("retained-empty-31", "may-delete"),), alternatives=False),
        Store(edition=V311),
        Store(edition=V50),
    )
)
MAY_DELETE = Stores(stores=(Store(edition=V31, readings=(("retained-empty-31", "may-delete"),)),))

last_message = theorem(
    id="dist.retained.last-message",
    statement="After any sequence of publications on a topic, the retained store holds the "
    "last retained message with a payload, or none when the last retained one was empty (or "
    "none came); a RETAIN 0 message and a Session that ends leave it as it is, and only a "
    "discard (QoS 0; 3.1 any) or an expiry (5.0) removes it. In every edition, for every "
    "outcome the text allows (3.1 under retained-empty-31=may-delete: the oracle's, which "
    "deletes).",
    rules=rule_ids([D.RETAIN_STORE, D.RETAIN_STORE_31, D.RETAIN_EMPTY_DELETES,
                    D.RETAIN_EMPTY_NOT_STORED, D.RETAIN_FLAG0_UNTOUCHED,
                    D.RETAIN_NOT_SESSION_STATE, D.RETAIN_QOS0, D50.RETAIN_QOS0,
                    D50.RETAIN_EXPIRES, D50.RETAINED_NOT_SESSION]),
    editions=ALL,
    readings=("retained-empty-31",),
    method=f"z3 (induction) + bounded model checking ({DEPTH} inputs) + cross-check",
    model=EVERY,
    mutants=[
        Broken("empty-message-stored", "a zero-byte retained message is stored",
               EVERY.patched(*_every_state(IN.RETAIN_EMPTY, S.HELD, A.STORE))),
        Broken("retain-0-replaces", "a RETAIN 0 message replaces the retained one",
               EVERY.patched(*_every_state(IN.NOT_RETAINED, S.HELD, A.STORE))),
        Broken("session-end-deletes", "the retained message goes when a Session ends",
               EVERY.patched(((S.HELD, IN.SESSION_ENDS),
                              RetainedStep(next=S.NONE, action=A.DELETE, rules=())))),
        Broken("retain-keeps-the-old", "a new retained message does not replace the one held",
               EVERY.patched(((S.HELD, IN.RETAIN),
                              RetainedStep(next=S.HELD, action=A.KEEP, rules=())))),
    ],
)(check_stores)  # fmt: skip

empty_may_be_kept = theorem(
    id="dist.refute.retained-never-empty-31",
    statement="Under MQTT 3.1 with retained-empty-31=may-delete, every server the text allows "
    "holds the last retained message with a payload or none (expected refuted: 'may delete' "
    "lets a server keep the zero-length message as the retained one, and send it to a new "
    "subscriber).",
    rules=rule_ids([D.RETAIN_EMPTY_MAY_DELETE_31, D.RETAIN_STORE_31], (V31,)),
    editions=(V31,),
    readings=("retained-empty-31",),
    method=f"z3 (induction) + bounded model checking ({DEPTH} inputs)",
    expected="refuted",
    model=MAY_DELETE,
    mutants=[
        Broken("no-alternative", "the table without the outcome 'may delete' leaves open",
               MAY_DELETE.patched(*_every_state(IN.RETAIN_EMPTY, S.NONE, A.DELETE))),
    ],
)(check_stores)  # fmt: skip

RETAINED_THEOREMS = [last_message, empty_may_be_kept]

__all__ = [
    "DEPTH",
    "RETAINED_THEOREMS",
    "Stores",
    "check_stores",
    "not_taken",
    "store_note",
    "table_copy",
    "trace_of",
]
