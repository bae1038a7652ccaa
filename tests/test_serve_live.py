"""``pubproof serve`` as a process on loopback with real clients: paho-mqtt, libmosquitto
(``mosquitto_sub``/``mosquitto_pub``), MQTT.js and gmqtt connect, publish and subscribe
through it in 3.1.1 and 5.0; every library's messages reach every other library at every
QoS, before and across a restart with ``--store``; a broker killed mid-stream loses no
QoS 1 or 2 message it acknowledged; garbage from a socket gets a finding and a close,
never a traceback.

The clients are the shipped drivers of ``probe-client`` (:mod:`pubproof.probe.clients.
shipped`); a library that is not installed here skips its part (the CI installs all).
"""

from __future__ import annotations

import json
import secrets
import signal
import socket
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.serve_harness import ServeProcess

from pubproof.judge import packets as P
from pubproof.probe.clients.driver import Driver, Message, Plan
from pubproof.probe.clients.shipped import SHIPPED
from pubproof.reference.codec import Decoder, encode
from pubproof.reference.packets import PubAck, Publish

LIBRARIES = ("paho-mqtt", "mosquitto-clients", "mqttjs", "gmqtt")
EDITIONS = ("3.1.1", "5.0")


def _available() -> list[str]:
    return [name for name in LIBRARIES if SHIPPED[name].available() is None]


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[ServeProcess]:
    process = ServeProcess(["--html", str(tmp_path / "serve.html")]).start()
    yield process
    process.stop()


class Clients:
    """Drivers of a test, stopped at the end."""

    def __init__(self, url: str, run: str) -> None:
        self.url, self.run = url, run
        self.drivers: list[tuple[str, Driver]] = []

    def start(self, name: str, edition: str, tag: str, **plan: Any) -> Driver:
        client_id = f"{self.run}{tag}"[:23]
        driver = Driver(SHIPPED[name].command_line(),
                        Plan(url=self.url, client_id=client_id, edition=edition, **plan),
                        lambda *a, **k: None)  # fmt: skip
        driver.start()
        self.drivers.append((f"{name} {edition} {tag}", driver))
        return driver

    def stop(self) -> None:
        for _, driver in self.drivers:
            driver.stop(grace=3.0)


def _wait(what: str, done: Any, seconds: float = 20.0) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if done():
            return
        time.sleep(0.05)
    raise AssertionError(f"no {what} within {seconds} s")


def _events(driver: Driver, event: str) -> list[dict[str, Any]]:
    return [line for line in driver.lines if line.get("event") == event]


def _payloads(driver: Driver) -> list[str]:
    return [bytes.fromhex(m["payload_hex"]).decode() for m in _events(driver, "message")]


def _until_subscribed(port: int, topic: str, drivers: list[Driver]) -> None:
    """Publish a ping on ``topic`` now and then until every driver got one (not every
    driver says when its library has subscribed)."""
    pinger = RawClient(port, f"ping{secrets.token_hex(3)}", clean=True)
    try:
        end = time.monotonic() + 30.0
        while time.monotonic() < end:
            pinger.sock.sendall(encode(Publish(topic=f"{topic}/ping", payload=b"ping")))
            time.sleep(0.3)
            if all("ping" in _payloads(d) for d in drivers):
                return
        raise AssertionError("not every subscriber got a ping within 30 s")
    finally:
        pinger.close()


def _publishers(
    clients: Clients, topic: str, pairs: list[tuple[str, str]], tag: str,
    qos_levels: tuple[int, ...] = (0, 1, 2),
) -> set[str]:  # fmt: skip
    """Each (library, edition) of ``pairs`` publishes one message at each QoS on
    ``topic``/...; the payloads."""
    sent: set[str] = set()
    for name, edition in pairs:
        plans: list[list[Message]] = [[]]
        for qos in qos_levels:
            payload = f"{tag}-{name}-{edition}-{qos}"
            sent.add(payload)
            message = Message(f"{topic}/{name}/{edition}/{qos}", qos, payload.encode())
            if name == "mosquitto-clients":  # one topic and QoS for a mosquitto_pub
                plans.append([message])
            else:
                plans[0].append(message)
        for n, plan in enumerate(p for p in plans if p):
            ed = edition.replace(".", "")
            clients.start(name, edition, f"p{ed}{name[:3]}{n}{tag}", publish=tuple(plan))
    return sent


def test_every_library_reaches_every_other_at_every_qos(serve: ServeProcess) -> None:
    libraries = _available()
    if len(libraries) < 2:
        pytest.skip(f"fewer than two client libraries here: {libraries}")
    run = secrets.token_hex(3)
    topic = f"interop/{run}"
    clients = Clients(serve.url, run)
    try:
        subscribers = [
            (f"{name} {edition}", clients.start(name, edition, f"s{edition[0]}{name[:4]}",
                                                subscribe=((f"{topic}/#", 2),)))
            for name in libraries for edition in EDITIONS
        ]  # fmt: skip
        _until_subscribed(serve.port, topic, [d for _, d in subscribers])
        pairs = [(name, edition) for name in libraries for edition in EDITIONS]
        sent = _publishers(clients, topic, pairs, "m")

        def everyone_has_all() -> bool:
            return all(sent <= set(_payloads(d)) for _, d in subscribers)

        _wait("every message at every subscriber", everyone_has_all, 40.0)
        for label, driver in subscribers:
            got = _payloads(driver)
            twice = [p for p in sent if p.endswith("-2") and got.count(p) != 1]
            assert not twice, f"{label}: QoS 2 not exactly once: {twice}"
    finally:
        clients.stop()
    summary = serve.stop()
    assert summary is not None
    violations = [f for f in serve.findings() if f["verdict"] in ("violation", "missing")]
    assert violations == []
    assert len(summary["clients"]) >= len(subscribers)


def test_messages_cross_a_restart_with_store(tmp_path: Path) -> None:
    libraries = _available()
    if not libraries:
        pytest.skip("no client library here")
    store = tmp_path / "serve.db"
    run = secrets.token_hex(3)
    topic = f"kept/{run}"
    first = ServeProcess(["--store", str(store)]).start()
    port = first.port
    clients = Clients(first.url, run)
    keep: dict[str, Any] = {"clean_session": False}
    subscribers = []
    # each library subscribes in one edition and publishes in the other
    editions = {name: EDITIONS[n % 2] for n, name in enumerate(libraries)}
    other = {"3.1.1": "5.0", "5.0": "3.1.1"}
    try:
        for name, edition in editions.items():
            extra = {"session_expiry_interval": 600} if edition == "5.0" else {}
            tag = f"k{edition[0]}{name[:4]}"
            driver = clients.start(name, edition, tag, subscribe=((f"{topic}/#", 2),),
                                   **keep, **extra)  # fmt: skip
            subscribers.append((name, edition, tag, extra, driver))
        _until_subscribed(port, topic, [d for *_, d in subscribers])
        for *_, driver in subscribers:
            driver.stop(grace=3.0)  # away: its session is kept
        pairs = [(name, other[edition]) for name, edition in editions.items()]
        sent = _publishers(clients, topic, pairs, "r", (1, 2))

        def stored() -> bool:  # every QoS 1 and 2 message queued, in the file
            with sqlite3.connect(store) as db:
                rows = db.execute("SELECT payload FROM messages")
                kept = {bytes(row[0]).decode() for row in rows}
            return sent <= kept

        _wait("every QoS 1 and 2 message in the store", stored, 40.0)
    finally:
        clients.stop()
    first.stop(signal.SIGKILL)
    second = ServeProcess(["--store", str(store), "--port", str(port)]).start()
    again = Clients(second.url, run)
    try:
        back = [
            (f"{name} {edition}", again.start(name, edition, tag, subscribe=((f"{topic}/#", 2),),
                                              **keep, **extra))
            for name, edition, tag, extra, _ in subscribers
        ]  # fmt: skip

        def everyone_has_all() -> bool:
            return all(sent <= set(_payloads(d)) for _, d in back)

        try:
            _wait("every QoS 1 and 2 message after the restart", everyone_has_all, 40.0)
        except AssertionError:
            missing = {label: sorted(sent - set(_payloads(d))) for label, d in back}
            raise AssertionError(f"missing after the restart: {missing}") from None
    finally:
        again.stop()
        second.stop()


# -- a broker killed mid-stream ----------------------------------------------------------------


class RawClient:
    """A client on a socket, written here so that the test knows each acknowledgement."""

    def __init__(self, port: int, client_id: str, *, clean: bool) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.decoder = Decoder()
        self.buffer = b""
        self.sock.sendall(P.connect(client_id, clean=clean))
        assert self._control()[0] >> 4 == 2  # CONNACK

    def _control(self) -> bytes:
        while True:
            header = P.header_length(self.buffer) if len(self.buffer) >= 2 else None
            if header is not None and len(self.buffer) >= sum(header):
                frame, self.buffer = self.buffer[: sum(header)], self.buffer[sum(header) :]
                return frame
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("closed")
            self.buffer += data

    def frames(self, seconds: float) -> Iterator[bytes]:
        self.sock.settimeout(seconds)
        try:
            while True:
                yield self._control()
        except (TimeoutError, ConnectionError, OSError):
            return

    def close(self) -> None:
        self.sock.close()


def test_a_broker_killed_mid_stream_loses_no_acknowledged_message(tmp_path: Path) -> None:
    store = tmp_path / "serve.db"
    first = ServeProcess(["--store", str(store), "--quiet"]).start()
    port = first.port
    sub = RawClient(port, "keeper", clean=False)
    sub.sock.sendall(P.subscribe(1, [("stream/#", 1)]))
    assert next(sub.frames(5))[0] >> 4 == 9  # SUBACK
    sub.close()  # away: every message is queued for it
    pub = RawClient(port, "streamer", clean=True)
    acknowledged: set[int] = set()
    pub.sock.settimeout(5)
    for n in range(1, 3000):
        packet = Publish(topic=f"stream/{n % 7}", payload=str(n).encode(), qos=1, packet_id=n)
        try:
            pub.sock.sendall(encode(packet))
            frame = next(pub.frames(5))
        except (OSError, StopIteration):
            break
        if frame[0] >> 4 == 4:
            acknowledged.add(n)
        if n == 700:
            first.process.send_signal(signal.SIGKILL)  # type: ignore[union-attr]
    pub.close()
    first.stop(signal.SIGKILL)
    assert 700 <= len(acknowledged) < 3000
    second = ServeProcess(["--store", str(store), "--port", str(port), "--quiet"]).start()
    try:
        back = RawClient(port, "keeper", clean=False)
        got: set[int] = set()
        for frame in back.frames(3.0):
            if frame[0] >> 4 != 3:
                continue
            decoder = Decoder()
            decoder.feed(frame)
            message = decoder.next_packet()
            assert isinstance(message, Publish) and message.packet_id is not None
            got.add(int(message.payload))
            back.sock.sendall(encode(PubAck(packet_id=message.packet_id)))
        back.close()
    finally:
        second.stop()
    assert acknowledged <= got, sorted(acknowledged - got)[:10]


def test_garbage_from_a_socket_is_a_finding_and_a_close_never_a_traceback() -> None:
    serve = ServeProcess([]).start()
    try:
        rng = secrets.SystemRandom()
        for n in range(40):
            with socket.create_connection(("127.0.0.1", serve.port), timeout=5) as sock:
                if n % 2:
                    sock.sendall(P.connect(f"g{n}", clean=True))
                sock.sendall(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))))
                sock.shutdown(socket.SHUT_WR)  # then the end of the stream
                sock.settimeout(5)
                try:
                    while sock.recv(4096):
                        pass
                except (TimeoutError, OSError):
                    pass
        # the broker still serves
        ok = RawClient(serve.port, "after", clean=True)
        ok.sock.sendall(P.PINGREQ)
        assert next(ok.frames(5))[0] >> 4 == 13  # PINGRESP
        ok.close()
    finally:
        summary = serve.stop()
    text = "\n".join(str(line) for line in serve.lines)
    assert "Traceback" not in text
    assert summary is not None and serve.findings()
    assert serve.process is not None and serve.process.returncode == 0


# -- serve's findings are probe-client's ----------------------------------------------------------

EVIDENCE = Path(__file__).resolve().parents[1] / "docs" / "matrix" / "evidence"
#: (the probe-client check, serve's options for the same behaviour, the plan's messages)
SAME_BEHAVIOUR = {
    "send.maximum-qos-0": (["--maximum-qos", "0"], [Message("same/q", 1, b"maxqos")]),
    "send.receive-maximum-qos2": (
        ["--receive-maximum", "2"], [Message("same/r", 2, f"rm{n}".encode()) for n in range(5)],
    ),
}  # fmt: skip


@pytest.mark.parametrize("check", sorted(SAME_BEHAVIOUR))
def test_serve_reports_what_probe_client_reports(check: str) -> None:
    """A 5.0 client's behaviour under a server's limits: each library's violations through
    serve are the ones probe-client's committed evidence gives for the same check."""
    libraries = _available()
    if not libraries:
        pytest.skip("no client library here")
    options, messages = SAME_BEHAVIOUR[check]
    serve = ServeProcess(["--edition", "5.0", *options]).start()
    run = secrets.token_hex(3)
    clients = Clients(serve.url, run)
    expected: dict[str, set[str]] = {}
    try:
        for name in libraries:
            committed = json.loads((EVIDENCE / f"{name}-5.0.json").read_text())
            verdicts = next(c for c in committed["checks"] if c["id"] == check)["rule_verdicts"]
            expected[f"{run}{name[:6]}"] = {r for r, v in verdicts.items() if v == "violation"}
            if name == "mosquitto-clients":
                plans = [[m] for m in messages]  # one topic and QoS per mosquitto_pub -l
                plans = [messages] if len({(m.topic, m.qos) for m in messages}) == 1 else plans
            else:
                plans = [messages]
            for plan in plans:
                clients.start(name, "5.0", name[:6], publish=tuple(plan))
        time.sleep(6.0)  # each publishes, each flow runs its course
    finally:
        clients.stop()
        serve.stop()
    for client_id, wanted in expected.items():
        found = {r for f in serve.findings() if f["client_id"] == client_id
                 and f["verdict"] == "violation" for r in f["rules"]}  # fmt: skip
        assert found == wanted, (client_id, found, wanted)
