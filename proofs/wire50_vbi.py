"""MQTT 5.0's other Variable Byte Integers: the Property Length and the Subscription Identifier.

Both are the Remaining Length's encoding (section 1.5.5 of 5.0 is section 2.2.3 of 3.1.1
made general), so the theorems run on the very encoder and decoder of
:mod:`~pubproof.proofs.rl_symbolic`: inverse on the field's range with 1 to 4 bytes and
the shortest length, 268,435,456 not representable, prefix-free, and under 5.0's
[MQTT-1.5.5-1] (reading rl-encoding=strict, the 5.0 default) every accepted encoding is
the encoder's, the shortest. The Subscription Identifier adds its range: 0 is a Protocol
Error. Each is cross-checked against the model's 5.0 decoder with the field in a packet
(:mod:`~pubproof.proofs.vbi_crosscheck`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from pubproof.model import wire_rules as R
from pubproof.model.trace import P
from pubproof.proofs import rl_symbolic as rl
from pubproof.proofs import vbi_crosscheck
from pubproof.proofs.registry import Broken, Result, theorem
from pubproof.proofs.variant import MODEL, Codec
from pubproof.proofs.wire50_common import V50, publish50
from pubproof.proofs.wire_common import proved, rule_ids, unknown
from pubproof.proofs.z3env import Answer, Expr, byte, num, prove, value, word, z3

FIELD_BYTES = 5
Show = Callable[[int], P | None]


def _section_of(length: int) -> P | None:
    """A PUBLISH to "a" whose Property Length is ``length`` (None if no section has it)."""
    if length == 0:
        return publish50()
    if length == 2:
        return publish50(properties={"payload_format_indicator": 0})
    if 3 <= length <= 3 + 0xFFFF:
        return publish50(properties={"content_type": "a" * (length - 3)})
    return None


def _subscription(identifier: int) -> P | None:
    return publish50(properties={"subscription_identifiers": [identifier]})


def _refuted(answer: Answer, term: Expr, show: Show, claim: str, shown: str) -> Result:
    if answer.model is None:
        return unknown(f"{claim}: Z3 gave up ({answer.reason})")
    number = value(answer.model, term)
    packet = show(number)
    return Result(
        status="refuted",
        counterexample=None if packet is None else [packet],
        details=f"{claim} fails: {shown} {number}",
    )


def _field_refuted(answer: Answer, data: list[Expr], field: rl.Decoding, show: Show,
                   claim: str) -> Result:  # fmt: skip
    if answer.model is None:
        return unknown(f"{claim}: Z3 gave up ({answer.reason})")
    read = value(answer.model, field.value)
    raw = bytes(value(answer.model, d) for d in data)
    packet = show(read)
    return Result(
        status="refuted",
        counterexample=None if packet is None else [packet],
        details=f"{claim} fails for the field {raw.hex()} (read as {read} in "
        f"{value(answer.model, field.length)} byte(s))",
    )


def vbi_claims(codec: Codec, low: int, show: Show) -> Result | None:
    """The claims common to every Variable Byte Integer of range [low, 268,435,455]; None
    when all hold, else the refutation."""

    def small(term: Expr) -> list[Expr]:
        return [z3.And(z3.UGE(term, max(low, 3)), z3.ULE(term, 300))]

    number = word("value")
    encoding = rl.encode(number, codec)
    after = [byte(f"after{i}") for i in range(FIELD_BYTES)]
    stream = [z3.If(z3.ULT(i, encoding.length), encoding.data[i], after[i])
              for i in range(FIELD_BYTES)]  # fmt: skip
    back = rl.decode(stream, codec)
    accepted = z3.And(back.complete, back.strict_ok)
    if low > 0 and codec.subscription_id_reject_zero:
        accepted = z3.And(accepted, back.value != 0)
    claim = z3.And(
        encoding.length == rl.table_length(number), z3.ULE(encoding.length, 4), accepted,
        back.length == encoding.length, back.value == number,
    )  # fmt: skip
    in_range = z3.And(z3.ULE(low, number), z3.ULE(number, rl.MAX_VALUE))
    answer = prove(claim, given=[in_range], prefer=small(number), smallest=number)
    if answer.outcome != "proved":
        return _refuted(answer, number, show, "decode(encode(v)) = v, shortest, accepted",
                        "the value")  # fmt: skip

    data = [byte(f"field{i}") for i in range(FIELD_BYTES)]
    field = rl.decode(data, codec)
    again = rl.encode(field.value, codec)
    taken = z3.And(field.complete, field.strict_ok)
    if low > 0 and codec.subscription_id_reject_zero:
        taken = z3.And(taken, field.value != 0)
    same = [z3.Implies(z3.ULT(i, field.length), again.data[i] == data[i]) for i in range(4)]
    for claim, words in (
        (z3.Implies(field.complete, z3.And(z3.ULE(1, field.length), z3.ULE(field.length, 4),
                                           z3.ULE(field.value, rl.MAX_VALUE))),
         "1 to 4 bytes, at most 268,435,455"),
        (z3.Implies(taken, z3.And(z3.ULE(low, field.value), again.length == field.length,
                                  *same)),
         f"every accepted field is in [{low}, 268,435,455] and is the encoder's (shortest)"),
    ):  # fmt: skip
        answer = prove(claim, prefer=small(field.value), smallest=field.value)
        if answer.outcome != "proved":
            return _field_refuted(answer, data, field, show, words)

    needed = z3.simplify(rl.encode(num(rl.MAX_VALUE + 1), codec).length).as_long()
    if needed != 5:
        return Result(status="refuted", counterexample=[p for p in [show(rl.MAX_VALUE)] if p],
                      details=f"268,435,456 encodes in {needed} bytes")  # fmt: skip

    for long in range(2, max(4, codec.rl_max_bytes) + 1):
        data = [byte(f"vbi{i}") for i in range(long)]
        whole = rl.decode(data, codec, available=long)
        for short in range(1, long):
            prefix = rl.decode(data[:short], codec, available=short)
            both = z3.And(prefix.complete, prefix.length == short,
                          whole.complete, whole.length == long)  # fmt: skip
            answer = prove(z3.Not(both), prefer=small(prefix.value), smallest=prefix.value)
            if answer.outcome != "proved":
                return _field_refuted(answer, data, prefix, show,
                                      f"prefix-free ({short} of {long} bytes)")  # fmt: skip
    return None


def _checked(codec: Codec, low: int, show: Show, carrier: vbi_crosscheck.Carrier,
             words: str) -> Result:  # fmt: skip
    refuted = vbi_claims(codec, low, show)
    if refuted is not None:
        return refuted
    found = vbi_crosscheck.drift(codec, carrier)
    if found is not None:
        return Result(status="failed", details=found.describe())
    count = len(vbi_crosscheck.samples())
    return proved(
        f"{words}; agrees with the model's 5.0 decoder on {count} sample fields in "
        "packets, under rl-encoding strict and lenient"
    )


_BROKEN_MASK = Broken("decode-mask-0xff", "the decoder adds whole bytes (mask 0xFF, not 0x7F)",
                      replace(MODEL, rl_digit_mask=0xFF))  # fmt: skip


@theorem(
    id="wire.v5.property-length",
    statement="The Property Length is a Variable Byte Integer: encoding and decoding are inverse "
    "on [0, 268,435,455] with 1 to 4 bytes and the shortest length, 268,435,456 has no "
    "encoding, no field is a proper prefix of another, and under [MQTT-1.5.5-1] (5.0's "
    "rl-encoding=strict) every accepted encoding is the shortest, the encoder's",
    rules=rule_ids([R.RL_MAX_BYTES, R.RL_MINIMAL, R.PROPERTY_LENGTH], V50),
    editions=V50,
    readings=("rl-encoding",),
    method="z3-bv",
    model=MODEL,
    mutants=[
        _BROKEN_MASK,
        Broken("five-vbi-bytes", "the decoder reads up to five bytes",
               replace(MODEL, rl_max_bytes=5)),
        Broken("strict-shortest-off-by-one", "the minimal check counts 128 as a one-byte value",
               replace(MODEL, rl_shortest_strict=False)),
        Broken("end-of-input-ends-field", "the last byte available ends the field even with its "
               "continuation bit set", replace(MODEL, rl_end_of_input_ends=True)),
    ],
)  # fmt: skip
def property_length(codec: Codec) -> Result:
    return _checked(codec, 0, _section_of, vbi_crosscheck.as_property_length,
                    "every value of [0, 268,435,455] and every field of up to 5 bytes")  # fmt: skip


@theorem(
    id="wire.v5.subscription-identifier",
    statement="The Subscription Identifier is a Variable Byte Integer of 1 to 268,435,455: "
    "every such value encodes in 1 to 4 bytes (the shortest) that decode back to it and are "
    "accepted; every accepted field is the shortest encoding of a value in that range; 0 is "
    "a Protocol Error and 268,435,456 has no encoding",
    rules=rule_ids([R.SUBSCRIPTION_ID_ZERO, R.RL_MAX_BYTES, R.RL_MINIMAL], V50),
    editions=V50,
    readings=("rl-encoding",),
    method="z3-bv",
    model=MODEL,
    mutants=[
        Broken("zero-accepted", "Subscription Identifier 0 is not rejected",
               replace(MODEL, subscription_id_reject_zero=False)),
        Broken("encode-no-continuation-bit", "the encoder never sets the continuation bit",
               replace(MODEL, rl_continuation_bit=0x00)),
    ],
)  # fmt: skip
def subscription_identifier(codec: Codec) -> Result:
    return _checked(codec, 1, _subscription, vbi_crosscheck.as_subscription_identifier,
                    "every value of [1, 268,435,455] and every field of up to 5 bytes")  # fmt: skip


__all__ = ["property_length", "subscription_identifier", "vbi_claims"]
