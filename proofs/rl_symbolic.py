"""The Remaining Length in Z3: section 2.2.3's encoding algorithm and the model's decoder.

Both are unrolled loops over symbolic bytes, written to mirror the Python they encode line
by line (``encode_remaining_length`` and ``_remaining_length`` in
:mod:`pubproof.model.wire`), with the knobs of :class:`~pubproof.proofs.variant.Codec`
where a codec can go wrong. Values are ``WIDTH``-bit so that nothing wraps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pubproof.proofs.variant import Codec
from pubproof.proofs.z3env import Expr, count, num, widen, z3

#: MQTT 3.1.1 section 2.2.3, Table 2.4: the values each length of the field holds.
TABLE_2_4 = ((1, 0, 127), (2, 128, 16_383), (3, 16_384, 2_097_151), (4, 2_097_152, 268_435_455))
MAX_VALUE = TABLE_2_4[-1][2]
#: The encoder is unrolled one byte further than the format allows, to show that
#: 268,435,456 needs a fifth byte.
ENCODER_BYTES = 5


@dataclass(frozen=True, slots=True)
class Encoding:
    """What the encoder writes for a value: ``ENCODER_BYTES`` bytes, the first ``length``."""

    data: tuple[Expr, ...]
    length: Expr


@dataclass(frozen=True, slots=True)
class Decoding:
    """What the decoder makes of the bytes at the start of a field."""

    complete: Expr  # a byte without the continuation bit ended the field
    too_long: Expr  # the decoder read its maximum number of bytes, all continuing
    length: Expr  # the field's length in bytes (when complete)
    value: Expr  # the Remaining Length (when complete)
    strict_ok: Expr  # reading rl-encoding=strict accepts it: no longer than needed


def encode(value: Expr, codec: Codec) -> Encoding:
    """Section 2.2.3: ``do { digit = X mod 128; X = X div 128; if X > 0: digit |= 128 }``."""
    rest = value
    data: list[Expr] = []
    length = num(1)
    emitted = z3.BoolVal(True)  # the byte of this round is written
    for index in range(ENCODER_BYTES):
        digit = z3.Extract(7, 0, z3.URem(rest, 128))
        rest = z3.UDiv(rest, 128)
        more = z3.Or(z3.UGT(rest, 0), index + 1 < codec.rl_min_bytes)
        data.append(digit | z3.If(more, z3.BitVecVal(codec.rl_continuation_bit, 8), 0))
        length = z3.If(z3.And(emitted, more), num(index + 2), length)
        emitted = z3.And(emitted, more)
    return Encoding(tuple(data), length)


def shortest_length(value: Expr, codec: Codec) -> Expr:
    """The model's ``_shortest_length``: ``n = 1; while value >= 128**n: n += 1``."""
    limits = [num(128**n) for n in range(1, ENCODER_BYTES)]
    if codec.rl_shortest_strict:
        return num(1) + count(z3.UGE(value, limit) for limit in limits)
    return num(1) + count(z3.UGT(value, limit) for limit in limits)


def decode(data: Sequence[Expr], codec: Codec, available: int | None = None) -> Decoding:
    """The model's loop: add ``(byte & 0x7F) << 7*i`` until a byte has no continuation bit.

    ``available`` is how many bytes the stream holds (default: all of ``data``); a
    decoder that runs out first has an incomplete field, unless the knob
    ``rl_end_of_input_ends`` makes it take the last byte as the end.
    """
    available = len(data) if available is None else available
    ended = z3.BoolVal(False)
    value, length = num(0), num(0)
    reads = min(codec.rl_max_bytes, available)
    for index in range(reads):
        current = data[index]
        reading = z3.Not(ended)
        digit = widen(current & codec.rl_digit_mask)
        value = z3.If(reading, value + (digit << (7 * index)), value)
        stops = current & 0x80 == 0
        if codec.rl_end_of_input_ends and index == available - 1:
            stops = z3.BoolVal(True)
        length = z3.If(z3.And(reading, stops), num(index + 1), length)
        ended = z3.Or(ended, stops)
    too_long = z3.And(z3.Not(ended), z3.BoolVal(reads == codec.rl_max_bytes))
    strict_ok = z3.ULE(length, shortest_length(value, codec))
    return Decoding(ended, too_long, length, value, strict_ok)


def table_length(value: Expr) -> Expr:
    """The length Table 2.4 gives a value (beyond the table: one more than the last row)."""
    return num(1) + count(z3.UGT(value, high) for _, _, high in TABLE_2_4)


__all__ = [
    "ENCODER_BYTES",
    "MAX_VALUE",
    "TABLE_2_4",
    "Decoding",
    "Encoding",
    "decode",
    "encode",
    "shortest_length",
    "table_length",
]
