"""A scripted exchange between clients and one server, as the distribution judge's events,
and the findings it gives that count against the server: what the distribution judge's
tests (live and on captures) share."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pubproof.judge.distribution import judge_events
from pubproof.judge.distribution_events import C2S, S2C, Event
from pubproof.judge.findings import MISSING, VIOLATION, Finding

V311, V50 = 4, 5


@dataclass
class Server:
    """A scripted exchange between clients and one server, as the judge's events."""

    level: int = V311
    t: float = 0.0
    events: list[Event] = field(default_factory=list)
    ids: dict[str, int] = field(default_factory=dict)
    #: the sessions it holds: client identifier -> (Session Expiry Interval in seconds, or
    #: None for 3.x's kept for ever; when its link closed, or None while connected)
    sessions: dict[str, tuple[int | None, float | None]] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)  # connection -> client identifier

    def _at(self, conn: str, direction: str, packet: Mapping[str, Any] | None) -> None:
        self.t += 0.01
        self.events.append(Event(t=self.t, conn=conn, direction=direction, packet=packet))

    def connect(self, conn: str, client_id: str | None = None, *, clean: bool = True,
                expiry: int = 0, maximum_packet_size: int | None = None,
                session_present: bool | None = None,
                receive_maximum: int | None = None) -> None:  # fmt: skip
        """A CONNECT and its CONNACK; ``session_present`` None: the flag a server that keeps
        sessions as the standard says sends."""
        who = client_id or conn
        present = self._resumes(who, clean)
        # 3.x: CleanSession 1 ends the session with the connection, 0 keeps it for ever; 5.0:
        # the Session Expiry Interval says (0: it ends with the connection)
        kept: int | None = expiry if self.level == V50 else 0 if clean else None
        self.sessions[who], self.links[conn] = (kept, None), who
        packet: dict[str, Any] = {"type": "CONNECT", "client_id": client_id or conn,
                                  "level": self.level}  # fmt: skip
        if self.level == V50:
            packet["clean_start"] = clean
            packet["properties"] = {"session_expiry_interval": expiry} if expiry else {}
            if maximum_packet_size is not None:
                packet["properties"]["maximum_packet_size"] = maximum_packet_size
            if receive_maximum is not None:
                packet["properties"]["receive_maximum"] = receive_maximum
        else:
            packet["clean_session"] = clean
        self._at(conn, C2S, packet)
        code = "reason_code" if self.level == V50 else "return_code"
        sent = present if session_present is None else session_present
        self._at(conn, S2C, {"type": "CONNACK", "session_present": sent, code: 0})

    def _resumes(self, client_id: str, clean: bool) -> bool:
        held = self.sessions.get(client_id)
        if clean or held is None:
            return False
        expiry, closed = held
        return closed is None or expiry is None or self.t < closed + expiry

    def subscribe(self, conn: str, *filters: tuple[str, int], granted: list[int] | None = None,
                  ident: int | None = None, **options: Any) -> None:  # fmt: skip
        packet_id = self.ids[conn] = self.ids.get(conn, 0) + 1
        wanted = [{"filter": f, "qos": q, **options} for f, q in filters]
        subscribe = {"type": "SUBSCRIBE", "packet_id": packet_id, "subscriptions": wanted,
                     "subscription_identifier": ident}  # fmt: skip
        self._at(conn, C2S, subscribe)
        codes = granted if granted is not None else [q for _, q in filters]
        key = "reason_codes" if self.level == V50 else "granted"
        self._at(conn, S2C, {"type": "SUBACK", "packet_id": packet_id, key: codes})

    def publish(self, conn: str, topic: str, payload: bytes, qos: int = 0, *, retain: bool = False,
                properties: dict[str, Any] | None = None) -> None:  # fmt: skip
        packet_id = None
        if qos:
            packet_id = self.ids[conn] = self.ids.get(conn, 0) + 1
        packet = {"type": "PUBLISH", "dup": False, "qos": qos, "retain": retain, "topic": topic,
                  "packet_id": packet_id, "payload_hex": payload.hex()}  # fmt: skip
        if self.level == V50:
            packet["properties"] = properties or {}
        self._at(conn, C2S, packet)
        if qos == 1:
            self._at(conn, S2C, {"type": "PUBACK", "packet_id": packet_id})
        elif qos == 2:
            self._at(conn, S2C, {"type": "PUBREC", "packet_id": packet_id})
            self._at(conn, C2S, {"type": "PUBREL", "packet_id": packet_id})
            self._at(conn, S2C, {"type": "PUBCOMP", "packet_id": packet_id})

    def deliver(self, conn: str, topic: str, payload: bytes, qos: int = 0, *,
                retain: bool = False, dup: bool = False,
                properties: dict[str, Any] | None = None,
                acknowledged: bool = True) -> int | None:  # fmt: skip
        """A PUBLISH to a client and (``acknowledged``) the client's acknowledgement; its
        packet identifier."""
        packet_id = None
        if qos:
            packet_id = self.ids[conn] = self.ids.get(conn, 0) + 1
        packet = {"type": "PUBLISH", "dup": dup, "qos": qos, "retain": retain, "topic": topic,
                  "packet_id": packet_id, "payload_hex": payload.hex()}  # fmt: skip
        if self.level == V50:
            packet["properties"] = properties or {}
        self._at(conn, S2C, packet)
        if not acknowledged or packet_id is None:
            return packet_id
        if qos == 1:
            self._at(conn, C2S, {"type": "PUBACK", "packet_id": packet_id})
        elif qos == 2:
            self._at(conn, C2S, {"type": "PUBREC", "packet_id": packet_id})
            self._at(conn, S2C, {"type": "PUBREL", "packet_id": packet_id})
            self._at(conn, C2S, {"type": "PUBCOMP", "packet_id": packet_id})
        return packet_id

    def acknowledge(self, conn: str, packet_id: int, kind: str = "PUBACK", code: int = 0) -> None:
        """The client's acknowledgement (``kind``) of a PUBLISH the server sent it."""
        self._at(conn, C2S, {"type": kind, "packet_id": packet_id, "reason_code": code})

    def close(self, conn: str) -> None:
        self.t += 0.01
        who = self.links.pop(conn, None)
        if who is not None and who in self.sessions:
            expiry, _ = self.sessions[who]
            if expiry == 0:
                del self.sessions[who]
            else:
                self.sessions[who] = (expiry, self.t)
        self.events.append(Event(t=self.t, conn=conn))

    def wait(self, seconds: float) -> None:
        self.t += seconds

    def judge(self, **readings: str) -> list[Finding]:
        return judge_events(self.events, readings)


def rules(found: list[Finding]) -> set[tuple[str, str]]:
    """(verdict, rule) of each finding that is not a pass or a toleration."""
    return {(f.verdict, r) for f in bad(found) for r in f.rules}


def bad(found: list[Finding]) -> list[Finding]:
    """The findings against the server (what it may do, tolerated, is not one)."""
    return [f for f in found if f.verdict in (VIOLATION, MISSING)]
