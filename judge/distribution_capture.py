"""The distribution judge on a capture: when a copy the model owes a session is missing for
certain, and what became of every message and copy.

Theory of operation
-------------------
A probe keeps its links open and waits before it judges; a capture just ends, and its
links may close at any moment. A copy still owed when a link closes may have been cut off
by the close; one still owed when the capture ends may have gone out a moment later. So a
capture proves a copy missing in two ways only, both about a link that is known whole
enough (nothing of it lost: a ``lost`` event makes everything still owed on it unknown,
``capture-lost``):

- **by order**: the session was sent a later message that the order of 4.6 puts after
  this one (same publisher, topic and QoS published and sent, both forwarded live, on an
  Ordered Topic, a Non-shared Subscription): "it MUST send PUBLISH packets to consumers
  (for the same Topic and QoS) in the order that they were received from any given
  Client" [MQTT-4.6.0-6], so having sent the later one, it could no longer send this one
  in order: it is missing [MQTT-4.5.0-1];
- **by patience**: the link stayed open for at least ``patience`` seconds after the copy
  became owed (the message taken, the subscription made, the session resumed) and the
  server never sent it. The patience is the judgement's own choice, as a probe's waits are
  (``pubproof check --patience``); the finding says how long the server had.

Everything else still owed is unknown: ``capture-ended`` (the link open at the end, for
less than the patience), or excused: a clean session that ended with its link
(``session-ended``). :func:`settle` judges a session's copies as its link closes,
:func:`owed_at_end` those still owed at the end, :func:`session_outcomes` writes each
message's outcome into the ledger (:mod:`.distribution_ledger`).
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from typing import Any

from pubproof.judge.distribution_alike import alike
from pubproof.judge.distribution_events import Event
from pubproof.judge.distribution_ledger import outcome_of, unknown
from pubproof.judge.distribution_records import CopyKey, JudgeState, Link, MessageRecord
from pubproof.judge.distribution_verdicts import too_large
from pubproof.judge.findings import MISSING, TOLERATED
from pubproof.model import distribution_rules as D
from pubproof.model import distribution_rules50 as D50
from pubproof.model.editions import Edition
from pubproof.model.messages import Cause, Copy
from pubproof.model.ordering import ordered_topic
from pubproof.model.topic_filters import parse_shared, subscription_matches

V50 = Edition.V50
#: the default patience, in seconds (:func:`settle`)
PATIENCE = 10.0


def order_key(copy: Copy) -> tuple[str, str, int, int]:
    """What two copies to one session must share for the order of 4.6 to bind them, as
    both readings of ``ordering-qos`` read it: publisher, topic, QoS published and sent."""
    return copy.message.publisher, copy.topic, copy.message.qos, copy.qos


def ordered(judge: JudgeState, edition: Edition, copy: Copy) -> bool:
    """Whether ``copy`` takes part in the order of 4.6 whatever the readings: forwarded
    live, on an Ordered Topic, and (5.0) for Non-shared Subscriptions only."""
    if copy.cause is not Cause.LIVE:
        return False
    if edition is V50 and any(parse_shared(f, edition) for f in copy.topic_filters):
        return False
    return ordered_topic(copy.topic, edition, judge.readings, judge.config)


def _later(judge: JudgeState, edition: Edition, client_id: str, copy: Copy) -> Event | None:
    """The event of a copy sent to the session of a message that the order puts after
    ``copy``'s, if any."""
    if not ordered(judge, edition, copy):
        return None
    latest = judge.latest.get((edition, client_id, *order_key(copy)))
    if latest is None or latest[0] <= copy.message.seq:
        return None
    return latest[1]


def _missing(
    judge: JudgeState,
    edition: Edition,
    client_id: str,
    copy: Copy,
    record: MessageRecord | None,
    why: str,
    shown: Iterable[Event],
) -> None:
    rule = (
        (D50.RETAIN_HANDLING_0 if edition is V50 else D.RETAIN_ON_SUBSCRIBE)
        if copy.cause is Cause.RETAINED
        else D.TO_MATCHING_SESSIONS
    )
    what = (
        "the retained message owed to its new subscription"
        if copy.cause is Cause.RETAINED
        else f"a copy at QoS {copy.qos} for {', '.join(copy.topic_filters)}"
    )
    judge.report.found(
        MISSING, rule, edition,
        f"{client_id}: never got message {copy.message.seq} on {copy.topic!r} ({what}): {why}",
        (*((record.received, record.owned) if record else ()), *shown),
    )  # fmt: skip


def judge_owed(
    judge: JudgeState,
    link: Link | None,
    edition: Edition,
    client_id: str,
    end: Event | None,
    pending: Iterable[Copy],
    optional: Iterable[Copy] = (),
) -> None:
    """The copies the model still owed ``client_id``'s session (``pending``, and the
    ``optional`` ones it may send or not) as its link (``link``, None when it has none)
    closes at ``end``, or as the capture ends (``end`` None): each missing for certain (by
    order or patience), or its outcome for the ledger."""
    now = judge.now if end is None else end.t
    chosen = {id(copy) for copy in optional}
    for copy in (*pending, *optional):
        optional_copy = id(copy) in chosen
        record = judge.messages.get((edition, copy.message.seq))
        key = (edition, copy.message.seq, client_id)
        if (edition, copy.copy_id) in judge.unordered:
            # the server sent the other of two retained messages it may have stored last
            judge.copy_outcomes[key] = unknown("retained-order")
            continue
        if record is not None and client_id in record.uncertain:
            judge.copy_outcomes[key] = unknown("subscription-changing")
            continue
        if record is not None and record.ambiguous:
            judge.copy_outcomes[key] = unknown("ambiguous")
            continue
        if record is not None and not record.released:
            judge.copy_outcomes[key] = unknown("not-released")
            continue
        if copy.cause is Cause.RETAINED and _replaced_elsewhere(judge, edition, copy, record):
            judge.copy_outcomes[key] = unknown("other-edition")
            continue
        if link is not None and too_large(copy, link, judge.readings):
            judge.copy_outcomes[key] = "too-large"
            continue
        if link is None or (end is None and not link.connected):
            judge.copy_outcomes.setdefault(key, unknown("capture-ended"))  # queued
            continue
        if link.lossy:
            judge.copy_outcomes[key] = unknown("capture-lost")
            continue
        if optional_copy:  # the server may keep it or not (a QoS 0 message queued offline)
            judge.copy_outcomes.setdefault(key, "session-ended")
            continue
        later = _later(judge, edition, client_id, copy)
        flows = judge.flows.get((edition, client_id))
        # [MQTT-3.3.4-9] a QoS 1 or 2 copy waits while the send quota is used up: no
        # patience runs out on it (the order of 4.6 still proves it missing)
        waits = copy.qos > 0 and flows is not None and flows.quota_full
        since = judge.owed_at.get((edition, copy.copy_id))
        waited = None if since is None else now - since.t
        if (edition, copy.copy_id) in judge.may_miss:
            # [MQTT-3.3.1-7] "It SHOULD store the new QoS 0 message as the new retained
            # message for that topic, but MAY choose to discard it at any time"
            if later is not None or (waited is not None and waited >= judge.patience):
                rule = D50.RETAIN_QOS0 if edition is V50 else D.RETAIN_QOS0
                judge.report.found(
                    TOLERATED, rule, edition,
                    f"{client_id}: got no retained message on {copy.topic!r}: the server "
                    "SHOULD keep a QoS 0 retained message but MAY discard it",
                    () if since is None else (since,),
                )  # fmt: skip
            judge.copy_outcomes[key] = "session-ended"
            continue
        if later is not None and _read_otherwise(judge, edition, client_id, copy, waited):
            # an alike copy sent may have been this message's, and the other's then not
            # proven missing: the wire cannot tell which (distribution_alike)
            judge.copy_outcomes[key] = unknown("ambiguous")
        elif later is not None:
            seq = judge.messages_of.get(later.order)
            _missing(
                judge, edition, client_id, copy, record,
                f"the server sent it message {seq} afterwards, which the order of 4.6 "
                "puts after it [MQTT-4.6.0-6]",
                (later,),
            )  # fmt: skip
            judge.copy_outcomes[key] = "missing"
        elif waited is not None and waited >= judge.patience and not waits:
            _missing(
                judge, edition, client_id, copy, record,
                f"its link stayed open {waited:.1f} s after it was owed (patience "
                f"{judge.patience:g} s)",
                () if end is None else (end,),
            )  # fmt: skip
            judge.copy_outcomes[key] = "missing"
        else:
            judge.copy_outcomes[key] = (
                "session-ended" if end is not None
                else unknown("quota-full") if waits
                else unknown("capture-ended")
            )  # fmt: skip


def _read_otherwise(
    judge: JudgeState, edition: Edition, client_id: str, copy: Copy, waited: float | None
) -> bool:
    """Whether a copy sent to the session that looks like ``copy``, of another message
    (:func:`~.distribution_alike.alike`), may have been ``copy``'s, leaving that other
    message owed and not proven missing (neither by the order of 4.6 nor by the patience)."""
    if waited is not None and waited >= judge.patience:
        return False
    shown = alike(copy)
    return any(
        other.message.seq != copy.message.seq and alike(other) == shown
        and _later(judge, edition, client_id, other) is None
        for other in judge.sent.get((edition, client_id), ())
    )  # fmt: skip


def _replaced_elsewhere(
    judge: JudgeState, edition: Edition, copy: Copy, record: MessageRecord | None
) -> bool:
    """Whether a client of another edition changed the retained message of the copy's
    topic after this one was retained and before the copy was owed (the server keeps one,
    the models one each)."""
    since = -1.0 if record is None else record.owned.t
    owed = judge.owed_at.get((edition, copy.copy_id))
    until = judge.now if owed is None else owed.t
    return any(
        other is not edition and since <= t <= until
        for other, t in judge.retained_changes.get(copy.topic, ())
    )


def owed_at_end(judge: JudgeState) -> None:
    """Every session's copies still owed when the capture ends (:func:`judge_owed`)."""
    connected: dict[tuple[Edition, str], Link] = {}
    for each in judge.links.values():
        if each.connected and each.key is not None:
            connected[each.key] = each
    for edition, model in judge.models.items():
        for client_id, session in model.sessions.items():
            link = connected.get((edition, client_id))
            judge_owed(judge, link, edition, client_id, None, session.pending, session.optional)


def session_outcomes(
    judge: JudgeState, missing: set[Any], waiting: AbstractSet[CopyKey] = frozenset()
) -> None:
    """Each message's outcome in the ledger, from its copies': sent (``delivered``), the
    decisions of :func:`judge_owed` (or, without a capture, ``missing`` where
    :func:`~pubproof.judge.distribution_verdicts.judge_missing` found it), expired, left
    open (``waiting``: a QoS 1 or 2 copy behind a send quota used up, whatever copies
    came before it), or ended with its session."""
    for (edition, seq), entry in judge.ledger.messages.items():
        record = judge.messages.get((edition, seq))
        if record is None:
            continue
        sessions: dict[str, str] = {}
        for client_id in record.deliveries:
            key: CopyKey = (edition, seq, client_id)
            if key in waiting:
                sessions[client_id] = unknown("quota-full")
            elif client_id in record.seen or key in judge.sent_keys:
                sessions[client_id] = "delivered"
            elif client_id in record.uncertain:
                sessions[client_id] = unknown("subscription-changing")
            elif record.ambiguous:
                sessions[client_id] = unknown("ambiguous")
            elif client_id in record.expired:
                sessions[client_id] = "expired"
            elif key in missing:
                sessions[client_id] = "missing"
            else:
                sessions[client_id] = judge.copy_outcomes.get(key, "session-ended")
        for offer in record.shared:
            got = any(c in record.seen for c in offer.members)
            sessions[f"$share {offer.topic_filter}"] = (
                "delivered" if got else unknown("subscription-changing")
                if any(c in record.uncertain for c in offer.members) else "session-ended"
            )  # fmt: skip
        entry.sessions = sessions
        entry.outcome = outcome_of(
            sessions,
            unknown("other-edition") if _elsewhere(judge, record) else "no-subscriber",
        )


def _elsewhere(judge: JudgeState, record: MessageRecord) -> bool:
    """Whether a session of another edition's model has a subscription that matches the
    message (its copies are then not this model's to judge)."""
    topic = record.message.topic
    return any(
        subscription_matches(f, topic, edition, judge.readings)
        for edition, model in judge.models.items()
        if edition is not record.edition
        for session in model.sessions.values()
        for f in session.subscriptions
    )
