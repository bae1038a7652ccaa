"""The ``pubproof`` command line: one subcommand per job, each in a module of its own."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from pubproof import __version__
from pubproof.check_command import add_check
from pubproof.codec_commands import add_decode, add_encode
from pubproof.probe_client_command import add_probe_client
from pubproof.probe_command import add_probe
from pubproof.prove_command import add_prove
from pubproof.vector_commands import add_vectors


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="pubproof",
        description="The executable model and reference implementation of MQTT PUBLISH.",
    )
    top.add_argument("--version", action="version", version=f"pubproof {__version__}")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_decode(commands)
    add_encode(commands)
    add_vectors(commands)
    add_prove(commands)
    add_probe(commands)
    add_check(commands)
    add_probe_client(commands)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        status: int = args.run(args)
    except BrokenPipeError:  # e.g. `pubproof decode | head`
        sys.stderr.close()
        return 0
    return status
