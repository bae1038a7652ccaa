"""The PUBLISH encoding in Z3 against the Python model's ``encode``, on a fixed sample.

For each sample packet (every QoS, with and without a packet identifier, identifiers 0 and
not, topic names and payloads of several lengths) the Z3 encoder, evaluated on the
sample, must refuse exactly when :func:`pubproof.model.wire.encode` refuses, and otherwise
agree with the model's bytes on the Remaining Length, the length of its field, the
packet's total length and the packet identifier's two bytes.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache

from pubproof.model import wire
from pubproof.model.editions import Edition
from pubproof.model.trace import PublishP, publish
from pubproof.proofs.oracle import remaining_length
from pubproof.proofs.publish_symbolic import Publish, encode
from pubproof.proofs.variant import Codec
from pubproof.proofs.z3env import evaluate


@dataclass(frozen=True, slots=True)
class Sample:
    """A PUBLISH's fields as the theorems' encodings see them."""

    qos: int
    packet_id: int | None
    topic_length: int
    payload_length: int

    def packet(self) -> PublishP:
        return publish(
            topic="a" * self.topic_length,
            qos=self.qos,
            packet_id=self.packet_id,
            payload=bytes(self.payload_length),
        )

    def edition(self) -> Edition:
        # 3.1.1 forbids an empty topic name; 3.1 (topic-rules=utf8-only) allows it
        return Edition.V31 if self.topic_length == 0 else Edition.V311


@cache
def samples() -> tuple[Sample, ...]:
    identifiers = (None, 0, 1, 0xABCD)
    topics, payloads = (0, 1, 2, 300), (0, 1, 125, 16_380)
    return tuple(
        Sample(qos, packet_id, topic, payload)
        for qos, packet_id, topic, payload in itertools.product(
            range(3), identifiers, topics, payloads
        )
    )


@dataclass(frozen=True, slots=True)
class Observed:
    """What an encoder did with a sample: None if it refused, else these numbers."""

    remaining_length: int
    field_length: int
    total_length: int
    packet_id_bytes: bytes | None


def by_model(sample: Sample) -> Observed | None:
    try:
        data = wire.encode(sample.packet(), sample.edition())
    except wire.EncodeError:
        return None
    field = remaining_length(data[1:6], strict=False)
    assert field.value is not None and field.length is not None
    at = 1 + field.length + 2 + sample.topic_length
    identifier = data[at : at + 2] if sample.qos else None
    return Observed(field.value, field.length, len(data), identifier)


class ByZ3:
    """The Z3 encoder of ``codec``, built once and evaluated on each sample."""

    def __init__(self, codec: Codec) -> None:
        self.packet = Publish.fresh()
        self.encoded, self.decoded = encode(self.packet, codec)

    def __call__(self, sample: Sample) -> Observed | None:
        packet, encoded = self.packet, self.encoded
        assignment = [
            (packet.qos, sample.qos),
            (packet.has_id, int(sample.packet_id is not None)),
            (packet.packet_id, sample.packet_id or 0),
            (packet.topic_length, sample.topic_length),
            (packet.payload_length, sample.payload_length),
        ]
        if not evaluate(encoded.sent, assignment):
            return None
        identifier = None
        if sample.qos:
            identifier = evaluate(self.decoded.packet_id, assignment).to_bytes(2, "big")
        return Observed(
            evaluate(encoded.remaining_length, assignment),
            evaluate(encoded.field.length, assignment),
            evaluate(encoded.total_length, assignment),
            identifier,
        )


@cache
def drift(codec: Codec) -> tuple[Sample, Observed | None, Observed | None] | None:
    """The first sample the Z3 encoding of ``codec`` gets wrong: (sample, model, Z3)."""
    by_z3 = ByZ3(codec)
    for sample in samples():
        expected, got = by_model(sample), by_z3(sample)
        if expected != got:
            return sample, expected, got
    return None


__all__ = ["ByZ3", "Observed", "Sample", "by_model", "drift", "samples"]
