"""MQTT 5.0 control packets as the probe sends and records them, until
:mod:`pubproof.judge.packets` speaks 5.0 (the shapes are that module's 5.0 API): CONNECT
with properties and Clean Start, SUBSCRIBE with options and a Subscription Identifier,
DISCONNECT with a Reason Code; and the description of every 5.0 control packet the broker
sends (CONNACK with its properties, SUBACK with its Reason Codes, DISCONNECT with its
Reason Code, ...).

The descriptions follow :mod:`pubproof.judge.packets` (``{"type": "CONNACK", ...}``, a
packet that cannot be read gives ``{"type", "error": {"rule": null, "offset", "message"}}``)
and add ``"properties"``: a key for each property present, named as in the standard
(``receive_maximum``, ``topic_alias_maximum``, ...; User Properties as ``[name, value]``
pairs in order, binary values as ``..._hex``).

The layouts are those of MQTT 5.0 (OASIS Standard, 7 March 2019) sections 3.1, 3.2, 3.8,
3.9, 3.10, 3.11, 3.14 and 3.15; the property identifiers are Table 2-4 (section 2.2.2.2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from pubproof.judge.packets import PacketType
from pubproof.model.wire import encode_remaining_length

T = PacketType
#: CONNECT names the protocol "MQTT" at level 5 (3.1.2.1, 3.1.2.2)
PROTOCOL_NAME, PROTOCOL_LEVEL = "MQTT", 5
#: CONNECT flags: bit 1 is Clean Start (3.1.2.4)
CLEAN_START = 0x02
#: CONNACK's Connect Acknowledge Flags: bit 0 is Session Present (3.2.2.1.1)
SESSION_PRESENT = 0x01

# -- properties (Table 2-4): identifier -> (key, type) -----------------------------------

PROPERTIES: Mapping[int, tuple[str, str]] = MappingProxyType(
    {
        0x01: ("payload_format_indicator", "byte"),
        0x02: ("message_expiry_interval", "four"),
        0x03: ("content_type", "string"),
        0x08: ("response_topic", "string"),
        0x09: ("correlation_data_hex", "binary"),
        0x0B: ("subscription_identifier", "varint"),
        0x11: ("session_expiry_interval", "four"),
        0x12: ("assigned_client_identifier", "string"),
        0x13: ("server_keep_alive", "two"),
        0x15: ("authentication_method", "string"),
        0x16: ("authentication_data_hex", "binary"),
        0x17: ("request_problem_information", "byte"),
        0x18: ("will_delay_interval", "four"),
        0x19: ("request_response_information", "byte"),
        0x1A: ("response_information", "string"),
        0x1C: ("server_reference", "string"),
        0x1F: ("reason_string", "string"),
        0x21: ("receive_maximum", "two"),
        0x22: ("topic_alias_maximum", "two"),
        0x23: ("topic_alias", "two"),
        0x24: ("maximum_qos", "byte"),
        0x25: ("retain_available", "byte"),
        0x26: ("user_properties", "pair"),
        0x27: ("maximum_packet_size", "four"),
        0x28: ("wildcard_subscription_available", "byte"),
        0x29: ("subscription_identifier_available", "byte"),
        0x2A: ("shared_subscription_available", "byte"),
    }
)
_BY_KEY = {key: (identifier, kind) for identifier, (key, kind) in PROPERTIES.items()}
_SIZES = {"byte": 1, "two": 2, "four": 4}


def _vbi(value: int) -> bytes:
    return encode_remaining_length(value)


def _string(text: str) -> bytes:
    data = text.encode("utf-8")
    return len(data).to_bytes(2, "big") + data


def encode_properties(properties: Mapping[str, Any]) -> bytes:
    """A property section (Property Length first) of the properties given by key."""
    out = bytearray()
    for key, value in properties.items():
        identifier, kind = _BY_KEY[key]
        if kind == "pair":
            for name, text in value:
                out += bytes((identifier,)) + _string(name) + _string(text)
            continue
        out.append(identifier)
        if kind in _SIZES:
            out += int(value).to_bytes(_SIZES[kind], "big")
        elif kind == "varint":
            out += _vbi(int(value))
        elif kind == "binary":
            data = bytes.fromhex(value)
            out += len(data).to_bytes(2, "big") + data
        else:
            out += _string(value)
    return _vbi(len(out)) + bytes(out)


def _packet(first: int, body: bytes) -> bytes:
    return bytes((first,)) + _vbi(len(body)) + body


# -- what the probe sends ----------------------------------------------------------------


def connect(
    client_id: str,
    *,
    clean: bool,
    keep_alive: int = 60,
    properties: Mapping[str, Any] | None = None,
) -> bytes:
    """A 5.0 CONNECT (no will, user name or password) with these properties."""
    flags = CLEAN_START if clean else 0x00
    body = _string(PROTOCOL_NAME) + bytes((PROTOCOL_LEVEL, flags)) + keep_alive.to_bytes(2, "big")
    body += encode_properties(properties or {}) + _string(client_id)
    return _packet(T.CONNECT << 4, body)


@dataclass(frozen=True, slots=True, kw_only=True)
class Subscription:
    """A topic filter and its Subscription Options (3.8.3.1)."""

    filter: str
    qos: int = 2
    no_local: bool = False
    retain_as_published: bool = False
    retain_handling: int = 0

    @property
    def options(self) -> int:
        """The Subscription Options byte: QoS in bits 0-1, No Local bit 2, Retain As
        Published bit 3, Retain Handling bits 4-5."""
        return (
            self.qos
            | (0x04 if self.no_local else 0)
            | (0x08 if self.retain_as_published else 0)
            | self.retain_handling << 4
        )


def subscribe(
    packet_id: int, subscriptions: Sequence[Subscription], *, identifier: int | None = None
) -> bytes:
    """A 5.0 SUBSCRIBE (flags 0010), with a Subscription Identifier if given."""
    properties = {} if identifier is None else {"subscription_identifier": identifier}
    body = packet_id.to_bytes(2, "big") + encode_properties(properties)
    body += b"".join(_string(s.filter) + bytes((s.options,)) for s in subscriptions)
    return _packet(T.SUBSCRIBE << 4 | 0x02, body)


def disconnect(reason_code: int = 0x00, properties: Mapping[str, Any] | None = None) -> bytes:
    """A 5.0 DISCONNECT; Reason Code 0x00 and no properties is the two-byte form."""
    if reason_code == 0 and not properties:
        return bytes((T.DISCONNECT << 4, 0))
    return _packet(T.DISCONNECT << 4, bytes((reason_code,)) + encode_properties(properties or {}))


# -- what the broker sends: descriptions --------------------------------------------------


class _Short(Exception):
    pass


class _Reader:
    def __init__(self, body: bytes) -> None:
        self.body = body
        self.pos = 0

    def take(self, count: int) -> bytes:
        if self.pos + count > len(self.body):
            raise _Short("a field runs past the end of the packet")
        self.pos += count
        return self.body[self.pos - count : self.pos]

    def byte(self) -> int:
        return self.take(1)[0]

    def u16(self) -> int:
        return int.from_bytes(self.take(2), "big")

    def vbi(self) -> int:
        value = 0
        for index in range(4):
            byte = self.byte()
            value |= (byte & 0x7F) << (7 * index)
            if not byte & 0x80:
                return value
        raise _Short("a Variable Byte Integer has more than four bytes")

    def string(self) -> str:
        return self.take(self.u16()).decode("utf-8", errors="replace")

    def at_end(self) -> bool:
        return self.pos >= len(self.body)

    def properties(self) -> dict[str, Any]:
        length = self.vbi()
        end = self.pos + length
        if end > len(self.body):
            raise _Short("the Property Length runs past the packet")
        found: dict[str, Any] = {}
        while self.pos < end:
            identifier = self.byte()
            if identifier not in PROPERTIES:
                raise _Short(f"0x{identifier:02X} is not a property identifier")
            key, kind = PROPERTIES[identifier]
            if kind in _SIZES:
                value: Any = int.from_bytes(self.take(_SIZES[kind]), "big")
            elif kind == "varint":
                value = self.vbi()
            elif kind == "binary":
                value = self.take(self.u16()).hex()
            elif kind == "pair":
                found.setdefault(key, []).append([self.string(), self.string()])
                continue
            else:
                value = self.string()
            if key == "subscription_identifier":
                found.setdefault("subscription_identifiers", []).append(value)
            else:
                found[key] = value
        if self.pos != end:
            raise _Short("a property runs past the property section")
        return found


def _connect(r: _Reader) -> dict[str, Any]:
    protocol = r.string()
    level = r.byte()
    flags = r.byte()
    keep_alive = r.u16()
    properties = r.properties()
    client_id = r.string()
    return {
        "protocol": protocol,
        "level": level,
        "clean_start": bool(flags & CLEAN_START),
        "keep_alive": keep_alive,
        "client_id": client_id,
        "properties": properties,
        "will": None,
        "user_name": None,
        "password": False,
    }


def _connack(r: _Reader) -> dict[str, Any]:
    acknowledge = r.byte()
    reason_code = r.byte()
    properties = r.properties() if not r.at_end() else {}
    return {
        "session_present": bool(acknowledge & SESSION_PRESENT),
        "reason_code": reason_code,
        "properties": properties,
    }


def _subscribe(r: _Reader) -> dict[str, Any]:
    packet_id = r.u16()
    properties = r.properties()
    subscriptions = []
    while not r.at_end():
        topic_filter = r.string()
        options = r.byte()
        subscriptions.append(
            {
                "filter": topic_filter,
                "qos": options & 0x03,
                "no_local": bool(options & 0x04),
                "retain_as_published": bool(options & 0x08),
                "retain_handling": options >> 4 & 0x03,
            }
        )
    identifiers = properties.get("subscription_identifiers") or [None]
    return {
        "packet_id": packet_id,
        "properties": properties,
        "subscription_identifier": identifiers[0],
        "subscriptions": subscriptions,
    }


def _acks_with_codes(r: _Reader) -> dict[str, Any]:
    """SUBACK, UNSUBACK: packet identifier, properties, one Reason Code per filter."""
    packet_id = r.u16()
    properties = r.properties()
    codes = list(r.take(len(r.body) - r.pos))
    return {"packet_id": packet_id, "properties": properties, "reason_codes": codes}


def _unsubscribe(r: _Reader) -> dict[str, Any]:
    packet_id = r.u16()
    properties = r.properties()
    filters = []
    while not r.at_end():
        filters.append(r.string())
    return {"packet_id": packet_id, "properties": properties, "filters": filters}


def _with_reason(r: _Reader) -> dict[str, Any]:
    """DISCONNECT, AUTH: Reason Code 0x00 and no properties when the body is empty."""
    if r.at_end():
        return {"reason_code": 0, "properties": {}}
    reason_code = r.byte()
    properties = r.properties() if not r.at_end() else {}
    return {"reason_code": reason_code, "properties": properties}


def _empty(r: _Reader) -> dict[str, Any]:
    return {}


_FIELDS = {
    "CONNECT": _connect,
    "CONNACK": _connack,
    "SUBSCRIBE": _subscribe,
    "SUBACK": _acks_with_codes,
    "UNSUBSCRIBE": _unsubscribe,
    "UNSUBACK": _acks_with_codes,
    "PINGREQ": _empty,
    "PINGRESP": _empty,
    "DISCONNECT": _with_reason,
    "AUTH": _with_reason,
}


def describe(first: int, body: bytes) -> dict[str, Any]:
    """The fields of a 5.0 control packet (first byte, body after the Remaining Length)."""
    kind = first >> 4
    name = "AUTH" if kind == 15 else T(kind).name
    reader = _Reader(body)
    try:
        fields = _FIELDS[name](reader)
    except _Short as short:
        return {"type": name, "error": {"rule": None, "offset": reader.pos, "message": str(short)}}
    if not reader.at_end():
        extra = f"{len(body) - reader.pos} byte(s) after the last field"
        return {"type": name, "error": {"rule": None, "offset": reader.pos, "message": extra}}
    return {"type": name, **fields}
