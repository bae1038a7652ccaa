"""The packets a judge reads: one table of packet types, the fixed header, and the
descriptions of the control packets besides PUBLISH and its acknowledgements.

pubproof's codec covers PUBLISH, PUBACK, PUBREC, PUBREL and PUBCOMP only; the judges also
read CONNECT/CONNACK (the edition, Clean Session, Session Present), SUBSCRIBE/SUBACK (the
granted QoS), PINGREQ/PINGRESP (a receiver that reads on) and DISCONNECT. This module
encodes the ones a client sends and describes any of them as a JSON-ready dict, in the
style of ``P``: ``{"type": "CONNACK", "session_present": false, "return_code": 0}``. A
packet that cannot be read gives ``{"type": NAME, "error": {...}}``.

MQTT 3.1.1 CONNECT names the protocol "MQTT" at level 4; MQTT 3.1 names it "MQIsdp" at
level 3 (section 3.1 of each); MQTT 5.0 names it "MQTT" at level 5, and gives the type 15,
reserved before, to AUTH. The 5.0 packets are read and written by
:mod:`pubproof.judge.packets50`; the functions here take an ``edition`` (None or 3.x: as
before).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final

from pubproof.judge import packets50
from pubproof.judge import properties as _properties
from pubproof.model.editions import Edition
from pubproof.model.wire import encode_remaining_length


class PacketType(enum.IntEnum):
    """The Control Packet types: the high nibble of the first byte (3.1.1 section 2.2.1,
    Table 2.1; 0 and 15 are reserved)."""

    CONNECT = 1
    CONNACK = 2
    PUBLISH = 3
    PUBACK = 4
    PUBREC = 5
    PUBREL = 6
    PUBCOMP = 7
    SUBSCRIBE = 8
    SUBACK = 9
    UNSUBSCRIBE = 10
    UNSUBACK = 11
    PINGREQ = 12
    PINGRESP = 13
    DISCONNECT = 14


T = PacketType
#: the one table of packet type names, by type number
TYPE_NAMES: Mapping[int, str] = MappingProxyType({t.value: t.name for t in PacketType})
#: PUBLISH and its acknowledgements: what the codec decodes
PUBLISH_FAMILY: Mapping[int, str] = MappingProxyType(
    {t.value: t.name for t in (T.PUBLISH, T.PUBACK, T.PUBREC, T.PUBREL, T.PUBCOMP)}
)
#: the acknowledgements: type number -> name (each has a packet identifier and nothing else)
ACKS: Mapping[int, str] = MappingProxyType(
    {t.value: t.name for t in (T.PUBACK, T.PUBREC, T.PUBREL, T.PUBCOMP)}
)
#: every other packet type: described here
CONTROL_TYPES: Mapping[int, str] = MappingProxyType(
    {n: name for n, name in TYPE_NAMES.items() if n not in PUBLISH_FAMILY}
)
#: the names of the PUBLISH family, as ``P`` gives them
FLOW_TYPES = frozenset(PUBLISH_FAMILY.values())

PROTOCOL: Mapping[Edition, tuple[str, int]] = MappingProxyType(
    {
        Edition.V311: ("MQTT", 4),
        Edition.V31: ("MQIsdp", 3),
        Edition.V50: (packets50.PROTOCOL_NAME, packets50.LEVEL),
    }
)
#: CONNECT's protocol level -> the edition it names
LEVELS: Mapping[int, Edition] = MappingProxyType({level: e for e, (_, level) in PROTOCOL.items()})
PINGREQ = bytes((T.PINGREQ << 4, 0x00))
PINGRESP = bytes((T.PINGRESP << 4, 0x00))
DISCONNECT = bytes((T.DISCONNECT << 4, 0x00))
#: CONNECT flags (3.1.1 section 3.1.2.3)
CLEAN_SESSION, WILL_FLAG, PASSWORD_FLAG, USER_NAME_FLAG = 0x02, 0x04, 0x40, 0x80
#: CONNACK's Connect Acknowledge Flags: bit 0 is Session Present (3.1.1 section 3.2.2.2)
SESSION_PRESENT = 0x01
#: [MQTT-3.8.1-1] "Bits 3,2,1 and 0 of the fixed header of the SUBSCRIBE Control Packet are
#: reserved and MUST be set to 0,0,1 and 0 respectively."
SUBSCRIBE_FLAGS = 0x02  # FLAGS_0010
#: PUBLISH's fixed-header flags (3.1.1 section 3.3.1): DUP, the two QoS bits, RETAIN
DUP_FLAG, QOS_BITS, RETAIN_FLAG = 0x08, 0x06, 0x01
QOS_SHIFT = 1
#: PUBREL's, SUBSCRIBE's and UNSUBSCRIBE's fixed-header flags are 0010 (3.1.1 section 2.2.2)
FLAGS_0010 = 0x02
#: the type numbers 0 and 15 are reserved (3.1.1 section 2.2.1)
RESERVED_TYPES = frozenset({0, 15})
#: MQTT 5.0: type 15 is AUTH (5.0 section 2.1.2, Table 2-1); only 0 is reserved
AUTH: Final = 15
RESERVED_TYPES_V50 = frozenset({0})
#: the packet type names of MQTT 5.0, by type number
TYPE_NAMES_V50: Mapping[int, str] = MappingProxyType({**TYPE_NAMES, AUTH: "AUTH"})
#: the control packets of MQTT 5.0 (every type but the PUBLISH family): described here
CONTROL_TYPES_V50: Mapping[int, str] = MappingProxyType({**CONTROL_TYPES, AUTH: "AUTH"})
#: the Remaining Length takes at most four bytes (3.1.1 section 2.2.3)
RL_MAX_BYTES = 4
#: the continuation bit of a Remaining Length byte, and its value bits
RL_MORE: Final = 0x80
RL_VALUE: Final = 0x7F


class FrameError(Exception):
    """The stream cannot be cut into packets (a Remaining Length of more than four bytes)."""


def type_names(edition: Edition | None = None) -> Mapping[int, str]:
    """The packet type names of an edition (None: 3.1 and 3.1.1)."""
    return TYPE_NAMES_V50 if edition is Edition.V50 else TYPE_NAMES


def control_types(edition: Edition | None = None) -> Mapping[int, str]:
    """The control packet types of an edition, by number (what :func:`describe` reads)."""
    return CONTROL_TYPES_V50 if edition is Edition.V50 else CONTROL_TYPES


def reserved_types(edition: Edition | None = None) -> frozenset[int]:
    """The reserved packet type numbers of an edition."""
    return RESERVED_TYPES_V50 if edition is Edition.V50 else RESERVED_TYPES


def type_name(first: int, edition: Edition | None = None) -> str:
    """The name of a packet type from its first byte (type 15 is AUTH in 5.0 only)."""
    kind = first >> 4
    return type_names(edition).get(kind) or f"RESERVED-{kind}"


def header_length(data: bytes | bytearray) -> tuple[int, int] | None:
    """(length of the fixed header, Remaining Length), or None while it is incomplete."""
    value = 0
    for index in range(RL_MAX_BYTES):
        if 1 + index >= len(data):
            return None
        byte = data[1 + index]
        value |= (byte & RL_VALUE) << (7 * index)
        if not byte & RL_MORE:
            return 2 + index, value
    raise FrameError("the Remaining Length has more than four bytes")


def _string(text: str) -> bytes:
    data = text.encode("utf-8")
    return len(data).to_bytes(2, "big") + data


def _packet(first: int, body: bytes) -> bytes:
    return bytes((first,)) + encode_remaining_length(len(body)) + body


def connect(
    client_id: str,
    *,
    clean: bool,
    keep_alive: int = 60,
    edition: Edition = Edition.V311,
    properties: Mapping[str, Any] | None = None,
    will: Mapping[str, Any] | None = None,
) -> bytes:
    """CONNECT without user name or password; in 3.x without will or properties, in 5.0
    (``clean`` is Clean Start) with ``properties`` and a ``will`` as
    :func:`pubproof.judge.packets50.connect` takes them."""
    if edition is Edition.V50:
        return packets50.connect(
            client_id, clean=clean, keep_alive=keep_alive, properties=properties, will=will
        )
    _no_properties(edition, properties, will)
    name, level = PROTOCOL[edition]
    flags = CLEAN_SESSION if clean else 0x00
    return _packet(
        T.CONNECT << 4,
        _string(name) + bytes((level, flags)) + keep_alive.to_bytes(2, "big") + _string(client_id),
    )


def _no_properties(edition: Edition, *given: object) -> None:
    if any(item is not None for item in given):
        raise ValueError(f"MQTT {edition.value} packets have no properties or options")


def subscribe(
    packet_id: int,
    subscriptions: Sequence[tuple[str, int]] | Sequence[tuple[str, int] | Mapping[str, Any]],
    *,
    edition: Edition = Edition.V311,
    properties: Mapping[str, Any] | None = None,
) -> bytes:
    """SUBSCRIBE to topic filters, each with its requested maximum QoS (5.0: or the
    subscription options, :func:`pubproof.judge.packets50.subscribe`)."""
    if edition is Edition.V50:
        return packets50.subscribe(packet_id, subscriptions, properties=properties)
    _no_properties(edition, properties)
    body = packet_id.to_bytes(2, "big")
    pairs: Sequence[tuple[str, int]] = subscriptions  # type: ignore[assignment]
    body += b"".join(_string(topic_filter) + bytes((qos,)) for topic_filter, qos in pairs)
    return _packet(T.SUBSCRIBE << 4 | SUBSCRIBE_FLAGS, body)


def unsubscribe(
    packet_id: int,
    filters: Sequence[str],
    *,
    edition: Edition = Edition.V311,
    properties: Mapping[str, Any] | None = None,
) -> bytes:
    """UNSUBSCRIBE from topic filters."""
    if edition is Edition.V50:
        return packets50.unsubscribe(packet_id, filters, properties=properties)
    _no_properties(edition, properties)
    body = packet_id.to_bytes(2, "big") + b"".join(_string(f) for f in filters)
    return _packet(T.UNSUBSCRIBE << 4 | FLAGS_0010, body)


def disconnect(reason_code: int = 0x00, properties: Mapping[str, Any] | None = None) -> bytes:
    """A 5.0 DISCONNECT with a Reason Code and properties (``E0 00`` for a Normal
    disconnection without properties, which is also the 3.x DISCONNECT)."""
    return packets50.disconnect(reason_code, properties)


def auth(reason_code: int = 0x00, properties: Mapping[str, Any] | None = None) -> bytes:
    """A 5.0 AUTH."""
    return packets50.auth(reason_code, properties)


def encode_properties(type_name: str, properties: Mapping[str, Any] | None) -> bytes:
    """The 5.0 property section (Property Length first) of a packet type ("WILL" for the
    Will Properties)."""
    return _properties.encode(type_name, properties)


def connack(
    *,
    session_present: bool,
    return_code: int,
    edition: Edition = Edition.V311,
    properties: Mapping[str, Any] | None = None,
) -> bytes:
    """CONNACK (what a server answers; the test captures write it). In 5.0
    ``return_code`` is the Reason Code."""
    if edition is Edition.V50:
        return packets50.connack(
            session_present=session_present, reason_code=return_code, properties=properties
        )
    _no_properties(edition, properties)
    flags = SESSION_PRESENT if session_present else 0x00
    return _packet(T.CONNACK << 4, bytes((flags, return_code)))


def suback(
    packet_id: int,
    granted: Sequence[int],
    *,
    edition: Edition = Edition.V311,
    properties: Mapping[str, Any] | None = None,
) -> bytes:
    """SUBACK with the granted QoS of each subscription (or 0x80, failure; 5.0: the Reason
    Codes)."""
    if edition is Edition.V50:
        return packets50.suback(packet_id, granted, properties=properties)
    _no_properties(edition, properties)
    return _packet(T.SUBACK << 4, packet_id.to_bytes(2, "big") + bytes(granted))


class _Short(Exception):
    pass


class _Reader:
    def __init__(self, body: bytes) -> None:
        self.body = body
        self.pos = 0

    def byte(self) -> int:
        if self.pos >= len(self.body):
            raise _Short("the packet ends early")
        self.pos += 1
        return self.body[self.pos - 1]

    def u16(self) -> int:
        return self.byte() << 8 | self.byte()

    def binary(self) -> bytes:
        size = self.u16()
        if self.pos + size > len(self.body):
            raise _Short("a field runs past the end of the packet")
        self.pos += size
        return self.body[self.pos - size : self.pos]

    def string(self) -> str:
        return self.binary().decode("utf-8", errors="replace")

    def at_end(self) -> bool:
        return self.pos == len(self.body)


def unsuback(
    packet_id: int, reason_codes: Sequence[int], *, properties: Mapping[str, Any] | None = None
) -> bytes:
    """A 5.0 UNSUBACK (for tests)."""
    return packets50.unsuback(packet_id, reason_codes, properties=properties)


def describe(first: int, body: bytes, edition: Edition | None = None) -> dict[str, Any]:
    """The fields of a control packet (first byte, body after the Remaining Length).

    A packet that cannot be read gives ``{"type": NAME, "error": {"rule": null, "offset",
    "message"}}`` (offset into the body). ``edition`` 5.0 reads the 5.0 packets
    (:func:`pubproof.judge.packets50.describe`: properties, Reason Codes, AUTH; ``rule``
    names the 5.0 rule a property section breaks); None, 3.1 and 3.1.1 read them alike.
    """
    if edition is Edition.V50:
        return packets50.describe(first, body)
    name = CONTROL_TYPES[first >> 4]
    reader = _Reader(body)
    try:
        fields = _FIELDS[name](reader, first)
    except _Short as short:
        return {"type": name, "error": _error(reader.pos, str(short))}
    if not reader.at_end():
        extra = f"{len(body) - reader.pos} byte(s) after the last field"
        return {"type": name, "error": _error(reader.pos, extra)}
    return {"type": name, **fields}


def _error(offset: int, message: str) -> dict[str, Any]:
    """An error object like ``pubproof decode``'s; control packets have no rule ids here."""
    return {"rule": None, "offset": offset, "message": message}


def _connect(reader: _Reader, first: int) -> dict[str, Any]:
    protocol = reader.string()
    level = reader.byte()
    flags = reader.byte()
    keep_alive = reader.u16()
    client_id = reader.string()
    if flags & WILL_FLAG:  # a will: topic and message
        reader.binary()
        reader.binary()
    if flags & USER_NAME_FLAG:
        reader.binary()
    if flags & PASSWORD_FLAG:
        reader.binary()
    return {
        "protocol": protocol,
        "level": level,
        "clean_session": bool(flags & CLEAN_SESSION),
        "keep_alive": keep_alive,
        "client_id": client_id,
    }


def _connack(reader: _Reader, first: int) -> dict[str, Any]:
    acknowledge = reader.byte()
    return {"session_present": bool(acknowledge & SESSION_PRESENT), "return_code": reader.byte()}


def _subscribe(reader: _Reader, first: int) -> dict[str, Any]:
    packet_id = reader.u16()
    subscriptions = []
    while not reader.at_end():
        topic_filter = reader.string()
        subscriptions.append({"filter": topic_filter, "qos": reader.byte()})
    return {"packet_id": packet_id, "subscriptions": subscriptions}


def _suback(reader: _Reader, first: int) -> dict[str, Any]:
    packet_id = reader.u16()
    granted = []
    while not reader.at_end():
        granted.append(reader.byte())
    return {"packet_id": packet_id, "granted": granted}


def _unsubscribe(reader: _Reader, first: int) -> dict[str, Any]:
    packet_id = reader.u16()
    filters = []
    while not reader.at_end():
        filters.append(reader.string())
    return {"packet_id": packet_id, "filters": filters}


def _packet_id_only(reader: _Reader, first: int) -> dict[str, Any]:
    return {"packet_id": reader.u16()}


def _empty(reader: _Reader, first: int) -> dict[str, Any]:
    return {}


_FIELDS = {
    "CONNECT": _connect,
    "CONNACK": _connack,
    "SUBSCRIBE": _subscribe,
    "SUBACK": _suback,
    "UNSUBSCRIBE": _unsubscribe,
    "UNSUBACK": _packet_id_only,
    "PINGREQ": _empty,
    "PINGRESP": _empty,
    "DISCONNECT": _empty,
}
