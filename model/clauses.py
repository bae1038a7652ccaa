"""The five PUBLISH excerpts split into aligned clauses (data: ``texts/clauses.toml``).

A clause is one thing the PUBLISH section says (the DUP flag, the worked example, ...).
For each language it names the line ranges of ``texts/publish.<lang>.txt`` that say it, or
why that language does not say it at all. The docs site shows the languages side by side
from this, and the ambiguity catalog (:mod:`pubproof.model.ambiguities`) files each entry
under a clause.

Line numbers are 1-based and inclusive, counted by splitting the file on ``"\\n"`` only
(as ``cat -n`` and editors number them).
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Any

from pubproof.model.editions import READINGS
from pubproof.model.rules import RULES

#: The languages of the excerpts, in the order the site shows them.
LANGUAGES: tuple[str, ...] = ("en", "de", "ja", "es", "zh")


@functools.cache
def lines(lang: str) -> tuple[str, ...]:
    """The lines of ``publish.<lang>.txt``; ``lines(lang)[n - 1]`` is line ``n``."""
    if lang not in LANGUAGES:
        raise KeyError(f"no excerpt in language {lang!r} (known: {', '.join(LANGUAGES)})")
    text = (resources.files("pubproof.model.texts") / f"publish.{lang}.txt").read_text(
        encoding="utf-8"
    )
    return tuple(text.split("\n"))


@dataclass(frozen=True, slots=True, kw_only=True)
class Span:
    """Lines ``first`` to ``last`` (1-based, inclusive) of one excerpt."""

    lang: str
    first: int
    last: int

    def text(self) -> str:
        return "\n".join(lines(self.lang)[self.first - 1 : self.last])


@dataclass(frozen=True, slots=True, kw_only=True)
class Frame:
    """Lines that belong to no clause: a page title, a heading over several clauses, a footer."""

    span: Span
    what: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Clause:
    """One clause of the PUBLISH section, aligned across the five excerpts."""

    id: str
    title: str
    order: int
    summary: str  # one sentence, English
    rules: tuple[str, ...]  # keys of pubproof.model.rules.RULES
    normative_ids: tuple[str, ...]  # MQTT 3.1.1 ids the clause states or bears on
    readings: tuple[str, ...]  # names in pubproof.model.editions.READINGS
    spans: Mapping[str, tuple[Span, ...]]  # per language; a language without the clause is absent
    gaps: Mapping[str, str]  # per language without a span: why the clause is missing there

    def text(self, lang: str) -> str | None:
        """The exact lines of ``lang`` that say this clause (ranges joined by a newline), or
        None when that language lacks the clause (``gaps[lang]`` says why)."""
        spans = self.spans.get(lang)
        if not spans:
            return None
        return "\n".join(span.text() for span in spans)

    def excerpts(self, lang: str) -> tuple[str, ...]:
        """The text of each range of ``lang`` separately (empty when the language lacks it)."""
        return tuple(span.text() for span in self.spans.get(lang, ()))


def _spans(lang: str, ranges: list[list[int]]) -> tuple[Span, ...]:
    return tuple(Span(lang=lang, first=first, last=last) for first, last in ranges)


def _clause(entry: dict[str, Any]) -> Clause:
    spans = {lang: _spans(lang, ranges) for lang, ranges in entry["spans"].items()}
    return Clause(
        id=entry["id"],
        title=entry["title"],
        order=entry["order"],
        summary=entry["summary"],
        rules=tuple(entry["rules"]),
        normative_ids=tuple(entry["normative_ids"]),
        readings=tuple(entry["readings"]),
        spans=MappingProxyType({lang: spans[lang] for lang in LANGUAGES if lang in spans}),
        gaps=MappingProxyType(dict(entry.get("gaps", {}))),
    )


def load(data: Mapping[str, Any]) -> tuple[tuple[Clause, ...], tuple[Frame, ...]]:
    """Clauses (sorted by ``order``) and frames from the parsed TOML document."""
    clauses = sorted((_clause(entry) for entry in data["clause"]), key=lambda c: c.order)
    frames = tuple(
        Frame(span=Span(lang=f["lang"], first=f["lines"][0], last=f["lines"][1]), what=f["what"])
        for f in data.get("frame", ())
    )
    return tuple(clauses), frames


def problems(clauses: tuple[Clause, ...], frames: tuple[Frame, ...]) -> list[str]:
    """Everything wrong with an alignment, in words (empty when it holds).

    Every non-blank line of every excerpt belongs to exactly one clause range or frame;
    ranges lie inside their file, start and end on a non-blank line and do not overlap; a
    clause has, per language, either ranges (ascending) or a reason for the gap, never
    both; ids and orders are unique; rule keys and reading names exist in the registries.
    """
    found: list[str] = []
    ids = [c.id for c in clauses]
    found += [
        f"clause id {i!r} is used twice" for i in sorted({i for i in ids if ids.count(i) > 1})
    ]
    orders = [c.order for c in clauses]
    if len(set(orders)) != len(orders):
        found.append(f"clause orders are not unique: {orders}")
    owned: dict[str, list[tuple[Span, str]]] = {lang: [] for lang in LANGUAGES}
    for frame in frames:
        owned.setdefault(frame.span.lang, []).append((frame.span, f"frame {frame.what!r}"))
    for clause in clauses:
        found += _clause_problems(clause)
        for lang, spans in clause.spans.items():
            owned.setdefault(lang, []).extend((span, f"clause {clause.id!r}") for span in spans)
    for lang in LANGUAGES:
        found += _coverage_problems(lang, owned[lang])
    return found


def _clause_problems(clause: Clause) -> list[str]:
    where = f"clause {clause.id!r}"
    found = [f"{where}: unknown rule key {k!r}" for k in clause.rules if k not in RULES]
    found += [f"{where}: unknown reading {r!r}" for r in clause.readings if r not in READINGS]
    found += [
        f"{where}: unknown language {lang!r}"
        for lang in (*clause.spans, *clause.gaps)
        if lang not in LANGUAGES
    ]
    for lang in LANGUAGES:
        spans, gap = clause.spans.get(lang, ()), clause.gaps.get(lang, "").strip()
        if spans and lang in clause.gaps:
            found.append(f"{where}: {lang} has both lines and a gap reason")
        if not spans and not gap:
            found.append(f"{where}: {lang} has no lines and no reason for the gap")
        starts = [s.first for s in spans]
        if starts != sorted(starts):
            found.append(f"{where}: the {lang} ranges are not in ascending order")
    return found


def _coverage_problems(lang: str, owned: list[tuple[Span, str]]) -> list[str]:
    """Ranges of one excerpt (with who owns each) against the excerpt's lines."""
    text = lines(lang)
    found: list[str] = []
    ranked = sorted(owned, key=lambda item: (item[0].first, item[0].last))
    previous: tuple[Span, str] | None = None
    covered: set[int] = set()
    for span, owner in ranked:
        label = f"{owner}: {lang} lines {span.first}-{span.last}"
        if not 1 <= span.first <= span.last <= len(text):
            found.append(f"{label} are not a range of the file's {len(text)} lines")
            continue
        if not text[span.first - 1].strip() or not text[span.last - 1].strip():
            found.append(f"{label} start or end on a blank line")
        if previous is not None and span.first <= previous[0].last:
            found.append(f"{label} overlap {previous[1]} (to line {previous[0].last})")
        previous = (span, owner)
        covered.update(range(span.first, span.last + 1))
    for number, line in enumerate(text, start=1):
        if line.strip() and number not in covered:
            found.append(f"{lang} line {number} belongs to no clause or frame: {line[:40]!r}")
    return found


def _read() -> dict[str, Any]:
    source = resources.files("pubproof.model.texts") / "clauses.toml"
    return tomllib.loads(source.read_text(encoding="utf-8"))


CLAUSES: tuple[Clause, ...]
FRAMES: tuple[Frame, ...]
CLAUSES, FRAMES = load(_read())

#: Clauses by id.
BY_ID: Mapping[str, Clause] = MappingProxyType({c.id: c for c in CLAUSES})

__all__ = [
    "BY_ID",
    "CLAUSES",
    "FRAMES",
    "LANGUAGES",
    "Clause",
    "Frame",
    "Span",
    "lines",
    "load",
    "problems",
]
