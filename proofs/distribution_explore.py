"""Explicit-state exploration of small distribution scenarios: every interleaving.

Rules / theory of operation
---------------------------
A :class:`Scene` is a small world around one server (the model): publishers, each with a
script of publications it makes in order; one subscriber that connects keeping its
session, subscribes, and may lose its connection and come back, or subscribe again, a
bounded number of times; and the server, which sends the subscriber the copies it owes
(by a *policy*: the first owed, the model's order; a mutant picks another) and sees them
acknowledged. :func:`explore` searches every interleaving of these moves breadth first,
merging interleavings that reach the same state (the model's sessions and copies, the
retained store, the scripts left and the copies sent so far), and judges the copies sent
to the subscriber after every move with a *judge* (a function from the sent copies to the
problems found); several judges share one search, as the model's moves do not depend on
the judge. The first state a judge finds wrong is reached by a shortest path; it is replayed
on a fresh model to give the trace (:mod:`.distribution_run`).
"""

from __future__ import annotations

import copy
import dataclasses
import enum
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from pubproof.model.editions import Edition
from pubproof.model.forwarding import Problem
from pubproof.model.messages import Copy
from pubproof.proofs.distribution_run import (
    Ack,
    Action,
    Connect,
    Entry,
    Lost,
    Publish,
    Run,
    Send,
    Subscribe,
    options,
)

SUBSCRIBER = "sub"
Judge = Callable[[Sequence[Copy]], list[Problem]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Scene:
    """A small world: who publishes what, what the subscriber does, how the server sends."""

    edition: Edition
    readings: tuple[tuple[str, str], ...] = ()
    #: per publisher, its publications in order: (topic, QoS, RETAIN)
    scripts: tuple[tuple[str, tuple[tuple[str, int, bool], ...]], ...]
    filters: tuple[tuple[str, int], ...] = (("#", 2),)  # the subscriber's, with its QoS
    disconnects: int = 1
    resubscribes: int = 0
    pick: int = 0  # which owed copy the server sends: 0 the first (the model), -1 the last
    #: the subscriber acknowledges copies (they change no copy's place in the order: only
    #: what is re-sent, with DUP 1, on a reconnect; left out by default, as the flows'
    #: theorems cover them)
    acks: bool = False

    def describe(self) -> str:
        reading = "".join(f" {k}={v}" for k, v in self.readings)
        return f"{self.edition.value}{reading}"

    def prologue(self) -> list[Action]:
        wanted = tuple((f, options(q)) for f, q in self.filters)
        return [Connect(SUBSCRIBER, clean=False), Subscribe(SUBSCRIBER, wanted)]


@dataclass(slots=True)
class Node:
    """A state of the search: the run so far, how far each script has gone, the losses
    and repeated SUBSCRIBEs left, and the moves that led here."""

    run: Run
    positions: tuple[int, ...]
    disconnects: int
    resubscribes: int
    path: tuple[Action, ...] = field(default=())


def _moves(scene: Scene, node: Node) -> Iterator[tuple[Action, Node]]:
    run = node.run
    session = run.model.sessions.get(SUBSCRIBER)
    connected = session is not None and session.connected
    for index, (client, script) in enumerate(scene.scripts):
        at = node.positions[index]
        if at < len(script):
            topic, qos, retain = script[at]
            payload = f"{client}-{at + 1}".encode()
            positions = (*node.positions[:index], at + 1, *node.positions[index + 1 :])
            yield (
                Publish(client, topic, qos, retain, payload),
                Node(run, positions, node.disconnects, node.resubscribes),
            )
    if connected and run.owed(SUBSCRIBER):
        yield Send(SUBSCRIBER, scene.pick), node
    if scene.acks and connected and session is not None and session.under_way:
        yield Ack(SUBSCRIBER), node
    if connected and node.disconnects:
        yield Lost(SUBSCRIBER), Node(run, node.positions, node.disconnects - 1,
                                      node.resubscribes)  # fmt: skip
    if not connected:
        yield Connect(SUBSCRIBER, clean=False), node
    if connected and node.resubscribes:
        wanted = tuple((f, options(q)) for f, q in scene.filters)
        yield Subscribe(SUBSCRIBER, wanted), Node(run, node.positions, node.disconnects,
                                                   node.resubscribes - 1)  # fmt: skip


def _thaw(value: Any, memo: dict[int, Any] | None = None) -> Any:
    """A copy of ``value`` that shares nothing mutable with it: dicts, lists, sets and
    objects that are not frozen dataclasses are copied, all the way down; frozen objects
    (messages, copies, subscriptions, tables), strings, numbers and enums are shared. An
    object reached twice is copied once (``memo``: the copies made, by the original's
    identity), so the copy keeps the original's sharing (a model's walks are kept under
    its own readings, that very mapping: :class:`pubproof.model.forwarding.Walks`)."""
    if isinstance(value, (str, int, float, bool, bytes, enum.Enum, tuple, MappingProxyType)):
        return value  # (a tuple here holds only frozen values: rules, filters, copies)
    if value is None:
        return value
    params = getattr(type(value), "__dataclass_params__", None)
    if params is not None and params.frozen:
        return value
    if memo is None:
        memo = {}
    made = memo.get(id(value))
    if made is not None:
        return made
    clone: Any
    if isinstance(value, dict):
        clone = memo[id(value)] = {}
        clone.update((k, _thaw(v, memo)) for k, v in value.items())
        return clone
    if isinstance(value, list):
        clone = memo[id(value)] = []
        clone.extend(_thaw(v, memo) for v in value)
        return clone
    if isinstance(value, set):
        clone = memo[id(value)] = set(value)
        return clone
    clone = memo[id(value)] = copy.copy(value)
    names = (
        [f.name for f in dataclasses.fields(value)]
        if dataclasses.is_dataclass(value)
        else list(vars(value))
    )
    for name in names:
        setattr(clone, name, _thaw(getattr(value, name), memo))
    return clone


def clone(run: Run) -> Run:
    """A copy of ``run`` to move on from (:func:`_thaw`)."""
    copied: Run = _thaw(run)
    return copied


def start(scene: Scene, *, record: bool = False) -> Node:
    """The search's initial world: the subscriber connected and subscribed (``record``:
    with the trace of it)."""
    run = Run(scene.edition, dict(scene.readings), record=record)
    run.run(scene.prologue())
    return Node(run, tuple(0 for _ in scene.scripts), scene.disconnects, scene.resubscribes)


def successors(scene: Scene, node: Node) -> Iterator[tuple[Action, Node]]:
    """Each move of ``node``, carried out on a copy of its run."""
    for action, template in _moves(scene, node):
        run = clone(node.run)
        run.do(action)
        yield action, Node(run, template.positions, template.disconnects,
                           template.resubscribes, (*node.path, action))  # fmt: skip


def _key(node: Node) -> tuple[object, ...]:
    model = node.run.model
    session = model.sessions.get(SUBSCRIBER)

    def copies(found: Sequence[Copy]) -> tuple[tuple[object, ...], ...]:
        return tuple((c.message.seq, c.qos, c.cause.name, c.topic_filters) for c in found)

    state = None
    if session is not None:
        state = (session.connected, copies(session.pending), copies(session.optional),
                 copies(list(session.under_way.values())))  # fmt: skip
    store = tuple((t, m.seq) for t, m in sorted(model.retained.snapshot().items()))
    sent = copies(node.run.sent.get(SUBSCRIBER, []))
    return node.positions, node.disconnects, node.resubscribes, state, store, sent


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """What the exploration found for one judge: the first wrong order (if any), reached by
    a shortest path, as a trace."""

    states: int
    problems: tuple[Problem, ...] = ()
    path: tuple[Action, ...] = ()
    trace: tuple[Entry, ...] = ()
    met: frozenset[str] = frozenset()  # the premises some state met


Premise = Callable[[Sequence[Copy]], bool]


def explore(
    scene: Scene,
    judges: Mapping[str, Judge],
    premises: Mapping[str, Premise] | None = None,
    limit: int = 100_000,
) -> dict[str, Outcome]:
    """Every interleaving of ``scene``, breadth first, each state judged by every judge;
    stops when every judge has found a wrong order or every state has been seen. The
    ``premises`` (what a claim needs to occur, lest it hold of nothing) are looked for in
    the copies sent too: each outcome says which some state met."""
    premises = premises or {}
    met: set[str] = set()
    first = start(scene)
    seen = {_key(first)}
    queue = deque([first])
    found: dict[str, tuple[tuple[Problem, ...], tuple[Action, ...]]] = {}
    while queue and (not judges or len(found) < len(judges)):
        node = queue.popleft()
        for _, child in successors(scene, node):
            key = _key(child)
            if key in seen:
                continue
            seen.add(key)
            if len(seen) > limit:
                raise RuntimeError(f"more than {limit} states: the scene is too large")
            sent = child.run.sent.get(SUBSCRIBER, [])
            met.update(n for n, premise in premises.items() if n not in met and premise(sent))
            for name, judge in judges.items():
                if name not in found and (wrong := judge(sent)):
                    found[name] = (tuple(wrong), child.path)
            queue.append(child)
    outcomes = {}
    for name in judges:
        if name not in found:
            outcomes[name] = Outcome(states=len(seen), met=frozenset(met))
            continue
        problems, path = found[name]
        replay = Run(scene.edition, dict(scene.readings)).run([*scene.prologue(), *path])
        outcomes[name] = Outcome(states=len(seen), problems=problems, path=path,
                                 trace=tuple(replay.trace), met=frozenset(met))  # fmt: skip
    return outcomes


__all__ = [
    "SUBSCRIBER",
    "Judge",
    "Node",
    "Outcome",
    "Premise",
    "Scene",
    "clone",
    "explore",
    "start",
    "successors",
]
