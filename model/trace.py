"""The evidence format every part of pubproof shares: packets as plain JSON-ready dicts.

``P`` is exactly what ``pubproof decode`` prints for a packet::

    {"type": "PUBLISH", "dup": false, "qos": 1, "retain": false,
     "topic": "a/b", "packet_id": 10, "payload_hex": "6869"}
    {"type": "PUBACK" | "PUBREC" | "PUBREL" | "PUBCOMP", "packet_id": 10}

``packet_id`` is ``None`` (JSON null) for QoS 0. A trace adds ``dir`` and ``conn`` to each
packet; the protocol issue extends it with events.
"""

from __future__ import annotations

from typing import Literal, TypedDict, TypeGuard

AckType = Literal["PUBACK", "PUBREC", "PUBREL", "PUBCOMP"]
ACK_TYPE_NAMES: tuple[AckType, ...] = ("PUBACK", "PUBREC", "PUBREL", "PUBCOMP")


class PublishP(TypedDict):
    type: Literal["PUBLISH"]
    dup: bool
    qos: int
    retain: bool
    topic: str
    packet_id: int | None
    payload_hex: str


class AckP(TypedDict):
    type: AckType
    packet_id: int


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
