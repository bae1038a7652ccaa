"""Driving ``pubproof serve``'s broker in the tests: sans-IO clients on fake wires, and the
broker as a real process on loopback.

:class:`Clients` holds one :class:`~pubproof.probe.serve.broker.Broker` and hands out
:class:`Peer` objects, each a connection whose bytes the test writes and whose answers it
reads back as the probe's descriptions (``P`` for the PUBLISH family). The clock is the
test's (:attr:`Clients.now`). :class:`ServeProcess` runs ``python -m pubproof serve
--port 0 --json`` and reads its findings as they come.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pubproof.judge import packets as P
from pubproof.model.editions import Edition
from pubproof.probe.frames import FrameSplitter, describe_bytes
from pubproof.probe.serve.broker import Broker
from pubproof.probe.serve.connection import Connection
from pubproof.probe.serve.live import Reporter
from pubproof.probe.serve.misbehave import misbehaviour
from pubproof.probe.serve.settings import ServeSettings
from pubproof.reference.codec import encode
from pubproof.reference.packets import Packet, PubAck, PubComp, Publish, PubRec, PubRel
from pubproof.reference.properties import AckProperties, PublishProperties

V311, V50 = Edition.V311, Edition.V50


@dataclass
class FakeWire:
    """A transport that keeps what the broker writes; ``held`` is what the client has not
    read (a slow reader sets it)."""

    data: bytearray = field(default_factory=bytearray)
    closed: bool = False
    held: int = 0

    def write(self, data: bytes) -> None:
        self.data += data

    def close(self) -> None:
        self.closed = True

    def backlog(self) -> int:
        return self.held


class Peer:
    """One client connection of a test."""

    def __init__(self, clients: Clients, edition: Edition) -> None:
        self.clients = clients
        self.edition = edition
        self.wire = FakeWire()
        self.conn: Connection = clients.broker.open(self.wire, "test", clients.now)
        self.splitter = FrameSplitter()
        self.read_at = 0
        self.packets: list[dict[str, Any]] = []
        self.unread: list[dict[str, Any]] = []

    # -- sending -----------------------------------------------------------------------------

    def send(self, data: bytes) -> Peer:
        self.clients.broker.feed(self.conn, data, self.clients.now)
        return self

    def packet(self, packet: Packet) -> Peer:
        return self.send(encode(packet, edition=self.edition))

    def connect(self, client_id: str, *, clean: bool = True,
                properties: dict[str, Any] | None = None,
                will: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
        """CONNECT; the CONNACK."""
        if self.edition is V50:
            self.send(P.connect(client_id, clean=clean, edition=V50, properties=properties,
                                will=will))  # fmt: skip
        else:
            self.send(P.connect(client_id, clean=clean, edition=self.edition))
        first, *rest = self.read() or [{}]
        self.unread = rest  # what follows the CONNACK (re-sends, queued copies)
        assert first.get("type") == "CONNACK", first
        return first

    def subscribe(self, packet_id: int, *filters: tuple[str, int] | dict[str, Any],
                  properties: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
        """SUBSCRIBE; the SUBACK."""
        if self.edition is V50:
            self.send(P.subscribe(packet_id, list(filters), edition=V50, properties=properties))
        else:
            self.send(P.subscribe(packet_id, list(filters)))
        return self.expect("SUBACK")

    def publish(self, topic: str, payload: bytes, qos: int = 0, packet_id: int | None = None,
                *, retain: bool = False, dup: bool = False,
                properties: PublishProperties | None = None) -> Peer:  # fmt: skip
        if self.edition is V50 and properties is None:
            properties = PublishProperties()
        return self.packet(Publish(topic=topic, payload=payload, qos=qos, packet_id=packet_id,
                                   retain=retain, dup=dup, properties=properties))  # fmt: skip

    def ack(self, kind: str, packet_id: int, code: int = 0) -> Peer:
        props = AckProperties() if self.edition is V50 else None
        ack = {"PUBACK": PubAck, "PUBREC": PubRec, "PUBREL": PubRel, "PUBCOMP": PubComp}[kind]
        return self.packet(ack(packet_id=packet_id, reason_code=code, properties=props))  # type: ignore[arg-type]

    def lose(self) -> None:
        """The network drops the connection."""
        self.clients.broker.lost(self.conn, self.clients.now)

    # -- reading -----------------------------------------------------------------------------

    def read(self) -> list[dict[str, Any]]:
        """What the broker sent since the last read, described."""
        data = bytes(self.wire.data[self.read_at :])
        self.read_at = len(self.wire.data)
        self.splitter.feed(data)
        out, self.unread = self.unread, []
        while (frame := self.splitter.next_frame()) is not None:
            fields, _ = describe_bytes(frame, self.edition, {})
            out.append(fields)
        self.packets += out
        return out

    def expect(self, kind: str) -> dict[str, Any]:
        """The first packet the broker sent since the last read, of type ``kind`` (what
        follows it is left for the next read)."""
        first, *rest = self.read() or [{}]
        self.unread = rest
        assert first.get("type") == kind, first
        return first

    def publishes(self) -> list[dict[str, Any]]:
        return [p for p in self.read() if p.get("type") == "PUBLISH"]

    @property
    def closed(self) -> bool:
        return self.wire.closed


class Clients:
    """A broker and its test clients."""

    def __init__(self, **settings: Any) -> None:
        self.settings = ServeSettings(**settings)
        self.reporter = Reporter(quiet=True)
        tricks = misbehaviour(self.settings.misbehave)
        self.broker = Broker(self.settings, self.reporter, tricks)
        self.now = 0.0

    def peer(self, edition: Edition = V311) -> Peer:
        return Peer(self, edition)

    def client(self, client_id: str, edition: Edition = V311, **connect: Any) -> Peer:
        peer = self.peer(edition)
        connack = peer.connect(client_id, **connect)
        assert connack.get("return_code", connack.get("reason_code")) == 0, connack
        return peer

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self.broker.tick(self.now)

    def findings(self, verdict: str | None = None) -> list[tuple[str, str, tuple[str, ...]]]:
        """(client id, verdict, rules) of every finding reported (of ``verdict``)."""
        return [
            (f.client_id, f.finding.verdict, f.finding.rules)
            for f in self.reporter.kept
            if verdict is None or f.finding.verdict == verdict
        ]

    def stop(self) -> list[tuple[str, str, tuple[str, ...]]]:
        """Shut the broker down; every finding."""
        self.broker.shutdown(self.now)
        return self.findings()


@dataclass
class ServeProcess:
    """``pubproof serve`` as a process of its own, its findings read as they come."""

    args: Sequence[str]
    lines: list[dict[str, Any]] = field(default_factory=list)
    process: subprocess.Popen[str] | None = None
    port: int = 0

    def start(self, timeout: float = 20.0) -> ServeProcess:
        command = [sys.executable, "-m", "pubproof", "serve", "--json", *self.args]
        if not any(a == "--port" or a.startswith("--port=") for a in self.args):
            command += ["--port", "0"]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
        threading.Thread(target=self._read, daemon=True).start()
        end = time.monotonic() + timeout
        while time.monotonic() < end and not self.port:
            if self.process.poll() is not None:
                raise RuntimeError(f"serve exited: {self.lines}")
            time.sleep(0.02)
        if not self.port:
            raise RuntimeError(f"serve did not listen: {self.lines}")
        return self

    def _read(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        for text in self.process.stderr:
            try:
                line = json.loads(text)
            except ValueError:
                line = {"text": text.rstrip("\n")}
            if not isinstance(line, dict):
                line = {"text": text}
            said = str(line.get("serve", ""))
            if "listening on" in said:
                self.port = int(said.split(":")[-1].split()[0])
            self.lines.append(line)

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def findings(self) -> list[dict[str, Any]]:
        return [line for line in self.lines if "verdict" in line]

    def stop(self, sig: int = signal.SIGINT, timeout: float = 20.0) -> dict[str, Any] | None:
        """Stop it with ``sig``; its summary (None after SIGKILL)."""
        process = self.process
        assert process is not None
        if process.poll() is None:
            process.send_signal(sig)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
        time.sleep(0.1)
        return next((line["summary"] for line in self.lines if "summary" in line), None)


def started(args: Sequence[str]) -> Iterator[ServeProcess]:
    """A serve process for a ``with`` block's duration (a generator for fixtures)."""
    serve = ServeProcess(args).start()
    try:
        yield serve
    finally:
        serve.stop()


def interop(folder: Path | None = None) -> Path:
    """The project's ``interop/`` folder."""
    return folder or Path(__file__).resolve().parents[1] / "interop"
