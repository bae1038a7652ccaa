"""Refuted runs: an expected refutation's counterexample replayed through the system it
refutes, so that a page can show the failure the theorem names.

Rules / theory of operation:

- A "... FAILS when ..." theorem (``expected="refuted"``) checks a *broken* system: a flow
  table changed (a Method B receiver that forgets the identifier on PUBREC), a channel that
  reorders, a sender that reuses identifiers early. Its counterexample is the explorer's
  shortest trace to a world where the property fails. Replayed through the model's own
  sessions (:func:`pubproof.model.replay.replay`) the same trace shows the *correct*
  behaviour, which is the contrast and not the failure.
- :func:`replay_refuted` replays the trace through the theorem's own system: it starts the
  very explorer the check searched (same tables, mutations, channel, Receive Maximum) in its
  initial world and, row by row, takes the one move whose trace entry is that row. A row no
  move produces is an error (the trace is not a run of that system). After each row it
  evaluates the theorem's own properties; the first row after which one is false is where
  the property fails.
- A Method A and a Method B receiver in lockstep (5.0) are replayed side by side: the row
  must be a move of both, and the property is the lockstep's own judgement.
  The 3.1.1 lockstep likewise; its trace ends with a summary row (the deliveries of both,
  or the packets they differ on) that is no move, and leaves the worlds as they are.
- A distribution server under a reading (an ordering explorer, the model under a
  forwarding setting, a retained table under test) is replayed by
  :mod:`.refuted_servers`, on the same terms.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from pubproof.model.explore import World, initial
from pubproof.model.explore50 import AliasExplorer, AliasWorld, World50, methods_judge
from pubproof.model.lockstep import explorers as explorers_311
from pubproof.model.lockstep import judge
from pubproof.proofs.methods import SideBySide
from pubproof.proofs.protocol import Case, explorer_of
from pubproof.proofs.protocol50 import Case50, Methods50, explorers, sides, world_claims
from pubproof.proofs.refuted_run import NotARun, RefutedRun
from pubproof.proofs.refuted_servers import replay_server
from pubproof.proofs.registry import Theorem

W = TypeVar("W")
#: Rows a search appends to its trace to sum it up (:mod:`pubproof.model.lockstep`): no move.
SUMMARY_EVENTS = frozenset({"deliveries", "methods-differ"})


def _walk(
    trace: Sequence[Mapping[str, Any]],
    start: W,
    moves: Callable[[W], Iterator[tuple[dict[str, Any], W]]],
    props: Mapping[str, Callable[[W], bool]],
    delivered: Callable[[W], tuple[str, ...]] | None,
    reason: Callable[[W], str] = lambda _: "",
) -> RefutedRun:
    world = start
    record: list[tuple[str, ...]] = []
    failed_at: int | None = None
    failed: tuple[str, ...] = ()
    why = ""
    for index, row in enumerate(trace):
        if row.get("event") in SUMMARY_EVENTS:
            record.append(record[-1] if record else ())
            continue
        nxt = next((w for label, w in moves(world) if label == dict(row)), None)
        if nxt is None:
            raise NotARun(f"row {index} of the trace is no move of the refuted system: {row}")
        world = nxt
        record.append(delivered(world) if delivered is not None else ())
        if failed_at is None:
            broken = tuple(name for name, holds in props.items() if not holds(world))
            if broken:
                failed_at, failed, why = index, broken, reason(world)
    return RefutedRun(rows=len(trace), delivered=tuple(record), failed_at=failed_at,
                      failed=failed, reason=why, counted=delivered is not None)  # fmt: skip


def _delivered(w: World) -> tuple[str, ...]:
    return tuple(f"{msg:02x}" for msg in w.delivered)


def _delivered50(w: World50) -> tuple[str, ...]:
    # a message's deliveries are counted (at most 2), not ordered: list them by message
    return tuple(f"{i + 1:02x}" for i, m in enumerate(w.msgs) for _ in range(m.d))


def replay_refuted(theorem: Theorem, trace: Sequence[Mapping[str, Any]]) -> RefutedRun | None:
    """``trace`` run through the system ``theorem`` checks (its ``model``), with where its
    property fails; ``None`` for a system of a kind not replayed. Raises
    :class:`NotARun` when the trace is not a run of that system."""
    case = theorem.model
    if isinstance(case, Case):
        return _walk(trace, initial(), explorer_of(case).moves, case.claim.holds, _delivered)
    if isinstance(case, Case50) and case.kind in ("message", "flow-control"):
        claims = world_claims(case)
        return _first_run(
            lambda search: _walk(trace, search.initial(), search.moves, claims, _delivered50),
            explorers(case),  # the Receive Maximum under which the trace runs
        )
    if isinstance(case, SideBySide):
        lockstep = case.lockstep()
        left, right = explorers_311(lockstep)
        messages = len(lockstep.env.qos)

        def pairs(pair: tuple[World, World]) -> Iterator[tuple[dict[str, Any], Pair311]]:
            follow = list(right.moves(pair[1]))
            for entry, na in left.moves(pair[0]):
                yield from ((entry, (na, nb)) for e, nb in follow if e == entry)

        return _walk(
            trace, (initial(), initial()), pairs,
            {"the methods agree": lambda pair: judge(*pair, messages) is None}, None,
            lambda pair: judge(*pair, messages) or "",
        )  # fmt: skip
    if isinstance(case, Methods50):
        a, b = sides(case)

        def both(pair: tuple[World50, World50]) -> Iterator[tuple[dict[str, Any], Pair]]:
            follow = list(b.moves(pair[1]))
            for entry, na in a.moves(pair[0]):
                yield from ((entry, (na, nb)) for e, nb in follow if e == entry)

        return _walk(trace, (a.initial(), b.initial()), both, METHODS_CLAIM, None,
                     lambda pair: methods_judge(*pair))  # fmt: skip
    if isinstance(case, Case50) and case.kind == "alias":
        return _first_run(
            lambda search: _walk(
                trace, search.initial(), search.moves, ALIAS_CLAIM, None, _alias_reason
            ),
            # the Topic Alias Maximum under which the trace runs, as check50 searches
            [AliasExplorer(case.flows, topic_alias_maximum=tam) for tam in (1, 2)],
        )
    return replay_server(case, trace)


Pair = tuple[World50, World50]
Pair311 = tuple[World, World]
#: What the lockstep checks of a Method A and a Method B receiver on one run
#: (:func:`~pubproof.model.explore50.lockstep`).
METHODS_CLAIM: Mapping[str, Callable[[Pair], bool]] = {
    "the methods agree": lambda pair: not methods_judge(*pair)
}

#: What the Topic Alias search looks for (:meth:`AliasExplorer.search`): a PUBLISH the
#: receiver resolved to another topic than the sender meant, or had to refuse.
ALIAS_CLAIM: Mapping[str, Callable[[AliasWorld], bool]] = {
    "topic resolved as meant": lambda w: not w.bad
}


def _alias_reason(w: AliasWorld) -> str:
    if w.bad.startswith("DISCONNECT "):
        return f"the receiver must send DISCONNECT ({w.bad.removeprefix('DISCONNECT ')})"
    return f"the receiver {w.bad}"


S = TypeVar("S")


def _first_run(walk: Callable[[S], RefutedRun], searches: Sequence[S]) -> RefutedRun:
    """The run of the first of ``searches`` (one per bound the check tries) that has it."""
    errors: list[NotARun] = []
    for search in searches:
        try:
            return walk(search)
        except NotARun as error:
            errors.append(error)
    raise errors[-1]


__all__ = ["NotARun", "RefutedRun", "replay_refuted"]
