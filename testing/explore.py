"""Run an exploration: batches of Hypothesis examples until the budget is spent.

Rules / theory of operation
---------------------------
:func:`explore` runs the state machine of :mod:`.machine` in *batches*: each batch is one
Hypothesis run (``run_state_machine_as_test``) of at most :data:`BATCH` examples, seeded
from the run's seed and the batch's number (so a seed gives the same moves, batch after
batch, as long as the broker answers the same), with no example database, no health
checks and no deadline (the broker's time is not the test's). A batch ends at its first
failure, which Hypothesis shrinks to the fewest, simplest moves that still fail the same
rule; the run then knows that rule (:attr:`~pubproof.testing.machine.Exploration.known`)
and the next batches look for others. A failure whose final replay does not fail again
(``Flaky``: the broker behaved otherwise) is kept as the smallest example seen to fail.
The run ends when its budget (seconds, or moves) is spent, and reports what it found, with
the coverage of the model's tables (:mod:`.coverage`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import seed as hypothesis_seed
from hypothesis.errors import Flaky, HypothesisException
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test

from pubproof.model.editions import Edition
from pubproof.testing import reproducer
from pubproof.testing.coverage import Coverage
from pubproof.testing.machine import ExplorationFailure, Found, Run, machine_class, wanted
from pubproof.testing.moves import Move, MoveKind

#: examples per Hypothesis run
BATCH = 8
#: seconds the polish of one failure may take (:func:`polish`)
POLISH_SECONDS = 30.0
#: moves per example at most (Hypothesis's ``stateful_step_count``)
MOVES_PER_EXAMPLE = 20


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """What a run found and covered."""

    found: tuple[Found, ...]
    coverage: Coverage
    examples: int
    moves: int
    packets: int
    seconds: float
    first_failure: float | None
    errors: tuple[str, ...]
    seed: int


def explore(
    run: Run,
    *,
    machine: Callable[[Any], type[RuleBasedStateMachine]] = machine_class,
    coverage: Coverage | None = None,
    seed: int = 0,
    moves_per_example: int = MOVES_PER_EXAMPLE,
    batch: int = BATCH,
    progress: Callable[[str], None] | None = None,
) -> Outcome:
    """Explore until ``run``'s budget is spent (the examples of ``machine(run)``); what it
    found, and the coverage (``coverage``, or a broker's of the run's edition)."""
    coverage = coverage or Coverage(run.edition)
    run.observers.append(coverage.observe)
    number = 0
    while not run.spent():
        number += 1
        before = set(run.found)
        run.shrinking_since = None
        run.wanted = wanted(coverage)  # the batch leans toward the entries not reached yet
        seeded = hypothesis_seed(seed * 100_003 + number)(machine(run))
        try:
            run_state_machine_as_test(
                seeded,
                settings=settings(
                    max_examples=batch, stateful_step_count=moves_per_example,
                    deadline=None, database=None, derandomize=False,
                    suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
                    phases=(Phase.generate, Phase.shrink), verbosity=Verbosity.quiet,
                    print_blob=False,
                ),
            )  # fmt: skip
        except ExplorationFailure:
            pass  # the shrunk failure, kept by the run (run.found)
        except (Flaky, HypothesisException) as trouble:
            # the broker did not fail the same way again (Flaky), or Hypothesis gave up: the
            # smallest example seen to fail is kept all the same
            if progress is not None:
                progress(f"batch {number}: {type(trouble).__name__}: {str(trouble)[:300]}")
        new = [key for key in run.found if key not in before]
        run.known.update(new)
        run.spent_invalid.update(
            m.what for key in new for m in run.found[key].moves if m.kind is MoveKind.INVALID
        )
        for key in new:
            run.found[key] = polish(run, run.found[key])
        if progress is not None:
            for key in new:
                kept = run.found[key]
                progress(
                    f"found after {kept.seconds:.1f} s: {key} ({len(kept.moves)} moves): "
                    f"{kept.failure.message[:160]}"
                )
            progress(
                f"batch {number}: {run.examples} examples, {run.moves} moves, "
                f"{run.packets} packets, {run.elapsed():.1f} s"
            )
        if _target_gone(run):
            break
    return Outcome(
        found=tuple(run.found.values()), coverage=coverage, examples=run.examples,
        moves=run.moves, packets=run.packets, seconds=round(run.elapsed(), 3),
        first_failure=run.first_failure, errors=tuple(run.errors), seed=seed,
    )  # fmt: skip


def polish(run: Run, found: Found, seconds: float = POLISH_SECONDS) -> Found:
    """The failure with the moves it does not need taken out: what Hypothesis's shrinking
    left, made smaller by delta debugging (:func:`candidates`: the moves skipped in the
    live world, each client's moves but its first connection, then ever smaller runs of
    moves, down to one at a time from the last), each candidate made again in a fresh
    example and kept if it fails the same rule. Hypothesis removes a move only while the
    rest stays a plan, so a client's CONNECT and its later DISCONNECT, far apart, stay
    together; here they go together. Bounded by ``seconds``."""
    end = time.monotonic() + seconds
    best = found
    skipped = {e["n"] for e in found.entries if e.get("event") == "skipped"}
    tried: set[tuple[Move, ...]] = set()
    shrunk = True
    while shrunk and time.monotonic() < end:
        shrunk = False
        for keep in candidates(best.moves, skipped):
            if time.monotonic() > end:
                break
            if keep in tried:
                continue
            tried.add(keep)
            again = run.replay(keep)
            if again is None:
                continue  # not a plan
            world, entries, verdict = again
            failure = next((f for f in verdict.failures if f.id == found.failure.id), None)
            if failure is not None:
                best = Found(failure=failure, moves=tuple(world.steps), entries=tuple(entries),
                             example=world.number, seconds=found.seconds,
                             final=found.final)  # fmt: skip
                skipped = {e["n"] for e in entries if e.get("event") == "skipped"}
                shrunk = True
                break
    return best


def candidates(
    moves: Sequence[Move], skipped: Set[int] = frozenset()
) -> Iterator[tuple[Move, ...]]:
    """Smaller plans to try in place of ``moves``, the most promising first: without the
    moves at ``skipped`` (the live world could not make them); without every move of one
    client, then without all but its first (its connection); then ddmin's complements:
    ever smaller runs of moves taken out (halves, quarters, ... single moves), each from
    the last. A wait is no client's."""
    every = tuple(moves)
    if skipped:
        yield tuple(m for n, m in enumerate(every) if n not in skipped)
    clients = sorted({m.client for m in every if m.kind is not MoveKind.WAIT})
    for client in clients:
        yield tuple(m for m in every if m.kind is MoveKind.WAIT or m.client != client)
        first = next(
            n for n, m in enumerate(every) if m.kind is not MoveKind.WAIT and m.client == client
        )
        yield tuple(
            m for n, m in enumerate(every)
            if n <= first or m.kind is MoveKind.WAIT or m.client != client
        )  # fmt: skip
    size = len(every) // 2
    while size >= 1:
        for start in range(len(every) - size, -size, -size):
            yield every[: max(start, 0)] + every[start + size :]
        size //= 2


def _target_gone(run: Run) -> bool:
    """Whether the target stopped taking connections (every move would be an error)."""
    return any("no connection" in error for error in run.errors[-3:])


def reproducers(
    outcome: Outcome, out: Path, *, edition: Edition, readings: Mapping[str, str],
    target: str, implementation: str,
) -> list[Path]:  # fmt: skip
    """Write a reproducer of every failure of ``outcome`` under ``out``; their folders."""
    written = []
    for found in outcome.found:
        data = reproducer.data_of(
            found, edition=edition, readings=readings, target=target,
            implementation=implementation,
        )  # fmt: skip
        name = f"{slug(implementation)}-{edition.value}-{reproducer.slug(found.failure.id)}"
        written.append(reproducer.write(data, out / name))
    return written


def client_reproducers(outcome: Outcome, out: Path, *, edition: Edition,
                       readings: Mapping[str, str], driver: str) -> list[Path]:  # fmt: skip
    """Write a reproducer of every failure of a client exploration under ``out``."""
    written = []
    for found in outcome.found:
        data = reproducer.client_data_of(found, edition=edition, readings=readings,
                                         driver=driver)  # fmt: skip
        name = f"{slug(driver)}-{edition.value}-{reproducer.slug(found.failure.id)}"
        written.append(reproducer.write(data, out / name))
    return written


def slug(text: str) -> str:
    """A file-name friendly form of ``text``."""
    return reproducer.slug(text)


def to_json(outcome: Outcome, *, target: str, edition: Edition, readings: Mapping[str, str],
            written: Sequence[Path] = ()) -> dict[str, Any]:  # fmt: skip
    """The run as JSON: what it ran, what it found (with the reproducers' folders), its
    coverage."""
    folders = {p.name: str(p) for p in written}
    return {
        "target": target, "edition": edition.value, "readings": dict(readings),
        "seed": outcome.seed, "examples": outcome.examples, "moves": outcome.moves,
        "packets": outcome.packets, "seconds": outcome.seconds,
        "packets_per_second": round(outcome.packets / outcome.seconds, 1)
        if outcome.seconds else 0.0,
        "first_failure_seconds": outcome.first_failure,
        "failures": [
            {**f.failure.to_json(), "moves": [m.to_json() for m in f.moves],
             "shrunk": f.final, "found_after_seconds": round(f.seconds, 3),
             "reproducer": next((v for k, v in folders.items()
                                 if k.endswith(reproducer.slug(f.failure.id))), None)}
            for f in outcome.found
        ],
        "errors": list(outcome.errors),
        "coverage": outcome.coverage.to_json(),
    }  # fmt: skip


def to_text(outcome: Outcome, *, target: str, edition: Edition,
            written: Sequence[Path] = ()) -> str:  # fmt: skip
    """The run for a reader: what it found, then the coverage."""
    rate = outcome.packets / outcome.seconds if outcome.seconds else 0.0
    lines = [
        f"pubproof explore {target} (MQTT {edition.value}, seed {outcome.seed}): "
        f"{outcome.examples} examples, {outcome.moves} moves, {outcome.packets} packets "
        f"judged in {outcome.seconds:.1f} s ({rate:.0f} packets/s)",
    ]
    if not outcome.found:
        lines.append("no failure found")
    folders: list[Path | None] = [*written, *([None] * (len(outcome.found) - len(written)))]
    for found, folder in zip(outcome.found, folders, strict=True):
        lines.append(f"FAIL {found.failure.id} ({len(found.moves)} moves, found after "
                     f"{found.seconds:.1f} s): {found.failure.message}")  # fmt: skip
        lines += [f"    {n + 1}. {m.describe()}" for n, m in enumerate(found.moves)]
        if folder is not None:
            lines.append(f"    reproducer: {folder}")
    for error in outcome.errors[:5]:
        lines.append(f"error: {error}")
    return "\n".join(lines) + "\n\n" + outcome.coverage.summary()
