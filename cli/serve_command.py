"""``pubproof serve``: a strict, configurable reference broker that judges every packet its
clients send, live.

Each finding goes to standard error as it is found (one line, or with ``--json`` one JSON
object); at exit (or on SIGINT or SIGTERM) a summary per client follows, and with ``--html
FILE`` the probe's HTML report of every finding with its trace. The exit status is 0, or 1
when the broker itself failed, 2 for a usage error. The options and the settings file are
:mod:`pubproof.probe.serve.settings`'s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from pubproof.codec_commands import Subcommands
from pubproof.probe.serve.live import Reporter
from pubproof.probe.serve.misbehave import MISBEHAVIOURS
from pubproof.probe.serve.report import summary_text, write_outputs
from pubproof.probe.serve.restore import stored_broker
from pubproof.probe.serve.server import run
from pubproof.probe.serve.settings import (
    EDITION_NAMES,
    ServeSettings,
    SettingsError,
    load_file,
    merged,
    reading_names,
)

#: the options that take a whole number, with what each is
_NUMBERS = (
    ("receive-maximum", "5.0: how many QoS 1 and 2 PUBLISH the broker takes unacknowledged "
     "(CONNACK Receive Maximum; default absent: 65,535)"),
    ("topic-alias-maximum", "5.0: the highest Topic Alias a client may send (default 0)"),
    ("maximum-packet-size", "5.0: the largest packet the broker takes, bytes (default none)"),
    ("server-keep-alive", "5.0: the Keep Alive the broker imposes (CONNACK Server Keep Alive)"),
    ("session-expiry-minimum", "5.0: the lowest Session Expiry Interval the broker uses"),
    ("session-expiry-maximum", "5.0: the highest Session Expiry Interval the broker uses"),
    ("max-queued", "copies a session may hold unsent (default 1000; the oldest go first)"),
    ("max-inflight", "QoS 1 and 2 copies under way to one client (default 100)"),
    ("write-buffer-limit", "bytes a client may leave unread before copies wait (default 262144)"),
    ("judge-messages", "messages the distribution judge is fed, 0 for none (default 100000)"),
)  # fmt: skip
#: the switches of what the broker supports: 0 or 1, as the CONNACK property says it
_SWITCHES = (
    ("retain-available", "5.0 Retain Available"),
    ("wildcard-subscriptions", "Wildcard Subscription Available (3.1.1: refuse wildcards)"),
    ("subscription-identifiers", "5.0 Subscription Identifier Available"),
    ("shared-subscriptions", "5.0 Shared Subscription Available"),
)


def add_serve(commands: Subcommands) -> None:
    """Register ``pubproof serve``."""
    command = commands.add_parser(
        "serve",
        help="run a strict reference broker that judges every packet its clients send",
        description="Run an MQTT broker on the reference implementation: every packet a "
        "client sends is judged by the model's judges, each finding reported at once on "
        "standard error, and the broker then does what the standard says a server does.",
    )
    command.add_argument("--config", metavar="FILE", help="a TOML file of these settings")
    command.add_argument("--host", help="the address to listen on (default 127.0.0.1)")
    command.add_argument("--port", type=int, help="the port (default 1883; 0: any free one)")
    command.add_argument("--edition", choices=EDITION_NAMES,
                         help="the edition served (default any: each CONNECT names its own)")
    command.add_argument("--reading", action="append", metavar="NAME=VALUE",
                         help=f"a reading ({', '.join(reading_names())}); repeatable")
    for name, what in _NUMBERS:
        command.add_argument(f"--{name}", type=int, metavar="N", help=what)
    command.add_argument("--maximum-qos", type=int, choices=(0, 1, 2),
                         help="the highest QoS the broker takes and grants (default 2)")
    for name, what in _SWITCHES:
        command.add_argument(f"--{name}", type=int, choices=(0, 1), help=f"{what} (default 1)")
    command.add_argument("--use-aliases", action="store_true", default=None,
                         help="5.0: give the topic names the broker sends Topic Aliases")
    command.add_argument("--lenient", action="store_true", default=None,
                         help="go on where a named reading accepts a packet the default "
                         "readings reject (the finding is still reported)")
    command.add_argument("--misbehave", action="append", metavar="NAME",
                         help=f"misbehave on purpose ({', '.join(MISBEHAVIOURS)}); repeatable")
    command.add_argument("--store", metavar="FILE",
                         help="keep sessions, queued and retained messages in this SQLite file")
    command.add_argument("--no-judges", dest="judges", action="store_false", default=None,
                         help="run no link or distribution judge (to measure what they cost; "
                         "the codec still reads and reports every packet)")
    command.add_argument("--connect-timeout", type=float, metavar="SECONDS",
                         help="close a connection that sends no CONNECT within this (default 10)")
    command.add_argument("--json", action="store_true", default=None,
                         help="findings and the summary as JSON Lines")
    command.add_argument("--html", metavar="FILE", help="write the HTML report at exit")
    command.add_argument("--summary-json", metavar="FILE", help="write the summary as JSON")
    command.add_argument("--quiet", action="store_true", default=None,
                         help="no finding lines (the summary and reports still)")
    command.set_defaults(run=lambda args: run_serve(command, args))


def _given(args: argparse.Namespace) -> dict[str, Any]:
    names = ["host", "port", "edition", "reading", "maximum_qos", "use_aliases", "lenient",
             "judges", "connect_timeout",
             "misbehave", "store", "json", "html", "summary_json", "quiet",
             *(n.replace("-", "_") for n, _ in _NUMBERS),
             *(n.replace("-", "_") for n, _ in _SWITCHES)]  # fmt: skip
    given: dict[str, Any] = {}
    for name in names:
        value = getattr(args, name, None)
        if value is None:
            continue
        if name in {n.replace("-", "_") for n, _ in _SWITCHES}:
            value = bool(value)
        given[name] = value
    return given


def settings_of(command: argparse.ArgumentParser, args: argparse.Namespace) -> ServeSettings:
    """The settings the options (and the file) give; a bad one is a usage error."""
    try:
        from_file = load_file(Path(args.config)) if args.config else {}
        settings = merged(from_file, _given(args))
    except SettingsError as error:
        command.error(str(error))
    unknown = [name for name in settings.misbehave if name not in MISBEHAVIOURS]
    if unknown:
        command.error(f"unknown misbehaviour {', '.join(unknown)} "
                      f"(known: {', '.join(MISBEHAVIOURS)})")  # fmt: skip
    return settings


def run_serve(command: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Run the broker until a signal; the exit status."""
    settings = settings_of(command, args)
    reporter = Reporter(sys.stderr, as_json=settings.json, quiet=settings.quiet)
    broker = stored_broker(settings, reporter)
    editions = ", ".join(e.value for e in settings.editions)
    started = time.monotonic()

    def ready(port: int) -> None:
        reporter.say(f"pubproof serve: listening on {settings.host}:{port} (MQTT {editions})")

    failure = asyncio.run(run(broker, ready=ready))
    seconds = time.monotonic() - started
    target = f"pubproof serve on {settings.host}:{settings.port}"
    data = write_outputs(
        reporter, seconds=seconds, dropped=broker.engine.dropped, target=target,
        edition="any" if settings.edition is None else settings.edition.value,
        readings=settings.readings, html_path=settings.html, json_path=settings.summary_json,
    )  # fmt: skip
    if not settings.quiet:
        text = json.dumps({"summary": data}) if settings.json else summary_text(data)
        print(text, file=sys.stderr)
    if failure is not None:
        print(f"pubproof serve: the broker failed: {type(failure).__name__}: {failure}",
              file=sys.stderr)  # fmt: skip
        return 1
    return 0
