"""The distribution judge: what a server did with the messages it took ownership of, judged
across its links by the distribution model.

Theory of operation
-------------------
The judge is fed the events of several links of one server, in time order
(:mod:`.distribution_events`), and drives one :class:`~pubproof.model.distribution.
DistributionModel` per edition with what they show: a CONNACK that accepts a CONNECT
connects the client's session (with its clean flag and, in 5.0, its Session Expiry
Interval), a link that closes disconnects it, a SUBACK applies the SUBSCRIBE it answers
(with the QoS the server granted, which it may lower), an UNSUBACK its UNSUBSCRIBE, and a
PUBLISH from a client becomes a message when the server takes ownership of it: QoS 0 on
receipt, QoS 1 when it sends a PUBACK that accepts it, QoS 2 when it sends the PUBREC
(:data:`pubproof.model.messages.OWNERSHIP`). The model then says which copies each session
is owed. The clock is the events' time, in whole milliseconds (Message Expiry).

Each PUBLISH the server sends a client is matched to a copy the model owes that client's
session (same topic name, with the link's Topic Alias resolved, and payload; the first
owed), which the model then counts as sent, and its acknowledgement completes it. What is
judged:

- per copy: its 5.0 properties are the message's, unchanged [MQTT-3.3.2-4] [MQTT-3.3.2-15]
  [MQTT-3.3.2-16] [MQTT-3.3.2-17] [MQTT-3.3.2-18] [MQTT-3.3.2-20], its Message Expiry
  Interval reduced by the time the message waited [MQTT-3.3.2-6], no copy sent after it
  expired [MQTT-3.3.2-5]; a retained message sent for a new subscription has RETAIN 1 and
  the QoS the model gives [MQTT-3.3.1-8] [MQTT-3.8.4-6]; a copy of nothing any client
  published to a subscribed topic is a finding where the judge sees every link from the
  start (``complete``);
- per message and session, when the judgement ends (:meth:`DistributionJudge.finish`): the
  copies seen are a set the text allows (:meth:`pubproof.model.forwarding.Delivery.judge`:
  one copy at the maximum QoS of the matching subscriptions, or one per subscription,
  QoS no higher than granted, RETAIN as forwarded, the Subscription Identifiers); a
  Shared Subscription's message went to one member [MQTT-4.8.2-3]; a copy the model still
  owes a connected session is ``missing``;
- per session, the order of the copies sent [MQTT-4.6.0-6] (:func:`pubproof.model.ordering.
  ordering_problems`).

What the links cannot show is never a finding. A subscription (SUBSCRIBE to SUBACK) or a
connection (CONNECT to CONNACK) that changed while a message was in flight (received, not
yet owned) leaves that message's copies to that session open either way: they are not
judged for presence or number. Every finding names the rule, the role ``server``, the
source ``distribution`` and its evidence: the events of the links involved.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any, cast

from pubproof.judge.distribution_events import C2S, S2C, Event
from pubproof.judge.distribution_records import (
    EXPIRY_SLACK,
    Change,
    Flows,
    Link,
    MessageRecord,
    Report,
)
from pubproof.judge.distribution_verdicts import (
    judge_deliveries,
    judge_missing,
    judge_properties,
    judge_retained_copy,
)
from pubproof.judge.findings import VIOLATION, Finding
from pubproof.model import distribution_rules as D
from pubproof.model import distribution_rules50 as D50
from pubproof.model.distribution import DistributionError, DistributionModel
from pubproof.model.editions import Edition
from pubproof.model.forwarding import Shape, subscription_copy
from pubproof.model.messages import Cause, Copy, Message, Properties, Publication
from pubproof.model.ordering import ordering_problems
from pubproof.model.subscriptions import RetainHandling, ServerConfig, SubscriptionOptions
from pubproof.model.topic_filters import subscription_matches
from pubproof.model.trace import PublishProps

V50 = Edition.V50


class DistributionJudge:
    """One server's distribution, judged across its links.

    ``complete``: the judge sees every link of the server from the server's start (a probe,
    ``serve``, ``explore``), so a copy of a message no link showed is a finding; a
    capture, which may start late and miss links, passes False."""

    def __init__(
        self,
        readings: Mapping[str, str] | None = None,
        *,
        config: ServerConfig | None = None,
        complete: bool = True,
        passes: bool = False,
    ) -> None:
        self.readings = dict(readings or {})
        self.report = Report(passes=passes)
        self.config = config or ServerConfig()
        self.complete = complete
        self.models: dict[Edition, DistributionModel] = {}
        self.links: dict[str, Link] = {}
        self.messages: dict[tuple[Edition, int], MessageRecord] = {}
        self.flows: dict[tuple[Edition, str], Flows] = {}
        #: retained copies the server may leave out (a QoS 0 retained message it MAY discard,
        #: [MQTT-3.3.1-7]): (edition, copy id)
        self.may_miss: set[tuple[Edition, int]] = set()
        #: the messages the retained store held and no longer holds, with the rules of the
        #: change that ended each: (edition, seq) -> rule ids
        self.displaced: dict[tuple[Edition, int], tuple[str, ...]] = {}
        #: retained messages a new subscription matched but is not sent (5.0 Retain
        #: Handling 1 on an existing subscription, 2): (edition, client, seq) -> rule ids
        self.withheld: dict[tuple[Edition, str, int], tuple[str, ...]] = {}
        self.sent: dict[tuple[Edition, str], list[Copy]] = {}
        self.changes: list[Change] = []
        self.now = 0.0
        self.fed = 0  # events fed so far

    # -- the model of each edition, and its clock -------------------------------------------

    def _model(self, edition: Edition) -> DistributionModel:
        model = self.models.get(edition)
        if model is None:
            model = self.models[edition] = DistributionModel(edition, self.readings, self.config)
        return model

    def _advance(self, t: float) -> None:
        self.now = max(self.now, t)
        for edition, model in self.models.items():
            moved = round(self.now * 1000) - model.now
            if moved > 0:
                for copy in model.advance(moved).expired:
                    record = self.messages.get((edition, copy.message.seq))
                    if record is not None:
                        record.expired.add(copy.client_id)

    # -- feeding ---------------------------------------------------------------------------

    def feed(self, event: Event) -> None:
        """One event, in time order."""
        self.fed += 1
        event = dataclasses.replace(event, order=self.fed)
        self._advance(event.t)
        link = self.links.setdefault(event.conn, Link(event.conn))
        if event.packet is None:
            self._closed(link, event)
            return
        handler = _HANDLERS.get((event.direction, event.type or ""))
        if handler is not None:
            handler(self, link, event)

    def feed_all(self, events: Iterable[Event]) -> list[Finding]:
        """Every event, then :meth:`finish`."""
        for event in events:
            self.feed(event)
        return self.finish()

    def _connect(self, link: Link, event: Event) -> None:
        packet = event.packet or {}
        link.client_id = str(packet.get("client_id", ""))
        level = packet.get("level")
        link.edition = {3: Edition.V31, 4: Edition.V311, 5: V50}.get(int(level or 4))
        link.clean = bool(packet.get("clean_start", packet.get("clean_session", True)))
        props = packet.get("properties") or {}
        link.session_expiry = int(props.get("session_expiry_interval", 0))
        limit = props.get("maximum_packet_size")
        link.maximum_packet_size = None if limit is None else int(limit)
        link.aliases = {C2S: {}, S2C: {}}
        if link.client_id:
            self.changes.append(Change(client_id=link.client_id, since=event.order))

    def _connack(self, link: Link, event: Event) -> None:
        packet = event.packet or {}
        code = int(packet.get("reason_code", packet.get("return_code", 0)))
        self._settle(link.client_id, event.order)
        if code != 0 or link.client_id is None or link.edition is None or link.connected:
            return
        model = self._model(link.edition)
        try:
            model.connect(
                link.client_id, clean=link.clean,
                session_expiry_interval=link.session_expiry if link.edition is V50 else 0,
            )  # fmt: skip
        except DistributionError:
            return
        link.connected = True
        if link.clean:  # a new session: nothing of the old one is under way
            self.flows.pop((link.edition, link.client_id), None)
        # another link of the same client was taken over [MQTT-3.1.4-2]
        for other in self.links.values():
            if other is not link and other.client_id == link.client_id and other.connected:
                other.connected = False

    def _closed(self, link: Link, event: Event) -> None:
        if not link.connected or link.client_id is None or link.edition is None:
            return
        # a copy still owed when a link closes may have been cut off by the close; a
        # session that outlives the link keeps it for the next one (the model's queue)
        link.connected = False
        with contextlib.suppress(DistributionError):
            self._model(link.edition).disconnect(link.client_id)

    def _disconnect(self, link: Link, event: Event) -> None:
        packet = event.packet or {}
        expiry = (packet.get("properties") or {}).get("session_expiry_interval")
        if not link.connected or link.client_id is None or link.edition is None:
            return
        link.connected = False
        with contextlib.suppress(DistributionError):
            self._model(link.edition).disconnect(
                link.client_id, session_expiry_interval=None if expiry is None else int(expiry)
            )

    # -- subscriptions -----------------------------------------------------------------------

    def _subscribe(self, link: Link, event: Event) -> None:
        packet = event.packet or {}
        link.subscribing[int(packet.get("packet_id", 0))] = event
        if link.client_id:
            self.changes.append(Change(client_id=link.client_id, since=event.order))

    def _suback(self, link: Link, event: Event) -> None:
        packet = event.packet or {}
        asked = link.subscribing.pop(int(packet.get("packet_id", 0)), None)
        self._settle(link.client_id, event.order)
        if asked is None or not link.connected or link.client_id is None or link.edition is None:
            return
        request = asked.packet or {}
        codes = packet.get("reason_codes", packet.get("granted", []))
        wanted = list(request.get("subscriptions", []))
        requests: list[tuple[str, SubscriptionOptions]] = []
        for item, code in zip(wanted, codes, strict=False):
            if not isinstance(code, int) or code > 2:
                continue  # refused: no subscription (its code is the SUBACK judge's)
            requests.append((
                str(item["filter"]),
                SubscriptionOptions(
                    qos=min(code, int(item.get("qos", 0))),
                    no_local=bool(item.get("no_local", False)),
                    retain_as_published=bool(item.get("retain_as_published", False)),
                    retain_handling=RetainHandling(int(item.get("retain_handling", 0))),
                ),
            ))  # fmt: skip
        if not requests:
            return
        ident = request.get("subscription_identifier")
        try:
            outcome = self._model(link.edition).subscribe(
                link.client_id, int(packet.get("packet_id", 0)), requests,
                subscription_identifier=int(ident) if ident else None,
            )  # fmt: skip
        except DistributionError:
            return
        model = self._model(link.edition)
        for each in outcome.filters:
            self.may_miss.update((link.edition, copy_id) for copy_id in each.may_miss)
            if each.code > 2 or each.retained:
                continue
            for message in model.retained.matching(each.topic_filter):
                # a retained message this subscription is not sent (Retain Handling)
                key = (link.edition, link.client_id, message.seq)
                self.withheld[key] = each.rule_ids

    def _unsubscribe(self, link: Link, event: Event) -> None:
        packet = event.packet or {}
        link.unsubscribing[int(packet.get("packet_id", 0))] = event
        if link.client_id:
            self.changes.append(Change(client_id=link.client_id, since=event.order))

    def _unsuback(self, link: Link, event: Event) -> None:
        packet = event.packet or {}
        asked = link.unsubscribing.pop(int(packet.get("packet_id", 0)), None)
        self._settle(link.client_id, event.order)
        if asked is None or not link.connected or link.client_id is None or link.edition is None:
            return
        filters = [str(f) for f in (asked.packet or {}).get("filters", [])]
        try:
            self._model(link.edition).unsubscribe(
                link.client_id, int(packet.get("packet_id", 0)), filters
            )
        except DistributionError:
            return

    def _settle(self, client_id: str | None, order: int) -> None:
        """The change a client's link asked for has been answered at ``t``."""
        for change in self.changes:
            if change.client_id == client_id and change.until is None:
                change.until = order

    # -- publications in ---------------------------------------------------------------------

    def _topic(self, link: Link, direction: str, packet: Mapping[str, Any]) -> str | None:
        """The topic name of a PUBLISH on ``link``, its Topic Alias resolved through the
        link's map of that direction (5.0: each receiver keeps its own, 3.3.2.3.4)."""
        topic = str(packet.get("topic") or "")
        alias = (packet.get("properties") or {}).get("topic_alias")
        if alias is None:
            return topic or None
        aliases = link.aliases[direction]
        if topic:
            aliases[int(alias)] = topic
            return topic
        return aliases.get(int(alias))

    def _session_flows(self, link: Link) -> Flows:
        key = link.key
        assert key is not None
        return self.flows.setdefault(key, Flows())

    def _publish_in(self, link: Link, event: Event) -> None:
        packet = event.packet or {}
        if not link.connected or link.key is None:
            return
        topic = self._topic(link, C2S, packet)
        if topic is None:
            return  # an alias with no mapping: the link judge's
        qos = int(packet.get("qos", 0))
        resolved = dataclasses.replace(event, packet={**packet, "topic": topic})
        if qos == 0:
            self._own(link, resolved, resolved)
            return
        flows = self._session_flows(link)
        packet_id = int(packet.get("packet_id") or 0)
        if qos == 2 and packet_id in flows.released:
            return  # [MQTT-4.3.3-2] the same message until its PUBREL: no second one
        waiting = flows.inbound.get(packet_id)
        if waiting is not None:
            flows.inbound[packet_id] = (waiting[0], waiting[1] + 1)  # sent again, not owned
            return
        flows.inbound[packet_id] = (resolved, 0)

    def _ack_in(self, link: Link, event: Event) -> None:
        """A PUBACK or PUBREC the server sends: it takes ownership (unless 5.0's Reason
        Code refuses the message: 0x80 or more)."""
        packet = event.packet or {}
        if link.key is None:
            return
        flows = self._session_flows(link)
        packet_id = int(packet.get("packet_id") or 0)
        waiting = flows.inbound.get(packet_id)
        if waiting is None or waiting[0].packet is None:
            return
        received, resent = waiting
        qos = int((received.packet or {}).get("qos", 0))
        if event.type != ("PUBACK" if qos == 1 else "PUBREC"):
            return
        del flows.inbound[packet_id]
        if int(packet.get("reason_code", 0)) >= 0x80:
            return  # refused: the server never took it
        seq = self._own(link, received, event, resent=resent if qos == 1 else 0)
        if qos == 2 and seq is not None:
            flows.released[packet_id] = seq
            self.messages[link.edition, seq].released = False  # type: ignore[index]

    def _pubrel_in(self, link: Link, event: Event) -> None:
        """The publisher's PUBREL: a PUBLISH with that packet identifier is a new message
        from now on."""
        if link.key is not None:
            packet_id = int((event.packet or {}).get("packet_id") or 0)
            seq = self._session_flows(link).released.pop(packet_id, None)
            record = None if seq is None else self.messages.get((link.key[0], seq))
            if record is not None:
                record.released = True

    def _own(
        self, link: Link, received: Event, owned: Event, *, resent: int = 0
    ) -> int | None:
        """The server took ownership of a message: the model's outcome; its ``seq``."""
        assert link.edition is not None and link.client_id is not None
        packet = received.packet or {}
        model = self._model(link.edition)
        try:
            publication = Publication(
                publisher=link.client_id,
                topic=str(packet["topic"]),
                payload=bytes.fromhex(str(packet.get("payload_hex", ""))),
                qos=int(packet.get("qos", 0)),
                retain=bool(packet.get("retain", False)),
                properties=Properties.from_p(cast(PublishProps, packet.get("properties") or {})),
            )
            outcome = model.publish(publication)
        except (DistributionError, ValueError):
            return None  # a topic name or property the wire judges reject
        message = outcome.message
        record = MessageRecord(
            message=message, edition=link.edition, received=received, owned=owned,
            deliveries={d.client_id: d for d in outcome.deliveries}, shared=outcome.shared,
            resent=resent,
        )  # fmt: skip
        kept = outcome.retained
        if kept is not None and kept.before is not None and kept.after is not kept.before:
            # the retained message this one replaced or deleted: never sent for a new
            # subscription again
            self.displaced[link.edition, kept.before.seq] = kept.rule_ids
        for session in model.sessions.values():
            if session.client_id in record.deliveries:
                continue
            excluded = self._excluded(message, session.client_id, session, link.edition)
            if excluded is not None:
                record.excluded[session.client_id] = excluded
        for change in self.changes:
            # a subscription or connection that changed while the message was in flight
            if change.since <= owned.order and (
                change.until is None or change.until >= received.order
            ):
                record.uncertain.add(change.client_id)
        self.messages[link.edition, message.seq] = record
        return message.seq

    # -- copies out ----------------------------------------------------------------------------

    def _publish_out(self, link: Link, event: Event) -> None:
        packet = event.packet or {}
        if link.edition is None or link.client_id is None:
            return
        topic = self._topic(link, S2C, packet)
        if topic is None:
            return
        packet_id = packet.get("packet_id")
        flows = self._session_flows(link)
        if packet_id is not None and int(packet_id) in flows.outbound:
            return  # a re-send of a copy under way (its DUP is the flows' to judge)
        model = self._model(link.edition)
        session = model.sessions.get(link.client_id)
        payload = str(packet.get("payload_hex", ""))
        pool = () if session is None else (*session.pending, *session.optional)
        owed = next((c for c in pool if _same(c.message, topic, payload)), None)
        if owed is None and self._forwarded_early(link.edition, topic, payload, event):
            pool = () if session is None else (*session.pending, *session.optional)
            owed = next((c for c in pool if _same(c.message, topic, payload)), None)
        if owed is None:
            self._unowed(link, event, topic, payload)
            return
        try:
            copy, expiry = model.send(link.client_id, owed.copy_id)
        except DistributionError:
            return
        if packet_id is not None and copy.qos > 0:
            flows.outbound[int(packet_id)] = copy.copy_id
        self.sent.setdefault((link.edition, link.client_id), []).append(copy)
        record = self.messages.get((link.edition, copy.message.seq))
        shape = Shape.from_p(packet)  # type: ignore[arg-type]
        if record is not None and copy.cause is Cause.LIVE:
            record.seen.setdefault(link.client_id, []).append((shape, event))
        if copy.cause is Cause.RETAINED:
            judge_retained_copy(self.report, link.edition, copy, shape, event, record)
        if link.edition is V50:
            judge_properties(self.report, copy, packet, expiry, event, record)

    def _forwarded_early(self, edition: Edition, topic: str, payload: str, event: Event) -> bool:
        """A copy of a message the server has not acknowledged yet: it took ownership no
        later than now (a server may forward before its PUBACK or PUBREC goes out); the
        message becomes the model's at this event."""
        for (flows_edition, client_id), flows in self.flows.items():
            if flows_edition is not edition:
                continue
            for packet_id, (received, resent) in list(flows.inbound.items()):
                packet = received.packet or {}
                if (packet.get("topic"), packet.get("payload_hex")) != (topic, payload):
                    continue
                publisher = next(
                    (k for k in self.links.values()
                     if k.key == (edition, client_id) and k.conn == received.conn), None,
                )  # fmt: skip
                if publisher is None:
                    continue
                del flows.inbound[packet_id]
                qos = int(packet.get("qos", 0))
                seq = self._own(publisher, received, event, resent=resent if qos == 1 else 0)
                if qos == 2 and seq is not None:
                    flows.released[packet_id] = seq
                    self.messages[edition, seq].released = False
                return seq is not None
        return False

    def _unowed(self, link: Link, event: Event, topic: str, payload: str) -> None:
        """A PUBLISH to a client that the model owes it no copy of: another copy of a message
        it was owed (for the delivery's judgement), a copy sent after its message expired, a
        copy its subscriptions exclude (No Local), or a copy of nothing that was published."""
        assert link.edition is not None and link.client_id is not None
        packet = event.packet or {}
        shape = Shape.from_p(packet)  # type: ignore[arg-type]
        model = self._model(link.edition)
        session = model.sessions.get(link.client_id)
        for record in reversed(list(self.messages.values())):
            if record.edition is not link.edition or not _same(record.message, topic, payload):
                continue
            expires = record.message.expires_at
            if expires is not None and event.t * 1000 > expires + EXPIRY_SLACK * 1000:
                # [MQTT-3.3.2-5] "If the Message Expiry Interval has passed and the Server has
                # not managed to start onward delivery to a matching subscriber, then it MUST
                # delete the copy of the message for that subscriber"
                self.report.found(
                    VIOLATION, D50.EXPIRED_NOT_SENT, link.edition,
                    f"{link.client_id}: a copy of message {record.message.seq} on {topic!r} "
                    "was sent after its Message Expiry Interval had passed",
                    (record.received, record.owned, event),
                )  # fmt: skip
                return
            if link.client_id in record.deliveries:
                record.seen.setdefault(link.client_id, []).append((shape, event))
                return
            if link.client_id in record.uncertain:
                return  # its subscriptions changed while the message was in flight
            kept = self.withheld.get((link.edition, link.client_id, record.message.seq))
            if shape.retain and kept:
                self.report.found(
                    VIOLATION, None, link.edition,
                    f"{link.client_id}: got the retained message {record.message.seq} on "
                    f"{topic!r}, which its subscription's Retain Handling withholds",
                    (record.received, event),
                    rule_ids=tuple(i for i in kept if "3.3.1" in i) or kept,
                )  # fmt: skip
                return
            gone = self.displaced.get((link.edition, record.message.seq))
            if shape.retain and gone:
                self.report.found(
                    VIOLATION, None, link.edition,
                    f"{link.client_id}: got message {record.message.seq} on {topic!r} as the "
                    "retained message, which a later message had replaced or deleted",
                    (record.received, record.owned, event),
                    rule_ids=gone,
                )  # fmt: skip
                return
            excluded = self._excluded(record.message, link.client_id, session, link.edition)
            if excluded is not None:
                self.report.found(
                    VIOLATION, None, link.edition,
                    f"{link.client_id}: got a copy of message {record.message.seq} on "
                    f"{topic!r}, which {excluded[1]}",
                    (record.received, record.owned, event),
                    rule_id=excluded[0],
                )  # fmt: skip
            elif self.complete and not shape.retain:
                # a live copy to a session no subscription of which matched when the server
                # took the message: "it MUST add the message to the Session state of every
                # Client that has a matching Subscription" [MQTT-4.5.0-1], and only those
                subscribed = self._subscribed(link, topic)
                self.report.found(
                    VIOLATION, D.TO_MATCHING_SESSIONS if subscribed else D.TOPIC_MATCHES_FILTER,
                    link.edition,
                    f"{link.client_id}: got a copy of message {record.message.seq} on "
                    f"{topic!r}, though "
                    + ("it subscribed only after the server took the message" if subscribed
                       else "none of its subscriptions matches it"),
                    (record.received, record.owned, event),
                )  # fmt: skip
            return
        if self.complete and not self._subscribed(link, topic):
            self.report.found(
                VIOLATION, D.TOPIC_MATCHES_FILTER, link.edition,
                f"{link.client_id}: a PUBLISH on {topic!r}, which matches none of its "
                "subscriptions and no client published",
                (event,),
            )  # fmt: skip

    def _subscribed(self, link: Link, topic: str) -> bool:
        """Whether a subscription of ``link``'s session now matches ``topic``."""
        assert link.edition is not None and link.client_id is not None
        session = self._model(link.edition).sessions.get(link.client_id)
        return session is not None and any(
            subscription_matches(f, topic, link.edition, self.readings)
            for f in session.subscriptions
        )

    def _excluded(
        self, message: Message, client_id: str, session: Any, edition: Edition
    ) -> tuple[str, str] | None:
        """Why the model gave a session with a matching subscription no copy of ``message``
        (the rule of the outcome its walk ended at, e.g. No Local [MQTT-3.8.3-3]), or None
        when none of its subscriptions matches."""
        if session is None:
            return None
        for subscription in session.subscriptions.values():
            found, trail = subscription_copy(
                message, client_id, subscription, edition, self.readings, other_member=True
            )
            if found is None and trail and trail[-1].rule_ids:
                why = f"its subscription {subscription.topic_filter!r} excludes ({trail[-1].key})"
                return trail[-1].rule_ids[0], why
        return None

    def _ack_out(self, link: Link, event: Event) -> None:
        """The client acknowledges a copy (PUBACK, PUBCOMP; 5.0 a PUBREC with an error
        Reason Code ends the flow too)."""
        packet = event.packet or {}
        packet_id = int(packet.get("packet_id") or 0)
        if link.edition is None or link.client_id is None:
            return
        flows = self._session_flows(link)
        copy_id = flows.outbound.get(packet_id)
        if copy_id is None:
            return
        code = int(packet.get("reason_code", 0))
        if event.type == "PUBREC" and code < 0x80:
            return  # the QoS 2 flow goes on to PUBCOMP
        del flows.outbound[packet_id]
        with contextlib.suppress(DistributionError):
            self._model(link.edition).complete(link.client_id, copy_id, code)

    # -- the end -----------------------------------------------------------------------------

    def finish(self) -> list[Finding]:
        """Judge every message's copies, every session's order and what is still owed; the
        findings."""
        report = self.report
        for record in self.messages.values():
            judge_deliveries(report, record)
        for (edition, client_id), copies in self.sent.items():
            for problem in ordering_problems(copies, edition, self.readings, self.config):
                report.found(VIOLATION, None, edition, f"{client_id}: {problem.message}", (),
                             rule_id=problem.rule_id)  # fmt: skip
        judge_missing(
            report, self.links.values(), self.models, self.messages, self.may_miss,
            self.readings,
        )  # fmt: skip
        for (edition, client_id, seq), ids in self.withheld.items():
            withheld = self.messages.get((edition, seq))
            if withheld is None or any(s.retain for s, _ in withheld.seen.get(client_id, [])):
                continue
            report.passed(
                edition,
                f"{client_id}: the retained message {seq} on {withheld.message.topic!r} was "
                "not sent, as its subscription's Retain Handling says",
                ids, (),
            )  # fmt: skip
        return list(report.findings)


def _same(message: Message, topic: str, payload_hex: str) -> bool:
    """Whether a PUBLISH with ``topic`` and ``payload_hex`` is a copy of ``message``."""
    return message.topic == topic and message.publication.payload.hex() == payload_hex


_HANDLERS = {
    (C2S, "CONNECT"): DistributionJudge._connect,
    (S2C, "CONNACK"): DistributionJudge._connack,
    (C2S, "DISCONNECT"): DistributionJudge._disconnect,
    (C2S, "SUBSCRIBE"): DistributionJudge._subscribe,
    (S2C, "SUBACK"): DistributionJudge._suback,
    (C2S, "UNSUBSCRIBE"): DistributionJudge._unsubscribe,
    (S2C, "UNSUBACK"): DistributionJudge._unsuback,
    (C2S, "PUBLISH"): DistributionJudge._publish_in,
    (C2S, "PUBREL"): DistributionJudge._pubrel_in,
    (S2C, "PUBACK"): DistributionJudge._ack_in,
    (S2C, "PUBREC"): DistributionJudge._ack_in,
    (S2C, "PUBLISH"): DistributionJudge._publish_out,
    (C2S, "PUBACK"): DistributionJudge._ack_out,
    (C2S, "PUBREC"): DistributionJudge._ack_out,
    (C2S, "PUBCOMP"): DistributionJudge._ack_out,
}


def judge_events(
    events: Iterable[Event],
    readings: Mapping[str, str] | None = None,
    *,
    config: ServerConfig | None = None,
    complete: bool = True,
    passes: bool = False,
) -> list[Finding]:
    """The distribution findings of a server's events, in time order (``passes``: also what
    it did as the model says)."""
    judge = DistributionJudge(readings, config=config, complete=complete, passes=passes)
    return judge.feed_all(events)
