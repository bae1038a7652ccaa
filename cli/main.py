"""The ``pubproof`` command line: one subcommand per job, each in a module of its own."""

from __future__ import annotations

import argparse
import gc
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
    ("serve", "pubproof.serve_command", "add_serve"),
    ("explore", "pubproof.explore_command", "add_explore"),
    ("explore-client", "pubproof.explore_command", "add_explore_client"),
    ("replay", "pubproof.explore_command", "add_replay"),
)


#: whether this process is the command line's own, which runs one command and exits
#: (:func:`command`), rather than a caller of :func:`main` that goes on (the tests): a
#: command may then make choices for the whole process
#: (:attr:`pubproof.pipeline.run.Job.whole_process`)
WHOLE_PROCESS = False


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


def command() -> None:
    """The process's entry (the ``pubproof`` script and ``python -m pubproof``): run
    :func:`main` and exit with its status.

    Before it exits it freezes the cyclic garbage collector's objects: the interpreter's
    exit runs three full collections over every object still alive (the modules, pyarrow's
    and the codec's tables and caches: about 70,000 to 95,000 objects after a ``pubproof
    check``), which found nothing to free yet took 0.13 s of CPU after 200,000 frames of
    MQTT 3.1.1 and 0.24 s after 200,000 of 5.0 (``benchmarks/bench_pipeline.py
    --editions``); frozen objects are not walked. What the exit does besides is unchanged:
    ``atexit`` handlers run, and the standard streams and the objects reference counting
    frees are closed and finalized as before; only objects in reference cycles stay
    unfinalized, as they may at any exit (every file the commands write is closed before
    :func:`main` returns). :func:`main` itself, called in a process that goes on (the
    tests), freezes nothing, and leaves :data:`WHOLE_PROCESS` false."""
    global WHOLE_PROCESS
    WHOLE_PROCESS = True
    status = main()
    gc.freeze()
    raise SystemExit(status)
