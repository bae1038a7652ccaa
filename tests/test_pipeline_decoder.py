"""The capture pipeline's decoder of whole PUBLISH-family packets
(:class:`pubproof.pipeline.family.PublishFamilyDecoder`) gives what the codec's own
iteration gives a fresh decoder fed the same bytes: the same packet, or the same error at
the same offset. In 3.1 and 3.1.1 it takes the packet with ``next_packet`` rather than by
iteration (cheaper for one packet at a time); one decoder is kept across packets, good and
bad, as the pipeline keeps one per connection. A mutant that decodes with a decoder of
the wrong edition is caught."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.builds import pure_only

from pubproof.model.editions import READINGS, Edition
from pubproof.model.wire import encode_remaining_length
from pubproof.pipeline import family
from pubproof.pipeline.family import PublishFamilyDecoder
from pubproof.pipeline.wire_error import WireError
from pubproof.reference.codec import Decoder
from pubproof.reference.errors import ProtocolError

EDITIONS = (Edition.V31, Edition.V311)


def _by_iteration(data: bytes, edition: Edition, readings: dict[str, str] | None) -> Any:
    """The oracle: a fresh codec decoder, iterated, then closed."""
    decoder = Decoder(edition=edition, readings=readings)
    decoder.feed(data)
    try:
        packets = list(decoder)
        decoder.close()
    except ProtocolError as error:
        return ("error", error.rule, error.offset or 0, error.message, error.kind)
    assert len(packets) == 1
    return packets[0]


def _shown(result: Any) -> Any:
    if isinstance(result, WireError):
        return ("error", result.rule, result.offset, result.message, result.kind)
    return result


@st.composite
def _packets(draw: st.DrawFn) -> bytes:
    """A whole PUBLISH-family packet (its Remaining Length true to its body), often valid,
    often not: any flags, topics with wildcards or bad UTF-8, packet identifier 0."""
    kind = draw(st.sampled_from([3, 3, 3, 4, 5, 6, 7]))
    flags = draw(st.integers(0, 15)) if draw(st.booleans()) else (2 if kind == 6 else 0)
    if kind == 3 and draw(st.booleans()):
        flags = draw(st.sampled_from([0, 1, 2, 3, 4, 8, 10, 11]))
        topic = draw(st.sampled_from([b"a/b", b"", b"a/+", b"#", b"\xff", b"x" * 40, b"\x00"]))
        body = len(topic).to_bytes(2, "big") + topic
        if flags & 6:
            body += draw(st.sampled_from([b"\x00\x01", b"\x00\x00", b"\x12\x34"]))
        body += draw(st.binary(max_size=200))
    elif draw(st.booleans()):
        body = draw(st.sampled_from([b"\x00\x01", b"\x00\x00", b"\x00\x07"]))
    else:
        body = draw(st.binary(max_size=300))
    return bytes([kind << 4 | flags]) + encode_remaining_length(len(body)) + body


def _choices(edition: Edition) -> list[tuple[str, str]]:
    """Every (reading, value) that applies to ``edition``."""
    return [
        (name, value)
        for name, reading in sorted(READINGS.items())
        if reading.applies_to(edition)
        for value in sorted(reading.values)
    ]


@settings(max_examples=400)
@given(
    packets=st.lists(_packets(), min_size=1, max_size=12),
    edition=st.sampled_from(EDITIONS),
    data=st.data(),
)
def test_each_packet_decodes_as_a_fresh_decoder_iterates(
    packets: list[bytes], edition: Edition, data: st.DataObject
) -> None:
    chosen = data.draw(st.lists(st.sampled_from(_choices(edition)), max_size=3))
    readings = dict(chosen) or None
    kept = PublishFamilyDecoder(edition, readings)
    for packet in packets:
        assert _shown(kept.decode(packet)) == _by_iteration(packet, edition, readings)


@pure_only  # the compiled decoder calls the compiled codec's class directly
def test_a_mutant_decoding_as_another_edition_is_killed(monkeypatch: pytest.MonkeyPatch) -> None:
    """3.1 allows what 3.1.1 rejects (a PUBLISH topic with U+0000 is malformed in both,
    but the reserved flags of PUBREL are judged by 3.1.1 only): a decoder built for the
    wrong edition gives another answer, and the check above notices."""
    pubrel_bad_flags = bytes([0x60, 2, 0, 1])  # PUBREL with flags 0000, not 0010
    right = _shown(PublishFamilyDecoder(Edition.V311, None).decode(pubrel_bad_flags))
    assert right == _by_iteration(pubrel_bad_flags, Edition.V311, None)

    def wrong_edition(**kwargs: Any) -> Decoder:
        return Decoder(**{**kwargs, "edition": Edition.V31})

    monkeypatch.setattr(family, "Decoder", wrong_edition)
    mutant = _shown(PublishFamilyDecoder(Edition.V311, None).decode(pubrel_bad_flags))
    assert mutant != _by_iteration(pubrel_bad_flags, Edition.V311, None)
