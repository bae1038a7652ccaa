"""The distribution judge's copies: each PUBLISH a server sends a client, matched to a
copy the model owes, judged as it is sent; and the copies that nobody was owed.

Theory of operation
-------------------
:func:`publish_out` matches a PUBLISH to the first copy the model owes the client's
session with the same topic name (its Topic Alias resolved) and payload, which the model
then counts as sent: a retained copy's RETAIN and QoS, a 5.0 copy's properties (and, on a
capture, its DUP) are judged at once, the rest when the judgement ends. A copy of a
message whose PUBACK or PUBREC is not seen yet shows the server took it already
(``_forwarded_early``). A PUBLISH that matches no copy owed (:func:`unowed`) is, by the
message it shows (same topic name and payload): a copy sent after its message expired
[MQTT-3.3.2-5]; another copy of a message the session was owed (counted by the
delivery's judgement); a copy to a session whose subscriptions changed while the message
was in flight (open either way); the retained message its subscription's Retain Handling
withholds, or one a later message replaced or deleted (unknown when the two were in
flight together: either may have been stored last); a copy its subscriptions exclude
(No Local); a copy to a session that no subscription of which matched [MQTT-4.5.0-1]
[MQTT-3.3.2-3]; or a copy of nothing any link showed. The last two are findings only
where the judge knows the session whole: every link from the server's start
(``complete``), or, on a capture, a link whose CONNECT it saw for a new session and of
which nothing was lost (:attr:`~pubproof.judge.distribution_records.Link.whole`). On a
capture, a live copy to a session that subscribed only after the server took the message
is left open too: a capture cannot tell which of the two the server took first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pubproof.judge.distribution_capture import order_key
from pubproof.judge.distribution_events import S2C, Event
from pubproof.judge.distribution_inflight import session_flows
from pubproof.judge.distribution_ledger import unknown
from pubproof.judge.distribution_records import (
    EXPIRY_SLACK,
    FORWARDED,
    JudgeState,
    Link,
    MessageRecord,
)
from pubproof.judge.distribution_verdicts import judge_properties, judge_retained_copy
from pubproof.judge.findings import VIOLATION
from pubproof.model import distribution_rules as D
from pubproof.model import distribution_rules50 as D50
from pubproof.model.distribution import DistributionError
from pubproof.model.editions import Edition
from pubproof.model.forwarding import Shape, subscription_copy
from pubproof.model.messages import Cause, Copy, Message
from pubproof.model.topic_filters import subscription_matches

V50 = Edition.V50


def publish_out(judge: JudgeState, link: Link, event: Event) -> None:
    """A PUBLISH the server sends a client: matched to a copy the model owes its session
    (the first owed with the same topic name and payload), judged as it is sent, and
    written in the ledger; or what :func:`unowed` makes of it."""
    packet = event.packet or {}
    ledger = judge.ledger
    if link.edition is None or link.client_id is None:
        ledger.sent(event, unknown("session-before-capture"))
        return
    topic = judge._topic(link, S2C, packet)
    if topic is None:
        ledger.sent(event, unknown("topic-unknown"))
        return
    packet_id = packet.get("packet_id")
    flows = session_flows(judge, link)
    if packet_id is not None and int(packet.get("qos", 0)) > 0:
        # one more QoS 1 or 2 PUBLISH unacknowledged: the server's send quota [MQTT-3.3.4-9]
        flows.unacknowledged.add(int(packet_id))
    if packet_id is not None and int(packet_id) in flows.outbound:
        # a re-send of a copy under way (its DUP is the flows' to judge)
        seq = judge.copy_messages.get((link.edition, flows.outbound[int(packet_id)]))
        ledger.sent(event, "resend", None if seq is None else (link.edition, seq))
        return
    model = judge._model(link.edition)
    session = model.sessions.get(link.client_id)
    payload = str(packet.get("payload_hex", ""))
    alike = judge.by_content.get((link.edition, topic, payload), [])
    if judge.capture and (
        judge.unfollowed[topic, payload] or _elsewhere(judge, link, topic, payload)
    ):
        # a PUBLISH of this topic and payload that is not one of this model's messages
        # (another edition's, one not followed): no copy alike can be judged
        for each in alike:
            each.ambiguous = True
        elsewhere = _elsewhere(judge, link, topic, payload)
        ledger.sent(event, unknown("other-edition" if elsewhere else "ambiguous"))
        return
    pool = () if session is None else (*session.pending, *session.optional)
    owed = _owed(pool, topic, payload, packet)
    if owed is None and _forwarded_early(judge, link.edition, topic, payload, event):
        pool = () if session is None else (*session.pending, *session.optional)
        owed = _owed(pool, topic, payload, packet)
    if owed is None:
        outcome, key = unowed(judge, link, event, topic, payload)
        ledger.sent(event, outcome, key)
        return
    try:
        copy, expiry = model.send(link.client_id, owed.copy_id)
    except DistributionError:
        ledger.sent(event, "unowed")
        return
    key = (link.edition, copy.message.seq)
    judge.copy_messages[link.edition, copy.copy_id] = copy.message.seq
    judge.copy_events.setdefault((link.edition, link.client_id, copy.message.seq), event)
    judge.sent_keys.add((link.edition, copy.message.seq, link.client_id))
    judge.messages_of[event.order] = copy.message.seq
    if copy.cause is Cause.LIVE:
        latest = (link.edition, link.client_id, *order_key(copy))
        if judge.latest.get(latest, (-1,))[0] < copy.message.seq:
            judge.latest[latest] = (copy.message.seq, event)
    if packet_id is not None and copy.qos > 0:
        flows.outbound[int(packet_id)] = copy.copy_id
        flows.awaiting[int(packet_id)] = "PUBACK" if copy.qos == 1 else "PUBREC"
    judge.sent.setdefault((link.edition, link.client_id), []).append(copy)
    record = judge.messages.get(key)
    shape = Shape.from_p(packet)  # type: ignore[arg-type]
    if record is not None and copy.cause is Cause.LIVE:
        record.seen.setdefault(link.client_id, []).append((shape, event))
    if copy.cause is Cause.RETAINED:
        judge_retained_copy(judge.report, link.edition, copy, shape, event, record)
    changed = None
    if link.edition is V50:
        judge_properties(judge.report, copy, packet, expiry, event, record)
        changed = forwarded_changed(copy, packet)
        if judge.capture and packet.get("dup"):
            # [MQTT-3.3.1-3] a first transmission has DUP 0 "determined solely by
            # whether the outgoing PUBLISH packet is a retransmission" (3.x: the link
            # judge's, on a capture's clean session)
            judge.report.found(
                VIOLATION, D50.DUP_FORWARDED, V50,
                f"{link.client_id}: the first copy of message {copy.message.seq} on "
                f"{topic!r} has DUP 1",
                (*((record.received,) if record else ()), event),
            )  # fmt: skip
    ledger.sent(event, "copy", key, changed)


def _forwarded_early(
    judge: JudgeState, edition: Edition, topic: str, payload: str, event: Event
) -> bool:
    """A copy of a message the server has not acknowledged yet: it took ownership no
    later than now (a server may forward before its PUBACK or PUBREC goes out); the
    message becomes the model's at this event."""
    for (flows_edition, client_id), flows in judge.flows.items():
        if flows_edition is not edition:
            continue
        for packet_id, (received, resent) in list(flows.inbound.items()):
            packet = received.packet or {}
            if (packet.get("topic"), packet.get("payload_hex")) != (topic, payload):
                continue
            publisher = next(
                (k for k in judge.links.values()
                 if k.key == (edition, client_id) and k.conn == received.conn), None,
            )  # fmt: skip
            if publisher is None:
                continue
            del flows.inbound[packet_id]
            qos = int(packet.get("qos", 0))
            seq = judge._own(publisher, received, event, resent=resent if qos == 1 else 0)
            if qos == 2 and seq is not None:
                flows.released[packet_id] = seq
                judge.messages[edition, seq].released = False
            return seq is not None
    return False


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
    # a capture's copy whose message may be another edition's (the same topic name and
    # payload), which this edition's model does not know: nothing here can tell
    elsewhere = judge.capture and _elsewhere(judge, link, topic, payload)
    # ... or of a PUBLISH that was seen but never became a message the judge follows
    ambiguous = judge.capture and judge.unfollowed[topic, payload] > 0
    for record in reversed(judge.by_content.get((link.edition, topic, payload), [])):
        key = (link.edition, record.message.seq)
        if elsewhere or ambiguous:
            return unknown("other-edition" if elsewhere else "ambiguous"), key
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
        if (
            shape.retain
            and judge.capture
            and link.whole
            and not (subscribed(judge, link, topic) or asked(judge, link, topic))
        ):
            # a retained message is sent only for a subscription that matches it
            judge.report.found(
                VIOLATION, D.TOPIC_MATCHES_FILTER, link.edition,
                f"{link.client_id}: got the retained message {record.message.seq} on "
                f"{topic!r}, which none of its subscriptions matches",
                (record.received, record.owned, event),
            )  # fmt: skip
            return "unowed", key
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
        if shape.retain and gone and _in_either_order(judge, link, session, record):
            return unknown("retained-order"), key
        if shape.retain and gone:
            judge.gone.pop((link.edition, link.client_id, record.message.seq), None)
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
    if elsewhere:
        return unknown("other-edition"), None
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


def _in_either_order(judge: JudgeState, link: Link, session: Any, record: MessageRecord) -> bool:
    """Whether a retained copy of ``record``'s message, which the model's store no longer
    held, may be the server's retained message all the same: when the session
    subscribed, it and the one the model owes were in flight together (each received
    before the other was owned), and the server takes a QoS 1 or 2 message at a time
    the wire only bounds, so it may have stored either last [MQTT-3.3.1-5]. The model's
    copy, still owed, is then owed no more (both ``unknown:retained-order``)."""
    assert link.edition is not None and link.client_id is not None
    rival = judge.retained_order.get((link.edition, link.client_id, record.message.seq))
    if rival is None or session is None:
        return False
    if not any(c.copy_id == rival.copy_id for c in session.pending):
        return False  # the server sent the model's too: one of the two is wrong
    judge.unordered.add((link.edition, rival.copy_id))
    judge.copy_outcomes[link.edition, rival.message.seq, link.client_id] = unknown("retained-order")
    return True


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
            message, client_id, subscription, edition, judge.readings, other_member=True,
            walks=judge._model(edition).walks,
        )  # fmt: skip
        if found is None and trail and trail[-1].rule_ids:
            why = f"its subscription {subscription.topic_filter!r} excludes ({trail[-1].key})"
            return trail[-1].rule_ids[0], why
    return None


def forwarded_changed(copy: Copy, packet: Mapping[str, Any]) -> bool:
    """5.0: whether a copy's properties that the server forwards unchanged (Payload Format
    Indicator, Response Topic, Correlation Data, User Properties, Content Type) are not
    the message's."""
    sent = packet.get("properties") or {}
    expected = copy.to_p(copy.message.received_at)["properties"]
    return any(sent.get(key) != expected.get(key) for key, _ in FORWARDED)


def _elsewhere(judge: JudgeState, link: Link, topic: str, payload: str) -> bool:
    """Whether a message of another edition's model has this topic name and payload."""
    return any(
        (edition, topic, payload) in judge.by_content
        for edition in judge.models
        if edition is not link.edition
    )


def _owed(
    pool: Iterable[Copy], topic: str, payload_hex: str, packet: Mapping[str, Any]
) -> Copy | None:
    """The copy owed that a PUBLISH with ``topic`` and ``payload_hex`` is: the first owed
    with that topic and payload, unless several messages have them (the same payload
    published twice, by two clients, say), when it is the first whose QoS, RETAIN and
    (5.0) forwarded properties are the PUBLISH's, if one is: a server need not send the
    copies of two publishers' messages in the order it took them."""
    try:
        payload = bytes.fromhex(payload_hex)
    except ValueError:
        return None  # not hex: no message's payload (nothing it can be a copy of)
    if payload.hex() != payload_hex:
        return None  # hex no payload's .hex() writes (upper case, spaces)
    candidates = [c for c in pool if _same(c.message, topic, payload)]
    if len(candidates) < 2:
        return candidates[0] if candidates else None
    qos, retain = packet.get("qos"), bool(packet.get("retain"))
    for copy in candidates:
        if (copy.qos, copy.retain) == (qos, retain) and not forwarded_changed(copy, packet):
            return copy
    return next((c for c in candidates if not forwarded_changed(c, packet)), candidates[0])


def _same(message: Message, topic: str, payload: bytes) -> bool:
    """Whether a PUBLISH with ``topic`` and ``payload`` is a copy of ``message`` (bytes
    compared, not each message's payload made hex again: a subscriber behind is owed many)."""
    return message.topic == topic and message.publication.payload == payload
