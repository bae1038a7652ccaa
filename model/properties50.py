"""MQTT 5.0's properties, Table 2-4 of the standard (section 2.2.2.2), as data.

Rules / theory of operation
---------------------------
"A Property consists of an Identifier which defines its usage and data type, followed by a
value." (2.2.2.2) Table 2-4 lists the 27 of them: identifier, name, data type, and the
packets (and the Will Properties of CONNECT) each may appear in. :data:`PROPERTIES` holds
every row, each also with what the standard says about it elsewhere: the section that
describes it in each packet, the packets in which it may appear more than once, and the
key pubproof's JSON form ``P`` gives it (:mod:`pubproof.model.trace`).

This module is the one place these facts are written. What the rest of pubproof needs of
them is derived from it when it is imported, never copied: the model's property tables
(:mod:`pubproof.model.wire50`) and the keys of ``P`` (:mod:`pubproof.model.trace`), the
reference decoder's identifier sets, names and value sizes, the Z3 table of the proofs, the
benchmark's independent stream writer. ``tests/test_properties50.py`` checks the table
against the standard's text and every derived table against the table.

One thing here is pubproof's choice and not the standard's: the order the encoders write
properties in (:data:`PUBLISH_ORDER`, :data:`ACK_ORDER`). "There is no significance in the
order of Properties with different Identifiers." (2.2.2.2) pubproof writes one fixed order
so that its encoders (the model's and the reference's) give the same bytes.

The rows validate themselves (identifiers of one byte, sections inside the packet's
properties section, a key fit for ``P``), and so does the table (no identifier, name or
key twice; the orders are orders of exactly the packets' properties): a wrong edit fails
at import.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from pubproof.model.editions import READINGS


class DataType(enum.Enum):
    """A data type of section 1.5 as Table 2-4 names it, with pubproof's short code for it
    (the ``type`` of :class:`pubproof.model.wire50.Property`, the kinds of the proofs),
    the size of a fixed-size value, and the section that defines it."""

    BYTE = ("Byte", "byte", 1, "1.5.1")
    TWO_BYTE_INTEGER = ("Two Byte Integer", "two", 2, "1.5.2")
    FOUR_BYTE_INTEGER = ("Four Byte Integer", "four", 4, "1.5.3")
    UTF8_ENCODED_STRING = ("UTF-8 Encoded String", "string", None, "1.5.4")
    VARIABLE_BYTE_INTEGER = ("Variable Byte Integer", "varint", None, "1.5.5")
    BINARY_DATA = ("Binary Data", "binary", None, "1.5.6")
    UTF8_STRING_PAIR = ("UTF-8 String Pair", "pair", None, "1.5.7")

    title: str  # as Table 2-4 writes it
    code: str
    size: int | None  # bytes of a fixed-size value; None: the value says its length
    section: str

    def __init__(self, title: str, code: str, size: int | None, section: str) -> None:
        self.title = title
        self.code = code
        self.size = size
        self.section = section


#: The Will Properties of CONNECT's payload, a column of Table 2-4 beside the packets.
WILL = "Will Properties"
#: Each packet with properties (and the Will Properties), in the order Table 2-4's User
#: Property row lists them, with the section that describes its properties one by one.
PROPERTY_SECTIONS: Mapping[str, str] = MappingProxyType(
    {
        "CONNECT": "3.1.2.11",
        "CONNACK": "3.2.2.3",
        "PUBLISH": "3.3.2.3",
        WILL: "3.1.3.2",
        "PUBACK": "3.4.2.2",
        "PUBREC": "3.5.2.2",
        "PUBREL": "3.6.2.2",
        "PUBCOMP": "3.7.2.2",
        "SUBSCRIBE": "3.8.2.1",
        "SUBACK": "3.9.2.1",
        "UNSUBSCRIBE": "3.10.2.1",
        "UNSUBACK": "3.11.2.1",
        "DISCONNECT": "3.14.2.2",
        "AUTH": "3.15.2.2",
    }
)
#: The acknowledgements of PUBLISH, which have the same properties (3.4.2.2 to 3.7.2.2).
ACKS = ("PUBACK", "PUBREC", "PUBREL", "PUBCOMP")

_KEY = re.compile(r"[a-z][a-z0-9_]*")


class TableError(ValueError):
    """A row of the property table, or the table, that contradicts itself."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PropertyRow:
    """One row of Table 2-4, with what the standard says of the property elsewhere."""

    identifier: int
    name: str  # "Name (usage)" as Table 2-4 writes it
    key: str  # its key in P's "properties" (binary values as hex: the key ends "_hex")
    type: DataType
    #: (packet or WILL, the section describing the property there), in Table 2-4's order
    where: tuple[tuple[str, str], ...]
    #: the packets in which the standard lets it appear more than once (elsewhere: "It is a
    #: Protocol Error to include the ... more than once")
    repeatable_in: tuple[str, ...] = ()
    #: the reading (model.editions) that decides a repeat the standard's text leaves open
    once_reading: str | None = None

    def __post_init__(self) -> None:
        def wrong(message: str) -> TableError:
            return TableError(f"property 0x{self.identifier:02X} ({self.name}): {message}")

        # 2.2.2.2 non-normative: "in this version of the specification all of the Property
        # Identifiers are one byte long" (a Variable Byte Integer of one byte: 1 to 127)
        if type(self.identifier) is not int or not 0 < self.identifier < 0x80:
            raise TableError(f"identifier {self.identifier!r} is not one from 1 to 127")
        if not self.name or self.name != self.name.strip():
            raise wrong("the name is empty or padded")
        if not _KEY.fullmatch(self.key):
            raise wrong(f"the key {self.key!r} is not a snake_case name")
        if not isinstance(self.type, DataType):
            raise wrong(f"the type {self.type!r} is not a DataType")
        if (self.type is DataType.BINARY_DATA) != self.key.endswith("_hex"):
            raise wrong("P writes Binary Data, and only Binary Data, as hex: its key ends _hex")
        packets = self.packets
        if not packets or len(set(packets)) != len(packets):
            raise wrong("it appears in no packet, or in one twice")
        for packet, section in self.where:
            if packet not in PROPERTY_SECTIONS:
                raise wrong(f"{packet!r} is not a packet with properties")
            if not section.startswith(PROPERTY_SECTIONS[packet] + "."):
                raise wrong(f"section {section} is not in {packet}'s properties")
        if not set(self.repeatable_in) <= set(packets):
            raise wrong("it is repeatable in a packet it may not appear in")
        if self.once_reading is not None and self.once_reading not in READINGS:
            raise wrong(f"{self.once_reading!r} is not a reading")

    @property
    def packets(self) -> tuple[str, ...]:
        """The packets (and WILL) it may appear in, as Table 2-4's last column."""
        return tuple(packet for packet, _ in self.where)

    def section(self, packet: str) -> str:
        """The section describing the property in ``packet``."""
        return dict(self.where)[packet]


def _row(
    identifier: int,
    name: str,
    key: str,
    data_type: DataType,
    *where: tuple[str, str],
    repeatable_in: tuple[str, ...] = (),
    once_reading: str | None = None,
) -> PropertyRow:
    return PropertyRow(
        identifier=identifier, name=name, key=key, type=data_type, where=where,
        repeatable_in=repeatable_in, once_reading=once_reading,
    )  # fmt: skip


_B, _2, _4 = DataType.BYTE, DataType.TWO_BYTE_INTEGER, DataType.FOUR_BYTE_INTEGER
_VBI, _BIN = DataType.VARIABLE_BYTE_INTEGER, DataType.BINARY_DATA
_STR, _PAIR = DataType.UTF8_ENCODED_STRING, DataType.UTF8_STRING_PAIR
#: the User Property's packets: every one with properties (2.2.2.2, Table 2-4)
_EVERY = tuple(PROPERTY_SECTIONS)

#: MQTT 5.0 Table 2-4 (section 2.2.2.2), row by row, in the standard's order.
PROPERTIES: tuple[PropertyRow, ...] = (
    # The standard's PUBLISH section says of these two neither that they may appear more
    # than once nor that they may not (the Will Properties say the latter): reading
    # pfi-mei-once (model.editions) decides.
    _row(0x01, "Payload Format Indicator", "payload_format_indicator", _B,
         ("PUBLISH", "3.3.2.3.2"), (WILL, "3.1.3.2.3"), once_reading="pfi-mei-once"),
    _row(0x02, "Message Expiry Interval", "message_expiry_interval", _4,
         ("PUBLISH", "3.3.2.3.3"), (WILL, "3.1.3.2.4"), once_reading="pfi-mei-once"),
    _row(0x03, "Content Type", "content_type", _STR,
         ("PUBLISH", "3.3.2.3.9"), (WILL, "3.1.3.2.5")),
    _row(0x08, "Response Topic", "response_topic", _STR,
         ("PUBLISH", "3.3.2.3.5"), (WILL, "3.1.3.2.6")),
    _row(0x09, "Correlation Data", "correlation_data_hex", _BIN,
         ("PUBLISH", "3.3.2.3.6"), (WILL, "3.1.3.2.7")),
    # "Multiple Subscription Identifiers will be included if the publication is the result
    # of a match to more than one subscription" (3.3.2.3.8); "It is a Protocol Error to
    # include the Subscription Identifier more than once." (3.8.2.1.2, SUBSCRIBE)
    _row(0x0B, "Subscription Identifier", "subscription_identifiers", _VBI,
         ("PUBLISH", "3.3.2.3.8"), ("SUBSCRIBE", "3.8.2.1.2"), repeatable_in=("PUBLISH",)),
    _row(0x11, "Session Expiry Interval", "session_expiry_interval", _4,
         ("CONNECT", "3.1.2.11.2"), ("CONNACK", "3.2.2.3.2"), ("DISCONNECT", "3.14.2.2.2")),
    _row(0x12, "Assigned Client Identifier", "assigned_client_identifier", _STR,
         ("CONNACK", "3.2.2.3.7")),
    _row(0x13, "Server Keep Alive", "server_keep_alive", _2, ("CONNACK", "3.2.2.3.14")),
    _row(0x15, "Authentication Method", "authentication_method", _STR,
         ("CONNECT", "3.1.2.11.9"), ("CONNACK", "3.2.2.3.17"), ("AUTH", "3.15.2.2.2")),
    _row(0x16, "Authentication Data", "authentication_data_hex", _BIN,
         ("CONNECT", "3.1.2.11.10"), ("CONNACK", "3.2.2.3.18"), ("AUTH", "3.15.2.2.3")),
    _row(0x17, "Request Problem Information", "request_problem_information", _B,
         ("CONNECT", "3.1.2.11.7")),
    _row(0x18, "Will Delay Interval", "will_delay_interval", _4, (WILL, "3.1.3.2.2")),
    _row(0x19, "Request Response Information", "request_response_information", _B,
         ("CONNECT", "3.1.2.11.6")),
    _row(0x1A, "Response Information", "response_information", _STR,
         ("CONNACK", "3.2.2.3.15")),
    _row(0x1C, "Server Reference", "server_reference", _STR,
         ("CONNACK", "3.2.2.3.16"), ("DISCONNECT", "3.14.2.2.5")),
    _row(0x1F, "Reason String", "reason_string", _STR,
         ("CONNACK", "3.2.2.3.9"), ("PUBACK", "3.4.2.2.2"), ("PUBREC", "3.5.2.2.2"),
         ("PUBREL", "3.6.2.2.2"), ("PUBCOMP", "3.7.2.2.2"), ("SUBACK", "3.9.2.1.2"),
         ("UNSUBACK", "3.11.2.1.2"), ("DISCONNECT", "3.14.2.2.3"), ("AUTH", "3.15.2.2.4")),
    _row(0x21, "Receive Maximum", "receive_maximum", _2,
         ("CONNECT", "3.1.2.11.3"), ("CONNACK", "3.2.2.3.3")),
    _row(0x22, "Topic Alias Maximum", "topic_alias_maximum", _2,
         ("CONNECT", "3.1.2.11.5"), ("CONNACK", "3.2.2.3.8")),
    _row(0x23, "Topic Alias", "topic_alias", _2, ("PUBLISH", "3.3.2.3.4")),
    _row(0x24, "Maximum QoS", "maximum_qos", _B, ("CONNACK", "3.2.2.3.4")),
    _row(0x25, "Retain Available", "retain_available", _B, ("CONNACK", "3.2.2.3.5")),
    # "The User Property is allowed to appear multiple times to represent multiple name,
    # value pairs." (3.1.2.11.8, and likewise in every packet)
    _row(0x26, "User Property", "user_properties", _PAIR,
         ("CONNECT", "3.1.2.11.8"), ("CONNACK", "3.2.2.3.10"), ("PUBLISH", "3.3.2.3.7"),
         (WILL, "3.1.3.2.8"), ("PUBACK", "3.4.2.2.3"), ("PUBREC", "3.5.2.2.3"),
         ("PUBREL", "3.6.2.2.3"), ("PUBCOMP", "3.7.2.2.3"), ("SUBSCRIBE", "3.8.2.1.3"),
         ("SUBACK", "3.9.2.1.3"), ("UNSUBSCRIBE", "3.10.2.1.2"),
         ("UNSUBACK", "3.11.2.1.3"), ("DISCONNECT", "3.14.2.2.4"), ("AUTH", "3.15.2.2.5"),
         repeatable_in=_EVERY),
    _row(0x27, "Maximum Packet Size", "maximum_packet_size", _4,
         ("CONNECT", "3.1.2.11.4"), ("CONNACK", "3.2.2.3.6")),
    _row(0x28, "Wildcard Subscription Available", "wildcard_subscription_available", _B,
         ("CONNACK", "3.2.2.3.11")),
    _row(0x29, "Subscription Identifier Available", "subscription_identifier_available", _B,
         ("CONNACK", "3.2.2.3.12")),
    _row(0x2A, "Shared Subscription Available", "shared_subscription_available", _B,
         ("CONNACK", "3.2.2.3.13")),
)  # fmt: skip

#: every row by its identifier, and by its key
BY_IDENTIFIER: Mapping[int, PropertyRow] = MappingProxyType({p.identifier: p for p in PROPERTIES})
BY_KEY: Mapping[str, PropertyRow] = MappingProxyType({p.key: p for p in PROPERTIES})


def of(packet: str) -> tuple[PropertyRow, ...]:
    """The rows of the properties ``packet`` (or WILL) may carry, in identifier order."""
    if packet not in PROPERTY_SECTIONS:
        raise KeyError(f"{packet!r} is not a packet with properties")
    return tuple(p for p in PROPERTIES if packet in p.packets)


def identifiers(packet: str) -> frozenset[int]:
    """The identifiers valid in ``packet`` (or WILL): any other makes it a Malformed Packet
    (2.2.2.2)."""
    return frozenset(p.identifier for p in of(packet))


# --- pubproof's choice: the order of the encoders -----------------------------------------

#: The order pubproof's encoders write a PUBLISH's properties in (by identifier), the order
#: of the keys of P's "properties" (model.trace.PUBLISH_PROPERTY_KEYS) and of the fields of
#: the reference's PublishProperties. A choice, not the standard's (2.2.2.2: "There is no
#: significance in the order of Properties with different Identifiers."); written here
#: once, and the contract of docs/guides/mqtt5-wire.md ("Encoding").
PUBLISH_ORDER: tuple[int, ...] = (0x01, 0x02, 0x23, 0x08, 0x09, 0x26, 0x0B, 0x03)
#: The same for PUBACK, PUBREC, PUBREL and PUBCOMP.
ACK_ORDER: tuple[int, ...] = (0x1F, 0x26)


def check_table(
    rows: Sequence[PropertyRow], publish_order: Sequence[int], ack_order: Sequence[int]
) -> None:
    """What no single row can see: the table as a whole (run on this module's at import).
    :class:`TableError` when a value is in two rows, the rows are out of the standard's
    order, the acknowledgements differ, or an order is not one of its packet's properties."""
    for what, values in (
        ("identifier", [p.identifier for p in rows]),
        ("name", [p.name for p in rows]),
        ("key", [p.key for p in rows]),
    ):
        if len(set(values)) != len(values):
            raise TableError(f"a {what} appears in two rows")
    if [p.identifier for p in rows] != sorted(p.identifier for p in rows):
        raise TableError("the rows are not in the standard's order (by identifier)")

    def carried(packet: str) -> list[int]:
        return [p.identifier for p in rows if packet in p.packets]

    for ack in ACKS[1:]:
        if carried(ack) != carried(ACKS[0]):
            raise TableError(f"{ack} and {ACKS[0]} do not have the same properties")
    for name, order, packet in (
        ("PUBLISH_ORDER", publish_order, "PUBLISH"),
        ("ACK_ORDER", ack_order, ACKS[0]),
    ):
        if sorted(order) != carried(packet):
            raise TableError(f"{name} is not an order of exactly {packet}'s properties")


check_table(PROPERTIES, PUBLISH_ORDER, ACK_ORDER)

__all__ = [
    "ACKS",
    "ACK_ORDER",
    "BY_IDENTIFIER",
    "BY_KEY",
    "PROPERTIES",
    "PROPERTY_SECTIONS",
    "PUBLISH_ORDER",
    "WILL",
    "DataType",
    "PropertyRow",
    "TableError",
    "check_table",
    "identifiers",
    "of",
]
