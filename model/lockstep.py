"""Method A and Method B in lockstep: the explicit-state engine for comparing them run by run.

Two explorers (:mod:`pubproof.model.explore`) over the same environment, one with a Method A
receiver and one with Method B, take the same moves side by side: the same application
publish, the same packet arriving, the same connection lost. Both receivers answer every
packet with the same packets, so the two worlds keep the same channels and the same sender;
if a move exists on one side and not on the other, or the moves differ, the methods are
told apart by what they *send* and the search reports it. Otherwise only the deliveries
differ, and the properties below compare them after every step:

- at every moment Method A's deliveries are a prefix of Method B's (A lags: it delivers on
  PUBREL what B delivered on PUBLISH);
- neither delivers a message twice;
- once the sender has completed every message, the two sequences are equal.

A broken property comes back with the shortest trace to it (packets with ``dir`` and
``conn``, and events), ending with an entry that shows both delivery sequences.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pubproof.model.explore import Environment, Explorer, Mutations, World, initial
from pubproof.model.flows import Method

Pair = tuple[World, World]


@dataclass(frozen=True, slots=True, kw_only=True)
class Lockstep:
    """The environment both methods share, and any deliberate faults of each side."""

    env: Environment
    a_mutations: Mutations = field(default_factory=Mutations)
    b_mutations: Mutations = field(default_factory=Mutations)
    max_depth: int | None = None  # None: until no new pair of worlds appears


@dataclass(frozen=True, slots=True)
class Outcome:
    pairs: int
    broken: str | None
    trace: list[dict[str, Any]] | None


def _is_prefix(short: tuple[int, ...], long: tuple[int, ...]) -> bool:
    return long[: len(short)] == short


def judge(a: World, b: World, messages: int) -> str | None:
    """What is wrong with a pair of worlds, or None."""
    for name, world in (("Method A", a), ("Method B", b)):
        if len(set(world.delivered)) != len(world.delivered):
            return f"{name} delivered a message twice"
    if not _is_prefix(a.delivered, b.delivered):
        return "Method A's deliveries are not a prefix of Method B's"
    complete = len(a.completed) == messages and not a.sender
    if complete and a.delivered != b.delivered:
        return "the sequences differ once every message is complete"
    return None


def explorers(case: Lockstep) -> tuple[Explorer, Explorer]:
    """The Method A and the Method B side of a lockstep, each with its own faults."""
    return (
        Explorer(replace(case.env, method=Method.A), case.a_mutations),
        Explorer(replace(case.env, method=Method.B), case.b_mutations),
    )


def explore(case: Lockstep) -> Outcome:
    """Search every pair of worlds the two methods reach in lockstep (breadth first)."""
    sides = explorers(case)
    messages = len(case.env.qos)
    start: Pair = (initial(), initial())
    parent: dict[Pair, tuple[Pair, Mapping[str, Any]] | None] = {start: None}
    queue: deque[tuple[Pair, int]] = deque([(start, 0)])
    while queue:
        pair, depth = queue.popleft()
        broken = judge(*pair, messages)
        if broken is not None:
            return Outcome(len(parent), broken, _trace(parent, pair))
        if case.max_depth is not None and depth >= case.max_depth:
            continue
        moves_a = list(sides[0].moves(pair[0]))
        moves_b = list(sides[1].moves(pair[1]))
        if [label for label, _ in moves_a] != [label for label, _ in moves_b]:
            trace = _trace(parent, pair)
            trace.append({"event": "methods-differ", "method-a": [m for m, _ in moves_a],
                          "method-b": [m for m, _ in moves_b]})  # fmt: skip
            return Outcome(len(parent), "the two methods send different packets", trace)
        for (label, next_a), (_, next_b) in zip(moves_a, moves_b, strict=True):
            nxt = (next_a, next_b)
            if nxt not in parent:
                parent[nxt] = (pair, label)
                queue.append((nxt, depth + 1))
    return Outcome(len(parent), None, None)


def _trace(parent: Mapping[Pair, tuple[Pair, Mapping[str, Any]] | None], pair: Pair) -> list[
    dict[str, Any]
]:  # fmt: skip
    steps: list[dict[str, Any]] = []
    link, last = parent[pair], pair
    while link is not None:
        previous, label = link
        steps.append(dict(label))
        link = parent[previous]
    steps.reverse()
    steps.append(
        {"event": "deliveries", "method-a": list(last[0].delivered),
         "method-b": list(last[1].delivered)}
    )  # fmt: skip
    return steps
