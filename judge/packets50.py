"""The MQTT 5.0 control packets a judge reads and a client sends: CONNECT, CONNACK,
SUBSCRIBE, SUBACK, UNSUBSCRIBE, UNSUBACK, DISCONNECT, AUTH, PINGREQ and PINGRESP.

:func:`describe` gives a packet's fields as a JSON-ready dict in the style of ``P``, its
properties as :mod:`pubproof.judge.properties` reads them (the model's reader); the
encoders write what a client sends (and, for tests, what a server answers). The byte
layouts are those of MQTT 5.0 sections 3.1 to 3.15; :mod:`pubproof.judge.packets`
dispatches here for ``Edition.V50``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pubproof.judge import properties as props
from pubproof.model.wire_core import encode_remaining_length

#: the names of the 5.0 control packets (type 15 is AUTH in 5.0, reserved before)
NAMES = {
    1: "CONNECT", 2: "CONNACK", 8: "SUBSCRIBE", 9: "SUBACK", 10: "UNSUBSCRIBE",
    11: "UNSUBACK", 12: "PINGREQ", 13: "PINGRESP", 14: "DISCONNECT", 15: "AUTH",
}  # fmt: skip
PROTOCOL_NAME, LEVEL = "MQTT", 5
#: CONNECT flags (5.0 section 3.1.2.3): Clean Start is 3.1.1's Clean Session bit
CLEAN_START, WILL_FLAG, WILL_QOS_SHIFT, WILL_RETAIN = 0x02, 0x04, 3, 0x20
PASSWORD_FLAG, USER_NAME_FLAG = 0x40, 0x80
SESSION_PRESENT = 0x01
#: Subscription Options (5.0 section 3.8.3.1): QoS in bits 0-1, No Local bit 2, Retain As
#: Published bit 3, Retain Handling bits 4-5, bits 6-7 reserved
NO_LOCAL, RETAIN_AS_PUBLISHED, RETAIN_HANDLING_SHIFT, OPTIONS_RESERVED = 0x04, 0x08, 4, 0xC0
SUBSCRIBE_FLAGS = 0x02


class Unreadable(Exception):
    """The body cannot be read: the rule id (when the model names one), the offset into
    the body and the message."""

    def __init__(self, offset: int, message: str, rule: str | None = None) -> None:
        super().__init__(message)
        self.offset = offset
        self.message = message
        self.rule = rule


class _Reader:
    def __init__(self, body: bytes) -> None:
        self.body = body
        self.pos = 0

    def byte(self) -> int:
        if self.pos >= len(self.body):
            raise Unreadable(self.pos, "the packet ends early")
        self.pos += 1
        return self.body[self.pos - 1]

    def u16(self) -> int:
        return self.byte() << 8 | self.byte()

    def binary(self) -> bytes:
        size = self.u16()
        if self.pos + size > len(self.body):
            raise Unreadable(self.pos - 2, "a field runs past the end of the packet")
        self.pos += size
        return self.body[self.pos - size : self.pos]

    def string(self) -> str:
        return self.binary().decode("utf-8", errors="replace")

    def properties(self, packet: str) -> dict[str, Any]:
        try:
            found, self.pos = props.read(self.body, self.pos, packet)
        except props.PropertyError as error:
            raise Unreadable(error.offset, error.message, error.rule) from None
        return found

    def at_end(self) -> bool:
        return self.pos >= len(self.body)


def describe(first: int, body: bytes) -> dict[str, Any]:
    """The fields of a 5.0 control packet (first byte, body after the Remaining Length);
    ``{"type": NAME, "error": {"rule", "offset", "message"}}`` when it cannot be read."""
    name = NAMES[first >> 4]
    reader = _Reader(body)
    try:
        fields = _FIELDS[name](reader)
        if not reader.at_end():
            raise Unreadable(reader.pos, f"{len(body) - reader.pos} byte(s) after the last field")
    except Unreadable as bad:
        return {
            "type": name,
            "error": {"rule": bad.rule, "offset": bad.offset, "message": bad.message},
        }
    return {"type": name, **fields}


def _connect(reader: _Reader) -> dict[str, Any]:
    protocol = reader.string()
    level = reader.byte()
    flags = reader.byte()
    keep_alive = reader.u16()
    properties = reader.properties("CONNECT")
    client_id = reader.string()
    will: dict[str, Any] | None = None
    if flags & WILL_FLAG:
        # 3.1.3.2: the Will Properties, then the Will Topic and the Will Payload
        will_properties = reader.properties("WILL")
        topic = reader.string()
        will = {
            "qos": flags >> WILL_QOS_SHIFT & 0x03,
            "retain": bool(flags & WILL_RETAIN),
            "topic": topic,
            "payload_hex": reader.binary().hex(),
            "properties": will_properties,
        }
    user_name = reader.string() if flags & USER_NAME_FLAG else None
    if flags & PASSWORD_FLAG:
        reader.binary()  # never shown
    return {
        "protocol": protocol,
        "level": level,
        "clean_start": bool(flags & CLEAN_START),
        "keep_alive": keep_alive,
        "client_id": client_id,
        "properties": properties,
        "will": will,
        "user_name": user_name,
        "password": bool(flags & PASSWORD_FLAG),
    }


def _connack(reader: _Reader) -> dict[str, Any]:
    acknowledge = reader.byte()
    reason_code = reader.byte()
    return {
        "session_present": bool(acknowledge & SESSION_PRESENT),
        "reason_code": reason_code,
        "properties": reader.properties("CONNACK"),
    }


def _subscribe(reader: _Reader) -> dict[str, Any]:
    packet_id = reader.u16()
    properties = reader.properties("SUBSCRIBE")
    subscriptions = []
    while not reader.at_end():
        topic_filter = reader.string()
        at = reader.pos
        options = reader.byte()
        qos, handling = options & 0x03, options >> RETAIN_HANDLING_SHIFT & 0x03
        # [MQTT-3.8.3-5] "The Server MUST treat a SUBSCRIBE packet as malformed if any of
        # Reserved bits in the Payload are non-zero."  QoS 3 and Retain Handling 3 are
        # Protocol Errors (3.8.3.1).
        if options & OPTIONS_RESERVED or qos == 3 or handling == 3:
            raise Unreadable(at, f"Subscription Options 0x{options:02X} are not valid")
        subscriptions.append(
            {
                "filter": topic_filter,
                "qos": qos,
                "no_local": bool(options & NO_LOCAL),
                "retain_as_published": bool(options & RETAIN_AS_PUBLISHED),
                "retain_handling": handling,
            }
        )
    identifiers = properties.get("subscription_identifiers") or [None]
    return {
        "packet_id": packet_id,
        "properties": properties,
        "subscription_identifier": identifiers[0],
        "subscriptions": subscriptions,
    }


def _acknowledge_with_codes(name: str) -> Callable[[_Reader], dict[str, Any]]:
    def read(reader: _Reader) -> dict[str, Any]:
        packet_id = reader.u16()
        properties = reader.properties(name)
        codes = []
        while not reader.at_end():
            codes.append(reader.byte())
        return {"packet_id": packet_id, "properties": properties, "reason_codes": codes}

    return read


def _unsubscribe(reader: _Reader) -> dict[str, Any]:
    packet_id = reader.u16()
    properties = reader.properties("UNSUBSCRIBE")
    filters = []
    while not reader.at_end():
        filters.append(reader.string())
    return {"packet_id": packet_id, "properties": properties, "filters": filters}


def _reason_and_properties(name: str) -> Callable[[_Reader], dict[str, Any]]:
    def read(reader: _Reader) -> dict[str, Any]:
        # 3.14.2.1 / 3.15.2.1: "If the Remaining Length is less than 1 the value of 0x00
        # (Normal disconnection / Success) is used"; "less than 2": no Property Length
        if reader.at_end():
            return {"reason_code": 0x00, "properties": {}}
        reason_code = reader.byte()
        properties = {} if reader.at_end() else reader.properties(name)
        return {"reason_code": reason_code, "properties": properties}

    return read


def _empty(reader: _Reader) -> dict[str, Any]:
    return {}


_FIELDS: Mapping[str, Callable[[_Reader], dict[str, Any]]] = {
    "CONNECT": _connect,
    "CONNACK": _connack,
    "SUBSCRIBE": _subscribe,
    "SUBACK": _acknowledge_with_codes("SUBACK"),
    "UNSUBSCRIBE": _unsubscribe,
    "UNSUBACK": _acknowledge_with_codes("UNSUBACK"),
    "PINGREQ": _empty,
    "PINGRESP": _empty,
    "DISCONNECT": _reason_and_properties("DISCONNECT"),
    "AUTH": _reason_and_properties("AUTH"),
}


# -- encoders -----------------------------------------------------------------------------


def _string(text: str) -> bytes:
    data = text.encode("utf-8")
    return len(data).to_bytes(2, "big") + data


def _binary(data: bytes) -> bytes:
    return len(data).to_bytes(2, "big") + data


def _packet(first: int, body: bytes) -> bytes:
    return bytes((first,)) + encode_remaining_length(len(body)) + body


def connect(
    client_id: str,
    *,
    clean: bool,
    keep_alive: int = 60,
    properties: Mapping[str, Any] | None = None,
    will: Mapping[str, Any] | None = None,
) -> bytes:
    """A 5.0 CONNECT: ``clean`` is Clean Start; ``will`` is the description's form
    (``topic``, ``payload_hex``, ``qos``, ``retain``, ``properties``)."""
    flags = CLEAN_START if clean else 0x00
    tail = b""
    if will is not None:
        flags |= WILL_FLAG | int(will.get("qos", 0)) << WILL_QOS_SHIFT
        flags |= WILL_RETAIN if will.get("retain") else 0x00
        tail = (
            props.encode("WILL", will.get("properties"))
            + _string(str(will["topic"]))
            + _binary(bytes.fromhex(str(will.get("payload_hex", ""))))
        )
    body = (
        _string(PROTOCOL_NAME) + bytes((LEVEL, flags)) + keep_alive.to_bytes(2, "big")
        + props.encode("CONNECT", properties) + _string(client_id) + tail
    )  # fmt: skip
    return _packet(1 << 4, body)


def _options(subscription: tuple[str, int] | Mapping[str, Any]) -> tuple[str, int]:
    if isinstance(subscription, tuple):
        return subscription[0], subscription[1]
    options = int(subscription["qos"])
    options |= NO_LOCAL if subscription.get("no_local") else 0
    options |= RETAIN_AS_PUBLISHED if subscription.get("retain_as_published") else 0
    options |= int(subscription.get("retain_handling", 0)) << RETAIN_HANDLING_SHIFT
    return str(subscription["filter"]), options


def subscribe(
    packet_id: int,
    subscriptions: Sequence[tuple[str, int] | Mapping[str, Any]],
    *,
    properties: Mapping[str, Any] | None = None,
) -> bytes:
    """A 5.0 SUBSCRIBE: each subscription a (filter, QoS) pair or the description's dict
    (``filter``, ``qos``, ``no_local``, ``retain_as_published``, ``retain_handling``); a
    Subscription Identifier goes in ``properties["subscription_identifiers"]``."""
    body = packet_id.to_bytes(2, "big") + props.encode("SUBSCRIBE", properties)
    for subscription in subscriptions:
        topic_filter, options = _options(subscription)
        body += _string(topic_filter) + bytes((options,))
    return _packet(8 << 4 | SUBSCRIBE_FLAGS, body)


def unsubscribe(
    packet_id: int, filters: Sequence[str], *, properties: Mapping[str, Any] | None = None
) -> bytes:
    """A 5.0 UNSUBSCRIBE."""
    body = packet_id.to_bytes(2, "big") + props.encode("UNSUBSCRIBE", properties)
    return _packet(10 << 4 | SUBSCRIBE_FLAGS, body + b"".join(_string(f) for f in filters))


def _reason(kind: int, name: str, reason_code: int, properties: Mapping[str, Any] | None) -> bytes:
    if reason_code == 0 and not properties:
        return _packet(kind << 4, b"")  # "the Reason Code and Property Length can be omitted"
    return _packet(kind << 4, bytes((reason_code,)) + props.encode(name, properties))


def disconnect(reason_code: int = 0x00, properties: Mapping[str, Any] | None = None) -> bytes:
    """A 5.0 DISCONNECT (``E0 00`` for a Normal disconnection without properties)."""
    return _reason(14, "DISCONNECT", reason_code, properties)


def auth(reason_code: int = 0x00, properties: Mapping[str, Any] | None = None) -> bytes:
    """A 5.0 AUTH (``F0 00`` for Success without properties)."""
    return _reason(15, "AUTH", reason_code, properties)


def connack(
    *, session_present: bool, reason_code: int, properties: Mapping[str, Any] | None = None
) -> bytes:
    """A 5.0 CONNACK (what a server answers; for tests)."""
    flags = SESSION_PRESENT if session_present else 0x00
    return _packet(2 << 4, bytes((flags, reason_code)) + props.encode("CONNACK", properties))


def suback(
    packet_id: int, reason_codes: Sequence[int], *, properties: Mapping[str, Any] | None = None
) -> bytes:
    """A 5.0 SUBACK (for tests)."""
    body = packet_id.to_bytes(2, "big") + props.encode("SUBACK", properties)
    return _packet(9 << 4, body + bytes(reason_codes))


def unsuback(
    packet_id: int, reason_codes: Sequence[int], *, properties: Mapping[str, Any] | None = None
) -> bytes:
    """A 5.0 UNSUBACK (for tests)."""
    body = packet_id.to_bytes(2, "big") + props.encode("UNSUBACK", properties)
    return _packet(11 << 4, body + bytes(reason_codes))
