"""Verdicts, findings, and how the findings of a check make its verdict.

A check's judge produces findings; each says one thing about the broker: that it did what
the model says (``pass``), something the texts permit or leave open (``tolerated``, with the
variant or reading named), did not follow a SHOULD (``deviation``), broke a MUST
(``violation``), or never did something it owes (``missing``). A ``missing`` finding
becomes ``no-answer`` when the broker showed no sign of life after the probe's last wait
ran out, and ``violation`` when it did (it answers, just not this). The verdict is the
worst finding: ``error`` (the probe could not run the check) over ``violation`` over
``no-answer`` over ``deviation`` over ``tolerated`` over ``pass``.

A check charges the judged end only with its own duties (:mod:`pubproof.model.duties`):
the rules the probe broke on purpose to provoke the check, or that bind only the other
role, are the judgement's ``provoked``, never among its ``rule_verdicts``.

Findings are :class:`pubproof.judge.findings.Finding`: each names the judge that produced
it (``source``), and a verdict names the judges of its decisive findings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from pubproof.judge.findings import (
    DEVIATION,
    ERROR,
    MISSING,
    PASS,
    TOLERATED,
    VIOLATION,
    Finding,
    Source,
)
from pubproof.model.duties import Party, binds_only_others
from pubproof.model.editions import Edition

NO_ANSWER = "no-answer"

VERDICTS = (PASS, TOLERATED, DEVIATION, NO_ANSWER, VIOLATION, ERROR)
_RANK = {verdict: rank for rank, verdict in enumerate(VERDICTS)}


@dataclass(frozen=True, slots=True)
class Judgement:
    """The verdict of a check, the rule ids it rests on, what it says, and the judges of
    its decisive findings (``source``, comma-separated, each once)."""

    verdict: str
    rules: tuple[str, ...]
    message: str
    source: str = Source.PROBE
    #: the verdict for each rule judged (:func:`rule_verdicts`), in the order of ``rules``
    rule_verdicts: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    #: the rules the other end (the probe, on purpose) broke to bring the check about
    provoked: tuple[str, ...] = ()


def passed(message: str, *rules: str, source: str = Source.CHECK) -> Finding:
    """A finding that the broker did what the model says."""
    return Finding(verdict=PASS, rules=rules, message=message, source=source)


def tolerated(message: str, *rules: str, source: str = Source.CHECK) -> Finding:
    """A finding of a variant the texts permit or a reading they leave open."""
    return Finding(verdict=TOLERATED, rules=rules, message=message, source=source)


def deviation(message: str, *rules: str, source: str = Source.CHECK) -> Finding:
    """A finding that the broker did not follow a SHOULD."""
    return Finding(verdict=DEVIATION, rules=rules, message=message, source=source)


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
    role: str | None = None,
    edition: Edition | None = None,
    provoked: Sequence[str] = (),
) -> Judgement:
    """The verdict of a check from its findings; ``silence`` heads a no-answer message.

    With the judged end's ``role`` ("client" or "server") and the ``edition``, the check's
    rules that the judged end does not owe are not judged: those ``provoked`` (the rules
    the probe's case broke, :func:`pubproof.judge.close.close_charges`) or that a finding
    reports as provoked, unless a finding charges them too (the judgement's ``provoked``),
    and those that bind only the other role (:func:`pubproof.model.duties.
    binds_only_others`: a Server's duty in a check of a Client, left out)."""
    resolved = [
        Finding(
            verdict=VIOLATION if broker_alive else NO_ANSWER, rules=f.rules, message=f.message,
            source=f.source, role=f.role, evidence=f.evidence, provoked=f.provoked,
        )
        if f.verdict == MISSING
        else f
        for f in findings
    ]  # fmt: skip
    charged = {r for f in resolved for r in f.rules}
    set_apart = _unique([*provoked, *(r for f in resolved for r in f.provoked)])
    set_apart = [r for r in set_apart if r not in charged]
    others: list[str] = []  # rules of the check that bind only the other role: not judged
    if role is not None and edition is not None:
        party = Party.CLIENT if role == "client" else Party.SERVER
        others = [
            r for r in check_rules
            if r not in charged and binds_only_others(r, edition, role=party)
        ]  # fmt: skip
    own_rules = [r for r in check_rules if r not in set_apart and r not in others]
    if not resolved:
        resolved = [passed("the broker did what the model says")]
    worst = max(_RANK[f.verdict] for f in resolved)
    verdict = VERDICTS[worst]
    decisive = [f for f in resolved if f.verdict == verdict]
    rules = _unique([*own_rules, *(r for f in decisive for r in f.rules)])
    message = "; ".join(_unique(f.message for f in decisive))
    if verdict == NO_ANSWER and silence:
        message = f"{silence}: {message}"
    source = ",".join(_unique(f.source for f in decisive))
    per_rule = rule_verdicts(resolved, own_rules)
    return Judgement(verdict, tuple(rules), message, source, per_rule, tuple(set_apart))


def rule_verdicts(findings: Sequence[Finding], check_rules: Sequence[str]) -> Mapping[str, str]:
    """The verdict for each rule the check rests on or a finding cites: the worst finding
    that cites it; a finding citing no rule
    (a refused connection, a wait that ran out, a close nothing called for) counts against
    every rule of the check, since it cannot be laid at one; a rule no finding cites is
    ``pass`` (the check judged it and found nothing against it).

    So the worst rule verdict is the check's verdict, and a check that is ``tolerated``
    for one rule (a QoS 1 message delivered twice) still shows ``pass`` for another it
    judged (the forwarded copies' DUP 0, [MQTT-3.3.1-3])."""
    ranks = {rule: _RANK[PASS] for rule in check_rules}
    for f in findings:
        for rule in f.rules or check_rules:
            ranks[rule] = max(ranks.get(rule, 0), _RANK[f.verdict])
    return MappingProxyType({rule: VERDICTS[rank] for rule, rank in ranks.items()})


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
