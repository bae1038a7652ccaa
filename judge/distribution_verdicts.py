"""The distribution judge's verdicts on copies: one copy as it is sent, a message's copies
to each session at the end, and what is still owed then.

Theory of operation
-------------------
The judge (:mod:`pubproof.judge.distribution`) matches each PUBLISH a server sends to a
copy the model owes; these functions say what is right and wrong of them, into a
:class:`~pubproof.judge.distribution_records.Report`: a retained copy's QoS and RETAIN, a 5.0
copy's properties and its reduced Message Expiry Interval, the set of copies a session got
of a message (:meth:`pubproof.model.forwarding.Delivery.judge`, QoS 2 exactly once, the MAY
of one copy per overlapping subscription tolerated), and what the model still owes a
connected session (missing, unless the text lets the server leave it out).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

from pubproof.judge.distribution_events import Event
from pubproof.judge.distribution_records import (
    EXPIRY_SLACK,
    FORWARDED,
    QOS2_ONCE,
    CopyKey,
    Link,
    MessageRecord,
    Report,
)
from pubproof.judge.findings import DEVIATION, MISSING, TOLERATED, VIOLATION
from pubproof.model import distribution_rules as D
from pubproof.model import distribution_rules50 as D50
from pubproof.model.distribution import DistributionModel, delivery_rules
from pubproof.model.distribution_rules import cite
from pubproof.model.editions import READINGS, Edition
from pubproof.model.forwarding import Delivery, Shape
from pubproof.model.messages import Cause, Copy
from pubproof.reference import InvalidPacket, encode, from_p

V50 = Edition.V50


def judge_retained_copy(
    report: Report,
    edition: Edition,
    copy: Copy,
    shape: Shape,
    event: Event,
    record: MessageRecord | None,
) -> None:
    """A retained message sent for a new subscription: at the QoS the model gives, with
    RETAIN 1 [MQTT-3.3.1-8] [MQTT-3.8.4-6]."""
    expected = (copy.qos, copy.retain)
    if (shape.qos, shape.retain) == expected:
        report.passed(
            edition,
            f"{copy.client_id}: got the retained message on {copy.topic!r} for its new "
            f"subscription, at QoS {copy.qos} with RETAIN 1, as the model says",
            copy.rules, (*((record.received,) if record else ()), event),
        )  # fmt: skip
        return
    rule = D.RETAIN_FLAG_NEW if shape.retain != copy.retain else D.MIN_QOS
    rule50 = D50.RETAIN_FLAG_SUBSCRIBE if shape.retain != copy.retain else D.MIN_QOS
    report.found(
        VIOLATION, rule50 if edition is V50 else rule, edition,
        f"{copy.client_id}: the retained message on {copy.topic!r}, sent for a new "
        f"subscription, came with QoS {shape.qos} and RETAIN {int(shape.retain)}; the "
        f"model gives QoS {copy.qos} and RETAIN {int(copy.retain)}",
        (*((record.received,) if record else ()), event),
    )  # fmt: skip


def judge_properties(
    report: Report,
    copy: Copy,
    packet: Mapping[str, Any],
    expiry: int | None,
    event: Event,
    record: MessageRecord | None,
) -> None:
    """5.0: the copy's properties are the message's, its expiry reduced."""
    sent = packet.get("properties") or {}
    expected = copy.to_p(copy.message.received_at)["properties"]
    where = (*((record.received,) if record else ()), event)
    before = len(report.findings)
    checked = [cite(rule, V50) for key, rule in FORWARDED if key in expected]
    if copy.message.publication.properties.message_expiry_interval is not None:
        checked.append(cite(D50.EXPIRY_REDUCED, V50))
    for key, rule in FORWARDED:
        if sent.get(key) != expected.get(key):
            report.found(
                VIOLATION, rule, V50,
                f"{copy.client_id}: the copy of message {copy.message.seq} has {key} "
                f"{sent.get(key)!r}; the message had {expected.get(key)!r}",
                where,
            )  # fmt: skip
    received = copy.message.publication.properties.message_expiry_interval
    got = sent.get("message_expiry_interval")
    if received is None or expiry is None:
        _properties_passed(report, copy, checked, before, where)
        return
    # [MQTT-3.3.2-6] "the received value minus the time that the Application Message has
    # been waiting in the Server": the server took the message between its PUBLISH and the
    # model's moment of ownership, and sent the copy before it was seen, so the wait it
    # counts is at most the time from that PUBLISH to this copy and at least the model's
    # (a second either way for whole seconds and rounding)
    longest = event.t - (record.received.t if record is not None else event.t)
    lowest = received - math.ceil(longest) - EXPIRY_SLACK
    if got is None or not lowest <= int(got) <= expiry + EXPIRY_SLACK:
        waited = (event.t * 1000 - copy.message.received_at) / 1000
        report.found(
            VIOLATION, D50.EXPIRY_REDUCED, V50,
            f"{copy.client_id}: the copy of message {copy.message.seq} carries Message "
            f"Expiry Interval {got!r}; received {received} s, it waited about "
            f"{waited:.1f} s, so {max(lowest, 0)} to {expiry + EXPIRY_SLACK} is right (the "
            "model's clock counts from when the server took it, a server's may count from "
            "its PUBLISH)",
            where,
        )  # fmt: skip
    _properties_passed(report, copy, checked, before, where)


def _properties_passed(
    report: Report, copy: Copy, checked: list[str], before: int, where: tuple[Event, ...]
) -> None:
    if checked and len(report.findings) == before:
        report.passed(
            V50,
            f"{copy.client_id}: the copy of message {copy.message.seq} carries its "
            "properties as received (its Message Expiry Interval reduced)",
            tuple(checked), where,
        )  # fmt: skip


def _duplicates(shapes: list[Shape], delivery: Delivery) -> list[Shape]:
    """The QoS 2 copies of one message to one session beyond one per matching subscription
    that gives a copy of that shape: overlapping subscriptions may each send their own copy
    [MQTT-3.3.4-5] (3.x: the reading overlapping-copies), and two subscriptions without
    Subscription Identifiers send copies that look alike; one more of the same is a
    duplicate delivery."""
    allowed = Counter(c.shape.seen() for c in delivery.candidates)
    counts: Counter[tuple[int, bool, tuple[int, ...]]] = Counter()
    extra = []
    for shape in shapes:
        if shape.qos != 2:
            continue
        counts[shape.seen()] += 1
        if counts[shape.seen()] > max(1, allowed[shape.seen()]):
            extra.append(shape)
    return extra


def judge_deliveries(
    report: Report, record: MessageRecord, waiting: AbstractSet[CopyKey] = frozenset()
) -> None:
    """Each session's copies of one message against what the text allows; the sessions
    excluded from it, and those its expiry spared, got nothing. A session in ``waiting``
    (:func:`~pubproof.judge.distribution_records.waiting_for_quota`) may still be owed a
    QoS 1 or 2 copy of it behind a send quota used up: the copies it got so far may not be
    all it gets, so only a QoS 2 duplicate among them is judged."""
    for client_id, delivery in record.deliveries.items():
        seen = record.seen.get(client_id, [])
        if client_id in record.uncertain or record.ambiguous:
            continue
        if not seen:
            continue  # missing copies: _judge_missing, from what the model still owes
        shapes = [shape for shape, _ in seen]
        twice = _duplicates(shapes, delivery)
        if twice and record.message.qos == 2:
            # QoS 2 is exactly once: the publisher's duplicates before its PUBREL "MUST
            # NOT cause duplicate messages to be delivered to any onward recipients"
            report.found(
                VIOLATION, None, record.edition,
                f"{client_id}: got message {record.message.seq} on "
                f"{record.message.topic!r} (QoS 2) {1 + len(twice)} times",
                (record.received, record.owned, *(e for _, e in seen)),
                rule_id=QOS2_ONCE[record.edition is V50],
            )  # fmt: skip
        if (record.edition, record.message.seq, client_id) in waiting:
            continue  # its copy at the highest QoS may be waiting for the send quota
        allowed = Counter(c.shape.seen() for c in delivery.candidates)
        counted = first_copies(shapes, record.resent, allowed)
        problems = delivery.judge(counted)
        where = (record.received, record.owned, *(e for _, e in seen))
        if not problems and not twice:
            what = f"message {record.message.seq} on {record.message.topic!r}"
            if len(counted) > len(delivery.shapes):
                report.found(
                    TOLERATED, D.OVERLAP, record.edition,
                    f"{client_id}: got {what} once per matching subscription, each at "
                    "its QoS: as under the reading overlapping-copies=per-subscription",
                    where,
                )  # fmt: skip
            elif report.passes:
                qos = ", ".join(str(s.qos) for s in counted)
                report.passed(
                    record.edition, f"{client_id}: got {what} at QoS {qos}, as the model "
                    "says", delivery_rules(delivery), where,
                )  # fmt: skip
        for problem in problems:
            verdict, rule_id = _retain_only(delivery, counted) or (VIOLATION, problem.rule_id)
            report.found(
                verdict, None, record.edition,
                f"{client_id}: message {record.message.seq} on {record.message.topic!r} "
                f"(QoS {record.message.qos}): {problem.message}",
                (record.received, record.owned, *(e for _, e in seen)),
                rule_id=rule_id,
            )  # fmt: skip
    for client_id, (rule_id, why) in record.excluded.items():
        if client_id not in record.seen and client_id not in record.uncertain:
            report.passed(
                record.edition,
                f"{client_id}: no copy of message {record.message.seq}, which {why}",
                (rule_id,), (record.received, record.owned),
            )  # fmt: skip
    for client_id in record.expired if report.passes else ():
        if client_id not in record.seen:
            report.passed(
                record.edition,
                f"{client_id}: message {record.message.seq} expired before it could be "
                "sent, and was not sent",
                (cite(D50.EXPIRED_NOT_SENT, V50),), (record.received, record.owned),
            )  # fmt: skip
    for offer in record.shared:
        observed = {c: [s for s, _ in record.seen.get(c, [])] for c in offer.members}
        if any(c in record.uncertain for c in offer.members):
            continue
        for problem in offer.judge(observed):
            report.found(
                VIOLATION, None, record.edition,
                f"message {record.message.seq} on {record.message.topic!r}, Shared "
                f"Subscription {offer.topic_filter!r}: {problem.message}",
                (record.received, record.owned),
                rule_id=problem.rule_id,
            )  # fmt: skip


def _retain_only(delivery: Delivery, counted: list[Shape]) -> tuple[str, str] | None:
    """When the one copy seen is the one the text allows but for its RETAIN flag: the
    verdict and the rule of RETAIN on a forwarded copy (3.1.1 [MQTT-3.3.1-9]: RETAIN 0 on
    an established subscription; 5.0 [MQTT-3.3.1-12] [MQTT-3.3.1-13]: as Retain As
    Published says; 3.1: a SHOULD), not of its QoS."""
    shapes = {s.seen() for s in counted}
    if len(shapes) != 1:
        return None
    ((qos, retain, ids),) = shapes
    single = {(s.qos, s.subscription_identifiers): s.retain for s in delivery.single_copies()}
    if (qos, ids) not in single or single[qos, ids] == retain:
        return None
    edition = delivery.edition
    if edition is V50:
        rule = D50.RETAIN_AS_PUBLISHED_1 if single[qos, ids] else D50.RETAIN_AS_PUBLISHED_0
        return VIOLATION, cite(rule, edition)
    if edition is Edition.V31:
        return DEVIATION, cite(D.RETAIN_FLAG_LIVE_31, edition)
    return VIOLATION, cite(D.RETAIN_FLAG_LIVE, edition)


def judge_missing(
    report: Report,
    links: Iterable[Link],
    models: Mapping[Edition, DistributionModel],
    messages: Mapping[tuple[Edition, int], MessageRecord],
    may_miss: set[tuple[Edition, int]],
    readings: Mapping[str, str],
    unordered: AbstractSet[tuple[Edition, int]] = frozenset(),
    waiting: AbstractSet[CopyKey] = frozenset(),
) -> set[tuple[Edition, int, str]]:
    """What the model still owes a session whose link is open at the end: missing. The
    (edition, seq, client) of each copy found missing; a retained copy in ``unordered``
    (the server sent the other of two retained messages whose order the wire leaves
    open: ``unknown:retained-order``) is not, nor a QoS 1 or 2 copy in ``waiting``, owed
    while the session's send quota is used up (``unknown:quota-full``)."""
    missing: set[tuple[Edition, int, str]] = set()
    for link in links:
        if not link.connected or link.client_id is None or link.edition is None:
            continue
        model = models.get(link.edition)
        session = None if model is None else model.sessions.get(link.client_id)
        if session is None:
            continue
        for copy in session.pending:
            if (link.edition, copy.copy_id) in unordered:
                continue
            if (link.edition, copy.message.seq, link.client_id) in waiting:
                # [MQTT-3.3.4-9] "The Server MUST NOT send more than Receive Maximum QoS 1
                # and QoS 2 PUBLISH packets for which it has not received PUBACK, PUBCOMP,
                # or PUBREC with a Reason Code of 128 or greater from the Client"
                continue
            if (link.edition, copy.copy_id) in may_miss:
                # [MQTT-3.3.1-7] "It SHOULD store the new QoS 0 message as the new
                # retained message for that topic, but MAY choose to discard it at any
                # time": its absence is a reading the text leaves open
                rule = D50.RETAIN_QOS0 if link.edition is V50 else D.RETAIN_QOS0
                report.found(
                    TOLERATED, rule, link.edition,
                    f"{link.client_id}: got no retained message on {copy.topic!r}: the "
                    "server SHOULD keep a QoS 0 retained message but MAY discard it",
                    (),
                )  # fmt: skip
                continue
            record = messages.get((link.edition, copy.message.seq))
            if record is not None and link.client_id in record.uncertain:
                continue
            if record is not None and not record.released:
                continue  # QoS 2 without its PUBREL: a Method A server owes nothing yet
            if too_large(copy, link, readings):
                continue  # [MQTT-3.1.2-25] discarded, as if it had been sent
            rule = (
                (D50.RETAIN_HANDLING_0 if link.edition is V50 else D.RETAIN_ON_SUBSCRIBE)
                if copy.cause is Cause.RETAINED
                else D.TO_MATCHING_SESSIONS
            )
            why = (
                "the retained message owed to its new subscription"
                if copy.cause is Cause.RETAINED
                else f"a copy at QoS {copy.qos} for {', '.join(copy.topic_filters)}"
            )
            report.found(
                MISSING, rule, link.edition,
                f"{link.client_id}: never got message {copy.message.seq} on "
                f"{copy.topic!r} ({why})",
                (*((record.received, record.owned) if record else ()),),
            )  # fmt: skip
            missing.add((link.edition, copy.message.seq, link.client_id))
    return missing


def too_large(copy: Copy, link: Link, readings: Mapping[str, str]) -> bool:
    """5.0: whether the copy, as the server would send it (no Topic Alias), is larger than
    the client's Maximum Packet Size: "Where a Packet is too large to send, the Server MUST
    discard it without sending it and then behave as if it had completed sending that
    Application Message" [MQTT-3.1.2-25]."""
    limit = link.maximum_packet_size
    if limit is None or link.edition is not V50:
        return False
    packet = copy.to_p(copy.message.received_at, packet_id=1 if copy.qos else None)
    try:
        wire = {k: v for k, v in readings.items() if k in READINGS}
        size = len(encode(from_p(packet), edition=V50, readings=wire))
    except (InvalidPacket, ValueError):
        return False
    return size > limit


def first_copies(
    shapes: list[Shape], resent: int, allowed: Counter[tuple[int, bool, tuple[int, ...]]]
) -> list[Shape]:
    """The copies of a message that count for its delivery: a copy at QoS 1 is delivered
    "at least once", so more of the same are one; a QoS 1 message its publisher sent
    ``resent`` more times before the PUBACK may have been taken as that many more messages;
    QoS 2 duplicates are judged apart (exactly once), and count once here too. But as many
    copies that look alike as the matching subscriptions give (``allowed``, by what a copy
    shows) are each a subscription's own [MQTT-3.3.4-5]: two subscriptions with the same
    Subscription Identifier, or none, send copies that look alike."""
    kept: list[Shape] = []
    extra: dict[Shape, int] = {}
    for shape in shapes:
        alike = sum(1 for k in kept if k.seen() == shape.seen())
        if alike >= max(1, allowed[shape.seen()]) and (
            shape.qos >= 1 or extra.get(shape, 0) < resent
        ):
            extra[shape] = extra.get(shape, 0) + 1
            continue
        kept.append(shape)
    return kept
