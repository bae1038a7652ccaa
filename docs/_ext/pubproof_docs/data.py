"""The data the site is built from, besides the registries: the latest ``pubproof prove``
run, the normative index copied into the project, and the out-of-scope list."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class DocsDataError(Exception):
    """The data the site needs is missing or does not fit the registries."""


# --- pubproof prove --json -------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ProvedMutant:
    """A theorem's mutant as the run reported it: what is broken and what told it apart."""

    name: str
    description: str
    status: str
    killed: bool
    details: str
    counterexample: list[dict[str, Any]] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ProvedTheorem:
    """One theorem as the latest ``pubproof prove --json`` run reported it."""

    id: str
    statement: str
    rules: tuple[str, ...]
    editions: tuple[str, ...]
    method: str
    expected: str
    status: str
    seconds: float
    counterexample: list[dict[str, Any]] | None
    details: str
    mutants: tuple[ProvedMutant, ...]

    @property
    def as_expected(self) -> bool:
        return self.status == self.expected


@dataclass(frozen=True, slots=True, kw_only=True)
class ProveRun:
    seconds: float
    theorems: Mapping[str, ProvedTheorem]
    path: Path


def load_prove(path: Path) -> ProveRun:
    """The report ``scripts/docs`` wrote with ``pubproof prove --json``."""
    if not path.is_file():
        raise DocsDataError(
            f"{path} is missing: build the site with scripts/docs, which runs "
            "`pubproof prove --json` first so that every theorem's status is the latest"
        )
    raw = json.loads(path.read_text(encoding="utf-8"))
    theorems = {}
    for t in raw["theorems"]:
        theorems[t["id"]] = ProvedTheorem(
            id=t["id"],
            statement=t["statement"],
            rules=tuple(t["rules"]),
            editions=tuple(t["editions"]),
            method=t["method"],
            expected=t["expected"],
            status=t["status"],
            seconds=float(t["seconds"]),
            counterexample=t["counterexample"],
            details=t["details"],
            mutants=tuple(
                ProvedMutant(
                    name=m["name"],
                    description=m["description"],
                    status=m["status"],
                    killed=m["killed"],
                    details=m["details"],
                    counterexample=m.get("counterexample"),
                )
                for m in t["mutants"]
            ),
        )
    return ProveRun(seconds=float(raw["seconds"]), theorems=theorems, path=path)


# --- the normative index ---------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexEntry:
    """A row of Table A (MQTT 3.1.1) of the normative index."""

    id: str
    section: str
    strength: str
    binds: str
    paraphrase: str


_ROW = re.compile(r"^\| (MQTT-[0-9.]+-\d+) \| ([0-9.]+) \| ([^|]+) \| ([^|]+) \| (.+) \|\s*$")


def _table_rows(path: Path, first: str, last: str, table: str) -> dict[str, IndexEntry]:
    """The rows of one id each between the headings ``first`` and ``last`` of an index (a
    row twice is an error)."""
    text = path.read_text(encoding="utf-8")
    start = text.index(first)
    end = text.index(last, start)
    entries: dict[str, IndexEntry] = {}
    for line in text[start:end].splitlines():
        match = _ROW.match(line)
        if not match:
            continue
        rule_id, section, strength, binds, paraphrase = (g.strip() for g in match.groups())
        if rule_id in entries:
            raise DocsDataError(f"{path}: {rule_id} has two rows in Table {table}")
        entries[rule_id] = IndexEntry(
            id=rule_id, section=section, strength=strength, binds=binds, paraphrase=paraphrase
        )
    return entries


def load_index(path: Path) -> dict[str, IndexEntry]:
    """The MQTT 3.1.1 rows of the normative index (Table A and the related ids after it,
    up to Table B, which is MQTT 5.0)."""
    entries = _table_rows(path, "## Table A", "## Table B", "A")
    if len(entries) < 50:
        raise DocsDataError(f"{path}: only {len(entries)} rows of Table A parsed")
    return entries


_ROW_50 = re.compile(
    r"^\| (MQTT-[0-9.]+-)(\d+)(?:\.\.(\d+))? \| ([0-9.]+) \| ([^|]+) \| ([^|]+) \| (.+) \|\s*$"
)


def load_index_50(path: Path) -> dict[str, IndexEntry]:
    """The MQTT 5.0 rows of the normative index: Table B and the related 5.0 ids after it
    (up to its Notes). A row that names a range (``MQTT-4.7.3-1..4``, "Same four topic
    rules as 3.1.1 ...") stands for each id of the range. The ids are 5.0's: the same
    string can name another statement in Table A."""
    text = path.read_text(encoding="utf-8")
    start = text.index("## Table B")
    end = text.index("## Notes", start)
    entries: dict[str, IndexEntry] = {}
    for line in text[start:end].splitlines():
        match = _ROW_50.match(line)
        if not match:
            continue
        stem, first, last, section, strength, binds, paraphrase = (
            g.strip() if g else g for g in match.groups()
        )
        for number in range(int(first), int(last or first) + 1):
            rule_id = f"{stem}{number}"
            if rule_id in entries:
                raise DocsDataError(f"{path}: {rule_id} has two rows in Table B")
            entries[rule_id] = IndexEntry(
                id=rule_id, section=section, strength=strength, binds=binds, paraphrase=paraphrase
            )
    if len(entries) < 90:
        raise DocsDataError(f"{path}: only {len(entries)} rows of Table B parsed")
    return entries


#: The distribution index's tables: (heading, the heading after it, rows it holds). Its
#: introduction counts them: "43 ids" in Table C, "all 59 ids" in Table D.
_DIST_TABLES = {
    "C": ("## Table C", "## Table D", 43),
    "D": ("## Table D", "## Notes", 59),
}


def load_dist_index(path: Path, table: str) -> dict[str, IndexEntry]:
    """The rows of the distribution index's Table C (MQTT 3.1.1) or Table D (MQTT 5.0):
    every labelled statement of 3.1.2.4, 3.8 to 3.11 and 4.4 to 4.8 (5.0 also 3.1.2.11.2),
    one id a row. The ids of Table D are 5.0's: the same string can name another statement
    in Table C (MQTT-3.1.2-4..6, MQTT-4.7.1-1/-2)."""
    start_heading, end_heading, expected = _DIST_TABLES[table]
    entries = _table_rows(path, start_heading, end_heading, table)
    if len(entries) != expected:
        raise DocsDataError(
            f"{path}: {len(entries)} rows of Table {table} parsed, not the {expected} it holds"
        )
    return entries


# --- out of scope ----------------------------------------------------------------------


#: The editions an out-of-scope entry can name (absent: 3.1.1, 3.1 or a project id shared
#: by the editions, as before 5.0).
OUT_OF_SCOPE_EDITIONS = ("5.0",)


def statement_key(rule_id: str, edition: str | None) -> str:
    """The key of a traced statement: the id itself, or ``5.0:<id>`` for a 5.0 statement
    (5.0 reuses numbers of 3.1.1 for other statements: MQTT-2.2.2-1, MQTT-3.3.1-5..12)."""
    return f"{edition}:{rule_id}" if edition == "5.0" else rule_id


@dataclass(frozen=True, slots=True, kw_only=True)
class OutOfScope:
    id: str
    reason: str
    kind: str  # "statement": outside the model; "unverified": implemented, not verified yet
    edition: str | None = None  # "5.0" for a 5.0 statement

    @property
    def key(self) -> str:
        return statement_key(self.id, self.edition)


def load_out_of_scope(path: Path) -> dict[str, OutOfScope]:
    """``[[statement]]`` (no rule of the model states it) and ``[[unverified]]``
    (implemented, not yet verified) tables, each with an ``id``, a one-line ``reason`` and,
    for a 5.0 statement, ``edition = "5.0"``; by statement key (:func:`statement_key`).
    The ``[[gap]]`` tables of the same file are :func:`load_gaps`'."""
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    unknown = set(raw) - {"statement", "unverified", "gap"}
    if unknown:
        raise DocsDataError(f"{path}: unknown tables {sorted(unknown)}")
    found: dict[str, OutOfScope] = {}
    for kind in ("statement", "unverified"):
        for entry in raw.get(kind, []):
            rule_id, reason = entry.get("id"), entry.get("reason", "")
            if not rule_id or not str(reason).strip():
                raise DocsDataError(f"{path}: every entry needs an id and a reason: {entry!r}")
            edition = entry.get("edition")
            if edition is not None and edition not in OUT_OF_SCOPE_EDITIONS:
                raise DocsDataError(f"{path}: {rule_id}: unknown edition {edition!r}")
            unknown_keys = set(entry) - {"id", "reason", "edition"}
            if unknown_keys:
                raise DocsDataError(f"{path}: {rule_id}: unknown keys {sorted(unknown_keys)}")
            item = OutOfScope(id=rule_id, reason=str(reason).strip(), kind=kind, edition=edition)
            if item.key in found:
                raise DocsDataError(f"{path}: {item.key} listed twice")
            found[item.key] = item
    return found


@dataclass(frozen=True, slots=True, kw_only=True)
class Gap:
    """Something the texts ask of a server that has no traced id (an unlabelled sentence,
    or a labelled one outside the traced sections) and that the model leaves out."""

    what: str
    where: str  # the edition and section, or the ids
    reason: str


def load_gaps(path: Path) -> list[Gap]:
    """The ``[[gap]]`` tables of the out-of-scope file, in file order."""
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    gaps = []
    for entry in raw.get("gap", []):
        if set(entry) != {"what", "where", "reason"} or not all(
            str(v).strip() for v in entry.values()
        ):
            raise DocsDataError(f"{path}: a gap needs what, where and a reason: {entry!r}")
        gaps.append(Gap(what=entry["what"], where=entry["where"], reason=entry["reason"]))
    return gaps
