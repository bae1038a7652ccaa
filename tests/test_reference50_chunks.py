"""Random 5.0 packets round trip whatever the chunks they arrive in, and random damage to
their bytes raises only protocol errors, never depending on the chunks."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from support.wire50_cases import ACK_TYPES, CODES, V50, verdict

from pubproof.model.editions import Limits
from pubproof.reference import Publish, encode, from_p, to_p
from pubproof.reference.properties import AckProperties, PublishProperties

_text = st.text(
    st.one_of(st.sampled_from(list("ab/xé温🌡 ")), st.characters(blacklist_categories=["Cs"])),
    max_size=8,
)
_clean_text = _text.filter(lambda text: "\x00" not in text)
_topic_text = _clean_text.filter(lambda text: "+" not in text and "#" not in text)


@st.composite
def _properties(draw: st.DrawFn) -> PublishProperties:
    def maybe(strategy: st.SearchStrategy[Any]) -> Any:
        return draw(st.one_of(st.none(), strategy))

    return PublishProperties(
        payload_format_indicator=maybe(st.just(0)),
        message_expiry_interval=maybe(st.integers(0, 0xFFFF_FFFF)),
        topic_alias=maybe(st.integers(1, 0xFFFF)),
        response_topic=maybe(_topic_text),
        correlation_data=maybe(st.binary(max_size=8)),
        user_properties=tuple(draw(st.lists(st.tuples(_clean_text, _clean_text), max_size=3))),
        subscription_identifiers=tuple(draw(st.lists(st.integers(1, 268_435_455), max_size=3))),
        content_type=maybe(_clean_text),
    )


@st.composite
def _packets(draw: st.DrawFn) -> Any:
    if draw(st.booleans()):
        qos = draw(st.integers(0, 2))
        properties = draw(_properties())
        topic = draw(_topic_text)
        if not topic and properties.topic_alias is None:
            topic = "t"
        return Publish(
            topic=topic,
            qos=qos,
            packet_id=draw(st.integers(1, 0xFFFF)) if qos else None,
            payload=draw(st.binary(max_size=40)),
            dup=bool(qos) and draw(st.booleans()),
            retain=draw(st.booleans()),
            properties=properties,
        )
    cls = draw(st.sampled_from(list(ACK_TYPES)))
    return cls(
        packet_id=draw(st.integers(0, 0xFFFF)),
        reason_code=draw(st.sampled_from(CODES[cls])),
        properties=AckProperties(
            reason_string=draw(st.one_of(st.none(), _clean_text)),
            user_properties=tuple(draw(st.lists(st.tuples(_clean_text, _clean_text), max_size=2))),
        ),
    )


_RECEIVER = Limits(topic_alias_maximum=0xFFFF)


@given(st.lists(_packets(), min_size=1, max_size=4), st.integers(1, 9))
def test_random_packets_round_trip_in_any_chunks(packets: list[Any], chunk: int) -> None:
    data = b"".join(encode(packet, edition=V50) for packet in packets)
    assert verdict(data, limits=_RECEIVER, chunk=chunk) == (packets, None)
    assert [from_p(to_p(packet)) for packet in packets] == packets


@given(
    st.lists(_packets(), min_size=1, max_size=3),
    st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=3),
    st.integers(1, 9),
    st.sampled_from([None, Limits(), Limits(topic_alias_maximum=3, maximum_packet_size=40)]),
)
def test_mutated_streams_raise_only_protocol_errors_and_never_depend_on_chunks(
    packets: list[Any], changes: list[tuple[int, int]], chunk: int, limits: Limits | None
) -> None:
    data = bytearray(b"".join(encode(packet, edition=V50) for packet in packets))
    for at, value in changes:
        data[at % len(data)] = value
    whole = verdict(bytes(data), limits=limits)
    assert verdict(bytes(data), limits=limits, chunk=chunk) == whole
    if whole[1] is not None:
        assert 0 <= whole[1][1] <= len(data)  # type: ignore[operator]
