"""MQTT 5.0 in pubproof.judge.packets: type 15, the descriptions of every 5.0 control packet
and the encoders, with 3.x unchanged."""

from __future__ import annotations

from typing import Any

import pytest

from pubproof.judge import packets as P
from pubproof.judge import packets50, properties
from pubproof.judge.limits import DEFAULT, Declared, Negotiated, declared, too_large
from pubproof.model.editions import Edition, Limits

V5, V311, V31 = Edition.V50, Edition.V311, Edition.V31


def read(data: bytes, edition: Edition | None = V5) -> dict[str, Any]:
    header = P.header_length(data)
    assert header is not None
    start, remaining = header
    assert len(data) == start + remaining
    return P.describe(data[0], data[start:], edition)


def test_protocol_levels_and_auth() -> None:
    assert P.PROTOCOL[V5] == ("MQTT", 5)
    assert P.LEVELS == {3: V31, 4: V311, 5: V5}
    # type 15 is AUTH in 5.0 only
    assert P.type_name(0xF0) == "RESERVED-15"
    assert P.type_name(0xF0, V311) == "RESERVED-15"
    assert P.type_name(0xF0, V5) == "AUTH"
    assert 15 not in P.TYPE_NAMES and 15 not in P.CONTROL_TYPES
    assert P.control_types(V5)[15] == "AUTH" and 15 not in P.control_types(V311)
    assert P.reserved_types(V311) == {0, 15} and P.reserved_types(V5) == {0}


def test_3x_descriptions_and_encoders_unchanged() -> None:
    connect = P.connect("c", clean=True)
    assert connect == bytes.fromhex("100d00044d5154540402003c000163")
    assert read(connect, None) == {
        "type": "CONNECT", "protocol": "MQTT", "level": 4, "clean_session": True,
        "keep_alive": 60, "client_id": "c",
    }  # fmt: skip
    assert read(P.connack(session_present=True, return_code=0), V311) == {
        "type": "CONNACK", "session_present": True, "return_code": 0,
    }  # fmt: skip
    assert read(P.suback(1, [1]), None) == {"type": "SUBACK", "packet_id": 1, "granted": [1]}
    assert P.subscribe(1, [("a", 1)]) == bytes.fromhex("8206000100016101")
    with pytest.raises(ValueError):
        P.connect("c", clean=True, properties={"receive_maximum": 1})


CONNECT_PROPERTIES = {
    "session_expiry_interval": 30,
    "receive_maximum": 5,
    "maximum_packet_size": 1000,
    "topic_alias_maximum": 3,
    "request_response_information": 1,
    "request_problem_information": 0,
    "user_properties": [["b", "2"], ["a", "1"], ["b", "2"]],
    "authentication_method": "m",
    "authentication_data_hex": "00ff",
}


def test_connect_round_trip_with_will_and_properties() -> None:
    will = {
        "qos": 1, "retain": True, "topic": "w/t", "payload_hex": "6869",
        "properties": {
            "will_delay_interval": 5, "payload_format_indicator": 1,
            "message_expiry_interval": 9, "content_type": "text/plain",
            "response_topic": "r", "correlation_data_hex": "0a0b",
            "user_properties": [["k", "v"]],
        },
    }  # fmt: skip
    data = P.connect("c1", clean=False, keep_alive=7, edition=V5, properties=CONNECT_PROPERTIES,
                     will=will)  # fmt: skip
    got = read(data)
    assert got["type"] == "CONNECT" and got["level"] == 5 and got["protocol"] == "MQTT"
    assert got["clean_start"] is False and "clean_session" not in got
    assert got["keep_alive"] == 7 and got["client_id"] == "c1"
    assert got["properties"] == CONNECT_PROPERTIES
    # user properties keep their order and repeats
    assert got["properties"]["user_properties"] == [["b", "2"], ["a", "1"], ["b", "2"]]
    assert got["will"] == will
    assert got["user_name"] is None and got["password"] is False


def test_connect_user_name_and_password() -> None:
    # flags: user name, password, Clean Start; no properties
    body = (
        b"\x00\x04MQTT\x05" + bytes((0xC2,)) + b"\x00\x0a" + b"\x00" + b"\x00\x01c"
        + b"\x00\x02me" + b"\x00\x03pwd"
    )  # fmt: skip
    got = P.describe(0x10, body, V5)
    assert got["user_name"] == "me" and got["password"] is True
    assert "pwd" not in repr(got)


def test_connack_reason_and_properties() -> None:
    properties = {
        "session_expiry_interval": 0, "receive_maximum": 20, "maximum_qos": 1,
        "retain_available": 0, "maximum_packet_size": 4096,
        "assigned_client_identifier": "auto-1", "topic_alias_maximum": 10,
        "reason_string": "ok", "user_properties": [["x", "y"]],
        "wildcard_subscription_available": 0, "subscription_identifier_available": 1,
        "shared_subscription_available": 0, "server_keep_alive": 30,
        "response_information": "ri", "server_reference": "other",
        "authentication_method": "m", "authentication_data_hex": "",
    }  # fmt: skip
    data = P.connack(session_present=True, return_code=0x00, edition=V5, properties=properties)
    assert read(data) == {
        "type": "CONNACK", "session_present": True, "reason_code": 0, "properties": properties,
    }  # fmt: skip
    refused = P.connack(session_present=False, return_code=0x87, edition=V5)
    assert refused == bytes.fromhex("2003008700")
    assert read(refused)["reason_code"] == 0x87


def test_subscribe_options_and_identifier() -> None:
    subscriptions: list[tuple[str, int] | dict[str, Any]] = [
        ("a/#", 1),
        {"filter": "b", "qos": 2, "no_local": True, "retain_as_published": True,
         "retain_handling": 2},
        {"filter": "c", "qos": 0, "no_local": False, "retain_as_published": False,
         "retain_handling": 1},
    ]  # fmt: skip
    data = P.subscribe(9, subscriptions, edition=V5,
                       properties={"subscription_identifiers": [300]})  # fmt: skip
    assert data[0] == 0x82
    got = read(data)
    assert got["packet_id"] == 9 and got["subscription_identifier"] == 300
    assert got["properties"] == {"subscription_identifiers": [300]}
    assert got["subscriptions"] == [
        {"filter": "a/#", "qos": 1, "no_local": False, "retain_as_published": False,
         "retain_handling": 0},
        subscriptions[1], subscriptions[2],
    ]  # fmt: skip
    # options byte: QoS 2, No Local, Retain As Published, Retain Handling 2
    assert data.endswith(b"\x00\x01c\x10")
    assert b"\x00\x01b\x2e" in data
    plain = read(P.subscribe(1, [("t", 0)], edition=V5))
    assert plain["subscription_identifier"] is None and plain["properties"] == {}


@pytest.mark.parametrize("options", [0x40, 0x80, 0x03, 0x30])
def test_subscribe_invalid_options(options: int) -> None:
    body = b"\x00\x01\x00" + b"\x00\x01t" + bytes((options,))
    got = P.describe(0x82, body, V5)
    assert got["type"] == "SUBSCRIBE" and got["error"]["offset"] == 6


def test_suback_unsubscribe_unsuback() -> None:
    assert read(P.suback(3, [0, 1, 2, 0x80, 0x97], edition=V5,
                         properties={"reason_string": "r"})) == {
        "type": "SUBACK", "packet_id": 3, "properties": {"reason_string": "r"},
        "reason_codes": [0, 1, 2, 0x80, 0x97],
    }  # fmt: skip
    data = P.unsubscribe(4, ["a", "b/+"], edition=V5, properties={"user_properties": [["u", "v"]]})
    assert data[0] == 0xA2
    assert read(data) == {
        "type": "UNSUBSCRIBE", "packet_id": 4, "properties": {"user_properties": [["u", "v"]]},
        "filters": ["a", "b/+"],
    }  # fmt: skip
    assert read(P.unsuback(4, [0x00, 0x11])) == {
        "type": "UNSUBACK", "packet_id": 4, "properties": {}, "reason_codes": [0, 0x11],
    }  # fmt: skip
    assert P.unsubscribe(4, ["a"]) == bytes.fromhex("a20500040001") + b"a"


def test_disconnect_and_auth() -> None:
    assert P.disconnect() == P.DISCONNECT == bytes.fromhex("e000")
    assert read(P.DISCONNECT) == {"type": "DISCONNECT", "reason_code": 0, "properties": {}}
    assert read(P.DISCONNECT, V311) == {"type": "DISCONNECT"}
    assert read(bytes.fromhex("e0018e")) == {
        "type": "DISCONNECT", "reason_code": 0x8E, "properties": {},
    }  # fmt: skip
    data = P.disconnect(0x93, {"reason_string": "too many", "session_expiry_interval": 0,
                              "server_reference": "s"})  # fmt: skip
    assert read(data) == {
        "type": "DISCONNECT", "reason_code": 0x93,
        "properties": {"session_expiry_interval": 0, "reason_string": "too many",
                       "server_reference": "s"},
    }  # fmt: skip
    assert read(P.auth()) == {"type": "AUTH", "reason_code": 0, "properties": {}}
    got = read(P.auth(0x18, {"authentication_method": "SCRAM", "authentication_data_hex": "01"}))
    assert got == {
        "type": "AUTH", "reason_code": 0x18,
        "properties": {"authentication_method": "SCRAM", "authentication_data_hex": "01"},
    }  # fmt: skip
    assert read(P.PINGREQ) == {"type": "PINGREQ"} and read(P.PINGRESP) == {"type": "PINGRESP"}


@pytest.mark.parametrize(
    ("first", "body", "rule", "offset"),
    [
        # a property identifier CONNACK may not carry (Topic Alias)
        (0x20, bytes.fromhex("0000" "03" "230001"), "PP50-2.2.2-property-identifier", 3),
        # the Property Length runs past the packet
        (0x20, bytes.fromhex("0000" "05" "2401"), "PP50-2.2.2-property-length", 2),
        # Receive Maximum twice
        (0x20, bytes.fromhex("0000" "06" "21000a21000b"), "PP50-2.2.2-property-once", 6),
        # a value that runs past the section
        (0xE0, bytes.fromhex("00" "02" "1100"), "PP50-2.2.2-property-value", 2),
        # a User Property with ill-formed UTF-8
        (0xE0, bytes.fromhex("00" "07" "260001ff000161"), "MQTT-1.5.7-1", 5),
        # a Subscription Identifier of 0 in SUBSCRIBE
        (0x82, bytes.fromhex("0001" "02" "0b00" "000174" "00"),
         "PP50-3.3.2-subscription-identifier-zero", 3),
        # a non-minimal Property Length
        (0xE0, bytes.fromhex("00" "8000"), "MQTT-1.5.5-1", 1),
    ],
)  # fmt: skip
def test_property_errors_name_the_model_rule(
    first: int, body: bytes, rule: str, offset: int
) -> None:
    got = P.describe(first, body, V5)
    assert got["type"] == P.control_types(V5)[first >> 4]
    assert got["error"]["rule"] == rule
    assert got["error"]["offset"] == offset
    assert got["error"]["message"]


@pytest.mark.parametrize(
    ("first", "body"),
    [
        (0x20, b"\x00"),  # CONNACK without its Reason Code
        (0x20, b"\x00\x00"),  # CONNACK without its Property Length
        (0x90, b"\x00"),  # SUBACK without its identifier
        (0xE0, b"\x00\x00\x00"),  # DISCONNECT with a byte after its properties
        (0x10, b"\x00\x04MQTT\x05\x02\x00\x0a\x00\x00\x05"),  # client id runs past
    ],
)
def test_unreadable_bodies(first: int, body: bytes) -> None:
    got = P.describe(first, body, V5)
    assert set(got) == {"type", "error"}
    assert got["error"]["rule"] is None and 0 <= got["error"]["offset"] <= len(body)


def test_every_property_of_table_2_4_round_trips() -> None:
    samples = {"byte": 1, "two": 513, "four": 70000, "varint": 200, "string": "s",
               "binary": "beef", "pair": [["n", "v"]]}  # fmt: skip
    for packet, table in properties.TABLES.items():
        values: dict[str, Any] = {}
        for spec in table.values():
            value: Any = samples[spec.type]
            if spec.repeatable and spec.type != "pair":
                value = [value]
            values[spec.key] = value
        values.pop("topic_alias", None)  # PUBLISH's: judged against the receiver's limits
        section = properties.encode(packet, values)
        got, end = properties.read(section, 0, packet)
        assert got == values and end == len(section), packet
    assert len(properties.ALL) == 27  # Table 2-4 has 27 properties


def test_unknown_property_key_is_refused_by_the_writer() -> None:
    with pytest.raises(ValueError):
        properties.encode("CONNACK", {"topic_alias": 1})
    with pytest.raises(ValueError):
        P.disconnect(0x80, {"receive_maximum": 1})


def test_packets50_names_cover_every_control_type() -> None:
    assert set(packets50.NAMES.values()) == set(P.CONTROL_TYPES_V50.values())


# -- limits --------------------------------------------------------------------------------


def test_limits_defaults() -> None:
    assert DEFAULT.client == DEFAULT.server == Declared()
    assert Declared().receive_maximum == 65535 and Declared().topic_alias_maximum == 0
    assert Declared().maximum_packet_size is None
    assert DEFAULT.maximum_qos == 2 and DEFAULT.retain_available is True
    assert DEFAULT.limits_for("c2s") == Limits() == DEFAULT.limits_for("s2c")


def test_limits_from_connect_and_connack() -> None:
    connect = read(P.connect("c", clean=True, edition=V5, properties=CONNECT_PROPERTIES))
    connack = read(P.connack(session_present=False, return_code=0, edition=V5, properties={
        "receive_maximum": 2, "topic_alias_maximum": 7, "maximum_packet_size": 300,
        "maximum_qos": 0, "retain_available": 0,
    }))  # fmt: skip
    negotiated = DEFAULT.with_connect(connect)
    assert negotiated.client == Declared(
        receive_maximum=5, topic_alias_maximum=3, maximum_packet_size=1000
    )
    assert negotiated.server == Declared()
    negotiated = negotiated.with_connack(connack)
    assert negotiated.server == Declared(
        receive_maximum=2, topic_alias_maximum=7, maximum_packet_size=300
    )
    assert negotiated.maximum_qos == 0 and negotiated.retain_available is False
    # each direction is decoded with its receiver's limits
    assert negotiated.limits_for("s2c") == Limits(topic_alias_maximum=3, maximum_packet_size=1000)
    assert negotiated.limits_for("c2s") == Limits(topic_alias_maximum=7, maximum_packet_size=300)
    assert negotiated.receiver("c2s") is negotiated.server
    # a new CONNECT forgets the server's declarations
    again = negotiated.with_connect(connect)
    assert again.server == Declared() and again.maximum_qos == 2 and again.retain_available
    with pytest.raises(ValueError):
        negotiated.receiver("up")


def test_invalid_declarations_declare_nothing() -> None:
    got = declared({"receive_maximum": 0, "maximum_packet_size": 0, "topic_alias_maximum": -1})
    assert got == Declared()
    negotiated = DEFAULT.with_connack({"properties": {"maximum_qos": 2, "retain_available": 5}})
    assert negotiated.maximum_qos == 2 and negotiated.retain_available is True


def test_too_large() -> None:
    negotiated = Negotiated(client=Declared(maximum_packet_size=10))
    assert too_large(10, "s2c", negotiated) is None
    found = too_large(11, "s2c", negotiated, role="server")
    assert found is not None
    assert found.verdict == "violation" and found.source == "wire" and found.role == "server"
    assert found.rules == ("PP50-3.1.2-packet-too-large", "MQTT-3.1.2-24")
    assert [r.key for r in found.cited(V5)] == ["packet.too-large"]
    assert too_large(10**6, "c2s", negotiated) is None
    server = Negotiated(server=Declared(maximum_packet_size=4))
    found = too_large(5, "c2s", server)
    assert found is not None and found.rules[1] == "MQTT-3.2.2-15"


def test_wire_limits_are_kept_per_pair_of_values_and_invalid_ones_never() -> None:
    """:meth:`Declared.wire_limits` gives one object per pair of values (the same limits
    as made afresh), and refuses what Limits refuses every time, a bool included (equal
    to 1 as a key, yet not a Two Byte Integer)."""
    first = Declared(topic_alias_maximum=3, maximum_packet_size=1000).wire_limits()
    again = Declared(topic_alias_maximum=3, maximum_packet_size=1000).wire_limits()
    assert first is again
    assert first == Limits(topic_alias_maximum=3, maximum_packet_size=1000)
    assert Declared(topic_alias_maximum=1).wire_limits() == Limits(topic_alias_maximum=1)
    for bad in ({"topic_alias_maximum": True}, {"topic_alias_maximum": 0x10000},
                {"maximum_packet_size": 0}, {"maximum_packet_size": True}):  # fmt: skip
        for _ in range(2):
            with pytest.raises(ValueError):
                Declared(**bad)
