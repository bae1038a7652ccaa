"""Packets as ``P`` (the JSON form of ``pubproof decode``) and back."""

from __future__ import annotations

from typing import Any

from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition
from pubproof.model.rules import Rule
from pubproof.model.trace import P
from pubproof.reference.errors import InvalidPacket
from pubproof.reference.packets import ACK_CLASSES, Packet, Publish

_PUBLISH_KEYS = {"type", "dup", "qos", "retain", "topic", "packet_id", "payload_hex"}


def to_p(packet: Packet) -> P:
    """The ``P`` dict of a packet."""
    if isinstance(packet, Publish):
        return {
            "type": "PUBLISH",
            "dup": packet.dup,
            "qos": packet.qos,
            "retain": packet.retain,
            "topic": packet.topic,
            "packet_id": packet.packet_id,
            "payload_hex": packet.payload.hex(),
        }
    return {"type": packet.type_name, "packet_id": packet.packet_id}  # type: ignore[typeddict-item]


def _bad(rule: Rule, message: str) -> InvalidPacket:
    return InvalidPacket(rule.id_for(Edition.V311), message)


def from_p(obj: Any) -> Packet:
    """The packet a ``P`` dict describes; ``InvalidPacket`` if it describes none."""
    if not isinstance(obj, dict):
        raise _bad(R.OUT_OF_SCOPE_TYPE, "a packet is a JSON object")
    kind = obj.get("type")
    if kind == "PUBLISH":
        unknown = set(obj) - _PUBLISH_KEYS
        if unknown:
            raise _bad(
                R.OUT_OF_SCOPE_TYPE, f"unknown PUBLISH field(s): {', '.join(sorted(unknown))}"
            )
        payload_hex = obj.get("payload_hex", "")
        if not isinstance(payload_hex, str):
            raise _bad(R.PAYLOAD_REST, "payload_hex is a string of hex digits")
        try:
            payload = bytes.fromhex(payload_hex)
        except ValueError:
            raise _bad(R.PAYLOAD_REST, "payload_hex is not a string of hex digits") from None
        if "topic" not in obj:
            raise _bad(R.TOPIC_UTF8, "a PUBLISH needs a topic")
        return Publish(
            topic=obj["topic"],
            payload=payload,
            qos=obj.get("qos", 0),
            packet_id=obj.get("packet_id"),
            dup=obj.get("dup", False),
            retain=obj.get("retain", False),
        )
    cls = ACK_CLASSES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise _bad(R.OUT_OF_SCOPE_TYPE, f"unknown packet type {kind!r}")
    unknown = set(obj) - {"type", "packet_id"}
    if unknown:
        raise _bad(R.OUT_OF_SCOPE_TYPE, f"unknown {kind} field(s): {', '.join(sorted(unknown))}")
    if "packet_id" not in obj:
        raise _bad(R.BIG_ENDIAN, f"a {kind} needs a packet_id")
    return cls(packet_id=obj["packet_id"])
