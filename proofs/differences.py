"""Where two editions or two readings part: Z3 witnesses, confirmed by the Python model.

Two configurations (edition and readings) are compared over the well-formed packets of
:mod:`~pubproof.proofs.packet_symbolic`: Z3 looks for a packet to which they give
different verdicts, preferring the shortest and tidiest one (topic of letters, packet
identifier 1, no payload, RETAIN clear). Each witness is rendered to bytes and decoded by
:func:`pubproof.model.wire.decode` under both configurations; the model must name the same
rules as the encoding, or the result is "failed". Before searching, the judgement is
checked against the model on the probe packets (:mod:`~pubproof.proofs.probes`).

A witness refutes the claim "these two judge every packet alike". No witness in the
domain does not prove the claim (the domain is not every byte stream), so it comes back
"unknown".

The domain is a :class:`Domain`: by default :data:`PACKETS` (3.1 and 3.1.1); MQTT 5.0's,
where the editions also read a payload byte and longer acknowledgements, is
:data:`pubproof.proofs.probes50.PACKETS50`.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pubproof.model.editions import Edition
from pubproof.model.trace import P
from pubproof.proofs import probes
from pubproof.proofs.oracle import OK, Config, rule_id, verdict
from pubproof.proofs.packet_symbolic import (
    FILLER,
    RULE_KEYS,
    Packet,
    Point,
    judge,
    packet_of,
    render,
    shape,
)
from pubproof.proofs.registry import Result
from pubproof.proofs.variant import Codec
from pubproof.proofs.wire_common import short_hex
from pubproof.proofs.z3env import Expr, search, value, widen, z3

#: The longest witness Z3 is first asked for, then the longest that still fits a topic
#: over the 3.1 limit of 32,767 characters; then any length.
SHORT, LONG = 16, 40_000


@dataclass(frozen=True, slots=True)
class Witness:
    """A packet two configurations judge differently, with both verdicts (rule keys)."""

    data: bytes
    packets: list[P]
    verdicts: tuple[str, str]


class Domain(Protocol):
    """Packets in Z3, judged by configuration, rendered, read back and probed."""

    rule_keys: tuple[str, ...]

    def fresh(self) -> Any: ...
    def frame(self, packet: Any, codec: Codec) -> tuple[Expr, Expr]:
        """(well-framed, total length in bytes)."""
        ...

    def tidy(self, packet: Any, codec: Codec) -> Expr: ...
    def first(self, packet: Any) -> Expr: ...
    def judge(self, packet: Any, config: Config, codec: Codec) -> Expr: ...
    def point(self, packet: Any, model: Any) -> Hashable: ...
    def render(self, point: Any, codec: Codec) -> bytes: ...
    def packet(self, point: Any, codec: Codec, edition: Edition) -> P | None: ...
    def drift(self, config: Config, codec: Codec) -> Result | None: ...


class _Packets:
    """The 3.1 and 3.1.1 domain of :mod:`~pubproof.proofs.packet_symbolic`."""

    rule_keys = RULE_KEYS

    def fresh(self) -> Packet:
        return Packet.fresh()

    def frame(self, packet: Packet, codec: Codec) -> tuple[Expr, Expr]:
        form = shape(packet, codec)
        return form.well_framed, form.total_length

    def tidy(self, packet: Packet, codec: Codec) -> Expr:
        """A witness a reader takes in at a glance: topic "a..." (not empty), packet
        identifier 1, no payload, RETAIN clear."""
        form = shape(packet, codec)
        topic = widen(packet.topic_length)
        letters = [z3.Or(z3.ULE(topic, i), c == FILLER) for i, c in enumerate(packet.head)]
        return z3.And(
            z3.Implies(form.is_publish, z3.UGE(topic, 1)),
            packet.packet_id == 1, packet.payload_length == 0, packet.first & 1 == 0, *letters,
        )  # fmt: skip

    def first(self, packet: Packet) -> Expr:
        return packet.first

    def judge(self, packet: Packet, config: Config, codec: Codec) -> Expr:
        return judge(packet, config, codec)

    def point(self, packet: Packet, model: Any) -> Point:
        return packet.point(model)

    def render(self, point: Point, codec: Codec) -> bytes:
        return render(point, codec)

    def packet(self, point: Point, codec: Codec, edition: Edition) -> P | None:
        return packet_of(point, codec)

    def drift(self, config: Config, codec: Codec) -> Result | None:
        found = probes.drift(config, codec)
        if found is None:
            return None
        packet = packet_of(found.point, codec)
        return Result(
            status="failed",
            counterexample=None if packet is None else [packet],
            details=found.describe(),
        )


PACKETS: Domain = _Packets()


def _describe(witness: Witness, a: Config, b: Config) -> str:
    shown = short_hex(witness.data)
    says = [rule_id(key, c.edition) for key, c in zip(witness.verdicts, (a, b), strict=True)]
    return f"{shown}: {a.label()} -> {says[0]}, {b.label()} -> {says[1]}"


def witnesses(
    a: Config, b: Config, codec: Codec, focus: Sequence[str], domain: Domain = PACKETS
) -> list[Witness] | Result:
    """Witnesses where ``a`` and ``b`` differ: one per rule in ``focus`` that either names
    (or one in all when ``focus`` is empty); a Result when the encoding disagrees with the
    model, on a probe or on a witness."""
    for config in (a, b):
        drifted = domain.drift(config, codec)
        if drifted is not None:
            return drifted
    code_of = {key: code for code, key in enumerate(domain.rule_keys)}
    packet = domain.fresh()
    well_framed, total = domain.frame(packet, codec)
    codes = domain.judge(packet, a, codec), domain.judge(packet, b, codec)
    differ = z3.And(well_framed, codes[0] != codes[1])
    # tidy with one side accepting (the clearest contrast), then one side accepting, then
    # tidy, then anything; short first
    clear = z3.Or(codes[0] == code_of[OK], codes[1] == code_of[OK])
    tidy = domain.tidy(packet, codec)
    prefer = [
        z3.And(bound, *extra)
        for bound in (z3.ULE(total, SHORT), z3.ULE(total, LONG))
        for extra in ((tidy, clear), (clear,), (tidy,), ())
    ]
    targets = [z3.Or(*[code == code_of[key] for code in codes]) for key in focus] or [True]
    # shortest first, and among those the lowest first byte (PUBLISH, then PUBACK...)
    order = total * 256 + widen(domain.first(packet))
    found: list[Witness] = []
    seen: set[Hashable] = set()
    for target in targets:
        answer = search(z3.And(differ, target), prefer=prefer, smallest=order)
        if answer.model is None:
            continue
        point = domain.point(packet, answer.model)
        if point in seen:
            continue
        seen.add(point)
        data = domain.render(point, codec)
        claimed = tuple(domain.rule_keys[value(answer.model, code)] for code in codes)
        verdicts = [verdict(data, config) for config in (a, b)]
        reads = [domain.packet(point, codec, config.edition) for config in (a, b)]
        shown = next((r for r, (rule, _) in zip(reads, verdicts, strict=True) if rule == OK),
                     reads[0])  # fmt: skip
        witness = Witness(data, [] if shown is None else [shown], (verdicts[0][0], verdicts[1][0]))
        # the model must name the rules Z3 named, and read the packet Z3 describes where valid
        misread = any(
            rule == OK and read != ([] if mine is None else [mine])
            for (rule, read), mine in zip(verdicts, reads, strict=True)
        )
        if claimed != witness.verdicts or misread:
            return Result(
                status="failed",
                counterexample=witness.packets,
                details=f"Z3 claimed {claimed}, the model says: {_describe(witness, a, b)}",
            )
        found.append(witness)
    return found


def compare(
    pairs: Sequence[tuple[Config, Config]],
    codec: Codec,
    focus: Sequence[str] = (),
    domain: Domain = PACKETS,
) -> Result:
    """Refute "each pair judges every packet alike" with confirmed witnesses."""
    lines: list[str] = []
    first: Witness | None = None
    for a, b in pairs:
        found = witnesses(a, b, codec, focus, domain)
        if isinstance(found, Result):
            return found
        if not found:
            lines.append(f"{a.label()} and {b.label()}: no witness among the packets searched")
        for witness in found:
            first = first or witness
            lines.append(_describe(witness, a, b))
    if first is None:
        return Result(status="unknown", details="; ".join(lines))
    return Result(
        status="refuted",
        counterexample=first.packets,
        details="confirmed by the model: " + "; ".join(lines),
    )


__all__ = ["LONG", "PACKETS", "SHORT", "Domain", "Witness", "compare", "witnesses"]
