"""Hypothesis strategies: editions with readings, valid packets, streams and their mutations."""

from __future__ import annotations

from hypothesis import strategies as st

from pubproof.model.editions import READINGS, Edition
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
