"""Options shared by several subcommands: the edition and the readings."""

from __future__ import annotations

import argparse

from pubproof.model.editions import (
    READINGS,
    Edition,
    ReadingError,
    parse_reading_assignments,
    resolve_readings,
)


def add_edition_options(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--edition",
        choices=[e.value for e in Edition],
        default=Edition.V311.value,
        help="edition of the protocol text (default: 3.1.1)",
    )
    names = ", ".join(READINGS)
    command.add_argument(
        "--reading",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help=f"choose a reading where the texts leave a question open ({names}); repeatable",
    )


def edition_and_readings(
    command: argparse.ArgumentParser, args: argparse.Namespace
) -> tuple[Edition, dict[str, str]]:
    """The edition and the chosen readings; a bad reading is a usage error (exit 2)."""
    edition = Edition.parse(args.edition)
    try:
        chosen = parse_reading_assignments(args.reading)
        resolve_readings(edition, chosen)
    except ReadingError as error:
        command.error(str(error))
    return edition, chosen
