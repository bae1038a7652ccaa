"""A 5.0 PUBLISH with Payload Format Indicators and Message Expiry Intervals, for the readings
pfi-mei-once and payload-utf8.

The domain is every PUBLISH to "a" at QoS 0 whose property section holds up to two
properties, each a Payload Format Indicator (any value byte) or a Message Expiry Interval
(any value), followed by a payload of no byte or one. :func:`judge` is the model's 5.0
judgement restricted to it (docs/guides/mqtt5-wire.md, step 5 for each property: a repeat
first, under reading pfi-mei-once, then the indicator's range; step 7: with the last
indicator 1 and reading payload-utf8 at reject, a payload byte from 0x80 up is ill-formed
UTF-8 on its own). :data:`PFI_PACKETS` is its
:class:`~pubproof.proofs.differences.Domain`, with probe packets checked against the model.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache
from typing import Any

from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition
from pubproof.model.properties50 import BY_KEY
from pubproof.model.trace import P, PublishProps
from pubproof.proofs.oracle import OK, Config, verdict
from pubproof.proofs.registry import Result
from pubproof.proofs.variant import Codec
from pubproof.proofs.wire50_common import publish50
from pubproof.proofs.wire_common import short_hex
from pubproof.proofs.z3env import Expr, Model, byte, evaluate, num, value, word, z3

RULE_KEYS: tuple[str, ...] = (
    OK, R.PROPERTY_ONCE.key, R.PAYLOAD_FORMAT_VALUE.key, R.PAYLOAD_UTF8.key,
)  # fmt: skip
CODE = {key: code for code, key in enumerate(RULE_KEYS)}
SLOTS = 2
PFI = BY_KEY["payload_format_indicator"].identifier
MEI = BY_KEY["message_expiry_interval"].identifier


@dataclass(frozen=True, slots=True)
class Point:
    kinds: tuple[int, ...]  # PFI or MEI, one per property present
    values: tuple[int, ...]  # each property's value
    payload: bytes  # no byte or one


@dataclass(frozen=True, slots=True)
class Packet:
    count: Expr  # 8 bits, 0 to SLOTS
    mei: tuple[Expr, ...]  # Bool per slot: a Message Expiry Interval (else an indicator)
    values: tuple[Expr, ...]  # 32 bits per slot
    has_payload: Expr  # Bool
    payload: Expr  # 8 bits

    @classmethod
    def fresh(cls) -> Packet:
        return cls(
            word("pfi_count", 8),
            tuple(z3.Bool(f"pfi_mei{i}") for i in range(SLOTS)),
            tuple(word(f"pfi_value{i}", 32) for i in range(SLOTS)),
            z3.Bool("pfi_has_payload"),
            byte("pfi_payload"),
        )

    def assignment(self, point: Point) -> list[tuple[Expr, int]]:
        pairs: list[tuple[Expr, int]] = [(self.count, len(point.kinds))]
        for i in range(SLOTS):
            kind = point.kinds[i] if i < len(point.kinds) else PFI
            number = point.values[i] if i < len(point.values) else 0
            pairs += [(self.mei[i], int(kind == MEI)), (self.values[i], number)]
        pairs += [(self.has_payload, len(point.payload)),
                  (self.payload, point.payload[0] if point.payload else 0)]  # fmt: skip
        return pairs

    def point(self, model: Model) -> Point:
        count = value(model, self.count)
        kinds = tuple(MEI if z3.is_true(model.eval(self.mei[i], model_completion=True)) else PFI
                      for i in range(count))  # fmt: skip
        values = tuple(value(model, self.values[i]) for i in range(count))
        has = z3.is_true(model.eval(self.has_payload, model_completion=True))
        return Point(kinds, values, bytes([value(model, self.payload)]) if has else b"")


def judge(packet: Packet, config: Config, codec: Codec) -> Expr:
    """The rule code 5.0 gives the packet under ``config``."""
    checks: list[tuple[Expr, str]] = []
    once = config.reading("pfi-mei-once") == "reject"
    seen_pfi, seen_mei = z3.BoolVal(False), z3.BoolVal(False)
    last_pfi = num(0, 32)
    for i in range(SLOTS):
        present = z3.UGT(packet.count, i)
        is_mei, is_pfi = packet.mei[i], z3.Not(packet.mei[i])
        if once:
            repeat = z3.Or(z3.And(is_pfi, seen_pfi, PFI in codec.once_by_reading),
                           z3.And(is_mei, seen_mei, MEI in codec.once_by_reading))  # fmt: skip
            checks.append((z3.And(present, repeat), R.PROPERTY_ONCE.key))
        checks.append((z3.And(present, is_pfi, z3.UGT(packet.values[i], 1)),
                       R.PAYLOAD_FORMAT_VALUE.key))  # fmt: skip
        seen_pfi = z3.Or(seen_pfi, z3.And(present, is_pfi))
        seen_mei = z3.Or(seen_mei, z3.And(present, is_mei))
        last_pfi = z3.If(z3.And(present, is_pfi), packet.values[i], last_pfi)
    if config.reading("payload-utf8") == "reject":
        ill_formed = z3.And(packet.has_payload, z3.UGE(packet.payload, 0x80))
        checks.append((z3.And(last_pfi == codec.payload_utf8_when, ill_formed),
                       R.PAYLOAD_UTF8.key))  # fmt: skip
    code = z3.BitVecVal(CODE[OK], 8)
    for condition, key in reversed(checks):
        code = z3.If(condition, z3.BitVecVal(CODE[key], 8), code)
    return code


def section(point: Point) -> bytes:
    out = bytearray()
    for kind, number in zip(point.kinds, point.values, strict=True):
        out += bytes([kind]) + number.to_bytes(1 if kind == PFI else 4, "big")
    return bytes(out)


def render(point: Point) -> bytes:
    props = section(point)
    body = b"\x00\x01a" + bytes([len(props)]) + props + point.payload
    return bytes([0x30, len(body)]) + body


def packet_of(point: Point) -> P:
    props: PublishProps = {}
    for kind, number in zip(point.kinds, point.values, strict=True):
        if kind == PFI:
            props["payload_format_indicator"] = number
        else:
            props["message_expiry_interval"] = number
    return publish50(properties=props, payload=point.payload)


@cache
def probe_points() -> tuple[Point, ...]:
    found = []
    values = {PFI: (0, 1, 2), MEI: (0, 7)}
    for count in range(SLOTS + 1):
        for kinds in itertools.product((PFI, MEI), repeat=count):
            for chosen in itertools.product(*(values[k] for k in kinds)):
                for payload in (b"", b"a", b"\x80", b"\xff"):
                    found.append(Point(kinds, chosen, payload))
    return tuple(found)


@cache
def drift(config: Config, codec: Codec) -> Result | None:
    packet = Packet.fresh()
    code = judge(packet, config, codec)
    for point in probe_points():
        says = RULE_KEYS[evaluate(code, packet.assignment(point))]
        rule = verdict(render(point), config)[0]
        if says != rule:
            return Result(
                status="failed",
                counterexample=[packet_of(point)],
                details=f"probe {short_hex(render(point))} under {config.label()}: the model "
                f"says {rule}, the Z3 encoding {says}",
            )
    return None


class _Domain:
    rule_keys = RULE_KEYS

    def fresh(self) -> Packet:
        return Packet.fresh()

    def frame(self, packet: Packet, codec: Codec) -> tuple[Expr, Expr]:
        sizes = [z3.If(z3.UGT(packet.count, i), z3.If(packet.mei[i], num(5), num(2)), num(0))
                 for i in range(SLOTS)]  # fmt: skip
        total = num(6) + sum(sizes, num(0)) + z3.If(packet.has_payload, num(1), num(0))
        well = [z3.ULE(packet.count, SLOTS)]
        well += [z3.Or(packet.mei[i], z3.ULE(packet.values[i], 0xFF)) for i in range(SLOTS)]
        return z3.And(*well), total

    def tidy(self, packet: Packet, codec: Codec) -> Expr:
        return z3.And(*[z3.ULE(v, 1) for v in packet.values])

    def first(self, packet: Packet) -> Expr:
        return z3.BitVecVal(0x30, 8)

    def judge(self, packet: Packet, config: Config, codec: Codec) -> Expr:
        return judge(packet, config, codec)

    def point(self, packet: Packet, model: Any) -> Point:
        return packet.point(model)

    def render(self, point: Point, codec: Codec) -> bytes:
        return render(point)

    def packet(self, point: Point, codec: Codec, edition: Edition) -> P | None:
        return packet_of(point)

    def drift(self, config: Config, codec: Codec) -> Result | None:
        return drift(config, codec)


PFI_PACKETS = _Domain()

__all__ = ["PFI_PACKETS", "RULE_KEYS", "Packet", "Point", "judge", "probe_points", "render"]
