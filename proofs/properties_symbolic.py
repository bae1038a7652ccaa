"""A 5.0 property section in Z3: which runs of bytes read as one property.

A section is a run of symbolic bytes. :func:`alternatives` lists, for the property that
starts at a position, one way to read it per entry of the property table (MQTT 5.0 Table
2-4, restricted to PUBLISH and its acknowledgements): the identifier byte must be the
entry's, and the value must fit in the section: a fixed-size integer by its size, a UTF-8
string or Binary Data by its two-byte length prefix (big-endian, [MQTT-1.5.2]), a String
Pair by both prefixes, a Variable Byte Integer by its continuation bits (at most four
bytes). :func:`reads` says whether bytes ``p`` to ``q`` are one property. A *parse* of a
section is a set of boundaries, from 0 to the section's end, every two consecutive ones
enclosing one property.

:func:`interpret` reads a concrete section along a parse, as the ``properties`` of ``P``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from pubproof.model.properties50 import ACKS, PROPERTIES, DataType, identifiers
from pubproof.proofs.variant import Codec
from pubproof.proofs.z3env import Expr, z3

WIDTH = 32  # positions: a length prefix adds up to 65,535, nothing wraps
#: the keys of P's "properties" by identifier, for the properties of PUBLISH and the
#: acknowledgements (Table 2-4, pubproof.model.properties50)
_ROWS = [
    row for row in PROPERTIES if row.identifier in identifiers("PUBLISH") | identifiers(ACKS[0])
]
KEYS = {row.identifier: row.key for row in _ROWS}
#: the keys whose values are lists (the properties that may repeat in these packets)
LISTED = frozenset(row.key for row in _ROWS if {"PUBLISH", *ACKS} & set(row.repeatable_in))
#: the fixed-size value types: kind -> bytes
FIXED = {t.code: t.size for t in DataType if t.size is not None}


def pos(value: int) -> Expr:
    return z3.BitVecVal(value, WIDTH)


def at(data: Sequence[Expr], index: Expr) -> Expr:
    """The byte at a symbolic ``index`` of the section (0 past its end)."""
    found: Expr = z3.BitVecVal(0, 8)
    for i in reversed(range(len(data))):
        found = z3.If(index == i, data[i], found)
    return found


def prefix(data: Sequence[Expr], index: Expr, codec: Codec) -> Expr:
    """The two-byte length at ``index``: MSB first (or, in a broken codec, LSB first)."""
    high, low = at(data, index), at(data, index + 1)
    if not codec.length_prefix_big_endian:
        high, low = low, high
    return z3.ZeroExt(WIDTH - 16, z3.Concat(high, low))


@dataclass(frozen=True, slots=True)
class Alternative:
    """One way to read the property at a position: when it applies, and where it ends."""

    identifier: int
    kind: str
    applies: Expr
    end: Expr


def alternatives(data: Sequence[Expr], start: int, codec: Codec) -> list[Alternative]:
    """Each entry of the table as a reading of the property at ``start``."""
    limit = pos(len(data))
    here = pos(start)
    found = []
    for identifier, kind in codec.properties:
        if start >= len(data):
            break
        is_id = data[start] == identifier
        if kind in FIXED:
            end = here + 1 + FIXED[kind]
            fits = z3.ULE(end, limit)
        elif kind in ("string", "binary"):
            end = here + 3 + prefix(data, here + 1, codec)
            fits = z3.And(z3.ULE(here + 3, limit), z3.ULE(end, limit))
        elif kind == "pair":
            second = here + 3 + prefix(data, here + 1, codec)
            end = second + 2 + prefix(data, second, codec)
            fits = z3.And(z3.ULE(here + 3, limit), z3.ULE(second + 2, limit), z3.ULE(end, limit))
        else:  # varint: the value's bytes up to the first without the continuation bit
            length: Expr = pos(0)
            ended: Expr = z3.BoolVal(False)
            for i in range(4):
                index = start + 1 + i
                byte = data[index] if index < len(data) else z3.BitVecVal(0x80, 8)
                stops = z3.And(z3.Not(ended), byte & 0x80 == 0, z3.BoolVal(index < len(data)))
                length = z3.If(stops, pos(i + 1), length)
                ended = z3.Or(ended, stops)
            end = here + 1 + length
            fits = ended
        found.append(Alternative(identifier, kind, z3.And(is_id, fits), end))
    return found


def reads(options: Sequence[Alternative], end: int) -> Expr:
    """The bytes from the options' start to ``end`` are one property."""
    return z3.Or(z3.BoolVal(False), *[z3.And(o.applies, o.end == end) for o in options])


def matrix(data: Sequence[Expr], codec: Codec) -> dict[tuple[int, int], Expr]:
    """``reads`` for every ``(start, end)`` of ``data``. A property that ends at ``end``
    read no byte past it, so the matrix of the longest section serves every prefix of it."""
    found = {}
    for start in range(len(data)):
        options = alternatives(data, start, codec)
        for end in range(start + 1, len(data) + 1):
            found[start, end] = reads(options, end)
    return found


def parse(cells: dict[tuple[int, int], Expr], size: int, tag: str) -> tuple[list[Expr], Expr]:
    """Symbolic boundaries (one Boolean per position 0..size) and the condition that they
    are a parse of the first ``size`` bytes (``cells`` from :func:`matrix`)."""
    bounds = [z3.Bool(f"{tag}{i}") for i in range(size + 1)]
    conditions = [bounds[0], bounds[size]]
    for start in range(size):
        for end in range(start + 1, size + 1):
            consecutive = z3.And(bounds[start], bounds[end],
                                 *[z3.Not(bounds[r]) for r in range(start + 1, end)])  # fmt: skip
            conditions.append(z3.Implies(consecutive, cells[start, end]))
    return bounds, z3.And(*conditions)


def _vbi(raw: bytes) -> int:
    return sum((b & 0x7F) << (7 * i) for i, b in enumerate(raw))


def _length(raw: bytes, codec: Codec) -> int:
    return int.from_bytes(raw, "big" if codec.length_prefix_big_endian else "little")


def interpret(
    section: bytes, cuts: Sequence[int], kinds: Sequence[str], codec: Codec
) -> dict[str, object]:
    """The ``properties`` of ``P`` that ``section`` holds when read along ``cuts`` (the
    boundaries), each property of the kind given (as the encoding read it)."""
    props: dict[str, object] = {}
    for (start, end), kind in zip(itertools.pairwise(cuts), kinds, strict=True):
        identifier, raw = section[start], section[start + 1 : end]
        key = KEYS.get(identifier, f"0x{identifier:02x}")
        item: object
        if kind in FIXED:
            item = int.from_bytes(raw, "big")
        elif kind == "string":
            item = raw[2:].decode("utf-8", "replace")
        elif kind == "binary":
            item = raw[2:].hex()
        elif kind == "pair":
            name = 2 + _length(raw[:2], codec)
            item = [
                raw[2:name].decode("utf-8", "replace"),
                raw[name + 2 :].decode("utf-8", "replace"),
            ]
        else:
            item = _vbi(raw)
        if key in LISTED:
            listed = props.setdefault(key, [])
            assert isinstance(listed, list)
            listed.append(item)
        else:
            props[key] = item
    return props


__all__ = [
    "FIXED",
    "KEYS",
    "LISTED",
    "Alternative",
    "alternatives",
    "at",
    "interpret",
    "matrix",
    "parse",
    "prefix",
    "reads",
]
