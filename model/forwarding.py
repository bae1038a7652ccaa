"""Forwarding: which copies of one message the server owes one session, as flowcharts.

Rules / theory of operation
---------------------------
Four decision graphs (:mod:`.decisions`), each node naming the rules that decide it:

- ``SUBSCRIPTION_GRAPH``, for one message and one subscription: does the filter match
  (4.7), does No Local exclude the publisher's own session (5.0), did a Shared
  Subscription give the message to another member (5.0); then the copy's QoS is the lower
  of the published one and the one granted [MQTT-3.8.4-6] and its RETAIN is 0 on a live
  forward [MQTT-3.3.1-9] (5.0: as published if Retain As Published [MQTT-3.3.1-13]).
- ``SESSION_GRAPH``, for one message and the copies a session's Non-shared Subscriptions
  made: one copy, or several overlapping ones (one copy at the highest QoS, or one per
  subscription [MQTT-3.3.5-1]; 5.0 Subscription Identifiers [MQTT-3.3.4-3..5]).
- ``DISPATCH_GRAPH``, for each copy: owed now to a connected session; kept for a
  disconnected one whose session persists (QoS 0: 3.1 never, 3.1.1 and 5.0 optionally).
- ``RETAINED_GRAPH``, for a subscription just made: which retained messages it is sent.

The oracle's answer is one deterministic set of copies (a ``Shape`` each) under the
readings; ``Delivery.judge`` accepts every set the text allows: one copy at the highest
QoS carrying every identifier, or copies for any of the overlapping subscriptions that
include one at the highest QoS, each with its own identifier; repeats of a QoS 0 copy of a
QoS 1 message ("The server is permitted to send duplicate copies ... where the original
message was published with QoS 1 and the maximum QoS granted was QoS 0"); and, for a
single copy of several subscriptions, the RETAIN any of them gives (the text does not say
whose Retain As Published rules a copy that stands for several).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pubproof.model import distribution_rules as D
from pubproof.model import distribution_rules50 as D50
from pubproof.model import flow_rules, flow_rules50
from pubproof.model.decisions import (
    Node,
    Passed,
    action,
    graph,
    outcome,
    question,
    rules_by_edition,
    walk,
)
from pubproof.model.distribution_rules import cite
from pubproof.model.editions import Edition
from pubproof.model.messages import Message
from pubproof.model.subscriptions import RetainHandling, Subscription
from pubproof.model.topic_filters import reading, subscription_matches
from pubproof.model.trace import PublishP

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50
R = rules_by_edition

SUBSCRIPTION_GRAPH: Mapping[str, Node] = graph(
    question(
        "match",
        "Does the subscription's topic filter match the topic name?",
        R(
            (D.TO_MATCHING_SESSIONS, D.TOPIC_MATCHES_FILTER, D.DOLLAR_TOPICS, D.NO_NORMALISATION),
            v31=(D.TO_SUBSCRIBERS_31, D.MULTI_LEVEL, D.SINGLE_LEVEL),
        ),
        yes="no-local",
        no="unmatched",
    ),
    question(
        "no-local",
        "No Local, and the session's ClientID is the publisher's?",
        R(v50=(D50.NO_LOCAL,)),
        yes="excluded",
        no="shared",
    ),
    question(
        "shared",
        "A Shared Subscription, whose message goes to another member?",
        R(v50=(D50.SHARED_ONE_MEMBER,)),
        yes="other-member",
        no="qos",
    ),
    action(
        "qos",
        "QoS = lower of the published QoS and the QoS granted",
        R((D.MIN_QOS,), v31=(D.MIN_QOS_31,), v50=(D.MIN_QOS, D50.SHARED_GRANTED_QOS)),
        then="rap",
    ),
    question(
        "rap",
        "Retain As Published 1?",
        R(v50=(D50.RETAIN_AS_PUBLISHED_1,)),
        yes="retain-as-published",
        no="retain-0",
    ),
    action(
        "retain-as-published",
        "RETAIN as received",
        R(v50=(D50.RETAIN_AS_PUBLISHED_1,)),
        then="copy",
    ),
    action(
        "retain-0",
        "RETAIN 0",
        R(
            v31=(D.RETAIN_FLAG_LIVE_31,),
            v311=(D.RETAIN_FLAG_LIVE,),
            v50=(D50.RETAIN_AS_PUBLISHED_0,),
        ),
        then="copy",
    ),
    outcome("copy", "a copy for this subscription"),
    outcome("unmatched", "no copy: the filter does not match"),
    outcome("excluded", "no copy: No Local", R(v50=(D50.NO_LOCAL,))),
    outcome("other-member", "no copy here: another member of the Shared Subscription"),
)

SESSION_GRAPH: Mapping[str, Node] = graph(
    question(
        "any-copy",
        "Did a subscription of the session make a copy?",
        R((D.TO_MATCHING_SESSIONS,), v31=(D.TO_SUBSCRIBERS_31,)),
        yes="overlap",
        no="nothing",
    ),
    question(
        "overlap",
        "Did more than one (overlapping subscriptions)?",
        R((D.OVERLAP,)),
        yes="one-or-many",
        no="single",
    ),
    action(
        "one-or-many",
        "one copy at the highest QoS (5.0: with every identifier), or one "
        "per subscription (5.0: each with its own), by reading overlapping-copies",
        R(
            (D.OVERLAP,),
            v50=(
                D.OVERLAP,
                D50.SUBSCRIPTION_IDS,
                D50.SUBSCRIPTION_IDS_ONE_COPY,
                D50.SUBSCRIPTION_IDS_PER_COPY,
            ),
        ),
        then="shaped",
    ),
    action(
        "single",
        "the copy (5.0: with its subscription's identifier)",
        R(v50=(D50.SUBSCRIPTION_IDS,)),
        then="shaped",
    ),
    outcome("shaped", "the copies the session is owed"),
    outcome("nothing", "no copy for this session"),
)

DISPATCH_GRAPH: Mapping[str, Node] = graph(
    question(
        "connected",
        "Is the session connected?",
        R((D.TO_MATCHING_SESSIONS,), v31=(D.TO_SUBSCRIBERS_31,)),
        yes="owed-now",
        no="qos0-offline",
    ),
    question(
        "qos0-offline",
        "(The session persists.) Is the copy QoS 0?",
        R(v31=(D.QOS0_NOT_STORED_31,), v311=(D.QUEUE_OFFLINE,), v50=(D50.PENDING_QOS0_OPTIONAL,)),
        yes="qos0-queue",
        no="queued",
    ),
    question(
        "qos0-queue",
        "Does the server keep QoS 0 messages (reading queue-qos0)?",
        R(v311=(D.QUEUE_OFFLINE,), v50=(D50.PENDING_QOS0_OPTIONAL,)),
        yes="queued",
        no="not-kept",
    ),
    outcome(
        "owed-now",
        "owed now: DUP 0, properties unaltered, no Topic Alias; 5.0: deleted "
        "if it expires before it starts, else sent with the interval left",
        R(
            v311=(flow_rules.DUP_FORWARDED,),
            v50=(
                D50.DUP_FORWARDED,
                D50.EXPIRED_NOT_SENT,
                D50.NO_EXPIRY_AFTER_SEND,
                D50.EXPIRY_REDUCED,
                D50.PAYLOAD_FORMAT,
                D50.RESPONSE_TOPIC,
                D50.CORRELATION_DATA,
                D50.USER_PROPERTIES,
                D50.USER_PROPERTY_ORDER,
                D50.CONTENT_TYPE,
                flow_rules50.ALIAS_PER_CONNECTION,
            ),
        ),
    ),
    outcome(
        "queued",
        "kept in the session until it reconnects",
        R((D.QUEUE_OFFLINE,), v50=(D.TO_MATCHING_SESSIONS, D50.KEEP_AFTER_CLOSE)),
    ),
    outcome("not-kept", "not kept (QoS 0)"),
)

RETAINED_GRAPH: Mapping[str, Node] = graph(
    question(
        "rs-shared",
        "A Shared Subscription?",
        R(v50=(D50.SHARED_NO_RETAINED,)),
        yes="rs-none",
        no="rs-existed",
    ),
    question(
        "rs-existed",
        "Did the session have a subscription with this topic filter?",
        R(v31=(D.REPLACE_311,), v311=(D.REPLACE_311,), v50=(D50.REPLACE,)),
        yes="rs-again",
        no="rs-new",
    ),
    question(
        "rs-again",
        "Are the retained messages sent again (5.0: Retain Handling 0)?",
        R(
            v31=(D.REPLACE_311,),
            v311=(D.REPLACE_311,),
            v50=(
                D50.REPLACE_RETAINED,
                D50.RETAIN_HANDLING_0,
                D50.RETAIN_HANDLING_1,
                D50.RETAIN_HANDLING_2,
            ),
        ),
        yes="rs-send",
        no="rs-none",
    ),
    question(
        "rs-new",
        "Are retained messages sent to a new subscription (5.0: Retain Handling 0 or 1)?",
        R(
            v31=(D.RETAIN_ON_SUBSCRIBE_31,),
            v311=(D.RETAIN_ON_SUBSCRIBE,),
            v50=(D50.RETAIN_HANDLING_0, D50.RETAIN_HANDLING_1, D50.RETAIN_HANDLING_2),
        ),
        yes="rs-send",
        no="rs-none",
    ),
    action(
        "rs-send",
        "each matching retained message, at the lower of its QoS and the QoS "
        "granted, RETAIN 1 (one held at QoS 0 may be missing)",
        R(
            v31=(D.RETAIN_ON_SUBSCRIBE_31, D.MIN_QOS_31, D.RETAIN_STORE_31),
            v311=(D.RETAIN_FLAG_NEW, D.MIN_QOS, D.RETAIN_QOS0),
            v50=(
                D50.RETAIN_FLAG_SUBSCRIBE,
                D.MIN_QOS,
                D50.RETAIN_QOS0,
                D50.EXPIRY_REDUCED,
                D50.SUBSCRIPTION_IDS,
            ),
        ),
        then="rs-sent",
    ),
    outcome("rs-sent", "the retained messages are owed"),
    outcome("rs-none", "no retained message is sent"),
)


@dataclass(frozen=True, slots=True, kw_only=True, order=True)
class Shape:
    """What can be seen of one copy: its QoS, RETAIN and Subscription Identifiers (sorted:
    "their order is not significant" [MQTT-3.3.4-4]), and the filters it stands for."""

    qos: int
    retain: bool
    subscription_identifiers: tuple[int, ...] = ()
    topic_filters: tuple[str, ...] = ()

    def seen(self) -> tuple[int, bool, tuple[int, ...]]:
        return self.qos, self.retain, self.subscription_identifiers

    @classmethod
    def from_p(cls, packet: PublishP) -> Shape:
        """What can be seen of a PUBLISH a server sent, in the trace form."""
        ids = packet.get("properties", {}).get("subscription_identifiers", [])
        return cls(
            qos=packet["qos"], retain=packet["retain"], subscription_identifiers=tuple(sorted(ids))
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class _Case:
    edition: Edition
    readings: Mapping[str, str]
    message: Message
    client_id: str
    subscription: Subscription
    other_member: bool
    qos: int = 0
    retain: bool = False


#: what the walk of ``SUBSCRIPTION_GRAPH`` asks and does: of the message, they read only
#: its topic name, QoS and RETAIN and its publisher (compared with the session's ClientID),
#: by which :func:`subscription_copy` keeps its walks (:data:`Walks`)
_ASK = {
    "match": lambda c: subscription_matches(
        c.subscription.topic_filter, c.message.topic, c.edition, c.readings
    ),
    # [MQTT-3.8.3-3] "Application Messages MUST NOT be forwarded to a connection with a
    # ClientID equal to the ClientID of the publishing connection"
    "no-local": lambda c: c.subscription.no_local and c.client_id == c.message.publisher,
    "shared": lambda c: c.subscription.shared and c.other_member,
    "rap": lambda c: c.subscription.retain_as_published,
}
_DO = {
    # [MQTT-3.8.4-6] "MUST be the minimum of the QoS of the originally published message and
    # the maximum QoS granted by the Server"
    "qos": lambda c: dataclasses.replace(c, qos=min(c.message.qos, c.subscription.granted_qos)),
    # [MQTT-3.3.1-13] "MUST set the RETAIN flag equal to the RETAIN flag in the received"
    "retain-as-published": lambda c: dataclasses.replace(c, retain=c.message.publication.retain),
    # [MQTT-3.3.1-9] "MUST set the RETAIN flag to 0 when a PUBLISH Packet is sent to a Client
    # because it matches an established subscription"
    "retain-0": lambda c: dataclasses.replace(c, retain=False),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """A subscription that makes a copy of a message, and the copy it makes."""

    subscription: Subscription
    shape: Shape
    trail: tuple[Passed, ...]


def subscription_copy(
    message: Message,
    client_id: str,
    subscription: Subscription,
    edition: Edition,
    readings: Mapping[str, str],
    *,
    other_member: bool = False,
    walks: Walks | None = None,
) -> tuple[Candidate | None, tuple[Passed, ...]]:
    """Walk ``SUBSCRIPTION_GRAPH``: the copy ``subscription`` makes of ``message`` (None
    when it makes none), and the trail of the rules that decided. ``walks`` keeps the
    walks made (a model keeps its own: :class:`Walks`)."""
    if _kept(walks, edition, readings) is None:
        return _subscription_copy(message, client_id, subscription, edition, readings, other_member)
    assert walks is not None
    # the subscription by its identity, kept beside the walk and checked (hashing the
    # frozen dataclass hashed every field, each message, each subscription)
    key = (
        message.topic, message.qos, message.publication.retain,
        client_id == message.publisher, id(subscription), other_member,
    )  # fmt: skip
    made = walks.made
    kept = made.get(key)
    if kept is not None and kept[0] is subscription:
        return kept[1]
    if len(made) >= WALKS_KEPT:
        made.clear()
    found = _subscription_copy(message, client_id, subscription, edition, readings, other_member)
    made[key] = (subscription, found)
    return found


@dataclass(slots=True, eq=False)
class Walks:
    """The decision graphs' walks made so far in one edition under one mapping of readings
    (a walk asked otherwise is made afresh, not kept), each by what it reads: of the
    message, :func:`subscription_copy`'s reads only its topic name, QoS and RETAIN and
    whether the session is its publisher's (``_ASK``, ``_DO``), and the copy it makes names
    none of the rest, so one walk answers a topic's messages, for each subscription. A
    model keeps its own (a test that patches the walk's questions builds a model after).
    The edition and readings were part of each walk's key: a tuple of the readings made
    and hashed at every walk asked was a third of its cost."""

    edition: Edition
    readings: Mapping[str, str]
    made: dict[
        tuple[object, ...], tuple[Subscription, tuple[Candidate | None, tuple[Passed, ...]]]
    ] = field(default_factory=dict)
    #: ``SESSION_GRAPH``'s walks (:func:`session_delivery`), by "several copies made"
    sessions: dict[bool, tuple[str, tuple[Passed, ...]]] = field(default_factory=dict)
    #: ``DISPATCH_GRAPH``'s walks (:func:`dispatch`), by "connected" and "QoS 0"
    dispatches: dict[tuple[bool, bool], tuple[str, tuple[Passed, ...]]] = field(
        default_factory=dict
    )
    #: per session (its ClientID), whether one of its Non-shared Subscriptions matches a
    #: topic name, by topic name (:meth:`matched`)
    matching: dict[str, dict[str, bool]] = field(default_factory=dict)

    def matched(self, client: str, subscriptions: Mapping[str, Subscription], topic: str) -> bool:
        """Whether one of a session's Non-shared ``subscriptions`` matches ``topic`` (the
        subscription graph's first question: where none does, the session's delivery is
        None without walks; 73% of those asked of 200,000 synthetic frames' handed-back
        topics). Kept until the session subscribes (:meth:`subscribed`): only a SUBSCRIBE
        makes a session match a topic it did not, so a "no" kept is never stale; an
        UNSUBSCRIBE, the session's end, a new session of its ClientID (with no
        subscription) can only leave a "yes" that no longer holds: walks for nothing."""
        kept = self.matching.get(client)
        if kept is None:
            kept = self.matching[client] = {}
        found = kept.get(topic)
        if found is None:
            found = kept[topic] = any(
                subscription_matches(s.topic_filter, topic, self.edition, self.readings)
                for s in subscriptions.values()
            )
        return found

    def subscribed(self, client_id: str) -> None:
        """A session subscribed: what :meth:`matched` kept of it is forgotten."""
        self.matching.pop(client_id, None)


def _kept(walks: Walks | None, edition: Edition, readings: Mapping[str, str]) -> Walks | None:
    """``walks``, where they were made in ``edition`` under ``readings`` (that very
    mapping); else None: a walk asked otherwise is made afresh, and not kept."""
    if walks is None or walks.edition is not edition or walks.readings is not readings:
        return None
    return walks


#: at most this many walks are kept (then they are forgotten, and made again)
WALKS_KEPT = 65_536


def _subscription_copy(
    message: Message,
    client_id: str,
    subscription: Subscription,
    edition: Edition,
    readings: Mapping[str, str],
    other_member: bool,
) -> tuple[Candidate | None, tuple[Passed, ...]]:
    case = _Case(
        edition=edition,
        readings=readings,
        message=message,
        client_id=client_id,
        subscription=subscription,
        other_member=other_member,
    )
    end, case, trail = walk(SUBSCRIPTION_GRAPH, case, edition, _ASK, _DO)
    if end != "copy":
        return None, trail
    ident = subscription.subscription_identifier
    shape = Shape(
        qos=case.qos,
        retain=case.retain,
        subscription_identifiers=(ident,) if ident is not None else (),
        topic_filters=(subscription.topic_filter,),
    )
    return Candidate(subscription=subscription, shape=shape, trail=trail), trail


@dataclass(frozen=True, slots=True, kw_only=True)
class Problem:
    """Something a server sent (or did not) that a rule forbids."""

    rule_id: str
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Delivery:
    """What one session is owed for one message by its Non-shared Subscriptions."""

    client_id: str
    message: Message
    edition: Edition
    candidates: tuple[Candidate, ...]  # in the order of the session's subscriptions
    shapes: tuple[Shape, ...]  # the oracle's copies (reading overlapping-copies)
    trail: tuple[Passed, ...]

    @property
    def highest_qos(self) -> int:
        """The QoS one copy must have: "respecting the maximum QoS of all the matching
        subscriptions" [MQTT-3.3.5-1]."""
        return max(c.shape.qos for c in self.candidates)

    def single_copies(self) -> tuple[Shape, ...]:
        """The copies that stand alone for every matching subscription: at the highest QoS,
        carrying every identifier [MQTT-3.3.4-4], with a RETAIN one of them gives."""
        ids = tuple(sorted(i for c in self.candidates for i in c.shape.subscription_identifiers))
        filters = tuple(c.subscription.topic_filter for c in self.candidates)
        retains = sorted({c.shape.retain for c in self.candidates})
        return tuple(
            Shape(
                qos=self.highest_qos, retain=r, subscription_identifiers=ids, topic_filters=filters
            )
            for r in retains
        )

    def judge(self, observed: Sequence[Shape]) -> list[Problem]:
        """Whether ``observed`` (the first transmissions of this message to this session,
        any order) is a set of copies the text allows; the problems if not."""
        # one matching subscription: its QoS is the minimum of the published and the granted
        # [MQTT-3.8.4-6]; several: "respecting the maximum QoS" of them [MQTT-3.3.5-1]
        single = D.MIN_QOS_31 if self.edition is V31 else D.MIN_QOS
        rule = cite(D.OVERLAP if len(self.candidates) > 1 else single, self.edition)
        ids_rule = "MQTT-3.3.4-4" if self.edition is V50 else rule
        duplicable = {
            c.shape.seen()
            for c in self.candidates
            if self.message.qos == 1 and c.subscription.granted_qos == 0
        }
        seen = [s.seen() for s in observed]
        # [MQTT-3.8.4-6] "The server is permitted to send duplicate copies of a message to a
        # subscriber in the case where the original message was published with QoS 1 and the
        # maximum QoS granted was QoS 0"
        distinct = [s for i, s in enumerate(seen) if s not in duplicable or s not in seen[:i]]
        if not distinct:
            return [
                Problem(
                    rule_id=cite(D.TO_MATCHING_SESSIONS, self.edition),
                    message=f"no copy of message {self.message.seq}",
                )
            ]
        if len(distinct) == 1:
            if distinct[0] in {s.seen() for s in self.single_copies()}:
                return []
            if distinct[0][0] != self.highest_qos:
                return [
                    Problem(
                        rule_id=rule,
                        message=f"one copy at QoS {distinct[0][0]}, "
                        f"not the highest QoS {self.highest_qos}",
                    )
                ]
            return [
                Problem(
                    rule_id=ids_rule,
                    message="one copy, without the identifiers or "
                    "the RETAIN of the matching subscriptions",
                )
            ]
        # several copies: each one a distinct subscription's own copy [MQTT-3.3.4-5]
        available = Counter(c.shape.seen() for c in self.candidates)
        extra = Counter(distinct) - available
        if extra:
            per_copy = "MQTT-3.3.4-5" if self.edition is V50 else rule
            return [
                Problem(
                    rule_id=per_copy,
                    message=f"copies {sorted(extra)} are not one per matching subscription",
                )
            ]
        if all(s[0] != self.highest_qos for s in distinct):
            return [Problem(rule_id=rule, message=f"no copy at the highest QoS {self.highest_qos}")]
        return []


def delivery_rules(delivery: Delivery) -> tuple[str, ...]:
    """The ids of the rules a delivery's walks cited, each once, in order."""
    ids = [i for c in delivery.candidates for p in c.trail for i in p.rule_ids]
    ids += [i for p in delivery.trail for i in p.rule_ids]
    return tuple(dict.fromkeys(ids))


def session_delivery(
    message: Message,
    client_id: str,
    subscriptions: Sequence[Subscription],
    edition: Edition,
    readings: Mapping[str, str],
    walks: Walks | None = None,
) -> Delivery | None:
    """Walk the graphs for one session's Non-shared Subscriptions: what it is owed for
    ``message`` (None when no subscription of it makes a copy; ``walks``: those made so
    far, :func:`subscription_copy`)."""
    candidates = []
    for subscription in subscriptions:
        # a Shared Subscription's copy is the group's, given to one member (the model's
        # ``SharedDelivery``): here the "shared" question excludes it
        found, _ = subscription_copy(
            message, client_id, subscription, edition, readings, other_member=True, walks=walks
        )
        if found is not None:
            candidates.append(found)
    if not candidates:
        # the graph's first question, "any-copy", answered no: its end "nothing" (most
        # sessions for most messages: the walk made for each was a tenth of a capture's
        # readable judgement)
        return None
    kept = _kept(walks, edition, readings)
    overlap = len(candidates) > 1
    walked = None if kept is None else kept.sessions.get(overlap)
    if walked is None:
        ask = {"any-copy": lambda cs: bool(cs), "overlap": lambda cs: len(cs) > 1}
        end, _, trail = walk(
            SESSION_GRAPH,
            tuple(candidates),
            edition,
            ask,
            {
                "one-or-many": lambda cs: cs,
                "single": lambda cs: cs,
            },
        )
        # (the walk reads of the candidates only whether there are several: kept by that)
        if kept is not None:
            kept.sessions[overlap] = (end, trail)
    else:
        end, trail = walked
    if end == "nothing":
        return None
    delivery = Delivery(
        client_id=client_id,
        message=message,
        edition=edition,
        candidates=tuple(candidates),
        shapes=tuple(c.shape for c in candidates),  # a copy per subscription
        trail=trail,
    )
    if len(candidates) > 1 and reading(readings, edition, "overlapping-copies") == "one-copy":
        # the copy that stands for all: the RETAIN of the first subscription at the highest QoS
        primary = next(c for c in candidates if c.shape.qos == delivery.highest_qos)
        single = next(s for s in delivery.single_copies() if s.retain == primary.shape.retain)
        return dataclasses.replace(delivery, shapes=(single,))
    return delivery


def dispatch(
    shape: Shape,
    connected: bool,
    edition: Edition,
    readings: Mapping[str, str],
    walks: Walks | None = None,
) -> tuple[str, tuple[Passed, ...]]:
    """Walk ``DISPATCH_GRAPH`` for one copy: "owed-now", "queued" or "not-kept" (``walks``:
    those made so far, :class:`Walks`)."""
    kept = _kept(walks, edition, readings)
    if kept is None:
        return _dispatch(shape, connected, edition, readings)
    key = (connected, shape.qos == 0)  # all the walk reads of the session and the copy
    found = kept.dispatches.get(key)
    if found is None:
        found = kept.dispatches[key] = _dispatch(shape, connected, edition, readings)
    return found


def _dispatch(
    shape: Shape, connected: bool, edition: Edition, readings: Mapping[str, str]
) -> tuple[str, tuple[Passed, ...]]:
    ask = {
        "connected": lambda s: connected,
        "qos0-offline": lambda s: s.qos == 0,
        "qos0-queue": lambda s: reading(readings, edition, "queue-qos0") == "queue",
    }
    end, _, trail = walk(DISPATCH_GRAPH, shape, edition, ask, {})
    return end, trail


def retained_on_subscribe(
    subscription: Subscription, existed: bool, edition: Edition
) -> tuple[bool, tuple[Passed, ...]]:
    """Walk ``RETAINED_GRAPH``: whether the retained messages matching a subscription just
    made (``existed``: it replaced one with the same filter) are sent to it."""
    handling = subscription.retain_handling
    ask = {
        "rs-shared": lambda s: s.shared,
        "rs-existed": lambda s: existed,
        # [MQTT-3.8.4-3] (3.1.1) "Any existing retained messages matching the Topic Filter MUST
        # be re-sent"; [MQTT-3.8.4-4] (5.0) "If the Retain Handling option is 0"
        "rs-again": lambda s: edition is not V50 or handling is RetainHandling.SEND,
        # [MQTT-3.3.1-9] [MQTT-3.3.1-10] send on a new subscription; [MQTT-3.3.1-11] never
        "rs-new": lambda s: edition is not V50 or handling is not RetainHandling.DONT_SEND,
    }
    end, _, trail = walk(RETAINED_GRAPH, subscription, edition, ask, {"rs-send": lambda s: s})
    return end == "rs-sent", trail


def retained_shape(
    message: Message, subscription: Subscription, edition: Edition, readings: Mapping[str, str]
) -> Shape:
    """The copy of a retained message sent to a subscription just made: at the lower of its
    QoS and the QoS granted [MQTT-3.8.4-6] (3.1: reading ``retained-qos-31``), RETAIN 1
    [MQTT-3.3.1-8], with the subscription's identifier (5.0 3.3.4: "The PUBLISH packet
    includes the Subscription Identifier carried in the SUBSCRIBE packet, if there was one")."""
    qos = min(message.qos, subscription.granted_qos)
    if edition is V31 and reading(readings, edition, "retained-qos-31") == "as-published":
        qos = message.qos
    ident = subscription.subscription_identifier
    return Shape(
        qos=qos,
        retain=True,
        subscription_identifiers=(ident,) if ident else (),
        topic_filters=(subscription.topic_filter,),
    )
