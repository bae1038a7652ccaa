"""``--store FILE``: the sessions, queued copies and retained messages a restart must not
lose, kept in SQLite.

Rules / theory of operation
---------------------------
What the standard says a server keeps across the end of a connection is what a restart
must keep: a persistent session (3.x CleanSession 0; 5.0 a Session Expiry Interval above
0) with its subscriptions, the QoS 1 and 2 copies it is owed and those under way with
their packet identifiers and the state of each flow (3.1.1 section 4.1, 5.0 4.1: "QoS 1
and QoS 2 messages which have been sent to the Client, but have not been completely
acknowledged", "QoS 1 and QoS 2 messages pending transmission"; the QoS 2 messages the
client sent that await its PUBREL), and the retained messages ([MQTT-3.1.2-7]: not
Session state; they outlive every session). A clean session ends with its connection, and
a restart ends every connection: it is never stored. QoS 0 copies for a session that is
away are optional (the reading ``queue-qos0``) and are not stored.

:class:`StoredBroker` is the broker with its hooks writing down, for each session they
touched, its row (edition, expiry, when it went away, subscriptions as asked, the
reference session's flows: ``to_json``) and its copies (each a message row and a state,
``owed`` or ``sent`` under a packet identifier), and each change of the retained store.
Everything a read brought is committed before the broker writes a byte of its answers
(:attr:`pubproof.probe.serve.broker.Broker.before_flush`), so a PUBACK or PUBREC never
reaches a publisher before its message is in the file. The file is in WAL mode with
``synchronous=NORMAL``: a commit survives the broker's process being killed (the kill the
tests do); after a power failure the last commits may be lost (``--store`` is a developer's
broker's durability, not a bank's).

:mod:`.restore` rebuilds the engine from the file at start (:func:`pubproof.probe.serve.
restore.stored_broker`).
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from pubproof.model.subscriptions import SubscriptionOptions
from pubproof.probe.serve.broker import Broker
from pubproof.probe.serve.connection import ClientSession
from pubproof.probe.serve.engine import Copy, Message, PublishOutcome, message_properties
from pubproof.probe.serve.live import Reporter
from pubproof.probe.serve.settings import ServeSettings
from pubproof.probe.serve.tricks import Tricks
from pubproof.reference.packets import Publish

FORMAT = "1"
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
    client_id TEXT PRIMARY KEY, edition TEXT NOT NULL, expiry INTEGER NOT NULL,
    away_since REAL, subscriptions TEXT NOT NULL, flows TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS messages (
    key INTEGER PRIMARY KEY, publisher TEXT NOT NULL, topic TEXT NOT NULL,
    payload BLOB NOT NULL, qos INTEGER NOT NULL, retain INTEGER NOT NULL,
    properties TEXT NOT NULL, received REAL NOT NULL);
CREATE TABLE IF NOT EXISTS copies (
    client_id TEXT NOT NULL, position INTEGER NOT NULL, message INTEGER NOT NULL,
    state TEXT NOT NULL, packet_id INTEGER, PRIMARY KEY (client_id, position));
CREATE TABLE IF NOT EXISTS retained (topic TEXT PRIMARY KEY, message INTEGER NOT NULL);
"""


def open_store(path: Path) -> sqlite3.Connection:
    """The store's file, created if need be (a file of another format is an error)."""
    db = sqlite3.connect(str(path), isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.executescript(SCHEMA)
    row = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
    if row is None:
        db.execute("INSERT INTO meta VALUES ('format', ?)", (FORMAT,))
    elif row[0] != FORMAT:
        raise ValueError(f"{path}: a store of format {row[0]}, not {FORMAT}")
    return db


def options_json(options: SubscriptionOptions, identifier: int | None) -> list[Any]:
    return [options.qos, options.no_local, options.retain_as_published,
            int(options.retain_handling), identifier]  # fmt: skip


def properties_json(message: Message) -> str:
    props = message_properties(message)
    return json.dumps({
        "payload_format_indicator": props.payload_format_indicator,
        "message_expiry_interval": props.message_expiry_interval,
        "content_type": props.content_type,
        "response_topic": props.response_topic,
        "correlation_data_hex": None if props.correlation_data is None
        else props.correlation_data.hex(),
        "user_properties": [list(p) for p in props.user_properties],
    })  # fmt: skip


class StoredBroker(Broker):
    """The broker whose persistent sessions and retained messages are in a file."""

    def __init__(
        self, settings: ServeSettings, reporter: Reporter | None = None,
        tricks: Tricks | None = None,
    ) -> None:  # fmt: skip
        super().__init__(settings, reporter, tricks)
        assert settings.store is not None
        self.db = open_store(settings.store)
        self.started_wall = time.time()
        #: the engine's message seq -> its key in the file
        self.keys: dict[int, int] = {}
        row = self.db.execute("SELECT max(key) FROM messages").fetchone()
        self.next_key = int(row[0] or 0) + 1
        row = self.db.execute("SELECT max(position) FROM copies").fetchone()
        self.next_position = int(row[0] or 0) + 1
        self.dirty: dict[str, ClientSession] = {}
        self.gone: set[str] = set()
        self.retained: dict[str, Message | None] = {}
        self.away: dict[str, float] = {}
        self.before_flush = self.commit

    # -- the hooks ----------------------------------------------------------------------------

    def _touch(self, session: ClientSession) -> None:
        if session.persistent:
            self.dirty[session.client_id] = session
            self.gone.discard(session.client_id)
        elif session.client_id not in self.dirty:
            self.gone.add(session.client_id)

    def connected(self, session: ClientSession) -> None:
        self.away.pop(session.client_id, None)
        self._touch(session)

    def session_away(self, session: ClientSession) -> None:
        self.away[session.client_id] = time.time()
        self._touch(session)
        self.commit()

    def session_ended(self, client_id: str) -> None:
        self.dirty.pop(client_id, None)
        self.away.pop(client_id, None)
        self.gone.add(client_id)

    def subscribed(self, session: ClientSession) -> None:
        self._touch(session)

    def owned(self, outcome: PublishOutcome) -> None:
        for copy in outcome.copies:
            session = self.sessions.get(copy.client_id)
            if session is not None and session.persistent:
                self.dirty[session.client_id] = session
        change = outcome.retained
        if change is not None and change.after is not change.before:
            self.retained[outcome.message.topic] = change.after

    def sent(self, session: ClientSession, packet: Publish, copy: Copy) -> None:
        if session.persistent:
            self.dirty[session.client_id] = session

    def completed(self, session: ClientSession, packet_id: int) -> None:
        if session.persistent:
            self.dirty[session.client_id] = session

    def on_packet(self, conn: Any, packet: Any) -> None:
        session = conn.session
        if session is not None and session.persistent:
            # the reference session's incoming QoS 2 flows change with every PUBLISH and
            # PUBREL of the client: its flows are written down again
            self.dirty[session.client_id] = session

    def tick(self, now: float) -> None:
        super().tick(now)
        self.commit()

    def shutdown(self, now: float) -> None:
        super().shutdown(now)
        self.commit()
        self.db.close()

    # -- writing -----------------------------------------------------------------------------

    def _key(self, message: Message) -> int:
        key = self.keys.get(message.seq)
        if key is None:
            key = self.keys[message.seq] = self.next_key
            self.next_key += 1
            pub = message.publication
            received = self.started_wall + message.received_at / 1000
            self.db.execute(
                "INSERT OR IGNORE INTO messages VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (key, pub.publisher, pub.topic, pub.payload, pub.qos, int(pub.retain),
                 properties_json(message), received),
            )  # fmt: skip
        return key

    def commit(self) -> None:
        """Write down what changed since the last commit, in one transaction."""
        if not (self.dirty or self.gone or self.retained):
            return
        db = self.db
        db.execute("BEGIN")
        try:
            for client_id in self.gone:
                db.execute("DELETE FROM sessions WHERE client_id = ?", (client_id,))
                db.execute("DELETE FROM copies WHERE client_id = ?", (client_id,))
            for session in self.dirty.values():
                self._write_session(session)
            for topic, message in self.retained.items():
                if message is None:
                    db.execute("DELETE FROM retained WHERE topic = ?", (topic,))
                else:
                    db.execute("INSERT OR REPLACE INTO retained VALUES (?, ?)",
                               (topic, self._key(message)))  # fmt: skip
            db.execute(
                "DELETE FROM messages WHERE key NOT IN (SELECT message FROM copies) "
                "AND key NOT IN (SELECT message FROM retained)"
            )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        self.dirty.clear()
        self.gone.clear()
        self.retained.clear()

    def _write_session(self, session: ClientSession) -> None:
        db, client_id = self.db, session.client_id
        subscriptions = [[f, *options_json(o, i)] for f, (o, i) in session.subscriptions.items()]
        db.execute(
            "INSERT OR REPLACE INTO sessions VALUES (?, ?, ?, ?, ?, ?)",
            (client_id, session.edition.value, session.expiry, self.away.get(client_id),
             json.dumps(subscriptions), json.dumps(session.flows.to_json())),
        )  # fmt: skip
        db.execute("DELETE FROM copies WHERE client_id = ?", (client_id,))
        rows = [(packet_id, copy) for packet_id, copy in session.inflight.items()]
        owed: list[tuple[int | None, Copy]] = [(None, c) for c in self.engine.owed(client_id)]
        for packet_id, copy in [*rows, *owed]:
            if copy.qos == 0:
                continue  # QoS 0 is never kept for a session that is away
            db.execute(
                "INSERT INTO copies VALUES (?, ?, ?, ?, ?)",
                (client_id, self.next_position, self._key(copy.message),
                 "owed" if packet_id is None else "sent", packet_id),
            )  # fmt: skip
            self.next_position += 1
