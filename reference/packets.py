"""Packets of the reference codec: frozen, slotted, keyword-only dataclasses that validate
themselves on construction.

Construction enforces what holds in every edition (types, ranges, a packet identifier
exactly when QoS > 0, a topic that UTF-8 can encode within 65,535 bytes). What an edition
or reading adds (wildcards, empty topics, DUP on QoS 0, QoS 3, the MQTT 5.0 fields in an
earlier edition, a Reason Code an acknowledgement may not carry) is checked by
:func:`pubproof.reference.codec.encode`, which knows the edition.

MQTT 5.0 adds ``properties`` to every packet and ``reason_code`` to the acknowledgements.
In 3.1 and 3.1.1 ``properties`` is ``None`` and ``reason_code`` 0; the 5.0 decoder always
gives a properties object (empty when the packet has none), so the three encodings of a
successful acknowledgement decode to equal packets.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition
from pubproof.model.rules import Rule
from pubproof.reference.errors import InvalidPacket
from pubproof.reference.layout import check_layout
from pubproof.reference.properties import AckProperties, PublishProperties

_V311 = Edition.V311


def _invalid(rule: Rule, message: str) -> InvalidPacket:
    return InvalidPacket(rule.id_for(_V311), message)


@dataclass(frozen=True, slots=True, kw_only=True)
class Publish:
    """A PUBLISH packet: an application message on its way to a receiver."""

    topic: str
    payload: bytes = b""
    qos: int = 0
    packet_id: int | None = None
    dup: bool = False
    retain: bool = False
    #: MQTT 5.0 only (``None`` in 3.1 and 3.1.1).
    properties: PublishProperties | None = None

    type_name: ClassVar[str] = "PUBLISH"

    def __post_init__(self) -> None:
        if not isinstance(self.topic, str):
            raise _invalid(R.TOPIC_UTF8, f"topic must be a str, not {type(self.topic).__name__}")
        if not isinstance(self.payload, bytes):
            raise _invalid(R.PAYLOAD_REST, "payload must be bytes")
        if type(self.qos) is not int or not 0 <= self.qos <= 3:
            raise _invalid(
                R.QOS_RESERVED, f"QoS is 0, 1 or 2 (3 only under a 3.1 reading), not {self.qos!r}"
            )
        if type(self.dup) is not bool or type(self.retain) is not bool:
            raise _invalid(R.DUP_QOS0, "dup and retain are booleans")
        if self.properties is not None and type(self.properties) is not PublishProperties:
            raise _invalid(R.OUT_OF_SCOPE_TYPE, "properties is a PublishProperties or None")
        if self.qos == 0:
            if self.packet_id is not None:
                # [MQTT-2.3.1-5] "MUST NOT contain a Packet Identifier if its QoS value is set to 0"
                raise _invalid(R.PACKET_ID_PRESENCE, "a QoS 0 PUBLISH has no packet identifier")
        elif self.packet_id is None:
            raise _invalid(
                R.PACKET_ID_PRESENCE, f"a QoS {self.qos} PUBLISH needs a packet identifier"
            )
        elif type(self.packet_id) is not int or not 1 <= self.packet_id <= 0xFFFF:
            # [MQTT-2.3.1-1] "MUST contain a non-zero 16-bit Packet Identifier"
            raise _invalid(
                R.PACKET_ID_NONZERO, f"packet identifier {self.packet_id!r} is not in 1..65535"
            )
        try:
            encoded = self.topic.encode("utf-8")
        except UnicodeEncodeError:
            # [MQTT-1.5.3-1] no encodings of code points between U+D800 and U+DFFF
            raise _invalid(R.TOPIC_UTF8, "the topic name contains a surrogate code point") from None
        if len(encoded) > 0xFFFF:
            # [MQTT-4.7.3-3] "MUST NOT encode to more than 65535 bytes"
            raise _invalid(R.TOPIC_MAX_BYTES, f"the topic name encodes to {len(encoded)} bytes")
        if 2 + len(encoded) + (2 if self.qos else 0) + len(self.payload) > 268_435_455:
            raise _invalid(R.RL_MAX_BYTES, "the packet is longer than 268,435,455 bytes")


@dataclass(frozen=True, slots=True, kw_only=True)
class _Ack:
    packet_id: int
    #: MQTT 5.0 only (0, Success, in 3.1 and 3.1.1); which codes an acknowledgement may
    #: carry is the encoder's to check.
    reason_code: int = 0
    #: MQTT 5.0 only (``None`` in 3.1 and 3.1.1).
    properties: AckProperties | None = None

    type_name: ClassVar[str] = ""

    def __post_init__(self) -> None:
        if type(self.packet_id) is not int or not 0 <= self.packet_id <= 0xFFFF:
            raise _invalid(
                R.BIG_ENDIAN, f"packet identifier {self.packet_id!r} is not a 16-bit integer"
            )
        if type(self.reason_code) is not int or not 0 <= self.reason_code <= 0xFF:
            # A Reason Code is one byte (MQTT 5.0 section 2.4).
            raise InvalidPacket(
                R.ACK_REASON_CODE[self.type_name].id_for(Edition.V50),
                f"the Reason Code is a byte, not {self.reason_code!r}",
            )
        if self.properties is not None and type(self.properties) is not AckProperties:
            raise _invalid(R.OUT_OF_SCOPE_TYPE, "properties is an AckProperties or None")


@dataclass(frozen=True, slots=True, kw_only=True)
class PubAck(_Ack):
    """PUBACK: the receiver's answer to a QoS 1 PUBLISH."""

    type_name: ClassVar[str] = "PUBACK"


@dataclass(frozen=True, slots=True, kw_only=True)
class PubRec(_Ack):
    """PUBREC: the receiver's first answer to a QoS 2 PUBLISH."""

    type_name: ClassVar[str] = "PUBREC"


@dataclass(frozen=True, slots=True, kw_only=True)
class PubRel(_Ack):
    """PUBREL: the sender's release of a QoS 2 message after PUBREC."""

    type_name: ClassVar[str] = "PUBREL"


@dataclass(frozen=True, slots=True, kw_only=True)
class PubComp(_Ack):
    """PUBCOMP: the receiver's answer to PUBREL, the end of a QoS 2 flow."""

    type_name: ClassVar[str] = "PUBCOMP"


Ack = PubAck | PubRec | PubRel | PubComp
Packet = Publish | Ack

ACK_CLASSES: dict[str, type[Ack]] = {
    "PUBACK": PubAck,
    "PUBREC": PubRec,
    "PUBREL": PubRel,
    "PUBCOMP": PubComp,
}


class PublishLayout:
    """Internal: the slots of :class:`Publish`, in the same order, in a plain class: the
    decoder fills one, then makes it a ``Publish`` by the layout swap
    (:mod:`pubproof.reference.layout` says why and what makes it safe)."""

    # The order is that of Publish's fields, which the layout check compares.
    __slots__ = ("topic", "payload", "qos", "packet_id", "dup", "retain", "properties")  # noqa: RUF023
    topic: str
    payload: bytes
    qos: int
    packet_id: int | None
    dup: bool
    retain: bool
    properties: PublishProperties | None


class AckLayout:
    """Internal: the slots of the acknowledgements; see :class:`PublishLayout`."""

    __slots__ = ("packet_id", "reason_code", "properties")  # noqa: RUF023
    packet_id: int
    reason_code: int
    properties: AckProperties | None


def trusted_publish(
    topic: str,
    payload: bytes,
    qos: int,
    packet_id: int | None,
    dup: bool,
    retain: bool,
    properties: PublishProperties | None = None,
) -> Publish:
    """A ``Publish`` from fields the decoder has already checked (no ``__post_init__``)."""
    obj = PublishLayout()
    obj.topic = topic
    obj.payload = payload
    obj.qos = qos
    obj.packet_id = packet_id
    obj.dup = dup
    obj.retain = retain
    obj.properties = properties
    # the layout swap (reference.layout)
    obj.__class__ = Publish  # type: ignore[assignment]
    return obj  # type: ignore[return-value]


def _trusted_ack(cls: type[Ack]) -> Callable[[int, int, AckProperties | None], Ack]:
    def make(packet_id: int, reason_code: int = 0, properties: AckProperties | None = None) -> Ack:
        obj = AckLayout()
        obj.packet_id = packet_id
        obj.reason_code = reason_code
        obj.properties = properties
        # the layout swap (reference.layout)
        obj.__class__ = cls  # type: ignore[assignment]
        return obj  # type: ignore[return-value]

    return make


trusted_ack = {name: _trusted_ack(cls) for name, cls in ACK_CLASSES.items()}


def _check_layouts() -> None:
    """The trusted constructors build exactly what the public ones build."""
    check_layout(PublishLayout, Publish)
    check_layout(AckLayout, _Ack)
    props = PublishProperties(topic_alias=2)
    made = trusted_publish("a/b", b"x", 1, 7, True, False, props)
    expected = Publish(topic="a/b", payload=b"x", qos=1, packet_id=7, dup=True, properties=props)
    if type(made) is not Publish or made != expected or repr(made) != repr(expected):
        raise RuntimeError("trusted_publish does not build a Publish")
    ack_props = AckProperties(reason_string="r")
    for name, cls in ACK_CLASSES.items():
        ack = trusted_ack[name](9, 0x80 if name in ("PUBACK", "PUBREC") else 0x92, ack_props)
        code = ack.reason_code
        if type(ack) is not cls or ack != cls(packet_id=9, reason_code=code, properties=ack_props):
            raise RuntimeError(f"trusted_ack[{name!r}] does not build a {cls.__name__}")


_check_layouts()
