"""What the Python drivers share in MQTT 5.0: the plan's properties (the form of ``pubproof
decode``'s ``P``) to a library's names and back."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

#: a P property key -> the MQTT 5.0 property name (as paho-mqtt spells it, without spaces)
PUBLISH_NAMES = {
    "payload_format_indicator": "PayloadFormatIndicator",
    "message_expiry_interval": "MessageExpiryInterval",
    "topic_alias": "TopicAlias",
    "response_topic": "ResponseTopic",
    "correlation_data_hex": "CorrelationData",
    "user_properties": "UserProperty",
    "content_type": "ContentType",
    "subscription_identifiers": "SubscriptionIdentifier",
}
LIMIT_NAMES = {
    "receive_maximum": "ReceiveMaximum",
    "topic_alias_maximum": "TopicAliasMaximum",
    "maximum_packet_size": "MaximumPacketSize",
}


def to_library(
    properties: Mapping[str, Any], names: Mapping[str, str] = PUBLISH_NAMES
) -> dict[str, Any]:
    """The plan's PUBLISH properties by a library's ``names`` (paho-mqtt's by default), with
    values as libraries take them (Correlation Data as bytes, User Properties as (name,
    value) pairs)."""
    out: dict[str, Any] = {}
    for key, value in properties.items():
        if key == "correlation_data_hex":
            value = bytes.fromhex(value)
        elif key == "user_properties":
            value = [(str(n), str(v)) for n, v in value]
        out[names[key]] = value
    return out


def from_library(get: Callable[[str], Any]) -> dict[str, Any]:
    """A received message's properties in the P form (``get``: the value of a 5.0
    property by name, None when absent); the Topic Alias is the library's business."""
    out: dict[str, Any] = {}
    for key, name in PUBLISH_NAMES.items():
        value = get(name)
        if value is None or key == "topic_alias" or value in ([], ()):
            continue
        if key == "correlation_data_hex":
            value = bytes(value).hex()
        elif key == "user_properties":
            value = [[str(n), str(v)] for n, v in value]
        elif key == "subscription_identifiers":
            value = list(value) if isinstance(value, list | tuple) else [value]
        out[key] = value
    return out
