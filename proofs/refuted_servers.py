"""Refuted runs of a distribution server: a ``dist.refute.*`` theorem's counterexample
replayed through the server it refutes, so that its page can show the failure it names.

Rules / theory of operation:

- The system a distribution refutation checks is a server model (its edition and readings,
  named by the trace's first row, ``server``) of one of three kinds:

  - an ordering theorem (:class:`~.distribution_ordering.Ordering`): the explorer of
    :mod:`.distribution_explore` on the theorem's scene of that server, from the initial
    world it searched (the subscriber connected and subscribed); its moves are the
    explorer's own (:func:`~.distribution_explore.successors`), its properties the
    theorem's judges of the copies sent (:func:`~.distribution_ordering.judges`);
  - a forwarding witness (:class:`~.distribution_forwarding.Forwarding`): the model server
    under the theorem's setting of that server; a move is what a client does or an event
    that happens, as the row says, or a copy the server owes sent (any of them: the rows
    tell them apart); the property is the theorem's: no copy above the QoS granted;
  - a retained-store theorem (:class:`~.distribution_retained.Stores`): the table under
    test (its Z3 encoding, evaluated step by step with the inputs' outcomes the text
    allows) beside the model server that carries the packets; its rows are the table's
    notes: what it holds, and the retained copy a server keeping it sends a new
    subscriber. The property is the encoding's own :func:`~.distribution_store.claim`.

- A move may record several rows (a PUBLISH at QoS 1 and its PUBACK; a CONNECT, its
  CONNACK and the copies re-sent): it is taken when its rows are the trace's next rows. A
  row no move records is :class:`~.refuted_runs.NotARun`.
- Several moves may record the same rows (the retained table's outcomes, which no packet
  shows): the replay keeps every world the trace leaves possible, and a property fails at
  the first row after which it is false in every one of them (the table's note of what it
  holds is where the trace decides).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Generic, TypeVar

from pubproof.model.editions import Edition
from pubproof.model.retained import RetainedInput
from pubproof.proofs.distribution_common import PUBLISHER, SUBSCRIBER
from pubproof.proofs.distribution_explore import Judge, Node, Scene, clone, start, successors
from pubproof.proofs.distribution_forwarding import Forwarding
from pubproof.proofs.distribution_ordering import Ordering, judges
from pubproof.proofs.distribution_retained import Stores, not_taken, store_note, table_copy
from pubproof.proofs.distribution_run import (
    Action,
    Advance,
    Discard,
    Entry,
    Lost,
    Publish,
    Run,
    Send,
    Subscribe,
    actions_of,
)
from pubproof.proofs.distribution_store import INPUTS, TOPIC, Input, Store, World, claim, step
from pubproof.proofs.refuted_run import NotARun, RefutedRun
from pubproof.proofs.z3env import z3

W = TypeVar("W")
IN = RetainedInput


@dataclass(frozen=True, slots=True, kw_only=True)
class System(Generic[W]):
    """A refuted server as the replay walks it: where it starts, its moves from a world (the
    worlds after each move that may record ``row`` first), its trace so far, its properties."""

    start: W
    moves: Callable[[W, Mapping[str, Any]], Iterator[W]]
    trace: Callable[[W], Sequence[Entry]]
    props: Mapping[str, Callable[[W], bool]]
    reason: Callable[[W], str]


def walk(trace: Sequence[Mapping[str, Any]], system: System[W]) -> RefutedRun:
    """``trace`` replayed through ``system``; the first row after which a property is false
    in every world the trace leaves possible, and why."""
    rows = [dict(row) for row in trace]
    at = _agree(rows, system.trace(system.start), 0)
    worlds = [system.start]
    failed_at: int | None = None
    failed: tuple[str, ...] = ()
    why = ""
    while at < len(rows):
        found = [
            (len(system.trace(after)), after)
            for world in worlds
            for after in system.moves(world, rows[at])
            if _agree(rows, system.trace(after), at) > at
        ]
        if not found:
            raise NotARun(f"row {at} of the trace is no move of the refuted system: {rows[at]}")
        at = max(n for n, _ in found)  # the moves that record the most rows (all, so far)
        worlds = [w for n, w in found if n == at]
        if failed_at is None:
            broken = tuple(n for n, holds in system.props.items() if not any(map(holds, worlds)))
            if broken:
                failed_at, failed, why = at - 1, broken, system.reason(worlds[0])
    return RefutedRun(rows=len(rows), delivered=((),) * len(rows), failed_at=failed_at,
                      failed=failed, reason=why, counted=False)  # fmt: skip


def _agree(rows: Sequence[Entry], recorded: Sequence[Entry], at: int) -> int:
    """How far ``recorded`` (a world's whole trace) is the trace, checked from row ``at``
    on; ``at`` when it records nothing new there or differs. At the start (``at`` 0) a
    difference is :class:`NotARun`."""
    if len(recorded) > at and list(recorded[at:]) == rows[at : len(recorded)]:
        return len(recorded)
    if at == 0:
        bad = next((i for i, e in enumerate(recorded) if i >= len(rows) or rows[i] != e), 0)
        shown = rows[bad] if bad < len(rows) else "the trace ends"
        raise NotARun(f"row {bad} of the trace is not where the refuted system starts: {shown}")
    return at


def _served(
    trace: Sequence[Mapping[str, Any]], edition: Edition, readings: Mapping[str, str]
) -> bool:
    server = trace[0] if trace else {}
    return server.get("edition") == edition.value and server.get("readings") == dict(readings)


def _first(
    walks: Sequence[Callable[[], RefutedRun]], trace: Sequence[Mapping[str, Any]]
) -> RefutedRun:
    """The run of the first system (of the theorem's, of the trace's server) that has it."""
    if not walks:
        raise NotARun(f"row 0 of the trace names a server the theorem does not check: "
                      f"{dict(trace[0]) if trace else 'no row'}")  # fmt: skip
    errors: list[NotARun] = []
    for one in walks:
        try:
            return one()
        except NotARun as error:
            errors.append(error)
    raise errors[-1]


# -- the ordering explorer ----------------------------------------------------------------


def _ordering(case: Ordering, scene: Scene) -> System[Node]:
    named = {_order_name(case, label): judge for label, judge in judges(case, scene).items()}

    def problems(node: Node) -> list[str]:
        sent = node.run.sent.get(SUBSCRIBER, [])
        found = [p for judge in named.values() for p in judge(sent)]
        return [p.message + (f" [{p.rule_id}]" if p.rule_id else "") for p in found]

    return System(
        start=start(scene, record=True),
        moves=lambda node, _row: (child for _, child in successors(scene, node)),
        trace=lambda node: node.run.trace,
        props={name: _keeps(judge) for name, judge in named.items()},
        reason=lambda node: "in the copies sent, " + "; ".join(problems(node)),
    )


def _keeps(judge: Judge) -> Callable[[Node], bool]:
    return lambda node: not judge(node.run.sent.get(SUBSCRIBER, []))


def _order_name(case: Ordering, label: str) -> str:
    if case.claim == "across-qos":
        return "in the order received, whatever the QoS"
    return f"the order of 4.6 ({label})"


# -- the model server under a forwarding setting ------------------------------------------


def _model_moves(run: Run, row: Mapping[str, Any]) -> Iterator[Run]:
    for action in actions_of(run, row):
        after = clone(run)
        try:
            after.do(action)
        except ValueError:  # the model does not let it happen: no move
            continue
        yield after


def _above_granted(run: Run) -> list[str]:
    """The copies sent the subscriber above the QoS granted to every subscription they are
    sent for, in words."""
    session = run.model.sessions.get(SUBSCRIBER)
    subscriptions = session.subscriptions if session is not None else {}
    found = []
    for copy in run.sent.get(SUBSCRIBER, []):
        granted = [subscriptions[f].granted_qos for f in copy.topic_filters if f in subscriptions]
        if granted and copy.qos > max(granted):
            kind = "retained " if copy.retain else ""
            found.append(f"the server sends a {kind}copy on {copy.topic!r} at QoS {copy.qos} to "
                         f"a subscription granted QoS {max(granted)}")  # fmt: skip
    return found


ABOVE = "no copy above the QoS granted"


def _forwarding(edition: Edition, readings: Mapping[str, str]) -> System[Run]:
    return System(
        start=Run(edition, dict(readings)),
        moves=_model_moves,
        trace=lambda run: run.trace,
        props={ABOVE: lambda run: not _above_granted(run)},
        reason=lambda run: "; ".join(_above_granted(run)),
    )


# -- the retained table under test --------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Table:
    """A server whose retained store is the table under test: the model carrying the
    packets, the table's world, the inputs so far and their payloads, and the retained
    copy it owes a new subscriber (None: none)."""

    run: Run
    world: World
    inputs: int = 0
    payloads: Mapping[int, bytes] = field(default_factory=dict)
    owes: bytes | None = None

    def holds(self) -> bytes | None:
        held = _number(self.world.held)
        return self.payloads[held] if held else None


def _number(term: Any) -> int:
    return int(z3.simplify(term).as_long())


def _input(action: Action) -> RetainedInput | None:
    """The table's input an action of the scenario (:func:`.distribution_retained.trace_of`)
    brings: the publisher's PUBLISH, its session ending, a discard, the clock."""
    if isinstance(action, Publish) and action.client == PUBLISHER and action.topic == TOPIC:
        if not action.retain:
            return IN.NOT_RETAINED
        return IN.RETAIN if action.payload else IN.RETAIN_EMPTY
    if isinstance(action, Lost) and action.client == PUBLISHER:
        return IN.SESSION_ENDS
    if isinstance(action, Discard):
        return IN.DISCARD
    return IN.EXPIRE if isinstance(action, Advance) else None


def _taken(store: Store, table: Table, action: Action, run: Run) -> Iterator[Table]:
    """The table's outcomes of ``action`` (every one the store allows), ``run`` after it."""
    event = _input(action)
    if event is None:
        yield replace(table, run=run)
        return
    number = table.inputs + 1
    payload = action.payload if isinstance(action, Publish) else b""
    choices = max(len(store.outcomes(entry)) for entry in store.table().values())
    for choice in range(choices):
        given = Input(z3.IntVal(INPUTS.index(event)), z3.IntVal(number), z3.IntVal(choice))
        defined, world = step(store, table.world, given)
        if z3.is_true(z3.simplify(defined)):
            yield Table(run=run, world=world, inputs=number,
                        payloads={**table.payloads, number: payload}, owes=table.owes)  # fmt: skip


def _table_moves(store: Store, table: Table, row: Mapping[str, Any]) -> Iterator[Table]:
    run = table.run
    if row.get("event") == "retained-store":  # the table says what it holds
        after = clone(run)
        after.trace.append(store_note(table.holds()))
        yield replace(table, run=after)
    elif row.get("by") == "the table under test" and table.owes is not None:
        after = clone(run)
        after.trace.append(table_copy(after, table.owes))
        yield replace(table, run=after, owes=None)
    elif row.get("event") == "not-taken":  # the model refuses; the table takes the input
        for refused in (Discard(TOPIC), Advance(1_000)):
            after = clone(run)
            after.trace.append(not_taken(refused))
            yield from _taken(store, table, refused, after)
    for action in actions_of(run, row):
        after = clone(run)
        try:
            after.do(action)
        except ValueError:
            continue
        for moved in _taken(store, table, action, after):
            yield _owing(moved, action)


def _owing(table: Table, action: Action) -> Table:
    """A new subscription is owed the message the table holds; a copy of it sent by the
    model pays that."""
    if isinstance(action, Subscribe) and action.client == SUBSCRIBER:
        return replace(table, owes=table.holds())
    if isinstance(action, Send) and table.owes is not None:
        sent = table.run.sent.get(SUBSCRIBER, [])
        if sent and sent[-1].retain and sent[-1].message.publication.payload == table.owes:
            return replace(table, owes=None)
    return table


HOLDS = "the store holds the last retained message with a payload, or none"


def _described(table: Table, number: int) -> str:
    if not number:
        return "none"
    payload = table.payloads[number]
    return f"message {number} ({payload.hex() if payload else 'zero bytes'})"


def _table_reason(table: Table) -> str:
    held, last = _number(table.world.held), _number(table.world.last)
    return (f"the table under test holds {_described(table, held)}; the last retained message "
            f"with a payload is {_described(table, last)}")  # fmt: skip


def _retained(store: Store) -> System[Table]:
    return System(
        start=Table(run=Run(store.edition, dict(store.readings)), world=World.initial()),
        moves=lambda table, row: _table_moves(store, table, row),
        trace=lambda table: table.run.trace,
        props={HOLDS: lambda table: bool(z3.is_true(z3.simplify(claim(table.world))))},
        reason=_table_reason,
    )


# -- which system ---------------------------------------------------------------------------


def replay_server(case: object, trace: Sequence[Mapping[str, Any]]) -> RefutedRun | None:
    """``trace`` run through the distribution server ``case`` (a theorem's model) checks,
    with where its property fails; ``None`` for a model that is no distribution server.
    Raises :class:`NotARun` when the trace is not a run of it."""
    walks: list[Callable[[], RefutedRun]]
    if isinstance(case, Ordering):
        walks = [partial(walk, trace, _ordering(case, s)) for s in case.scenes
                 if _served(trace, s.edition, dict(s.readings))]  # fmt: skip
    elif isinstance(case, Forwarding):
        walks = [partial(walk, trace, _forwarding(s.edition, s.readings()))
                 for s in case.settings if _served(trace, s.edition, s.readings())]  # fmt: skip
    elif isinstance(case, Stores):
        walks = [partial(walk, trace, _retained(s)) for s in case.stores
                 if _served(trace, s.edition, dict(s.readings))]  # fmt: skip
    else:
        return None
    return _first(walks, trace)


__all__ = ["ABOVE", "HOLDS", "System", "Table", "replay_server", "walk"]
