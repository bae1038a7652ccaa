"""One packet in Z3, field by field, and the model's judgement of it under an edition.

The domain is every *well-framed* packet: a first byte (any of the 256); a Remaining
Length field of 1 to 4 bytes (shortest or not) that counts exactly the fields after it; an
acknowledgement's packet identifier; a PUBLISH's topic name of any length (0 to 65,535)
whose first two bytes are any ASCII characters and whose other bytes are "a", its packet
identifier when its QoS calls for one, and a payload of any length. Lengths are unbounded
in that range; the topic's content is limited to what the readings care about (U+0000,
wildcards, control characters, the count of characters), so the search for witnesses stays
small. Packets with an ill-formed frame (a topic longer than the Remaining Length, an
acknowledgement whose length is not 2) and non-ASCII topics are outside the domain.

:func:`judge` is the model's judgement order (the docstring of :mod:`pubproof.model.wire`)
restricted to this domain, as a rule code: 0 for a valid packet, else the index of the
broken rule in :data:`RULE_KEYS`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition
from pubproof.model.trace import ACK_TYPE_NAMES, P, ack, publish
from pubproof.proofs import rl_symbolic as rl
from pubproof.proofs.oracle import OK, Config
from pubproof.proofs.variant import Codec
from pubproof.proofs.z3env import Expr, Model, byte, num, value, widen, word, z3

#: The verdicts a packet of the domain can get, in judgement order; the code is the index.
RULE_KEYS: tuple[str, ...] = (
    OK,
    R.RESERVED_TYPE.key,
    R.OUT_OF_SCOPE_TYPE.key,
    R.QOS_RESERVED.key,
    R.DUP_QOS0.key,
    R.ACK_FLAGS["PUBACK"].key,
    R.ACK_FLAGS["PUBREL"].key,
    R.RL_MINIMAL.key,
    R.TOPIC_NOT_EMPTY.key,
    R.TOPIC_MAX_31.key,
    R.TOPIC_NUL.key,
    R.TOPIC_NO_WILDCARDS.key,
    R.TOPIC_DISCOURAGED.key,
    R.PACKET_ID_NONZERO.key,
)
CODE = {key: code for code, key in enumerate(RULE_KEYS)}
HEAD = 2  # topic bytes that are symbolic; the rest of the topic is FILLER
FILLER = ord("a")
PUBLISH_TYPE = 3


@dataclass(frozen=True, slots=True)
class Point:
    """One packet of the domain, as concrete field values."""

    first: int
    field: bytes  # 4 bytes; the Remaining Length is the first ones up to a byte < 0x80
    topic_length: int = 0
    head: tuple[int, int] = (FILLER, FILLER)
    packet_id: int = 0
    payload_length: int = 0


@dataclass(frozen=True, slots=True)
class Packet:
    """One packet of the domain, as Z3 terms."""

    first: Expr
    field: tuple[Expr, ...]
    topic_length: Expr  # 16 bits
    head: tuple[Expr, ...]
    packet_id: Expr  # 16 bits
    payload_length: Expr

    @classmethod
    def fresh(cls, tag: str = "") -> Packet:
        return cls(
            first=byte(f"{tag}first"),
            field=tuple(byte(f"{tag}rl{i}") for i in range(4)),
            topic_length=word(f"{tag}topic_length", 16),
            head=tuple(byte(f"{tag}topic{i}") for i in range(HEAD)),
            packet_id=word(f"{tag}packet_id", 16),
            payload_length=word(f"{tag}payload_length"),
        )

    def terms(self) -> Iterator[Expr]:
        yield self.first
        yield from self.field
        yield from (self.topic_length, *self.head, self.packet_id, self.payload_length)

    def assignment(self, point: Point) -> list[tuple[Expr, int]]:
        """Each of this packet's terms with its value in ``point``."""
        concrete = (
            point.first, *point.field, point.topic_length, *point.head,
            point.packet_id, point.payload_length,
        )  # fmt: skip
        return list(zip(self.terms(), concrete, strict=True))

    def at(self, point: Point) -> Expr:
        """The constraint that this packet is ``point``."""
        return z3.And(*[term == number for term, number in self.assignment(point)])

    def point(self, model: Model) -> Point:
        first, *rest = [value(model, t) for t in self.terms()]
        field, (length, head0, head1, packet_id, payload) = bytes(rest[:4]), rest[4:]
        return Point(first, field, length, (head0, head1), packet_id, payload)


@dataclass(frozen=True, slots=True)
class Shape:
    """What the decoder reads off a packet's fields, whatever the edition."""

    kind: Expr  # packet type, 8 bits
    qos: Expr
    is_publish: Expr
    is_ack: Expr
    has_id: Expr  # a PUBLISH whose QoS calls for a packet identifier
    field: rl.Decoding
    well_framed: Expr  # the packet is in the domain
    total_length: Expr  # bytes on the wire


def shape(packet: Packet, codec: Codec) -> Shape:
    kind = z3.LShR(packet.first, 4)
    qos = z3.LShR(packet.first, 1) & 3
    is_publish = kind == PUBLISH_TYPE
    is_ack = z3.And(z3.UGE(kind, 4), z3.ULE(kind, 7))
    has_id = z3.And(is_publish, z3.UGE(qos, codec.id_from_qos), z3.ULE(qos, codec.id_max_qos))
    field = rl.decode(packet.field, codec, available=4)
    topic = widen(packet.topic_length)
    publish_body = num(2) + topic + z3.If(has_id, num(2), num(0)) + packet.payload_length
    body = z3.If(is_publish, publish_body, z3.If(is_ack, num(2), num(0)))
    well_framed = z3.And(
        field.complete,
        field.value == body,
        *[z3.ULT(h, 0x80) for h in packet.head],  # ASCII: one byte, one character
        z3.ULE(packet.payload_length, rl.MAX_VALUE),
    )
    total = num(1) + field.length + field.value
    return Shape(kind, qos, is_publish, is_ack, has_id, field, well_framed, total)


def first_byte_checks(first: Expr, config: Config, codec: Codec) -> list[tuple[Expr, str]]:
    """The rules judged on the first byte, in order: (broken when, rule key)."""
    v31, v50 = config.edition is Edition.V31, config.edition is Edition.V50
    kind, qos = z3.LShR(first, 4), z3.LShR(first, 1) & 3
    is_publish = kind == PUBLISH_TYPE
    is_ack = z3.And(z3.UGE(kind, 4), z3.ULE(kind, 7))
    # 3.1 and 3.1.1 reserve types 0 and 15; 5.0 makes 15 AUTH (valid, outside the scope)
    reserved = (
        kind == 0 if v50 and not codec.type15_reserved_in_50 else z3.Or(kind == 0, kind == 15)
    )
    checks: list[tuple[Expr, str]] = [
        (reserved, R.RESERVED_TYPE.key),
        (z3.Not(z3.Or(is_publish, is_ack)), R.OUT_OF_SCOPE_TYPE.key),
    ]
    if codec.qos3_guard and not (v31 and config.reading("qos3") == "accept"):
        checks.append((z3.And(is_publish, qos == 3), R.QOS_RESERVED.key))
    if config.reading("dup-qos0") == "reject":
        dup = first & 0b1000 != 0
        checks.append((z3.And(is_publish, dup, qos == codec.dup_guard_qos), R.DUP_QOS0.key))
    if not (v31 and config.reading("ack-flags") == "ignore") and (codec.ack_flags_in_50 or not v50):
        for number, name in R.ACK_TYPES.items():
            expected = codec.pubrel_flags if name == "PUBREL" else R.ACK_FLAGS_311[name]
            checks.append((z3.And(kind == number, first & 0x0F != expected), R.ACK_FLAGS[name].key))
    return checks


def judge(packet: Packet, config: Config, codec: Codec) -> Expr:
    """The rule code the model gives ``packet`` under ``config`` (0: valid)."""
    form = shape(packet, codec)
    topic = widen(packet.topic_length)
    topic_rules = config.edition is Edition.V311 or config.reading("topic-rules") == "as-3.1.1"
    checks = first_byte_checks(packet.first, config, codec)
    if config.reading("rl-encoding") == "strict":
        checks.append((z3.Not(form.field.strict_ok), R.RL_MINIMAL.key))
    if topic_rules:
        checks.append((z3.And(form.is_publish, topic == 0), R.TOPIC_NOT_EMPTY.key))
    if config.reading("topic-length") == "32767-chars":
        too_long = z3.UGT(topic, codec.topic_max_chars)
        checks.append((z3.And(form.is_publish, too_long), R.TOPIC_MAX_31.key))
    for index, char in enumerate(packet.head):  # left to right, each character's rules in turn
        present = z3.And(form.is_publish, z3.UGT(topic, index))
        if topic_rules:
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
        checks.append((z3.And(form.has_id, packet.packet_id == 0), R.PACKET_ID_NONZERO.key))
    code = z3.BitVecVal(CODE[OK], 8)
    for condition, key in reversed(checks):  # the first broken rule in the order wins
        code = z3.If(condition, z3.BitVecVal(CODE[key], 8), code)
    return code


def has_id(point: Point, codec: Codec) -> bool:
    qos = (point.first >> 1) & 3
    return point.first >> 4 == PUBLISH_TYPE and codec.id_from_qos <= qos <= codec.id_max_qos


def field_length(field: bytes) -> int:
    """The length of the Remaining Length field at the start of ``field`` (1 to 4)."""
    for index, current in enumerate(field[:4]):
        if not current & 0x80:
            return index + 1
    return 4


def topic_of(point: Point) -> bytes:
    head = bytes(point.head)[: point.topic_length]
    return head + bytes([FILLER]) * max(0, point.topic_length - HEAD)


def render(point: Point, codec: Codec) -> bytes:
    """The bytes of a packet of the domain."""
    kind = point.first >> 4
    out = bytearray([point.first]) + point.field[: field_length(point.field)]
    if kind == PUBLISH_TYPE:
        out += point.topic_length.to_bytes(2, "big") + topic_of(point)
        if has_id(point, codec):
            out += point.packet_id.to_bytes(2, "big")
        out += bytes(point.payload_length)
    elif 4 <= kind <= 7:
        out += point.packet_id.to_bytes(2, "big")
    return bytes(out)


def packet_of(point: Point, codec: Codec) -> P | None:
    """The packet as a decoder reads it field by field (None outside PUBLISH and acks)."""
    kind = point.first >> 4
    if kind == PUBLISH_TYPE:
        return publish(
            topic=topic_of(point).decode("ascii"),
            qos=(point.first >> 1) & 3,
            packet_id=point.packet_id if has_id(point, codec) else None,
            payload=bytes(point.payload_length),
            dup=bool(point.first & 0b1000),
            retain=bool(point.first & 0b0001),
        )
    if 4 <= kind <= 7:
        return ack(ACK_TYPE_NAMES[kind - 4], point.packet_id)
    return None


__all__ = [
    "CODE",
    "RULE_KEYS",
    "Packet",
    "Point",
    "Shape",
    "first_byte_checks",
    "judge",
    "packet_of",
    "render",
    "shape",
]
