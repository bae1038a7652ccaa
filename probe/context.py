"""What a check runs in: the target, the edition, its clients, its deadline and its evidence.

A check's actions call :meth:`CheckContext.wait_for` whenever they need the broker to do
something; the context reads every open connection of the check meanwhile (so packets to
other clients are answered and recorded too). A wait that runs out is recorded as a
``timeout`` event, followed by a liveness probe (PINGREQ on that connection, then a fresh
connection if that goes unanswered), and ends the check's actions with :class:`Stalled`:
the judge then tells a broker that hangs (``no-answer``) from one that answers but not what
it owes (``violation``).
"""

from __future__ import annotations

import contextlib
import selectors
import time
from collections.abc import Callable, Mapping

from pubproof.judge import packets as control
from pubproof.model.editions import Edition
from pubproof.probe.client import Client
from pubproof.probe.evidence import LIVENESS_CLIENT, Recorder
from pubproof.probe.link import Link, ProbeError
from pubproof.probe.target import Target
from pubproof.probe.timing import Deadline, Timing


class Stalled(Exception):
    """A wait ran out (recorded as a ``timeout`` event, with a liveness probe after it)."""


class BrokerClosed(Exception):
    """The broker closed a connection the check was waiting on (recorded as ``closed``)."""


class CheckContext:
    """The running state of one check."""

    def __init__(
        self,
        *,
        target: Target,
        edition: Edition,
        readings: Mapping[str, str],
        timing: Timing,
        run_id: str,
        check_id: str,
        check_no: int,
    ) -> None:
        self.target = target
        self.edition = edition
        self.readings = readings
        self.timing = timing
        self.run_id = run_id
        self.check_id = check_id
        self.check_no = check_no
        self.deadline = Deadline(timing.check)
        self.recorder = Recorder()
        self.clients: list[Client] = []
        self._extra_links: list[Link] = []
        self._at_end: list[Callable[[], None]] = []
        self._finishing = False
        self.hung = False  # a wait ran out and the broker showed no sign of life after it

    # -- names ---------------------------------------------------------------------------

    def topic(self, leaf: str = "t") -> str:
        """A topic name of this check and run only (no other check or run sees it)."""
        return f"pubproof/{self.run_id}/{self.check_id}/{leaf}"

    def client(self, name: str) -> Client:
        """A new client; its client id is unique to this run and at most 23 characters
        (MQTT 3.1 allows no more)."""
        client_id = f"pp{self.run_id}c{self.check_no:03d}n{len(self.clients)}"
        client = Client(self, name, client_id)
        self.clients.append(client)
        return client

    # -- time ----------------------------------------------------------------------------

    def cap(self, seconds: float) -> float:
        """``seconds``, or what is left of the check's deadline if that is less."""
        return self.deadline.cap(seconds)

    # -- reading -------------------------------------------------------------------------

    def pump(self, timeout: float) -> bool:
        """Read every open connection for up to ``timeout`` seconds; hand packets to their
        clients. Whether anything arrived."""
        open_clients = [c for c in self.clients if c.link is not None and not c.link.closed]
        if not open_clients:
            time.sleep(max(0.0, timeout))
            return False
        with selectors.DefaultSelector() as selector:
            for client in open_clients:
                assert client.link is not None
                selector.register(client.link.sock, selectors.EVENT_READ, client)
            ready = selector.select(max(0.0, timeout))
        for key, _ in ready:
            client = key.data
            assert isinstance(client, Client) and client.link is not None
            for received in client.link.read():
                client.handle(received)
        return bool(ready)

    def wait_for(
        self,
        client: Client,
        what: str,
        done: Callable[[], bool],
        *,
        closed_ok: bool = False,
    ) -> None:
        """Read until ``done()``; ``Stalled`` after the answer timeout, ``BrokerClosed`` if
        the client's connection closes first (unless ``closed_ok``)."""
        end = time.monotonic() + self.cap(self.timing.answer)
        started = time.monotonic()
        while not done():
            if not client.connected:
                if closed_ok:
                    return
                raise BrokerClosed(f"{client.name}: the connection closed while waiting for {what}")
            left = end - time.monotonic()
            if left <= 0:
                waited = round(time.monotonic() - started, 3)
                if not self._finishing:
                    self.recorder.event("timeout", client.name, waiting_for=what, seconds=waited)
                    self.hung = not self.liveness(client)
                raise Stalled(f"{client.name}: no {what} within {waited} s")
            self.pump(left)

    def quiet(self, seconds: float | None = None) -> None:
        """Listen for a while for anything more (duplicates, late packets)."""
        window = self.cap(self.timing.quiet if seconds is None else seconds)
        end = time.monotonic() + window
        while (left := end - time.monotonic()) > 0:
            self.pump(left)
        self.recorder.event("quiet", None, seconds=round(window, 3))

    # -- after a wait ran out ------------------------------------------------------------

    def liveness(self, client: Client) -> bool:
        """Is the broker there at all? PINGREQ on the client's connection; if that goes
        unanswered, CONNECT on a fresh one. Recorded; bounded by twice the liveness
        timeout. Whether the broker answered either."""
        budget = self.timing.liveness
        if client.connected:
            before = client.count("PINGRESP")
            client.send_raw(control.PINGREQ)
            end = time.monotonic() + budget
            while client.count("PINGRESP") == before and client.connected:
                left = end - time.monotonic()
                if left <= 0:
                    break
                self.pump(left)
            if client.count("PINGRESP") > before:
                return True
        return self._fresh_connection(budget)

    def _fresh_connection(self, budget: float) -> bool:
        try:
            link = Link.open(
                self.target, LIVENESS_CLIENT, self.recorder, budget, self.edition, self.readings
            )
        except ProbeError:
            return False
        self._extra_links.append(link)
        client_id = f"pp{self.run_id}c{self.check_no:03d}live"
        link.send(control.connect(client_id, clean=True, edition=self.edition))
        end = time.monotonic() + budget
        answered = False
        while not link.closed and not answered:
            left = end - time.monotonic()
            if left <= 0:
                break
            with selectors.DefaultSelector() as selector:
                selector.register(link.sock, selectors.EVENT_READ)
                if not selector.select(left):
                    continue
            answered = any(r.type == "CONNACK" for r in link.read())
        if not link.closed:
            link.send(control.DISCONNECT)
            link.drop()
        return answered

    # -- the end -------------------------------------------------------------------------

    def at_end(self, action: Callable[[], None]) -> None:
        """Run an action when the check ends, whatever happened (not evidence): delete a
        retained message, discard a session."""
        self._at_end.append(action)

    def finish(self) -> None:
        """Run the end actions under a fresh short deadline (not if the broker hung), then
        DISCONNECT every client."""
        self.recorder.enabled = False
        self._finishing = True
        self.deadline = Deadline(2 * self.timing.answer)
        for action in self._at_end if not self.hung else ():
            with contextlib.suppress(ProbeError, Stalled, BrokerClosed, OSError):
                action()
        for client in self.clients:
            with contextlib.suppress(OSError):
                client.disconnect()
        for link in self._extra_links:
            link.drop()

    def abort(self) -> None:
        """Close every socket at once (the check overran its hard deadline)."""
        for client in self.clients:
            if client.link is not None:
                client.link.closed = True
                client.link.sock.close()
        for link in self._extra_links:
            link.sock.close()
