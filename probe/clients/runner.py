"""Run the client catalog against one client library, through its driver: each check on
its own thread under a hard deadline, with its own server and its own driver process, a
few checks at a time.

A check still running at its hard deadline is judged on the evidence it has (with a
``deadline`` event); its driver is stopped and its server closed either way.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pubproof.judge.findings import ERROR, Source
from pubproof.model.editions import Edition, resolve_readings
from pubproof.probe.clients.catalog import by_id, catalog, select
from pubproof.probe.clients.check import ClientCheck
from pubproof.probe.clients.context import ClientContext
from pubproof.probe.clients.driver import command_line
from pubproof.probe.clients.judge import judge_client
from pubproof.probe.clients.server import Stalled
from pubproof.probe.evidence import Entry
from pubproof.probe.findings import Judgement
from pubproof.probe.progress import Progress
from pubproof.probe.report import CheckResult, Report

#: the hard deadline of one check, seconds (its waits are shorter: the driver starts, the
#: client reconnects, pubproof listens for a close)
CHECK_SECONDS = 15.0
ANSWER_SECONDS = 2.0


def probe_client(
    driver: str,
    *,
    edition: Edition = Edition.V311,
    readings: Mapping[str, str] | None = None,
    only: Sequence[str] = (),
    jobs: int = 4,
    progress: Progress | None = None,
    check_seconds: float = CHECK_SECONDS,
) -> Report:
    """Judge the client that ``driver`` drives (a shipped driver's name, or a command
    line) with the client catalog (or the checks ``only`` selects); never hangs."""
    argv = command_line(driver)
    resolved = resolve_readings(edition, readings)
    checks = select(only, edition)
    progress = progress or Progress(len(checks), enabled=False)
    progress.total = len(checks)
    progress.start(driver, edition.value)
    run_id = secrets.token_hex(3)
    started = time.monotonic()

    def one(check: ClientCheck) -> CheckResult:
        result = run_check(check, argv, edition, resolved, run_id=run_id, seconds=check_seconds)
        progress.finished(result)
        return result

    with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="probe-client") as pool:
        results = tuple(pool.map(one, checks))
    report = Report(
        target=library_named(results) or driver,
        edition=edition.value,
        readings=resolved,
        checks=results,
        seconds=round(time.monotonic() - started, 3),
    )
    progress.end(report)
    return report


def library_named(results: Sequence[CheckResult]) -> str | None:
    """``library version`` as the drivers said hello, if any did."""
    for result in results:
        for entry in result.evidence:
            if entry.get("event") == "app" and entry.get("what") == "hello":
                return f"{entry.get('library')} {entry.get('version')}"
    return None


def run_check(
    check: ClientCheck,
    argv: Sequence[str],
    edition: Edition,
    readings: Mapping[str, str],
    *,
    run_id: str,
    seconds: float,
) -> CheckResult:
    """Run one client check and judge its evidence."""
    started = time.monotonic()
    ctx = ClientContext(
        argv=argv,
        edition=edition,
        readings=readings,
        seconds=seconds - 3.0,
        answer=ANSWER_SECONDS,
        run_id=run_id,
        check_id=check.id,
        check_no=catalog(edition).index(check),
    )
    thread = threading.Thread(target=_act, args=(check, ctx), daemon=True, name=check.id)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        ctx.recorder.event("deadline", None, seconds=round(time.monotonic() - started, 3))
    ctx.stop()
    entries: list[Entry] = list(ctx.recorder.entries)
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
    check: ClientCheck, entries: Sequence[Entry], edition: Edition, readings: Mapping[str, str]
) -> Judgement:
    """The check's judgement; ``error`` (evidence kept) if the judge itself fails."""
    try:
        return judge_client(check.judge, check.rules_for(edition), entries, edition, readings)
    except Exception as failure:  # a bug in a judge must not lose the evidence
        message = f"the judge failed: {type(failure).__name__}: {failure}"
        rules = check.rules_for(edition)
        return Judgement(ERROR, rules, message, Source.PROBE, dict.fromkeys(rules, ERROR))


def rejudge_client(
    check_id: str,
    evidence: list[dict[str, Any]],
    edition: Edition = Edition.V311,
    readings: Mapping[str, str] | None = None,
) -> Judgement:
    """Judge a client check's evidence (e.g. from a JSON report) again with the model."""
    check = by_id(edition)[check_id]
    return safe_judge(check, evidence, edition, resolve_readings(edition, readings))


def _act(check: ClientCheck, ctx: ClientContext) -> None:
    try:
        check.run(ctx)
    except Stalled:
        pass  # recorded: the judge reads the evidence
    except Exception as failure:  # a bug in a check: say so in the evidence
        ctx.recorder.event("error", None, message=f"{type(failure).__name__}: {failure}")
