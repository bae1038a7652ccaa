"""``pubproof probe-client --driver NAME|COMMAND``: judge an MQTT client library against the
model, pubproof playing the server on loopback.

NAME is a shipped driver (:data:`pubproof.probe.clients.shipped.SHIPPED`, which ``--help``
lists); anything else is run as the driver's command line (the driver protocol:
:mod:`pubproof.probe.clients.driver`). Standard output gets a table, or with ``--json``
the shape of ``pubproof probe --json``, with ``target`` naming the library and its version;
``--out DIR`` also writes ``DIR/report.html`` and ``DIR/report.json``. The exit status is
0 when every verdict is pass, tolerated or not-applicable, 1 otherwise, 2 for a usage
error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pubproof.codec_commands import Subcommands
from pubproof.options import add_edition_options, edition_and_readings
from pubproof.probe.clients.catalog import select
from pubproof.probe.clients.runner import CHECK_SECONDS, probe_client
from pubproof.probe.clients.shipped import SHIPPED
from pubproof.probe.progress import Progress
from pubproof.probe_command import PROBE_EDITIONS, table, write_out


def add_probe_client(commands: Subcommands) -> None:
    """Register ``pubproof probe-client``."""
    command = commands.add_parser(
        "probe-client",
        help="judge an MQTT client library against the model (pubproof plays the server)",
        description="Play the server on loopback, make the client act through its driver "
        "and judge every packet it sends, every silence and every close with the model, and "
        "what its application receives. Exit status 1 if any verdict is violation, "
        "no-answer or error.",
    )
    command.add_argument(
        "--driver",
        required=True,
        metavar="NAME|COMMAND",
        help=f"a shipped driver ({', '.join(SHIPPED)}) or a driver's command line",
    )
    add_edition_options(command, PROBE_EDITIONS)
    command.add_argument("--json", action="store_true", help="print the report as JSON")
    command.add_argument("--out", metavar="DIR", help="also write report.html and report.json")
    command.add_argument(
        "--only",
        nargs="+",
        action="extend",
        default=[],
        metavar="CHECK",
        help="run only these checks (by check id, group: send, receive, wire; or rule id)",
    )
    command.add_argument(
        "--jobs", type=int, default=4, metavar="N", help="checks run at once (default 4)"
    )
    command.add_argument(
        "--timeout",
        type=float,
        default=CHECK_SECONDS,
        metavar="SECONDS",
        help=f"hard deadline of one check (default {CHECK_SECONDS})",
    )
    command.add_argument("--quiet", action="store_true", help="no progress on standard error")
    command.set_defaults(run=lambda args: run_probe_client(command, args))


def run_probe_client(command: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Run the client probe as the options say; the exit status."""
    edition, readings = edition_and_readings(command, args)
    if args.jobs < 1 or args.timeout <= 3:
        command.error("--jobs must be positive and --timeout more than 3 seconds")
    if not select(args.only, edition):
        command.error(f"--only selects no check: {' '.join(args.only)}")
    progress = Progress(0, sys.stderr, enabled=not args.quiet)
    report = probe_client(
        args.driver,
        edition=edition,
        readings=readings,
        only=args.only,
        jobs=args.jobs,
        progress=progress,
        check_seconds=args.timeout,
    )
    if args.out:
        write_out(report, Path(args.out))
    if args.json:
        sys.stdout.write(json.dumps(report.to_json(), ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(table(report))
    return 0 if report.clean else 1
