"""Verdicts, findings, and how the findings of a check make its verdict.

A check's judge produces findings; each says one thing about the broker: that it did what
the model says (``pass``), something the texts permit or leave open (``tolerated``, with the
variant or reading named), broke a rule (``violation``), or never did something it owes
(``missing``). A ``missing`` finding becomes ``no-answer`` when the broker showed no sign of
life after the probe's last wait ran out, and ``violation`` when it did (it answers, just
not this). The verdict is the worst finding: ``error`` (the probe could not run the check)
over ``violation`` over ``no-answer`` over ``tolerated`` over ``pass``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

PASS = "pass"
TOLERATED = "tolerated"
NO_ANSWER = "no-answer"
VIOLATION = "violation"
ERROR = "error"
MISSING = "missing"  # a finding only: becomes no-answer or violation

VERDICTS = (PASS, TOLERATED, NO_ANSWER, VIOLATION, ERROR)
_RANK = {verdict: rank for rank, verdict in enumerate(VERDICTS)}


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing the judge found, with the rule ids it rests on."""

    verdict: str  # one of VERDICTS, or MISSING
    rules: tuple[str, ...]
    message: str


@dataclass(frozen=True, slots=True)
class Judgement:
    """The verdict of a check, the rule ids it rests on and what it says."""

    verdict: str
    rules: tuple[str, ...]
    message: str


def passed(message: str, *rules: str) -> Finding:
    """A finding that the broker did what the model says."""
    return Finding(PASS, rules, message)


def tolerated(message: str, *rules: str) -> Finding:
    """A finding of a variant the texts permit or a reading they leave open."""
    return Finding(TOLERATED, rules, message)


def violation(message: str, *rules: str) -> Finding:
    """A finding that the broker broke a rule."""
    return Finding(VIOLATION, rules, message)


def missing(message: str, *rules: str) -> Finding:
    """A finding that the broker never did something it owes."""
    return Finding(MISSING, rules, message)


def error(message: str) -> Finding:
    """A finding that the probe could not run the check."""
    return Finding(ERROR, (), message)


def conclude(
    findings: Sequence[Finding],
    check_rules: Sequence[str],
    *,
    broker_alive: bool,
    silence: str = "the broker went silent",
) -> Judgement:
    """The verdict of a check from its findings; ``silence`` heads a no-answer message."""
    resolved = [
        Finding(VIOLATION if broker_alive else NO_ANSWER, f.rules, f.message)
        if f.verdict == MISSING
        else f
        for f in findings
    ]
    if not resolved:
        resolved = [passed("the broker did what the model says")]
    worst = max(_RANK[f.verdict] for f in resolved)
    verdict = VERDICTS[worst]
    decisive = [f for f in resolved if f.verdict == verdict]
    rules = _unique([*check_rules, *(r for f in decisive for r in f.rules)])
    message = "; ".join(_unique(f.message for f in decisive))
    if verdict == NO_ANSWER and silence:
        message = f"{silence}: {message}"
    return Judgement(verdict, tuple(rules), message)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
