"""pubproof.probe: judge a live MQTT broker against the model.

``probe(Target.parse("mqtt://127.0.0.1:1883"))`` connects as several clients (the reference
Session, made to misbehave where a check needs it), runs the catalog of checks
(:mod:`~pubproof.probe.catalog`) and judges every packet that comes back, every silence and
every closed connection with the model: the wire format (:mod:`pubproof.model.wire`) and
the flow tables (:mod:`pubproof.model.flows`; in MQTT 5.0 :mod:`pubproof.model.flows50`
and :mod:`pubproof.model.topic_alias`, with the limits each end declared), through the
judges of :mod:`pubproof.judge`. MQTT 5.0 has its own catalog (:data:`CHECKS50`). Each
check gives ``pass``, ``tolerated``, ``violation``, ``no-answer`` or ``error``, with the
rule ids and the trace it rests on; the verdict is a function of the trace alone
(:func:`rejudge`).

The probe contacts only its target, bounds every wait, and never hangs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pubproof.model.editions import Edition, resolve_readings
from pubproof.probe.catalog import BY_ID, BY_ID50, CHECKS, CHECKS50, by_id, catalog, select
from pubproof.probe.check import Check
from pubproof.probe.findings import VERDICTS, Judgement
from pubproof.probe.report import CheckResult, Report
from pubproof.probe.runner import probe, safe_judge
from pubproof.probe.target import Target
from pubproof.probe.timing import Timing


def rejudge(
    check_id: str,
    evidence: list[dict[str, Any]],
    edition: Edition = Edition.V311,
    readings: Mapping[str, str] | None = None,
) -> Judgement:
    """Judge a check's evidence (e.g. from a JSON report) again with the model; the check
    is looked up in the catalog of ``edition``."""
    check = by_id(edition)[check_id]
    return safe_judge(check, evidence, edition, resolve_readings(edition, readings))


__all__ = [
    "BY_ID",
    "BY_ID50",
    "CHECKS",
    "CHECKS50",
    "VERDICTS",
    "Check",
    "CheckResult",
    "Judgement",
    "Report",
    "Target",
    "Timing",
    "catalog",
    "probe",
    "rejudge",
    "select",
]
