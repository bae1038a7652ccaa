"""One packet in Z3 read by MQTT 3.1, 3.1.1 and 5.0 alike, for the editions' witnesses.

The domain is :mod:`~pubproof.proofs.packet_symbolic`'s (a first byte, a Remaining Length
of 1 to 4 bytes that counts exactly the fields after it, a PUBLISH's topic of any length
with two symbolic ASCII characters, its packet identifier, a payload of any length) made
wide enough for the places 3.1.1 and 5.0 read the same bytes differently: the payload's
first byte is symbolic (below 0x80: what 5.0 reads as the Property Length, the rest of the
payload being zeros, where 5.0 would find an identifier), and an acknowledgement has
Remaining Length 2, 3 (a Reason Code byte) or 4 (and a Property Length byte below 0x80).

:func:`judge` gives the rule code 3.1 and 3.1.1 give a packet (the 3.x judgement of
:mod:`~pubproof.proofs.packet_symbolic`, with its Remaining Length rule for the longer
acknowledgements) and :func:`judge50` the code 5.0 gives it, following the judgement order
of docs/guides/mqtt5-wire.md restricted to this domain.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition
from pubproof.model.rules import Rule
from pubproof.model.trace import ACK_TYPE_NAMES, P, publish
from pubproof.proofs import packet_symbolic as p3
from pubproof.proofs import rl_symbolic as rl
from pubproof.proofs.oracle import OK, Config
from pubproof.proofs.variant import Codec
from pubproof.proofs.wire50_ack import allowed
from pubproof.proofs.wire50_common import ack50, publish50
from pubproof.proofs.z3env import Expr, Model, byte, num, value, widen, word, z3

#: The verdicts of the domain: the 3.x ones first (same codes), then those of the longer
#: acknowledgements and of 5.0.
RULE_KEYS: tuple[str, ...] = (
    *p3.RULE_KEYS,
    *[R.ACK_RL[name].key for name in ACK_TYPE_NAMES],
    *[R.ACK_REASON_CODE[name].key for name in ACK_TYPE_NAMES],
    R.PROPERTIES_PRESENT.key,
    R.PROPERTY_LENGTH.key,
    R.PROPERTY_IDENTIFIER.key,
    R.TOPIC_OR_ALIAS.key,
)
CODE = {key: code for code, key in enumerate(RULE_KEYS)}


@dataclass(frozen=True, slots=True)
class Point:
    """One packet of the domain, as concrete field values."""

    inner: p3.Point
    pay0: int = 0  # the payload's first byte (when there is a payload)
    ack_length: int = 2  # an acknowledgement's Remaining Length
    reason: int = 0  # its third byte (Remaining Length 3 and 4)
    ack_pl: int = 0  # its fourth byte (Remaining Length 4)


@dataclass(frozen=True, slots=True)
class Packet:
    inner: p3.Packet
    pay0: Expr
    ack_length: Expr
    reason: Expr
    ack_pl: Expr

    @classmethod
    def fresh(cls, tag: str = "") -> Packet:
        return cls(
            p3.Packet.fresh(tag),
            byte(f"{tag}pay0"),
            word(f"{tag}ack_length", 8),
            byte(f"{tag}reason"),
            byte(f"{tag}ack_pl"),
        )

    def extra(self) -> Iterator[Expr]:
        yield from (self.pay0, self.ack_length, self.reason, self.ack_pl)

    def assignment(self, point: Point) -> list[tuple[Expr, int]]:
        concrete = (point.pay0, point.ack_length, point.reason, point.ack_pl)
        return [*self.inner.assignment(point.inner), *zip(self.extra(), concrete, strict=True)]

    def point(self, model: Model) -> Point:
        pay0, length, reason, pl = (value(model, t) for t in self.extra())
        return Point(self.inner.point(model), pay0, length, reason, pl)


@dataclass(frozen=True, slots=True)
class Shape:
    form: p3.Shape
    well_framed: Expr
    total_length: Expr


def shape(packet: Packet, codec: Codec) -> Shape:
    inner = packet.inner
    form = p3.shape(inner, codec)
    topic = widen(inner.topic_length)
    publish_body = num(2) + topic + z3.If(form.has_id, num(2), num(0)) + inner.payload_length
    ack_body = widen(packet.ack_length)
    body = z3.If(form.is_publish, publish_body, z3.If(form.is_ack, ack_body, num(0)))
    no_payload = inner.payload_length == 0
    well_framed = z3.And(
        form.field.complete, form.field.value == body,
        *[z3.ULT(h, 0x80) for h in inner.head], z3.ULE(inner.payload_length, rl.MAX_VALUE),
        z3.ULT(packet.pay0, 0x80), z3.Implies(z3.Or(no_payload, z3.Not(form.is_publish)),
                                              packet.pay0 == 0),
        z3.ULT(packet.ack_pl, 0x80),
        z3.Or(packet.ack_length == 2, packet.ack_length == 3, packet.ack_length == 4),
        z3.Implies(z3.Not(form.is_ack), packet.ack_length == 2),
        z3.Implies(z3.Not(z3.And(form.is_ack, z3.UGE(packet.ack_length, 3))), packet.reason == 0),
        z3.Implies(z3.Not(z3.And(form.is_ack, packet.ack_length == 4)), packet.ack_pl == 0),
    )  # fmt: skip
    return Shape(form, well_framed, num(1) + form.field.length + form.field.value)


def _fold(checks: list[tuple[Expr, str]], otherwise: Expr) -> Expr:
    code = otherwise
    for condition, key in reversed(checks):  # the first broken rule in the order wins
        code = z3.If(condition, z3.BitVecVal(CODE[key], 8), code)
    return code


def _per_ack(kind: Expr, rules: dict[str, Rule], broken: Expr) -> list[tuple[Expr, str]]:
    return [(z3.And(kind == n, broken), rules[name].key) for n, name in R.ACK_TYPES.items()]


def judge(packet: Packet, config: Config, codec: Codec) -> Expr:
    """The rule code 3.1 or 3.1.1 gives the packet: the 3.x judgement, then (for an
    acknowledgement the 3.x judgement lets through) a Remaining Length other than 2."""
    form = shape(packet, codec).form
    code3 = p3.judge(packet.inner, config, codec)
    longer = z3.And(code3 == CODE[OK], form.is_ack, packet.ack_length != 2)
    return _fold(_per_ack(form.kind, R.ACK_RL, longer), code3)


def judge50(packet: Packet, config: Config, codec: Codec) -> Expr:
    """The rule code 5.0 gives the packet (docs/guides/mqtt5-wire.md, steps 1 to 7)."""
    inner = packet.inner
    form = shape(packet, codec).form
    topic = widen(inner.topic_length)
    checks = p3.first_byte_checks(inner.first, config, codec)
    if config.reading("rl-encoding") == "strict":
        checks.append((z3.Not(form.field.strict_ok), R.RL_MINIMAL.key))
    # acknowledgements: the Reason Code, then the Property Length (nothing is left for it)
    for number, name in R.ACK_TYPES.items():
        mine = z3.And(form.kind == number, z3.UGE(packet.ack_length, 3))
        wrong = z3.Not(allowed(name, packet.reason, codec))
        checks.append((z3.And(mine, wrong), R.ACK_REASON_CODE[name].key))
    checks.append((z3.And(form.is_ack, packet.ack_length == 4, packet.ack_pl != 0),
                   R.PROPERTY_LENGTH.key))  # fmt: skip
    # PUBLISH: the topic's characters, the packet identifier, then the property section
    for index, char in enumerate(inner.head):
        present = z3.And(form.is_publish, z3.UGT(topic, index))
        if codec.nul_check:
            checks.append((z3.And(present, char == 0), R.TOPIC_NUL.key))
        wildcard = z3.Or(*[char == w for w in codec.wildcards])
        checks.append((z3.And(present, wildcard), R.TOPIC_NO_WILDCARDS.key))
        if config.reading("discouraged-code-points") == "reject":
            control = z3.And(z3.UGE(char, 0x01), z3.ULE(char, 0x1F))
            if codec.discouraged_del:
                control = z3.Or(control, char == 0x7F)
            checks.append((z3.And(present, control), R.TOPIC_DISCOURAGED.key))
    if codec.reject_id_zero:
        checks.append((z3.And(form.has_id, inner.packet_id == 0), R.PACKET_ID_NONZERO.key))
    payload = inner.payload_length
    length = widen(packet.pay0)
    checks += [
        (z3.And(form.is_publish, payload == 0), R.PROPERTIES_PRESENT.key),
        (z3.And(form.is_publish, z3.UGT(length + 1, payload)), R.PROPERTY_LENGTH.key),
        # the byte after a non-zero Property Length is a zero: no property has identifier 0
        (z3.And(form.is_publish, length != 0), R.PROPERTY_IDENTIFIER.key),
        (z3.And(form.is_publish, topic == 0), R.TOPIC_OR_ALIAS.key),
    ]
    return _fold(checks, z3.BitVecVal(CODE[OK], 8))


def judge_in(packet: Packet, config: Config, codec: Codec) -> Expr:
    """The rule code ``config``'s edition gives the packet."""
    if config.edition is Edition.V50:
        return judge50(packet, config, codec)
    return judge(packet, config, codec)


def render(point: Point, codec: Codec) -> bytes:
    """The bytes of a packet of the domain."""
    data = bytearray(p3.render(point.inner, codec))
    kind = point.inner.first >> 4
    if kind == p3.PUBLISH_TYPE and point.inner.payload_length:
        data[len(data) - point.inner.payload_length] = point.pay0
    elif 4 <= kind <= 7:
        data += bytes([point.reason, point.ack_pl][: point.ack_length - 2])
    return bytes(data)


def packet_of(point: Point, codec: Codec, edition: Edition) -> P | None:
    """The packet ``edition`` reads when it accepts the bytes (None outside the scope)."""
    inner, kind = point.inner, point.inner.first >> 4
    shown = p3.packet_of(inner, codec)
    if shown is None:
        return None
    if kind == p3.PUBLISH_TYPE:
        payload = (
            bytes([point.pay0]) + bytes(inner.payload_length - 1) if inner.payload_length else b""
        )
        if edition is not Edition.V50:
            return publish(
                topic=p3.topic_of(inner).decode("ascii"), qos=(inner.first >> 1) & 3,
                packet_id=shown["packet_id"], payload=payload, dup=bool(inner.first & 0b1000),
                retain=bool(inner.first & 1),
            )  # fmt: skip
        return publish50(
            topic=p3.topic_of(inner).decode("ascii"), qos=(inner.first >> 1) & 3,
            packet_id=shown["packet_id"], payload=payload[1 + point.pay0 :],
            dup=bool(inner.first & 0b1000), retain=bool(inner.first & 1),
        )  # fmt: skip
    if edition is not Edition.V50:
        return shown
    reason = point.reason if point.ack_length >= 3 else 0
    return ack50(ACK_TYPE_NAMES[kind - 4], inner.packet_id, reason)


__all__ = [
    "CODE",
    "RULE_KEYS",
    "Packet",
    "Point",
    "Shape",
    "judge",
    "judge50",
    "judge_in",
    "packet_of",
    "render",
    "shape",
]
