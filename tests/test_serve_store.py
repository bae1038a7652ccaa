"""``pubproof serve --store``, sans-IO: a broker restarted on its file has every persistent
session, every QoS 1 and 2 copy queued or under way (re-sent with DUP 1 and its packet
identifier), every QoS 2 message its publisher has not released, and every retained
message; a clean session and an expired one are gone; and no acknowledgement leaves the
broker before what it acknowledges is in the file."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from support.serve_harness import Clients, FakeWire

from pubproof.model.editions import Edition
from pubproof.probe.serve.live import Reporter
from pubproof.probe.serve.restore import stored_broker
from pubproof.probe.serve.settings import ServeSettings
from pubproof.probe.serve.store import StoredBroker

V311, V50 = Edition.V311, Edition.V50


def _stored(path: Path, **settings: Any) -> Clients:
    clients = Clients(**settings)
    clients.settings = ServeSettings(store=path, **settings)
    clients.reporter = Reporter(quiet=True)
    clients.broker = stored_broker(clients.settings, clients.reporter)
    return clients


def _restart(old: Clients, path: Path, **settings: Any) -> Clients:
    """The process dies (nothing more is written) and starts again on the file."""
    assert isinstance(old.broker, StoredBroker)
    old.broker.db.close()
    return _stored(path, **settings)


def test_a_restart_keeps_sessions_copies_and_retained_messages(tmp_path: Path) -> None:
    path = tmp_path / "serve.db"
    first = _stored(path)
    sub = first.client("sub", clean=False)
    sub.subscribe(1, ("t/#", 2))
    clean = first.client("gone", clean=True)
    clean.subscribe(1, ("t/#", 2))
    pub = first.client("pub")
    pub.publish("t/1", b"under way", 1, packet_id=1)
    (under_way,) = sub.publishes()  # never acknowledged
    sub.lose()
    pub.publish("t/2", b"queued", 2, packet_id=2).ack("PUBREL", 2)
    pub.publish("t/r", b"kept", 1, packet_id=3, retain=True)
    pub.publish("t/0", b"qos 0 is not kept", 0)
    second = _restart(first, path)
    again = second.peer()
    assert again.connect("sub", clean=False)["session_present"] is True
    got = again.publishes()
    assert [(p["payload_hex"], p["dup"]) for p in got] == [
        (b"under way".hex(), True), (b"queued".hex(), False), (b"kept".hex(), False),
    ]  # fmt: skip
    assert got[0]["packet_id"] == under_way["packet_id"]  # [MQTT-4.4.0-1] its identifier
    assert second.peer().connect("gone", clean=False)["session_present"] is False
    late = second.client("late")
    late.subscribe(1, ("t/r", 1))
    (retained,) = late.publishes()
    assert (retained["payload_hex"], retained["retain"]) == (b"kept".hex(), True)


def test_a_qos2_message_its_publisher_has_not_released_stays_held(tmp_path: Path) -> None:
    path = tmp_path / "serve.db"
    first = _stored(path)
    watcher = first.client("watcher", clean=False)
    watcher.subscribe(1, ("q", 2))
    pub = first.client("pub", clean=False)
    pub.publish("q", b"once", 2, packet_id=9)
    assert pub.expect("PUBREC")["packet_id"] == 9  # Method B: passed on at PUBREC
    second = _restart(first, path)
    back = second.peer()
    back.connect("pub", clean=False)
    back.publish("q", b"once", 2, packet_id=9, dup=True)  # its re-send after the restart
    assert back.expect("PUBREC")["packet_id"] == 9
    back.ack("PUBREL", 9)
    assert back.expect("PUBCOMP")["packet_id"] == 9
    seen = second.peer()
    seen.connect("watcher", clean=False)
    # [MQTT-4.3.3-2] delivered once: the re-sent PUBLISH before PUBREL is not a new message
    assert [p["payload_hex"] for p in seen.publishes()] == [b"once".hex()]


def test_an_expired_session_is_not_restored(tmp_path: Path) -> None:
    path = tmp_path / "serve.db"
    first = _stored(path)
    gone = first.client("short", V50, clean=False, properties={"session_expiry_interval": 1})
    gone.subscribe(1, {"filter": "x", "qos": 1})
    gone.lose()
    with sqlite3.connect(path) as db:  # it went away two seconds ago
        db.execute("UPDATE sessions SET away_since = ?", (time.time() - 2,))
    second = _restart(first, path)
    back = second.peer(V50)
    assert back.connect("short", clean=False,
                        properties={"session_expiry_interval": 1})["session_present"] is False


class CheckingWire(FakeWire):
    """A wire that looks in the file whenever the broker writes: an acknowledgement of a
    QoS 1 or 2 message must find it there."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.stored_at_write: list[int] = []

    def write(self, data: bytes) -> None:
        with sqlite3.connect(self.path) as db:
            self.stored_at_write.append(db.execute("SELECT count(*) FROM messages").fetchone()[0])
        super().write(data)


def test_no_acknowledgement_before_its_message_is_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "serve.db"
    clients = _stored(path)
    away = clients.client("away", clean=False)
    away.subscribe(1, ("a", 1))
    away.lose()
    wire = CheckingWire(path)
    conn = clients.broker.open(wire, "test", 0.0)
    clients.broker.feed(conn, bytes.fromhex("100f00044d515454040200000003707562"), 0.0)
    wire.stored_at_write.clear()
    clients.broker.feed(conn, bytes.fromhex("32060001610001 6869".replace(" ", "")), 0.1)
    assert wire.data.endswith(bytes.fromhex("40020001"))  # the PUBACK went out
    assert wire.stored_at_write == [1]  # ... with the message already in the file
