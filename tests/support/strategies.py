"""Hypothesis strategies: editions with readings, valid packets, streams and their mutations."""

from __future__ import annotations

from typing import Any, cast

from hypothesis import strategies as st

from pubproof.model.editions import READINGS, Edition, Limits
from pubproof.model.properties50 import ACKS, BY_IDENTIFIER, BY_KEY, DataType, identifiers
from pubproof.model.trace import P, ack, publish

EDITIONS = list(Edition)


@st.composite
def edition_and_readings(draw: st.DrawFn) -> tuple[Edition, dict[str, str]]:
    """An edition and a random choice among its readings (defaults included)."""
    edition = draw(st.sampled_from(EDITIONS))
    chosen = {}
    for reading in READINGS.values():
        if reading.applies_to(edition) and draw(st.booleans()):
            chosen[reading.name] = draw(st.sampled_from(sorted(reading.values)))
    return edition, chosen


# Topic characters: mostly plain, with the characters rules talk about mixed in.
_topic_chars = st.one_of(
    st.sampled_from(list("ab/xyz09-_ ")),
    st.sampled_from(["é", "温", "🌡", "\ufeff", "$"]),
    # a list, not a tuple: mypy infers a tuple literal as tuple[str], not the category names
    st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00+#"),
)
valid_topics = st.text(_topic_chars, min_size=1, max_size=24)


@st.composite
def valid_publish(draw: st.DrawFn) -> P:
    qos = draw(st.integers(0, 2))
    return publish(
        topic=draw(valid_topics),
        qos=qos,
        packet_id=draw(st.integers(1, 65535)) if qos else None,
        payload=draw(st.binary(max_size=300)),
        dup=bool(qos) and draw(st.booleans()),
        retain=draw(st.booleans()),
    )


valid_ack = st.builds(
    ack, st.sampled_from(["PUBACK", "PUBREC", "PUBREL", "PUBCOMP"]), st.integers(0, 65535)
)
valid_packet = st.one_of(valid_publish(), valid_ack)


def is_discouraged(char: str) -> bool:
    from pubproof.model.wire import is_discouraged as model_is_discouraged

    return model_is_discouraged(char)


@st.composite
def mutated(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` with a few bytes changed, inserted, deleted, or cut short."""
    buf = bytearray(data)
    for _ in range(draw(st.integers(0, 3))):
        action = draw(st.sampled_from(["set", "insert", "delete", "cut", "flip"]))
        if action == "insert" or not buf:
            buf.insert(draw(st.integers(0, len(buf))), draw(st.integers(0, 255)))
            continue
        at = draw(st.integers(0, len(buf) - 1))
        if action == "set":
            buf[at] = draw(
                st.sampled_from(
                    [0x00, 0x23, 0x2B, 0x7F, 0x80, 0xC0, 0xED, 0xFF, draw(st.integers(0, 255))]
                )
            )
        elif action == "flip":
            buf[at] ^= 1 << draw(st.integers(0, 7))
        elif action == "delete":
            del buf[at]
        else:
            del buf[at:]
    return bytes(buf)


# Topic bytes that exercise every topic rule: wildcards, U+0000, control characters,
# non-characters, ill-formed UTF-8.
_rule_chars = st.sampled_from(
    ["+", "#", "\x00", "\x01", "\x7f", "\x9f", "\ufdd0", "\uffff", "a", "/"]
)
_plain = st.text(_topic_chars, max_size=6)
raw_topics = st.one_of(
    # a topic with one character that some rule is about, somewhere in it
    st.builds(lambda head, char, tail: head + char + tail, _plain, _rule_chars, _plain).map(
        lambda t: t.encode("utf-8")
    ),
    st.text(st.one_of(_rule_chars, _topic_chars), max_size=12).map(lambda t: t.encode("utf-8")),
    st.binary(max_size=12),
)


@st.composite
def raw_publish(draw: st.DrawFn) -> bytes:
    """A PUBLISH built byte by byte: any first-byte flags, any topic bytes, any identifier."""
    # mostly flags that pass the first-byte rules, so the topic rules get judged
    flags = draw(st.one_of(st.sampled_from([0, 1, 2, 3, 4, 5, 10, 11, 12, 13]), st.integers(0, 15)))
    topic = draw(raw_topics)
    body = len(topic).to_bytes(2, "big") + topic
    if flags >> 1 & 3:
        body += draw(st.sampled_from([b"\x00\x00", b"\x00\x01", b"\xff\xff"]))
    body += draw(st.binary(max_size=8))
    if len(body) < 128:
        length = bytes([len(body)])
    else:
        length = bytes([len(body) & 0x7F | 0x80, len(body) >> 7])
    return bytes([0x30 | flags]) + length + body


# --- MQTT 5.0 ---------------------------------------------------------------------------
# Properties as P has them, valid on their own; and raw property sections, built byte by
# byte, that reach every property identifier, every value type's bounds, repeats, and the
# string rules.

_strings50 = st.text(_topic_chars, max_size=8)
_pairs = st.lists(st.lists(_strings50, min_size=2, max_size=2), max_size=3)


@st.composite
def publish_properties(draw: st.DrawFn) -> dict[str, object]:
    props: dict[str, object] = {}
    if draw(st.booleans()):
        props["payload_format_indicator"] = draw(st.sampled_from([0, 1]))
    if draw(st.booleans()):
        props["message_expiry_interval"] = draw(st.integers(0, 2**32 - 1))
    if draw(st.booleans()):
        props["topic_alias"] = draw(st.integers(1, 0xFFFF))
    if draw(st.booleans()):
        props["response_topic"] = draw(valid_topics)
    if draw(st.booleans()):
        props["correlation_data_hex"] = draw(st.binary(max_size=8)).hex()
    if draw(st.booleans()):
        props["user_properties"] = draw(_pairs.filter(bool))
    if draw(st.booleans()):
        props["subscription_identifiers"] = draw(
            st.lists(st.integers(1, 268_435_455), min_size=1, max_size=3)
        )
    if draw(st.booleans()):
        props["content_type"] = draw(_strings50)
    return props


@st.composite
def valid_publish50(draw: st.DrawFn) -> P:
    packet: dict[str, Any] = dict(draw(valid_publish()))
    props = draw(publish_properties())
    if props.get("payload_format_indicator") == 1:
        packet["payload_hex"] = draw(st.text(max_size=20)).encode("utf-8", "replace").hex()
    if "topic_alias" in props and draw(st.booleans()):
        packet["topic"] = ""
    packet["properties"] = props
    return cast(P, packet)


ACK_CODES50 = {
    "PUBACK": [0x00, 0x10, 0x80, 0x83, 0x87, 0x90, 0x91, 0x97, 0x99],
    "PUBREC": [0x00, 0x10, 0x80, 0x83, 0x87, 0x90, 0x91, 0x97, 0x99],
    "PUBREL": [0x00, 0x92],
    "PUBCOMP": [0x00, 0x92],
}


@st.composite
def valid_ack50(draw: st.DrawFn) -> P:
    kind = draw(st.sampled_from(sorted(ACK_CODES50)))
    props: dict[str, object] = {}
    if draw(st.booleans()):
        props["reason_string"] = draw(_strings50)
    if draw(st.booleans()):
        props["user_properties"] = draw(_pairs.filter(bool))
    packet = {
        "type": kind,
        "packet_id": draw(st.integers(0, 65535)),
        "reason_code": draw(st.sampled_from(ACK_CODES50[kind])),
        "properties": props,
    }
    return cast(P, packet)


valid_packet50 = st.one_of(valid_publish50(), valid_ack50())


def valid_packet_for(edition: Edition) -> st.SearchStrategy[P]:
    return valid_packet50 if edition is Edition.V50 else valid_packet


@st.composite
def limits50(draw: st.DrawFn) -> Limits:
    return Limits(
        topic_alias_maximum=draw(st.sampled_from([0, 1, 10, 0xFFFF])),
        maximum_packet_size=draw(st.sampled_from([None, None, 1, 5, 16, 64, 300])),
    )


def _vbi(value: int) -> bytes:
    out = bytearray()
    while True:
        digit, value = value % 128, value // 128
        out.append(digit | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _prefixed(data: bytes) -> bytes:
    return len(data).to_bytes(2, "big") + data


_raw_strings = st.one_of(
    _strings50.map(lambda t: t.encode("utf-8")), raw_topics, st.sampled_from([b"a+", b"#"])
)


#: the identifiers of the properties of PUBLISH and its acknowledgements (Table 2-4)
_PROPERTY_IDS = sorted(identifiers("PUBLISH") | identifiers(ACKS[0]))
_TYPE_OF = {i: BY_IDENTIFIER[i].type for i in _PROPERTY_IDS}
_PFI = BY_KEY["payload_format_indicator"].identifier
_ALIAS = BY_KEY["topic_alias"].identifier


@st.composite
def raw_property(draw: st.DrawFn) -> bytes:
    """One property, usually well typed, sometimes with a value that any rule is about."""
    identifier = draw(st.one_of(st.sampled_from(_PROPERTY_IDS), st.integers(0, 255)))
    data_type = _TYPE_OF.get(identifier)  # None: not one of these packets' properties
    value: bytes
    if identifier == _PFI:
        value = bytes([draw(st.sampled_from([0, 1, 1, 2, 255]))])
    elif identifier == _ALIAS:
        value = draw(st.sampled_from([0, 1, 2, 10, 11, 0xFFFF])).to_bytes(2, "big")
    elif data_type is DataType.FOUR_BYTE_INTEGER:
        value = draw(st.integers(0, 2**32 - 1)).to_bytes(4, "big")
    elif data_type is DataType.VARIABLE_BYTE_INTEGER:
        value = draw(
            st.one_of(
                st.integers(0, 268_435_455).map(_vbi),
                st.sampled_from([b"\x80\x00", b"\xff\xff\xff\xff\x01", b"\x80"]),
            )
        )
    elif data_type is DataType.UTF8_ENCODED_STRING:
        value = _prefixed(draw(_raw_strings))
    elif data_type is DataType.BINARY_DATA:
        value = _prefixed(draw(st.binary(max_size=6)))
    elif data_type is DataType.UTF8_STRING_PAIR:
        value = _prefixed(draw(_raw_strings)) + _prefixed(draw(_raw_strings))
    else:
        value = draw(st.binary(max_size=3))
    return bytes([identifier]) + value


@st.composite
def raw_properties(draw: st.DrawFn) -> bytes:
    """A property section: a Property Length (usually right) and properties."""
    body = b"".join(draw(st.lists(raw_property(), max_size=4)))
    length = draw(
        st.one_of(
            st.just(_vbi(len(body))),
            st.just(_vbi(len(body))),
            st.integers(0, 300).map(_vbi),
            st.sampled_from([b"\x80\x00", b"\xff\xff\xff\xff\x01"]),
        )
    )
    return bytes(length + body)


@st.composite
def raw_publish50(draw: st.DrawFn) -> bytes:
    """A 5.0 PUBLISH built byte by byte."""
    flags = draw(st.one_of(st.sampled_from([0, 1, 2, 3, 4, 5, 10, 11, 12, 13]), st.integers(0, 15)))
    topic: bytes = draw(st.one_of(raw_topics, st.just(b"")))
    body = len(topic).to_bytes(2, "big") + topic
    if flags >> 1 & 3:
        body += draw(st.sampled_from([b"\x00\x00", b"\x00\x01", b"\xff\xff"]))
    body += draw(raw_properties())
    body += draw(
        st.one_of(st.binary(max_size=8), st.sampled_from([b"\xff", b"\xc3", "ü".encode()]))
    )
    return bytes([0x30 | flags]) + _vbi(len(body)) + body


@st.composite
def raw_ack50(draw: st.DrawFn) -> bytes:
    """A 5.0 acknowledgement built byte by byte: every form and any Reason Code."""
    first = draw(st.one_of(st.sampled_from([0x40, 0x50, 0x62, 0x70]), st.integers(0x40, 0x7F)))
    body = draw(st.sampled_from([b"\x00\x01", b"\x12\x34", b"\x00", b""]))
    if len(body) == 2 and draw(st.booleans()):
        body += bytes(
            [draw(st.one_of(st.sampled_from([0, 0x10, 0x80, 0x92, 0x99]), st.integers(0, 255)))]
        )
        if draw(st.booleans()):
            body += draw(raw_properties()) + draw(st.sampled_from([b"", b"", b"\x00"]))
    return bytes([first]) + _vbi(len(body)) + body
