"""``pubproof prove``: check the registered theorems and their mutants.

Progress goes to standard error, one line per theorem as it finishes. Standard output gets
a table, or with ``--json`` exactly::

    {"seconds": total, "theorems": [{"id", "statement", "rules": [...], "editions": [...],
      "method", "expected": "proved"|"refuted",
      "status": "proved"|"refuted"|"unknown"|"failed", "seconds", "details",
      "counterexample": [P, ...] or null,
      "mutants": [{"name", "description", "status", "killed", "details",
                   "counterexample": [P, ...] or null}]}]}

``details`` says in words what a check found. A mutant's status is the status the
theorem's check reached on the broken variant; it is ``killed`` when that differs from the
theorem's expected status, and its ``counterexample`` is the witness that tells it apart
(the packet whose bytes the broken encoder gets wrong, the trace the broken table allows).
The exit status is 1 when any theorem's status differs from its expected status, 2 for an
unknown theorem id.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pubproof.codec_commands import Subcommands
from pubproof.proofs.catalog import UnknownTheorem, load
from pubproof.proofs.registry import Result, Theorem


def add_prove(commands: Subcommands) -> None:
    command = commands.add_parser(
        "prove",
        help="check the theorems (Z3) and that each kills its mutants",
        description="Check every registered theorem (or those named with --theorem), run each "
        "of its mutants, and report. Exit status 1 if a theorem does not reach its expected "
        "status.",
    )
    command.add_argument("--json", action="store_true", help="print the report as JSON")
    command.add_argument(
        "--details",
        action="store_true",
        help="after the table, say what each check found and how each mutant was killed",
    )
    command.add_argument(
        "--theorem",
        action="append",
        default=[],
        metavar="ID",
        help="check only this theorem (repeatable), e.g. wire.rl-inverse",
    )
    command.set_defaults(run=lambda args: run_prove(command, args))


@dataclass(frozen=True, slots=True)
class Checked:
    """A theorem with the result of its check and of each of its mutants."""

    theorem: Theorem
    result: Result
    mutants: tuple[tuple[str, Result], ...]

    @property
    def as_expected(self) -> bool:
        return self.result.status == self.theorem.expected

    @property
    def killed(self) -> int:
        return sum(self.theorem.kills(result) for _, result in self.mutants)


def check(theorem: Theorem) -> Checked:
    """Run a theorem's check and every mutant's."""
    mutants = tuple((mutant.name, mutant.check()) for mutant in theorem.mutants)
    return Checked(theorem, theorem.check(), mutants)


def check_all(theorems: Sequence[Theorem], progress: Callable[[str], None]) -> list[Checked]:
    checked = []
    for number, theorem in enumerate(theorems, start=1):
        done = check(theorem)
        checked.append(done)
        mark = "ok" if done.as_expected else f"EXPECTED {theorem.expected.upper()}"
        progress(
            f"[{number:>2}/{len(theorems)}] {theorem.id}: {done.result.status} "
            f"({done.result.seconds:.2f} s), mutants {done.killed}/{len(done.mutants)} killed"
            f" - {mark}"
        )
    return checked


def as_json(checked: Sequence[Checked], seconds: float) -> dict[str, object]:
    """The report in the documented JSON shape."""
    return {
        "seconds": round(seconds, 3),
        "theorems": [
            {
                "id": c.theorem.id,
                "statement": c.theorem.statement,
                "rules": list(c.theorem.rules),
                "editions": [e.value for e in c.theorem.editions],
                "method": c.theorem.method,
                "expected": c.theorem.expected,
                "status": c.result.status,
                "seconds": round(c.result.seconds, 3),
                "details": c.result.details.strip(),
                "counterexample": _evidence(c.result),
                "mutants": [
                    {
                        "name": name,
                        "description": mutant.description,
                        "status": r.status,
                        "killed": c.theorem.kills(r),
                        "details": r.details.strip(),
                        "counterexample": _evidence(r),
                    }
                    for (name, r), mutant in zip(c.mutants, c.theorem.mutants, strict=True)
                ],
            }
            for c in checked
        ],
    }


def _evidence(result: Result) -> list[dict[str, object]] | None:
    if result.counterexample is None:
        return None
    return [dict(p) for p in result.counterexample]


def table(checked: Sequence[Checked], seconds: float) -> str:
    """The report as an aligned text table with a summary line."""
    header = ("theorem", "expected", "status", "method", "seconds", "mutants killed")
    rows = [
        (
            c.theorem.id,
            c.theorem.expected,
            c.result.status if c.as_expected else f"{c.result.status} (!)",
            c.theorem.method,
            f"{c.result.seconds:.2f}",
            f"{c.killed}/{len(c.mutants)}",
        )
        for c in checked
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
             for row in [header, *rows]]  # fmt: skip
    expected = sum(c.as_expected for c in checked)
    killed = sum(c.killed for c in checked)
    mutants = sum(len(c.mutants) for c in checked)
    lines.append(
        f"{expected}/{len(checked)} theorems as expected; {killed}/{mutants} mutants killed; "
        f"{seconds:.2f} s"
    )
    return "\n".join(lines)


def details(checked: Sequence[Checked]) -> str:
    """What each check found (witnesses, sizes, counterexamples) and each mutant's fate."""
    blocks = []
    for c in checked:
        lines = [f"{c.theorem.id}: {c.result.status}. {c.result.details.strip()}"]
        for name, result in c.mutants:
            fate = "killed" if c.theorem.kills(result) else "SURVIVED"
            lines.append(f"  mutant {name}: {result.status}, {fate}. {result.details.strip()}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def run_prove(command: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    try:
        theorems = load(args.theorem)
    except UnknownTheorem as error:
        command.error(f"unknown theorem id: {error}")

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    start = time.perf_counter()
    checked = check_all(theorems, progress)
    seconds = time.perf_counter() - start
    if args.json:
        print(json.dumps(as_json(checked, seconds), ensure_ascii=False))
    else:
        print(table(checked, seconds))
        if args.details:
            print()
            print(details(checked))
    return 0 if all(c.as_expected for c in checked) else 1
