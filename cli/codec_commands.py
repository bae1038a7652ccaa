"""``pubproof decode`` and ``pubproof encode``: the codec as a line-oriented filter.

Both stream: one output line per input line, written as soon as it is known, so a million
lines never sit in memory. The contract (exact, other tools rely on it):

decode: each input line is hex (whitespace ignored) holding zero or more packets; output
``{"ok": true, "packets": [P, ...]}`` or ``{"ok": false, "packets": [...before the
error], "error": {"rule", "offset", "message"}}``; a line ending inside a packet gives
rule ``incomplete``. In MQTT 5.0 every P has ``"properties"`` (and an acknowledgement
``"reason_code"``), and an error has ``"reason_code"``, the DISCONNECT Reason Code the
receiver sends; ``--topic-alias-maximum`` and ``--maximum-packet-size`` give the
receiver's limits.

encode: each input line is a JSON ``P``; output one hex line, or ``{"error": {...}}`` for
a line that is not JSON or not a valid packet, and exit status 1 at the end.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TextIO

from pubproof.model import wire as model_wire
from pubproof.model.editions import Edition, Limits
from pubproof.model.rules import RULES
from pubproof.options import add_edition_options, add_limit_options, edition_and_readings, limits
from pubproof.reference.codec import Decoder, encode
from pubproof.reference.errors import ProtocolError
from pubproof.reference.jsonform import from_p, to_p

NOT_HEX = "PP-input-not-hex"
NOT_JSON = "PP-input-not-json"

Subcommands = Any  # argparse's private _SubParsersAction


def add_decode(commands: Subcommands) -> None:
    command = commands.add_parser(
        "decode",
        help="decode hex lines from standard input to JSON lines",
        description="Read hex strings (one stream per line) and write one JSON verdict per line.",
    )
    add_edition_options(command)
    add_limit_options(command)
    command.add_argument(
        "--engine",
        choices=["reference", "model"],
        default="reference",
        help="the fast reference codec (default) or the executable model",
    )
    command.set_defaults(run=lambda args: run_decode(command, args))


def add_encode(commands: Subcommands) -> None:
    command = commands.add_parser(
        "encode",
        help="encode JSON lines (P) from standard input to hex lines",
        description="Read one JSON packet per line and write its bytes as hex.",
    )
    add_edition_options(command)
    add_limit_options(command)
    command.set_defaults(run=lambda args: run_encode(command, args))


def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _utf8_stdio() -> tuple[TextIO, TextIO]:
    stdin = sys.stdin
    stdout = sys.stdout
    for stream in (stdin, stdout):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(encoding="utf-8", errors="surrogateescape")
    return stdin, stdout


def decode_line(
    line: str,
    edition: Edition,
    readings: Mapping[str, str],
    engine: str = "reference",
    receiver: Limits | None = None,
) -> dict[str, object]:
    """The verdict object for one input line."""
    text = "".join(line.split())
    try:
        data = bytes.fromhex(text)
    except ValueError:
        return {
            "ok": False,
            "packets": [],
            "error": {"rule": NOT_HEX, "offset": None, "message": "the line is not a hex string"},
        }
    if engine == "model":
        verdict = model_wire.decode(data, edition, readings, receiver)
        result: dict[str, object] = {"ok": verdict.failure is None, "packets": verdict.packets}
        if verdict.failure is not None:
            failure = verdict.failure
            error: dict[str, object] = {
                "rule": failure.rule,
                "offset": failure.offset,
                "message": failure.message,
            }
            if failure.reason_code is not None:
                error["reason_code"] = failure.reason_code
            result["error"] = error
        return result
    decoder = (
        Decoder(edition=edition, readings=readings)
        if receiver is None
        else Decoder(edition=edition, readings=readings, limits=receiver)
    )
    decoder.feed(data)
    packets: list[object] = []
    try:
        for packet in decoder:
            packets.append(to_p(packet))
        decoder.close()
    except ProtocolError as error:
        return {"ok": False, "packets": packets, "error": error.as_json()}
    return {"ok": True, "packets": packets}


def _filter(lines: Iterable[str], out: TextIO, handle: Callable[[str], tuple[str, bool]]) -> int:
    failed = False
    for line in lines:
        text, bad = handle(line.rstrip("\r\n"))
        failed = failed or bad
        out.write(text)
        out.write("\n")
    out.flush()
    return 1 if failed else 0


def run_decode(command: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    edition, readings = edition_and_readings(command, args)
    receiver = limits(command, args, edition)
    stdin, stdout = _utf8_stdio()
    _filter(
        stdin,
        stdout,
        lambda line: (_dump(decode_line(line, edition, readings, args.engine, receiver)), False),
    )
    return 0


def encode_line(
    line: str, edition: Edition, readings: Mapping[str, str], receiver: Limits | None = None
) -> tuple[str, bool]:
    """The hex of one JSON line, or its error object; and whether it failed."""
    try:
        obj = json.loads(line)
    except ValueError as error:
        message = f"the line is not JSON: {error}"
        return _dump({"error": {"rule": NOT_JSON, "offset": None, "message": message}}), True
    try:
        if receiver is None:
            return encode(from_p(obj), edition=edition, readings=readings).hex(), False
        return encode(
            from_p(obj),
            edition=edition,
            readings=readings,
            limits=receiver,
        ).hex(), False
    except ProtocolError as error:
        return _dump(
            {"error": dict(error.as_json(), rule=rule_in_edition(error.rule, edition))}
        ), True


def rule_in_edition(rule_id: str, edition: Edition) -> str:
    """Packet construction names 3.1.1 ids; the id of the same rule in ``edition``."""
    try:
        RULES.by_id(rule_id, edition)
        return rule_id  # already an id of this edition
    except KeyError:
        pass
    try:
        rule = RULES.by_id(rule_id)
    except KeyError:
        return rule_id
    return rule.ids.get(edition, rule_id)


def run_encode(command: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    edition, readings = edition_and_readings(command, args)
    receiver = limits(command, args, edition)
    stdin, stdout = _utf8_stdio()
    return _filter(stdin, stdout, lambda line: encode_line(line, edition, readings, receiver))
