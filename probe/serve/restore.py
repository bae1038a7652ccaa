"""The engine rebuilt from a store at start, through its own methods only.

Rules / theory of operation
---------------------------
The distribution engine has no way to be handed a state: it is driven into it, as a
broker that had just seen its clients again would be.

1. Every stored session connects (CleanSession 0, or 5.0 Clean Start 0 with what is left
   of its Session Expiry Interval after the time it was away: a session whose interval
   ran out while the broker was down is not restored) and subscribes as it had (the
   retained store is still empty: no retained copy is owed).
2. Every stored message a session is owed is published again, oldest first, with its
   Message Expiry Interval less the time it has waited (an expired one is not), then every
   retained message with RETAIN 1. The engine owes the connected sessions their copies.
3. Each session keeps the copies the file holds for it, in the file's order, and drops
   the others (started and completed unsent: they are the republication's, not owed);
   those under way are started again under their packet identifiers, and the reference
   session's flows are read back (``from_json``), so that the client's reconnection gets
   its re-sends [MQTT-4.4.0-1].
4. Every session disconnects: it is away, as it was when the broker stopped.

A copy the file holds that the engine no longer owes (its subscription was changed
while it was queued, in a way the replay cannot show) is lost, and the broker says so.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from typing import Any

from pubproof.model.editions import Edition
from pubproof.model.messages import Properties, Publication
from pubproof.model.subscriptions import RetainHandling, SubscriptionOptions
from pubproof.probe.serve.broker import Broker
from pubproof.probe.serve.connection import ClientSession
from pubproof.probe.serve.engine import Copy
from pubproof.probe.serve.judging import client_judge
from pubproof.probe.serve.live import Reporter
from pubproof.probe.serve.misbehave import misbehaviour
from pubproof.probe.serve.settings import ServeSettings
from pubproof.probe.serve.store import StoredBroker
from pubproof.reference.session import Session
from pubproof.reference.session50 import Session50

V50 = Edition.V50
NEVER = 0xFFFF_FFFF


def _options(item: list[Any]) -> tuple[str, SubscriptionOptions, int | None]:
    topic_filter, qos, no_local, rap, handling, identifier = item
    options = SubscriptionOptions(qos=int(qos), no_local=bool(no_local),
                                  retain_as_published=bool(rap),
                                  retain_handling=RetainHandling(int(handling)))  # fmt: skip
    return str(topic_filter), options, None if identifier is None else int(identifier)


def _publication(
    row: tuple[Any, ...], now: float, retain: bool | None = None
) -> Publication | None:
    """The stored message as published again, its expiry reduced by its wait (None when
    it expired meanwhile)."""
    _, publisher, topic, payload, qos, stored_retain, props_text, received = row
    props = json.loads(props_text)
    expiry = props.get("message_expiry_interval")
    if expiry is not None:
        left = expiry - int(now - received)
        if left <= 0:
            return None
        expiry = left
    data = props.get("correlation_data_hex")
    properties = Properties(
        payload_format_indicator=props.get("payload_format_indicator"),
        message_expiry_interval=expiry, content_type=props.get("content_type"),
        response_topic=props.get("response_topic"),
        correlation_data=None if data is None else bytes.fromhex(data),
        user_properties=tuple((str(n), str(v)) for n, v in props.get("user_properties", [])),
    )  # fmt: skip
    return Publication(publisher=str(publisher), topic=str(topic), payload=bytes(payload),
                       qos=int(qos), retain=bool(stored_retain if retain is None else retain),
                       properties=properties)  # fmt: skip


def restore(broker: StoredBroker) -> None:
    """Rebuild ``broker``'s engine and session records from its file."""
    db, engine = broker.db, broker.engine
    now = time.time()
    sessions = db.execute("SELECT * FROM sessions ORDER BY rowid").fetchall()
    copies: dict[str, list[tuple[int, str, int | None]]] = defaultdict(list)
    for client_id, _, message, state, packet_id in db.execute(
        "SELECT * FROM copies ORDER BY position"
    ):
        copies[str(client_id)].append((int(message), str(state), packet_id))
    restored: list[ClientSession] = []
    # 1. the sessions connect and subscribe
    for client_id, edition_name, expiry, away_since, subscriptions, flows_text in sessions:
        edition = Edition.parse(edition_name)
        left = int(expiry)
        if edition is V50 and left != NEVER:
            left -= int(now - (away_since if away_since is not None else now))
            if left <= 0:
                continue  # [MQTT-4.1.0-2] it expired while the broker was down
        engine.connect(client_id, edition, clean=False, expiry=left)
        flows_data = json.loads(flows_text)
        flows = Session50.from_json(flows_data) if edition is V50 else Session.from_json(flows_data)
        session = ClientSession(client_id=client_id, edition=edition, flows=flows,
                                judge=client_judge(client_id, edition),
                                persistent=True, expiry=left)  # fmt: skip
        for item in json.loads(subscriptions):
            topic_filter, options, identifier = _options(item)
            outcome = engine.subscribe(client_id, 1, [(topic_filter, options)], identifier)
            if outcome.filters and outcome.filters[0].code <= 2:
                session.subscriptions[topic_filter] = (options, identifier)
        broker.sessions[client_id] = session
        restored.append(session)
    # 2. the messages they are owed, then the retained ones
    wanted = {m for held in copies.values() for m, _, _ in held}
    by_seq: dict[int, int] = {}
    for row in db.execute("SELECT * FROM messages ORDER BY key"):
        if int(row[0]) not in wanted:
            continue
        publication = _publication(row, now)
        if publication is not None:
            by_seq[engine.publish(publication).message.seq] = int(row[0])
    for row in db.execute(
        "SELECT m.* FROM retained r JOIN messages m ON m.key = r.message ORDER BY m.key"
    ):
        publication = _publication(row, now, retain=True)
        if publication is not None:
            by_seq[engine.publish(publication).message.seq] = int(row[0])
    broker.keys = {seq: key for seq, key in by_seq.items()}
    broker.retained.clear()
    # 3. each session keeps its own copies, its flows under way again
    lost = 0
    for session in restored:
        lost += _keep(broker, session, copies.get(session.client_id, []), by_seq)
    # 4. they are away
    for session in restored:
        engine.disconnect(session.client_id)
        broker.away[session.client_id] = now
    if broker.judge.judge is not None:
        broker.judge.judge.complete = False  # it has not seen the sessions restored
    broker.commit()
    if lost:
        broker.reporter.notice("restore-lost", f"{lost} stored copies no longer owed")
    broker.reporter.say(
        f"pubproof serve: restored {len(restored)} session(s), "
        f"{sum(len(c) for c in copies.values()) - lost} copies, from {broker.settings.store}"
    )


def _keep(
    broker: StoredBroker, session: ClientSession, held: list[tuple[int, str, int | None]],
    by_seq: dict[int, int],
) -> int:  # fmt: skip
    """Keep the copies ``held`` (message key, state, packet id) of the ones the engine owes
    ``session`` now; the number of ``held`` it does not owe."""
    engine, client_id = broker.engine, session.client_id
    owed: dict[int, list[Copy]] = defaultdict(list)
    for copy in engine.owed(client_id):
        key = by_seq.get(copy.message.seq)
        if key is not None:
            owed[key].append(copy)
    kept: set[int] = set()
    lost = 0
    for key, state, packet_id in held:
        candidates = owed.get(key)
        if not candidates:
            lost += 1
            continue
        copy = candidates.pop(0)
        kept.add(copy.copy_id)
        if state == "sent" and packet_id is not None:
            started, _ = engine.send(client_id, copy.copy_id)
            session.inflight[int(packet_id)] = started
    for copy in engine.owed(client_id):
        if copy.copy_id not in kept:
            # the republication's copy: not owed to this session
            engine.send(client_id, copy.copy_id)
            if copy.qos:
                engine.complete(client_id, copy.copy_id)
    return lost


def stored_broker(settings: ServeSettings, reporter: Reporter) -> Broker:
    """The broker the settings ask for: with its store (restored from the file) or not,
    and the misbehaviours they name."""
    tricks = misbehaviour(settings.misbehave)
    if settings.store is None:
        return Broker(settings, reporter, tricks)
    broker = StoredBroker(settings, reporter, tricks)
    restore(broker)
    return broker
