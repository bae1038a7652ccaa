"""Packets as ``P`` (the JSON form of ``pubproof decode``) and back.

In MQTT 5.0 (a packet whose ``properties`` is not None) ``P`` has a ``"properties"`` object
with a key for each property present (``correlation_data_hex`` for the Correlation Data,
``[name, value]`` lists for the User Properties), and an acknowledgement its
``"reason_code"``; 3.1 and 3.1.1 packets have neither key (see :mod:`pubproof.model.trace`).
"""

from __future__ import annotations

from typing import Any

from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition
from pubproof.model.rules import Rule
from pubproof.model.trace import (
    ACK_PROPERTY_KEYS,
    PUBLISH_PROPERTY_KEYS,
    AckP,
    AckProps,
    P,
    PublishP,
    PublishProps,
)
from pubproof.reference.errors import InvalidPacket
from pubproof.reference.packets import ACK_CLASSES, Packet, Publish
from pubproof.reference.properties import AckProperties, PublishProperties

_PUBLISH_KEYS = {"type", "dup", "qos", "retain", "topic", "packet_id", "payload_hex", "properties"}
_ACK_KEYS = {"type", "packet_id", "reason_code", "properties"}


def _publish_props(props: PublishProperties) -> PublishProps:
    out: PublishProps = {}
    # In the order of PUBLISH_PROPERTY_KEYS; a key only for a property present.
    if props.payload_format_indicator is not None:
        out["payload_format_indicator"] = props.payload_format_indicator
    if props.message_expiry_interval is not None:
        out["message_expiry_interval"] = props.message_expiry_interval
    if props.topic_alias is not None:
        out["topic_alias"] = props.topic_alias
    if props.response_topic is not None:
        out["response_topic"] = props.response_topic
    if props.correlation_data is not None:
        out["correlation_data_hex"] = props.correlation_data.hex()
    if props.user_properties:
        out["user_properties"] = [[name, value] for name, value in props.user_properties]
    if props.subscription_identifiers:
        out["subscription_identifiers"] = list(props.subscription_identifiers)
    if props.content_type is not None:
        out["content_type"] = props.content_type
    return out


def _ack_props(props: AckProperties) -> AckProps:
    out: AckProps = {}
    if props.reason_string is not None:
        out["reason_string"] = props.reason_string
    if props.user_properties:
        out["user_properties"] = [[name, value] for name, value in props.user_properties]
    return out


def to_p(packet: Packet) -> P:
    """The ``P`` dict of a packet."""
    if isinstance(packet, Publish):
        p: PublishP = {
            "type": "PUBLISH",
            "dup": packet.dup,
            "qos": packet.qos,
            "retain": packet.retain,
            "topic": packet.topic,
            "packet_id": packet.packet_id,
            "payload_hex": packet.payload.hex(),
        }
        if packet.properties is not None:
            p["properties"] = _publish_props(packet.properties)
        return p
    ack: AckP = {"type": packet.type_name, "packet_id": packet.packet_id}  # type: ignore[typeddict-item]
    # A 5.0 acknowledgement (properties not None) always shows its Reason Code; a packet
    # built with a Reason Code but no properties shows it too, so that no field is lost.
    if packet.properties is not None or packet.reason_code != 0:
        ack["reason_code"] = packet.reason_code
    if packet.properties is not None:
        ack["properties"] = _ack_props(packet.properties)
    return ack


def _bad(rule: Rule, message: str) -> InvalidPacket:
    return InvalidPacket(rule.id_for(Edition.V311), message)


def _bad50(rule: Rule, message: str) -> InvalidPacket:
    return InvalidPacket(rule.id_for(Edition.V50), message, edition=Edition.V50.value)


def _pairs(value: object) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list) or not all(
        isinstance(pair, list) and len(pair) == 2 for pair in value
    ):
        raise _bad50(R.STRING_PAIR, "user_properties is a list of [name, value] lists")
    return tuple((pair[0], pair[1]) for pair in value)


def _publish_properties(obj: object) -> PublishProperties:
    if not isinstance(obj, dict):
        raise _bad50(R.PROPERTY_IDENTIFIER, "properties is a JSON object")
    unknown = set(obj) - set(PUBLISH_PROPERTY_KEYS)
    if unknown:
        raise _bad50(
            R.PROPERTY_IDENTIFIER, f"unknown PUBLISH property(ies): {', '.join(sorted(unknown))}"
        )
    correlation = obj.get("correlation_data_hex")
    data: bytes | None = None
    if correlation is not None:
        if not isinstance(correlation, str):
            raise _bad50(R.PROPERTY_VALUE, "correlation_data_hex is a string of hex digits")
        try:
            data = bytes.fromhex(correlation)
        except ValueError:
            raise _bad50(R.PROPERTY_VALUE, "correlation_data_hex is not hex") from None
    ids = obj.get("subscription_identifiers", [])
    if not isinstance(ids, list):
        raise _bad50(R.SUBSCRIPTION_ID_ZERO, "subscription_identifiers is a list of integers")
    return PublishProperties(
        payload_format_indicator=obj.get("payload_format_indicator"),
        message_expiry_interval=obj.get("message_expiry_interval"),
        topic_alias=obj.get("topic_alias"),
        response_topic=obj.get("response_topic"),
        correlation_data=data,
        user_properties=_pairs(obj.get("user_properties", [])),
        subscription_identifiers=tuple(ids),
        content_type=obj.get("content_type"),
    )


def _ack_properties(obj: object) -> AckProperties:
    if not isinstance(obj, dict):
        raise _bad50(R.PROPERTY_IDENTIFIER, "properties is a JSON object")
    unknown = set(obj) - set(ACK_PROPERTY_KEYS)
    if unknown:
        raise _bad50(
            R.PROPERTY_IDENTIFIER,
            f"unknown acknowledgement property(ies): {', '.join(sorted(unknown))}",
        )
    return AckProperties(
        reason_string=obj.get("reason_string"),
        user_properties=_pairs(obj.get("user_properties", [])),
    )


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
        props = obj.get("properties")
        return Publish(
            topic=obj["topic"],
            payload=payload,
            qos=obj.get("qos", 0),
            packet_id=obj.get("packet_id"),
            dup=obj.get("dup", False),
            retain=obj.get("retain", False),
            properties=None if props is None else _publish_properties(props),
        )
    cls = ACK_CLASSES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise _bad(R.OUT_OF_SCOPE_TYPE, f"unknown packet type {kind!r}")
    unknown = set(obj) - _ACK_KEYS
    if unknown:
        raise _bad(R.OUT_OF_SCOPE_TYPE, f"unknown {kind} field(s): {', '.join(sorted(unknown))}")
    if "packet_id" not in obj:
        raise _bad(R.BIG_ENDIAN, f"a {kind} needs a packet_id")
    props = obj.get("properties")
    return cls(
        packet_id=obj["packet_id"],
        reason_code=obj.get("reason_code", 0),
        properties=None if props is None else _ack_properties(props),
    )
