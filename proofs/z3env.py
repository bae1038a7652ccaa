"""The one door to Z3: typed helpers for bit-vectors, proofs, searches and enumeration.

z3-solver ships no type information, so every Z3 term is an ``Expr`` (``Any``) here and
the helpers convert results to plain Python values at once. The other proof modules take
``z3`` from this module, so that the untyped import is declared in one place.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

# z3-solver has no stubs and no py.typed (some mypy versions say so, some stay silent)
import z3  # type: ignore[import-untyped,unused-ignore]

#: A Z3 term (Z3's Python API is untyped).
Expr: TypeAlias = Any
#: A Z3 model (an assignment that satisfies a query).
Model: TypeAlias = Any

#: Lengths and values are 64-bit: wide enough that no sum of field lengths and no
#: Remaining Length a (broken) decoder could assemble from five bytes can wrap around.
WIDTH = 64
#: A query that takes longer than this is reported "unknown", never left to hang.
TIMEOUT_MS = 20_000

Outcome: TypeAlias = Literal["proved", "refuted", "unknown"]


def num(value: int, width: int = WIDTH) -> Expr:
    """A bit-vector constant."""
    return z3.BitVecVal(value, width)


def byte(name: str) -> Expr:
    """A fresh symbolic byte."""
    return z3.BitVec(name, 8)


def word(name: str, width: int = WIDTH) -> Expr:
    """A fresh symbolic unsigned integer."""
    return z3.BitVec(name, width)


def widen(term: Expr, width: int = WIDTH) -> Expr:
    """A narrower bit-vector zero-extended to ``width`` bits."""
    extra = width - int(term.size())
    return term if extra == 0 else z3.ZeroExt(extra, term)


def count(conditions: Iterable[Expr]) -> Expr:
    """How many of the Boolean ``conditions`` hold, as a bit-vector."""
    total = num(0)
    for condition in conditions:
        total = total + z3.If(condition, num(1), num(0))
    return total


def big_endian(high: Expr, low: Expr) -> Expr:
    """The 16-bit integer of two bytes, most significant first, widened."""
    return widen(z3.Concat(high, low))


@dataclass(frozen=True, slots=True)
class Answer:
    """What a query came to: an outcome and, when a model exists, the model."""

    outcome: Outcome
    model: Model | None = None
    reason: str = ""


def _solver(given: Sequence[Expr]) -> Any:
    solver = z3.Solver()
    solver.set("timeout", TIMEOUT_MS)
    solver.add(*given)
    return solver


def search(
    condition: Expr,
    *,
    given: Sequence[Expr] = (),
    prefer: Sequence[Expr] = (),
    smallest: Expr | None = None,
) -> Answer:
    """Look for an assignment satisfying ``condition`` (and ``given``).

    Outcome "refuted" means one was found (the claim "there is none" is refuted), "proved"
    that there is none. When there is one, ``prefer`` are extra constraints tried one at a
    time, so that the witness comes out small and readable when a small one exists (Z3
    otherwise picks any); under a preference that holds, ``smallest`` (an unsigned term)
    is minimised. The plain query comes first, so a proof costs one query.
    """
    solver = _solver(given)
    solver.add(condition)
    verdict = solver.check()
    if verdict == z3.unsat:
        return Answer("proved")
    if verdict != z3.sat:
        return Answer("unknown", reason=str(solver.reason_unknown()))
    model = solver.model()
    for extra in prefer:
        solver.push()
        solver.add(extra)
        if solver.check() == z3.sat:
            model = solver.model()
            if smallest is not None:
                model = _minimised(smallest, [*given, condition, extra]) or model
            return Answer("refuted", model)
        solver.pop()
    return Answer("refuted", model)


def _minimised(term: Expr, constraints: Sequence[Expr]) -> Model | None:
    optimizer = z3.Optimize()
    optimizer.set("timeout", TIMEOUT_MS)
    optimizer.add(*constraints)
    optimizer.minimize(term)
    return optimizer.model() if optimizer.check() == z3.sat else None


def prove(
    claim: Expr,
    *,
    given: Sequence[Expr] = (),
    prefer: Sequence[Expr] = (),
    smallest: Expr | None = None,
) -> Answer:
    """Prove ``claim`` for every assignment satisfying ``given``; else a counterexample."""
    return search(z3.Not(claim), given=given, prefer=prefer, smallest=smallest)


def all_values(term: Expr, condition: Expr, *, limit: int = 4096) -> list[int]:
    """Every value of ``term`` under which ``condition`` is satisfiable (all-SAT).

    Each answer is blocked with a clause ``term != value`` and the solver asked again,
    until it says unsat; ``limit`` guards against a runaway enumeration.
    """
    solver = _solver([condition])
    found: list[int] = []
    while solver.check() == z3.sat:
        value = int(solver.model().eval(term, model_completion=True).as_long())
        found.append(value)
        if len(found) > limit:
            raise RuntimeError(f"more than {limit} values: the enumeration does not end")
        solver.add(term != value)
    return sorted(found)


def extreme(term: Expr, condition: Expr, *, largest: bool) -> int | None:
    """The largest (or smallest) value of the unsigned ``term`` under ``condition``."""
    optimizer = z3.Optimize()
    optimizer.set("timeout", TIMEOUT_MS)
    optimizer.add(condition)
    if largest:
        optimizer.maximize(term)
    else:
        optimizer.minimize(term)
    if optimizer.check() != z3.sat:
        return None
    return int(optimizer.model().eval(term, model_completion=True).as_long())


def _constant(var: Expr, number: int) -> Expr:
    if z3.is_bool(var):
        return z3.BoolVal(bool(number))
    if z3.is_int(var):
        return z3.IntVal(number)
    return z3.BitVecVal(number, var.size())


def evaluate(term: Expr, assignment: Sequence[tuple[Expr, int]]) -> int:
    """The value of a bit-vector, integer or Boolean ``term`` (as 0 or 1) once every
    variable in it is given a number; ValueError if it still depends on something else."""
    pairs = [(var, _constant(var, number)) for var, number in assignment]
    result = z3.simplify(z3.substitute(term, *pairs))
    if z3.is_true(result) or z3.is_false(result):
        return int(z3.is_true(result))
    if not (z3.is_bv_value(result) or z3.is_int_value(result)):
        raise ValueError(f"not a constant after substitution: {result}")
    return int(result.as_long())


def value(model: Model, term: Expr) -> int:
    """The integer value of a bit-vector term in a model."""
    return int(model.eval(term, model_completion=True).as_long())


def holds(model: Model, term: Expr) -> bool:
    """The truth value of a Boolean term in a model."""
    return bool(z3.is_true(model.eval(term, model_completion=True)))


__all__ = [
    "WIDTH",
    "Answer",
    "Expr",
    "Model",
    "all_values",
    "big_endian",
    "byte",
    "count",
    "evaluate",
    "extreme",
    "holds",
    "num",
    "prove",
    "search",
    "value",
    "widen",
    "word",
    "z3",
]
