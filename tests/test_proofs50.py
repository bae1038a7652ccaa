"""The MQTT 5.0 wire theorems: what each finds, that each mutant is killed, and that each
encoding agrees with the model's 5.0 decoder beyond the theorems' own samples.

(Every wire theorem's expected status and every mutant's kill are also checked, with the
JSON contract, in test_proofs.py; here the 5.0 theorems' content.)
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pubproof.model import wire
from pubproof.model.editions import Edition
from pubproof.model.trace import ACK_TYPE_NAMES, AckType
from pubproof.proofs import packet50_symbolic as p50
from pubproof.proofs import packet_symbolic as p3
from pubproof.proofs import pfi_symbolic, probes50, vbi_crosscheck
from pubproof.proofs.catalog import load
from pubproof.proofs.oracle import Config, verdict
from pubproof.proofs.registry import THEOREMS, Result
from pubproof.proofs.rl_crosscheck import padded
from pubproof.proofs.variant import MODEL, STANDARD_REASON_CODES
from pubproof.proofs.wire50_common import ack50, decode50
from pubproof.proofs.wire_first_byte import first_bytes, rule_drift
from pubproof.proofs.z3env import evaluate

V5_IDS = [t.id for t in load() if t.id.startswith("wire.v5.")]
V311, V50 = Edition.V311, Edition.V50


@cache
def outcome(theorem_id: str) -> Result:
    return THEOREMS[theorem_id].check()


@cache
def mutant(theorem_id: str, name: str) -> Result:
    (found,) = [m for m in THEOREMS[theorem_id].mutants if m.name == name]
    return found.check()


def test_the_50_theorems() -> None:
    assert V5_IDS == [
        "wire.v5.property-length", "wire.v5.subscription-identifier",
        "wire.v5.property-section-parses-once", "wire.v5.ack-reason-codes",
        "wire.v5.ack-success-forms", "wire.v5.editions-agree",
    ]  # fmt: skip
    for theorem_id in [*V5_IDS, "wire.first-bytes"]:
        assert V50 in THEOREMS[theorem_id].editions


@pytest.mark.parametrize("theorem_id", V5_IDS)
def test_reaches_its_status_and_kills_its_mutants(theorem_id: str) -> None:
    entry = THEOREMS[theorem_id]
    result = outcome(theorem_id)
    assert result.status == entry.expected, result.details
    assert "agrees with the model" in result.details or "confirmed by the model" in result.details
    for broken in entry.mutants:
        found = mutant(theorem_id, broken.name)
        assert entry.kills(found), (broken.name, found.details)
        assert found.counterexample, broken.name


# --- Variable Byte Integers ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("theorem_id", "name", "shows"),
    [
        ("wire.v5.property-length", "decode-mask-0xff", "the value 128"),
        ("wire.v5.property-length", "five-vbi-bytes", "in 5 byte(s)"),
        ("wire.v5.property-length", "strict-shortest-off-by-one", "the value 128"),
        ("wire.v5.property-length", "end-of-input-ends-field", "prefix-free (1 of 2 bytes)"),
        ("wire.v5.subscription-identifier", "zero-accepted", "(read as 0 in 1 byte(s))"),
    ],
)
def test_vbi_mutants_show_the_field(theorem_id: str, name: str, shows: str) -> None:
    assert shows in mutant(theorem_id, name).details


def test_vbi_counterexamples_are_5_0_packets() -> None:
    (zero,) = mutant("wire.v5.subscription-identifier", "zero-accepted").counterexample or []
    assert zero["properties"] == {"subscription_identifiers": [0]}
    (packet,) = mutant("wire.v5.property-length", "decode-mask-0xff").counterexample or []
    # topic "a", then a Property Length of 128 and the Content Type that fills it
    assert b"\x00\x01a\x80\x01\x03" in wire.encode(packet, V50)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "carrier", [vbi_crosscheck.as_property_length, vbi_crosscheck.as_subscription_identifier]
)
def test_vbi_crosscheck_bites(carrier: vbi_crosscheck.Carrier) -> None:
    """The cross-check alone tells a broken decoder from the model's."""
    assert vbi_crosscheck.drift(MODEL, carrier) is None
    for broken in (replace(MODEL, rl_digit_mask=0xFF), replace(MODEL, rl_shortest_strict=False)):
        found = vbi_crosscheck.drift(broken, carrier)
        assert found is not None and found.expected != found.got


@given(st.integers(1, 4), st.integers(0, 2_097_151))
@settings(max_examples=40, deadline=None)
def test_subscription_identifier_in_any_length(length: int, number: int) -> None:
    """A Subscription Identifier padded to any length: the encoding predicts the model."""
    if number >= 128**length:
        return
    field = padded(number, length)
    seen = vbi_crosscheck.read(field, MODEL)
    for strict in (True, False):
        expected = vbi_crosscheck.as_subscription_identifier(field, seen, strict)
        readings = {"rl-encoding": "strict" if strict else "lenient"}
        assert decode50(expected.data, readings) == expected.outcome


# --- the property section --------------------------------------------------------------------


def test_colliding_identifiers_give_two_parses() -> None:
    found = mutant("wire.v5.property-section-parses-once", "identifiers-collide")
    assert found.status == "refuted" and "parses as" in found.details
    first, second = found.counterexample or []
    assert first["properties"] != second["properties"]


def test_little_endian_prefix_is_caught_by_the_model() -> None:
    found = mutant("wire.v5.property-section-parses-once", "length-prefix-little-endian")
    assert found.status == "failed" and "PP50-2.2.2-property-value" in found.details


# --- first bytes, Reason Codes, the forms of an acknowledgement ------------------------------


def test_first_bytes_in_5_0() -> None:
    details = outcome_first_bytes().details
    assert "5.0: PUBLISH 10 (30 31 32 33 34 35 3a 3b 3c 3d), PUBACK 1 (40), PUBREC 1 (50), " \
        "PUBREL 1 (62), PUBCOMP 1 (70)" in details  # fmt: skip


@cache
def outcome_first_bytes() -> Result:
    return first_bytes.check()


def test_first_bytes_tell_auth_from_reserved() -> None:
    """Taking type 15 as reserved in 5.0 accepts the same bytes but names another rule."""
    broken = replace(MODEL, type15_reserved_in_50=True)
    assert verdict(b"\xf0", Config.of(V50))[0] == "type.out-of-scope"
    assert rule_drift(Config.of(V50), broken) in range(0xF0, 0x100)
    assert rule_drift(Config.of(V50), MODEL) is None


@pytest.mark.parametrize("name", ACK_TYPE_NAMES)
def test_reason_code_tables_are_the_models(name: AckType) -> None:
    table = dict(STANDARD_REASON_CODES)[name]
    assert (
        f"{name} " + " ".join(f"{c:02x}" for c in table)
        in outcome("wire.v5.ack-reason-codes").details
    )
    first = {"PUBACK": 0x40, "PUBREC": 0x50, "PUBREL": 0x62, "PUBCOMP": 0x70}[name]
    accepted = [c for c in range(256) if decode50(bytes([first, 3, 0, 1, c])).rule == "ok"]
    assert accepted == list(table)


@pytest.mark.parametrize("name", ACK_TYPE_NAMES)
def test_three_forms_of_a_success(name: AckType) -> None:
    first = {"PUBACK": 0x40, "PUBREC": 0x50, "PUBREL": 0x62, "PUBCOMP": 0x70}[name]
    forms = [bytes([first, 2, 0, 7]), bytes([first, 3, 0, 7, 0]), bytes([first, 4, 0, 7, 0, 0])]
    packets = [decode50(data).packets for data in forms]
    assert packets == [[ack50(name, 7)]] * 3
    assert wire.encode(ack50(name, 7), V50) == forms[0]
    assert wire.encode(ack50(name, 7, 0x80 if name in ("PUBACK", "PUBREC") else 0x92), V50)[1] == 3


@pytest.mark.parametrize(
    ("name", "success"),
    [("short-form-not-success", True), ("encoder-never-short", True),
     ("encoder-writes-empty-properties", False)],
)  # fmt: skip
def test_ack_form_mutants_show_the_packet(name: str, success: bool) -> None:
    (packet,) = mutant("wire.v5.ack-success-forms", name).counterexample or []
    reason = packet["reason_code"]
    assert isinstance(reason, int)
    assert packet == ack50("PUBACK", 1, reason)
    assert (reason == 0) is success and reason in dict(STANDARD_REASON_CODES)["PUBACK"]


# --- three editions ------------------------------------------------------------------------

WITNESSES = [
    ("3003000161", "ok", "MQTT-2.2.2-1"),
    ("300400016101", "ok", "PP50-2.2.2-property-length"),
    ("30050001610100", "ok", "PP50-2.2.2-property-identifier"),
    ("4082000001", "ok", "MQTT-1.5.5-1"),
    ("f000", "PP311-2.2.1-reserved-type", "PP-scope-packet-type"),
    ("4003000100", "PP311-3.4.1-remaining-length", "ok"),
    ("4003000101", "PP311-3.4.1-remaining-length", "MQTT-3.4.2-1"),
    ("3003000000", "MQTT-4.7.3-1", "PP50-3.3.2-topic-or-alias"),
]


@pytest.mark.parametrize(("data", "in_311", "in_50"), WITNESSES)
def test_edition_witnesses(data: str, in_311: str, in_50: str) -> None:
    assert f"{data}: 3.1.1 -> {in_311}, 5.0 -> {in_50}" in outcome("wire.v5.editions-agree").details
    for edition, expected in ((V311, in_311), (V50, in_50)):
        found = wire.decode(bytes.fromhex(data), edition)
        assert (found.failure.rule if found.failure else "ok") == expected


def test_edition_witness_against_3_1() -> None:
    assert "30020000: 3.1 -> ok, 5.0 -> MQTT-2.2.2-1" in outcome("wire.v5.editions-agree").details


@pytest.mark.parametrize("edition", [Edition.V31, V311, V50])
def test_probes50_agree_and_cover_the_domain(edition: Edition) -> None:
    config = Config.of(edition)
    assert probes50.drift(config, MODEL) is None


def test_probes50_reach_every_rule_of_the_domain() -> None:
    seen = {rule for e in Edition for rule in probes50.model_rules(Config.of(e))}
    assert seen <= set(p50.RULE_KEYS)
    # only the rules of readings off by default (3.1's topic length is not probed in 5.0's
    # domain; the discouraged code points are rejected only by choice)
    assert set(p50.RULE_KEYS) - seen == {"topic.max-32767-chars", "topic.discouraged-code-points"}


@cache
def symbolic(edition: Edition) -> tuple[p50.Packet, object]:
    packet = p50.Packet.fresh("h_")
    return packet, p50.judge_in(packet, Config.of(edition), MODEL)


@st.composite
def points(draw: st.DrawFn) -> p50.Point:
    first = draw(st.integers(0, 255))
    kind, qos = first >> 4, (first >> 1) & 3
    topic = draw(st.integers(0, 3))
    head = (draw(st.sampled_from([0, 0x23, 0x2B, 0x61, 0x7F])), 0x61)
    packet_id = draw(st.sampled_from([0, 1, 0x1234]))
    payload = draw(st.integers(0, 4))
    pay0 = draw(st.integers(0, 5)) if payload else 0
    ack_length = draw(st.sampled_from([2, 3, 4])) if 4 <= kind <= 7 else 2
    reason = draw(st.sampled_from([0, 0x10, 0x92, 0x05])) if ack_length >= 3 else 0
    ack_pl = draw(st.integers(0, 2)) if ack_length == 4 else 0
    if kind == 3:
        body = 2 + topic + (2 if qos else 0) + payload
    else:
        body = ack_length if 4 <= kind <= 7 else 0
    length = draw(st.integers(1 + (body >= 128), 4))
    field = padded(body, length).ljust(4, b"\x00")
    return p50.Point(p3.Point(first, field, topic, head, packet_id, payload), pay0, ack_length,
                     reason, ack_pl)  # fmt: skip


@given(points(), st.sampled_from([Edition.V31, V311, V50]))
@settings(max_examples=60, deadline=None)
def test_three_edition_judgement_agrees_with_the_model(point: p50.Point, edition: Edition) -> None:
    packet, code = symbolic(edition)
    data = p50.render(point, MODEL)
    says = verdict(data, Config.of(edition))[0]
    assert p50.RULE_KEYS[evaluate(code, packet.assignment(point))] == says, data.hex()


# --- the 5.0-only readings -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "rule"),
    [("pfi-mei-once", "PP50-2.2.2-property-once"), ("payload-utf8", "PP50-3.3.2-payload-utf8")],
)
def test_5_0_reading_witnesses(name: str, rule: str) -> None:
    """The witness (Z3's choice of values may vary) is one the model parts on."""
    result = outcome(f"wire.reading-irrelevant.{name}")
    found = re.search(rf"([0-9a-f]+): 5\.0 -> {re.escape(rule)}, 5\.0 {name}=accept -> ok",
                      result.details)  # fmt: skip
    assert found, result.details
    data = bytes.fromhex(found.group(1))
    assert decode50(data).rule == rule
    assert decode50(data, {name: "accept"}).packets == result.counterexample


@pytest.mark.parametrize("chosen", [{}, {"pfi-mei-once": "accept"}, {"payload-utf8": "accept"}])
def test_pfi_probes_agree_with_the_model(chosen: dict[str, str]) -> None:
    assert pfi_symbolic.drift(Config.of(V50, chosen), MODEL) is None
    seen = {verdict(pfi_symbolic.render(p), Config.of(V50, chosen))[0]
            for p in pfi_symbolic.probe_points()}  # fmt: skip
    assert seen <= set(pfi_symbolic.RULE_KEYS)
