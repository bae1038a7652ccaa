"""Verdicts, findings, and how the findings of a check make its verdict.

A check's judge produces findings; each says one thing about the broker: that it did what
the model says (``pass``), something the texts permit or leave open (``tolerated``, with the
variant or reading named), broke a rule (``violation``), or never did something it owes
(``missing``). A ``missing`` finding becomes ``no-answer`` when the broker showed no sign of
life after the probe's last wait ran out, and ``violation`` when it did (it answers, just
not this). The verdict is the worst finding: ``error`` (the probe could not run the check)
over ``violation`` over ``no-answer`` over ``tolerated`` over ``pass``.

Findings are :class:`pubproof.judge.findings.Finding`: each names the judge that produced
it (``source``), and a verdict names the judges of its decisive findings.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pubproof.judge.findings import ERROR, MISSING, PASS, TOLERATED, VIOLATION, Finding, Source

NO_ANSWER = "no-answer"

VERDICTS = (PASS, TOLERATED, NO_ANSWER, VIOLATION, ERROR)
_RANK = {verdict: rank for rank, verdict in enumerate(VERDICTS)}


@dataclass(frozen=True, slots=True)
class Judgement:
    """The verdict of a check, the rule ids it rests on, what it says, and the judges of
    its decisive findings (``source``, comma-separated, each once)."""

    verdict: str
    rules: tuple[str, ...]
    message: str
    source: str = Source.PROBE


def passed(message: str, *rules: str, source: str = Source.CHECK) -> Finding:
    """A finding that the broker did what the model says."""
    return Finding(verdict=PASS, rules=rules, message=message, source=source)


def tolerated(message: str, *rules: str, source: str = Source.CHECK) -> Finding:
    """A finding of a variant the texts permit or a reading they leave open."""
    return Finding(verdict=TOLERATED, rules=rules, message=message, source=source)


def violation(message: str, *rules: str, source: str = Source.CHECK) -> Finding:
    """A finding that the broker broke a rule."""
    return Finding(verdict=VIOLATION, rules=rules, message=message, source=source)


def missing(message: str, *rules: str, source: str = Source.CHECK) -> Finding:
    """A finding that the broker never did something it owes."""
    return Finding(verdict=MISSING, rules=rules, message=message, source=source)


def error(message: str, *, source: str = Source.PROBE) -> Finding:
    """A finding that the probe could not run the check."""
    return Finding(verdict=ERROR, rules=(), message=message, source=source)


def conclude(
    findings: Sequence[Finding],
    check_rules: Sequence[str],
    *,
    broker_alive: bool,
    silence: str = "the broker went silent",
) -> Judgement:
    """The verdict of a check from its findings; ``silence`` heads a no-answer message."""
    resolved = [
        Finding(
            verdict=VIOLATION if broker_alive else NO_ANSWER, rules=f.rules, message=f.message,
            source=f.source, role=f.role, evidence=f.evidence,
        )
        if f.verdict == MISSING
        else f
        for f in findings
    ]  # fmt: skip
    if not resolved:
        resolved = [passed("the broker did what the model says")]
    worst = max(_RANK[f.verdict] for f in resolved)
    verdict = VERDICTS[worst]
    decisive = [f for f in resolved if f.verdict == verdict]
    rules = _unique([*check_rules, *(r for f in decisive for r in f.rules)])
    message = "; ".join(_unique(f.message for f in decisive))
    if verdict == NO_ANSWER and silence:
        message = f"{silence}: {message}"
    source = ",".join(_unique(f.source for f in decisive))
    return Judgement(verdict, tuple(rules), message, source)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
