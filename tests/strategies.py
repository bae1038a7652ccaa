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
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00+#"),
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
