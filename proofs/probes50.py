"""The three-edition witness domain, and its judgements against the model on probe packets.

:data:`PACKETS50` is the :class:`~pubproof.proofs.differences.Domain` of
:mod:`~pubproof.proofs.packet50_symbolic`. Before Z3 searches it for witnesses, the
judgement of each configuration is evaluated on a fixed set of probe packets (every first
byte; acknowledgements of Remaining Length 2 to 4 with Reason Codes in and out of their
tables and Property Lengths 0 and 1; PUBLISH packets with no payload, a Property Length of
0, 1 or too big, empty and bad topics, identifier 0; padded Remaining Lengths), and must
name the rule the model names on the probe's bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from pubproof.model.editions import Edition
from pubproof.model.trace import P
from pubproof.proofs import packet50_symbolic as p50
from pubproof.proofs import packet_symbolic as p3
from pubproof.proofs.oracle import Config, verdict
from pubproof.proofs.probes import _field
from pubproof.proofs.registry import Result
from pubproof.proofs.variant import MODEL, Codec
from pubproof.proofs.wire_common import short_hex
from pubproof.proofs.z3env import Expr, evaluate, widen, z3

A = ord("a")


def _publish(first: int, topic: int, head: tuple[int, int], packet_id: int, payload: int,
             pay0: int = 0, rl_length: int | None = None) -> p50.Point:  # fmt: skip
    qos = (first >> 1) & 3
    body = 2 + topic + (2 if qos else 0) + payload
    inner = p3.Point(first, _field(body, rl_length), topic, head, packet_id, payload)
    return p50.Point(inner, pay0 if payload else 0)


def _ack(first: int, length: int, reason: int = 0, pl: int = 0, rl_length: int | None = None,
         packet_id: int = 1) -> p50.Point:  # fmt: skip
    inner = p3.Point(first, _field(length, rl_length), packet_id=packet_id)
    return p50.Point(inner, 0, length, reason if length >= 3 else 0, pl if length == 4 else 0)


@cache
def probe_points() -> tuple[p50.Point, ...]:
    found: list[p50.Point] = []
    for first in range(256):
        kind = first >> 4
        if kind == 3:
            found.append(_publish(first, 1, (A, A), 1, 1))
        elif 4 <= kind <= 7:
            found.append(_ack(first, 2))
        else:
            found.append(p50.Point(p3.Point(first, _field(0))))
    for first in (0x40, 0x50, 0x62, 0x70):
        for length in (2, 3, 4):
            for reason in (0x00, 0x05, 0x10, 0x92):
                found += [_ack(first, length, reason, pl) for pl in (0, 1)]
        found += [_ack(first, 2, rl_length=2), _ack(first, 3, packet_id=0)]
    for first in (0x30, 0x32, 0x3B):
        for payload in (0, 1, 2, 3):
            found += [_publish(first, 1, (A, A), 1, payload, pay0) for pay0 in (0, 1, 2, 5)]
        for topic, head in ((0, (A, A)), (1, (0, A)), (1, (0x23, A)), (2, (A, 0x2B)),
                            (2, (0x01, A)), (2, (A, 0x7F))):  # fmt: skip
            found += [_publish(first, topic, head, 1, payload) for payload in (0, 1)]
        found += [_publish(first, 1, (A, A), 0, payload) for payload in (0, 1)]
        found += [_publish(first, 1, (A, A), 1, 1, rl_length=n) for n in (2, 3)]
    return tuple(dict.fromkeys(found))


@cache
def model_rules(config: Config) -> tuple[str, ...]:
    return tuple(verdict(p50.render(point, MODEL), config)[0] for point in probe_points())


@dataclass(frozen=True, slots=True)
class ProbeDrift:
    point: p50.Point
    config: Config
    model_says: str
    z3_says: str

    def describe(self) -> str:
        return (
            f"probe {short_hex(p50.render(self.point, MODEL))} under {self.config.label()}: the "
            f"model says {self.model_says}, the Z3 encoding {self.z3_says}"
        )


@cache
def drift(config: Config, codec: Codec) -> ProbeDrift | None:
    """The first probe the judgement of ``config``'s edition gets wrong, if any."""
    packet = p50.Packet.fresh("probe_")
    code = p50.judge_in(packet, config, codec)
    for point, rule in zip(probe_points(), model_rules(config), strict=True):
        says = p50.RULE_KEYS[evaluate(code, packet.assignment(point))]
        if says != rule:
            return ProbeDrift(point, config, rule, says)
    return None


class _Packets50:
    """The domain of :mod:`~pubproof.proofs.packet50_symbolic`, for 3.1, 3.1.1 and 5.0."""

    rule_keys = p50.RULE_KEYS

    def fresh(self) -> p50.Packet:
        return p50.Packet.fresh("e_")

    def frame(self, packet: p50.Packet, codec: Codec) -> tuple[Expr, Expr]:
        form = p50.shape(packet, codec)
        return form.well_framed, form.total_length

    def tidy(self, packet: p50.Packet, codec: Codec) -> Expr:
        """Topic "a" (or empty), packet identifier 1, at most two bytes of payload (what
        5.0 reads as the Property Length, 0 or 1, and a property identifier), Reason Code
        0x00 or 0x01 and Property Length 0 or 1, RETAIN clear."""
        inner = packet.inner
        topic = widen(inner.topic_length)
        letters = [z3.Or(z3.ULE(topic, i), c == p3.FILLER) for i, c in enumerate(inner.head)]
        return z3.And(
            inner.packet_id == 1, z3.ULE(inner.payload_length, 2), z3.ULE(packet.pay0, 1),
            z3.ULE(packet.reason, 1), z3.ULE(packet.ack_pl, 1), inner.first & 1 == 0,
            z3.ULE(topic, 1), *letters,
        )  # fmt: skip

    def first(self, packet: p50.Packet) -> Expr:
        return packet.inner.first

    def judge(self, packet: p50.Packet, config: Config, codec: Codec) -> Expr:
        return p50.judge_in(packet, config, codec)

    def point(self, packet: p50.Packet, model: Any) -> p50.Point:
        return packet.point(model)

    def render(self, point: p50.Point, codec: Codec) -> bytes:
        return p50.render(point, codec)

    def packet(self, point: p50.Point, codec: Codec, edition: Edition) -> P | None:
        return p50.packet_of(point, codec, edition)

    def drift(self, config: Config, codec: Codec) -> Result | None:
        found = drift(config, codec)
        if found is None:
            return None
        shown = p50.packet_of(found.point, codec, config.edition)
        return Result(
            status="failed",
            counterexample=None if shown is None else [shown],
            details=found.describe(),
        )


PACKETS50 = _Packets50()


def probe_count() -> int:
    return len(probe_points())


__all__ = ["PACKETS50", "ProbeDrift", "drift", "model_rules", "probe_count", "probe_points"]
