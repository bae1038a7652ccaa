"""The result of a run: one entry per check, and its JSON form.

``to_json()`` is exactly::

    {"target": "mqtt://HOST:PORT", "edition": "3.1.1", "readings": {...},
     "seconds": total, "checks": [{"id", "title", "rules": [...],
     "rule_verdicts": {rule: verdict, ...}, "provoked": [...], "verdict",
     "evidence": [entry, ...], "message", "source", "seconds"}]}

with the entries of :mod:`pubproof.probe.evidence`; ``source`` names the judges of the
verdict's decisive findings (:class:`pubproof.judge.findings.Source`), comma-separated;
``rule_verdicts`` gives a verdict for each rule the check judged
(:func:`pubproof.probe.findings.rule_verdicts`), the worst of which is ``verdict``: only
the rules the implementation owes; ``provoked`` lists the rules pubproof broke on purpose to
bring the check about (what was sent, never the implementation's fault).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pubproof.probe.evidence import Entry
from pubproof.probe.findings import VERDICTS

#: the verdict of a check the implementation cannot run (not a failure)
NOT_APPLICABLE = "not-applicable"


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One check's verdict and the evidence it rests on."""

    id: str
    title: str
    rules: tuple[str, ...]
    verdict: str
    evidence: tuple[Entry, ...]
    message: str
    source: str
    seconds: float
    rule_verdicts: Mapping[str, str] = field(default_factory=dict)
    provoked: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The JSON form (see the module docstring)."""
        return {
            "id": self.id,
            "title": self.title,
            "rules": list(self.rules),
            "rule_verdicts": dict(self.rule_verdicts),
            "provoked": list(self.provoked),
            "verdict": self.verdict,
            "evidence": list(self.evidence),
            "message": self.message,
            "source": self.source,
            "seconds": self.seconds,
        }


@dataclass(frozen=True, slots=True)
class Report:
    """A whole run."""

    target: str
    edition: str
    readings: dict[str, str]
    checks: tuple[CheckResult, ...]
    seconds: float

    def counts(self) -> dict[str, int]:
        """How many checks got each verdict (every verdict listed)."""
        counted = Counter(c.verdict for c in self.checks)
        counts = {verdict: counted.get(verdict, 0) for verdict in VERDICTS}
        if counted.get(NOT_APPLICABLE):
            counts[NOT_APPLICABLE] = counted[NOT_APPLICABLE]
        return counts

    @property
    def clean(self) -> bool:
        """Every verdict pass, tolerated or deviation (a SHOULD not followed is no
        failure), or not-applicable (a check the implementation cannot run, such as QoS 2
        on a broker without it, is no failure)."""
        clean = ("pass", "tolerated", "deviation", NOT_APPLICABLE)
        return all(c.verdict in clean for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        """The JSON form (see the module docstring)."""
        return {
            "target": self.target,
            "edition": self.edition,
            "readings": dict(self.readings),
            "seconds": self.seconds,
            "checks": [c.to_json() for c in self.checks],
        }
