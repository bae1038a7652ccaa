"""The Variable Byte Integer encoding in Z3 against the model's 5.0 decoder, in packets.

The Z3 decoder of :mod:`~pubproof.proofs.rl_symbolic` is run on each sample field; from
what it reads (complete or not, length, value, shortest or not) follows the verdict the
model must give a 5.0 packet that carries the field as a Property Length (in a PUBACK whose
properties are a Reason String of the declared length) or as a Subscription Identifier (in
a PUBLISH to "a"), under rl-encoding strict (the 5.0 default) and lenient. The model is
asked; the first sample where it says otherwise is the drift.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from pubproof.model import wire
from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition
from pubproof.model.trace import PublishProps
from pubproof.proofs import rl_symbolic as rl
from pubproof.proofs.oracle import OK
from pubproof.proofs.rl_crosscheck import EDGES, padded
from pubproof.proofs.variant import Codec
from pubproof.proofs.wire50_common import Outcome, ack50, bytes_of, constant, decode50, publish50

#: Sections of up to this many bytes are written out as a Reason String in the samples.
LONGEST_SECTION = 2_000
READINGS = ({"rl-encoding": "strict"}, {"rl-encoding": "lenient"})


@dataclass(frozen=True, slots=True)
class Read:
    """What the Z3 decoder makes of a sample field."""

    complete: bool
    too_long: bool
    length: int
    value: int
    shortest: bool


def read(field: bytes, codec: Codec) -> Read:
    decoding = rl.decode(bytes_of(tuple(field)), codec, available=len(field))
    complete, too_long, length, value, shortest = (
        constant(t)
        for t in (decoding.complete, decoding.too_long, decoding.length, decoding.value,
                  decoding.strict_ok)
    )  # fmt: skip
    return Read(bool(complete), bool(too_long), length, value, bool(shortest))


@cache
def samples() -> tuple[bytes, ...]:
    """Fields of 1 to 5 bytes: every length of every edge value, over-long and cut fields,
    a first byte of each kind, and seeded random bytes."""
    rng = random.Random(20261125)
    found = [padded(v, n) for v in EDGES for n in range(1, 5) if v < 128**n]
    found += [b"\x80\x80\x80\x80\x01", b"\xff\xff\xff\xff\x7f", b"\x80", b"\xff\xff\xff"]
    found += [bytes([first]) for first in (0x00, 0x01, 0x02, 0x03, 0x05, 0x7F, 0x80, 0xFF)]
    for _ in range(40):
        found.append(bytes(rng.choice((rng.randint(0, 127), rng.randint(128, 255)))
                           for _ in range(rng.randint(1, 5))))  # fmt: skip
    return tuple(dict.fromkeys(found))


@dataclass(frozen=True, slots=True)
class Expected:
    data: bytes
    outcome: Outcome


def _rl(body: int) -> bytes:
    return wire.encode_remaining_length(body)


def as_property_length(field: bytes, seen: Read, strict: bool) -> Expected:
    """A PUBACK ``40 RL 0001 00`` with ``field`` as its Property Length."""
    if seen.too_long:
        section, rule, at = field[:4], R.RL_MAX_BYTES, 3
    elif not seen.complete:
        section, rule, at = field, R.ACK_RL["PUBACK"], 0
    elif strict and not seen.shortest:
        section, rule, at = field[: seen.length], R.RL_MINIMAL, 0
    elif seen.value == 0:
        section, rule, at = field[: seen.length], None, 0
    elif 3 <= seen.value <= LONGEST_SECTION:
        text = "a" * (seen.value - 3)
        section = field[: seen.length] + b"\x1f" + len(text).to_bytes(2, "big") + text.encode()
        rule, at = None, 0
    else:
        section, rule, at = field[: seen.length], R.PROPERTY_LENGTH, 0
    head = b"\x00\x01\x00"
    data = b"\x40" + _rl(len(head) + len(section)) + head + section
    offset = len(data) - len(section)
    if rule is not None:
        return Expected(data, Outcome(rule.id_for(Edition.V50), offset + at, []))
    props = {"reason_string": "a" * (seen.value - 3)} if seen.value else {}
    return Expected(data, Outcome(OK, None, [ack50("PUBACK", 1, 0, props)]))  # type: ignore[arg-type]


def as_subscription_identifier(field: bytes, seen: Read, strict: bool) -> Expected:
    """A PUBLISH to "a" whose only property is a Subscription Identifier of ``field``."""
    value = field[:4] if seen.too_long else field if not seen.complete else field[: seen.length]
    section = b"\x0b" + value
    head = b"\x00\x01a" + bytes([len(section)])
    data = b"\x30" + _rl(len(head) + len(section)) + head + section
    at = len(data) - len(section)  # the identifier byte
    if seen.too_long:
        rule, offset = R.RL_MAX_BYTES, at + 4
    elif not seen.complete:
        rule, offset = R.PROPERTY_VALUE, at
    elif strict and not seen.shortest:
        rule, offset = R.RL_MINIMAL, at + 1
    elif seen.value == 0:
        rule, offset = R.SUBSCRIPTION_ID_ZERO, at
    else:
        props: PublishProps = {"subscription_identifiers": [seen.value]}
        return Expected(data, Outcome(OK, None, [publish50(properties=props)]))
    return Expected(data, Outcome(rule.id_for(Edition.V50), offset, []))


Carrier = Callable[[bytes, Read, bool], Expected]


@dataclass(frozen=True, slots=True)
class Drift:
    field: bytes
    data: bytes
    readings: str
    expected: Outcome
    got: Outcome

    def describe(self) -> str:
        return (
            f"the field {self.field.hex()} in {self.data.hex()} ({self.readings}): the Z3 "
            f"encoding says {self.expected}, the model {self.got}"
        )


@cache
def drift(codec: Codec, carrier: Carrier) -> Drift | None:
    """The first sample on which the encoding and the model's 5.0 decoder part."""
    for field in samples():
        seen = read(field, codec)
        for readings in READINGS:
            expected = carrier(field, seen, readings["rl-encoding"] == "strict")
            got = decode50(expected.data, readings)
            same = got.rule == expected.outcome.rule and (
                got.offset == expected.outcome.offset
                if got.rule != OK
                else got.packets == expected.outcome.packets
            )
            if not same:
                return Drift(field, expected.data, str(readings), expected.outcome, got)
    return None


__all__ = [
    "Drift",
    "Read",
    "as_property_length",
    "as_subscription_identifier",
    "drift",
    "read",
    "samples",
]
