"""The rule ids the distribution core's outcomes cite, looked up once per edition.

Rules / theory of operation
---------------------------
Every outcome of :class:`pubproof.reference.distribution.DistributionCore` names the rules
that decided it, by their ids in the registry (:data:`pubproof.model.rules.RULES`: the
distribution rules by key, the flow rules by key, the wire rules), exactly as the
distribution model cites them: a rule's id in the edition, or in MQTT 3.1, where the 3.1
text does not state it and 3.1.1's rule applies, its 3.1.1 id. The ids are looked up when
the core is made, so that no event pays for a look-up; this module holds no logic of the
model, only which rule each outcome names.
"""

from __future__ import annotations

from dataclasses import dataclass

from pubproof.model.editions import Edition
from pubproof.model.rules import RULES, Rule

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50


def cite(key: str, edition: Edition) -> str:
    """The id of the distribution or flow rule ``key`` in ``edition`` (3.1: the 3.1.1 id
    where 3.1 has none)."""
    found: Rule = RULES.flow(key) if key.startswith("flow") else RULES.distribution(key)
    ids = found.ids
    return ids[edition] if edition in ids else ids[V311]


def _all(edition: Edition, *keys: str) -> tuple[str, ...]:
    return tuple(cite(k, edition) for k in keys)


@dataclass(frozen=True, slots=True, kw_only=True)
class Citations:
    """The ids of one edition (build with :meth:`of`)."""

    # CONNECT: a new or discarded session, a resumed one
    clean: str
    resume_or_create: str  # 3.x: resume (creating if none); 5.0: resume
    create: str  # 5.0: [MQTT-3.1.2-6]
    resumed: tuple[str, ...]  # kept while away, re-sent by the flows
    shared_qos2_same_client: str | None  # 5.0 [MQTT-4.8.2-4]
    # the connection closes
    session_ends: tuple[str, ...]
    session_kept: tuple[str, ...]
    # SUBSCRIBE
    subscribe_not_empty: str
    identifier_range: str | None  # 5.0 only
    no_local_shared: str | None  # 5.0 only
    per_filter: tuple[str, ...]  # each filter in turn, one code each
    identifier_stored: tuple[str, ...]  # 5.0
    replaced: str
    retained_sent: tuple[str, ...]  # retained messages sent for a subscription
    suback: tuple[str, ...]
    # UNSUBSCRIBE
    unsubscribe_not_empty: str
    unsubscribe_utf8: str
    unsuback: tuple[str, ...]
    # PUBLISH
    forwarded: str  # to every matching session
    # completion, time
    no_resend_after_error: str | None  # 5.0
    shared_error_ack: str | None  # 5.0
    expired_not_sent: str | None  # 5.0
    session_expired: str | None  # 5.0
    shared_qos2_no_other: str | None  # 5.0

    @classmethod
    def of(cls, edition: Edition) -> Citations:
        v50 = edition is V50
        if v50:
            clean = cite("dist50.session.clean-start", edition)
            resumed = _all(edition, "dist50.session.keep-after-close", "flow50.resend.on-reconnect")
            ends = _all(
                edition, "dist50.session.keep-after-close", "dist50.retain.not-session-state"
            )
            kept = _all(edition, "dist50.session.keep-after-close")
            suback: tuple[str, ...] = ("dist50.suback.granted-or-failure", "dist50.suback.codes")
            retained_sent: tuple[str, ...] = (
                "dist50.retain.flag-on-subscribe",
                "dist.forward.min-qos",
                "dist50.retain.qos0",
            )
        else:
            # 3.1: "Clean session flag ... If set (1), the server must discard any previously
            # maintained information about the client"; 3.1.1 [MQTT-3.1.2-6]
            clean = cite(
                "dist.session.clean-31" if edition is V31 else "flow.session.clean", edition
            )
            resumed = _all(edition, "dist.session.queue-offline", "flow.resend.on-reconnect")
            ends = (clean, cite("dist.retain.not-session-state", edition))
            kept = _all(edition, "dist.session.queue-offline")
            suback = ("dist.suback.codes",)
            retained_sent = (
                ("dist.retain.on-subscribe-31", "dist.forward.min-qos-31", "dist.retain.store-31")
                if edition is V31
                else (
                    "dist.retain.flag-new-subscription",
                    "dist.forward.min-qos",
                    "dist.retain.qos0",
                )
            )
        only50 = (lambda key: cite(key, edition)) if v50 else (lambda key: None)
        return cls(
            clean=clean,
            resume_or_create=cite(
                "dist50.session.resume" if v50 else "flow.session.resume", edition
            ),
            create=cite("dist50.session.create" if v50 else "flow.session.resume", edition),
            resumed=resumed,
            shared_qos2_same_client=only50("dist50.shared.qos2-same-client"),
            session_ends=ends,
            session_kept=kept,
            subscribe_not_empty=cite("dist.subscribe.not-empty", edition),
            identifier_range=only50("dist50.subscribe.identifier-range"),
            no_local_shared=only50("dist50.subscribe.no-local-shared"),
            per_filter=_all(edition, "dist.subscribe.sequence", "dist.suback.code-per-filter"),
            identifier_stored=_all(edition, "dist50.subscribe.identifier-stored") if v50 else (),
            replaced=cite("dist50.subscribe.replace" if v50 else "dist.subscribe.replace", edition),
            retained_sent=_all(edition, *retained_sent),
            suback=_all(
                edition,
                "dist.suback.sent",
                "dist.suback.packet-id",
                "dist.ack.packet-id",
                "dist.suback.order",
                *suback,
            ),
            unsubscribe_not_empty=cite("dist.unsubscribe.not-empty", edition),
            unsubscribe_utf8=cite("dist.unsubscribe.utf8", edition),
            unsuback=_all(
                edition,
                "dist.unsubscribe.delete",
                "dist.unsubscribe.stop-adding",
                "dist.unsubscribe.complete-started",
                "dist.unsuback.sent",
                "dist.ack.packet-id",
                "dist.unsuback.even-if-none",
                "dist.unsubscribe.sequence",
                *(("dist50.unsuback.order", "dist50.unsuback.codes") if v50 else ()),
            ),
            forwarded=cite(
                "dist.forward.subscribers-31"
                if edition is V31
                else "dist.forward.matching-sessions",
                edition,
            ),
            no_resend_after_error=only50("flow50.resend.not-after-error"),
            shared_error_ack=only50("dist50.shared.error-ack"),
            expired_not_sent=only50("dist50.forward.expired-deleted"),
            session_expired=only50("flow50.session.expire"),
            shared_qos2_no_other=only50("dist50.shared.qos2-no-other"),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class RetainedCitations:
    """The ids of what the retained store does, in one edition under its readings."""

    store: tuple[str, ...]  # a retained message with a payload is stored
    store_qos0: tuple[str, ...]  # the same, of QoS 0
    empty: tuple[str, ...]  # a zero-byte retained message deletes
    untouched: tuple[str, ...]  # RETAIN 0 leaves the store as it is
    expires: tuple[str, ...]  # 5.0: a retained message expires

    @classmethod
    def of(cls, edition: Edition, readings: dict[str, str]) -> RetainedCitations:
        if edition is V31:
            store = _all(edition, "dist.retain.store-31")
            may_delete = readings.get("retained-empty-31") == "may-delete"
            empty = _all(
                edition,
                "dist.retain.empty-may-delete-31" if may_delete else "dist.retain.empty-deletes",
            )
            store_qos0 = store
        else:
            store = _all(edition, "dist.retain.store")
            empty = _all(edition, "dist.retain.empty-deletes", "dist.retain.empty-not-stored")
            # 3.1.1 [MQTT-3.3.1-7]: a QoS 0 message replaces the retained one too
            store_qos0 = (*store, cite("dist.retain.qos0", edition)) if edition is V311 else store
        return cls(
            store=store,
            store_qos0=store_qos0,
            empty=empty,
            untouched=_all(edition, "dist.retain.flag0-untouched"),
            expires=_all(edition, "dist50.retain.expires") if edition is V50 else (),
        )
