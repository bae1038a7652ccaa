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
  ordering_problems`);
- per CONNACK that accepts a CONNECT, its Session Present against the session the server
  can hold (:mod:`.distribution_session`: 3.1.1 [MQTT-3.2.2-1] [MQTT-3.2.2-2]
  [MQTT-3.2.2-3], 5.0 [MQTT-3.2.2-2] [MQTT-3.2.2-3]), a clean CONNECT's on every link but a
  capture's, the rest only where the judge sees every link from the start.

5.0 flow control [MQTT-3.3.4-9]: per session, the QoS 1 and 2 PUBLISHes the server sent and
the client has not acknowledged, against its CONNECT's Receive Maximum; while that quota is
used up at the end, a QoS 1 or 2 copy waits legitimately: not missing, and its message's
copies seen so far are not judged (``unknown:quota-full``:
:func:`.distribution_records.waiting_for_quota`). 3.x has no Receive Maximum.

What the links cannot show is never a finding. A subscription (SUBSCRIBE to SUBACK) or a
connection (CONNECT to CONNACK) that changed while a message was in flight (received, not
yet owned) leaves that message's copies to that session open either way: they are not
judged for presence or number. Every finding names the rule, the role ``server``, the
source ``distribution`` and its evidence: the events of the links involved.

A capture (``capture``) shows less than a probe: a link may start before it (its CONNECT
unseen: whose session, and what it subscribed to, is unknown), lose traffic (a ``lost``
event), or still be open at its end. Its judgement (:mod:`.distribution_capture`) finds
only what the events prove: a copy to a link whose session is known whole (its CONNECT
seen, a new session, nothing lost) on a topic none of its subscriptions matches; a copy
still owed at the end only when the session was sent a later message that the order of
4.6 puts after it. The rest is counted, by reason, in the :class:`.Ledger`, which says
what became of every PUBLISH in and out.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, cast

from pubproof.judge.distribution_alike import INVERSION, certain, untangled_for
from pubproof.judge.distribution_capture import PATIENCE, owed_at_end, session_outcomes
from pubproof.judge.distribution_copies import excluded, publish_out
from pubproof.judge.distribution_events import C2S, S2C, Event
from pubproof.judge.distribution_inflight import (
    acknowledged,
    retained_rivals,
    session_flows,
    stored,
)
from pubproof.judge.distribution_ledger import Ledger, unknown
from pubproof.judge.distribution_records import (
    Changes,
    CopyKey,
    Flows,
    Link,
    MessageRecord,
    Report,
    waiting_for_quota,
)
from pubproof.judge.distribution_session import connack, ended
from pubproof.judge.distribution_verdicts import judge_deliveries, judge_missing
from pubproof.judge.findings import VIOLATION, Finding
from pubproof.judge.limits import DEFAULT_RECEIVE_MAXIMUM
from pubproof.model.distribution import DistributionError, DistributionModel
from pubproof.model.distribution_readings import DISTRIBUTION_READINGS
from pubproof.model.editions import READINGS, Edition
from pubproof.model.messages import Copy, Properties, Publication
from pubproof.model.ordering import ordering_problems
from pubproof.model.subscriptions import RetainHandling, ServerConfig, SubscriptionOptions
from pubproof.model.topic_filters import matches
from pubproof.model.trace import PublishProps

V50 = Edition.V50


class DistributionJudge:
    """One server's distribution, judged across its links.

    ``complete``: the judge sees every link of the server from the server's start (a probe,
    ``serve``, ``explore``), so a copy of a message no link showed is a finding; a
    capture, which may start late and miss links, passes False, and ``capture`` True
    (what it cannot show is unknown, never a finding: see the module's docstring)."""

    def __init__(
        self,
        readings: Mapping[str, str] | None = None,
        *,
        config: ServerConfig | None = None,
        complete: bool = True,
        passes: bool = False,
        capture: bool = False,
        patience: float = PATIENCE,
    ) -> None:
        if capture and complete:
            raise ValueError("a capture never shows every link from the server's start")
        self.capture = capture
        #: a capture's: seconds a link stays open after a copy is owed, past which a copy
        #: not sent is missing (:mod:`.distribution_capture`)
        self.patience = patience
        #: when each copy became owed: (edition, copy id) -> the event (the message taken,
        #: the SUBACK, the CONNACK of a resumed session)
        self.owed_at: dict[tuple[Edition, int], Event] = {}
        #: the copies sent: (edition, seq, client) of each, and per session and order key
        #: the latest message sent with its event (:func:`.distribution_capture.order_key`)
        self.sent_keys: set[tuple[Edition, int, str]] = set()
        self.latest: dict[tuple[Any, ...], tuple[int, Event]] = {}
        self.messages_of: dict[int, int] = {}  # a copy's event order -> its message's seq
        #: what became of each copy owed that was not sent: (edition, seq, client) -> outcome
        self.copy_outcomes: dict[tuple[Edition, int, str], str] = {}
        #: a capture's: the topic and payload of each PUBLISH a client sent that did not
        #: become a message the judge follows (its session unknown, refused, rejected)
        self.unfollowed: Counter[tuple[str, str]] = Counter()
        #: the changes to each topic's retained message: their edition and time (a server
        #: keeps one retained message per topic, the models one per edition)
        self.retained_changes: dict[str, list[tuple[Edition, float]]] = {}
        self.ledger = Ledger()
        #: the event of the first copy of each message to each session: (edition, client,
        #: seq) -> event
        self.copy_events: dict[tuple[Edition, str, int], Event] = {}
        #: the message of each copy the model made: (edition, copy id) -> seq
        self.copy_messages: dict[tuple[Edition, int], int] = {}
        #: a capture's: each PUBLISH's payload length (its payload is a digest)
        self.sizes: dict[tuple[Edition, int], int] = {}
        self.readings = dict(readings or {})
        self.report = Report(passes=passes)
        self.config = config or ServerConfig()
        self.complete = complete
        self.models: dict[Edition, DistributionModel] = {}
        self.links: dict[str, Link] = {}
        self.messages: dict[tuple[Edition, int], MessageRecord] = {}
        #: the messages by what a copy shows of them: (edition, topic, payload) -> records
        self.by_content: dict[tuple[Edition, str, str], list[MessageRecord]] = {}
        self.flows: dict[tuple[Edition, str], Flows] = {}
        #: retained copies the server may leave out (a QoS 0 retained message it MAY discard,
        #: [MQTT-3.3.1-7]): (edition, copy id)
        self.may_miss: set[tuple[Edition, int]] = set()
        #: the messages the retained store held and no longer holds, with the rules of the
        #: change that ended each: (edition, seq) -> rule ids
        self.displaced: dict[tuple[Edition, int], tuple[str, ...]] = {}
        #: the retained messages each topic's store may hold now: (edition, topic) ->
        #: records, the model's last; the others were each received before every later
        #: change of the topic was owned, so the server may have stored them last
        self.retained_open: dict[tuple[Edition, str], list[MessageRecord]] = {}
        #: for each retained message the store may hold in place of the model's, at a new
        #: subscription: (edition, client, its seq) -> the model's retained copy owed
        self.retained_order: dict[tuple[Edition, str, int], Copy] = {}
        #: the model's retained copies the server no longer owed, having sent the other
        #: (``unknown:retained-order``): (edition, copy id)
        self.unordered: set[tuple[Edition, int]] = set()
        #: retained messages a new subscription matched but is not sent (5.0 Retain
        #: Handling 1 on an existing subscription, 2): (edition, client, seq) -> rule ids
        self.withheld: dict[tuple[Edition, str, int], tuple[str, ...]] = {}
        #: with passes: retained messages a later one replaced or deleted that a new
        #: subscription matched: (edition, client, seq) -> the store's rule ids
        self.gone: dict[tuple[Edition, str, int], tuple[str, ...]] = {}
        self.sent: dict[tuple[Edition, str], list[Copy]] = {}
        self.changes = Changes()
        #: the sessions the model ended at their expiry, no CONNECT since: (edition, client)
        self.lapsed: set[tuple[Edition, str]] = set()
        #: 5.0: copies that may have waited for a session's send quota when the session
        #: ended (:func:`waiting_for_quota` then): their messages' copies are not judged
        self.quota_spared: set[CopyKey] = set()
        #: each link's latest CONNECT
        self.connects: dict[str, Event] = {}
        self.now = 0.0
        self.fed = 0  # events fed so far

    # -- the model of each edition, and its clock -------------------------------------------

    def _model(self, edition: Edition) -> DistributionModel:
        model = self.models.get(edition)
        if model is None:
            # the readings chosen for the edition (a capture's may name another edition's)
            chosen = {k: v for k, v in self.readings.items() if _applies(k, edition)}
            model = self.models[edition] = DistributionModel(edition, chosen, self.config)
        return model

    def _advance(self, t: float) -> None:
        self.now = max(self.now, t)
        for edition, model in self.models.items():
            moved = round(self.now * 1000) - model.now
            if moved > 0:
                clock = model.advance(moved)
                self.lapsed.update((edition, client_id) for client_id in clock.ended)
                for copy in clock.expired:
                    record = self.messages.get((edition, copy.message.seq))
                    if record is not None:
                        record.expired.add(copy.client_id)

    # -- feeding ---------------------------------------------------------------------------

    def feed(self, event: Event) -> None:
        """One event, in time order."""
        self.fed += 1
        if event.order != self.fed:  # numbered by the judge (a caller may number it so)
            event = dataclasses.replace(event, order=self.fed)
        self._advance(event.t)
        link = self.links.setdefault(event.conn, Link(event.conn))
        if event.packet is None:
            if event.lost:
                self._lost(link, event)
            else:
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
        self.connects[link.conn] = event
        link.client_id = str(packet.get("client_id", ""))
        level = packet.get("level")
        link.edition = {3: Edition.V31, 4: Edition.V311, 5: V50}.get(int(level or 4))
        link.clean = bool(packet.get("clean_start", packet.get("clean_session", True)))
        props = packet.get("properties") or {}
        link.session_expiry = int(props.get("session_expiry_interval", 0))
        limit = props.get("maximum_packet_size")
        link.maximum_packet_size = None if limit is None else int(limit)
        receive = props.get("receive_maximum", DEFAULT_RECEIVE_MAXIMUM)
        link.receive_maximum = int(receive) if link.edition is V50 else None  # 3.x: none
        link.aliases = {C2S: {}, S2C: {}}
        link.whole = link.lossy = False
        if link.client_id:
            self.changes.asked(link.client_id, event.order)

    def _lost(self, link: Link, event: Event) -> None:
        """A capture lost some of the link's traffic: what it held is unknown (a Topic
        Alias mapped anew, an acknowledgement, a subscription), so the session is no
        longer known whole, and nothing still owed it is missing for certain."""
        link.lossy = True
        link.whole = False
        link.aliases = {C2S: {}, S2C: {}}
        if link.key is not None:
            session_flows(self, link).inbound.clear()  # their PUBACK or PUBREC may be lost

    def _closed(self, link: Link, event: Event) -> None:
        if not link.connected or link.client_id is None or link.edition is None:
            return
        # a copy still owed when a link closes may have been cut off by the close; a
        # session that outlives the link keeps it for the next one (the model's queue)
        link.connected = False
        ended(self, link, event, None)

    def _disconnect(self, link: Link, event: Event) -> None:
        packet = event.packet or {}
        expiry = (packet.get("properties") or {}).get("session_expiry_interval")
        if not link.connected or link.client_id is None or link.edition is None:
            return
        link.connected = False
        ended(self, link, event, None if expiry is None else int(expiry))

    # -- subscriptions -----------------------------------------------------------------------

    def _subscribe(self, link: Link, event: Event) -> None:
        packet = event.packet or {}
        link.subscribing[int(packet.get("packet_id", 0))] = event
        if link.client_id:
            self.changes.asked(link.client_id, event.order)

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
            for copy in each.retained:
                self.owed_at[link.edition, copy.copy_id] = event
                retained_rivals(self, link, copy)
            if each.code > 2 or each.retained:
                continue
            for message in model.retained.matching(each.topic_filter):
                # a retained message this subscription is not sent (Retain Handling)
                key = (link.edition, link.client_id, message.seq)
                self.withheld[key] = each.rule_ids
            for (edition, seq), ids in self.displaced.items() if self.report.passes else ():
                was = self.messages.get((edition, seq))
                topic = was.message.topic if was and edition is link.edition else None
                if topic is not None and matches(each.topic_filter, topic):
                    self.gone[edition, link.client_id, seq] = ids

    def _unsubscribe(self, link: Link, event: Event) -> None:
        packet = event.packet or {}
        link.unsubscribing[int(packet.get("packet_id", 0))] = event
        if link.client_id:
            self.changes.asked(link.client_id, event.order)

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
        """The changes a client's link asked for have been answered at the event
        ``order``."""
        self.changes.answered_at(client_id, order)

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

    def _publish_in(self, link: Link, event: Event) -> None:
        packet = event.packet or {}
        ledger = self.ledger
        if not link.connected or link.key is None:
            # seen, never followed: a copy of the same topic and payload is ambiguous
            self.unfollowed[str(packet.get("topic") or ""), str(packet.get("payload_hex", ""))] += 1
            ledger.received(
                event, unknown("session-before-capture") if link.client_id is None else "refused"
            )
            return
        topic = self._topic(link, C2S, packet)
        if topic is None:
            ledger.received(event, unknown("topic-unknown"))
            return  # an alias with no mapping: the link judge's
        qos = int(packet.get("qos", 0))
        resolved = dataclasses.replace(event, packet={**packet, "topic": topic})
        content = (topic, str(packet.get("payload_hex", "")))
        if qos == 0:
            ledger.received(event)
            if self._own(link, resolved, resolved) is None:
                self.unfollowed[content] += 1
                ledger.decided(event, "invalid")
            return
        flows = session_flows(self, link)
        packet_id = int(packet.get("packet_id") or 0)
        if qos == 2 and packet_id in flows.released:
            ledger.received(event, "again")
            return  # [MQTT-4.3.3-2] the same message until its PUBREL: no second one
        waiting = flows.inbound.get(packet_id)
        if waiting is not None:
            ledger.received(event, "again")
            flows.inbound[packet_id] = (waiting[0], waiting[1] + 1)  # sent again, not owned
            return
        ledger.received(event)
        flows.inbound[packet_id] = (resolved, 0)

    def _ack_in(self, link: Link, event: Event) -> None:
        """A PUBACK or PUBREC the server sends: it takes ownership (unless 5.0's Reason
        Code refuses the message: 0x80 or more)."""
        packet = event.packet or {}
        if link.key is None:
            return
        flows = session_flows(self, link)
        packet_id = int(packet.get("packet_id") or 0)
        waiting = flows.inbound.get(packet_id)
        if waiting is None or waiting[0].packet is None:
            return
        received, resent = waiting
        qos = int((received.packet or {}).get("qos", 0))
        if event.type != ("PUBACK" if qos == 1 else "PUBREC"):
            return
        del flows.inbound[packet_id]
        sent = received.packet or {}
        content = (str(sent.get("topic")), str(sent.get("payload_hex", "")))
        if int(packet.get("reason_code", 0)) >= 0x80:
            self.unfollowed[content] += 1
            self.ledger.decided(received, "refused")
            return  # refused: the server never took it
        seq = self._own(link, received, event, resent=resent if qos == 1 else 0)
        if seq is None:
            self.unfollowed[content] += 1
            self.ledger.decided(received, "invalid")
        if qos == 2 and seq is not None:
            flows.released[packet_id] = seq
            self.messages[link.edition, seq].released = False  # type: ignore[index]

    def _pubrel_in(self, link: Link, event: Event) -> None:
        """The publisher's PUBREL: a PUBLISH with that packet identifier is a new message
        from now on."""
        if link.key is not None:
            packet_id = int((event.packet or {}).get("packet_id") or 0)
            seq = session_flows(self, link).released.pop(packet_id, None)
            record = None if seq is None else self.messages.get((link.key[0], seq))
            if record is not None:
                record.released = True

    def _own(self, link: Link, received: Event, owned: Event, *, resent: int = 0) -> int | None:
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
        self.ledger.taken(received, (link.edition, message.seq))
        for copy in (*outcome.copies, *outcome.optional):
            self.owed_at[link.edition, copy.copy_id] = owned
        size = packet.get("payload_size")
        if size is not None:
            self.sizes[link.edition, message.seq] = int(size)
        record = MessageRecord(
            message=message, edition=link.edition, received=received, owned=owned,
            deliveries={d.client_id: d for d in outcome.deliveries}, shared=outcome.shared,
            resent=resent,
        )  # fmt: skip
        kept = outcome.retained
        if kept is not None and publication.retain:
            self.retained_changes.setdefault(message.topic, []).append((link.edition, owned.t))
        if kept is not None and publication.retain and kept.after is not kept.before:
            stored(self, record)
        if kept is not None and kept.before is not None and kept.after is not kept.before:
            # the retained message this one replaced or deleted: never sent for a new
            # subscription again
            self.displaced[link.edition, kept.before.seq] = kept.rule_ids
        # why each other session got nothing: read by the passes only (a pipeline asks for
        # none, and each is a walk per subscription of every session)
        for session in model.sessions.values() if self.report.passes else ():
            if session.client_id in record.deliveries:
                continue
            barred = excluded(self, message, session.client_id, session, link.edition)
            if barred is not None:
                record.excluded[session.client_id] = barred
        # the subscriptions or connections that changed while the message was in flight
        record.uncertain.update(self.changes.during(received.order, owned.order))
        self.messages[link.edition, message.seq] = record
        self.by_content.setdefault(
            (link.edition, message.topic, message.publication.payload.hex()), []
        ).append(record)
        return message.seq

    # -- copies out ----------------------------------------------------------------------------

    def _inversion(self, edition: Edition, client_id: str, text: str) -> tuple[Event, ...]:
        """The evidence of an ordering problem: the copies of its two messages to the
        session (the one received first, then the one sent first)."""
        found = INVERSION.match(text)
        if found is None:
            return ()
        shown = []
        for seq in (int(found.group(2)), int(found.group(1))):
            record = self.messages.get((edition, seq))
            if record is not None:
                shown.append(record.received)
        for seq in (int(found.group(2)), int(found.group(1))):
            event = self.copy_events.get((edition, client_id, seq))
            if event is not None:
                shown.append(event)
        return tuple(shown)

    # -- the end -----------------------------------------------------------------------------

    def finish(self) -> list[Finding]:
        """Judge every message's copies, every session's order and what is still owed; the
        findings."""
        report = self.report
        # 5.0: the QoS 1 and 2 copies still owed a session whose send quota is used up
        # wait for it [MQTT-3.3.4-9]: not missing, and its message's copies not judged
        waiting = waiting_for_quota(self.flows, self.models, self.messages) | self.quota_spared
        for record in self.messages.values():
            judge_deliveries(report, record, waiting)
        for edition, client_id in self.sent:  # alike copies read either way (untangled)
            copies, uncertain = untangled_for(self, edition, client_id)
            for problem in ordering_problems(copies, edition, self.readings, self.config):
                if not certain(problem.message, uncertain):
                    continue
                report.found(VIOLATION, None, edition, f"{client_id}: {problem.message}",
                             self._inversion(edition, client_id, problem.message),
                             rule_id=problem.rule_id)  # fmt: skip
        missing: set[tuple[Edition, int, str]] = set()
        if self.capture:
            owed_at_end(self)
        else:
            missing = judge_missing(
                report, self.links.values(), self.models, self.messages, self.may_miss,
                self.readings, self.unordered, waiting,
            )  # fmt: skip
        session_outcomes(self, missing, waiting)
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
        for (edition, client_id, seq), ids in self.gone.items():
            gone = self.messages[edition, seq]
            if not any(s.retain for s, _ in gone.seen.get(client_id, [])):
                report.passed(
                    edition, f"{client_id}: the retained message {seq} on {gone.message.topic!r}, "
                    "replaced or deleted, was not sent for its new subscription", ids, (),
                )  # fmt: skip
        return list(report.findings)

    def so_far(self) -> list[Finding]:
        """The findings of :meth:`finish` were the events to end here, the judge left as it
        was, to be fed more (``pubproof explore`` judges an example after every move).
        :meth:`finish` only adds findings to the report and sets each message's outcome in
        the ledger afresh, so what it adds is taken back; a capture's judge decides the
        outcome of each copy still owed at its end, once (:func:`.distribution_capture.
        owed_at_end`), so it has no judgement so far."""
        if self.capture:
            raise ValueError("a capture's judge decides what is owed at its end only once")
        kept = len(self.report.findings)
        try:
            return self.finish()
        finally:
            del self.report.findings[kept:]


def _applies(name: str, edition: Edition) -> bool:
    """Whether the reading ``name`` applies to ``edition`` (an unknown name is kept, for
    the model to refuse)."""
    reading = READINGS.get(name) or DISTRIBUTION_READINGS.get(name)
    return reading is None or reading.applies_to(edition)


_HANDLERS = {
    (C2S, "CONNECT"): DistributionJudge._connect,
    (S2C, "CONNACK"): connack,
    (C2S, "DISCONNECT"): DistributionJudge._disconnect,
    (C2S, "SUBSCRIBE"): DistributionJudge._subscribe,
    (S2C, "SUBACK"): DistributionJudge._suback,
    (C2S, "UNSUBSCRIBE"): DistributionJudge._unsubscribe,
    (S2C, "UNSUBACK"): DistributionJudge._unsuback,
    (C2S, "PUBLISH"): DistributionJudge._publish_in,
    (C2S, "PUBREL"): DistributionJudge._pubrel_in,
    (S2C, "PUBACK"): DistributionJudge._ack_in,
    (S2C, "PUBREC"): DistributionJudge._ack_in,
    (S2C, "PUBLISH"): publish_out,
    (C2S, "PUBACK"): acknowledged,
    (C2S, "PUBREC"): acknowledged,
    (C2S, "PUBCOMP"): acknowledged,
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
