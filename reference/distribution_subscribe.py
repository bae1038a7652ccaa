"""SUBSCRIBE and UNSUBSCRIBE in the distribution core.

Rules / theory of operation
---------------------------
A SUBSCRIBE from a connected client is taken as a whole first: an empty one
[MQTT-3.8.3-3], a 5.0 Subscription Identifier of 0 (3.8.2.1.2), a topic filter that breaks
the topic rules (reading ``invalid-filter=close``: the error names the rule and the byte
offset, :mod:`.distribution_topics`) or No Local on a Shared Subscription [MQTT-3.8.3-4]
closes the connection instead of a SUBACK. Otherwise each filter is taken in turn, "as if
it had received a sequence of multiple SUBSCRIBE packets" [MQTT-3.8.4-4], and gives one
SUBACK code [MQTT-3.8.4-5], in order [MQTT-3.9.3-1]:

- an invalid filter under ``invalid-filter=refuse``: 0x80;
- a wildcard the server does not support: 3.1.1 0x80 [MQTT-3.8.3-2], 5.0 0xA2; 5.0 a
  Shared Subscription or an identifier it does not support: 0x9E, 0xA1;
- else the QoS granted: the lower of the one requested and the server's maximum. The
  subscription is stored with its options and identifier (5.0 3.8.2.1.2), replacing one
  with the same filter and keeping its place [MQTT-3.8.4-3]; a Shared Subscription's
  member joins its group. The retained messages the filter matches are owed at once
  (RETAIN 1, at the lower of their QoS and the QoS granted; 3.1 under reading
  ``retained-qos-31=as-published`` at their own): 3.x always, 5.0 by Retain Handling (0
  always, 1 for a new subscription only, 2 never), a Shared Subscription never.

An UNSUBSCRIBE with no filter or one that is not UTF-8 closes the connection
([MQTT-3.10.3-2], [MQTT-3.10.3-1]); otherwise each filter deletes the subscription with
the very same string [MQTT-3.10.4-1] (5.0: Reason Code 0x00, else 0x11), and the copies
already queued for it stay owed ("It MAY continue to deliver any existing messages
buffered for delivery to the Client").

:class:`Subscribing` is a base of :class:`pubproof.reference.distribution.DistributionCore`:
the state it reads and changes is the core's.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Final

from pubproof.model.editions import Edition
from pubproof.model.rules import RULES
from pubproof.reference.distribution_citations import Citations
from pubproof.reference.distribution_state import (
    MAX_SUBSCRIPTION_IDENTIFIER,
    Cause,
    Copy,
    FilterOutcome,
    Grant,
    Options,
    RetainHandling,
    ServerConfig,
    SessionState,
    SessionStatus,
    SubscribeOutcome,
    UnsubscribeOutcome,
    usage_error,
)
from pubproof.reference.distribution_subscriptions import Subscriptions
from pubproof.reference.distribution_topics import SHARE_PREFIX, TopicRules
from pubproof.reference.errors import InvalidTopic
from pubproof.reference.retained_store import RetainedStore

V50: Final = Edition.V50
CONNECTED: Final = SessionStatus.CONNECTED
RETAINED: Final = Cause.RETAINED
#: 3.1.1 "Failure"; 5.0 "Unspecified error"
FAILURE: Final = 0x80
WILDCARDS_NOT_SUPPORTED: Final = 0xA2
SHARED_NOT_SUPPORTED: Final = 0x9E
IDENTIFIERS_NOT_SUPPORTED: Final = 0xA1
#: MQTT 5.0 Table 3-9, Unsubscribe Reason Codes
UNSUB_SUCCESS: Final = 0x00
NO_SUBSCRIPTION_EXISTED: Final = 0x11
#: [MQTT-3.1.0-1] "the first Packet sent from the Client to the Server MUST be a CONNECT"
BEFORE_CONNECT: Final = "MQTT-3.1.0-1"
_usage = usage_error


class Subscribing:
    """The distribution core's SUBSCRIBE and UNSUBSCRIBE, on the core's state."""

    edition: Edition
    config: ServerConfig
    sessions: dict[str, SessionState]
    retained: RetainedStore
    _v50: bool
    _topics: TopicRules
    _cited: Citations
    _subs: Subscriptions
    _refuse_invalid: bool
    _retained_as_published: bool
    _copy_id: int
    _copy_deadlines: list[int]

    def _session(self, client_id: str, *, connected: bool = True) -> SessionState:
        session = self.sessions.get(client_id) if type(client_id) is str else None
        if session is None:
            raise _usage(f"no session for client {client_id!r}", BEFORE_CONNECT)
        if connected and session.status is not CONNECTED:
            raise _usage(f"client {client_id!r} is not connected", BEFORE_CONNECT)
        return session

    def subscribe(
        self,
        client_id: str,
        packet_id: int,
        requests: Sequence[tuple[str, Options]],
        *,
        subscription_identifier: int | None = None,
    ) -> SubscribeOutcome:
        """A SUBSCRIBE from a connected client: its (topic filter, options) pairs in order
        and (5.0) its Subscription Identifier."""
        session = self._session(client_id)
        cited = self._cited

        def closed(rule_id: str, error: InvalidTopic | None = None) -> SubscribeOutcome:
            return SubscribeOutcome(
                client_id=client_id,
                packet_id=packet_id,
                codes=(),
                filters=(),
                closed=rule_id,
                error=error,
            )

        pairs = self._requests(requests)
        if not pairs:
            # [MQTT-3.8.3-3] "The payload of a SUBSCRIBE packet MUST contain at least one
            # Topic Filter / QoS pair"
            return closed(cited.subscribe_not_empty)
        ident = subscription_identifier
        if ident is not None:
            if not self._v50:
                raise _usage(f"an MQTT {self.edition.value} SUBSCRIBE has no identifier")
            if type(ident) is not int or not 1 <= ident <= MAX_SUBSCRIPTION_IDENTIFIER:
                # 3.8.2.1.2: "It is a Protocol Error if the Subscription Identifier has a
                # value of 0"
                assert cited.identifier_range is not None
                return closed(cited.identifier_range)
        errors: list[InvalidTopic | None] = []
        for topic_filter, options in pairs:
            error = self._topics.filter_error(topic_filter)
            if error is not None and not self._refuse_invalid:
                # reading invalid-filter=close: a protocol violation (5.0: Malformed Packet)
                return closed(error.rule, error)
            shared = (
                self._v50 and type(topic_filter) is str and topic_filter.startswith(SHARE_PREFIX)
            )
            if options.no_local and shared:
                # [MQTT-3.8.3-4] "It is a Protocol Error to set the No Local bit to 1 on a
                # Shared Subscription"
                assert cited.no_local_shared is not None
                return closed(cited.no_local_shared)
            errors.append(error)
        outcomes = tuple(
            self._subscribe_one(session, topic_filter, options, ident, error)
            for (topic_filter, options), error in zip(pairs, errors, strict=True)
        )
        # [MQTT-3.8.4-1] a SUBACK for every SUBSCRIBE, [MQTT-3.8.4-2] with its packet
        # identifier, [MQTT-3.9.3-1] the codes in the order of the filters
        return SubscribeOutcome(
            client_id=client_id,
            packet_id=packet_id,
            codes=tuple(o.code for o in outcomes),
            filters=outcomes,
            rules=cited.suback,
        )

    def _requests(self, requests: Sequence[tuple[str, Options]]) -> list[tuple[str, Options]]:
        """The SUBSCRIBE's pairs, each with options of this edition."""
        try:
            pairs = [(topic_filter, options) for topic_filter, options in requests]
            for _, options in pairs:
                qos, no_local = options.qos, options.no_local
                rap, handling = options.retain_as_published, options.retain_handling
                if type(qos) is not int or not 0 <= qos <= 2 or handling not in (0, 1, 2):
                    raise _usage(f"options {options!r} are not a Requested QoS and options")
                if not self._v50 and (no_local or rap or handling):
                    raise _usage(f"MQTT {self.edition.value} has no such options")
        except (TypeError, ValueError, AttributeError) as exc:
            raise _usage(
                f"a SUBSCRIBE's requests are (topic filter, options) pairs: {exc}"
            ) from None
        return pairs

    def _grant(
        self, options: Options, matched: str, *, shared: bool, ident: int | None
    ) -> tuple[int, str | None]:
        """The SUBACK code for a valid filter and the rule of a refusal (None: granted)."""
        config = self.config
        if not config.wildcard_subscriptions and ("+" in matched or "#" in matched):
            # 3.1.1 [MQTT-3.8.3-2] "If it chooses not to support topic filters that contain
            # wildcard characters it MUST reject any Subscription request whose filter
            # contains them"; 5.0 0xA2 Wildcard Subscriptions not supported
            if self._v50:
                rule = RULES.distribution("dist50.suback.wildcards-not-supported")
                return WILDCARDS_NOT_SUPPORTED, rule.id_for(V50)
            rule = RULES.distribution("dist.subscribe.no-wildcard-support")
            return FAILURE, rule.id_for(self.edition)
        if self._v50 and shared and not config.shared_subscriptions:
            rule = RULES.distribution("dist50.suback.shared-not-supported")
            return SHARED_NOT_SUPPORTED, rule.id_for(V50)
        if self._v50 and ident is not None and not config.subscription_identifiers:
            rule = RULES.distribution("dist50.suback.identifiers-not-supported")
            return IDENTIFIERS_NOT_SUPPORTED, rule.id_for(V50)
        # [MQTT-3.8.4-5] "MUST either show the maximum QoS that was granted for that
        # Subscription or indicate that the subscription failed"
        return min(options.qos, config.maximum_qos), None

    def _subscribe_one(
        self,
        session: SessionState,
        topic_filter: str,
        options: Options,
        ident: int | None,
        error: InvalidTopic | None,
    ) -> FilterOutcome:
        per_filter = self._cited.per_filter
        if error is not None:  # reading invalid-filter=refuse
            return FilterOutcome(
                topic_filter=topic_filter, code=FAILURE, rule_ids=(*per_filter, error.rule)
            )
        share_name: str | None = None
        matched = topic_filter
        if self._v50 and topic_filter.startswith(SHARE_PREFIX):
            share_name, _, matched = topic_filter[len(SHARE_PREFIX) :].partition("/")
        code, refused = self._grant(options, matched, shared=share_name is not None, ident=ident)
        if refused is not None:
            return FilterOutcome(
                topic_filter=topic_filter, code=code, rule_ids=(*per_filter, refused)
            )
        client_id = session.client_id
        if share_name is not None:
            groups = self._subs.groups()
            group = groups.get((share_name, matched))
            old = group.members.get(client_id) if group is not None else None
        else:
            old = session.subscriptions.get(topic_filter)
        # 5.0 3.8.2.1.2: "If there is a Subscription Identifier, it is stored with the
        # subscription. If this property is not specified, then the absence of a
        # Subscription Identifier is stored with the subscription."
        grant = Grant(
            topic_filter=topic_filter,
            granted_qos=code,
            no_local=options.no_local,
            retain_as_published=options.retain_as_published,
            retain_handling=options.retain_handling,
            subscription_identifier=ident,
            share_name=share_name,
            order=old.order if old is not None else self._subs.next_order(),
        )
        if share_name is None:
            # [MQTT-3.8.4-3] "it MUST completely replace that existing Subscription with a
            # new Subscription" (it keeps its place: the flow of messages is not interrupted)
            session.subscriptions[topic_filter] = grant
        self._subs.add(client_id, grant)
        existed = old is not None
        rules = (*per_filter, *self._cited.identifier_stored)
        if existed:
            rules = (*rules, self._cited.replaced)
        copies: list[Copy] = []
        may_miss: list[int] = []
        if self._retained_owed(grant, existed):
            rules = (*rules, *self._cited.retained_sent)
            for message in self.retained.matching(matched):
                qos = message.publication.qos
                if qos > code and not self._retained_as_published:
                    qos = code  # [MQTT-3.8.4-6] the lower of the two
                self._copy_id += 1
                # [MQTT-3.3.1-8] (3.1.1) "it MUST set the RETAIN flag to 1 if a message is
                # sent as a result of a new subscription being made by a Client"
                copy = Copy(
                    self._copy_id,
                    client_id,
                    message,
                    qos,
                    True,
                    RETAINED,
                    grant.topic_filters,
                    grant.subscription_identifiers,
                )
                copies.append(copy)
                if self.retained.may_discard(message.publication.topic):
                    may_miss.append(copy.copy_id)
                if message.expires_at is not None:
                    session.expiring += 1
                    if self._v50:
                        heapq.heappush(self._copy_deadlines, message.expires_at)
            session.pending.extend(copies)
        return FilterOutcome(
            topic_filter=topic_filter,
            code=code,
            rule_ids=rules,
            replaced=existed,
            retained=tuple(copies),
            may_miss=tuple(may_miss),
        )

    def _retained_owed(self, grant: Grant, existed: bool) -> bool:
        """Whether a subscription just made is sent the retained messages it matches."""
        if grant.share_name is not None:
            return False  # 5.0 4.8.2 "retained messages are not sent" to a shared one
        if not self._v50:
            # 3.1.1 [MQTT-3.8.4-3] "Any existing retained messages matching the Topic
            # Filter MUST be re-sent"; [MQTT-3.3.1-6] sent to a new subscription
            return True
        if existed:
            # [MQTT-3.3.1-10] "If Retain Handling is set to 1 then if the subscription did
            # already exist, the server MUST NOT send a retained message"
            return grant.retain_handling == RetainHandling.SEND
        # [MQTT-3.3.1-11] "If Retain Handling is set to 2, the server MUST NOT send"
        return grant.retain_handling != RetainHandling.DONT_SEND

    def unsubscribe(
        self, client_id: str, packet_id: int, topic_filters: Sequence[str]
    ) -> UnsubscribeOutcome:
        """An UNSUBSCRIBE from a connected client."""
        session = self._session(client_id)
        if isinstance(topic_filters, str):
            raise _usage("an UNSUBSCRIBE's topic filters are a sequence of strings")
        try:
            filters = list(topic_filters)
        except TypeError as exc:
            raise _usage(f"an UNSUBSCRIBE's topic filters are a sequence: {exc}") from None
        refused = self._cited.unsubscribe_not_empty if not filters else None
        for topic_filter in filters:
            if type(topic_filter) is not str or any(
                "\ud800" <= c <= "\udfff" for c in topic_filter
            ):
                # [MQTT-3.10.3-1] "The Topic Filters in an UNSUBSCRIBE packet MUST be UTF-8
                # encoded strings"
                refused = self._cited.unsubscribe_utf8
                break
        if refused is not None:
            return UnsubscribeOutcome(
                client_id=client_id,
                packet_id=packet_id,
                codes=(),
                deleted=(),
                buffered=(),
                rules=(),
                closed=refused,
            )
        codes: list[int] = []
        deleted: list[str] = []
        for topic_filter in filters:  # [MQTT-3.10.4-6] one after another
            # [MQTT-3.10.4-1] "compared character-by-character with the current set of
            # Topic Filters held by the Server for the Client. If any filter matches exactly
            # then its owning Subscription is deleted"
            if topic_filter in session.subscriptions:
                del session.subscriptions[topic_filter]
                found = self._subs.remove(client_id, topic_filter) is not None
            else:  # a Shared Subscription: "this Session is detached" from it
                found = (
                    self._v50
                    and topic_filter.startswith(SHARE_PREFIX)
                    and self._subs.remove(client_id, topic_filter) is not None
                )
            if found:
                deleted.append(topic_filter)
            codes.append(UNSUB_SUCCESS if found else NO_SUBSCRIPTION_EXISTED)
        # [MQTT-3.10.4-2] nothing new is added for them; [MQTT-3.10.4-3] what is under way
        # completes; "It MAY continue to deliver any existing messages buffered": it does
        gone = set(deleted)
        buffered = tuple(c for c in session.pending if gone.issuperset(c.topic_filters))
        return UnsubscribeOutcome(
            client_id=client_id,
            packet_id=packet_id,
            codes=tuple(codes) if self._v50 else (),
            deleted=tuple(deleted),
            buffered=buffered,
            rules=self._cited.unsuback,
        )
