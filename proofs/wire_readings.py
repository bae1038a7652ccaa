"""Theorems that editions and readings matter: each is refuted by a witness packet.

The claims "3.1 and 3.1.1 judge every packet alike" and "reading R makes no difference"
are expected to be *refuted*; the counterexample is a concrete packet, found by Z3 and
confirmed by the Python model (:mod:`~pubproof.proofs.differences`), on which the two
sides part. The details list every witness (for the editions, one per rule that
separates them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from pubproof.model import wire_rules as R
from pubproof.model.editions import READINGS, Edition
from pubproof.model.rules import RULES, Rule
from pubproof.proofs.differences import PACKETS, Domain, compare
from pubproof.proofs.oracle import Config
from pubproof.proofs.packet_symbolic import RULE_KEYS
from pubproof.proofs.pfi_symbolic import PFI, PFI_PACKETS
from pubproof.proofs.probes50 import PACKETS50
from pubproof.proofs.registry import Broken, Result, Theorem, theorem
from pubproof.proofs.variant import MODEL, Codec
from pubproof.proofs.wire_common import BOTH, rule_ids

#: Rules in the order the editions' witnesses are listed: the headline difference first.
EDITION_RULES = (
    R.DUP_QOS0, R.ACK_FLAGS["PUBACK"], R.ACK_FLAGS["PUBREL"], R.TOPIC_NOT_EMPTY,
    R.TOPIC_NUL, R.TOPIC_NO_WILDCARDS, R.TOPIC_MAX_31,
)  # fmt: skip


@theorem(
    id="wire.editions-agree",
    statement="MQTT 3.1 and 3.1.1, each with its default readings, give every packet the same "
    "verdict (expected refuted: DUP on QoS 0, the acknowledgements' flags and the topic rules "
    "set them apart)",
    rules=rule_ids(EDITION_RULES),
    editions=BOTH,
    readings=tuple(READINGS),
    method="z3-witness",
    expected="refuted",
    model=MODEL,
    mutants=[
        Broken("nul-allowed", "the encoding forgets that U+0000 is forbidden in a topic",
               replace(MODEL, nul_check=False)),
    ],
)  # fmt: skip
def editions_agree(codec: Codec) -> Result:
    focus = [rule.key for rule in EDITION_RULES]
    focus += [key for key in RULE_KEYS[1:] if key not in focus]
    return compare([(Config.of(Edition.V31), Config.of(Edition.V311))], codec, focus)


def _reading_rules(name: str) -> list[Rule]:
    return [rule for rule in RULES.values() if rule.reading == name]


def reading_theorem(
    name: str, broken: Broken[Codec], domain50: Domain = PACKETS50, rules: Sequence[Rule] = ()
) -> Theorem:
    """Register the theorem that reading ``name`` makes no difference (refuted), in every
    edition it applies to (5.0 in ``domain50``: by default that of
    :mod:`~pubproof.proofs.probes50`)."""
    reading = READINGS[name]
    first, second = reading.values
    editions: Sequence[Edition] = [e for e in (*BOTH, Edition.V50) if reading.applies_to(e)]

    def check(codec: Codec) -> Result:
        found: list[Result] = []
        for domain, chosen in ((PACKETS, [e for e in editions if e is not Edition.V50]),
                               (domain50, [e for e in editions if e is Edition.V50])):  # fmt: skip
            pairs = [(Config.of(e, {name: first}), Config.of(e, {name: second})) for e in chosen]
            if pairs:
                found.append(compare(pairs, codec, (), domain))
        for result in found:
            if result.status != "refuted":
                return result
        prefix = "confirmed by the model: "
        return replace(
            found[0],
            details=prefix + "; ".join(r.details.removeprefix(prefix) for r in found),
        )

    return theorem(
        id=f"wire.reading-irrelevant.{name}",
        statement=f"Reading {name} makes no difference: {first} and {second} give every packet "
        f"the same verdict in {' and '.join(e.value for e in editions)} (expected refuted)",
        rules=rule_ids([*_reading_rules(name), *rules], editions),
        editions=editions,
        readings=[name],
        method="z3-witness",
        expected="refuted",
        model=MODEL,
        mutants=[broken],
    )(check)


READING_THEOREMS = [
    reading_theorem("rl-encoding", Broken(
        "strict-shortest-off-by-one", "the strict check counts 128 as a one-byte value",
        replace(MODEL, rl_shortest_strict=False))),
    reading_theorem("dup-qos0", Broken(
        "dup-guard-on-qos1", "the DUP check tests QoS 1 instead of QoS 0",
        replace(MODEL, dup_guard_qos=1))),
    reading_theorem("qos3", Broken(
        "qos3-guard-removed", "QoS 3 is never rejected", replace(MODEL, qos3_guard=False))),
    reading_theorem("ack-flags", Broken(
        "pubrel-flags-0000", "PUBREL's reserved flags taken as 0000",
        replace(MODEL, pubrel_flags=0))),
    reading_theorem("topic-rules", Broken(
        "hash-not-a-wildcard", "only + counts as a wildcard", replace(MODEL, wildcards=(0x2B,)))),
    reading_theorem("topic-length", Broken(
        "topic-limit-off-by-one", "the 3.1 limit taken as 32,768 characters",
        replace(MODEL, topic_max_chars=32_768))),
    reading_theorem("discouraged-code-points", Broken(
        "del-not-discouraged", "U+007F left out of the discouraged control characters",
        replace(MODEL, discouraged_del=False))),
    reading_theorem("pfi-mei-once", Broken(
        "mei-repeat-allowed", "a second Message Expiry Interval is let through",
        replace(MODEL, once_by_reading=(PFI,))), PFI_PACKETS, [R.PROPERTY_ONCE]),
    reading_theorem("payload-utf8", Broken(
        "utf8-checked-on-pfi-0", "the payload is judged as UTF-8 when the indicator is 0",
        replace(MODEL, payload_utf8_when=0)), PFI_PACKETS),
]  # fmt: skip

__all__ = ["READING_THEOREMS", "editions_agree", "reading_theorem"]
