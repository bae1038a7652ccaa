"""``pubproof check CAPTURE_OR_DIR... --out DIR``: judge captured MQTT traffic.

Reads pcap and pcapng files (a directory: every capture file in it), reassembles every
TCP connection, frames and decodes its MQTT packets with the codec, judges them with the
model's flow tables, and writes Parquet tables under DIR (``packets``, ``violations``,
``connections``, ``quarantine``, ``summary``, and ``deliveries``: every PUBLISH a server
received or sent, followed across connections), ``DIR/reconciliation.json`` and
``DIR/report.html``. ``--json`` prints one line::

    {"out", "tables": {name: path}, "report", "reconciliation", "engine", "frames_in",
     "frames_used", "frames_quarantined", "quarantined_bytes_by_reason", "unreadable",
     "connections", "packets", "violations", "tolerated", "deviations", "distribution":
     {"servers", "topics", "messages_in", "copies_out", "messages_unknown_by_reason",
     "copies_unknown_by_reason"} or {"skipped": true}, "seconds", "startup_seconds"}

The exit status is 0 when every frame and byte is accounted for, 1 (with a loud message)
when they are not, 2 for a usage error, 3 when a capture file could not be read at all
(not a capture, empty, nothing but damage: a message names the file and why; the tables are
still written for the rest). ``--quiet`` prints nothing but errors (and the ``--json``
line when asked for).
"""

from __future__ import annotations

import argparse
import json
import sys

from pubproof import main as entry
from pubproof.codec_commands import Subcommands
from pubproof.model.editions import Edition, ReadingError, parse_reading_assignments
from pubproof.options import CHECK_EDITIONS
from pubproof.pipeline.capture import DEFAULT_SPLIT_BYTES, MIN_AUTO_SPLIT_BYTES
from pubproof.pipeline.connection_state import Config
from pubproof.pipeline.progress import Progress
from pubproof.pipeline.reconcile import (
    ReconciliationError,
    distribution_summary,
    distribution_text,
    quarantine_text,
    unreadable_text,
)
from pubproof.pipeline.run import ENGINES, Job, check
from pubproof.pipeline.source import InputError

#: the exit status when a capture file could not be read at all
UNREADABLE = 3


def add_check(commands: Subcommands) -> None:
    """Register ``pubproof check``."""
    command = commands.add_parser(
        "check",
        help="judge captured MQTT traffic (pcap/pcapng) against the model",
        description="Read captures, reassemble TCP, frame and judge every MQTT packet, and "
        "write Parquet tables, reconciliation.json and report.html under --out.",
    )
    command.add_argument("captures", nargs="+", metavar="CAPTURE_OR_DIR")
    command.add_argument("--out", required=True, metavar="DIR", help="output directory")
    command.add_argument(
        "--engine",
        choices=ENGINES,
        default="spark",
        help="spark (default; embedded local mode) or python (one process)",
    )
    command.add_argument(
        "--master", default="local[*]", help="Spark master URL (default local[*]: embedded)"
    )
    command.add_argument(
        "--edition",
        choices=[e.value for e in CHECK_EDITIONS],
        default=None,
        help="force an edition (default: from each CONNECT's protocol level)",
    )
    command.add_argument(
        "--reading",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="choose a reading (see pubproof decode); repeatable",
    )
    command.add_argument(
        "--port",
        type=int,
        action="append",
        default=[],
        metavar="PORT",
        help="an MQTT server port (default 1883); repeatable",
    )
    command.add_argument(
        "--tls-port",
        type=int,
        action="append",
        default=[],
        metavar="PORT",
        help="a TLS port counted as encrypted, never parsed (default 8883)",
    )
    command.add_argument(
        "--partitions",
        type=int,
        default=None,
        metavar="N",
        help="Spark partitions for the connection stage",
    )
    command.add_argument(
        "--spark-read",
        choices=("scan", "shuffle"),
        default=None,
        help=(
            "how Spark brings each connection's frames to its task: every task reads the "
            "captures and keeps its share (scan, the default on a local master), or the "
            "frames are shuffled (the default on a cluster)"
        ),
    )
    command.add_argument(
        "--split-bytes",
        type=int,
        default=None,
        metavar="N",
        help=(
            "bytes per split of a capture file (default: two splits per core of a local "
            f"Spark master, at least {MIN_AUTO_SPLIT_BYTES} and at most {DEFAULT_SPLIT_BYTES}; "
            f"{DEFAULT_SPLIT_BYTES} for a cluster and for --engine python)"
        ),
    )
    command.add_argument(
        "--patience",
        type=float,
        default=Config().patience,
        metavar="SECONDS",
        help=(
            "the cross-connection stage: seconds a subscriber's link stays open after a copy "
            "is owed, past which a copy never sent is missing (default %(default)g)"
        ),
    )
    command.add_argument(
        "--no-distribution",
        dest="distribution",
        action="store_false",
        help="skip the cross-connection stage: each connection judged alone, no deliveries",
    )
    command.add_argument("--json", action="store_true", help="print a one-line JSON summary")
    command.add_argument(
        "--quiet", action="store_true", help="print only errors (no progress, no summary)"
    )
    command.set_defaults(run=lambda args: run(command, args))


def run(command: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Run ``pubproof check``."""
    try:
        readings = parse_reading_assignments(args.reading)
    except ReadingError as error:
        command.error(str(error))
    if (args.split_bytes is not None and args.split_bytes < 1) or (
        args.partitions is not None and args.partitions < 1
    ):
        command.error("--split-bytes and --partitions must be positive")
    if not args.patience > 0:
        command.error("--patience must be a positive number of seconds")
    config = Config(
        ports=frozenset(args.port or [1883]),
        tls_ports=frozenset(args.tls_port or [8883]),
        edition=Edition.parse(args.edition) if args.edition else None,
        readings=tuple(sorted(readings.items())),
        patience=args.patience,
        distribution=args.distribution,
    )
    job = Job(
        paths=args.captures,
        out=args.out,
        engine=args.engine,
        master=args.master,
        partitions=args.partitions,
        spark_read=args.spark_read,
        split_bytes=args.split_bytes,
        config=config,
        whole_process=entry.WHOLE_PROCESS,
    )
    progress = Progress(files=0, total_bytes=0, total_frames=0, enabled=not args.quiet)
    try:
        result = check(job, progress=progress)
    except InputError as error:
        command.error(str(error))
    except ReconciliationError as error:
        bar = "!" * 72
        print(f"{bar}\n{error}\nsee {args.out}/reconciliation.json\n{bar}", file=sys.stderr)
        return 1
    rec = result.reconciliation
    kinds = rec["findings_by_kind"]
    unreadable = unreadable_text(rec)
    for line in unreadable:
        print(f"pubproof check: {line}", file=sys.stderr)
    status = UNREADABLE if unreadable else 0
    if args.json:
        print(
            json.dumps(
                {
                    "out": result.out,
                    "tables": result.tables,
                    "report": result.report,
                    "reconciliation": f"{result.out}/reconciliation.json",
                    "engine": args.engine,
                    "frames_in": rec["frames_in"],
                    "frames_used": rec["frames_used"],
                    "frames_quarantined": rec["frames_quarantined"],
                    "quarantined_bytes_by_reason": rec["quarantined_bytes_by_reason"],
                    "unreadable": rec["unreadable"],
                    "connections": rec["connections"],
                    "packets": rec["packets"],
                    "findings": kinds,
                    "violations": sum(
                        n for k, n in kinds.items() if k not in ("tolerated", "deviation")
                    ),
                    "tolerated": kinds.get("tolerated", 0),
                    "deviations": kinds.get("deviation", 0),
                    "distribution": distribution_summary(rec),
                    "seconds": round(result.seconds, 3),
                    "startup_seconds": round(result.startup_seconds, 3),
                },
                sort_keys=True,
            )
        )
        return status
    if args.quiet:
        return status
    findings = ", ".join(f"{n} {k}" for k, n in kinds.items()) or "no findings"
    print(
        f"{rec['captures']} capture(s): {rec['frames_in']:,} frames "
        f"({rec['frames_used']:,} used, {rec['frames_quarantined']:,} quarantined), "
        f"{rec['connections']:,} MQTT connection(s), {rec['packets']:,} packets; {findings}\n"
        f"TCP payload {rec['tcp_payload_bytes']:,} bytes = {rec['bytes_framed']:,} framed + "
        f"{rec['bytes_unparsed']:,} unparsed {rec['bytes_unparsed_by_reason']}\n"
        f"{quarantine_text(rec)}\n"
        f"{distribution_text(rec)}\n"
        f"tables in {result.out}/ (packets, violations, connections, quarantine, summary, "
        "deliveries); "
        f"report {result.report}; {result.seconds:.1f} s"
    )
    return status
