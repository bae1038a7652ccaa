"""``pubproof explore`` and ``pubproof replay``: tests generated from the model.

``pubproof explore mqtt://HOST:PORT`` drives a live broker with a few clients, each move
chosen from those the model enables now (:mod:`pubproof.testing`), judges every packet
that comes back with the probe's judges, shrinks every failure to the fewest moves that
still fail the same rule, and ends with the coverage of the model's flow tables and
distribution rules. ``--out DIR`` writes a reproducer of each failure (``DIR/NAME/``:
``reproducer.json``, a standalone ``replay.py``, ``README.md``). Standard output gets the
summary, or with ``--json`` the run as JSON; progress goes to standard error. The exit
status is 1 when a failure was found, 0 when none, 2 for a usage error.

``pubproof replay REPRO [--target mqtt://HOST:PORT]`` runs a reproducer's script again
(against the target it was found on unless told otherwise) and judges the trace with the
model: exit status 1 while the same rule still fails, 0 when it no longer does.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
from pathlib import Path

from pubproof.codec_commands import Subcommands
from pubproof.options import add_edition_options, edition_and_readings
from pubproof.probe.target import Target
from pubproof.probe_command import PROBE_EDITIONS


def add_explore(commands: Subcommands) -> None:
    """Register ``pubproof explore``."""
    command = commands.add_parser(
        "explore",
        help="drive a live broker with model-chosen moves; shrink every failure",
        description="Drive one broker with a few clients making moves the model enables, "
        "judge every packet, shrink each failure to a minimal reproducer. Exit status 1 if "
        "a failure was found.",
    )
    command.add_argument("target", metavar="mqtt://HOST:PORT", help="the broker (plain TCP)")
    add_edition_options(command, PROBE_EDITIONS)
    add_run_options(command)
    command.add_argument(
        "--invalid-moves", nargs="+", default=None, metavar="NAME",
        help="draw only these invalid moves until each has failed (then any), e.g. "
        "topic-ill-formed dup-qos0 (a name the edition lacks: the error lists its moves)",
    )  # fmt: skip
    command.add_argument(
        "--name", default=None, metavar="NAME",
        help="the implementation's name in reproducers (default: the target)",
    )  # fmt: skip
    command.set_defaults(run=lambda args: run_explore(command, args))


def _invalid_names(edition: str) -> tuple[str, ...]:
    from pubproof.model.editions import Edition
    from pubproof.testing.moves import invalid_moves

    return invalid_moves(Edition(edition))


def add_run_options(command: argparse.ArgumentParser) -> None:
    """The options ``explore`` and ``explore-client`` share."""
    command.add_argument(
        "--clients", type=int, default=4, metavar="N", help="clients at once (default 4)"
    )
    command.add_argument(
        "--seed", type=int, default=0, metavar="S",
        help="the seed: the same seed makes the same moves (default 0)",
    )  # fmt: skip
    budget = command.add_mutually_exclusive_group()
    budget.add_argument(
        "--budget", type=float, default=None, metavar="SECONDS",
        help="seconds of exploring (default 60)",
    )  # fmt: skip
    budget.add_argument(
        "--steps", type=int, default=None, metavar="N", help="moves to make, at most"
    )
    command.add_argument(
        "--invalid", type=int, default=20, metavar="PERCENT",
        help="the chance an example makes one invalid move (default 20)",
    )  # fmt: skip
    command.add_argument("--json", action="store_true", help="print the run as JSON")
    command.add_argument("--out", metavar="DIR", help="write a reproducer of each failure here")
    command.add_argument("--quiet", action="store_true", help="no progress on standard error")


def _checked(command: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if not 1 <= args.clients <= 9:
        command.error("--clients is 1 to 9")
    if not 0 <= args.invalid <= 100:
        command.error("--invalid is a percentage, 0 to 100")
    if (args.budget is not None and args.budget <= 0) or (
        args.steps is not None and args.steps < 1
    ):
        command.error("--budget and --steps must be positive")


def run_explore(command: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Explore the broker as the options say; the exit status."""
    from pubproof.model.editions import resolve_readings
    from pubproof.testing.explore import explore, reproducers, to_json, to_text
    from pubproof.testing.machine import Exploration
    from pubproof.testing.world import Example

    edition, chosen = edition_and_readings(command, args)
    _checked(command, args)
    try:
        target = Target.parse(args.target)
    except ValueError as error:
        command.error(str(error))
    readings = resolve_readings(edition, chosen)
    base = Example(target=target, edition=edition, readings=readings,
                   run_id=secrets.token_hex(3), number=0, clients=args.clients)  # fmt: skip
    budget = args.budget if args.budget is not None or args.steps is not None else 60.0
    run = Exploration.of(base, budget=budget, most_moves=args.steps,
                         invalid_percent=args.invalid)  # fmt: skip
    if args.invalid_moves:
        every = _invalid_names(edition.value)
        unknown = sorted(set(args.invalid_moves) - set(every))
        if unknown:
            command.error(f"--invalid-moves: {', '.join(unknown)} is not an invalid move of "
                          f"MQTT {edition.value} ({', '.join(every)})")  # fmt: skip
        # the others count as spent: a batch draws the moves not spent yet (all of them
        # again once every one has failed)
        run.spent_invalid.update(n for n in every if n not in args.invalid_moves)

    def progress(line: str) -> None:
        if not args.quiet:
            sys.stderr.write(line + "\n")

    outcome = explore(run, seed=args.seed, progress=progress)
    name = args.name or f"{target.host}-{target.port}"
    written = (
        reproducers(outcome, Path(args.out), edition=edition, readings=readings,
                    target=target.url, implementation=name)
        if args.out else []
    )  # fmt: skip
    if args.json:
        report = to_json(outcome, target=target.url, edition=edition, readings=readings,
                         written=written)  # fmt: skip
        sys.stdout.write(json.dumps(report, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(to_text(outcome, target=target.url, edition=edition, written=written))
    return 1 if outcome.found else 0


def add_explore_client(commands: Subcommands) -> None:
    """Register ``pubproof explore-client``."""
    from pubproof.probe.clients.shipped import SHIPPED

    command = commands.add_parser(
        "explore-client",
        help="drive a client library with model-chosen server moves; shrink every failure",
        description="Play the server for a client library (through its driver), make moves "
        "the model enables, judge every packet and what the application was handed, shrink "
        "each failure. Exit status 1 if a failure was found.",
    )
    command.add_argument(
        "--driver", required=True, metavar="NAME|COMMAND",
        help=f"a shipped driver ({', '.join(SHIPPED)}) or a driver's command line",
    )  # fmt: skip
    add_edition_options(command, PROBE_EDITIONS)
    add_run_options(command)
    command.set_defaults(run=lambda args: run_explore_client(command, args))


def run_explore_client(command: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Explore the client library as the options say; the exit status."""
    from pubproof.model.editions import resolve_readings
    from pubproof.probe.clients.driver import command_line
    from pubproof.testing.client_machine import client_machine_class, client_run
    from pubproof.testing.coverage import Coverage
    from pubproof.testing.explore import explore, to_json, to_text

    edition, chosen = edition_and_readings(command, args)
    _checked(command, args)
    readings = resolve_readings(edition, chosen)
    budget = args.budget if args.budget is not None or args.steps is not None else 60.0
    run = client_run(
        command_line(args.driver), edition, readings, secrets.token_hex(3), budget=budget,
        most_moves=args.steps, invalid_percent=args.invalid,
    )  # fmt: skip

    def progress(line: str) -> None:
        if not args.quiet:
            sys.stderr.write(line + "\n")

    coverage = Coverage(edition, judged="client")
    outcome = explore(run, machine=client_machine_class, coverage=coverage, seed=args.seed,
                      progress=progress)  # fmt: skip
    written: list[Path] = []
    if args.out:
        from pubproof.testing.explore import client_reproducers

        written = client_reproducers(outcome, Path(args.out), edition=edition,
                                     readings=readings, driver=args.driver)  # fmt: skip
    target = f"driver {args.driver}"
    if args.json:
        report = to_json(outcome, target=target, edition=edition, readings=readings,
                         written=written)  # fmt: skip
        sys.stdout.write(json.dumps(report, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(to_text(outcome, target=target, edition=edition, written=written))
    return 1 if outcome.found else 0


def add_replay(commands: Subcommands) -> None:
    """Register ``pubproof replay``."""
    command = commands.add_parser(
        "replay",
        help="run a reproducer again and say whether it still fails",
        description="Run a reproducer's script against a broker and judge its trace with "
        "the model. Exit status 1 while the same rule still fails, 0 when it does not.",
    )
    command.add_argument("reproducer", metavar="REPRO", help="a reproducer's folder or JSON")
    command.add_argument(
        "--target", metavar="mqtt://HOST:PORT",
        help="the broker (default: the one the reproducer was found on)",
    )  # fmt: skip
    command.add_argument(
        "--timeout", type=float, default=2.0, metavar="SECONDS",
        help="seconds the script waits for each answer (default 2)",
    )  # fmt: skip
    command.add_argument(
        "--driver", metavar="NAME|COMMAND",
        help="a client reproducer: the driver (default: the one it was found with)",
    )  # fmt: skip
    command.add_argument("--json", action="store_true", help="print the outcome as JSON")
    command.set_defaults(run=lambda args: run_replay(command, args))


def run_replay(command: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Replay a reproducer; the exit status."""
    from pubproof.testing.reproducer import ReplayError, load, replay, replay_client

    path = Path(args.reproducer)
    try:
        data = load(path)
        client = data["kind"] == "client"
        where = f"driver {args.driver or data['driver']}" if client else ""
        target = None if client else Target.parse(args.target or data["target"])
    except (OSError, ValueError, KeyError) as error:
        command.error(f"{path}: {error}")
    try:
        if target is None:
            done = replay_client(path, args.driver)
        else:
            done = replay(path, target.host, target.port, timeout=args.timeout)
            where = target.url
    except ReplayError as error:
        sys.stderr.write(f"{path}: {error}\n")
        return 2
    if args.json:
        out = {
            "reproducer": str(path), "target": where, "rule": done.rule,
            "still_fails": done.still_fails, "failures": list(done.verdict.keys),
            "script": done.script_says, "trace": list(done.trace),
        }  # fmt: skip
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    else:
        state = "still fails" if done.still_fails else "no longer fails"
        sys.stdout.write(f"{path}: {done.rule}: {state} on {where}\n")
        for failure in done.verdict.failures:
            sys.stdout.write(f"  {failure.verdict} {failure.key}: {failure.message}\n")
        sys.stdout.write(f"  the script: {done.script_says}\n")
    return 1 if done.still_fails else 0


__all__ = ["PROBE_EDITIONS", "add_explore", "add_explore_client", "add_replay"]
