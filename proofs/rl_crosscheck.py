"""The Remaining Length encoding in Z3 against the Python model, on a fixed sample.

One Z3 query per stream length asks whether *any* sample makes the encoding and the
model's answer differ (a disjunction over the samples), so a drifted encoding comes back
with the sample that shows it. The sample covers every first byte, every value and length
at the edges of Table 2.4 in minimal and padded forms, the over-long fields, truncated
fields, and seeded random bytes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache

from pubproof.model import wire
from pubproof.model import wire_rules as R
from pubproof.proofs import rl_symbolic as rl
from pubproof.proofs.oracle import OK, RlAnswer, remaining_length
from pubproof.proofs.variant import Codec
from pubproof.proofs.z3env import Expr, byte, num, search, value, word, z3

EDGES = (0, 1, 2, 3, 126, 127, 128, 129, 16_383, 16_384, 2_097_151, 2_097_152, rl.MAX_VALUE)


def padded(value: int, length: int) -> bytes:
    """``value`` in exactly ``length`` bytes (longer than needed when the value is small)."""
    out = bytearray()
    for index in range(length):
        digit, value = value % 128, value // 128
        out.append(digit | (0x80 if index < length - 1 else 0))
    return bytes(out)


@cache
def field_samples() -> tuple[bytes, ...]:
    """Byte strings of 1 to 5 bytes to decode as a Remaining Length field."""
    rng = random.Random(20240229)
    found: list[bytes] = []
    for value_ in EDGES:
        for length in range(1, 5):
            if value_ < 128**length:
                found.append(padded(value_, length) + b"\x00")
    found += [bytes([first, 0x00]) for first in range(256)]
    found += [b"\x80\x80\x80\x80\x01", b"\xff\xff\xff\xff\x7f", b"\xff\xff\xff\x7f\x00"]
    found += [b"\x80", b"\x82", b"\xff\xff", b"\x80\x80\x80", b"\x80\x80\x80\x80"]
    for _ in range(300):
        length = rng.randint(1, 5)
        # half the bytes carry the continuation bit, so that long fields are common
        digits = (rng.choice((rng.randint(0, 127), rng.randint(128, 255))) for _ in range(length))
        found.append(bytes(digits))
    return tuple(dict.fromkeys(found))


@cache
def value_samples() -> tuple[int, ...]:
    rng = random.Random(20240301)
    return (*EDGES, rl.MAX_VALUE + 1, *(rng.randint(0, rl.MAX_VALUE) for _ in range(100)))


@dataclass(frozen=True, slots=True)
class Drift:
    """A sample on which the Z3 encoding and the model disagree."""

    field: bytes | None  # a field the decoders read differently
    value: int | None  # or a value the encoders write differently
    model_says: str

    def describe(self) -> str:
        where = f"encode {self.value}" if self.field is None else f"decode {self.field.hex()}"
        return f"the Z3 encoding and the model {where} differently ({self.model_says})"


def _decoder_disagrees(decoding: rl.Decoding, answer: RlAnswer, strict: RlAnswer) -> Expr:
    if answer.rule == OK:
        lenient_ok = z3.And(
            decoding.complete,
            decoding.length == num(answer.length or 0),
            decoding.value == num(answer.value or 0),
        )
    elif answer.rule == R.RL_MAX_BYTES.key:
        lenient_ok = decoding.too_long
    else:  # incomplete
        lenient_ok = z3.And(z3.Not(decoding.complete), z3.Not(decoding.too_long))
    if answer.rule != OK:
        return z3.Not(lenient_ok)
    return z3.Not(z3.And(lenient_ok, decoding.strict_ok == (strict.rule == OK)))


@cache
def drift(codec: Codec) -> Drift | None:
    """The first sample on which the encoding of ``codec`` disagrees with the model."""
    by_length: dict[int, list[bytes]] = {}
    for sample in field_samples():
        by_length.setdefault(len(sample), []).append(sample)
    for length, samples in sorted(by_length.items()):
        data = [byte(f"field{i}") for i in range(length)]
        decoding = rl.decode(data, codec, available=length)
        cases = []
        for sample in samples:
            lenient, strict = (remaining_length(sample, strict=s) for s in (False, True))
            same_input = z3.And(*[d == b for d, b in zip(data, sample, strict=True)])
            cases.append(z3.And(same_input, _decoder_disagrees(decoding, lenient, strict)))
        answer = search(z3.Or(*cases))
        if answer.model is not None:
            found = bytes(value(answer.model, d) for d in data)
            lenient = remaining_length(found, strict=False)
            return Drift(found, None, f"model: {lenient}")
    number = word("value")
    encoding = rl.encode(number, codec)
    cases = []
    for sample_value in value_samples():
        expected = wire.encode_remaining_length(sample_value)
        same = z3.And(
            encoding.length == len(expected),
            *[encoding.data[i] == b for i, b in enumerate(expected)],
        )
        cases.append(z3.And(number == sample_value, z3.Not(same)))
    answer = search(z3.Or(*cases))
    if answer.model is not None:
        found_value = value(answer.model, number)
        written = wire.encode_remaining_length(found_value).hex()
        return Drift(None, found_value, f"model: {written}")
    return None


def sample_size() -> int:
    return len(field_samples()) + len(value_samples())


__all__ = ["Drift", "drift", "field_samples", "padded", "sample_size", "value_samples"]
