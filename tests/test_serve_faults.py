"""``pubproof serve`` under bad input and bad clients: any bytes from a client never raise
and never touch another client's session; a client that does not read never grows the
broker beyond its bounds; the distribution judge notices a broker that misroutes; the
settings refuse what the standard calls a Protocol Error."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.serve_harness import Clients

from pubproof.model.editions import Edition
from pubproof.probe.serve import flows
from pubproof.probe.serve.live import LiveFinding, Reporter
from pubproof.probe.serve.settings import ServeSettings, SettingsError, load_file, merged
from pubproof.reference.packets import Publish

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50
EDITIONS = st.sampled_from([V31, V311, V50])
CHUNKS = st.lists(st.binary(min_size=0, max_size=64), min_size=1, max_size=8)


def _still_served(clients: Clients, edition: Edition) -> None:
    """Another client's session works as before."""
    sub = clients.client("good", edition)
    sub.subscribe(1, ("after/#", 1))
    clients.client("pub", edition).publish("after/x", b"ok", 1, packet_id=1)
    assert [c["payload_hex"] for c in sub.publishes()] == [b"ok".hex()]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edition=EDITIONS, chunks=CHUNKS, connected=st.booleans())
def test_any_bytes_never_raise_and_never_touch_another_session(
    edition: Edition, chunks: list[bytes], connected: bool
) -> None:
    clients = Clients()
    watcher = clients.client("watcher", edition)
    watcher.subscribe(1, ("#", 2))
    bad = clients.peer(edition)
    if connected:
        bad.connect("bad")
    for chunk in chunks:
        bad.send(chunk)
    if bad.closed:
        # judged and answered: a finding, or its own DISCONNECT, or a CONNECT refused
        answered = clients.findings() or any(c and c[0] == 0xE0 for c in chunks) or any(
            p.get("type") == "CONNACK" for p in bad.read())
        assert answered or clients.reporter.notices
    _still_served(clients, edition)
    clients.stop()


@pytest.mark.parametrize("edition", [V311, V50])
def test_garbage_is_judged_answered_and_disconnected(edition: Edition) -> None:
    clients = Clients()
    bad = clients.client("bad", edition)
    bad.send(bytes.fromhex("00ff"))  # a reserved packet type: judged at its first byte
    assert bad.closed
    (finding,) = clients.findings()
    assert finding[:2] == ("bad", "violation")
    if edition is V50:
        assert bad.expect("DISCONNECT")["reason_code"] == 0x81  # Malformed Packet
    longer = clients.client("longer", edition)
    longer.send(bytes.fromhex("30ffffffff01"))  # a Remaining Length of five bytes
    assert longer.closed
    assert clients.findings()[-1][2][0].endswith("remaining-length")


def test_a_client_that_stops_reading_is_bounded() -> None:
    limit, queued = 4096, 50
    clients = Clients(write_buffer_limit=limit, max_queued=queued, judge_messages=0)
    slow = clients.client("slow")
    slow.subscribe(1, ("s/#", 1))
    slow.wire.held = 1 << 30  # it reads nothing from now on
    pub = clients.client("pub")
    payload = b"x" * 100
    for n in range(3000):
        pub.publish("s/t", payload, n % 2, packet_id=(n % 60000) + 1 if n % 2 else None)
    engine = clients.broker.engine
    written = len(slow.wire.data)
    # the bound: what the socket was given up to the limit, then at most max_queued
    # copies kept in the engine, the rest dropped (and counted)
    assert written <= limit + 2 * 200
    assert len(engine.owed("slow")) <= queued
    assert engine.dropped >= 3000 - queued - written // 100
    assert "slow-c1" in clients.reporter.notices
    # it reads again: it gets what was kept, newest last
    slow.wire.held = 0
    clients.broker.writable(slow.conn, clients.now)
    got = slow.publishes()
    assert got and len(got) <= queued + written // 100


def test_a_client_that_never_acknowledges_is_bounded_and_told_of() -> None:
    """A client that reads but sends no PUBACK: --max-inflight copies under way, then at
    most --max-queued kept, the oldest dropped, counted, and said once."""
    clients = Clients(max_inflight=5, max_queued=20, judge_messages=0)
    mute = clients.client("mute")
    mute.subscribe(1, ("m/#", 1))
    mute.read()
    pub = clients.client("pub")
    for n in range(100):
        pub.publish("m/t", str(n).encode(), 1, packet_id=n + 1)
    engine = clients.broker.engine
    got = mute.publishes()
    assert len(got) == 5  # the window
    assert len(engine.owed("mute")) == 20
    assert engine.dropped == 100 - 5 - 20
    assert clients.reporter.notices["dropped"] >= 1
    # the newest were kept: once acknowledged, the next to go is message 80
    for each in got:
        mute.ack("PUBACK", each["packet_id"])
    after = mute.publishes()
    assert after and after[0]["payload_hex"] == b"80".hex()


def test_the_distribution_judge_stops_at_its_limit() -> None:
    clients = Clients(judge_messages=10)
    sub = clients.client("sub")
    sub.subscribe(1, ("#", 0))
    pub = clients.client("pub")
    for n in range(15):
        pub.publish("t", bytes([n]))
    assert not clients.broker.judge.active
    assert "distribution-judge-stopped" in clients.reporter.notices
    assert len(sub.publishes()) == 15


def test_the_distribution_judge_sees_a_broker_that_drops_a_copy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A mutant of the broker: a copy the engine owes is started and never written. The
    self-check must say so (a test that cannot fail is a defect)."""
    real = flows.send_packet

    def lossy(broker: object, conn: object, packet: object) -> bool:
        if getattr(packet, "topic", None) == "lost":
            return False
        return real(broker, conn, packet)  # type: ignore[arg-type]

    monkeypatch.setattr(flows, "send_packet", lossy)
    clients = Clients()
    sub = clients.client("sub")
    sub.subscribe(1, ("#", 0))
    clients.client("pub").publish("lost", b"never")
    server = [f for f in clients.stop() if f[0] == "(server)"]
    assert server and server[0][1] == "missing"


def test_the_distribution_judge_sees_a_live_copy_with_retain(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A mutant: live copies go out with RETAIN 1 ([MQTT-3.3.1-9] wants 0)."""
    real = flows.send_packet

    def retained(broker: object, conn: object, packet: object) -> bool:
        if isinstance(packet, Publish) and not packet.retain:
            packet = dataclasses.replace(packet, retain=True)
        return real(broker, conn, packet)  # type: ignore[arg-type]

    monkeypatch.setattr(flows, "send_packet", retained)
    clients = Clients()
    sub = clients.client("sub")
    sub.subscribe(1, ("#", 0))
    clients.client("pub").publish("q", b"up")
    server = [f for f in clients.stop() if f[0] == "(server)"]
    assert server and server[0][1] == "violation"


def test_the_finding_line_and_json() -> None:
    stream = io.StringIO()
    clients = Clients()
    clients.broker.reporter = Reporter(stream)
    bad = clients.client("bad")
    bad.send(bytes.fromhex("36050003612f62"))
    line = stream.getvalue().strip()
    assert " bad c1 violation MQTT-3.3.1-4 \"A PUBLISH Packet MUST NOT have both QoS bits" in line
    assert line.endswith("[36050003612f62]")
    kept: LiveFinding = clients.broker.reporter.kept[0]
    record = kept.to_json()
    assert (record["client_id"], record["rules"], record["source"]) == (
        "bad", ["MQTT-3.3.1-4"], "wire")
    assert json.loads(json.dumps(record)) == record
    assert kept.trace and kept.trace[-1]["hex"] == "36050003612f62"


def test_settings_refuse_what_a_client_must_reject(tmp_path: Path) -> None:
    with pytest.raises(SettingsError):
        ServeSettings(receive_maximum=0)  # 3.2.2.3.3: a Protocol Error
    with pytest.raises(SettingsError):
        ServeSettings(maximum_qos=3)
    with pytest.raises(SettingsError):
        ServeSettings(edition=V311, readings={"no-such-reading": "x"})
    with pytest.raises(SettingsError):
        ServeSettings(edition=V31, wildcard_subscriptions=False)
    file = tmp_path / "serve.toml"
    file.write_text('edition = "5.0"\nreceive-maximum = 1\nreading = ["dup-qos0=ignore"]\n'
                    "retain_available = false\n")  # fmt: skip
    settings = merged(load_file(file), {"receive_maximum": 3})
    assert (settings.edition, settings.receive_maximum, settings.retain_available) == (
        V50, 3, False)
    assert settings.readings == {"dup-qos0": "ignore"}
    assert settings.connack_properties() == {"receive_maximum": 3, "retain_available": 0}
    file.write_text("receive_maximmum = 1\n")
    with pytest.raises(SettingsError, match="unknown"):
        load_file(file)
