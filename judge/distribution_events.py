"""What the distribution judge is fed: the packets of several links of one server, as
events in time order, wherever they come from.

Theory of operation
-------------------
The distribution judge (:mod:`pubproof.judge.distribution`) reads one server's traffic on
every link it can see: each packet a client sent it (``c2s``) and each packet it sent a
client (``s2c``), with the link (``conn``), the time (seconds, on one clock for all
links), and where the packet came from (``origin``: a frame of a capture, an entry of a
probe's evidence), so that a finding can show its evidence across the links. The packet
is the trace form ``P`` (PUBLISH and its acknowledgements) or the description of a
control packet (:mod:`pubproof.judge.packets`): CONNECT with its ``client_id`` and clean
flag, SUBSCRIBE with its ``subscriptions``, SUBACK with ``granted`` (3.x) or
``reason_codes`` (5.0), and so on. An event without a packet says that the link closed,
or (``lost``, a capture's) that the capture lost some of the link's traffic there.

A probe's evidence names its links by the probe's client names and its directions
``to-broker`` and ``from-broker`` (``to-client`` and ``from-client`` for the client probe,
where pubproof is the server: nothing here to judge), which :func:`from_probe` turns into
events.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

C2S, S2C = "c2s", "s2c"
#: the probe's directions, as the link's
PROBE_DIRECTIONS = {"to-broker": C2S, "from-broker": S2C}
#: the events of a probe's evidence that end a link
CLOSING_EVENTS = frozenset({"closed", "dropped"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """One packet on one link of the server, or the link closing (``packet`` None)."""

    t: float  # seconds, one clock for every link
    conn: str  # the link
    direction: str = C2S  # C2S: the client sent it; S2C: the server did
    packet: Mapping[str, Any] | None = None
    #: where it came from, for the evidence (a capture's frame, a probe's entry)
    origin: Mapping[str, Any] = field(default_factory=dict)
    #: its place among the events the judge was fed (the judge numbers them): two events
    #: of one instant are still in the order seen
    order: int = 0
    #: no packet: the capture lost some of the link's traffic here (a gap), not a close
    lost: bool = False

    def __post_init__(self) -> None:
        if self.lost and self.packet is not None:
            raise ValueError("a lost event has no packet")
        if self.direction not in (C2S, S2C):
            raise ValueError(f"a direction is {C2S!r} or {S2C!r}, not {self.direction!r}")
        if self.t != self.t or self.t < 0:  # NaN or before the clock starts
            raise ValueError(f"a time is a number of seconds from 0, not {self.t!r}")

    @property
    def type(self) -> str | None:
        """The packet's type, None for a link closing."""
        return None if self.packet is None else str(self.packet.get("type"))

    def evidence(self) -> dict[str, Any]:
        """The event as a trace entry: the packet with ``dir``, ``conn`` and ``t`` (or the
        ``closed`` event), with the fields of its origin that say where it was seen."""
        entry: dict[str, Any] = {"conn": self.conn, "t": round(self.t, 6)}
        if self.packet is None:
            entry["event"] = "lost" if self.lost else "closed"
        else:
            entry["dir"] = self.direction
            entry.update({k: v for k, v in self.packet.items() if k not in ("dir", "client")})
        for key in ("frame", "offset", "index", "client", "hex"):
            if key in self.origin:
                entry.setdefault(key, self.origin[key])
        return entry


def from_probe(entries: Sequence[Mapping[str, Any]]) -> Iterator[Event]:
    """The events of a broker probe's evidence (every client's links; the probe's own
    markers, waits and errors left out). A client's link is its name with the number of
    its CONNECT, so that a reconnection is a new link of the same client."""
    return ProbeEvents().read(entries)


class ProbeEvents:
    """:func:`from_probe` on evidence that grows: :meth:`read` turns only the entries not
    read yet into events (an entry's event rests on it and the CONNECTs before it), so the
    events of the evidence read in parts are those of the whole of it."""

    __slots__ = ("fed", "links")

    def __init__(self) -> None:
        self.links: dict[str, int] = {}  # each client's CONNECTs so far
        self.fed = 0  # the entries read so far

    def read(self, entries: Sequence[Mapping[str, Any]]) -> Iterator[Event]:
        """The events of the entries of ``entries`` from the first not read yet."""
        start = self.fed
        if start > len(entries):
            raise ValueError(f"the evidence shrank: {len(entries)} entries, {start} read")
        for index in range(start, len(entries)):
            self.fed = index + 1
            event = self._event(index, entries[index])
            if event is not None:
                yield event

    def _event(self, index: int, entry: Mapping[str, Any]) -> Event | None:
        client = entry.get("client")
        if client is None:
            return None
        name = str(client)
        event = entry.get("event")
        direction = PROBE_DIRECTIONS.get(str(entry.get("dir")))
        if direction is None and event not in CLOSING_EVENTS:
            return None
        links = self.links
        if entry.get("type") == "CONNECT" and direction == C2S:
            links[name] = links.get(name, 0) + 1
        conn = f"{name}#{links.get(name, 1)}"
        t = float(entry.get("t", 0.0))
        origin = {"index": index, "client": name}
        if event in CLOSING_EVENTS:
            return Event(t=t, conn=conn, origin=origin)
        if "error" in entry or entry.get("case"):
            return None  # the probe's deliberate faults are the wire judges' (and the link's)
        packet = {k: v for k, v in entry.items() if k not in ("dir", "client", "t", "hex")}
        assert direction is not None
        return Event(t=t, conn=conn, direction=direction, packet=packet, origin=origin)
