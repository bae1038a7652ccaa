"""The control packets a probe needs besides PUBLISH and its acknowledgements.

pubproof's codec covers PUBLISH, PUBACK, PUBREC, PUBREL and PUBCOMP only; a client also
needs CONNECT/CONNACK, SUBSCRIBE/SUBACK, PINGREQ/PINGRESP and DISCONNECT. This module
encodes the ones a client sends and describes any of them as a JSON-ready dict, in the
style of ``P``: ``{"type": "CONNACK", "session_present": false, "return_code": 0}``. A
packet that cannot be read gives ``{"type": NAME, "error": message}``.

MQTT 3.1.1 CONNECT names the protocol "MQTT" at level 4; MQTT 3.1 names it "MQIsdp" at
level 3 (section 3.1 of each).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from pubproof.model.editions import Edition
from pubproof.model.wire import encode_remaining_length

CONTROL_TYPES: Mapping[int, str] = MappingProxyType(
    {
        1: "CONNECT", 2: "CONNACK", 8: "SUBSCRIBE", 9: "SUBACK", 10: "UNSUBSCRIBE",
        11: "UNSUBACK", 12: "PINGREQ", 13: "PINGRESP", 14: "DISCONNECT",
    }
)  # fmt: skip
PROTOCOL: Mapping[Edition, tuple[str, int]] = MappingProxyType(
    {Edition.V311: ("MQTT", 4), Edition.V31: ("MQIsdp", 3)}
)
PINGREQ = bytes((0xC0, 0x00))
DISCONNECT = bytes((0xE0, 0x00))


def _string(text: str) -> bytes:
    data = text.encode("utf-8")
    return len(data).to_bytes(2, "big") + data


def _packet(first: int, body: bytes) -> bytes:
    return bytes((first,)) + encode_remaining_length(len(body)) + body


def connect(
    client_id: str, *, clean: bool, keep_alive: int = 60, edition: Edition = Edition.V311
) -> bytes:
    """CONNECT without will, user name or password."""
    name, level = PROTOCOL[edition]
    flags = 0x02 if clean else 0x00
    return _packet(
        0x10,
        _string(name) + bytes((level, flags)) + keep_alive.to_bytes(2, "big") + _string(client_id),
    )


def subscribe(packet_id: int, subscriptions: Sequence[tuple[str, int]]) -> bytes:
    """SUBSCRIBE to topic filters, each with its requested maximum QoS."""
    # [MQTT-3.8.1-1] "Bits 3,2,1 and 0 of the fixed header of the SUBSCRIBE Control Packet
    # are reserved and MUST be set to 0,0,1 and 0 respectively."
    body = packet_id.to_bytes(2, "big")
    body += b"".join(_string(topic_filter) + bytes((qos,)) for topic_filter, qos in subscriptions)
    return _packet(0x82, body)


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


def describe(first: int, body: bytes) -> dict[str, Any]:
    """The fields of a control packet (first byte, body after the Remaining Length).

    A packet that cannot be read gives ``{"type": NAME, "error": {"rule": null, "offset",
    "message"}}`` (offset into the body).
    """
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
    if flags & 0x04:  # a will: topic and message
        reader.binary()
        reader.binary()
    if flags & 0x80:
        reader.binary()
    if flags & 0x40:
        reader.binary()
    return {
        "protocol": protocol,
        "level": level,
        "clean_session": bool(flags & 0x02),
        "keep_alive": keep_alive,
        "client_id": client_id,
    }


def _connack(reader: _Reader, first: int) -> dict[str, Any]:
    acknowledge = reader.byte()
    return {"session_present": bool(acknowledge & 0x01), "return_code": reader.byte()}


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
