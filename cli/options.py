"""Options shared by several subcommands: the edition and the readings."""

from __future__ import annotations

import argparse

from pubproof.model.editions import (
    READINGS,
    Edition,
    Limits,
    ReadingError,
    check_limits,
    parse_reading_assignments,
    resolve_readings,
)

#: The editions the oracle (pubproof check, pubproof probe) judges; MQTT 5.0 reaches them
#: with the 5.0 flows (the issue "MQTT 5.0, part 3").
ORACLE_EDITIONS = (Edition.V31, Edition.V311)


def add_edition_options(
    command: argparse.ArgumentParser, editions: tuple[Edition, ...] = tuple(Edition)
) -> None:
    command.add_argument(
        "--edition",
        choices=[e.value for e in editions],
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


def add_limit_options(command: argparse.ArgumentParser) -> None:
    """MQTT 5.0: the receiver's Topic Alias Maximum and Maximum Packet Size."""
    command.add_argument(
        "--topic-alias-maximum",
        type=int,
        default=None,
        metavar="N",
        help="5.0: the receiver's Topic Alias Maximum (default: 0, as when it sent none; "
        "encode: any alias up to 65,535)",
    )
    command.add_argument(
        "--maximum-packet-size",
        type=int,
        default=None,
        metavar="N",
        help="5.0: the receiver's Maximum Packet Size in bytes (default: no limit)",
    )


def limits(
    command: argparse.ArgumentParser, args: argparse.Namespace, edition: Edition
) -> Limits | None:
    """The limits given on the command line (None when none is); a limit outside 5.0 or out
    of range is a usage error (exit 2)."""
    if args.topic_alias_maximum is None and args.maximum_packet_size is None:
        return None
    try:
        given = Limits(
            topic_alias_maximum=args.topic_alias_maximum or 0,
            maximum_packet_size=args.maximum_packet_size,
        )
        if edition is not Edition.V50:
            raise ValueError(
                f"--topic-alias-maximum and --maximum-packet-size are MQTT 5.0 limits, "
                f"not {edition.value}"
            )
        return check_limits(edition, given)
    except ValueError as error:
        command.error(str(error))


#: The editions ``pubproof check --edition`` can force: 3.1, 3.1.1 and 5.0 (the capture
#: pipeline judges 5.0 connections; issue #15).
CHECK_EDITIONS = tuple(Edition)
