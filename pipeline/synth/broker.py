"""The synthetic capture's server as a broker: what it forwards to whom, and the ways it
can be made to misbehave in distribution, so that the tests know the truth.

Rules / theory of operation
---------------------------
Every connection of :mod:`.generate` is a member of one :class:`Broker`. What a member
subscribes to (its topic filters, at the QoS asked for, which the broker grants; a 5.0
member's SUBSCRIBE carries a Subscription Identifier of its own per filter) is in the
broker the moment its SUBACK is written; a message a member publishes is the broker's
the moment its PUBACK or PUBREC is written (QoS 0: its PUBLISH), and is then queued, for
every member with a matching subscription, in that member's outbox as one copy at the
highest QoS of its matching subscriptions (no higher than the message's), RETAIN 0, with
the identifiers of those subscriptions (5.0) and the message's properties, its Message
Expiry Interval reduced by the time it waited when it goes out. A member delivers its
outbox in order when the generator gives it a turn, and all of it before its DISCONNECT,
after which it gets nothing more. A retained message (RETAIN 1) replaces the topic's
retained message (a zero-byte one deletes it); a new subscription is sent each matching
retained message with RETAIN 1, at the lower of its QoS and the QoS granted. A 5.0 copy
whose message expired before it went out is deleted [MQTT-3.3.2-5]. All of this is what
the distribution model says a server must do, so a capture of it has no distribution
finding but those the faults below inject.

Faults (:class:`DistFault`), each injected on a chosen member's message (or, for
``miss-retained``, subscription) towards one subscriber of the same edition (the model is
one per edition): ``drop`` (a copy of the first of two messages on one topic and QoS is
never sent; the second is: missing, by the order of 4.6), ``duplicate`` (a QoS 2 copy
sent twice), ``reorder`` (two messages' copies swapped), ``upgrade-qos`` (a copy one QoS
above what the subscription allows), ``propagate-dup`` (the publisher's DUP 1 kept on a
first copy), ``retain-live`` (RETAIN 1 kept on a live copy), ``alter-property`` (5.0: the
Content Type changed), ``deliver-expired`` (5.0: a copy sent after its message expired:
the capture then pauses 3 s), ``miss-retained`` (the retained message not sent to a new
subscription: the capture then pauses for longer than the judge's patience, so the
subscriber stays connected past it). Each record names the rule the finding must cite
(taken from the project's registry), the subscriber's address and the judge expected to
find it: the distribution judge, or for 3.1.1 ``propagate-dup`` the link judge, which
judges [MQTT-3.3.1-3] on a 3.1.1 connection.
"""

from __future__ import annotations

import enum
import random
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pubproof.judge.distribution_capture import PATIENCE
from pubproof.judge.distribution_records import QOS2_ONCE
from pubproof.judge.link import FORWARD_DUP
from pubproof.model import distribution_rules as D
from pubproof.model import distribution_rules50 as D50
from pubproof.model.distribution_rules import cite
from pubproof.model.editions import Edition
from pubproof.model.rules import Rule

#: how long the capture pauses after a ``deliver-expired`` and a ``miss-retained`` fault
EXPIRED_PAUSE = 3.0
MISS_PAUSE = PATIENCE + 1.0


class DistFault(enum.Enum):
    """What a broker can do wrong in distribution (``--inject NAME=COUNT``)."""

    DROP = "drop"
    DUPLICATE = "duplicate"
    REORDER = "reorder"
    UPGRADE = "upgrade-qos"
    DUP = "propagate-dup"
    RETAIN = "retain-live"
    PROPERTY = "alter-property"
    EXPIRED = "deliver-expired"
    MISS_RETAINED = "miss-retained"

    @property
    def pair(self) -> bool:
        """Injected on two messages of one topic and QoS."""
        return self in (DistFault.DROP, DistFault.REORDER)

    @property
    def v5_only(self) -> bool:
        return self in (DistFault.PROPERTY, DistFault.EXPIRED)


def expected(fault: DistFault, v5: bool) -> tuple[str, str, str]:
    """The finding a fault must give: its rule id, kind and judge (``source``)."""
    edition = Edition.V50 if v5 else Edition.V311

    def of(rule: Rule) -> str:
        return cite(rule, edition)

    table: dict[DistFault, tuple[Any, str]] = {
        DistFault.DROP: (lambda: of(D.TO_MATCHING_SESSIONS), "missing"),
        DistFault.DUPLICATE: (lambda: QOS2_ONCE[v5], "violation"),
        DistFault.REORDER: (lambda: of(D.ORDER_PER_PUBLISHER), "violation"),
        DistFault.UPGRADE: (lambda: of(D.MIN_QOS), "violation"),
        DistFault.DUP: (lambda: of(D50.DUP_FORWARDED) if v5 else FORWARD_DUP, "violation"),
        DistFault.RETAIN: (
            lambda: of(D50.RETAIN_AS_PUBLISHED_0 if v5 else D.RETAIN_FLAG_LIVE),
            "violation",
        ),
        DistFault.PROPERTY: (lambda: of(D50.CONTENT_TYPE), "violation"),
        DistFault.EXPIRED: (lambda: of(D50.EXPIRED_NOT_SENT), "violation"),
        DistFault.MISS_RETAINED: (
            lambda: of(D50.RETAIN_HANDLING_0 if v5 else D.RETAIN_ON_SUBSCRIBE),
            "missing",
        ),
    }
    rule_of, kind = table[fault]
    rule = str(rule_of())
    source = "link" if fault is DistFault.DUP and not v5 else "distribution"
    return rule, kind, source


@dataclass(slots=True)
class Clock:
    """The capture's time (seconds), and a pause to put in after the burst being made."""

    now: float = 0.0
    pause: float = 0.0


@dataclass(slots=True)
class Message:
    """A message the broker took: who published it, what, and when (capture time)."""

    publisher: int
    topic: str
    qos: int
    retain: bool
    payload: bytes
    v5: bool
    time: float
    dup: bool = False
    properties: dict[str, Any] = field(default_factory=dict)  # 5.0, as Session5 keeps them

    def expired(self, now: float) -> bool:
        interval = self.properties.get("message_expiry_interval")
        return interval is not None and now - self.time >= interval


@dataclass(slots=True)
class Copy:
    """A PUBLISH the broker owes a member: the message, as it is to go out."""

    message: Message
    qos: int
    retain: bool
    identifiers: tuple[int, ...] = ()
    dup: bool = False
    content_type: str | None = None  # a changed Content Type (``alter-property``)
    not_before: float = 0.0
    #: sent even after its message expired (``deliver-expired``)
    late: bool = False
    record: dict[str, Any] | None = None  # an injected fault's, for its frame


@dataclass(slots=True)
class Subscription:
    topic_filter: str
    qos: int
    identifier: int | None = None  # 5.0


@dataclass(slots=True)
class Member:
    """One connection, as the broker knows it."""

    index: int
    v5: bool
    client: str  # "address:port" of its client end
    subscriptions: list[Subscription] = field(default_factory=list)
    outbox: deque[Copy] = field(default_factory=deque)
    joined: bool = True


def matches(topic_filter: str, topic: str) -> bool:
    """Whether ``topic_filter`` matches ``topic`` (``+`` one level, ``#`` the rest)."""
    wanted, names = topic_filter.split("/"), topic.split("/")
    for i, level in enumerate(wanted):
        if level == "#":
            return True
        if i >= len(names) or (level != "+" and level != names[i]):
            return False
    return len(wanted) == len(names)


class Broker:
    """The members, the retained store, and the faults still to inject."""

    def __init__(self, rng: random.Random, clock: Clock) -> None:
        self.rng = rng
        self.clock = clock
        self.members: dict[int, Member] = {}
        self.retained: dict[str, Message] = {}
        #: the injected faults: name, subscriber, rule, kind, judge (the expected JSON's)
        self.injected: list[dict[str, Any]] = []

    def join(self, index: int, v5: bool, client: str) -> Member:
        member = self.members[index] = Member(index=index, v5=v5, client=client)
        return member

    def leave(self, member: Member) -> None:
        """The member's DISCONNECT is written: it gets nothing more."""
        member.joined = False
        member.outbox.clear()
        self.members.pop(member.index, None)

    # -- subscriptions -------------------------------------------------------------------------

    def subscribe(self, member: Member, subscription: Subscription, *, miss: bool = False) -> bool:
        """A SUBACK is written: the subscription holds, and each matching retained message
        is owed (``miss``: one of QoS 1 or 2, published by the same edition, is left out;
        True when it was)."""
        member.subscriptions.append(subscription)
        missed = False
        for topic, message in sorted(self.retained.items()):
            if not matches(subscription.topic_filter, topic) or self._expired(message):
                continue
            if miss and not missed and message.qos and message.v5 == member.v5:
                missed = True
                self._record(DistFault.MISS_RETAINED, member)
                self.clock.pause = max(self.clock.pause, MISS_PAUSE)
                continue
            ids = (subscription.identifier,) if subscription.identifier else ()
            copy = Copy(
                message=message, qos=min(message.qos, subscription.qos), retain=True,
                identifiers=ids,
            )  # fmt: skip
            member.outbox.append(copy)
        return missed

    def retained_for(self, member: Member) -> str | None:
        """A topic whose retained message a new subscription of ``member`` could miss
        (QoS 1 or 2, published by the same edition)."""
        for topic, message in sorted(self.retained.items()):
            if message.qos and message.v5 == member.v5 and not self._expired(message):
                return topic
        return None

    def _expired(self, message: Message) -> bool:
        return message.v5 and message.expired(self.clock.now)

    # -- messages ------------------------------------------------------------------------------

    def publish(self, message: Message) -> dict[int, Copy]:
        """The broker takes ``message``: the retained store, and a copy queued for every
        member with a matching subscription. The copies queued, by member."""
        if message.retain:
            if message.payload:
                self.retained[message.topic] = message
            else:
                self.retained.pop(message.topic, None)  # [MQTT-3.3.1-10]
        queued: dict[int, Copy] = {}
        for member in self.members.values():
            found = [s for s in member.subscriptions if matches(s.topic_filter, message.topic)]
            if not found:
                continue
            ids = tuple(sorted(s.identifier for s in found if s.identifier))
            qos = min(message.qos, max(s.qos for s in found))
            copy = Copy(message=message, qos=qos, retain=False, identifiers=ids)
            member.outbox.append(copy)
            queued[member.index] = copy
        return queued

    def inject(
        self, fault: DistFault, publisher: Member, queued: Iterable[dict[int, Copy]]
    ) -> bool:
        """Inject ``fault`` on the copies just queued for the messages of ``publisher``
        (one message, or two for :attr:`DistFault.pair`) towards one subscriber of its
        edition; False when no subscriber fits (try again with the next messages)."""
        rounds = list(queued)
        candidates = [
            m for m in self.members.values()
            if m.v5 == publisher.v5 and m.index != publisher.index
            and all(m.index in r for r in rounds)
        ]  # fmt: skip
        self.rng.shuffle(candidates)
        for member in candidates:
            copies = [r[member.index] for r in rounds]
            if self._apply(fault, member, copies):
                self._record(fault, member, copies[-1])
                message = copies[0].message
                self.injected[-1].update(
                    publisher=publisher.client, topic=message.topic, qos=message.qos
                )
                return True
        return False

    def _apply(self, fault: DistFault, member: Member, copies: list[Copy]) -> bool:
        copy = copies[0]
        message = copy.message
        outbox = member.outbox
        if fault is DistFault.DROP:
            outbox.remove(copy)
        elif fault is DistFault.REORDER:
            first, second = outbox.index(copies[0]), outbox.index(copies[1])
            outbox[first], outbox[second] = copies[1], copies[0]
        elif fault is DistFault.DUPLICATE:
            if copy.qos != 2:
                return False
            twin = Copy(message=message, qos=2, retain=False, identifiers=copy.identifiers)
            outbox.insert(outbox.index(copy) + 1, twin)
            copies.append(twin)
        elif fault is DistFault.UPGRADE:
            found = [s for s in member.subscriptions if matches(s.topic_filter, message.topic)]
            if len(found) != 1 or copy.qos == 2:
                return False
            copy.qos += 1
        elif fault is DistFault.DUP:
            if not message.dup or copy.qos == 0:
                return False
            copy.dup = True
        elif fault is DistFault.RETAIN:
            if not message.retain:
                return False
            copy.retain = True
        elif fault is DistFault.PROPERTY:
            copy.content_type = "application/x-altered"
        elif fault is DistFault.EXPIRED:
            copy.late = True
            copy.not_before = message.time + EXPIRED_PAUSE - 0.5
            self.clock.pause = max(self.clock.pause, EXPIRED_PAUSE)
        return True

    def _record(self, fault: DistFault, member: Member, copy: Copy | None = None) -> None:
        rule, kind, source = expected(fault, member.v5)
        record: dict[str, Any] = {
            "fault": fault.value, "edition": "5.0" if member.v5 else "3.1.1",
            "subscriber": member.client, "rule": rule, "kind": kind, "source": source,
            "frame": None,
        }  # fmt: skip
        if copy is not None:
            copy.record = record
        self.injected.append(record)

    # -- delivery ------------------------------------------------------------------------------

    def due(self, member: Member, most: int, in_flight: int | None = None) -> list[Copy]:
        """Up to ``most`` copies of the member's outbox to send now, in order, at most
        ``in_flight`` of QoS 1 and 2 (a 5.0 client's Receive Maximum: their acknowledgements
        come after them); a copy held back stops the rest behind it; a 5.0 copy whose
        message expired is deleted."""
        taken: list[Copy] = []
        outbox = member.outbox
        flowing = 0
        while outbox and len(taken) < most:
            copy = outbox[0]
            if copy.not_before > self.clock.now:
                break
            if copy.qos and in_flight is not None and flowing >= in_flight:
                break
            flowing += copy.qos > 0
            outbox.popleft()
            if copy.message.v5 and copy.message.expired(self.clock.now) and not copy.late:
                continue  # [MQTT-3.3.2-5] deleted, never sent
            taken.append(copy)
        return taken

    def expiry(self, copy: Copy) -> int | None:
        """The Message Expiry Interval a 5.0 copy goes out with: the message's, less the
        whole seconds it waited (never below 0) [MQTT-3.3.2-6]."""
        interval = copy.message.properties.get("message_expiry_interval")
        if interval is None:
            return None
        return max(0, int(interval) - int(self.clock.now - copy.message.time))
