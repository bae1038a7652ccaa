"""The packet judgement in Z3 against the Python model, on a fixed set of probe packets.

The probes cover every flag value of PUBLISH and the acknowledgements, every topic
character class the readings care about in either position, the packet identifiers 0 and
non-zero, Remaining Lengths in padded forms and at the edges of Table 2.4, and topics at
the 3.1 character limit. The Z3 judgement, evaluated on each probe, must name the same
rule as :func:`pubproof.model.wire.decode` on the probe's bytes; a drifted encoding comes
back with the first probe that shows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from pubproof.proofs.oracle import OK, Config, verdict
from pubproof.proofs.packet_symbolic import RULE_KEYS, Packet, Point, judge, render
from pubproof.proofs.rl_crosscheck import padded
from pubproof.proofs.variant import MODEL, Codec
from pubproof.proofs.wire_common import short_hex
from pubproof.proofs.z3env import evaluate

#: Topic characters: U+0000, controls, space, "#", "+", "/", letters, "~", DEL.
CHARS = (0x00, 0x01, 0x1F, 0x20, 0x23, 0x2B, 0x2F, 0x61, 0x7E, 0x7F)
PUBLISH_FIRST_BYTES = (0x30, 0x31, 0x32, 0x34, 0x36, 0x38, 0x3A, 0x3C, 0x3E)
A = ord("a")


def _field(value_: int, length: int | None = None) -> bytes:
    shortest = 1
    while value_ >= 128**shortest:
        shortest += 1
    return padded(value_, length or shortest).ljust(4, b"\x00")


def _publish(first: int, topic_length: int, head: tuple[int, int], packet_id: int,
             payload: int, rl_length: int | None = None) -> Point:  # fmt: skip
    qos = (first >> 1) & 3
    body = 2 + topic_length + (2 if qos else 0) + payload
    return Point(first, _field(body, rl_length), topic_length, head, packet_id, payload)


@cache
def probe_points() -> tuple[Point, ...]:
    """The probe packets (well-framed, as :mod:`~pubproof.proofs.packet_symbolic` defines)."""
    found: list[Point] = []
    # every flag value of PUBLISH and the acknowledgements, and each other type once (all
    # 256 first bytes are compared with the model by the theorem wire.first-bytes)
    for first in range(256):
        kind, flags = first >> 4, first & 0x0F
        if kind == 3:
            found.append(_publish(first, 1, (A, A), 1, 0))
        elif 4 <= kind <= 7:
            found.append(Point(first, _field(2), packet_id=1))
        elif flags in (0, 0x0F):
            found.append(Point(first, _field(0)))
    # every character class in either position, alone and against each other
    heads = [(c, A) for c in CHARS] + [(A, c) for c in CHARS]
    heads += [(0x2B, 0x00), (0x00, 0x2B), (0x01, 0x23), (0x23, 0x01), (0x01, 0x00)]
    for first in (0x30, 0x32, 0x3B):
        found.append(_publish(first, 0, (A, A), 1, 0))
        found += [_publish(first, 1, (c, A), 1, 0) for c in CHARS]
        found += [_publish(first, 2, head, 1, 1) for head in heads]
    # packet identifier 0 at each QoS, and against a bad topic
    for first in (0x32, 0x34, 0x36, 0x3A):
        found += [_publish(first, 1, (A, A), 0, 0), _publish(first, 1, (0x2B, A), 0, 0)]
    # Remaining Lengths padded and at the edges of Table 2.4
    for body in (127, 128, 16_383, 16_384):
        for length in range(1, 5):
            if body < 128**length:
                found.append(_publish(0x30, 1, (A, A), 0, body - 3, length))
    for length in range(1, 5):
        found.append(Point(0x40, _field(2, length), packet_id=7))
        found.append(Point(0x62, _field(2, length), packet_id=0))
        found.append(_publish(0x32, 1, (A, A), 9, 0, length))
        found.append(_publish(0x38, 1, (A, A), 0, 0, length))
    # topics at the 3.1 limit of 32,767 characters and at the length prefix's limit
    for topic_length in (32_767, 32_768, 65_535):
        found.append(_publish(0x30, topic_length, (A, A), 0, 0))
        found.append(_publish(0x30, topic_length, (0x2B, A), 0, 0))
    return tuple(dict.fromkeys(found))


@cache
def model_rules(config: Config) -> tuple[str, ...]:
    """The model's verdict (OK or a rule key) on every probe."""
    return tuple(verdict(render(point, MODEL), config)[0] for point in probe_points())


@dataclass(frozen=True, slots=True)
class ProbeDrift:
    """A probe on which the Z3 judgement and the model disagree."""

    point: Point
    config: Config
    model_says: str
    z3_says: str

    def describe(self) -> str:
        return (
            f"probe {short_hex(render(self.point, MODEL))} under {self.config.label()}: the model "
            f"says {self.model_says}, the Z3 encoding {self.z3_says}"
        )


@cache
def drift(config: Config, codec: Codec) -> ProbeDrift | None:
    """The first probe the Z3 judgement of ``codec`` gets wrong under ``config``, if any."""
    packet = Packet.fresh("probe_")
    code = judge(packet, config, codec)
    for point, rule in zip(probe_points(), model_rules(config), strict=True):
        says = RULE_KEYS[evaluate(code, packet.assignment(point))]
        if says != rule:
            return ProbeDrift(point, config, rule, says)
    return None


def probe_count() -> int:
    return len(probe_points())


__all__ = ["OK", "ProbeDrift", "drift", "model_rules", "probe_count", "probe_points"]
