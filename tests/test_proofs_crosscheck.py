"""The Z3 encodings agree with the Python model, beyond the fixed samples the theorems use.

Hypothesis draws Remaining Length fields and values, packets of the witness domain under
random editions and readings, and PUBLISH packets to encode; each Z3 encoding, evaluated
on the draw, must give the model's answer. The probe set and the witness domain are checked
to cover what the theorems rely on.
"""

from __future__ import annotations

import itertools
from functools import cache

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from support.strategies import edition_and_readings

from pubproof.model import wire
from pubproof.model.editions import READINGS, Edition
from pubproof.proofs import differences, probes, publish_crosscheck
from pubproof.proofs import rl_symbolic as rl
from pubproof.proofs.oracle import OK, Config, remaining_length, verdict
from pubproof.proofs.packet_symbolic import RULE_KEYS, Packet, Point, judge, packet_of, render
from pubproof.proofs.rl_crosscheck import padded
from pubproof.proofs.variant import MODEL
from pubproof.proofs.wire_first_byte import accepted_by_model, accepted_by_z3, configs
from pubproof.proofs.z3env import Expr, byte, evaluate, word

#: The witness domain of packet_symbolic is 3.1 and 3.1.1's (5.0 has its own: packet50).
EDITIONS_3 = (Edition.V311, Edition.V31)


def all_configs() -> list[Config]:
    """Every 3.x edition with every combination of every reading (8 for 3.1.1, 64 for 3.1)."""
    found = []
    for edition in EDITIONS_3:
        names = [n for n, r in READINGS.items() if r.applies_to(edition)]
        for values in itertools.product(*(READINGS[n].values for n in names)):
            found.append(Config.of(edition, dict(zip(names, values, strict=True))))
    return found


# --- Remaining Length -------------------------------------------------------------------------


@cache
def symbolic_field(length: int) -> tuple[list[Expr], rl.Decoding]:
    data = [byte(f"b{i}") for i in range(length)]
    return data, rl.decode(data, MODEL, available=length)


@given(st.binary(min_size=1, max_size=5))
def test_rl_decoder_agrees_with_the_model(field: bytes) -> None:
    data, decoding = symbolic_field(len(field))
    assignment = list(zip(data, field, strict=True))
    lenient, strict = (remaining_length(field, strict=s) for s in (False, True))
    complete = evaluate(decoding.complete, assignment)
    assert complete == (lenient.rule == OK)
    assert evaluate(decoding.too_long, assignment) == (lenient.rule == "rl.max-four-bytes")
    if complete:
        assert evaluate(decoding.value, assignment) == lenient.value
        assert evaluate(decoding.length, assignment) == lenient.length
        assert evaluate(decoding.strict_ok, assignment) == (strict.rule == OK)


@cache
def symbolic_encoder() -> tuple[Expr, rl.Encoding]:
    number = word("v")
    return number, rl.encode(number, MODEL)


@given(st.one_of(st.integers(0, rl.MAX_VALUE + 1), st.sampled_from([127, 128, 16_383, 16_384])))
def test_rl_encoder_agrees_with_the_model(number: int) -> None:
    term, encoding = symbolic_encoder()
    expected = wire.encode_remaining_length(number)
    assert evaluate(encoding.length, [(term, number)]) == len(expected)
    assert bytes(evaluate(encoding.data[i], [(term, number)]) for i in range(len(expected))) == (
        expected
    )


# --- the packet judgement -----------------------------------------------------------------------


@cache
def symbolic_judge(config: Config) -> tuple[Packet, Expr]:
    packet = Packet.fresh()
    return packet, judge(packet, config, MODEL)


@st.composite
def domain_points(draw: st.DrawFn) -> Point:
    """A packet of the witness domain: well-framed, ASCII topic head, "a" after."""
    first = draw(st.integers(0, 255))
    kind, qos = first >> 4, (first >> 1) & 3
    topic_length = draw(st.one_of(st.integers(0, 5), st.sampled_from([32_767, 32_768])))
    head = (draw(st.integers(0, 0x7F)), draw(st.integers(0, 0x7F)))
    packet_id = draw(st.one_of(st.just(0), st.just(1), st.integers(0, 0xFFFF)))
    payload = draw(st.integers(0, 20))
    if kind == 3:
        body = 2 + topic_length + (2 if qos else 0) + payload
    elif 4 <= kind <= 7:
        body = 2
    else:
        body = 0
    shortest = 1 + (body >= 128) + (body >= 16_384)
    length = draw(st.integers(shortest, 4))
    field = padded(body, length).ljust(4, b"\x00")
    return Point(first, field, topic_length, head, packet_id, payload)


@given(domain_points(), edition_and_readings())
def test_judgement_agrees_with_the_model(
    point: Point, chosen: tuple[Edition, dict[str, str]]
) -> None:
    assume(chosen[0] in EDITIONS_3)
    config = Config.of(*chosen)
    packet, code = symbolic_judge(config)
    data = render(point, MODEL)
    says, packets = verdict(data, config)
    assert says in RULE_KEYS, f"{data.hex()}: {says} is outside the domain"
    assert RULE_KEYS[evaluate(code, packet.assignment(point))] == says, data.hex()
    if says == OK:
        assert packets == [packet_of(point, MODEL)]


@pytest.mark.parametrize("config", all_configs(), ids=Config.label)
def test_probes_agree_with_the_model(config: Config) -> None:
    assert all(rule in RULE_KEYS for rule in probes.model_rules(config))
    found = probes.drift(config, MODEL)
    assert found is None, found.describe()


def test_probes_cover_every_rule_of_the_domain() -> None:
    seen = {rule for config in all_configs() for rule in probes.model_rules(config)}
    assert seen == set(RULE_KEYS)


@pytest.mark.parametrize("config", list(configs()), ids=Config.label)
def test_first_bytes_agree_with_the_model(config: Config) -> None:
    assert accepted_by_z3(config, MODEL) == accepted_by_model(config)


# --- witnesses ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(READINGS))
def test_reading_witnesses_part_the_model(name: str) -> None:
    reading = READINGS[name]
    first, second = reading.values
    for edition in [e for e in reading.defaults if e in EDITIONS_3]:
        a, b = Config.of(edition, {name: first}), Config.of(edition, {name: second})
        found = differences.witnesses(a, b, MODEL, ())
        assert isinstance(found, list) and len(found) == 1
        (witness,) = found
        says = (verdict(witness.data, a)[0], verdict(witness.data, b)[0])
        assert says == witness.verdicts and says[0] != says[1]
        assert OK in says, "the tidiest witness has one side accept"
        assert any(key in RULE_KEYS for key in says)


# --- PUBLISH layout ----------------------------------------------------------------------------

samples = st.builds(
    publish_crosscheck.Sample,
    qos=st.integers(0, 2),
    packet_id=st.one_of(st.none(), st.just(0), st.integers(0, 0xFFFF)),
    topic_length=st.integers(0, 300),
    payload_length=st.integers(0, 300),
)


@cache
def publish_encoder() -> publish_crosscheck.ByZ3:
    return publish_crosscheck.ByZ3(MODEL)


@given(samples)
def test_publish_encoding_agrees_with_the_model(sample: publish_crosscheck.Sample) -> None:
    assert publish_encoder()(sample) == publish_crosscheck.by_model(sample)


def test_fixed_publish_samples_agree() -> None:
    assert publish_crosscheck.drift(MODEL) is None
