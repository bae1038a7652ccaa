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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pubproof.model.trace import P
from pubproof.proofs import probes
from pubproof.proofs.oracle import OK, Config, rule_id, verdict
from pubproof.proofs.packet_symbolic import (
    CODE,
    FILLER,
    RULE_KEYS,
    Packet,
    Point,
    Shape,
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


def _tidy(packet: Packet, form: Shape) -> Expr:
    """A witness a reader takes in at a glance: topic "a..." (not empty), packet identifier
    1, no payload, RETAIN clear."""
    topic = widen(packet.topic_length)
    letters = [z3.Or(z3.ULE(topic, i), c == FILLER) for i, c in enumerate(packet.head)]
    return z3.And(
        z3.Implies(form.is_publish, z3.UGE(topic, 1)),
        packet.packet_id == 1, packet.payload_length == 0, packet.first & 1 == 0, *letters,
    )  # fmt: skip


def _describe(witness: Witness, a: Config, b: Config) -> str:
    shown = short_hex(witness.data)
    says = [rule_id(key, c.edition) for key, c in zip(witness.verdicts, (a, b), strict=True)]
    return f"{shown}: {a.label()} -> {says[0]}, {b.label()} -> {says[1]}"


def _drift_result(config: Config, codec: Codec) -> Result | None:
    found = probes.drift(config, codec)
    if found is None:
        return None
    packet = packet_of(found.point, codec)
    return Result(
        status="failed",
        counterexample=None if packet is None else [packet],
        details=found.describe(),
    )


def witnesses(a: Config, b: Config, codec: Codec, focus: Sequence[str]) -> list[Witness] | Result:
    """Witnesses where ``a`` and ``b`` differ: one per rule in ``focus`` that either names
    (or one in all when ``focus`` is empty); a Result when the encoding disagrees with the
    model, on a probe or on a witness."""
    for config in (a, b):
        drifted = _drift_result(config, codec)
        if drifted is not None:
            return drifted
    packet = Packet.fresh()
    form = shape(packet, codec)
    codes = judge(packet, a, codec), judge(packet, b, codec)
    differ = z3.And(form.well_framed, codes[0] != codes[1])
    total = form.total_length
    # tidy first, then one side accepting (the clearest contrast), then anything; short first
    clear = z3.Or(codes[0] == CODE[OK], codes[1] == CODE[OK])
    tidy = z3.And(_tidy(packet, form), clear)
    prefer = [
        z3.And(bound, *extra)
        for bound in (z3.ULE(total, SHORT), z3.ULE(total, LONG))
        for extra in ((tidy,), (clear,), ())
    ]
    targets = [z3.Or(*[code == CODE[key] for code in codes]) for key in focus] or [True]
    # shortest first, and among those the lowest first byte (PUBLISH, then PUBACK...)
    order = total * 256 + widen(packet.first)
    found: list[Witness] = []
    seen: set[Point] = set()
    for target in targets:
        answer = search(z3.And(differ, target), prefer=prefer, smallest=order)
        if answer.model is None:
            continue
        point = packet.point(answer.model)
        if point in seen:
            continue
        seen.add(point)
        data = render(point, codec)
        claimed = tuple(RULE_KEYS[value(answer.model, code)] for code in codes)
        verdicts = [verdict(data, config) for config in (a, b)]
        shown = packet_of(point, codec)
        witness = Witness(data, [] if shown is None else [shown], (verdicts[0][0], verdicts[1][0]))
        # the model must name the rules Z3 named, and read the packet Z3 describes where valid
        misread = any(rule == OK and read != witness.packets for rule, read in verdicts)
        if claimed != witness.verdicts or misread:
            return Result(
                status="failed",
                counterexample=witness.packets,
                details=f"Z3 claimed {claimed}, the model says: {_describe(witness, a, b)}",
            )
        found.append(witness)
    return found


def compare(
    pairs: Sequence[tuple[Config, Config]], codec: Codec, focus: Sequence[str] = ()
) -> Result:
    """Refute "each pair judges every packet alike" with confirmed witnesses."""
    lines: list[str] = []
    first: Witness | None = None
    for a, b in pairs:
        found = witnesses(a, b, codec, focus)
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


__all__ = ["LONG", "SHORT", "Witness", "compare", "witnesses"]
