"""MQTT 5.0's property table (pubproof.model.properties50): it is the standard's Table 2-4,
its rows and the whole table check themselves, and every table derived from it (the
model's, the reference's, the proofs', the benchmark's, the tests' own helpers) says what
it says.

The standard's text below is transcribed from MQTT Version 5.0, OASIS Standard, 07 March
2019: Table 2-4 (section 2.2.2.2) as the standard lays it out, and the headings of the
sections that describe each property in each packet (its table of contents).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from pubproof.model import properties50 as table
from pubproof.model import trace, wire50
from pubproof.model.editions import Edition
from pubproof.model.properties50 import (
    ACK_ORDER,
    ACKS,
    BY_IDENTIFIER,
    BY_KEY,
    PROPERTIES,
    PROPERTY_SECTIONS,
    PUBLISH_ORDER,
    WILL,
    DataType,
    PropertyRow,
    TableError,
    check_table,
    identifiers,
    of,
)
from pubproof.model.wire import encode as model_encode
from pubproof.reference import (
    AckProperties,
    PubAck,
    Publish,
    PublishProperties,
    encode,
    section50,
    to_p,
)

from conftest import load_benchmark

#: Table 2-4 - Properties: Dec | Hex | Name (usage) | Type | Packet / Will Properties
TABLE_2_4 = """
1  | 0x01 | Payload Format Indicator          | Byte                  | PUBLISH, Will Properties
2  | 0x02 | Message Expiry Interval           | Four Byte Integer     | PUBLISH, Will Properties
3  | 0x03 | Content Type                      | UTF-8 Encoded String  | PUBLISH, Will Properties
8  | 0x08 | Response Topic                    | UTF-8 Encoded String  | PUBLISH, Will Properties
9  | 0x09 | Correlation Data                  | Binary Data           | PUBLISH, Will Properties
11 | 0x0B | Subscription Identifier           | Variable Byte Integer | PUBLISH, SUBSCRIBE
17 | 0x11 | Session Expiry Interval           | Four Byte Integer     | CONNECT, CONNACK, DISCONNECT
18 | 0x12 | Assigned Client Identifier        | UTF-8 Encoded String  | CONNACK
19 | 0x13 | Server Keep Alive                 | Two Byte Integer      | CONNACK
21 | 0x15 | Authentication Method             | UTF-8 Encoded String  | CONNECT, CONNACK, AUTH
22 | 0x16 | Authentication Data               | Binary Data           | CONNECT, CONNACK, AUTH
23 | 0x17 | Request Problem Information       | Byte                  | CONNECT
24 | 0x18 | Will Delay Interval               | Four Byte Integer     | Will Properties
25 | 0x19 | Request Response Information      | Byte                  | CONNECT
26 | 0x1A | Response Information              | UTF-8 Encoded String  | CONNACK
28 | 0x1C | Server Reference                  | UTF-8 Encoded String  | CONNACK, DISCONNECT
31 | 0x1F | Reason String                     | UTF-8 Encoded String  | CONNACK, PUBACK, PUBREC, PUBREL, PUBCOMP, SUBACK, UNSUBACK, DISCONNECT, AUTH
33 | 0x21 | Receive Maximum                   | Two Byte Integer      | CONNECT, CONNACK
34 | 0x22 | Topic Alias Maximum               | Two Byte Integer      | CONNECT, CONNACK
35 | 0x23 | Topic Alias                       | Two Byte Integer      | PUBLISH
36 | 0x24 | Maximum QoS                       | Byte                  | CONNACK
37 | 0x25 | Retain Available                  | Byte                  | CONNACK
38 | 0x26 | User Property                     | UTF-8 String Pair     | CONNECT, CONNACK, PUBLISH, Will Properties, PUBACK, PUBREC, PUBREL, PUBCOMP, SUBSCRIBE, SUBACK, UNSUBSCRIBE, UNSUBACK, DISCONNECT, AUTH
39 | 0x27 | Maximum Packet Size               | Four Byte Integer     | CONNECT, CONNACK
40 | 0x28 | Wildcard Subscription Available   | Byte                  | CONNACK
41 | 0x29 | Subscription Identifier Available | Byte                  | CONNACK
42 | 0x2A | Shared Subscription Available     | Byte                  | CONNACK
"""  # noqa: E501

#: The headings of the properties' sections, packet by packet (Property Length left out).
SECTIONS = """
3.1.2.11.2 Session Expiry Interval
3.1.2.11.3 Receive Maximum
3.1.2.11.4 Maximum Packet Size
3.1.2.11.5 Topic Alias Maximum
3.1.2.11.6 Request Response Information
3.1.2.11.7 Request Problem Information
3.1.2.11.8 User Property
3.1.2.11.9 Authentication Method
3.1.2.11.10 Authentication Data
3.1.3.2.2 Will Delay Interval
3.1.3.2.3 Payload Format Indicator
3.1.3.2.4 Message Expiry Interval
3.1.3.2.5 Content Type
3.1.3.2.6 Response Topic
3.1.3.2.7 Correlation Data
3.1.3.2.8 User Property
3.2.2.3.2 Session Expiry Interval
3.2.2.3.3 Receive Maximum
3.2.2.3.4 Maximum QoS
3.2.2.3.5 Retain Available
3.2.2.3.6 Maximum Packet Size
3.2.2.3.7 Assigned Client Identifier
3.2.2.3.8 Topic Alias Maximum
3.2.2.3.9 Reason String
3.2.2.3.10 User Property
3.2.2.3.11 Wildcard Subscription Available
3.2.2.3.12 Subscription Identifiers Available
3.2.2.3.13 Shared Subscription Available
3.2.2.3.14 Server Keep Alive
3.2.2.3.15 Response Information
3.2.2.3.16 Server Reference
3.2.2.3.17 Authentication Method
3.2.2.3.18 Authentication Data
3.3.2.3.2 Payload Format Indicator
3.3.2.3.3 Message Expiry Interval
3.3.2.3.4 Topic Alias
3.3.2.3.5 Response Topic
3.3.2.3.6 Correlation Data
3.3.2.3.7 User Property
3.3.2.3.8 Subscription Identifier
3.3.2.3.9 Content Type
3.4.2.2.2 Reason String
3.4.2.2.3 User Property
3.5.2.2.2 Reason String
3.5.2.2.3 User Property
3.6.2.2.2 Reason String
3.6.2.2.3 User Property
3.7.2.2.2 Reason String
3.7.2.2.3 User Property
3.8.2.1.2 Subscription Identifier
3.8.2.1.3 User Property
3.9.2.1.2 Reason String
3.9.2.1.3 User Property
3.10.2.1.2 User Property
3.11.2.1.2 Reason String
3.11.2.1.3 User Property
3.14.2.2.2 Session Expiry Interval
3.14.2.2.3 Reason String
3.14.2.2.4 User Property
3.14.2.2.5 Server Reference
3.15.2.2.2 Authentication Method
3.15.2.2.3 Authentication Data
3.15.2.2.4 Reason String
3.15.2.2.5 User Property
"""
#: the one heading that names its property otherwise than Table 2-4
HEADING_NAMES = {"Subscription Identifiers Available": "Subscription Identifier Available"}


def _standard_rows() -> list[tuple[int, str, str, tuple[str, ...]]]:
    rows = []
    for line in TABLE_2_4.strip().splitlines():
        dec, hexa, name, kind, packets = (cell.strip() for cell in line.split("|"))
        assert int(dec) == int(hexa, 16)
        rows.append((int(dec), name, kind, tuple(p.strip() for p in packets.split(","))))
    return rows


# --- the table is the standard's ---------------------------------------------------------


def test_every_identifier_of_table_2_4_and_no_other() -> None:
    assert [p.identifier for p in PROPERTIES] == [
        0x01, 0x02, 0x03, 0x08, 0x09, 0x0B, 0x11, 0x12, 0x13, 0x15, 0x16, 0x17, 0x18, 0x19,
        0x1A, 0x1C, 0x1F, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2A,
    ]  # fmt: skip
    assert len(PROPERTIES) == 27


def test_each_row_is_table_2_4s() -> None:
    """Identifier, name, type and packets of every row, in the standard's order."""
    ours = [(p.identifier, p.name, p.type.title, p.packets) for p in PROPERTIES]
    assert ours == _standard_rows()


def test_each_section_is_the_standards() -> None:
    """Each (packet, section) of every row is a heading of the standard naming that
    property in that packet's properties, and every such heading is some row's."""
    headings = set()
    for line in SECTIONS.strip().splitlines():
        number, name = line.split(" ", 1)
        headings.add((number, HEADING_NAMES.get(name, name)))
    ours = {(section, p.name) for p in PROPERTIES for _, section in p.where}
    assert ours == headings
    for p in PROPERTIES:
        for packet, section in p.where:
            assert section.rsplit(".", 1)[0] == PROPERTY_SECTIONS[packet], (p.name, packet)


@pytest.mark.parametrize(
    ("key", "identifier", "title", "packets", "repeatable_in"),
    [
        ("topic_alias", 0x23, "Two Byte Integer", ("PUBLISH",), ()),
        # 3.3.2.3.8: "Multiple Subscription Identifiers will be included if ..."; 3.8.2.1.2:
        # "It is a Protocol Error to include the Subscription Identifier more than once."
        ("subscription_identifiers", 0x0B, "Variable Byte Integer", ("PUBLISH", "SUBSCRIBE"),
         ("PUBLISH",)),
        ("will_delay_interval", 0x18, "Four Byte Integer", (WILL,), ()),
        ("correlation_data_hex", 0x09, "Binary Data", ("PUBLISH", WILL), ()),
        ("reason_string", 0x1F, "UTF-8 Encoded String",
         ("CONNACK", *ACKS, "SUBACK", "UNSUBACK", "DISCONNECT", "AUTH"), ()),
        ("user_properties", 0x26, "UTF-8 String Pair", tuple(PROPERTY_SECTIONS),
         tuple(PROPERTY_SECTIONS)),
        ("maximum_qos", 0x24, "Byte", ("CONNACK",), ()),
    ],
)  # fmt: skip
def test_spot_checks(
    key: str,
    identifier: int,
    title: str,
    packets: tuple[str, ...],
    repeatable_in: tuple[str, ...],
) -> None:
    row = BY_KEY[key]
    assert (row.identifier, row.type.title, row.packets) == (identifier, title, packets)
    assert row.repeatable_in == repeatable_in
    assert BY_IDENTIFIER[identifier] is row


def test_spot_sections() -> None:
    assert BY_KEY["topic_alias"].section("PUBLISH") == "3.3.2.3.4"
    assert BY_KEY["payload_format_indicator"].section(WILL) == "3.1.3.2.3"
    assert BY_KEY["server_reference"].section("DISCONNECT") == "3.14.2.2.5"
    assert BY_KEY["authentication_data_hex"].section("AUTH") == "3.15.2.2.3"


def test_only_pfi_and_mei_have_a_reading_for_repeats() -> None:
    # The PUBLISH section says "more than once" of neither (reading pfi-mei-once).
    assert {p.key for p in PROPERTIES if p.once_reading} == {
        "payload_format_indicator", "message_expiry_interval",
    }  # fmt: skip
    assert {p.once_reading for p in PROPERTIES} == {None, "pfi-mei-once"}


def test_data_types_are_section_1_5s() -> None:
    assert [(t.title, t.section, t.size) for t in DataType] == [
        ("Byte", "1.5.1", 1),
        ("Two Byte Integer", "1.5.2", 2),
        ("Four Byte Integer", "1.5.3", 4),
        ("UTF-8 Encoded String", "1.5.4", None),
        ("Variable Byte Integer", "1.5.5", None),
        ("Binary Data", "1.5.6", None),
        ("UTF-8 String Pair", "1.5.7", None),
    ]
    assert len({t.code for t in DataType}) == len(DataType)


def test_queries() -> None:
    assert identifiers("PUBLISH") == {0x01, 0x02, 0x03, 0x08, 0x09, 0x0B, 0x23, 0x26}
    assert all(identifiers(ack) == {0x1F, 0x26} for ack in ACKS)
    assert identifiers(WILL) == {0x18, 0x01, 0x02, 0x03, 0x08, 0x09, 0x26}
    assert [p.identifier for p in of("DISCONNECT")] == [0x11, 0x1C, 0x1F, 0x26]
    assert len(of("CONNACK")) == 17
    with pytest.raises(KeyError):
        of("PINGREQ")


# --- the rows and the table check themselves ---------------------------------------------

_GOOD: dict[str, Any] = {
    "identifier": 0x23, "name": "Topic Alias", "key": "topic_alias",
    "type": DataType.TWO_BYTE_INTEGER, "where": (("PUBLISH", "3.3.2.3.4"),),
}  # fmt: skip


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"identifier": 0x80}, "1 to 127"),
        ({"identifier": 0}, "1 to 127"),
        ({"name": " Topic Alias"}, "padded"),
        ({"key": "Topic-Alias"}, "snake_case"),
        ({"type": "two"}, "DataType"),
        ({"type": DataType.BINARY_DATA}, "_hex"),
        ({"key": "topic_alias_hex"}, "_hex"),
        ({"where": ()}, "no packet"),
        ({"where": (("PUBLISH", "3.3.2.3.4"), ("PUBLISH", "3.3.2.3.4"))}, "twice"),
        ({"where": (("PINGREQ", "3.12.2.1"),)}, "not a packet with properties"),
        ({"where": (("PUBLISH", "3.4.2.2.2"),)}, "not in PUBLISH's properties"),
        ({"where": (("PUBLISH", "3.3.2.30"),)}, "not in PUBLISH's properties"),
        ({"repeatable_in": ("SUBSCRIBE",)}, "may not appear in"),
        ({"once_reading": "pfi-once"}, "not a reading"),
    ],
)
def test_a_row_that_contradicts_itself_is_refused(change: dict[str, Any], says: str) -> None:
    PropertyRow(**_GOOD)
    with pytest.raises(TableError, match=says):
        PropertyRow(**{**_GOOD, **change})


def test_rows_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        PROPERTIES[0].name = "x"  # type: ignore[misc]


def _swap(rows: tuple[PropertyRow, ...], which: str, **change: Any) -> tuple[PropertyRow, ...]:
    """``rows`` with the row whose key is ``which`` changed."""
    return tuple(dataclasses.replace(p, **change) if p.key == which else p for p in rows)


@pytest.mark.parametrize(
    ("rows", "publish_order", "ack_order", "says"),
    [
        (_swap(PROPERTIES, "topic_alias", identifier=0x02), PUBLISH_ORDER, ACK_ORDER,
         "identifier appears in two rows"),
        (_swap(PROPERTIES, "topic_alias", name="Topic Alias Maximum"), PUBLISH_ORDER,
         ACK_ORDER, "name appears in two rows"),
        (_swap(PROPERTIES, "topic_alias", key="topic_alias_maximum"), PUBLISH_ORDER,
         ACK_ORDER, "key appears in two rows"),
        (PROPERTIES[1::-1] + PROPERTIES[2:], PUBLISH_ORDER, ACK_ORDER, "standard's order"),
        (_swap(PROPERTIES, "reason_string",
               where=tuple(w for w in BY_KEY["reason_string"].where if w[0] != "PUBREL")),
         PUBLISH_ORDER, ACK_ORDER, "PUBREL and PUBACK"),
        (PROPERTIES, PUBLISH_ORDER[:-1], ACK_ORDER, "PUBLISH_ORDER"),
        (PROPERTIES, (*PUBLISH_ORDER, 0x1F), ACK_ORDER, "PUBLISH_ORDER"),
        (PROPERTIES, PUBLISH_ORDER, (0x1F, 0x1F), "ACK_ORDER"),
        (_swap(PROPERTIES, "content_type", where=((WILL, "3.1.3.2.5"),)), PUBLISH_ORDER,
         ACK_ORDER, "PUBLISH_ORDER"),
    ],
)  # fmt: skip
def test_a_table_that_contradicts_itself_is_refused(
    rows: tuple[PropertyRow, ...],
    publish_order: tuple[int, ...],
    ack_order: tuple[int, ...],
    says: str,
) -> None:
    check_table(PROPERTIES, PUBLISH_ORDER, ACK_ORDER)
    with pytest.raises(TableError, match=says):
        check_table(rows, publish_order, ack_order)


# --- every derived table says what the table says ----------------------------------------


def _publish_and_acks() -> list[PropertyRow]:
    return [p for p in PROPERTIES if p.identifier in identifiers("PUBLISH") | identifiers(ACKS[0])]


@pytest.mark.parametrize(
    ("packet", "derived"),
    [("PUBLISH", wire50.PUBLISH_PROPERTIES), (ACKS[0], wire50.ACK_PROPERTIES)],
)
def test_the_models_tables(packet: str, derived: dict[int, wire50.Property]) -> None:
    assert list(derived) == [p.identifier for p in of(packet)]
    for identifier, spec in derived.items():
        row = BY_IDENTIFIER[identifier]
        assert (spec.identifier, spec.name, spec.key, spec.type) == (
            row.identifier, row.name, row.key, row.type.code,
        )  # fmt: skip
        assert spec.repeatable == (packet in row.repeatable_in)
        assert spec.reading == row.once_reading
        strings = row.type in (DataType.UTF8_ENCODED_STRING, DataType.UTF8_STRING_PAIR)
        assert (spec.strings is not None) == strings


def test_the_encoders_order_is_written_once() -> None:
    assert wire50.PUBLISH_ORDER is PUBLISH_ORDER
    assert wire50.ACK_ORDER is ACK_ORDER
    assert tuple(BY_IDENTIFIER[i].key for i in PUBLISH_ORDER) == trace.PUBLISH_PROPERTY_KEYS
    assert tuple(BY_IDENTIFIER[i].key for i in ACK_ORDER) == trace.ACK_PROPERTY_KEYS
    # the TypedDicts of P, and the reference's property classes, list them in that order
    assert tuple(trace.PublishProps.__annotations__) == trace.PUBLISH_PROPERTY_KEYS
    assert tuple(trace.AckProps.__annotations__) == trace.ACK_PROPERTY_KEYS
    for cls, keys in (
        (PublishProperties, trace.PUBLISH_PROPERTY_KEYS),
        (AckProperties, trace.ACK_PROPERTY_KEYS),
    ):
        fields = tuple(f.name for f in dataclasses.fields(cls))
        assert fields == tuple(key.removesuffix("_hex") for key in keys)


def _every_publish_property() -> PublishProperties:
    return PublishProperties(
        payload_format_indicator=1, message_expiry_interval=60, topic_alias=3,
        response_topic="r", correlation_data=b"c", user_properties=(("k", "v"), ("k", "w")),
        subscription_identifiers=(200, 7), content_type="t",
    )  # fmt: skip


def _identifiers_written(section: bytes) -> list[int]:
    """The identifiers of a property section (without its Property Length), read along
    the table's data types."""
    found, at = [], 0
    while at < len(section):
        identifier = section[at]
        found.append(identifier)
        data_type, at = BY_IDENTIFIER[identifier].type, at + 1
        if data_type.size is not None:
            at += data_type.size
        elif data_type is DataType.VARIABLE_BYTE_INTEGER:
            while section[at] & 0x80:
                at += 1
            at += 1
        else:
            for _ in range(2 if data_type is DataType.UTF8_STRING_PAIR else 1):
                at += 2 + int.from_bytes(section[at : at + 2], "big")
    return found


def _in_order(order: tuple[int, ...], repeats: dict[int, int]) -> list[int]:
    return [i for i in order for _ in range(repeats.get(i, 1))]


def test_both_encoders_write_the_tables_order() -> None:
    packet = Publish(topic="a", properties=_every_publish_property())
    for data in (encode(packet, edition=Edition.V50), model_encode(to_p(packet), Edition.V50)):
        # fixed header (2), topic name (3), Property Length (1), then the section
        section = data[6 : 6 + data[5]]
        assert _identifiers_written(section) == _in_order(PUBLISH_ORDER, {0x26: 2, 0x0B: 2})
    ack = PubAck(
        packet_id=1,
        reason_code=0x10,
        properties=AckProperties(reason_string="r", user_properties=(("k", "v"),)),
    )
    for data in (encode(ack, edition=Edition.V50), model_encode(to_p(ack), Edition.V50)):
        assert _identifiers_written(data[6:]) == list(ACK_ORDER)


def test_p_lists_the_properties_in_the_tables_order() -> None:
    p = to_p(Publish(topic="a", properties=_every_publish_property()))
    assert tuple(p["properties"]) == trace.PUBLISH_PROPERTY_KEYS


def test_the_reference_decoders_tables() -> None:
    rows = _publish_and_acks()
    assert identifiers("PUBLISH") == section50._PUBLISH_IDS
    assert identifiers(ACKS[0]) == section50._ACK_IDS
    assert {p.identifier: p.name for p in rows} == section50._PROPERTY_NAMES
    assert {p.identifier: p.type.size for p in rows if p.type.size} == section50._FIXED_SIZE
    assert set(section50._STRING_RULES) == {
        p.identifier for p in rows if p.type is DataType.UTF8_ENCODED_STRING
    }
    constants = {
        section50._PFI: "payload_format_indicator", section50._MEI: "message_expiry_interval",
        section50._CONTENT_TYPE: "content_type", section50._RESPONSE_TOPIC: "response_topic",
        section50._CORRELATION: "correlation_data_hex",
        section50._SUB_ID: "subscription_identifiers", section50._REASON_STRING: "reason_string",
        section50._TOPIC_ALIAS: "topic_alias", section50._USER: "user_properties",
    }  # fmt: skip
    assert {i: BY_IDENTIFIER[i].key for i in constants} == constants
    assert {p.identifier: p.type for p in rows} == section50._READ_AS


def test_the_proofs_tables() -> None:
    from pubproof.proofs import pfi_symbolic, properties_symbolic, variant, wire50_properties

    rows = _publish_and_acks()
    assert tuple((p.identifier, p.type.code) for p in rows) == variant.STANDARD_PROPERTIES
    assert variant.MODEL.properties == variant.STANDARD_PROPERTIES
    assert variant.MODEL.once_by_reading == (0x01, 0x02)
    assert {p.identifier: p.key for p in rows} == properties_symbolic.KEYS
    assert {"user_properties", "subscription_identifiers"} == properties_symbolic.LISTED
    assert properties_symbolic.FIXED == {"byte": 1, "two": 2, "four": 4}
    assert {0x1F} == wire50_properties.ACK_ONLY
    assert {0x01, 0x02, 0x03, 0x08, 0x09, 0x0B, 0x23} == wire50_properties.PUBLISH_ONLY
    assert set(wire50_properties.SAMPLE_SIZES) == {t.code for t in DataType}
    assert (pfi_symbolic.PFI, pfi_symbolic.MEI) == (0x01, 0x02)


def test_the_benchmarks_writer() -> None:
    """The benchmark's independent writer of 5.0 streams gives the encoders' bytes for
    packets with every property of PUBLISH and of an acknowledgement."""
    bench = load_benchmark("codec_streams")
    packets: list[Publish | PubAck] = [
        Publish(topic="a", qos=1, packet_id=9, payload=b"x", properties=_every_publish_property()),
        PubAck(packet_id=1, reason_code=0x10,
               properties=AckProperties(reason_string="r", user_properties=(("k", "v"),))),
    ]  # fmt: skip
    for packet in packets:
        assert bench.encode5(to_p(packet)) == encode(packet, edition=Edition.V50)
    with pytest.raises(ValueError, match="no propert"):
        bench.encode5({"type": "PUBACK", "packet_id": 1, "properties": {"topic_alias": 1}})


def test_the_tests_helpers_and_the_synthetic_generator() -> None:
    from support.live50 import PROPERTY_IDS

    from pubproof.pipeline.synth import mqtt5

    assert {BY_KEY[key].identifier: key for key in PROPERTY_IDS} == {
        p.identifier: p.key for p in PROPERTIES
    }
    # the keys the synthetic 5.0 connections declare are properties of their packets
    assert set(mqtt5.CLIENT_DECLARES) <= {p.key for p in of("CONNECT")}
    assert set(mqtt5.SERVER_DECLARES) <= {p.key for p in of("CONNACK")}
    assert "subscription_identifiers" in {p.key for p in of("SUBSCRIBE")}


def test_the_judges_table_of_every_packet() -> None:
    """judge.properties reads the packets beyond PUBLISH with rows from the table: they say
    what the table says (identifier, name, key, type, packets, where a property repeats)."""
    from pubproof.judge import properties as judged

    assert {i: (p.name, p.key, p.type) for i, p in judged.ALL.items()} == {
        p.identifier: (p.name, p.key, p.type.code) for p in PROPERTIES
    }
    packets = {WILL if name == "WILL" else name: set(rows) for name, rows in judged.TABLES.items()}
    assert packets == {packet: set(identifiers(packet)) for packet in PROPERTY_SECTIONS}
    # a property repeats only where the table lets it: a Subscription Identifier in
    # PUBLISH, never in SUBSCRIBE ("It is a Protocol Error to include the Subscription
    # Identifier more than once", 3.8.2.1.2)
    assert judged.read(b"\x04\x0b\x01\x0b\x02", 0, "PUBLISH")[0] == {
        "subscription_identifiers": [1, 2]
    }
    with pytest.raises(judged.PropertyError) as refused:
        judged.read(b"\x04\x0b\x01\x0b\x02", 0, "SUBSCRIBE")
    assert (refused.value.rule, refused.value.offset) == ("PP50-2.2.2-property-once", 3)
    assert judged.ONCE["SUBSCRIBE"] == {0x0B} and not judged.ONCE["PUBLISH"]


def test_the_module_documents_the_order_as_pubproofs_choice() -> None:
    assert table.__doc__ is not None and "pubproof's choice" in table.__doc__


GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guides" / "mqtt5-wire.md"


def test_the_wire_guides_property_table() -> None:
    """docs/guides/mqtt5-wire.md lists the properties of PUBLISH and the acknowledgements
    by hand, with what the contract adds (ranges, repeats): its identifiers, names, types
    and packets are the table's."""
    text = GUIDE.read_text(encoding="utf-8")
    section = text.split("### Properties", 1)[1].split("\n\n", 2)[1]
    found = {}
    for line in section.splitlines()[2:]:
        hexa, name, kind, carried, repeat = (c.strip() for c in line.strip("|").split("|"))
        found[int(hexa, 16)] = (name, kind.split(",")[0], carried, repeat)
    expected = {}
    for p in _publish_and_acks():
        publish, ack = "PUBLISH" in p.packets, ACKS[0] in p.packets
        carried = "both" if publish and ack else "PUBLISH" if publish else "acknowledgements"
        repeatable = bool({"PUBLISH", *ACKS} & set(p.repeatable_in))
        expected[p.identifier] = (p.name, p.type.title, carried, repeatable)
    assert {i: (n, k, c) for i, (n, k, c, _) in found.items()} == {
        i: (n, k, c) for i, (n, k, c, _) in expected.items()
    }
    for identifier, (*_, repeat) in found.items():
        assert repeat.startswith("repeatable") == expected[identifier][3], identifier


def test_the_wire_guide_states_the_encoders_order() -> None:
    text = " ".join(GUIDE.read_text(encoding="utf-8").split())
    stated = text.split("Properties are written in one fixed order: ", 1)[1]
    publish, ack = stated.split("; in an acknowledgement, ", 1)
    for order, sentence in ((PUBLISH_ORDER, publish), (ACK_ORDER, ack)):
        # "the User Properties": the name less its "y" finds the plural too
        at = [sentence.index(BY_IDENTIFIER[i].name.removesuffix("y")) for i in order]
        assert at == sorted(at)
