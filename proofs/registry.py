"""The registry of named theorems, in the style of knuckledragger's ``prove(...)`` constants.

A theorem is a module-level constant: a claim in words, the normative rules it rests on,
the editions and readings it covers, how it is checked, the status it is expected to
reach, and its *mutants*. A mutant re-runs the very same check against a deliberately
broken variant of what the check encodes (a guard removed, a mask changed); a theorem
whose check cannot tell the broken variant from the real one proves too little, so every
mutant must be *killed*: the check must come to a different status, and when the theorem
is expected to be proved, with a counterexample.

Any theorem module registers with :func:`theorem`, used as a decorator on a function
``check(variant) -> Result``; the variant is whatever the module's encodings are
parameterised by (a codec for the wire format, a transition table for the protocol), so
theorems of any kind share the registry, the command line and the tests::

    @theorem(id="wire.rl-max", statement="...", rules=[...], editions=[...],
             method="z3-bv", model=MODEL, mutants=[Broken("five-rl-bytes", "...", FIVE)])
    def rl_max(codec: Codec) -> Result: ...

``rl_max`` is then the registered :class:`Theorem`.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Generic, Literal, TypeAlias, TypeVar

from pubproof.model.editions import Edition

Status: TypeAlias = Literal["proved", "refuted", "unknown", "failed"]
Expected: TypeAlias = Literal["proved", "refuted"]
#: Packets ``P`` (the JSON of ``pubproof decode``) or, for protocol theorems, trace
#: entries (``P`` with ``dir``, ``conn``, ``event``).
Evidence: TypeAlias = Sequence[Mapping[str, object]]

V = TypeVar("V")


@dataclass(frozen=True, slots=True, kw_only=True)
class Result:
    """The outcome of checking a theorem (or one of its mutants).

    ``counterexample`` is the evidence against the claim: for a refuted equivalence, the
    witness on which the two sides differ; for a failed cross-check, the input on which
    the encoding and the Python model disagree. ``details`` says what was checked and
    what was found, in words.
    """

    status: Status
    seconds: float = 0.0
    counterexample: Evidence | None = None
    details: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Mutant:
    """A named, deliberately broken variant that the theorem's check must tell apart."""

    name: str
    description: str
    check: Callable[[], Result]


@dataclass(frozen=True, slots=True)
class Broken(Generic[V]):
    """A mutant as the decorator takes it: a name, why it is a bug, the broken variant."""

    name: str
    description: str
    variant: V


@dataclass(frozen=True, slots=True, kw_only=True)
class Theorem:
    """A named claim and how to check it."""

    id: str
    statement: str
    rules: tuple[str, ...]  # normative rule ids (MQTT-x.y.z-n, PP311-..., PP31-...)
    editions: tuple[Edition, ...]
    readings: tuple[str, ...]  # the readings the claim ranges over or compares
    method: str  # "z3-bv", "z3-allsat", "z3-witness", "z3-spacer", "explicit", ...
    expected: Expected
    check: Callable[[], Result] = field(repr=False, compare=False)
    mutants: tuple[Mutant, ...] = ()
    #: what ``check`` checks (the variant the decorator was given as ``model``): for an
    #: expected refutation, the system it refutes, so its counterexample can be replayed there
    model: object = field(default=None, repr=False, compare=False)

    def kills(self, result: Result) -> bool:
        """Whether a mutant's result tells it apart from the real thing."""
        if result.status == self.expected:
            return False
        # Refuting a claim that should hold must come with the evidence; an expected
        # refutation is killed by not being reproduced (there is nothing to exhibit).
        return self.expected == "refuted" or result.counterexample is not None


class TheoremRegistry(Mapping[str, Theorem]):
    """Every registered theorem, by id, in registration order."""

    def __init__(self) -> None:
        self._theorems: dict[str, Theorem] = {}

    def add(self, entry: Theorem) -> Theorem:
        if entry.id in self._theorems:
            raise ValueError(f"duplicate theorem id {entry.id!r}")
        if not entry.mutants:
            raise ValueError(f"theorem {entry.id!r} has no mutant: nothing shows its check bites")
        self._theorems[entry.id] = entry
        return entry

    def __getitem__(self, theorem_id: str) -> Theorem:
        return self._theorems[theorem_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._theorems)

    def __len__(self) -> int:
        return len(self._theorems)


THEOREMS = TheoremRegistry()


def timed(check: Callable[[], Result]) -> Callable[[], Result]:
    """``check`` with its wall time recorded and any exception reported as "failed"."""

    def run() -> Result:
        start = time.perf_counter()
        try:
            result = check()
        except Exception:  # a crashing check is a failed check, never a crashed run
            result = Result(status="failed", details=traceback.format_exc())
        return replace(result, seconds=time.perf_counter() - start)

    return run


def theorem(
    *,
    id: str,  # shadows the builtin on purpose: the field is called id everywhere
    statement: str,
    rules: Sequence[str],
    editions: Sequence[Edition],
    method: str,
    model: V,
    mutants: Sequence[Broken[V]],
    readings: Sequence[str] = (),
    expected: Expected = "proved",
) -> Callable[[Callable[[V], Result]], Theorem]:
    """Register the decorated ``check(variant)`` as a theorem.

    The theorem checks ``model`` (the real thing); each mutant runs the same function on
    its broken variant.
    """

    def register(check: Callable[[V], Result]) -> Theorem:
        def bind(variant: V) -> Callable[[], Result]:
            return timed(lambda: check(variant))

        return THEOREMS.add(
            Theorem(
                id=id,
                statement=statement,
                rules=tuple(dict.fromkeys(rules)),
                editions=tuple(editions),
                readings=tuple(readings),
                method=method,
                expected=expected,
                check=bind(model),
                model=model,
                mutants=tuple(
                    Mutant(name=m.name, description=m.description, check=bind(m.variant))
                    for m in mutants
                ),
            )
        )

    return register


__all__ = [
    "THEOREMS",
    "Broken",
    "Evidence",
    "Expected",
    "Mutant",
    "Result",
    "Status",
    "Theorem",
    "TheoremRegistry",
    "theorem",
    "timed",
]
