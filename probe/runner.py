"""Run the catalog against one target: each check on its own thread under a hard deadline,
a few checks at a time, the whole run under its own deadline.

Each check's actions run on a daemon thread that the runner waits for at most the check's
hard deadline (its own deadline, the liveness probes, the end actions). A check still
running then has its sockets closed and is judged on the evidence it has (with a
``deadline`` event); a check not started before the run's deadline is judged on a
``deadline`` event alone. Either way the probe ends.
"""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

from pubproof.judge.findings import ERROR, Source
from pubproof.model.editions import Edition, resolve_readings
from pubproof.probe.catalog import catalog, select
from pubproof.probe.check import Check, judge
from pubproof.probe.context import BrokerClosed, CheckContext, Stalled
from pubproof.probe.evidence import Entry
from pubproof.probe.findings import Judgement
from pubproof.probe.link import ProbeError
from pubproof.probe.progress import Progress
from pubproof.probe.report import NOT_APPLICABLE, CheckResult, Report
from pubproof.probe.support import beyond
from pubproof.probe.target import Target
from pubproof.probe.timing import Deadline, Timing


def probe(
    target: Target,
    *,
    edition: Edition = Edition.V311,
    readings: Mapping[str, str] | None = None,
    only: Sequence[str] = (),
    timing: Timing | None = None,
    jobs: int = 4,
    progress: Progress | None = None,
    max_qos: int = 2,
) -> Report:
    """Probe ``target`` with the catalog (or the checks ``only`` selects); never hangs."""
    timing = timing or Timing()
    resolved = resolve_readings(edition, readings)
    checks = select(only, edition)
    progress = progress or Progress(len(checks), enabled=False)
    progress.total = len(checks)
    progress.start(target.url, edition.value)
    run_id = secrets.token_hex(3)
    run_deadline = Deadline(timing.run)
    started = time.monotonic()

    def one(check: Check) -> CheckResult:
        result = run_check(
            check, target, edition, resolved, timing, run_id=run_id, run_deadline=run_deadline
        )
        why = beyond(result.evidence, max_qos)
        if why is not None:  # a check the broker cannot run: no failure (probe.support)
            per_rule = dict.fromkeys(result.rules, NOT_APPLICABLE)
            result = dataclasses.replace(
                result, verdict=NOT_APPLICABLE, message=why, rule_verdicts=per_rule
            )
        progress.finished(result)
        return result

    with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="probe") as pool:
        results = tuple(pool.map(one, checks))
    report = Report(
        target=target.url,
        edition=edition.value,
        readings=resolved,
        checks=results,
        seconds=round(time.monotonic() - started, 3),
    )
    progress.end(report)
    return report


def hard_deadline(timing: Timing) -> float:
    """The longest a check may take: its deadline, two liveness probes, its end actions."""
    return timing.check + 2 * timing.liveness + 2 * timing.answer + 0.5


def run_check(
    check: Check,
    target: Target,
    edition: Edition,
    readings: Mapping[str, str],
    timing: Timing,
    *,
    run_id: str,
    run_deadline: Deadline,
) -> CheckResult:
    """Run one check and judge its evidence."""
    started = time.monotonic()
    if run_deadline.expired():
        entries: list[Entry] = [
            {"event": "deadline", "client": None, "message": "not run: the run's deadline had "
             "passed", "t": 0.0}
        ]  # fmt: skip
    else:
        if check.extra:
            timing = dataclasses.replace(timing, check=timing.check + check.extra)
        ctx = CheckContext(
            target=target,
            edition=edition,
            readings=readings,
            timing=timing,
            run_id=run_id,
            check_id=check.id,
            check_no=catalog(edition).index(check),
        )
        thread = threading.Thread(target=_act, args=(check, ctx), daemon=True, name=check.id)
        thread.start()
        thread.join(hard_deadline(timing))
        entries = list(ctx.recorder.entries)
        if thread.is_alive():
            ctx.recorder.enabled = False
            ctx.abort()
            seconds = round(time.monotonic() - started, 3)
            entries.append({"event": "deadline", "client": None, "seconds": seconds, "t": seconds})
    judgement = safe_judge(check, entries, edition, readings)
    return CheckResult(
        id=check.id,
        title=check.title,
        rules=judgement.rules,
        verdict=judgement.verdict,
        evidence=tuple(entries),
        message=judgement.message,
        source=judgement.source,
        seconds=round(time.monotonic() - started, 3),
        rule_verdicts=dict(judgement.rule_verdicts),
        provoked=judgement.provoked,
    )


def safe_judge(
    check: Check, entries: Sequence[Entry], edition: Edition, readings: Mapping[str, str]
) -> Judgement:
    """The check's judgement; ``error`` (evidence kept) if the judge itself fails."""
    try:
        return judge(check, entries, edition, readings)
    except Exception as failure:  # a bug in a judge must not lose the evidence
        message = f"the judge failed: {type(failure).__name__}: {failure}"
        rules = check.rules_for(edition)
        per_rule = dict.fromkeys(rules, ERROR)
        return Judgement(ERROR, rules, message, Source.PROBE, per_rule)


def _act(check: Check, ctx: CheckContext) -> None:
    try:
        check.run(ctx)
    except (Stalled, BrokerClosed, ProbeError):
        pass  # recorded: the judge reads the evidence
    except Exception as failure:  # a bug in a check: say so in the evidence
        ctx.recorder.event("error", None, message=f"{type(failure).__name__}: {failure}")
    finally:
        with contextlib.suppress(Exception):  # the end actions are best effort
            ctx.finish()
