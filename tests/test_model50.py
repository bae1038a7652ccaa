"""The MQTT 5.0 wire model: its contract in examples, and mutants the corpus must kill.

The corpus pins every 5.0 rule on both sides (tests/test_corpus.py); here each rule is
shown to matter: a model whose check reports another rule, or whose check is gone, fails
the corpus.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from pubproof.model import wire, wire50, wire_core
from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition, Limits, check_limits
from pubproof.model.rules import RULES, Kind, Rule
from pubproof.vector_commands import check_case

from conftest import ROOT

V50 = Edition.V50
CORPUS = ROOT / "vectors" / "corpus.jsonl"


def cases50() -> list[dict[str, Any]]:
    lines = CORPUS.read_text(encoding="utf-8").splitlines()
    return [case for case in map(json.loads, lines) if case["edition"] == "5.0"]


def failures(cases: list[dict[str, Any]]) -> list[str]:
    return [case["id"] for case in cases if check_case(case, "model") is not None]


def test_the_model_passes_the_5_0_corpus() -> None:
    assert failures(cases50()) == []


# --- the contract in examples -----------------------------------------------------------


def verdict(hex_stream: str, limits: Limits | None = None, **readings: str) -> Any:
    data = bytes.fromhex(hex_stream.replace(" ", ""))
    return wire.decode(data, V50, {k.replace("_", "-"): v for k, v in readings.items()}, limits)


def test_the_three_forms_of_a_success_are_one_packet() -> None:
    forms = [verdict(h).packets for h in ("40020001", "4003000100", "400400010000")]
    assert (
        forms[0]
        == forms[1]
        == forms[2]
        == [{"type": "PUBACK", "packet_id": 1, "reason_code": 0, "properties": {}}]
    )
    assert wire.encode(forms[2][0], V50).hex() == "40020001"


def test_a_3_1_1_publish_read_as_5_0() -> None:
    # The spec's worked example: its payload's first byte ('h', 0x68) is read as a
    # Property Length of 104, which the packet does not have.
    failure = verdict("32090003612f62000a6869").failure
    assert (failure.rule, failure.offset, failure.kind, failure.reason_code) == (
        "PP50-2.2.2-property-length",
        9,
        "malformed",
        0x81,
    )


def test_an_alias_needs_the_receivers_maximum() -> None:
    aliased = "3006 0000 03 230001"
    assert verdict(aliased).failure.rule == "PP50-3.3.4-topic-alias-maximum"
    assert verdict(aliased).failure.reason_code == 0x94
    packets = verdict(aliased, Limits(topic_alias_maximum=1)).packets
    assert packets[0]["topic"] == "" and packets[0]["properties"] == {"topic_alias": 1}


def test_maximum_packet_size_is_judged_before_the_body_arrives() -> None:
    # 200,000 declared, 3 bytes sent: too large for a 64 KiB receiver, incomplete otherwise
    header = "30 c09a0c 0001"
    too_large = verdict(header, Limits(maximum_packet_size=65_536)).failure
    assert (too_large.rule, too_large.offset, too_large.reason_code) == (
        "PP50-3.1.2-packet-too-large",
        1,
        0x95,
    )
    assert verdict(header).failure.rule == "incomplete"


def test_a_property_that_has_not_arrived_is_incomplete_not_a_fault() -> None:
    # a User Property whose value prefix lies past the declared section: a fault ...
    assert verdict("3009 0001 74 05 2600016b00").failure.rule == "PP50-2.2.2-property-value"
    # ... and the same bytes of a section declared long enough: the rest is still to come
    whole = "300a 0001 74 06 2600016b0000"
    assert verdict(whole).failure is None
    assert verdict(whole[:-4]).failure.rule == "incomplete"


def test_the_readings_of_5_0() -> None:
    twice = "3008 0001 74 04 0100 0101"
    assert verdict(twice).failure.rule == "PP50-2.2.2-property-once"
    assert verdict(twice, pfi_mei_once="accept").packets[0]["properties"] == {
        "payload_format_indicator": 1
    }
    marked = "3007 0001 74 02 0101 ff"
    assert verdict(marked).failure.reason_code == 0x99
    assert verdict(marked, payload_utf8="accept").failure is None
    non_minimal = "40 8200 0001"
    assert verdict(non_minimal).failure.rule == "MQTT-1.5.5-1"
    assert verdict(non_minimal, rl_encoding="lenient").failure is None


def test_limits_exist_in_5_0_only() -> None:
    with pytest.raises(ValueError, match=r"3\.1\.1"):
        check_limits(Edition.V311, Limits(topic_alias_maximum=1))
    with pytest.raises(ValueError):
        Limits(maximum_packet_size=0)  # "a Protocol Error ... for the value to be set to zero"
    with pytest.raises(ValueError):
        Limits(topic_alias_maximum=0x10000)


def test_3_1_1_encoders_refuse_5_0_fields() -> None:
    for packet in (
        {"type": "PUBACK", "packet_id": 1, "reason_code": 0x10},
        {"type": "PUBACK", "packet_id": 1, "properties": {}},
    ):
        with pytest.raises(wire_core.EncodeError) as refused:
            wire.encode(packet, Edition.V311)  # type: ignore[arg-type]
        assert refused.value.rule == "PP-scope-packet-type"


def test_every_5_0_rule_has_a_kind_and_reason_code() -> None:
    for rule in RULES.values():
        if V50 in rule.ids and rule.kind_in(V50) in (Kind.MALFORMED, Kind.VIOLATION):
            code = rule.reason_code_in(V50)
            assert code is not None and code >= 0x80, rule.key
            if rule.kind_in(V50) is Kind.MALFORMED:
                assert code == 0x81, rule.key


# --- mutants ----------------------------------------------------------------------------


def _judged_rules() -> list[Rule]:
    return [
        rule
        for rule in RULES.values()
        if V50 in rule.ids and rule.kind_in(V50) in (Kind.MALFORMED, Kind.VIOLATION)
    ]


@contextmanager
def relabelled(rule: Rule) -> Iterator[None]:
    """A model that reports ``rule`` under another rule's id."""
    original = wire_core.Context.fail
    other = R.PROPERTY_VALUE if rule is not R.PROPERTY_VALUE else R.PROPERTY_IDENTIFIER

    def fail(self: wire_core.Context, broken: Rule, offset: int, message: str) -> Any:
        return original(self, other if broken is rule else broken, offset, message)

    wire_core.Context.fail = fail  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        wire_core.Context.fail = original  # type: ignore[method-assign]


@pytest.mark.parametrize("rule", _judged_rules(), ids=lambda r: r.id_for(V50))
def test_the_corpus_notices_each_5_0_rule(rule: Rule) -> None:
    cases = [c for c in cases50() if c["rule"] == rule.id_for(V50)]
    with relabelled(rule):
        assert failures(cases), f"no 5.0 case notices {rule.key} reported as another rule"


@contextmanager
def patched(target: object, name: str, value: object) -> Iterator[None]:
    original = getattr(target, name)
    setattr(target, name, value)
    try:
        yield
    finally:
        setattr(target, name, original)


def _no_property_judgements() -> Any:
    return patched(wire50, "_judge_property", lambda *args: None)


def _puback_allows_0x92() -> Any:
    codes = dict(R.ACK_REASON_CODES, PUBACK={**R.ACK_REASON_CODES["PUBACK"], 0x92: "?"})
    return patched(R, "ACK_REASON_CODES", codes)


def _no_packet_size() -> Any:
    return patched(wire50, "check_packet_size", lambda *args: None)


def _payload_not_judged() -> Any:
    return patched(wire50, "_judge_payload", lambda *args: None)


def _non_minimal_accepted() -> Any:
    return patched(wire_core, "shortest_length", lambda value: 4)


def _no_trailing_check() -> Any:
    original = wire50._property_section

    def section(*args: Any, **kwargs: Any) -> Any:
        return original(*args, **dict(kwargs, ack=None))

    return patched(wire50, "_property_section", section)


CHECK_REMOVED: dict[str, Callable[[], Any]] = {
    "no repeat, range or alias checks": _no_property_judgements,
    "PUBACK allows 0x92": _puback_allows_0x92,
    "Maximum Packet Size ignored": _no_packet_size,
    "payload marked UTF-8 not judged": _payload_not_judged,
    "non-minimal Variable Byte Integers accepted": _non_minimal_accepted,
    "bytes after an acknowledgement's properties accepted": _no_trailing_check,
}


@pytest.mark.parametrize("mutant", sorted(CHECK_REMOVED))
def test_the_corpus_kills_model_mutants(mutant: str) -> None:
    with CHECK_REMOVED[mutant]():
        assert failures(cases50()), f"the 5.0 corpus does not notice {mutant!r}"
