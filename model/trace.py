"""The evidence format every part of pubproof shares: packets as plain JSON-ready dicts.

``P`` is exactly what ``pubproof decode`` prints for a packet::

    {"type": "PUBLISH", "dup": false, "qos": 1, "retain": false,
     "topic": "a/b", "packet_id": 10, "payload_hex": "6869"}
    {"type": "PUBACK" | "PUBREC" | "PUBREL" | "PUBCOMP", "packet_id": 10}

``packet_id`` is ``None`` (JSON null) for QoS 0. A trace adds ``dir`` and ``conn`` to each
packet; the protocol issue extends it with events.

In MQTT 5.0 every packet also has ``"properties"`` (a key only for each property present),
and an acknowledgement has ``"reason_code"`` (0 for the two-byte short form)::

    {"type": "PUBLISH", ..., "topic": "", "properties": {"topic_alias": 3,
     "user_properties": [["k", "v"]], "subscription_identifiers": [7]}}
    {"type": "PUBREC", "packet_id": 10, "reason_code": 16, "properties": {}}

3.1 and 3.1.1 packets have neither key.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict, TypeGuard

from pubproof.model.properties50 import ACK_ORDER, BY_IDENTIFIER, PUBLISH_ORDER

AckType = Literal["PUBACK", "PUBREC", "PUBREL", "PUBCOMP"]
ACK_TYPE_NAMES: tuple[AckType, ...] = ("PUBACK", "PUBREC", "PUBREL", "PUBCOMP")


class PublishProps(TypedDict, total=False):
    """MQTT 5.0 PUBLISH properties, a key for each one present (section 3.3.2.3)."""

    payload_format_indicator: int
    message_expiry_interval: int
    topic_alias: int
    response_topic: str
    correlation_data_hex: str
    user_properties: list[list[str]]  # [name, value] pairs, in the order sent
    subscription_identifiers: list[int]  # in the order sent
    content_type: str


class AckProps(TypedDict, total=False):
    """MQTT 5.0 acknowledgement properties (sections 3.4.2.2 to 3.7.2.2)."""

    reason_string: str
    user_properties: list[list[str]]


#: The keys of ``PublishProps`` and ``AckProps``, in the order pubproof writes them (the
#: encoders' order, :data:`pubproof.model.properties50.PUBLISH_ORDER`).
PUBLISH_PROPERTY_KEYS = tuple(BY_IDENTIFIER[i].key for i in PUBLISH_ORDER)
ACK_PROPERTY_KEYS = tuple(BY_IDENTIFIER[i].key for i in ACK_ORDER)


class PublishP(TypedDict):
    type: Literal["PUBLISH"]
    dup: bool
    qos: int
    retain: bool
    topic: str
    packet_id: int | None
    payload_hex: str
    properties: NotRequired[PublishProps]  # MQTT 5.0 only


class AckP(TypedDict):
    type: AckType
    packet_id: int
    reason_code: NotRequired[int]  # MQTT 5.0 only
    properties: NotRequired[AckProps]  # MQTT 5.0 only


P = PublishP | AckP


def is_publish(packet: P) -> TypeGuard[PublishP]:
    return packet["type"] == "PUBLISH"


def publish(
    *,
    topic: str,
    qos: int = 0,
    packet_id: int | None = None,
    payload: bytes = b"",
    dup: bool = False,
    retain: bool = False,
) -> PublishP:
    """Build a PUBLISH ``P`` (a convenience for tests, notebooks and the corpus)."""
    return {
        "type": "PUBLISH",
        "dup": dup,
        "qos": qos,
        "retain": retain,
        "topic": topic,
        "packet_id": packet_id,
        "payload_hex": payload.hex(),
    }


def ack(kind: AckType, packet_id: int) -> AckP:
    return {"type": kind, "packet_id": packet_id}
