"""The model and the reference agree: the four properties of the foundation issue.

(a) every valid packet round-trips through the reference and equals the model's decoding;
(b) on arbitrary bytes and on mutations of valid streams, the same packets and the same
    rule at the same offset (in 5.0 also the same DISCONNECT Reason Code);
(c) however a stream of many packets is chunked, the reference gives the same result;
(d) every first byte, in every edition and reading, is classified identically; in 5.0,
    every property identifier byte and every Reason Code byte of every acknowledgement too.

Every edition is drawn, 5.0 with random receiver limits.
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from support.agreement import (
    ANY_ALIAS,
    Stream,
    decoder_for,
    model_verdict,
    reference_verdict,
    streams,
)
from support.strategies import (
    edition_and_readings,
    valid_packet,
    valid_packet_for,
)

from pubproof.model import wire as model
from pubproof.model.editions import READINGS, Edition, Limits, resolve_readings
from pubproof.model.trace import P
from pubproof.reference import NEED_DATA, ProtocolError, encode, from_p, to_p


@st.composite
def setting_and_packet(
    draw: st.DrawFn,
) -> tuple[Edition, dict[str, str], P]:
    edition, readings = draw(edition_and_readings())
    return edition, readings, draw(valid_packet_for(edition))


@given(setting_and_packet())
def test_a_valid_packets_round_trip_and_equal_the_model(
    case: tuple[Edition, dict[str, str], P],
) -> None:
    edition, readings, packet = case
    limits = ANY_ALIAS if edition is Edition.V50 else None
    try:
        expected = model.encode(packet, edition, readings)
    except model.EncodeError as error:
        # The reading makes this packet one the sender must not send: the reference agrees.
        try:
            encode(from_p(packet), edition=edition, readings=readings)
        except ProtocolError as ref_error:
            assert ref_error.rule == error.rule
            return
        raise AssertionError(f"reference encoded what the model refuses ({error.rule})") from None
    data = encode(from_p(packet), edition=edition, readings=readings)
    assert data == expected
    ok = {"packets": [packet], "error": None}
    assert reference_verdict([data], edition, readings, limits) == ok
    assert model_verdict(data, edition, readings, limits) == ok


@given(streams())
def test_b_any_bytes_same_verdict(case: Stream) -> None:
    edition, readings, limits, data = case
    assert reference_verdict([data], edition, readings, limits) == model_verdict(
        data, edition, readings, limits
    )


@given(streams(), st.data())
def test_c_chunking_does_not_change_the_result(case: Stream, data: st.DataObject) -> None:
    edition, readings, limits, stream = case
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=8)))
    chunks = [stream[a:b] for a, b in itertools.pairwise([0, *cuts, len(stream)])]
    whole = reference_verdict([stream], edition, readings, limits)
    assert reference_verdict(chunks, edition, readings, limits) == whole
    # byte by byte, the most demanding chunking
    assert reference_verdict([bytes([b]) for b in stream], edition, readings, limits) == whole


def next_packet_verdict(
    chunks: list[bytes],
    edition: Edition,
    readings: dict[str, str],
    limits: Limits | None = None,
) -> dict[str, Any]:
    """As ``reference_verdict``, through ``next_packet()`` instead of iteration (the
    iterator has a fast path of its own; the two must not differ)."""
    decoder = decoder_for(edition, readings, limits)
    packets: list[P] = []
    try:
        for chunk in chunks:
            decoder.feed(chunk)
            while (packet := decoder.next_packet()) is not NEED_DATA:
                packets.append(to_p(packet))  # type: ignore[arg-type]
        decoder.close()
    except ProtocolError as error:
        return {
            "packets": packets,
            "error": (error.rule, error.offset, error.kind, getattr(error, "reason_code", None)),
        }
    return {"packets": packets, "error": None}


@given(streams(), st.data())
def test_c_iteration_and_next_packet_agree(case: Stream, data: st.DataObject) -> None:
    edition, readings, limits, stream = case
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=4)))
    chunks = [stream[a:b] for a, b in itertools.pairwise([0, *cuts, len(stream)])]
    assert next_packet_verdict(chunks, edition, readings, limits) == reference_verdict(
        chunks, edition, readings, limits
    )


@settings(max_examples=200)
@given(st.lists(valid_packet, min_size=20, max_size=60), st.data())
def test_c_many_packets_in_random_chunks(packets: list[P], data: st.DataObject) -> None:
    stream = b"".join(model.encode(p) for p in packets)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=40)))
    chunks = [stream[a:b] for a, b in itertools.pairwise([0, *cuts, len(stream)])]
    assert reference_verdict(chunks, Edition.V311, {}) == {"packets": packets, "error": None}


def _all_reading_choices(edition: Edition) -> list[dict[str, str]]:
    applicable = [r for r in READINGS.values() if r.applies_to(edition)]
    choices = []
    for values in itertools.product(*(sorted(r.values) for r in applicable)):
        choices.append({r.name: v for r, v in zip(applicable, values, strict=True)})
    return choices


#: Bodies after a first byte: none, a 3.1.1 acknowledgement, a 3.1.1 PUBLISH, nothing;
#: and in 5.0 a short acknowledgement with a Reason Code, one with properties and a PUBLISH
#: with a property section.
_TAILS = (b"", b"\x02\x00\x01", b"\x05\x00\x01a\x00\x01", b"\x00")
_TAILS50 = (b"\x03\x00\x01\x10", b"\x06\x00\x01\x00\x02\x01\x00", b"\x06\x00\x01a\x00\x01\x00")


def test_d_every_first_byte_is_classified_identically() -> None:
    checked = 0
    for edition in Edition:
        tails = _TAILS + _TAILS50 if edition is Edition.V50 else _TAILS
        for readings in _all_reading_choices(edition):
            assert resolve_readings(edition, readings) == readings
            for first in range(256):
                # alone (the first byte's own verdict), and with a minimal body after it
                for tail in tails:
                    data = bytes([first]) + tail
                    assert reference_verdict([data], edition, readings) == model_verdict(
                        data, edition, readings
                    ), (edition, readings, data.hex())
                    checked += 1
    assert checked == 256 * (
        4 * len(_all_reading_choices(Edition.V31))
        + 4 * len(_all_reading_choices(Edition.V311))
        + 7 * len(_all_reading_choices(Edition.V50))
    )


def test_d_every_5_0_property_identifier_byte() -> None:
    """Every identifier byte, in a PUBLISH and in each acknowledgement, with the value
    bytes that would follow the valid identifiers, classified identically."""
    checked = 0
    limits = Limits(topic_alias_maximum=10)
    for identifier in range(256):
        for value in (
            b"",
            b"\x00",
            b"\x01",
            b"\x00\x01",
            b"\x00\x00\x00\x01",
            b"\x00\x01k\x00\x01v",
        ):
            props = bytes([identifier]) + value
            section = bytes([len(props)]) + props
            publish = b"\x00\x01t" + section
            stream = bytes([0x30, len(publish)]) + publish
            for first in (0x40, 0x50, 0x62, 0x70):
                body = b"\x00\x01\x00" + section
                stream += bytes([first, len(body)]) + body
            for data in [stream[: 2 + len(publish)], stream]:
                assert reference_verdict([data], Edition.V50, {}, limits) == model_verdict(
                    data, Edition.V50, {}, limits
                ), data.hex()
                checked += 1
    assert checked == 256 * 6 * 2


def test_d_every_5_0_reason_code_byte_of_every_acknowledgement() -> None:
    for first in (0x40, 0x50, 0x62, 0x70):
        for code in range(256):
            for data in (bytes([first, 3, 0, 1, code]), bytes([first, 4, 0, 1, code, 0])):
                assert reference_verdict([data], Edition.V50, {}) == model_verdict(
                    data, Edition.V50, {}
                ), data.hex()


def test_d_first_byte_classes_have_the_expected_sizes() -> None:
    """The valid first bytes per edition under the default readings (a number the proofs
    issue will prove with Z3): 3.1.1 accepts 10 PUBLISH first bytes (QoS 0 without DUP: 2,
    QoS 1 and 2 with any DUP and RETAIN: 8) and one per acknowledgement."""

    def valid_first_bytes(edition: Edition, readings: dict[str, str]) -> set[int]:
        valid = set()
        for first in range(256):
            verdict = model.decode(bytes([first]), edition, readings)
            assert verdict.failure is not None
            if verdict.failure.rule == "incomplete":
                valid.add(first)
        return valid

    v311 = valid_first_bytes(Edition.V311, {})
    assert len([b for b in v311 if b >> 4 == 3]) == 10
    assert {b for b in v311 if b >> 4 != 3} == {0x40, 0x50, 0x62, 0x70}
    v31 = valid_first_bytes(Edition.V31, {})
    assert len([b for b in v31 if b >> 4 == 3]) == 12  # DUP on QoS 0 is ignored in 3.1
    assert len([b for b in v31 if b >> 4 != 3]) == 64  # ack flags are "x" in 3.1
