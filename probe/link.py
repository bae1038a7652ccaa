"""One TCP connection of one named client: bytes out, packets in, everything recorded."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pubproof.judge.packets import FrameError
from pubproof.model.editions import Edition, Limits
from pubproof.probe.evidence import FROM_BROKER, TO_BROKER, Entry, Recorder
from pubproof.probe.frames import FrameSplitter, describe_bytes
from pubproof.probe.target import Target
from pubproof.reference.packets import Packet

SEND_TIMEOUT = 1.0
#: Linux's socket option that sends the ACK of what was read at once (None elsewhere)
QUICKACK: int | None = getattr(socket, "TCP_QUICKACK", None)


class ProbeError(Exception):
    """The probe could not do what a check needs (no connection, connection refused)."""


@dataclass(frozen=True, slots=True)
class Received:
    """A packet read from the broker: its evidence entry and, for PUBLISH and its
    acknowledgements that decode, the reference packet."""

    entry: Entry
    packet: Packet | None

    @property
    def type(self) -> str:
        """The packet type name."""
        name: str = self.entry["type"]
        return name


class Link:
    """A connection to the target, in the name of one client."""

    __slots__ = (
        "_readings", "_recorder", "_splitter", "closed", "edition", "limits", "name",
        "peer_limits", "quick_ack", "sock",
    )  # fmt: skip

    def __init__(
        self,
        sock: socket.socket,
        name: str,
        recorder: Recorder,
        edition: Edition,
        readings: Mapping[str, str],
    ) -> None:
        self.sock = sock
        self.name = name
        self.edition = edition
        self.closed = False
        #: MQTT 5.0: the limits the client declared in CONNECT (what it receives is read
        #: with them) and those the broker declared in CONNACK (what the probe sends)
        self.limits: Limits | None = None
        self.peer_limits: Limits | None = None
        self._recorder = recorder
        self._readings = readings
        self._splitter = FrameSplitter()
        #: acknowledge at once every segment read (Linux's TCP_QUICKACK, set again after
        #: each read): a broker that leaves Nagle's algorithm on (mosquitto's default) holds
        #: a small packet back until the client's last delayed ACK, about 40 ms
        self.quick_ack = False
        sock.settimeout(SEND_TIMEOUT)

    @classmethod
    def open(
        cls,
        target: Target,
        name: str,
        recorder: Recorder,
        timeout: float,
        edition: Edition,
        readings: Mapping[str, str],
    ) -> Link:
        """Connect; ``ProbeError`` (recorded as ``connect-failed``) if the target refuses."""
        try:
            sock = target.connect(timeout)
        except OSError as error:
            recorder.event("connect-failed", name, message=str(error) or type(error).__name__)
            raise ProbeError(f"cannot connect to {target.url}: {error}") from error
        return cls(sock, name, recorder, edition, readings)

    def send(self, data: bytes, *, case: bool = False, breaks: tuple[str, ...] = ()) -> Entry:
        """Send the bytes of one packet (recorded first: the evidence shows the attempt);
        ``breaks``: the client's own rules the packet breaks on purpose."""
        fields, _ = describe_bytes(data, self.edition, self._readings, self.peer_limits)
        entry = self._recorder.packet(
            TO_BROKER, self.name, fields, data, case=case, breaks=breaks
        )
        if self.closed:
            return entry
        try:
            self.sock.sendall(data)
        except OSError:
            self._lost("while sending")
        return entry

    def read(self) -> list[Received]:
        """Read what is there (call when the socket is readable); record each packet."""
        if self.closed:
            return []
        try:
            data = self.sock.recv(65536)
        except (TimeoutError, BlockingIOError):
            return []
        except OSError:
            self._lost("reset")
            return []
        if not data:
            self._lost("end of stream")
            return []
        if self.quick_ack and QUICKACK is not None:
            with contextlib.suppress(OSError):
                self.sock.setsockopt(socket.IPPROTO_TCP, QUICKACK, 1)
        self._splitter.feed(data)
        out: list[Received] = []
        while True:
            try:
                frame = self._splitter.next_frame()
            except FrameError:
                self._unreadable()
                return out
            if frame is None:
                return out
            fields, packet = describe_bytes(frame, self.edition, self._readings, self.limits)
            entry = self._recorder.packet(FROM_BROKER, self.name, fields, frame, case=False)
            out.append(Received(entry, packet))

    def _unreadable(self) -> None:
        rest = self._splitter.rest()
        fields, _ = describe_bytes(rest, self.edition, self._readings, self.limits)
        self._recorder.packet(FROM_BROKER, self.name, fields, rest, case=False)
        self.drop("the stream from the broker cannot be cut into packets")

    def _lost(self, how: str) -> None:
        self.closed = True
        self._recorder.event("closed", self.name, how=how)
        self._close_socket()

    def drop(self, why: str = "") -> None:
        """Close the connection without DISCONNECT (a lost connection, as the broker sees it)."""
        if self.closed:
            return
        self.closed = True
        details: dict[str, Any] = {"why": why} if why else {}
        self._recorder.event("dropped", self.name, **details)
        self._close_socket()

    def _close_socket(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()
