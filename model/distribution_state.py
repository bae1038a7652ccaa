"""The state of the distribution model's sessions, and what each event returns.

Rules / theory of operation
---------------------------
A ``Session`` is what the server keeps for one client identifier: whether it is connected,
whether it outlives its connection (3.x CleanSession 0; 5.0 a Session Expiry Interval above
0 [MQTT-3.1.2-23]), its Non-shared Subscriptions by topic filter (5.0 4.8.1: "the Topic
Filter can be used as a key to identify the subscription within that Session"), and its
copies: ``pending`` (owed, not started, in the order their messages were taken over),
``optional`` (the server may send them or not: QoS 0 kept for an offline session at its
choice) and ``under_way`` (QoS 1 and 2 started, until their flow completes). The outcome
types are plain frozen records of what one event made the server owe, with the ids of the
rules that decided; :mod:`.distribution` produces them.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pubproof.model.distribution_rules50 import SHARED_ONE_MEMBER
from pubproof.model.forwarding import Delivery, Problem, Shape
from pubproof.model.messages import Copy, Message
from pubproof.model.retained import RetainedChange
from pubproof.model.subscriptions import Subscription

#: 5.0: "If the Session Expiry Interval is 0xFFFFFFFF (UINT_MAX), the Session does not expire."
NEVER = 0xFFFF_FFFF
ONE_MEMBER = SHARED_ONE_MEMBER.id_for(SHARED_ONE_MEMBER.editions[0])


class DistributionError(ValueError):
    """An event the model cannot take (an unknown client, a SUBSCRIBE with no connection)."""


class SessionStatus(enum.Enum):
    CONNECTED = "connected"
    DISCONNECTED = "disconnected, kept"


@dataclass(slots=True)
class Session:
    """One session's state at the server."""

    client_id: str
    status: SessionStatus
    persistent: bool  # outlives its connection (3.x CleanSession 0; 5.0 expiry above 0)
    expiry_interval: int  # 5.0 seconds (NEVER: no expiry); 3.x: NEVER when persistent
    disconnected_at: int | None = None
    subscriptions: dict[str, Subscription] = field(default_factory=dict)  # non-shared
    pending: list[Copy] = field(default_factory=list)  # owed, not started, in order
    optional: list[Copy] = field(default_factory=list)  # the server may send them
    under_way: dict[int, Copy] = field(default_factory=dict)  # QoS 1 and 2 started

    @property
    def connected(self) -> bool:
        return self.status is SessionStatus.CONNECTED


@dataclass(frozen=True, slots=True, kw_only=True)
class ConnectOutcome:
    client_id: str
    session_present: bool
    owed: tuple[Copy, ...]  # the copies kept while it was away, now owed
    optional: tuple[Copy, ...]  # QoS 0 copies it may have kept (reading queue-qos0)
    resend: tuple[Copy, ...]  # copies under way, re-sent by the flows [MQTT-4.4.0-1]
    dropped: tuple[Copy, ...]  # what a discarded session held
    rules: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class DisconnectOutcome:
    client_id: str
    session_ended: bool
    dropped: tuple[Copy, ...]
    rules: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class CompleteOutcome:
    """A copy's flow completed (or ended with an error Reason Code)."""

    copy: Copy
    rules: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class FilterOutcome:
    """What one topic filter of a SUBSCRIBE came to."""

    topic_filter: str
    code: int  # the SUBACK code: the QoS granted, or a failure
    rule_ids: tuple[str, ...]
    replaced: bool = False  # it replaced a subscription with the same filter
    retained: tuple[Copy, ...] = ()  # the retained messages it is owed
    may_miss: tuple[int, ...] = ()  # copy_ids of those the server may have discarded


@dataclass(frozen=True, slots=True, kw_only=True)
class SubscribeOutcome:
    client_id: str
    packet_id: int  # the SUBACK's [MQTT-3.8.4-2]
    codes: tuple[int, ...]  # in the order of the filters [MQTT-3.9.3-1]; () if closed
    filters: tuple[FilterOutcome, ...]
    closed: str | None = None  # the rule for which the server closes the connection instead
    rules: tuple[str, ...] = ()  # the SUBACK's own rules (sent, identifier, order, codes)


@dataclass(frozen=True, slots=True, kw_only=True)
class UnsubscribeOutcome:
    client_id: str
    packet_id: int  # the UNSUBACK's [MQTT-3.10.4-4]
    codes: tuple[int, ...]  # 5.0 Reason Codes in order [MQTT-3.11.3-1]; () before 5.0
    deleted: tuple[str, ...]
    buffered: tuple[Copy, ...]  # owed copies of deleted subscriptions: "MAY continue to deliver"
    rules: tuple[str, ...]
    closed: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SharedDelivery:
    """5.0: a message matching a Shared Subscription, given to one member."""

    topic_filter: str  # the full $share/{ShareName}/{filter}
    members: tuple[str, ...]  # any of them may be chosen
    chosen: str
    shapes: Mapping[str, Shape]  # the copy each member would get (its own grant)

    def judge(self, observed: Mapping[str, Sequence[Shape]]) -> list[Problem]:
        """Whether the copies each member got (by client identifier) are what the text
        allows: one member, any of them, gets one copy of its own shape: "sent to one and
        only one of the Sessions", at that member's granted QoS [MQTT-4.8.2-3]."""
        got = {c: list(s) for c, s in observed.items() if s and c in self.members}
        strangers = sorted(c for c, s in observed.items() if s and c not in self.members)
        if strangers:
            return [Problem(rule_id=ONE_MEMBER, message=f"copies to non-members {strangers}")]
        if len(got) != 1 or len(next(iter(got.values()), [])) != 1:
            counts = {c: len(s) for c, s in got.items()}
            return [Problem(rule_id=ONE_MEMBER, message=f"not one copy to one member: {counts}")]
        ((member, (shape,)),) = got.items()
        if shape.seen() != self.shapes[member].seen():
            return [
                Problem(
                    rule_id="MQTT-4.8.2-3",
                    message=f"{member!r} got {shape.seen()}, "
                    f"its subscription gives {self.shapes[member].seen()}",
                )
            ]
        return []


@dataclass(frozen=True, slots=True, kw_only=True)
class PublishOutcome:
    message: Message
    retained: RetainedChange | None
    deliveries: tuple[Delivery, ...]  # per session with a matching Non-shared Subscription
    shared: tuple[SharedDelivery, ...]
    copies: tuple[Copy, ...]  # the oracle's copies, owed now or kept
    optional: tuple[Copy, ...]  # copies the server may keep or not (QoS 0, offline)
    rules: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockOutcome:
    now: int
    expired: tuple[Copy, ...]  # copies deleted before they started [MQTT-3.3.2-5]
    ended: tuple[str, ...]  # sessions that expired [MQTT-4.1.0-2]
    dropped: tuple[Copy, ...]  # what the expired sessions held
    retained: tuple[RetainedChange, ...]  # retained messages that expired
    rules: tuple[str, ...] = ()
