"""A PUBLISH in Z3 as the model encodes it and decodes it back, over all field lengths.

The packet is symbolic in everything the layout depends on: QoS, whether the packet has a
packet identifier and which, the topic name's length (0 to 65,535; its bytes are any valid
topic, as an uninterpreted array) and the payload's length and bytes (another array). The
encoder mirrors ``_encode_publish`` and ``encode`` in :mod:`pubproof.model.wire`: its
refusals, the body it lays out (a Z3 array, byte by byte), the Remaining Length it writes
(section 2.2.3's encoder), and its final check that its own decoder accepts the bytes.
The decoder mirrors ``_publish_body`` reading that same array.
"""

from __future__ import annotations

from dataclasses import dataclass

from pubproof.proofs import rl_symbolic as rl
from pubproof.proofs.variant import Codec
from pubproof.proofs.z3env import Expr, big_endian, byte, num, word, z3

INDEX = z3.BitVecSort(64)
BYTES = z3.ArraySort(INDEX, z3.BitVecSort(8))


@dataclass(frozen=True, slots=True)
class Publish:
    """A PUBLISH as the encoder is given it (``P``), in Z3 terms."""

    qos: Expr  # 8 bits, 0 to 2
    has_id: Expr  # Bool: packet_id is not null
    packet_id: Expr  # 16 bits
    topic_length: Expr  # bytes of the encoded topic name
    topic: Expr  # array: the topic name's bytes
    payload_length: Expr
    payload: Expr  # array: the payload's bytes

    @classmethod
    def fresh(cls) -> Publish:
        return cls(
            qos=byte("qos"),
            has_id=z3.Bool("has_id"),
            packet_id=word("packet_id", 16),
            topic_length=word("topic_length"),
            topic=z3.Array("topic", INDEX, z3.BitVecSort(8)),
            payload_length=word("payload_length"),
            payload=z3.Array("payload", INDEX, z3.BitVecSort(8)),
        )

    def domain(self) -> Expr:
        """QoS 0 to 2 (QoS 3 is the first byte's business), and lengths that fit."""
        return z3.And(
            z3.ULE(self.qos, 2),
            z3.ULE(self.topic_length, 0xFFFF),
            z3.ULE(self.payload_length, rl.MAX_VALUE),
        )


@dataclass(frozen=True, slots=True)
class Encoded:
    """What the encoder makes of a Publish."""

    sent: Expr  # Bool: the encoder writes the packet (does not refuse it)
    refused_fields: Expr  # Bool: refused for the packet identifier's presence
    body: Expr  # array: the body's bytes
    body_length: Expr  # bytes actually laid out
    remaining_length: Expr  # the value written in the Remaining Length field
    field: rl.Encoding
    total_length: Expr  # bytes on the wire


@dataclass(frozen=True, slots=True)
class Decoded:
    """What the decoder reads back from the encoder's bytes."""

    accepted: Expr  # Bool
    remaining_length: Expr
    field_length: Expr
    topic_length: Expr
    has_id: Expr
    packet_id: Expr
    payload_start: Expr  # offset in the body
    payload_length: Expr
    consumed: Expr  # bytes of the stream the packet takes


def _high(term: Expr) -> Expr:
    return z3.Extract(15, 8, term)


def _low(term: Expr) -> Expr:
    return z3.Extract(7, 0, term)


def layout(packet: Publish, writes_id: Expr) -> tuple[Expr, Expr]:
    """The body the model lays out: topic length, topic, identifier (if written), payload."""
    index = z3.BitVec("i", 64)
    topic_end = num(2) + packet.topic_length
    start = topic_end + z3.If(writes_id, num(2), num(0))
    length16 = z3.Extract(15, 0, packet.topic_length)
    body = z3.Lambda(
        [index],
        z3.If(index == 0, _high(length16),
        z3.If(index == 1, _low(length16),
        z3.If(z3.ULT(index, topic_end), z3.Select(packet.topic, index - 2),
        z3.If(z3.And(writes_id, index == topic_end), _high(packet.packet_id),
        z3.If(z3.And(writes_id, index == topic_end + 1), _low(packet.packet_id),
        z3.Select(packet.payload, index - start)))))),
    )  # fmt: skip
    return body, start + packet.payload_length


def decode_body(
    qos: Expr, body: Expr, remaining: Expr, field_length: Expr, codec: Codec
) -> Decoded:
    """``_publish_body``: topic name, packet identifier when QoS calls for one, payload."""
    topic_length = big_endian(z3.Select(body, num(0)), z3.Select(body, num(1)))
    topic_end = num(2) + topic_length
    has_id = z3.And(z3.UGE(qos, codec.id_from_qos), z3.ULE(qos, codec.id_max_qos))
    packet_id = z3.Concat(z3.Select(body, topic_end), z3.Select(body, topic_end + 1))
    start = topic_end + z3.If(has_id, num(2), num(0))
    accepted = z3.And(
        z3.UGE(remaining, 2),
        z3.ULE(topic_end, remaining),
        z3.Implies(has_id, z3.ULE(start, remaining)),
        z3.Implies(z3.And(has_id, codec.reject_id_zero), packet_id != 0),
    )
    return Decoded(
        accepted=accepted,
        remaining_length=remaining,
        field_length=field_length,
        topic_length=topic_length,
        has_id=has_id,
        packet_id=packet_id,
        payload_start=start,
        payload_length=remaining - start,
        consumed=num(1) + field_length + remaining,
    )


def encode(packet: Publish, codec: Codec) -> tuple[Encoded, Decoded]:
    """``encode``: refusals, layout, Remaining Length, and the encoder's own decode check."""
    missing_id = z3.And(z3.UGT(packet.qos, 0), z3.Not(packet.has_id))
    unwanted_id = z3.And(packet.qos == 0, packet.has_id)
    refused_fields = z3.Or(missing_id, unwanted_id if codec.encoder_refuses_id_on_qos0 else False)
    body, body_length = layout(packet, packet.has_id)
    remaining = (
        (num(2) if codec.rl_counts_topic_prefix else num(0))
        + packet.topic_length
        + z3.If(z3.And(packet.has_id, codec.rl_counts_id), num(2), num(0))
        + packet.payload_length
    )
    field = rl.encode(remaining, codec)
    back = rl.decode(field.data[:4], codec)
    decoded = decode_body(packet.qos, body, back.value, back.length, codec)
    sent = z3.And(
        z3.Not(refused_fields),
        z3.ULE(body_length, rl.MAX_VALUE),
        back.complete,
        decoded.accepted,
    )
    encoded = Encoded(
        sent=sent,
        refused_fields=refused_fields,
        body=body,
        body_length=body_length,
        remaining_length=remaining,
        field=field,
        total_length=num(1) + field.length + body_length,
    )
    return encoded, decoded


__all__ = ["Decoded", "Encoded", "Publish", "decode_body", "encode", "layout"]
