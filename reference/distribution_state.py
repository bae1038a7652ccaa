"""The distribution core's values: what goes in (publications, subscription options, the
server's limits), what it keeps (messages, copies, grants, sessions) and what each event
returns (the outcomes).

Rules / theory of operation
---------------------------
A ``Publication`` is a PUBLISH the server has taken ownership of, as received (any Topic
Alias resolved); the core stamps it with its place in the order of ownership (``seq``)
and the clock (``received_at``, milliseconds), which makes it a ``Message``. A ``Copy`` is
one PUBLISH the server owes one session for one message (a first transmission: DUP 0
[MQTT-3.3.1-3]), at the QoS and RETAIN the rules give, with the Subscription Identifiers
and the topic filters it stands for. A ``Grant`` is one subscription as the server granted
it. A ``SessionState`` is what the server keeps for one client identifier: its status, how
long it outlives its connection, its non-shared subscriptions by topic filter (5.0 4.8.1:
"the Topic Filter can be used as a key"), and its copies: ``pending`` (owed, not started,
in order), ``optional`` (QoS 0 kept for an offline session at the server's choice) and
``under_way`` (QoS 1 and 2 started, until their flow completes).

The outcome records have the field names of the distribution model's
(:mod:`pubproof.model.distribution_state`), so that a broker can run either and the tests
compare them field by field; the model's judge-only fields (each delivery's decision
trails, the Shared Subscription offers) are not kept. Messages and copies are named
tuples: immutable like the frozen records, and made on the path every message takes,
where a tuple is the cheapest object to build (a frozen dataclass costs three times as
much); so is the outcome of a completed flow, made once per QoS 1 and 2 copy.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from pubproof.reference.errors import DistributionError, InvalidTopic
from pubproof.reference.packets import Publish
from pubproof.reference.properties import PublishProperties

USAGE = "usage"
#: 5.0: "If the Session Expiry Interval is 0xFFFFFFFF (UINT_MAX), the Session does not expire."
NEVER = 0xFFFF_FFFF
#: "The Subscription Identifier can have the value of 1 to 268,435,455." (3.3.2.3.8)
MAX_SUBSCRIPTION_IDENTIFIER = 268_435_455


def usage_error(message: str, rule: str = USAGE) -> DistributionError:
    """An event the core cannot take (``rule``: the MQTT rule it breaks, if any)."""
    return DistributionError(rule, message)


_usage = usage_error


def check_qos(qos: object, what: str = "a QoS") -> int:
    if type(qos) is not int or not 0 <= qos <= 2:
        raise _usage(f"{what} is 0, 1 or 2, not {qos!r}")
    return qos


class Cause(enum.Enum):
    """Why a copy is owed."""

    #: forwarded to a subscription that existed when the message arrived
    LIVE = "forwarded to an established subscription"
    #: a retained message sent because a subscription was made
    RETAINED = "sent because of a new subscription"


class SessionStatus(enum.Enum):
    CONNECTED = "connected"
    DISCONNECTED = "disconnected, kept"


class RetainedInput(enum.Enum):
    """What changed a topic's retained message."""

    RETAIN = "PUBLISH, RETAIN 1, with a payload"
    RETAIN_EMPTY = "PUBLISH, RETAIN 1, zero-byte payload"
    EXPIRE = "its Message Expiry Interval passes"


class ExpiryProperties(Protocol):
    """What the core reads of a publication's properties (5.0; absent in 3.x)."""

    @property
    def message_expiry_interval(self) -> int | None: ...


class Published(Protocol):
    """A publication as the core reads it: :class:`Publication`, or the distribution
    model's ``Publication``."""

    @property
    def publisher(self) -> str: ...
    @property
    def topic(self) -> str: ...
    @property
    def payload(self) -> bytes: ...
    @property
    def qos(self) -> int: ...
    @property
    def retain(self) -> bool: ...
    @property
    def properties(self) -> ExpiryProperties | None: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Publication:
    """A message a client published, as the server received it (any Topic Alias resolved
    to its topic name); ``properties`` are a 5.0 PUBLISH's, None in 3.x."""

    publisher: str  # the client identifier of the publishing connection
    topic: str
    payload: bytes = b""
    qos: int = 0
    retain: bool = False
    properties: PublishProperties | None = None

    def __post_init__(self) -> None:
        check_qos(self.qos)
        if type(self.publisher) is not str:
            raise _usage("the publisher is a client identifier (str)")
        if not isinstance(self.payload, bytes):
            raise _usage("a payload is bytes")
        if type(self.retain) is not bool:
            raise _usage("RETAIN is a bool")
        if self.properties is not None and type(self.properties) is not PublishProperties:
            raise _usage("properties are PublishProperties or None")

    @classmethod
    def from_packet(cls, publisher: str, packet: Publish) -> Publication:
        """The publication of a PUBLISH packet received from ``publisher``."""
        return cls(
            publisher=publisher,
            topic=packet.topic,
            payload=packet.payload,
            qos=packet.qos,
            retain=packet.retain,
            properties=packet.properties,
        )


class Message(NamedTuple):
    """A publication the server has taken ownership of."""

    seq: int  # its place in the order the server took ownership of messages, from 1
    received_at: int  # the core's clock then, in milliseconds
    publication: Published
    expires_at: int | None  # when its Message Expiry Interval runs out (ms), or None

    @property
    def topic(self) -> str:
        return self.publication.topic

    @property
    def qos(self) -> int:
        return self.publication.qos

    @property
    def publisher(self) -> str:
        return self.publication.publisher


class Copy(NamedTuple):
    """One PUBLISH the server owes a session for one message (first transmission)."""

    copy_id: int  # the core's number for it, from 1
    client_id: str
    message: Message
    qos: int
    retain: bool
    cause: Cause
    topic_filters: tuple[str, ...]  # the subscriptions it is sent for
    subscription_identifiers: tuple[int, ...]

    @property
    def dup(self) -> bool:
        """[MQTT-3.3.1-3] a first transmission: DUP 0 (re-sending is the flows' business)."""
        return False

    @property
    def topic(self) -> str:
        return self.message.publication.topic

    def expired(self, now: int, boundary: str = "at") -> bool:
        """Whether its Message Expiry Interval has passed at ``now`` (reading
        ``expiry-boundary``: "at" once the whole interval has elapsed, "after" beyond)."""
        end = self.message.expires_at
        return end is not None and (now >= end if boundary == "at" else now > end)

    def expiry_interval_at(self, now: int, rounding: str = "down") -> int | None:
        """The Message Expiry Interval to send at ``now`` [MQTT-3.3.2-6]: "the received
        value minus the time that the Application Message has been waiting in the Server",
        in whole seconds (reading ``expiry-rounding``), never below 0; None if absent."""
        end = self.message.expires_at
        if end is None:
            return None
        left = end - now
        seconds = left // 1000 if rounding == "down" else -(-left // 1000)
        return seconds if seconds > 0 else 0

    def to_packet(
        self, *, packet_id: int | None, message_expiry_interval: int | None, v50: bool
    ) -> Publish:
        """The PUBLISH this copy is, to send now: DUP 0 [MQTT-3.3.1-3], ``packet_id`` for
        QoS 1 and 2, and in 5.0 the publication's properties unaltered [MQTT-3.3.2-4]
        [MQTT-3.3.2-15] [MQTT-3.3.2-16] [MQTT-3.3.2-17] [MQTT-3.3.2-18] [MQTT-3.3.2-20],
        but no Topic Alias [MQTT-3.3.2-7], with ``message_expiry_interval`` (what
        ``DistributionCore.send`` returned: the interval left [MQTT-3.3.2-6]) and the
        copy's Subscription Identifiers [MQTT-3.3.4-3]."""
        publication = self.message.publication
        properties = None
        if v50:
            given = publication.properties
            properties = PublishProperties(
                payload_format_indicator=getattr(given, "payload_format_indicator", None),
                message_expiry_interval=message_expiry_interval,
                response_topic=getattr(given, "response_topic", None),
                correlation_data=getattr(given, "correlation_data", None),
                user_properties=tuple(getattr(given, "user_properties", ())),
                subscription_identifiers=self.subscription_identifiers,
                content_type=getattr(given, "content_type", None),
            )
        return Publish(
            topic=publication.topic,
            payload=publication.payload,
            qos=self.qos,
            packet_id=packet_id,
            retain=self.retain,
            properties=properties,
        )


class RetainHandling(enum.IntEnum):
    """MQTT 5.0 Retain Handling (Subscription Options bits 4 and 5, 3.8.3.1)."""

    SEND = 0  # "Send retained messages at the time of the subscribe"
    SEND_IF_NEW = 1  # "... only if the subscription does not currently exist"
    DONT_SEND = 2  # "Do not send retained messages at the time of the subscribe"


class Options(Protocol):
    """A topic filter's options as the core reads them: :class:`SubscriptionOptions`, or
    the distribution model's."""

    @property
    def qos(self) -> int: ...
    @property
    def no_local(self) -> bool: ...
    @property
    def retain_as_published(self) -> bool: ...
    @property
    def retain_handling(self) -> int: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class SubscriptionOptions:
    """What a SUBSCRIBE asks for one topic filter: the Requested QoS (3.x) or the
    Subscription Options (5.0; the defaults are 3.1.1's behaviour)."""

    qos: int  # the maximum QoS requested
    no_local: bool = False
    retain_as_published: bool = False
    retain_handling: RetainHandling = RetainHandling.SEND

    def __post_init__(self) -> None:
        check_qos(self.qos, "a Requested QoS")
        if type(self.no_local) is not bool or type(self.retain_as_published) is not bool:
            raise _usage("No Local and Retain As Published are bools")
        if not isinstance(self.retain_handling, RetainHandling):
            raise _usage("retain_handling is a RetainHandling")


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerConfig:
    """What the server supports (5.0 announces it in CONNACK)."""

    maximum_qos: int = 2  # the highest QoS it grants
    wildcard_subscriptions: bool = True  # 3.1.1: SHOULD; 5.0: Wildcard Subscription Available
    shared_subscriptions: bool = True  # 5.0 Shared Subscription Available
    subscription_identifiers: bool = True  # 5.0 Subscription Identifiers Available

    def __post_init__(self) -> None:
        check_qos(self.maximum_qos, "the Maximum QoS")


@dataclass(frozen=True, slots=True, kw_only=True)
class Grant:
    """One subscription as the server granted it (of a Shared Subscription: one member's).
    ``order`` is when its session first subscribed with this filter (a replacement keeps
    it): several matching subscriptions of one session are taken in that order."""

    topic_filter: str  # as subscribed (with ``$share/{ShareName}/`` for a shared one)
    granted_qos: int
    no_local: bool = False
    retain_as_published: bool = False
    retain_handling: int = RetainHandling.SEND
    subscription_identifier: int | None = None
    share_name: str | None = None
    order: int = 0
    #: what a copy for it carries: its filter, its identifier (or none)
    topic_filters: tuple[str, ...] = field(init=False)
    subscription_identifiers: tuple[int, ...] = field(init=False)

    def __post_init__(self) -> None:
        check_qos(self.granted_qos, "a granted QoS")
        ident = self.subscription_identifier
        if ident is not None and not 1 <= ident <= MAX_SUBSCRIPTION_IDENTIFIER:
            raise _usage("a Subscription Identifier is 1 to 268,435,455")
        object.__setattr__(self, "topic_filters", (self.topic_filter,))
        object.__setattr__(self, "subscription_identifiers", (ident,) if ident else ())

    @property
    def shared(self) -> bool:
        return self.share_name is not None


@dataclass(slots=True, kw_only=True)
class SessionState:
    """One session's state at the server (mutable: the core's own)."""

    client_id: str
    status: SessionStatus
    persistent: bool  # outlives its connection (3.x CleanSession 0; 5.0 expiry above 0)
    expiry_interval: int  # 5.0 seconds (NEVER: no expiry); 3.x: NEVER
    disconnected_at: int | None = None
    subscriptions: dict[str, Grant] = field(default_factory=dict)  # non-shared, by filter
    pending: list[Copy] = field(default_factory=list)  # owed, not started, in order
    optional: list[Copy] = field(default_factory=list)  # the server may send them
    under_way: dict[int, Copy] = field(default_factory=dict)  # QoS 1 and 2 started
    #: how many copies in ``pending`` and ``optional`` have a Message Expiry Interval
    expiring: int = 0
    #: counts the connections: a session expiry scheduled for an earlier one is stale
    epoch: int = 0

    @property
    def connected(self) -> bool:
        return self.status is SessionStatus.CONNECTED


# -- the outcomes ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectOutcome:
    client_id: str
    session_present: bool
    owed: tuple[Copy, ...]  # the copies kept while it was away, now owed
    optional: tuple[Copy, ...]  # QoS 0 copies kept for it (reading queue-qos0)
    resend: tuple[Copy, ...]  # copies under way, re-sent by the flows [MQTT-4.4.0-1]
    dropped: tuple[Copy, ...]  # what a discarded session held
    rules: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class DisconnectOutcome:
    client_id: str
    session_ended: bool
    dropped: tuple[Copy, ...]
    rules: tuple[str, ...]


class CompleteOutcome(NamedTuple):
    """A copy's flow completed (or ended with an error Reason Code). A named tuple: one is
    made for every QoS 1 and 2 copy."""

    copy: Copy
    rules: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class FilterOutcome:
    """What one topic filter of a SUBSCRIBE came to."""

    topic_filter: str
    code: int  # the SUBACK code: the QoS granted, or a failure
    rule_ids: tuple[str, ...]  # the rules that decided the code (a failure's last)
    replaced: bool = False  # it replaced a subscription with the same filter
    retained: tuple[Copy, ...] = ()  # the retained messages it is owed
    may_miss: tuple[int, ...] = ()  # copy_ids of those the server may have discarded


@dataclass(frozen=True, slots=True, kw_only=True)
class SubscribeOutcome:
    client_id: str
    packet_id: int  # the SUBACK's [MQTT-3.8.4-2]
    codes: tuple[int, ...]  # in the order of the filters [MQTT-3.9.3-1]; () if closed
    filters: tuple[FilterOutcome, ...]
    closed: str | None = None  # the rule for which the server closes the connection
    rules: tuple[str, ...] = ()  # the SUBACK's own rules
    #: when ``closed`` is a topic filter's rule: the error, with the byte offset in that
    #: filter and (5.0) the DISCONNECT Reason Code
    error: InvalidTopic | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UnsubscribeOutcome:
    client_id: str
    packet_id: int  # the UNSUBACK's [MQTT-3.10.4-4]
    codes: tuple[int, ...]  # 5.0 Reason Codes in order [MQTT-3.11.3-1]; () before 5.0
    deleted: tuple[str, ...]
    buffered: tuple[Copy, ...]  # owed copies of deleted subscriptions: "MAY continue"
    rules: tuple[str, ...]
    closed: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RetainedChange:
    """What one input did to one topic's retained message."""

    topic: str
    input: RetainedInput
    before: Message | None
    after: Message | None
    rule_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class PublishOutcome:
    message: Message
    #: what it did to the retained store; None for RETAIN 0, which changes nothing
    #: [MQTT-3.3.1-12]
    retained: RetainedChange | None
    copies: tuple[Copy, ...]  # owed now (connected) or kept (offline), in every session
    optional: tuple[Copy, ...]  # QoS 0 copies kept for offline sessions (reading)
    rules: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockOutcome:
    now: int
    expired: tuple[Copy, ...]  # copies deleted before they started [MQTT-3.3.2-5]
    ended: tuple[str, ...]  # sessions that expired [MQTT-4.1.0-2]
    dropped: tuple[Copy, ...]  # what the expired sessions held
    retained: tuple[RetainedChange, ...]  # retained messages that expired
    rules: tuple[str, ...] = ()
