"""The ambiguity catalog (data: ``texts/ambiguities.toml``).

Every place where the five PUBLISH excerpts disagree with each other or with the later
editions, where one is silent, where a translation is wrong, incomplete or garbled, or
where an example does not match its own figure. Each entry quotes the passages exactly
(``quotes``: substrings of ``texts/publish.<lang>.txt``), states the possible readings in
words, says what pubproof does about it (``model``; the reading in
:data:`pubproof.model.editions.READINGS` that switches it, when one exists) and names the
theorem whose counterexample separates the readings (``witness``), when one exists.
"""

from __future__ import annotations

import enum
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Any

from pubproof.model.clauses import BY_ID as CLAUSES_BY_ID
from pubproof.model.clauses import LANGUAGES, lines
from pubproof.model.editions import READINGS
from pubproof.model.rules import RULES


class Kind(enum.Enum):
    """What sort of difference an entry records."""

    DISAGREEMENT = "disagreement"  # the texts say different things
    SILENCE = "silence"  # one text is silent where others speak
    MISTRANSLATION = "mistranslation"  # a translation says something else than its source
    INCOMPLETE = "incomplete"  # a sentence, table or heading is missing
    GARBLED = "garbled"  # typos, broken words or grammar, capture damage
    EXAMPLE_MISMATCH = "example-mismatch"  # an example disagrees with its own figure
    LATER_EDITION = "later-edition"  # 3.1.1 or 5.0 says something else
    TERMINOLOGY = "terminology"  # the same thing under different names
    NUMBERING = "numbering"  # labels and ids printed wrongly


class Severity(enum.Enum):
    """What depends on the choice between the readings."""

    WIRE = "changes-wire-verdict"  # the verdict on some bytes
    FLOW = "changes-flow-behaviour"  # what an end does in a flow (no single packet shows it)
    EDITORIAL = "editorial"  # nothing a peer can observe


@dataclass(frozen=True, slots=True, kw_only=True)
class Quote:
    """An exact passage of one excerpt, with an English gloss for the translations."""

    lang: str
    text: str
    note: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Ambiguity:
    """One entry of the catalog."""

    id: str
    title: str
    clause: str  # a clause id of pubproof.model.clauses
    kinds: tuple[Kind, ...]
    severity: Severity
    summary: str
    quotes: tuple[Quote, ...]
    readings: tuple[str, ...]  # the possible readings, in words
    model: str  # what pubproof does about it
    reading: str | None = None  # the name in READINGS that switches it
    witness: str | None = None  # the theorem whose counterexample separates the readings
    rules: tuple[str, ...] = ()  # keys of RULES that embody the choice


def _ambiguity(entry: Mapping[str, Any]) -> Ambiguity:
    return Ambiguity(
        id=entry["id"],
        title=entry["title"],
        clause=entry["clause"],
        kinds=tuple(Kind(k) for k in entry["kinds"]),
        severity=Severity(entry["severity"]),
        summary=entry["summary"],
        quotes=tuple(
            Quote(lang=q["lang"], text=q["text"], note=q.get("note")) for q in entry["quotes"]
        ),
        readings=tuple(entry["readings"]),
        model=entry["model"],
        reading=entry.get("reading"),
        witness=entry.get("witness"),
        rules=tuple(entry.get("rules", ())),
    )


def load(data: Mapping[str, Any]) -> tuple[Ambiguity, ...]:
    """The entries of a parsed catalog, in file order."""
    return tuple(_ambiguity(entry) for entry in data["ambiguity"])


def problems(entries: tuple[Ambiguity, ...]) -> list[str]:
    """Everything wrong with a catalog, in words (empty when it holds).

    Ids are unique; every quote is an exact substring of its excerpt and every translated
    quote has an English gloss; the clause, the reading and the rule keys exist; an entry
    states at least two readings; an entry with a reading says, in ``model``, the reading's
    default in every edition it applies to. (That the witness theorems exist is checked
    by the tests: the model does not import the proofs.)
    """
    found: list[str] = []
    ids = [e.id for e in entries]
    found += [
        f"ambiguity id {i!r} is used twice" for i in sorted({i for i in ids if ids.count(i) > 1})
    ]
    texts = {lang: "\n".join(lines(lang)) for lang in LANGUAGES}
    for entry in entries:
        where = f"ambiguity {entry.id!r}"
        if entry.clause not in CLAUSES_BY_ID:
            found.append(f"{where}: unknown clause {entry.clause!r}")
        if not entry.kinds:
            found.append(f"{where}: no kinds")
        if not entry.quotes:
            found.append(f"{where}: no quotes")
        if len(entry.readings) < 2:
            found.append(f"{where}: fewer than two readings")
        found += [f"{where}: unknown rule key {k!r}" for k in entry.rules if k not in RULES]
        for quote in entry.quotes:
            if quote.lang not in texts:
                found.append(f"{where}: unknown language {quote.lang!r}")
            elif not quote.text or quote.text not in texts[quote.lang]:
                found.append(f"{where}: not in publish.{quote.lang}.txt: {quote.text!r}")
            if quote.lang != "en" and not (quote.note or "").strip():
                found.append(f"{where}: the {quote.lang} quote {quote.text[:20]!r} has no gloss")
        if entry.reading is not None:
            reading = READINGS.get(entry.reading)
            if reading is None:
                found.append(f"{where}: unknown reading {entry.reading!r}")
                continue
            for edition, value in reading.defaults.items():
                if f"{edition.value}: {value}" not in entry.model:
                    found.append(
                        f"{where}: model does not state the default '{edition.value}: {value}'"
                    )
    return found


def _read() -> dict[str, Any]:
    source = resources.files("pubproof.model.texts") / "ambiguities.toml"
    return tomllib.loads(source.read_text(encoding="utf-8"))


AMBIGUITIES: tuple[Ambiguity, ...] = load(_read())

#: Entries by id.
BY_ID: Mapping[str, Ambiguity] = MappingProxyType({a.id: a for a in AMBIGUITIES})

__all__ = [
    "AMBIGUITIES",
    "BY_ID",
    "Ambiguity",
    "Kind",
    "Quote",
    "Severity",
    "load",
    "problems",
]
