"""MQTT 5.0 acknowledgements: their Reason Codes, and the three forms of a success.

An acknowledgement of Remaining Length 2, 3 or 4 (the forms without properties) is decoded
in Z3 as the model's ``ack_body`` does (:func:`decode`): packet identifier; with 3 or more,
the Reason Code, judged against the packet's table; with 4, the Property Length. The
encoder (:func:`encode`) writes the shortest form, as section 3.4.2.1 allows: "The Reason
Code and Property Length can be omitted if the Reason Code is 0x00 (Success) and there are
no Properties", and the Property Length alone when there are no properties. Both are
cross-checked against the model's 5.0 ``decode`` and ``encode`` on every Reason Code.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pubproof.model import wire
from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition
from pubproof.model.trace import ACK_TYPE_NAMES, AckType, P
from pubproof.proofs.oracle import OK
from pubproof.proofs.registry import Broken, Result, theorem
from pubproof.proofs.variant import MODEL, STANDARD_REASON_CODES, Codec
from pubproof.proofs.wire50_common import V50, ack50, decode50
from pubproof.proofs.wire_common import proved, rule_ids
from pubproof.proofs.z3env import Expr, Model, all_values, byte, prove, value, word, z3

NUMBER = {name: number for number, name in R.ACK_TYPES.items()}
FLAGS = R.ACK_FLAGS_311
FORMS = (2, 3, 4)  # the Remaining Lengths of an acknowledgement without properties


@dataclass(frozen=True, slots=True)
class Read:
    """An acknowledgement without properties as the decoder reads it."""

    ok: Expr  # no rule broken
    packet_id: Expr  # 16 bits
    reason_code: Expr  # 8 bits
    no_properties: Expr  # the property section is empty (or absent)


def allowed(name: str, reason_code: Expr, codec: Codec) -> Expr:
    """The Reason Code is in the packet's table (MQTT 5.0 Tables 3-4 to 3-7)."""
    table = dict(codec.reason_codes)[name]
    return z3.Or(*[reason_code == code for code in table])


def decode(name: str, length: int, body: list[Expr], codec: Codec) -> Read:
    """The body ``body`` (at least ``length`` bytes) of an acknowledgement of that
    Remaining Length: 2 is the short form (Reason Code 0x00), 3 adds the Reason Code, 4 the
    Property Length."""
    packet_id = z3.Concat(body[0], body[1])
    if length == 2:
        return Read(z3.BoolVal(True), packet_id, z3.BitVecVal(codec.ack_short_reason, 8),
                    z3.BoolVal(True))  # fmt: skip
    reason = body[2]
    ok = allowed(name, reason, codec)
    empty = z3.BoolVal(True) if length == 3 else body[3] == 0
    return Read(z3.And(ok, empty), packet_id, reason, empty)


@dataclass(frozen=True, slots=True)
class Written:
    length: Expr  # the Remaining Length the encoder writes
    body: tuple[Expr, ...]  # 4 bytes, the first ``length`` of them written


def encode(packet_id: Expr, reason_code: Expr, codec: Codec) -> Written:
    """The model's 5.0 encoder for an acknowledgement without properties."""
    short = z3.And(reason_code == 0, z3.BoolVal(codec.ack_encode_short))
    longest = 3 if codec.ack_encode_drops_empty_properties else 4
    length = z3.If(short, z3.BitVecVal(2, 8), z3.BitVecVal(longest, 8))
    body = (z3.Extract(15, 8, packet_id), z3.Extract(7, 0, packet_id), reason_code,
            z3.BitVecVal(0, 8))  # fmt: skip
    return Written(length, body)


def _packet(name: AckType, model: Model, packet_id: Expr, reason: Expr) -> P:
    return ack50(name, value(model, packet_id), value(model, reason))


# --- the Reason Codes --------------------------------------------------------------------


def _model_accepts(name: AckType, length: int, code: int) -> bool:
    body = b"\x00\x01" + bytes([code]) + (b"\x00" if length == 4 else b"")
    data = bytes([NUMBER[name] << 4 | FLAGS[name], length]) + body
    return decode50(data).rule == OK


@theorem(
    id="wire.v5.ack-reason-codes",
    statement="The Reason Codes an acknowledgement may carry are exactly those of MQTT 5.0 "
    "Tables 3-4 to 3-7: PUBACK and PUBREC 0x00, 0x10, 0x80, 0x83, 0x87, 0x90, 0x91, 0x97, "
    "0x99; PUBREL and PUBCOMP 0x00, 0x92; Z3 enumerates the bytes its decoder accepts in "
    "the Remaining Length 3 and 4 forms, and they equal, over all 256, the bytes the model "
    "accepts",
    rules=rule_ids(R.ACK_REASON_CODE.values(), V50),
    editions=V50,
    method="z3-allsat",
    model=MODEL,
    mutants=[
        Broken("pubrel-takes-puback-codes", "PUBREL is given the PUBACK table",
               replace(MODEL, reason_codes=(*STANDARD_REASON_CODES[:2],
                                            ("PUBREL", STANDARD_REASON_CODES[0][1]),
                                            STANDARD_REASON_CODES[3]))),
        Broken("puback-without-0x99", "Payload format invalid (0x99) left out of PUBACK",
               replace(MODEL, reason_codes=(("PUBACK", STANDARD_REASON_CODES[0][1][:-1]),
                                            *STANDARD_REASON_CODES[1:]))),
    ],
)  # fmt: skip
def ack_reason_codes(codec: Codec) -> Result:
    lines = []
    standard = dict(STANDARD_REASON_CODES)
    for name in ACK_TYPE_NAMES:
        for length in (3, 4):
            body = [byte(f"body{i}") for i in range(4)]
            read = decode(name, length, body, codec)
            fixed = z3.And(body[0] == 0, body[1] == 1, body[3] == 0)
            by_z3 = all_values(read.reason_code, z3.And(fixed, read.ok))
            by_model = [c for c in range(256) if _model_accepts(name, length, c)]
            if by_z3 != by_model:
                odd = sorted(set(by_z3) ^ set(by_model))[0]
                return Result(
                    status="refuted",
                    counterexample=[ack50(name, 1, odd)],
                    details=f"{name} with Remaining Length {length}, Reason Code 0x{odd:02X}: "
                    f"Z3 {'accepts' if odd in by_z3 else 'rejects'} it, the model "
                    f"{'accepts' if odd in by_model else 'rejects'} it",
                )
            if by_z3 != sorted(standard[name]):
                return Result(status="failed", details=f"{name}: {by_z3} is not the standard's")
        lines.append(f"{name} " + " ".join(f"{c:02x}" for c in by_z3))
    return proved("agrees with the model on all 256 bytes, in both forms: " + "; ".join(lines))


# --- the forms of a success ----------------------------------------------------------------


def _model_forms(name: AckType, packet_id: int, reason_code: int) -> str | None:
    """What the model does that the encoding does not: None when it agrees on every form
    and on the encoding of ``(packet_id, reason_code)``."""
    first = NUMBER[name] << 4 | FLAGS[name]
    ident = packet_id.to_bytes(2, "big")
    forms = {3: ident + bytes([reason_code]), 4: ident + bytes([reason_code, 0])}
    if reason_code == 0:
        forms[2] = ident
    expected = [ack50(name, packet_id, reason_code)]
    for length, body in sorted(forms.items()):
        data = bytes([first, length]) + body
        got = decode50(data)
        if got.rule != OK or got.packets != expected:
            return f"the model decodes {data.hex()} as {got}"
    shortest = bytes([first, min(forms)]) + forms[min(forms)]
    written = wire.encode(expected[0], Edition.V50)
    if written != shortest:
        return f"the model encodes {expected[0]} as {written.hex()}, not {shortest.hex()}"
    return None


def _forms_drift(codec: Codec) -> Result | None:
    """The encoding against the model: each form decoded, each packet encoded."""
    identifier, reason = word("packet_id", 16), byte("reason")
    written = encode(identifier, reason, codec)
    for name in ACK_TYPE_NAMES:
        for code in dict(codec.reason_codes)[name]:
            for packet_id in (1, 0x1234, 0xFFFF, 0):
                said = _model_forms(name, packet_id, code)
                length = z3.simplify(z3.substitute(
                    written.length, (identifier, z3.BitVecVal(packet_id, 16)),
                    (reason, z3.BitVecVal(code, 8)))).as_long()  # fmt: skip
                expected = 2 if code == 0 else 3
                if said is not None or length != expected:
                    return Result(
                        status="failed",
                        counterexample=[ack50(name, packet_id, code)],
                        details=said
                        or f"Z3 writes {name} 0x{code:02X} with Remaining Length "
                        f"{length}, the model with {expected}",
                    )
    return None


@theorem(
    id="wire.v5.ack-success-forms",
    statement="An acknowledgement's three forms of a success (Remaining Length 2; 3 with Reason "
    "Code 0x00; 4 with Reason Code 0x00 and Property Length 0) decode to the same packet for "
    "every packet identifier, and the encoder writes the shortest form of every packet "
    "without properties: Remaining Length 2 for a success, 3 for any other Reason Code",
    rules=rule_ids([*R.ACK_RL.values(), *R.ACK_REASON_CODE.values()], V50),
    editions=V50,
    method="z3-bv",
    model=MODEL,
    mutants=[
        Broken("short-form-not-success", "the short form is read as Reason Code 0x10 (No "
               "matching subscribers) rather than 0x00", replace(MODEL, ack_short_reason=0x10)),
        Broken("encoder-never-short", "the encoder always writes the Reason Code",
               replace(MODEL, ack_encode_short=False)),
        Broken("encoder-writes-empty-properties", "the encoder writes a Property Length of 0 "
               "after a Reason Code other than 0x00", replace(MODEL,
                                                              ack_encode_drops_empty_properties=False)),
    ],
)  # fmt: skip
def ack_success_forms(codec: Codec) -> Result:
    for name in ACK_TYPE_NAMES:
        body = [byte(f"{name}{i}") for i in range(4)]
        reads = {length: decode(name, length, body, codec) for length in FORMS}
        success = z3.And(body[2] == 0, body[3] == 0)
        same = z3.And(*[
            z3.And(r.ok, r.packet_id == reads[2].packet_id, r.reason_code == 0, r.no_properties)
            for r in reads.values()
        ])  # fmt: skip
        answer = prove(z3.Implies(success, same), prefer=[z3.Concat(body[0], body[1]) == 1])
        if answer.model is not None:
            packet_id = z3.Concat(body[0], body[1])
            return Result(
                status="refuted",
                counterexample=[_packet(name, answer.model, packet_id, z3.BitVecVal(0, 8))],
                details=f"{name}: the three forms of a success decode differently "
                f"(Reason Codes {[value(answer.model, r.reason_code) for r in reads.values()]})",
            )

        identifier, reason = word("packet_id", 16), byte("reason")
        written = encode(identifier, reason, codec)
        # every form that reads as (identifier, reason, no properties) is at least as long
        back = {n: decode(name, n, list(written.body), codec) for n in FORMS}
        as_sent = z3.Or(*[
            z3.And(written.length == n, back[n].ok, back[n].packet_id == identifier,
                   back[n].reason_code == reason)
            for n in FORMS
        ])  # fmt: skip
        shortest = z3.And(*[
            z3.Implies(z3.And(r.ok, r.packet_id == identifier, r.reason_code == reason,
                              r.no_properties), z3.ULE(written.length, n))
            for n, r in ((n, decode(name, n, [*written.body[:2], reason, z3.BitVecVal(0, 8)],
                                    codec)) for n in FORMS)
        ])  # fmt: skip
        answer = prove(
            z3.Implies(allowed(name, reason, codec), z3.And(as_sent, shortest)),
            prefer=[identifier == 1],
        )
        if answer.model is not None:
            return Result(
                status="refuted",
                counterexample=[_packet(name, answer.model, identifier, reason)],
                details=f"{name} Reason Code 0x{value(answer.model, reason):02X}: the encoder "
                f"writes Remaining Length {value(answer.model, written.length)}, not the "
                "shortest form that reads back as the packet",
            )
    drifted = _forms_drift(codec)
    if drifted is not None:
        return drifted
    return proved(
        "for every packet identifier and every Reason Code of each table; agrees with the "
        "model, which decodes each form and encodes each packet alike (4 identifiers, every "
        "Reason Code)"
    )


__all__ = ["ack_reason_codes", "ack_success_forms", "allowed", "decode", "encode"]
