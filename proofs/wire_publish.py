"""Theorems on a PUBLISH's layout: the packet identifier, and the Remaining Length's sum.

Both are proved over every QoS, packet identifier, topic name length (0 to 65,535) and
payload length up to the format's limit at once, on the encoder and decoder of
:mod:`~pubproof.proofs.publish_symbolic`, then cross-checked with the Python model's
``encode`` (:mod:`~pubproof.proofs.publish_crosscheck`). A counterexample is the ``P`` the
encoder was given, with the smallest topic and payload that show it.
"""

from __future__ import annotations

from dataclasses import replace

from pubproof.model import wire_rules as R
from pubproof.model.trace import publish
from pubproof.proofs import publish_crosscheck
from pubproof.proofs import rl_symbolic as rl
from pubproof.proofs.publish_symbolic import Publish, encode
from pubproof.proofs.registry import Broken, Result, theorem
from pubproof.proofs.variant import MODEL, Codec
from pubproof.proofs.wire_common import BOTH, proved, rule_ids, unknown
from pubproof.proofs.z3env import Answer, Expr, num, prove, value, word, z3

PAYLOAD_SHOWN = 4096  # a counterexample's payload is written out up to this length


def _counterexample(answer: Answer, packet: Publish, claim: str) -> Result:
    if answer.model is None:
        return unknown(f"{claim}: Z3 gave up ({answer.reason})")
    model = answer.model
    qos, topic, payload = (
        value(model, t) for t in (packet.qos, packet.topic_length, packet.payload_length)
    )
    has_id = bool(z3.is_true(model.eval(packet.has_id, model_completion=True)))
    packet_id = value(model, packet.packet_id) if has_id else None
    shown = min(payload, PAYLOAD_SHOWN)
    data = bytes(value(model, z3.Select(packet.payload, num(i))) for i in range(shown))
    return Result(
        status="refuted",
        counterexample=[publish(topic="a" * topic, qos=qos, packet_id=packet_id, payload=data)],
        details=f"{claim} fails for QoS {qos}, packet_id {packet_id}, a topic of {topic} "
        f"byte(s) and a payload of {payload} byte(s)",
    )


def _prove(claim: Expr, packet: Publish) -> Answer:
    """Prove over every packet of the domain; prefer a small counterexample."""
    small = z3.And(
        z3.UGE(packet.topic_length, 1), z3.ULE(packet.topic_length, 8),
        z3.ULE(packet.payload_length, 8),
    )  # fmt: skip
    zeros = [z3.Select(packet.payload, num(i)) == 0 for i in range(8)]
    tidy = z3.And(z3.Or(z3.Not(packet.has_id), packet.packet_id == 1), *zeros)
    return prove(
        claim,
        given=[packet.domain()],
        prefer=[z3.And(small, tidy), small],
        smallest=packet.topic_length + packet.payload_length,
    )


def _cross_checked(result: Result, codec: Codec) -> Result:
    if result.status != "proved":
        return result
    found = publish_crosscheck.drift(codec)
    if found is None:
        count = len(publish_crosscheck.samples())
        return replace(
            result, details=f"{result.details}; agrees with the model on {count} samples"
        )
    sample, expected, got = found
    return Result(
        status="failed",
        counterexample=[sample.packet()],
        details=f"the Z3 encoder and the model differ on {sample}: model {expected}, Z3 {got}",
    )


@theorem(
    id="wire.packet-id-presence",
    statement="A PUBLISH carries a packet identifier exactly when its QoS is 1 or 2, and then a "
    "non-zero one: the encoder sends a packet only then (it refuses a missing identifier, one "
    "on QoS 0, and 0), the decoder reads one exactly then, and it reads back the identifier "
    "and every payload byte that were sent, for every topic name and payload length",
    rules=rule_ids([R.PACKET_ID_PRESENCE, R.PACKET_ID_NONZERO, R.BIG_ENDIAN, R.PAYLOAD_REST]),
    editions=BOTH,
    method="z3-bv",
    model=MODEL,
    mutants=[
        Broken("id-for-qos1-only", "the decoder reads a packet identifier for QoS 1 only",
               replace(MODEL, id_max_qos=1)),
        Broken("id-zero-accepted", "packet identifier 0 is not rejected",
               replace(MODEL, reject_id_zero=False)),
        Broken("id-on-qos0-sent", "the encoder writes a packet identifier given on QoS 0",
               replace(MODEL, encoder_refuses_id_on_qos0=False)),
    ],
)  # fmt: skip
def packet_id_presence(codec: Codec) -> Result:
    packet = Publish.fresh()
    encoded, decoded = encode(packet, codec)
    with_id = z3.UGT(packet.qos, 0)
    id_right = z3.Or(
        z3.And(with_id, packet.has_id, packet.packet_id != 0),
        z3.And(z3.Not(with_id), z3.Not(packet.has_id)),
    )
    fits = z3.ULE(encoded.body_length, rl.MAX_VALUE)
    presence = z3.Implies(
        encoded.sent,
        z3.And(
            decoded.has_id == with_id,
            z3.Implies(decoded.has_id, z3.And(decoded.packet_id == packet.packet_id,
                                              decoded.packet_id != 0)),
        ),
    )  # fmt: skip
    at = word("payload_index")
    payload_back = z3.Implies(
        encoded.sent,
        z3.And(
            decoded.payload_length == packet.payload_length,
            z3.Implies(
                z3.ULT(at, packet.payload_length),
                z3.Select(encoded.body, decoded.payload_start + at)
                == z3.Select(packet.payload, at),
            ),
        ),
    )
    for claim, words in (
        (presence, "identifier read back exactly for QoS 1 and 2, non-zero"),
        (encoded.sent == z3.And(id_right, fits), "sent exactly when the identifier is right"),
        (payload_back, "payload read back byte for byte"),
    ):
        answer = _prove(claim, packet)
        if answer.outcome != "proved":
            return _counterexample(answer, packet, words)
    return _cross_checked(
        proved("for QoS 0 to 2, every identifier or none, topic names of 0 to 65,535 bytes and "
               "payloads up to the limit"),
        codec,
    )  # fmt: skip


@theorem(
    id="wire.publish-remaining-length",
    statement="For every PUBLISH the encoder sends, its Remaining Length is 2 + topic name "
    "length + (2 if QoS > 0) + payload length, written in the length Table 2.4 gives, and the "
    "decoder's packet ends exactly at the last byte sent; a packet whose identifier is right "
    "is sent exactly when that sum is at most 268,435,455",
    rules=rule_ids([R.PUBLISH_RL_COVERS, R.PAYLOAD_REST, R.RL_DELIMITS, R.TOPIC_MAX_BYTES]),
    editions=BOTH,
    method="z3-bv",
    model=MODEL,
    mutants=[
        Broken("rl-omits-packet-id", "the Remaining Length leaves out the packet identifier",
               replace(MODEL, rl_counts_id=False)),
        Broken("rl-omits-topic-prefix", "the Remaining Length leaves out the topic name's "
               "two length bytes", replace(MODEL, rl_counts_topic_prefix=False)),
    ],
)  # fmt: skip
def publish_remaining_length(codec: Codec) -> Result:
    packet = Publish.fresh()
    encoded, decoded = encode(packet, codec)
    with_id = z3.UGT(packet.qos, 0)
    total = num(2) + packet.topic_length + z3.If(with_id, num(2), num(0)) + packet.payload_length
    exact = z3.Implies(
        encoded.sent,
        z3.And(
            encoded.remaining_length == total,
            encoded.field.length == rl.table_length(total),
            decoded.consumed == encoded.total_length,
        ),
    )
    id_right = z3.Or(
        z3.And(with_id, packet.has_id, packet.packet_id != 0),
        z3.And(z3.Not(with_id), z3.Not(packet.has_id)),
    )
    limit = z3.Implies(id_right, encoded.sent == z3.ULE(total, rl.MAX_VALUE))
    for claim, words in ((exact, "Remaining Length = 2 + topic + id + payload"),
                         (limit, "sent exactly up to 268,435,455")):  # fmt: skip
        answer = _prove(claim, packet)
        if answer.outcome != "proved":
            return _counterexample(answer, packet, words)
    return _cross_checked(
        proved("for QoS 0 to 2, topic names of 0 to 65,535 bytes and every payload length"),
        codec,
    )


__all__ = ["packet_id_presence", "publish_remaining_length"]
