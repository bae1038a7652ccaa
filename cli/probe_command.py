"""``pubproof probe mqtt://HOST:PORT``: judge a live broker against the model.

Progress goes to standard error, one line per check as it finishes. Standard output gets a
table, or with ``--json`` exactly::

    {"target": "mqtt://HOST:PORT", "edition": "3.1.1", "readings": {...}, "seconds",
     "checks": [{"id", "title", "rules": [...], "rule_verdicts": {rule: verdict, ...},
       "provoked": [...],
       "verdict": "pass"|"tolerated"|"deviation"|"violation"|"no-answer"|"error",
       "evidence": [entry, ...], "message", "source", "seconds"}]}

``rules`` and ``rule_verdicts`` name only the broker's own duties; ``provoked`` the rules
the probe broke on purpose (what it sent), never the broker's fault. ``deviation`` is a
SHOULD not followed.

Each evidence entry is a packet (``P`` as in ``pubproof decode``, or a control packet as
``{"type": "CONNACK", ...}``) with ``dir`` ("to-broker"/"from-broker"), ``client``, ``hex``
and ``t``, or an event (``{"event": "closed"|"dropped"|"timeout"|"quiet"|..., "client"}``).
``--out DIR`` also writes ``DIR/report.html`` (self-contained) and ``DIR/report.json``.

Only the target is contacted. The exit status is 0 when every verdict is pass, tolerated
or deviation, 1 otherwise, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pubproof.codec_commands import Subcommands
from pubproof.model.editions import Edition
from pubproof.options import ORACLE_EDITIONS, add_edition_options, edition_and_readings
from pubproof.probe.catalog import select
from pubproof.probe.html_report import render
from pubproof.probe.progress import Progress
from pubproof.probe.report import Report
from pubproof.probe.runner import probe
from pubproof.probe.target import Target
from pubproof.probe.timing import Timing

DEFAULTS = Timing()
#: the editions the probe has a catalog for (5.0: its own, pubproof.probe.catalog.CHECKS50)
PROBE_EDITIONS = tuple(dict.fromkeys((*ORACLE_EDITIONS, Edition.V50)))


def add_probe(commands: Subcommands) -> None:
    """Register ``pubproof probe``."""
    command = commands.add_parser(
        "probe",
        help="judge a live MQTT broker against the model",
        description="Connect to one broker as several clients, run the catalog of checks "
        "and judge every answer, silence and closed connection with the model. Exit status "
        "1 if any verdict is violation, no-answer or error.",
    )
    command.add_argument("target", metavar="mqtt://HOST:PORT", help="the broker (plain TCP)")
    add_edition_options(command, PROBE_EDITIONS)
    command.add_argument("--json", action="store_true", help="print the report as JSON")
    command.add_argument("--out", metavar="DIR", help="also write report.html and report.json")
    command.add_argument(
        "--only",
        nargs="+",
        action="extend",
        default=[],
        metavar="RULE",
        help="run only the checks resting on these rule ids (or named by check id or group: "
        "wire, flow, qos2, forward, retain, subscribe, session, packet-id; in 5.0: wire, "
        "flow, forward, retain, session)",
    )
    command.add_argument(
        "--jobs", type=int, default=4, metavar="N", help="checks run at once (default 4)"
    )
    command.add_argument(
        "--timeout",
        type=float,
        default=DEFAULTS.check,
        metavar="SECONDS",
        help=f"deadline of one check (default {DEFAULTS.check})",
    )
    command.add_argument(
        "--deadline",
        type=float,
        default=DEFAULTS.run,
        metavar="SECONDS",
        help=f"deadline of the whole run (default {DEFAULTS.run})",
    )
    command.add_argument("--quiet", action="store_true", help="no progress on standard error")
    command.add_argument(
        "--max-qos",
        type=int,
        choices=(0, 1, 2),
        default=2,
        help="the highest QoS the broker supports: a check publishing above it is reported "
        "not-applicable, not as a failure (default 2)",
    )
    command.set_defaults(run=lambda args: run_probe(command, args))


def run_probe(command: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Run the probe as the options say; the exit status."""
    edition, readings = edition_and_readings(command, args)
    try:
        target = Target.parse(args.target)
    except ValueError as error:
        command.error(str(error))
    if args.jobs < 1 or args.timeout <= 0 or args.deadline <= 0:
        command.error("--jobs, --timeout and --deadline must be positive")
    if not select(args.only, edition):
        command.error(f"--only selects no check: {' '.join(args.only)}")
    timing = Timing(check=args.timeout, run=args.deadline)
    progress = Progress(0, sys.stderr, enabled=not args.quiet)
    report = probe(
        target,
        edition=edition,
        readings=readings,
        only=args.only,
        timing=timing,
        jobs=args.jobs,
        progress=progress,
        max_qos=args.max_qos,
    )
    if args.out:
        write_out(report, Path(args.out))
    if args.json:
        sys.stdout.write(json.dumps(report.to_json(), ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(table(report))
    return 0 if report.clean else 1


def write_out(report: Report, folder: Path) -> None:
    """``report.html`` and ``report.json`` in ``folder`` (created if need be)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.html").write_text(render(report), encoding="utf-8")
    text = json.dumps(report.to_json(), ensure_ascii=False, indent=1)
    (folder / "report.json").write_text(text + "\n", encoding="utf-8")


def table(report: Report) -> str:
    """The plain-text report: one line per check."""
    width = max((len(c.id) for c in report.checks), default=10)
    lines = [f"{report.target} (MQTT {report.edition})"]
    for check in report.checks:
        lines.append(f"{check.verdict:<10} {check.id:<{width}}  {check.message}")
        if set(check.rule_verdicts.values()) - {check.verdict}:
            # some rule judged otherwise than the whole check: say which
            each = ", ".join(f"[{r}] {v}" for r, v in check.rule_verdicts.items())
            lines.append(f"{'':<10} {'':<{width}}  per rule: {each}")
        if check.provoked:
            sent = ", ".join(check.provoked)
            lines.append(f"{'':<10} {'':<{width}}  provoked (sent on purpose): {sent}")
    counts = ", ".join(f"{n} {v}" for v, n in report.counts().items() if n)
    lines.append(f"{len(report.checks)} checks in {report.seconds:.1f} s: {counts}")
    return "\n".join(lines) + "\n"
