"""``pubproof vectors``: write the vector corpus, or check the reference (or the model)
against a corpus file."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pubproof.codec_commands import Subcommands, decode_line, rule_in_edition
from pubproof.model import vectors
from pubproof.model.editions import Edition, Limits
from pubproof.reference.codec import encode
from pubproof.reference.errors import ProtocolError
from pubproof.reference.jsonform import from_p


def add_vectors(commands: Subcommands) -> None:
    command = commands.add_parser(
        "vectors",
        help="write the vector corpus, or check a codec against it",
        description="Without --check: write the corpus generated from the model as JSON Lines. "
        "With --check FILE: run every case through the reference codec (or the model) and "
        "report mismatches.",
    )
    command.add_argument("--out", type=Path, help="write the corpus here (default: stdout)")
    command.add_argument("--check", type=Path, metavar="FILE", help="check a corpus file")
    command.add_argument("--engine", choices=["reference", "model"], default="reference")
    command.set_defaults(run=run_vectors)


def check_case(case: dict[str, Any], engine: str = "reference") -> str | None:
    """Why the engine disagrees with one corpus case, or None when it agrees."""
    edition = Edition.parse(case["edition"])
    readings = case["reading"]
    limits = Limits(**case["limits"]) if case.get("limits") is not None else None
    if case["op"] == "decode":
        got = decode_line(case["hex"], edition, readings, engine, limits)
        expected: dict[str, Any] = {"ok": case["verdict"] == "ok", "packets": case["packets"]}
        got_error = got.get("error")
        if got["packets"] != expected["packets"] or got["ok"] != expected["ok"]:
            return f"packets/ok differ: got {got}"
        if not expected["ok"]:
            assert isinstance(got_error, dict)
            if got_error["rule"] != case["rule"] or got_error["offset"] != case["offset"]:
                return (
                    f"expected {case['rule']} at {case['offset']}, "
                    f"got {got_error['rule']} at {got_error['offset']}"
                )
            if got_error.get("reason_code") != case.get("reason_code"):
                return (
                    f"expected Reason Code {case.get('reason_code')}, "
                    f"got {got_error.get('reason_code')}"
                )
        return None
    packet = case["packets"][0]
    if engine == "model":
        from pubproof.model.wire import EncodeError
        from pubproof.model.wire import encode as model_encode

        try:
            produced: str | None = model_encode(packet, edition, readings, limits).hex()
            rule = case["rule"] if produced is not None else None
        except EncodeError as error:
            produced, rule = None, error.rule
    else:
        try:
            if limits is None:
                produced = encode(from_p(packet), edition=edition, readings=readings).hex()
            else:
                produced = encode(
                    from_p(packet),
                    edition=edition,
                    readings=readings,
                    limits=limits,
                ).hex()
            rule = case["rule"]
        except ProtocolError as error:
            produced, rule = None, rule_in_edition(error.rule, edition)
    if produced != case["hex"] or rule != case["rule"]:
        want = case["hex"] and case["hex"][:40]
        got_hex = produced and produced[:40]
        return f"encode: expected {want} / {case['rule']}, got {got_hex} / {rule}"
    return None


def check_corpus(lines: Iterable[str], engine: str = "reference") -> tuple[Counter[str], list[str]]:
    counts: Counter[str] = Counter()
    failures: list[str] = []
    for line in lines:
        if not line.strip():
            continue
        case = json.loads(line)
        problem = check_case(case, engine)
        counts["fail" if problem else "pass"] += 1
        counts[f"{case['edition']} {case['op']} {case['verdict']}"] += 1
        if problem:
            failures.append(f"{case['id']}: {problem}")
    return counts, failures


def run_vectors(args: argparse.Namespace) -> int:
    if args.check is not None:
        with args.check.open(encoding="utf-8") as lines:
            counts, failures = check_corpus(lines, args.engine)
        for failure in failures:
            print(failure)
        total = counts["pass"] + counts["fail"]
        for key in sorted(k for k in counts if k not in ("pass", "fail")):
            print(f"  {key:28} {counts[key]:6}")
        print(f"{args.engine}: {counts['pass']} of {total} cases agree with {args.check}")
        return 1 if failures else 0
    text = vectors.dumps(vectors.generate())
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
        print(f"wrote {text.count(chr(10))} cases to {args.out}", file=sys.stderr)
    return 0
