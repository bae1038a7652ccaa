"""The standard's own words for the normative ids of the indexes (Tables A to D): each
labelled sentence of MQTT 3.1.1 and 5.0 the project records, shown beside the index's
paraphrase, or a "not quoted yet" mark where the project has not checked the wording.

Rules of the record:

- A passage belongs to an id only through the label it carries: the sentence holds
  ``[MQTT-x.y.z-n]`` as the standard prints it (a passage is never filed under an id by
  position or by hand). Three labels are printed wrongly in the 3.1.1 OASIS Standard
  (:data:`PRINTED`, the normative index's notes name them); a passage carrying one of those
  counts for the id it means.
- The sources are the model's rules (their quotes of "MQTT 3.1.1 ..." or of the English
  3.1.1 excerpt, and of "MQTT 5.0 ..."), the ambiguity catalog's ``[[standard]]``
  passages, and ``docs/data/standard311.toml`` and ``docs/data/standard50.toml`` (the
  sentences no rule quotes, each checked against transcriptions of the OASIS text, as
  their header comments say). A data file that records a label twice, one a rule or the
  catalog already records, or a passage without exactly one label, is a problem (the build
  turns each into a warning, which fails the ``-W`` build).
- A paraphrase is never shown as a quote: an id without a recorded passage gets the mark.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from pubproof_docs.rst import esc

#: The labels the 3.1.1 OASIS Standard prints wrongly, by the id they mean (the normative
#: index's notes and the distribution index's note (c)).
PRINTED = {
    "MQTT-3.3.1-1": "MQTT-3.3.1.-1",
    "MQTT-3.1.2-7": "MQTT-3.1.2.7",
    "MQTT-3.8.3-4": "MQTT-3-8.3-4",
}

_LABEL = re.compile(r"\[(MQTT-\d+(?:\.\d+)*-\d+)\]")
_MEANT = {printed: ref for ref, printed in PRINTED.items()}

#: The text prefixes of each edition's quotes (the English excerpt is 3.1.1's text).
_PREFIXES = {"3.1.1": ("MQTT 3.1.1", "publish.en.txt"), "5.0": ("MQTT 5.0",)}

NOT_QUOTED = "not quoted yet"


@dataclass(frozen=True, slots=True, kw_only=True)
class Passage:
    """A sentence of the standard with the label it carries."""

    edition: str  # "3.1.1" or "5.0"
    source: str
    text: str
    label: str
    origin: str  # where the project records it

    def __post_init__(self) -> None:
        if self.label not in labels(self.text, self.edition):
            raise ValueError(f"a passage filed under {self.label} without its label: {self.text}")


def labels(text: str, edition: str) -> list[str]:
    """The ids a sentence of ``edition`` labels (in 3.1.1, a wrongly printed label counts
    for the id it means)."""
    found: list[str] = _LABEL.findall(text)
    if edition == "3.1.1":
        found += [ref for printed, ref in _MEANT.items() if f"[{printed}]" in text]
    return found


def standard_path(docs: Path, edition: str) -> Path:
    """The data file of an edition's sentences no rule quotes."""
    return docs / "data" / f"standard{edition.replace('.', '')}.toml"


def recorded(docs: Path, edition: str) -> tuple[dict[str, list[Passage]], list[str]]:
    """Every labelled sentence of ``edition`` ("3.1.1" or "5.0") the project records, by
    id, and the problems of its data file."""
    from pubproof.model.ambiguities import STANDARD
    from pubproof.model.rules import RULES

    prefixes = _PREFIXES[edition]
    found: dict[str, list[Passage]] = {}
    problems: list[str] = []

    def add(source: str, text: str, origin: str) -> None:
        for label in labels(text, edition):
            found.setdefault(label, []).append(
                Passage(edition=edition, source=source, text=text, label=label, origin=origin)
            )

    for rule in (*RULES.values(), *RULES.flows(), *RULES.distributions()):
        for quote in rule.quotes:
            if quote.source.startswith(prefixes):
                add(quote.source, quote.text, f"rule {rule.key}")
    for passage in STANDARD:
        if passage.source.startswith(prefixes):
            add(passage.source, passage.text, "the ambiguity catalog")
    elsewhere = set(found)
    path = standard_path(docs, edition)
    raw = tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    seen: set[str] = set()
    for entry in raw.get("passage", []):
        named = labels(entry["text"], edition)
        if len(named) != 1:
            problems.append(
                f"{path.name}: a passage carries {len(named)} labels: {entry['text']!r}"
            )
            continue
        if not entry["source"].startswith(f"MQTT {edition} section "):
            problems.append(f"{path.name}: {named[0]}'s source is not a section of {edition}")
        if named[0] in seen or named[0] in elsewhere:
            problems.append(f"{path.name}: {named[0]} is recorded twice")
        seen.add(named[0])
        add(entry["source"], entry["text"], path.name)
    return found, problems


def epigraph(passage: Passage) -> str:
    """A passage as a block quote, with its section and where the project records it."""
    return (
        f".. epigraph::\n\n   {esc(passage.text)}\n\n"
        f"   -- {esc(passage.source)} ({esc(passage.origin)})\n"
    )


def words(passages: dict[str, list[Passage]], ref: str) -> str:
    """The standard's own words for ``ref`` (reStructuredText): each recorded passage that
    carries its label, or the "not quoted yet" mark."""
    mine = [p for p in passages.get(ref, []) if p.label == ref]
    if not mine:
        return (
            f".. rst-class:: pp-unquoted\n\nThe standard's words: *{NOT_QUOTED}* (the project "
            "has not checked this sentence's wording; the paraphrase above is not a quote).\n"
        )
    texts = list(dict.fromkeys(p.text for p in mine))
    shown = [next(p for p in mine if p.text == t) for t in texts]
    return "The standard's own words:\n\n" + "\n".join(epigraph(p) for p in shown)


def inline(passages: dict[str, list[Passage]], ref: str) -> str:
    """The standard's own words for ``ref`` inside a table cell (reStructuredText): each
    recorded passage that carries its label with its section, or the "not quoted yet"
    mark."""
    texts = list(dict.fromkeys((p.text, p.source) for p in passages.get(ref, []) if p.label == ref))
    if not texts:
        return f"*{NOT_QUOTED}*"
    return "\n\n".join(f"“{esc(text)}” ({esc(source)})" for text, source in texts)


def unquoted(passages: dict[str, list[Passage]], refs: list[str]) -> list[str]:
    """The ids of ``refs`` no recorded passage quotes."""
    return [ref for ref in refs if not any(p.label == ref for p in passages.get(ref, []))]
