"""The distribution judge's copies that nobody was owed: what each one is, and which are
findings.

Theory of operation
-------------------
A PUBLISH a server sends a client that matches no copy the model owes that client's
session (:meth:`~pubproof.judge.distribution.DistributionJudge._publish_out`) is, by the
message it shows (same topic name and payload): a copy sent after its message expired
[MQTT-3.3.2-5]; another copy of a message the session was owed (counted by the
delivery's judgement); a copy to a session whose subscriptions changed while the message
was in flight (open either way); the retained message its subscription's Retain Handling
withholds, or one a later message replaced or deleted; a copy its subscriptions exclude
(No Local); a copy to a session that no subscription of which matched [MQTT-4.5.0-1]
[MQTT-3.3.2-3]; or a copy of nothing any link showed. The last two are findings only
where the judge knows the session whole: every link from the server's start
(``complete``), or, on a capture, a link whose CONNECT it saw for a new session and of
which nothing was lost (:attr:`~pubproof.judge.distribution_records.Link.whole`). On a
capture, a live copy to a session that subscribed only after the server took the message
is left open too: a capture cannot tell which of the two the server took first.
"""

from __future__ import annotations

from typing import Any

from pubproof.judge.distribution_events import Event
from pubproof.judge.distribution_ledger import unknown
from pubproof.judge.distribution_records import EXPIRY_SLACK, JudgeState, Link
from pubproof.judge.findings import VIOLATION
from pubproof.model import distribution_rules as D
from pubproof.model import distribution_rules50 as D50
from pubproof.model.editions import Edition
from pubproof.model.forwarding import Shape, subscription_copy
from pubproof.model.messages import Message
from pubproof.model.topic_filters import subscription_matches


def unowed(
    judge: JudgeState, link: Link, event: Event, topic: str, payload: str
) -> tuple[str, tuple[Edition, int] | None]:
    """A PUBLISH to a client that the model owes it no copy of: another copy of a message
    it was owed (for the delivery's judgement), a copy sent after its message expired, a
    copy its subscriptions exclude (No Local), or a copy of nothing that was published.
    Its outcome for the ledger, and the message it is a copy of."""
    assert link.edition is not None and link.client_id is not None
    packet = event.packet or {}
    shape = Shape.from_p(packet)  # type: ignore[arg-type]
    model = judge._model(link.edition)
    session = model.sessions.get(link.client_id)
    whole = judge.complete or link.whole
    for record in reversed(judge.by_content.get((link.edition, topic, payload), [])):
        key = (link.edition, record.message.seq)
        expires = record.message.expires_at
        if expires is not None and event.t * 1000 > expires + EXPIRY_SLACK * 1000:
            # [MQTT-3.3.2-5] "If the Message Expiry Interval has passed and the Server has
            # not managed to start onward delivery to a matching subscriber, then it MUST
            # delete the copy of the message for that subscriber"
            judge.report.found(
                VIOLATION, D50.EXPIRED_NOT_SENT, link.edition,
                f"{link.client_id}: a copy of message {record.message.seq} on {topic!r} "
                "was sent after its Message Expiry Interval had passed",
                (record.received, record.owned, event),
            )  # fmt: skip
            return "unowed", key
        if link.client_id in record.deliveries:
            record.seen.setdefault(link.client_id, []).append((shape, event))
            return "again", key
        if link.client_id in record.uncertain:
            # its subscriptions changed while the message was in flight
            return unknown("subscription-changing"), key
        kept = judge.withheld.get((link.edition, link.client_id, record.message.seq))
        if shape.retain and kept:
            judge.report.found(
                VIOLATION, None, link.edition,
                f"{link.client_id}: got the retained message {record.message.seq} on "
                f"{topic!r}, which its subscription's Retain Handling withholds",
                (record.received, event),
                rule_ids=tuple(i for i in kept if "3.3.1" in i) or kept,
            )  # fmt: skip
            return "unowed", key
        gone = judge.displaced.get((link.edition, record.message.seq))
        if shape.retain and gone:
            judge.report.found(
                VIOLATION, None, link.edition,
                f"{link.client_id}: got message {record.message.seq} on {topic!r} as the "
                "retained message, which a later message had replaced or deleted",
                (record.received, record.owned, event),
                rule_ids=gone,
            )  # fmt: skip
            return "unowed", key
        barred = excluded(judge, record.message, link.client_id, session, link.edition)
        if barred is not None:
            judge.report.found(
                VIOLATION, None, link.edition,
                f"{link.client_id}: got a copy of message {record.message.seq} on "
                f"{topic!r}, which {barred[1]}",
                (record.received, record.owned, event),
                rule_id=barred[0],
            )  # fmt: skip
            return "unowed", key
        if not whole or shape.retain:
            return _unseen(link, "session-before-capture"), key
        # a live copy to a session no subscription of which matched when the server
        # took the message: "it MUST add the message to the Session state of every
        # Client that has a matching Subscription" [MQTT-4.5.0-1], and only those
        matched = subscribed(judge, link, topic)
        if matched and judge.capture:
            # a capture cannot tell which of the two the server took first
            return unknown("subscription-changing"), key
        judge.report.found(
            VIOLATION, D.TO_MATCHING_SESSIONS if matched else D.TOPIC_MATCHES_FILTER,
            link.edition,
            f"{link.client_id}: got a copy of message {record.message.seq} on "
            f"{topic!r}, though "
            + ("it subscribed only after the server took the message" if matched
               else "none of its subscriptions matches it"),
            (record.received, record.owned, event),
        )  # fmt: skip
        return "unowed", key
    if not whole:
        return _unseen(link, "publication-unseen"), None
    if subscribed(judge, link, topic) or (judge.capture and asked(judge, link, topic)):
        return unknown("publication-unseen"), None
    judge.report.found(
        VIOLATION, D.TOPIC_MATCHES_FILTER, link.edition,
        f"{link.client_id}: a PUBLISH on {topic!r}, which matches none of its "
        "subscriptions" + ("" if judge.capture else " and no client published"),
        (event,),
    )  # fmt: skip
    return "unowed", None


def _unseen(link: Link, why: str) -> str:
    """The outcome of a copy that the events cannot judge: the link lost traffic, or
    ``why``."""
    return unknown("capture-lost" if link.lossy else why)


def asked(judge: JudgeState, link: Link, topic: str) -> bool:
    """Whether a SUBSCRIBE of ``link`` still unanswered asks for a filter that matches
    ``topic`` (a server may send its copies before the SUBACK)."""
    assert link.edition is not None
    return any(
        subscription_matches(str(item.get("filter")), topic, link.edition, judge.readings)
        for asked in link.subscribing.values()
        for item in (asked.packet or {}).get("subscriptions", [])
    )


def subscribed(judge: JudgeState, link: Link, topic: str) -> bool:
    """Whether a subscription of ``link``'s session now matches ``topic``."""
    assert link.edition is not None and link.client_id is not None
    session = judge._model(link.edition).sessions.get(link.client_id)
    return session is not None and any(
        subscription_matches(f, topic, link.edition, judge.readings) for f in session.subscriptions
    )


def excluded(
    judge: JudgeState, message: Message, client_id: str, session: Any, edition: Edition
) -> tuple[str, str] | None:
    """Why the model gave a session with a matching subscription no copy of ``message``
    (the rule of the outcome its walk ended at, e.g. No Local [MQTT-3.8.3-3]), or None
    when none of its subscriptions matches."""
    if session is None:
        return None
    for subscription in session.subscriptions.values():
        found, trail = subscription_copy(
            message, client_id, subscription, edition, judge.readings, other_member=True
        )
        if found is None and trail and trail[-1].rule_ids:
            why = f"its subscription {subscription.topic_filter!r} excludes ({trail[-1].key})"
            return trail[-1].rule_ids[0], why
    return None
