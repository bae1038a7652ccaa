"""The normative index: the project's paraphrase of each labelled MQTT 3.1.1 statement that
PUBLISH and its flows rest on (data: Table A of ``texts/normative-index.txt``).

The file is the shared source material ``normative-index.md``, copied unchanged below a
first line that records where from and its SHA-256 (the docs site keeps the same copy in
``docs/data``; a test holds the two equal). It ships with the package so that an installed
pubproof can say what an id it cites means: the flow tables (:mod:`pubproof.model.flows`)
cite MQTT 3.1.1 ids that the rule registry (:data:`pubproof.model.rules.RULES`, the wire
format) does not hold.

The paraphrases are the index's own wording, not quotations of the standard; the index
says so at its head.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType

FILE = "normative-index.txt"
_START, _END = "## Table A", "## Table B"
_END_B = "## Notes"  # Table B (MQTT 5.0) and its related ids run up to the notes
# | id | section | strength | binds | paraphrase |
_ROW = re.compile(r"^\| (MQTT-[0-9.]+-\d+) \| ([0-9.]+) \| ([^|]+) \| ([^|]+) \| (.+) \|\s*$")


class MalformedIndex(ValueError):
    """The packaged index is not what this module reads (a row twice, no Table A)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexEntry:
    """One row of Table A: an MQTT 3.1.1 id and what the index says of it."""

    id: str
    section: str
    strength: str  # the RFC 2119 keyword(s) of the labelled sentence(s), as the index gives them
    binds: str  # the party the sentence constrains, in the index's words
    paraphrase: str


def parse(text: str, table: str = "A") -> Mapping[str, IndexEntry]:
    """The rows of Table A (and of the related 3.1.1 ids listed after it, up to Table B),
    or with ``table="B"`` those of Table B (MQTT 5.0, and its related ids)."""
    first, last = (_START, _END) if table == "A" else (_END, _END_B)
    try:
        start, end = text.index(first), text.index(last)
    except ValueError:
        raise MalformedIndex(f"the index has no {first!r} before {last!r}") from None
    entries: dict[str, IndexEntry] = {}
    for line in text[start:end].splitlines():
        match = _ROW.match(line)
        if match is None:
            continue
        rule_id, section, strength, binds, paraphrase = (g.strip() for g in match.groups())
        if rule_id in entries:
            raise MalformedIndex(f"{rule_id} has two rows in Table {table}")
        entries[rule_id] = IndexEntry(
            id=rule_id, section=section, strength=strength, binds=binds, paraphrase=paraphrase
        )
    return MappingProxyType(entries)


@functools.cache
def table_a() -> Mapping[str, IndexEntry]:
    """Table A of the packaged index, by id (read once)."""
    text = (resources.files("pubproof.model.texts") / FILE).read_text(encoding="utf-8")
    return parse(text)


@functools.cache
def table_b() -> Mapping[str, IndexEntry]:
    """Table B (MQTT 5.0) of the packaged index, by id (read once)."""
    text = (resources.files("pubproof.model.texts") / FILE).read_text(encoding="utf-8")
    return parse(text, "B")
