"""The 5.0 property section frames one way only: no bytes have two parses.

Over every section of 1 to :data:`LONGEST` bytes with symbolic contents, Z3 looks for two
different parses (:mod:`~pubproof.proofs.properties_symbolic`) of the same bytes within
the same Property Length, with every PUBLISH and acknowledgement property identifier and
its value's size; there are none (the table is a prefix-free code, which is checked too:
no property starting at a position can end at two places). A subset of a prefix-free
table is prefix-free, so this holds for PUBLISH's table and the acknowledgements' alike.

The encoding is cross-checked against the model's 5.0 decoder: for each table entry Z3
writes a section holding one such property (tidy values: letters in strings, small
integers), and all of PUBLISH's in one section and the acknowledgements' in another; the
model must read the properties the encoding reads.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from functools import cache

from pubproof.model import wire
from pubproof.model import wire_rules as R
from pubproof.model.editions import Limits
from pubproof.model.properties50 import ACKS, identifiers
from pubproof.model.trace import P
from pubproof.proofs import properties_symbolic as props
from pubproof.proofs.oracle import OK
from pubproof.proofs.registry import Broken, Result, theorem
from pubproof.proofs.variant import MODEL, STANDARD_PROPERTIES, Codec
from pubproof.proofs.wire50_common import V50, ack50, decode50, publish50
from pubproof.proofs.wire_common import proved, rule_ids, unknown
from pubproof.proofs.z3env import Expr, Model, byte, holds, search, value, z3

LONGEST = 12
#: the identifiers valid in the acknowledgements and not in PUBLISH, and the reverse
ACK_ONLY = identifiers(ACKS[0]) - identifiers("PUBLISH")
PUBLISH_ONLY = identifiers("PUBLISH") - identifiers(ACKS[0])
RECEIVER = Limits(topic_alias_maximum=0xFFFF)


def _cuts(model: Model, bounds: list[Expr]) -> list[int]:
    return [i for i, b in enumerate(bounds) if holds(model, b)]


def _kinds(model: Model, data: list[Expr], cuts: list[int], codec: Codec) -> list[str]:
    """The table entry each property of a parse was read as."""
    kinds = []
    for start, end in itertools.pairwise(cuts):
        options = props.alternatives(data, start, codec)
        chosen = [o.kind for o in options if holds(model, z3.And(o.applies, o.end == end))]
        kinds.append(chosen[0])
    return kinds


def _as_packet(section: bytes, properties: dict[str, object]) -> P:
    if section and section[0] in ACK_ONLY:
        return ack50("PUBACK", 1, 0, properties)  # type: ignore[arg-type]
    return publish50(properties=properties)  # type: ignore[arg-type]


def two_parses(codec: Codec) -> Result | None:
    """Two parses of one section, for the shortest section that has them."""
    every = [byte(f"s{i}") for i in range(LONGEST)]
    cells = props.matrix(every, codec)
    for size in range(1, LONGEST + 1):
        data = every[:size]
        first, parse_a = props.parse(cells, size, "a")
        second, parse_b = props.parse(cells, size, "b")
        differ = z3.Or(*[x != y for x, y in zip(first, second, strict=True)])
        answer = search(z3.And(parse_a, parse_b, differ))
        if answer.outcome == "unknown":
            return unknown(f"sections of {size} bytes: Z3 gave up ({answer.reason})")
        if answer.model is None:
            continue
        section = bytes(value(answer.model, d) for d in data)
        packets = []
        shown = []
        for bounds in (first, second):
            cuts = _cuts(answer.model, bounds)
            kinds = _kinds(answer.model, data, cuts, codec)
            packets.append(_as_packet(section, props.interpret(section, cuts, kinds, codec)))
            shown.append("|".join(section[a:b].hex() for a, b in itertools.pairwise(cuts)))
        return Result(
            status="refuted",
            counterexample=packets,
            details=f"the section {section.hex()} ({size} bytes) parses as {shown[0]} and as "
            f"{shown[1]}",
        )
    return None


def prefix_free(codec: Codec) -> Result | None:
    """No property starting at 0 of a section can end at two places."""
    data = [byte(f"p{i}") for i in range(LONGEST)]
    options = props.alternatives(data, 0, codec)
    ends = [props.reads(options, end) for end in range(1, LONGEST + 1)]
    two = z3.Or(*[z3.And(x, y) for i, x in enumerate(ends) for y in ends[i + 1 :]])
    answer = search(two)
    if answer.model is None:
        return None if answer.outcome == "proved" else unknown(f"Z3 gave up ({answer.reason})")
    section = bytes(value(answer.model, d) for d in data)
    places = [
        end for end, e in zip(range(1, LONGEST + 1), ends, strict=True) if holds(answer.model, e)
    ]
    return Result(status="refuted", details=f"the property at the start of {section.hex()} "
                  f"ends at {places[0]} and at {places[1]}")  # fmt: skip


# --- cross-check ---------------------------------------------------------------------------


def _letters(term: Expr) -> Expr:
    return z3.And(z3.UGE(term, ord("a")), z3.ULE(term, ord("z")))


def _tidy(data: list[Expr], option: props.Alternative, codec: Codec) -> Expr:
    """Values the model accepts: letters in strings, PFI 0 or 1, non-zero alias and
    Subscription Identifier in one byte."""
    if option.kind == "byte":
        return z3.ULE(data[1], 1)
    if option.kind == "two":
        return z3.Or(data[1] != 0, data[2] != 0)
    if option.kind == "varint":
        return z3.And(z3.UGE(data[1], 1), z3.ULE(data[1], 0x7F))
    if option.kind == "string":
        return z3.And(*[_letters(d) for d in data[3:]])
    if option.kind == "pair":
        second = 3 + props.prefix(data, props.pos(1), codec)
        return z3.And(*[z3.Or(_letters(d), z3.And(z3.UGE(i, second), z3.ULT(i, second + 2)))
                        for i, d in enumerate(data) if i >= 3])  # fmt: skip
    return z3.BoolVal(True)


#: The length of each kind's sample section: identifier, then a value with content.
SAMPLE_SIZES = {"byte": 2, "two": 3, "four": 5, "string": 5, "binary": 5, "pair": 7, "varint": 2}


#: A sample: a section, the kind each of its properties is read as, and its boundaries.
Sample = tuple[bytes, tuple[str, ...], tuple[int, ...]]


@cache
def samples(codec: Codec) -> tuple[Sample, ...]:
    """Per table entry, a section of one property Z3 writes, with the entry's kind."""
    found = []
    identifiers = [identifier for identifier, _ in codec.properties]
    for index, (identifier, kind) in enumerate(codec.properties):
        if identifiers.count(identifier) > 1:
            continue  # an entry the table reads two ways has no one reading to check
        size = SAMPLE_SIZES[kind]
        data = [byte(f"x{i}") for i in range(size)]
        option = props.alternatives(data, 0, codec)[index]
        answer = search(z3.And(option.applies, option.end == size, _tidy(data, option, codec)))
        if answer.model is not None:
            found.append((bytes(value(answer.model, d) for d in data), (kind,), (0, size)))
    return tuple(found)


def _combined(found: tuple[Sample, ...], ids: set[int]) -> Sample:
    """The samples whose identifier is in ``ids``, laid end to end."""
    section, kinds, cuts = b"", tuple[str, ...](), tuple[int, ...]((0,))
    for piece, more, _ in found:
        if piece[0] in ids:
            section, kinds = section + piece, kinds + more
            cuts = (*cuts, len(section))
    return section, kinds, cuts


def _packet_bytes(section: bytes) -> bytes:
    length = wire.encode_remaining_length(len(section))
    if section[0] in ACK_ONLY:
        body = b"\x00\x01\x00" + length + section
        return b"\x40" + wire.encode_remaining_length(len(body)) + body
    body = b"\x00\x01a" + length + section
    return b"\x30" + wire.encode_remaining_length(len(body)) + body


def drift(codec: Codec) -> Result | None:
    """The first sample section the model reads otherwise than the encoding."""
    found = samples(codec)
    single = [i for i, _ in codec.properties if [j for j, _ in codec.properties].count(i) == 1]
    if len(found) != len(single):
        return Result(status="failed", details="Z3 found no tidy section for some entry")
    publish_ids = {i for i, _ in codec.properties if i not in ACK_ONLY}
    ack_ids = {i for i, _ in codec.properties if i not in PUBLISH_ONLY}
    for section, kinds, cuts in (*found, _combined(found, publish_ids), _combined(found, ack_ids)):
        properties = props.interpret(section, cuts, kinds, codec)
        expected = _as_packet(section, properties)
        got = decode50(_packet_bytes(section), limits=RECEIVER)
        if got.rule != OK or got.packets != [expected]:
            return Result(
                status="failed",
                counterexample=[expected],
                details=f"the section {section.hex()}: the Z3 encoding reads {properties}, "
                f"the model {got}",
            )
    return None


@theorem(
    id="wire.v5.property-section-parses-once",
    statement="A property section frames one way only: for every section of 1 to 12 bytes, "
    "whatever its contents, no two different parses into PUBLISH or acknowledgement "
    "properties (each identifier with its value's size: fixed-size integers, big-endian "
    "length-prefixed strings and Binary Data, String Pairs, Variable Byte Integers) read "
    "the same bytes within the same Property Length; no property can end at two places",
    rules=rule_ids([R.PROPERTY_LENGTH, R.PROPERTY_IDENTIFIER, R.PROPERTY_VALUE, R.BIG_ENDIAN],
                   V50),
    editions=V50,
    method="z3-bv",
    model=MODEL,
    mutants=[
        Broken("identifiers-collide", "0x02 is also listed as a one-byte property (two table "
               "entries share an identifier)",
               replace(MODEL, properties=(*STANDARD_PROPERTIES, (0x02, "byte")))),
        Broken("length-prefix-little-endian", "a string's two-byte length is read LSB first",
               replace(MODEL, length_prefix_big_endian=False)),
    ],
)  # fmt: skip
def property_section(codec: Codec) -> Result:
    # the cross-check first: it is the cheapest, and the Z3 claims do not depend on it
    for check in (drift, two_parses, prefix_free):
        found = check(codec)
        if found is not None:
            return found
    return proved(
        f"no section of 1 to {LONGEST} bytes has two parses and no property two ends, over "
        f"the {len(codec.properties)} identifiers; agrees with the model's 5.0 decoder on "
        f"{len(samples(codec))} sections of one property and on all of them together"
    )


__all__ = ["LONGEST", "prefix_free", "property_section", "samples", "two_parses"]
