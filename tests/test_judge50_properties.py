"""Properties of the 5.0 descriptions and of the Topic Alias map: any body is described
without raising (a capture can hold anything), every encodable packet is described as it was
written, and TopicAliases follows the model's receiver table in every (state, input)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pubproof.judge import packets as P
from pubproof.judge import properties
from pubproof.judge.aliases import TopicAliases
from pubproof.model.editions import Edition
from pubproof.model.topic_alias import (
    RECEIVER_ALIAS,
    AliasIn,
    AliasInAction,
    AliasInInput,
)

V50 = Edition.V50
CONTROL = sorted(P.CONTROL_TYPES_V50)
FLAGS = {8: 0x02, 10: 0x02}


@settings(max_examples=3000, deadline=None)
@given(st.sampled_from(CONTROL), st.binary(max_size=60))
def test_any_body_is_described_without_raising(kind: int, body: bytes) -> None:
    got = P.describe(kind << 4 | FLAGS.get(kind, 0), body, V50)
    assert got["type"] == P.CONTROL_TYPES_V50[kind]
    if "error" in got:
        error = got["error"]
        assert set(error) == {"rule", "offset", "message"} and 0 <= error["offset"] <= len(body)
        assert set(got) == {"type", "error"}
    else:
        # PINGREQ and PINGRESP have no properties; every other 5.0 packet has a section
        assert ("properties" in got) == (kind not in (12, 13))


_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "byte": st.integers(0, 1),
    "two": st.integers(1, 0xFFFF),
    "four": st.integers(0, 0xFFFF_FFFF),
    "varint": st.integers(1, 268_435_455),
    # no wildcards: a Response Topic with one is (rightly) refused by the reader
    "string": st.text(
        st.characters(min_codepoint=0x20, max_codepoint=0x7E, exclude_characters="#+"),
        max_size=8,
    ),
    "binary": st.binary(max_size=8).map(bytes.hex),
    "pair": st.tuples(st.text("ab", max_size=3), st.text("xy", max_size=3)).map(list),
}


@st.composite
def property_section(draw: st.DrawFn, packet: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for spec in properties.TABLES[packet].values():
        if spec.key == "topic_alias" or not draw(st.booleans()):
            continue
        value = _VALUES[spec.type]
        found[spec.key] = (
            draw(st.lists(value, min_size=1, max_size=3)) if spec.repeatable else draw(value)
        )
    return found


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_every_packet_is_described_as_written(data: st.DataObject) -> None:
    sub = data.draw
    connect_properties = sub(property_section("CONNECT"))
    will = sub(st.none() | st.fixed_dictionaries({
        "qos": st.integers(0, 2), "retain": st.booleans(), "topic": st.text("ab/", max_size=4),
        "payload_hex": st.binary(max_size=4).map(bytes.hex), "properties": property_section("WILL"),
    }))  # fmt: skip
    packets: list[tuple[bytes, dict[str, Any]]] = [
        (P.connect("id", clean=sub(st.booleans()), keep_alive=sub(st.integers(0, 0xFFFF)),
                   edition=V50, properties=connect_properties, will=will),
         {"properties": connect_properties, "will": will}),
        (P.connack(session_present=True, return_code=0, edition=V50,
                   properties=(c := sub(property_section("CONNACK")))), {"properties": c}),
        (P.suback(5, [0, 1, 0x80], edition=V50,
                  properties=(s := sub(property_section("SUBACK")))), {"properties": s}),
        (P.unsubscribe(6, ["a"], edition=V50,
                       properties=(u := sub(property_section("UNSUBSCRIBE")))),
         {"properties": u, "filters": ["a"]}),
        (P.unsuback(6, [0], properties=(ua := sub(property_section("UNSUBACK")))),
         {"properties": ua}),
        (P.disconnect(0x04, (d := sub(property_section("DISCONNECT")))), {"properties": d}),
        (P.auth(0x18, (a := sub(property_section("AUTH")))), {"properties": a}),
    ]  # fmt: skip
    for data_bytes, expected in packets:
        header = P.header_length(data_bytes)
        assert header is not None and sum(header) == len(data_bytes)
        got = P.describe(data_bytes[0], data_bytes[header[0] :], V50)
        assert "error" not in got, got
        for key, value in expected.items():
            assert got[key] == value, key


# -- the Topic Alias map follows the model's table ------------------------------------------

_INPUTS = {
    AliasInInput.TOPIC_AND_ALIAS: ("t2", 1),
    AliasInInput.ALIAS_ONLY: ("", 1),
    AliasInInput.ALIAS_INVALID: ("t2", 3),
}


@pytest.mark.parametrize("state", list(AliasIn))
@pytest.mark.parametrize("event", list(AliasInInput))
def test_each_alias_state_and_input(state: AliasIn, event: AliasInInput) -> None:
    aliases = TopicAliases()
    if state is AliasIn.SET:
        assert aliases.receive("t1", 1, 2).topic == "t1"
    step = RECEIVER_ALIAS[state, event]
    if event is AliasInInput.NEW_CONNECTION:
        aliases.reset()
        assert (1 in aliases.mapping) == (step.next is AliasIn.SET)
        return
    topic, alias = _INPUTS[event]
    result = aliases.receive(topic, alias, 2)
    if AliasInAction.DISCONNECT_ALIAS_INVALID in step.actions:
        assert result.topic is None and result.reason_code == 0x94
        assert result.rules == ("PP50-3.3.4-topic-alias-maximum",)
    elif AliasInAction.DISCONNECT_PROTOCOL_ERROR in step.actions:
        assert result.topic is None and result.reason_code == 0x82
        assert result.rules == step.rules
    elif AliasInAction.RESOLVE in step.actions:
        assert result.topic == "t1" and result.reason_code is None
    else:
        assert AliasInAction.SET_MAPPING in step.actions
        assert result.topic == "t2" and aliases.mapping[1] == "t2"
    assert (1 in aliases.mapping) == (step.next is AliasIn.SET)


def test_alias_zero_and_no_alias() -> None:
    aliases = TopicAliases()
    zero = aliases.receive("t", 0, 5)
    assert zero.topic is None and zero.rules == ("MQTT-3.3.2-8",) and zero.reason_code == 0x94
    assert aliases.receive("t", None, 0).topic == "t"
    empty = aliases.receive("", None, 5)
    assert empty.topic is None and empty.reason_code == 0x82
    assert empty.rules == ("PP50-3.3.2-topic-or-alias",)
