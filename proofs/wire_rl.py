"""Theorems on the Remaining Length field: inverse, minimal, bounded, prefix-free.

Each is proved for every value and every byte string at once (Z3 bit-vectors over the
encoding of :mod:`~pubproof.proofs.rl_symbolic`), then the encoding is cross-checked with
the Python model (:mod:`~pubproof.proofs.rl_crosscheck`). A counterexample is shown as the
packet whose Remaining Length it is (a PUBACK for 2, a QoS 0 PUBLISH to "a" above), which
is why the searches prefer small values from 2 up.
"""

from __future__ import annotations

from dataclasses import replace

from pubproof.model import wire
from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition
from pubproof.model.trace import P
from pubproof.proofs import rl_crosscheck
from pubproof.proofs import rl_symbolic as rl
from pubproof.proofs.oracle import remaining_length
from pubproof.proofs.registry import Broken, Result, theorem
from pubproof.proofs.variant import MODEL, Codec
from pubproof.proofs.wire_common import (
    BOTH,
    packet_with_field,
    proved,
    rule_ids,
    short_hex,
    unknown,
)
from pubproof.proofs.z3env import (
    Answer,
    Expr,
    Model,
    byte,
    extreme,
    num,
    prove,
    value,
    word,
    z3,
)

FIELD_BYTES = 5  # one more than the format allows, so that a fifth byte can be read


def _packet_sized(term: Expr) -> list[Expr]:
    """Prefer a counterexample whose value is the length of a packet one can write out."""
    return [z3.And(z3.UGE(term, 2), z3.ULE(term, 1 << 20))]


def _field_counterexample(
    answer: Answer, data: list[Expr], decoding: rl.Decoding, claim: str
) -> Result:
    """A refuted claim about a decoded field, shown as the packet that carries the field."""
    if answer.outcome == "unknown":
        return unknown(f"{claim}: Z3 gave up ({answer.reason})")
    read = value(answer.model, decoding.value)
    length = value(answer.model, decoding.length)
    field = bytes(value(answer.model, d) for d in data)[: max(length, 1)]
    shown = packet_with_field(field, read)
    stream = "" if shown is None else f"; as a packet: {short_hex(shown[0])}"
    return Result(
        status="refuted",
        counterexample=None if shown is None else shown[1],
        details=f"{claim} fails for the field {field.hex()} (read as {read}, {length} "
        f"byte(s)){stream}",
    )


def _value_counterexample(
    answer: Answer, number: Expr, encoding: rl.Encoding, claim: str
) -> Result:
    """A refuted claim about the encoding of a value, shown as the packet of that length."""
    if answer.outcome == "unknown":
        return unknown(f"{claim}: Z3 gave up ({answer.reason})")
    chosen = value(answer.model, number)
    length = value(answer.model, encoding.length)
    written = bytes(value(answer.model, d) for d in encoding.data)[: max(length, 1)]
    shown = packet_with_field(wire.encode_remaining_length(chosen), chosen)
    return Result(
        status="refuted",
        counterexample=None if shown is None else shown[1],
        details=f"{claim} fails for the value {chosen}: the encoder writes {written.hex()}",
    )


def _cross_checked(result: Result, codec: Codec) -> Result:
    """A proved result stays proved only if the encoding agrees with the Python model."""
    if result.status != "proved":
        return result
    found = rl_crosscheck.drift(codec)
    if found is None:
        samples = rl_crosscheck.sample_size()
        return replace(
            result, details=f"{result.details}; agrees with the model on {samples} samples"
        )
    shown = None
    if found.field is not None:
        answer = remaining_length(found.field, strict=False)
        if answer.value is not None and answer.length is not None:
            shown = packet_with_field(found.field[: answer.length], answer.value)
    return Result(
        status="failed",
        counterexample=None if shown is None else shown[1],
        details=found.describe(),
    )


@theorem(
    id="wire.rl-inverse",
    statement="Remaining Length encoding (the section 2.2.3 algorithm) and decoding are inverse "
    "on [0, 268,435,455]: every value encodes in 1 to 4 bytes that decode back to it, whatever "
    "follows them, and every shortest-form field re-encodes to exactly its bytes",
    rules=rule_ids([R.RL_MAX_BYTES, R.RL_DELIMITS, R.RL_MINIMAL]),
    editions=BOTH,
    readings=("rl-encoding",),
    method="z3-bv",
    model=MODEL,
    mutants=[
        Broken("decode-mask-0xff", "the decoder adds whole bytes (mask 0xFF, not 0x7F)",
               replace(MODEL, rl_digit_mask=0xFF)),
        Broken("encode-no-continuation-bit", "the encoder never sets the continuation bit",
               replace(MODEL, rl_continuation_bit=0x00)),
    ],
)  # fmt: skip
def rl_inverse(codec: Codec) -> Result:
    number = word("value")
    encoding = rl.encode(number, codec)
    rest = [byte(f"after{i}") for i in range(FIELD_BYTES)]
    # the bytes the encoder wrote, then anything at all (the rest of the packet)
    stream = [
        z3.If(z3.ULT(i, encoding.length), encoding.data[i], rest[i]) for i in range(FIELD_BYTES)
    ]
    back = rl.decode(stream, codec)
    claim = z3.And(
        z3.ULE(1, encoding.length), z3.ULE(encoding.length, 4),
        back.complete, back.length == encoding.length, back.value == number,
    )  # fmt: skip
    answer = prove(
        claim, given=[z3.ULE(number, rl.MAX_VALUE)], prefer=_packet_sized(number), smallest=number
    )
    if answer.outcome != "proved":
        return _value_counterexample(answer, number, encoding, "decode(encode(v)) = v")

    data = [byte(f"rl{i}") for i in range(FIELD_BYTES)]
    field = rl.decode(data, codec)
    again = rl.encode(field.value, codec)
    same_bytes = [z3.Implies(z3.ULT(i, field.length), again.data[i] == data[i]) for i in range(4)]
    claim = z3.Implies(
        z3.And(field.complete, field.strict_ok), z3.And(again.length == field.length, *same_bytes)
    )
    answer = prove(claim, prefer=_packet_sized(field.value), smallest=field.value)
    if answer.outcome != "proved":
        return _field_counterexample(answer, data, field, "encode(decode(f)) = f")
    return _cross_checked(
        proved("decode(encode(v)) = v for all 268,435,456 values, with 1 to 4 bytes; "
               "encode(decode(f)) = f for every shortest-form field"),
        codec,
    )  # fmt: skip


@theorem(
    id="wire.rl-minimal",
    statement="The section 2.2.3 encoder writes the fewest bytes: the lengths of Table 2.4 "
    "(1 byte up to 127, 2 up to 16,383, 3 up to 2,097,151, 4 up to 268,435,455); no field of "
    "any length decodes to a value in fewer bytes; reading rl-encoding=strict accepts a field "
    "exactly when it is that long",
    rules=rule_ids([R.RL_MINIMAL, R.RL_MAX_BYTES]),
    editions=BOTH,
    readings=("rl-encoding",),
    method="z3-bv",
    model=MODEL,
    mutants=[
        Broken("encode-two-byte-minimum", "the encoder pads every field to two bytes",
               replace(MODEL, rl_min_bytes=2)),
        Broken("strict-shortest-off-by-one", "the strict check's shortest length uses > "
               "instead of >= (128 counted as a one-byte value)",
               replace(MODEL, rl_shortest_strict=False)),
    ],
)  # fmt: skip
def rl_minimal(codec: Codec) -> Result:
    number = word("value")
    encoding = rl.encode(number, codec)
    answer = prove(
        encoding.length == rl.table_length(number),
        given=[z3.ULE(number, rl.MAX_VALUE)],
        prefer=_packet_sized(number),
        smallest=number,
    )
    if answer.outcome != "proved":
        return _value_counterexample(answer, number, encoding, "length = Table 2.4")

    data = [byte(f"rl{i}") for i in range(FIELD_BYTES)]
    field = rl.decode(data, codec)
    shortest = rl.encode(field.value, codec).length
    for claim, words in (
        (z3.UGE(field.length, shortest), "no field is shorter than the encoder's"),
        (field.strict_ok == (field.length == shortest), "strict accepts exactly the shortest"),
    ):
        answer = prove(
            z3.Implies(field.complete, claim),
            prefer=_packet_sized(field.value),
            smallest=field.value,
        )
        if answer.outcome != "proved":
            return _field_counterexample(answer, data, field, words)

    # Z3 finds the edges of the table itself; the model's encoder must agree on them.
    edges = []
    for length in range(1, 5):
        in_range = z3.And(z3.ULE(number, rl.MAX_VALUE), encoding.length == length)
        low, high = (extreme(number, in_range, largest=big) for big in (False, True))
        if low is None or high is None:
            return unknown(f"no value found that encodes in {length} byte(s)")
        for edge in (low, high):
            if len(wire.encode_remaining_length(edge)) != length:
                return Result(status="failed", details=f"the model encodes {edge} otherwise")
        edges.append(f"{length} byte(s): {low:,}..{high:,}")
    return _cross_checked(
        proved("; ".join(edges) + " (found by Z3, confirmed by the model)"), codec
    )


@theorem(
    id="wire.rl-max",
    statement="Every Remaining Length field the decoder accepts is 1 to 4 bytes long and worth "
    "at most 268,435,455; 268,435,456 has no encoding (the encoder needs a fifth byte for it)",
    rules=rule_ids([R.RL_MAX_BYTES]),
    editions=BOTH,
    method="z3-bv",
    model=MODEL,
    mutants=[
        Broken("five-rl-bytes", "the decoder reads up to five bytes",
               replace(MODEL, rl_max_bytes=5)),
    ],
)  # fmt: skip
def rl_max(codec: Codec) -> Result:
    data = [byte(f"rl{i}") for i in range(FIELD_BYTES)]
    field = rl.decode(data, codec)
    claim = z3.Implies(
        field.complete,
        z3.And(z3.ULE(1, field.length), z3.ULE(field.length, 4), z3.ULE(field.value, rl.MAX_VALUE)),
    )
    answer = prove(claim, prefer=_packet_sized(field.value), smallest=field.value)
    if answer.outcome != "proved":
        return _field_counterexample(answer, data, field, "1 to 4 bytes, at most 268,435,455")
    beyond = rl.MAX_VALUE + 1
    needed = z3.simplify(rl.encode(num(beyond), codec).length).as_long()
    python = wire.encode_remaining_length(beyond)
    over = remaining_length(b"\x80\x80\x80\x80\x01", strict=False)
    if needed != 5 or len(python) != 5 or over.rule != R.RL_MAX_BYTES.key:
        return Result(
            status="failed",
            details=f"268,435,456: Z3 encoder {needed} bytes, model {python.hex()}, "
            f"a fifth byte: {over.rule}",
        )
    return _cross_checked(
        proved(f"every accepted field; 268,435,456 encodes as {python.hex()} (5 bytes), which "
               f"the model rejects ({R.RL_MAX_BYTES.id_for(Edition.V311)})"),
        codec,
    )  # fmt: skip


@theorem(
    id="wire.rl-prefix-free",
    statement="Framing is unique: no complete Remaining Length field is a proper prefix of "
    "another, so where a packet ends is fixed by its own bytes and a byte stream splits into "
    "packets in exactly one way",
    rules=rule_ids([R.RL_DELIMITS, R.RL_MAX_BYTES]),
    editions=BOTH,
    method="z3-bv",
    model=MODEL,
    mutants=[
        Broken("end-of-input-ends-field", "the last byte received ends the field even with "
               "its continuation bit set", replace(MODEL, rl_end_of_input_ends=True)),
    ],
)  # fmt: skip
def rl_prefix_free(codec: Codec) -> Result:
    longest = max(4, codec.rl_max_bytes)
    for long in range(2, longest + 1):
        data = [byte(f"rl{i}") for i in range(long)]
        whole = rl.decode(data, codec, available=long)
        for short in range(1, long):
            prefix = rl.decode(data[:short], codec, available=short)
            fields = (prefix, whole)
            both = z3.And(
                prefix.complete, prefix.length == short, whole.complete, whole.length == long
            )
            answer = prove(
                z3.Not(both),
                prefer=[
                    z3.And(*(z3.And(z3.UGE(f.value, 2), z3.ULE(f.value, 200)) for f in fields))
                ],
                smallest=prefix.value + whole.value,
            )
            if answer.outcome == "unknown":
                return unknown(f"{short} and {long} bytes: Z3 gave up ({answer.reason})")
            if answer.outcome == "refuted":
                return _prefix_counterexample(answer.model, data, short, prefix, whole)
    return _cross_checked(
        proved(f"for every pair of lengths 1 <= n < m <= {longest}: no m-byte field whose "
               "first n bytes are a field"),
        codec,
    )  # fmt: skip


def _prefix_counterexample(
    model: Model, data: list[Expr], short: int, prefix: rl.Decoding, whole: rl.Decoding
) -> Result:
    field = bytes(value(model, d) for d in data)
    packets: list[P] = []
    streams: list[str] = []
    for part, decoding in ((field[:short], prefix), (field, whole)):
        shown = packet_with_field(part, value(model, decoding.value))
        if shown is not None:
            streams.append(shown[0].hex())
            packets.extend(shown[1])
    return Result(
        status="refuted",
        counterexample=packets if len(packets) == 2 else None,
        details=f"{field[:short].hex()} and {field.hex()} are both complete fields; the packets "
        f"{' and '.join(streams)} start alike, so a stream holding the longer one also splits "
        "at the shorter",
    )


__all__ = ["rl_inverse", "rl_max", "rl_minimal", "rl_prefix_free"]
