"""The theorem on first bytes: exactly which ones start a PUBLISH or an acknowledgement.

For every edition (3.1, 3.1.1, 5.0) and every combination of the readings that judge the
first byte (dup-qos0, qos3, ack-flags; the others at their defaults), Z3 enumerates the
accepted first bytes of each packet type (all-SAT: ask, block the answer, ask again until
unsat), and the set must equal, byte for byte over all 256, the set the Python model
accepts; the rule Z3 names for each rejected byte must be the model's (so type 15 is
reserved in 3.1 and 3.1.1 but AUTH, outside the scope, in 5.0); for the default readings
the sizes must also be the ones the standard's tables give.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import replace

from pubproof.model import wire_rules as R
from pubproof.model.editions import READINGS, Edition
from pubproof.model.rules import INCOMPLETE
from pubproof.proofs.oracle import Config, first_byte_accepted, rule_id, verdict
from pubproof.proofs.packet_symbolic import Point, first_byte_checks, packet_of
from pubproof.proofs.registry import Broken, Result, theorem
from pubproof.proofs.variant import MODEL, Codec
from pubproof.proofs.wire_common import BOTH, proved, rule_ids
from pubproof.proofs.z3env import Expr, all_values, byte, search, z3
from pubproof.proofs.z3env import value as value_of

TYPES = {3: "PUBLISH", **R.ACK_TYPES}
FIRST_BYTE_READINGS = ("dup-qos0", "qos3", "ack-flags")
EDITIONS = (*BOTH, Edition.V50)
#: The standard's tables for the default readings (3.1.1 Table 2.2 and section 3.3.1;
#: 3.1 section 2.1, where the acknowledgements' flags are "x").
DEFAULT_SIZES: Mapping[Edition, Mapping[str, int]] = {
    Edition.V311: {"PUBLISH": 10, "PUBACK": 1, "PUBREC": 1, "PUBREL": 1, "PUBCOMP": 1},
    Edition.V31: {"PUBLISH": 12, "PUBACK": 16, "PUBREC": 16, "PUBREL": 16, "PUBCOMP": 16},
    Edition.V50: {"PUBLISH": 10, "PUBACK": 1, "PUBREC": 1, "PUBREL": 1, "PUBCOMP": 1},
}
DEFAULT_ACKS_311 = {"PUBACK": [0x40], "PUBREC": [0x50], "PUBREL": [0x62], "PUBCOMP": [0x70]}


def configs() -> Iterator[Config]:
    """Every edition with every combination of the readings that judge the first byte."""
    for edition in EDITIONS:
        names = [n for n in FIRST_BYTE_READINGS if READINGS[n].applies_to(edition)]
        for values in itertools.product(*(READINGS[n].values for n in names)):
            yield Config.of(edition, dict(zip(names, values, strict=True)))


def accepted_by_z3(config: Config, codec: Codec) -> dict[str, list[int]]:
    """All-SAT: the first bytes no first-byte rule rejects, by packet type."""
    first = byte("first")
    rejected = z3.Or(*[broken for broken, _ in first_byte_checks(first, config, codec)])
    found: dict[str, list[int]] = {name: [] for name in TYPES.values()}
    for value in all_values(first, z3.Not(rejected)):
        found[TYPES[value >> 4]].append(value)
    return found


def rule_drift(config: Config, codec: Codec) -> int | None:
    """A first byte on which Z3 names another rule than the model (None: none)."""
    first = byte("first")
    code: Expr = z3.BitVecVal(0, 8)
    codes = {INCOMPLETE: 0}
    for broken, key in reversed(first_byte_checks(first, config, codec)):
        codes.setdefault(key, len(codes))
        code = z3.If(broken, z3.BitVecVal(codes[key], 8), code)
    cases = []
    for number in range(256):
        said = verdict(bytes([number]), config)[0]
        cases.append(z3.And(first == number, code != codes.get(said, 255)))
    answer = search(z3.Or(*cases))
    return None if answer.model is None else value_of(answer.model, first)


def accepted_by_model(config: Config) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {name: [] for name in TYPES.values()}
    for value in range(256):
        if first_byte_accepted(value, config):
            found[TYPES[value >> 4]].append(value)
    return found


def _sample(first: int) -> Point:
    """The smallest well-formed packet after ``first``: topic "a", packet identifier 1."""
    if first >> 4 == 3:
        has_id = (first >> 1) & 3 > 0
        return Point(first, bytes([5 if has_id else 3, 0, 0, 0]), 1, (0x61, 0x61), 1, 0)
    return Point(first, b"\x02\x00\x00\x00", packet_id=1)


def _counterexample(first: int, config: Config, z3_accepts: bool) -> Result:
    rule = rule_id(verdict(bytes([first]), config)[0], config.edition)
    packet = packet_of(_sample(first), MODEL)
    if packet is not None and config.edition is Edition.V50:  # the 5.0 form of P
        packet = {**packet, "properties": {}}  # type: ignore[assignment]
        if packet["type"] != "PUBLISH":
            packet = {**packet, "reason_code": 0}
    return Result(
        status="refuted",
        counterexample=None if packet is None else [packet],
        details=f"first byte {first:#04x} under {config.label()}: Z3 "
        f"{'accepts' if z3_accepts else 'rejects'} it, the model "
        f"{'rejects it (' + rule + ')' if z3_accepts else 'accepts it'}",
    )


def _listed(values: list[int]) -> str:
    if len(values) == 16:
        return f"16 ({values[0]:02x}-{values[-1]:02x})"
    return f"{len(values)} (" + " ".join(f"{v:02x}" for v in values) + ")"


@theorem(
    id="wire.first-bytes",
    statement="The valid first bytes of PUBLISH and of each acknowledgement are exactly those "
    "Z3 enumerates, for every edition and every value of the readings dup-qos0, qos3 and "
    "ack-flags: 3.1.1 and 5.0 (default) 10 PUBLISH (0x30-0x3D but QoS 3 and DUP on QoS 0), "
    "and 0x40, 0x50, 0x62, 0x70; 3.1 (default) 12 PUBLISH and 16 of each acknowledgement; "
    "the same set, byte for byte, as the model, which names the same rule for every other "
    "byte (type 0 reserved; type 15 reserved in 3.1 and 3.1.1, AUTH outside the scope in 5.0)",
    rules=rule_ids([R.RESERVED_TYPE, R.OUT_OF_SCOPE_TYPE, R.QOS_RESERVED, R.DUP_QOS0,
                    R.ACK_FLAGS["PUBACK"], R.ACK_FLAGS["PUBREL"]], EDITIONS),
    editions=EDITIONS,
    readings=FIRST_BYTE_READINGS,
    method="z3-allsat",
    model=MODEL,
    mutants=[
        Broken("qos3-guard-removed", "QoS 3 is never rejected", replace(MODEL, qos3_guard=False)),
        Broken("dup-guard-on-qos1", "the DUP check tests QoS 1 instead of QoS 0",
               replace(MODEL, dup_guard_qos=1)),
        Broken("pubrel-flags-0000", "PUBREL's reserved flags taken as 0000",
               replace(MODEL, pubrel_flags=0)),
        Broken("ack-flags-unchecked-in-5.0", "5.0 does not judge the acknowledgements' flags "
               "(its rule is MQTT-2.1.3-1, not 3.1.1's MQTT-2.2.2-1)",
               replace(MODEL, ack_flags_in_50=False)),
    ],
)  # fmt: skip
def first_bytes(codec: Codec) -> Result:
    lines = []
    for config in configs():
        by_z3, by_model = accepted_by_z3(config, codec), accepted_by_model(config)
        for name in TYPES.values():
            if by_z3[name] != by_model[name]:
                odd = sorted(set(by_z3[name]) ^ set(by_model[name]))[0]
                return _counterexample(odd, config, odd in by_z3[name])
        sizes = {name: len(found) for name, found in by_z3.items()}
        defaults = Config.of(config.edition)
        if config == defaults and sizes != DEFAULT_SIZES[config.edition]:
            return Result(status="failed", details=f"{config.label()}: sizes {sizes}")
        acks = {n: by_z3[n] for n in DEFAULT_ACKS_311}
        if config == defaults and config.edition is not Edition.V31 and acks != DEFAULT_ACKS_311:
            return Result(status="failed", details=f"{config.label()} acknowledgements: {by_z3}")
        listed = ", ".join(f"{n} {_listed(v)}" for n, v in by_z3.items())
        lines.append(f"{config.label()}: {listed}")
    # the rules named for the rejected bytes, once every set is right (the cheaper check)
    for config in configs():
        odd_rule = rule_drift(config, codec)
        if odd_rule is not None:
            said = rule_id(verdict(bytes([odd_rule]), config)[0], config.edition)
            return Result(status="failed", details=f"first byte {odd_rule:#04x} under "
                          f"{config.label()}: the model says {said}, Z3 another rule")  # fmt: skip
    return proved("equal to the model on all 256 bytes; sizes: " + "; ".join(lines))


__all__ = ["accepted_by_model", "accepted_by_z3", "configs", "first_bytes", "rule_drift"]
