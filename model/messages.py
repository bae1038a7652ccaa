"""Application messages as a server distributes them, and the copies it owes its sessions.

Rules / theory of operation
---------------------------
A ``Publication`` is what a client published, as the server received it (topic name with
any Topic Alias already resolved, payload, QoS, RETAIN, and in 5.0 the properties). Once
the server takes ownership of it (:data:`OWNERSHIP`) the distribution model stamps it with
its place in the order of ownership (``seq``) and the time on the model's clock
(``received_at``, milliseconds), which makes it a ``Message``.

A ``Copy`` is one PUBLISH the server owes one session for one message: at the QoS,
RETAIN, properties and Subscription Identifiers the rules give (:mod:`.forwarding`). Its
DUP is 0: "its value MUST be determined solely by whether the outgoing PUBLISH packet is a
retransmission" [MQTT-3.3.1-3], and a copy is a first transmission (re-sending is the
flows' business, :mod:`.flows`). Its Message Expiry Interval is computed when it is sent:
"the received value minus the time that the Application Message has been waiting in the
Server" [MQTT-3.3.2-6]. A copy never carries the publisher's Topic Alias: "A receiver MUST
NOT carry forward any Topic Alias mappings from one Network Connection to another"
[MQTT-3.3.2-7].

Time is the model's explicit clock, in whole milliseconds; nothing here reads the wall
clock.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from pubproof.model.flows import Method
from pubproof.model.trace import PublishP, PublishProps

#: "The Subscription Identifier can have the value of 1 to 268,435,455." (3.3.2.3.8)
MAX_SUBSCRIPTION_IDENTIFIER = 268_435_455
MAX_FOUR_BYTE = 0xFFFF_FFFF


def _check_qos(qos: object) -> None:
    if type(qos) is not int or not 0 <= qos <= 2:
        raise ValueError(f"a QoS is 0, 1 or 2, not {qos!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Properties:
    """The MQTT 5.0 properties of an Application Message that the server forwards (3.3.2.3)
    and, never forwarded, the Topic Alias it arrived with."""

    payload_format_indicator: int | None = None
    message_expiry_interval: int | None = None  # seconds, as received
    content_type: str | None = None
    response_topic: str | None = None
    correlation_data: bytes | None = None
    user_properties: tuple[tuple[str, str], ...] = ()  # in the order received
    topic_alias: int | None = None  # the publisher's connection only [MQTT-3.3.2-7]

    def __post_init__(self) -> None:
        if self.payload_format_indicator not in (None, 0, 1):
            raise ValueError("the Payload Format Indicator is 0 or 1")
        expiry = self.message_expiry_interval
        if expiry is not None and (type(expiry) is not int or not 0 <= expiry <= MAX_FOUR_BYTE):
            raise ValueError("the Message Expiry Interval is a Four Byte Integer")
        if any(len(pair) != 2 for pair in self.user_properties):
            raise ValueError("a User Property is a (name, value) pair")

    @classmethod
    def from_p(cls, props: PublishProps) -> Properties:
        """From the trace form's properties (``P["properties"]``)."""
        data = props.get("correlation_data_hex")
        return cls(
            payload_format_indicator=props.get("payload_format_indicator"),
            message_expiry_interval=props.get("message_expiry_interval"),
            content_type=props.get("content_type"),
            response_topic=props.get("response_topic"),
            correlation_data=bytes.fromhex(data) if data is not None else None,
            user_properties=tuple((n, v) for n, v in props.get("user_properties", [])),
            topic_alias=props.get("topic_alias"),
        )

    def forwarded(self) -> Properties:
        """The properties a forwarded copy carries: every one unaltered [MQTT-3.3.2-4]
        [MQTT-3.3.2-15] [MQTT-3.3.2-16] [MQTT-3.3.2-17] [MQTT-3.3.2-18] [MQTT-3.3.2-20],
        but no Topic Alias [MQTT-3.3.2-7]."""
        return Properties(
            payload_format_indicator=self.payload_format_indicator,
            message_expiry_interval=self.message_expiry_interval,
            content_type=self.content_type,
            response_topic=self.response_topic,
            correlation_data=self.correlation_data,
            user_properties=self.user_properties,
        )


NO_PROPERTIES = Properties()


@dataclass(frozen=True, slots=True, kw_only=True)
class Publication:
    """A message a client published, as received (any Topic Alias resolved to its name)."""

    publisher: str  # the client identifier of the publishing connection
    topic: str
    payload: bytes = b""
    qos: int = 0
    retain: bool = False
    properties: Properties = NO_PROPERTIES

    def __post_init__(self) -> None:
        _check_qos(self.qos)
        if not isinstance(self.payload, bytes):
            raise ValueError("a payload is bytes")

    @classmethod
    def from_p(cls, publisher: str, packet: PublishP) -> Publication:
        """From a PUBLISH in the trace form (its topic already resolved if it used an
        alias)."""
        return cls(
            publisher=publisher,
            topic=packet["topic"],
            payload=bytes.fromhex(packet["payload_hex"]),
            qos=packet["qos"],
            retain=packet["retain"],
            properties=Properties.from_p(packet.get("properties", {})),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """A publication the server has taken ownership of."""

    seq: int  # its place in the order the server took ownership of messages, from 1
    received_at: int  # the model's clock then, in milliseconds
    publication: Publication

    @property
    def topic(self) -> str:
        return self.publication.topic

    @property
    def qos(self) -> int:
        return self.publication.qos

    @property
    def publisher(self) -> str:
        return self.publication.publisher

    @property
    def expires_at(self) -> int | None:
        """When its Message Expiry Interval runs out (ms on the model's clock), or None."""
        interval = self.publication.properties.message_expiry_interval
        return None if interval is None else self.received_at + interval * 1000


class Cause(enum.Enum):
    """Why a copy is owed."""

    #: forwarded to a subscription that existed when the message arrived
    LIVE = "forwarded to an established subscription"
    #: a retained message sent because a subscription was made
    RETAINED = "sent because of a new subscription"


@dataclass(frozen=True, slots=True, kw_only=True)
class Copy:
    """One PUBLISH the server owes a session for one message (first transmission)."""

    copy_id: int  # the model's number for it, in the order owed, from 1
    client_id: str
    message: Message
    qos: int
    retain: bool
    cause: Cause
    topic_filters: tuple[str, ...]  # the subscriptions it is sent for
    subscription_identifiers: tuple[int, ...] = ()
    rules: tuple[str, ...] = ()  # the ids of the rules that decided it
    dup: bool = field(default=False, init=False)  # [MQTT-3.3.1-3]: a first transmission

    def __post_init__(self) -> None:
        _check_qos(self.qos)
        if self.qos > self.message.qos:
            raise ValueError("a copy is never sent above the published QoS")

    @property
    def topic(self) -> str:
        return self.message.topic

    def expired(self, now: int, boundary: str = "at") -> bool:
        """Whether its Message Expiry Interval has passed at ``now`` (reading
        ``expiry-boundary``: "at" once the whole interval has elapsed, "after" only beyond)."""
        end = self.message.expires_at
        if end is None:
            return False
        return now >= end if boundary == "at" else now > end

    def expiry_interval_at(self, now: int, rounding: str = "down") -> int | None:
        """The Message Expiry Interval to send at ``now``: "the received value minus the
        time that the Application Message has been waiting in the Server" [MQTT-3.3.2-6],
        in whole seconds (reading ``expiry-rounding``), never below 0; None if absent."""
        interval = self.message.publication.properties.message_expiry_interval
        if interval is None:
            return None
        left_ms = interval * 1000 - (now - self.message.received_at)
        seconds = left_ms // 1000 if rounding == "down" else -(-left_ms // 1000)
        return max(seconds, 0)

    def to_p(self, now: int, *, packet_id: int | None = None, rounding: str = "down") -> PublishP:
        """The PUBLISH this copy is, in the trace form, if sent at ``now``."""
        packet: PublishP = {
            "type": "PUBLISH",
            "dup": self.dup,
            "qos": self.qos,
            "retain": self.retain,
            "topic": self.topic,
            "packet_id": packet_id,
            "payload_hex": self.message.publication.payload.hex(),
        }
        props = _props_p(self.message.publication.properties.forwarded())
        expiry = self.expiry_interval_at(now, rounding)
        if expiry is not None:
            props["message_expiry_interval"] = expiry
        if self.subscription_identifiers:
            props["subscription_identifiers"] = list(self.subscription_identifiers)
        packet["properties"] = props
        return packet


def _props_p(props: Properties) -> PublishProps:
    out: PublishProps = {}
    if props.payload_format_indicator is not None:
        out["payload_format_indicator"] = props.payload_format_indicator
    if props.response_topic is not None:
        out["response_topic"] = props.response_topic
    if props.correlation_data is not None:
        out["correlation_data_hex"] = props.correlation_data.hex()
    if props.user_properties:
        out["user_properties"] = [[n, v] for n, v in props.user_properties]
    if props.content_type is not None:
        out["content_type"] = props.content_type
    if props.topic_alias is not None:  # never, for a forwarded copy [MQTT-3.3.2-7]
        out["topic_alias"] = props.topic_alias
    return out


#: When the server takes ownership of a message it receives (and so adds it to the
#: sessions of the matching subscriptions, [MQTT-4.5.0-1]): the point of each QoS flow.
#: QoS 1: "the Receiver MUST respond with a PUBACK Packet ..., having accepted ownership of
#: the Application Message" [MQTT-4.3.2-2]. QoS 2, Method B (store the packet identifier,
#: deliver on PUBLISH): when the PUBREC goes (5.0 Figure 4.3: "Store <Packet Identifier>
#: then Initiate onward delivery of the Application Message"); Method A (store the message,
#: deliver on PUBREL, the only one of MQTT 3.1): when the PUBREL arrives ("the server makes
#: the original message available to interested subscribers").
OWNERSHIP: Mapping[tuple[int, Method | None], str] = MappingProxyType(
    {
        (0, None): "on receipt of the PUBLISH",
        (1, None): "when the PUBACK is sent",
        (2, Method.B): "when the PUBREC is sent (Method B)",
        (2, Method.A): "when the PUBREL is received (Method A)",
    }
)


def ownership_point(qos: int, method: Method | None = None) -> str:
    """When the server takes ownership of a message of ``qos`` (``method`` for QoS 2)."""
    _check_qos(qos)
    if qos == 2 and method is None:
        raise ValueError("QoS 2 needs the receiver's Method (A or B)")
    return OWNERSHIP[qos, method if qos == 2 else None]
