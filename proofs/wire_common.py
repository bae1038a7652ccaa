"""What the wire-format theorems share: rule citations and turning witnesses into evidence."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pubproof.model.editions import Edition
from pubproof.model.rules import Rule
from pubproof.model.trace import P
from pubproof.proofs.oracle import frame_for_length
from pubproof.proofs.registry import Result

BOTH = (Edition.V311, Edition.V31)


def rule_ids(rules: Iterable[Rule], editions: Sequence[Edition] = BOTH) -> list[str]:
    """The ids of ``rules`` in each of ``editions`` that has them, without repeats."""
    found: list[str] = []
    for rule in rules:
        found.extend(rule.ids[e] for e in editions if e in rule.ids)
    return list(dict.fromkeys(found))


def packet_with_field(field: bytes, value: int) -> tuple[bytes, list[P]] | None:
    """A packet whose Remaining Length field is ``field`` (read as ``value``), and its P.

    Used to show a Remaining Length witness as a packet; None when no valid packet has
    that length (0, 1, or too long to write out).
    """
    frame = frame_for_length(value)
    if frame is None:
        return None
    first, body, packet = frame
    return bytes([first]) + field + body, [packet]


def short_hex(data: bytes, limit: int = 24) -> str:
    """Hex of ``data``, cut after ``limit`` bytes with the full length said."""
    if len(data) <= limit:
        return data.hex()
    return f"{data[: limit // 2].hex()}...({len(data)} bytes)"


def proved(details: str) -> Result:
    return Result(status="proved", details=details)


def unknown(details: str) -> Result:
    return Result(status="unknown", details=details)


__all__ = ["BOTH", "packet_with_field", "proved", "rule_ids", "short_hex", "unknown"]
