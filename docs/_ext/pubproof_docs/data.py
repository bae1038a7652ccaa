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


def load_index(path: Path) -> dict[str, IndexEntry]:
    """The MQTT 3.1.1 rows of the normative index (Table A and the related ids after it,
    up to Table B, which is MQTT 5.0)."""
    text = path.read_text(encoding="utf-8")
    start = text.index("## Table A")
    end = text.index("## Table B")
    entries = {}
    for line in text[start:end].splitlines():
        match = _ROW.match(line)
        if match:
            rule_id, section, strength, binds, paraphrase = (g.strip() for g in match.groups())
            entries[rule_id] = IndexEntry(
                id=rule_id, section=section, strength=strength, binds=binds, paraphrase=paraphrase
            )
    if len(entries) < 50:
        raise DocsDataError(f"{path}: only {len(entries)} rows of Table A parsed")
    return entries


# --- out of scope ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class OutOfScope:
    id: str
    reason: str
    kind: str  # "statement": outside the model; "unverified": implemented, not verified yet


def load_out_of_scope(path: Path) -> dict[str, OutOfScope]:
    """``[[statement]]`` (outside the model) and ``[[unverified]]`` (implemented, not yet
    verified) tables, each with an ``id`` and a one-line ``reason``."""
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    unknown = set(raw) - {"statement", "unverified"}
    if unknown:
        raise DocsDataError(f"{path}: unknown tables {sorted(unknown)}")
    found: dict[str, OutOfScope] = {}
    for kind in ("statement", "unverified"):
        for entry in raw.get(kind, []):
            rule_id, reason = entry.get("id"), entry.get("reason", "")
            if not rule_id or not str(reason).strip():
                raise DocsDataError(f"{path}: every entry needs an id and a reason: {entry!r}")
            if rule_id in found:
                raise DocsDataError(f"{path}: {rule_id} listed twice")
            found[rule_id] = OutOfScope(id=rule_id, reason=str(reason).strip(), kind=kind)
    return found
