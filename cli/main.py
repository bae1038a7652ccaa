"""The ``pubproof`` command line: one subcommand per job, each in a module of its own."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from pubproof import __version__

#: each subcommand, with the module and the function that register it. A module is
#: imported only when its subcommand is the one asked for (or every one, for the help and
#: for a mistyped command): the probe's modules alone cost 0.1 s of CPU, a fifth of the
#: fixed cost of ``pubproof check --engine python``
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("decode", "pubproof.codec_commands", "add_decode"),
    ("encode", "pubproof.codec_commands", "add_encode"),
    ("vectors", "pubproof.vector_commands", "add_vectors"),
    ("prove", "pubproof.prove_command", "add_prove"),
    ("probe", "pubproof.probe_command", "add_probe"),
    ("check", "pubproof.check_command", "add_check"),
    ("probe-client", "pubproof.probe_client_command", "add_probe_client"),
)


def parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: every subcommand, or only the one named ``only``."""
    top = argparse.ArgumentParser(
        prog="pubproof",
        description="The executable model and reference implementation of MQTT PUBLISH.",
    )
    top.add_argument("--version", action="version", version=f"pubproof {__version__}")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module, function in COMMANDS:
        if only is None or name == only:
            getattr(importlib.import_module(module), function)(commands)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    named = given[0] if given and given[0] in {name for name, _, _ in COMMANDS} else None
    args = parser(named).parse_args(given)
    try:
        status: int = args.run(args)
    except BrokenPipeError:  # e.g. `pubproof decode | head`
        sys.stderr.close()
        return 0
    return status
