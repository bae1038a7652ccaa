"""What one connection gives the cross-connection stage: its distribution events.

Rules / theory of operation
---------------------------
The per-connection stage (:mod:`.connection`) judges each connection alone; the
cross-connection stage (:mod:`.servers`) follows every message from its publisher through
the server to each subscriber, with the distribution judge
(:mod:`pubproof.judge.distribution`). That stage never sees the packets themselves: each
connection writes, through its :class:`Tap`, one compact row per packet the distribution
judge reads, and only those (what a client sends: CONNECT, DISCONNECT, SUBSCRIBE,
UNSUBSCRIBE, PUBLISH, PUBACK, PUBREC, PUBREL, PUBCOMP; what the server sends: CONNACK,
SUBACK, UNSUBACK, PUBLISH, PUBACK, PUBREC), plus two events of the link itself: ``lost``
(a gap: the capture lost bytes of one direction) and ``closed`` (the first FIN or RST). Every row
is built by one method, :meth:`Tap._row`; a :class:`NullTap` (``--no-distribution``) builds
none.

A row carries no payload: a PUBLISH carries its length and a digest (BLAKE2b, 8 bytes;
an empty payload's digest is empty, so that a zero-byte retained message still deletes
the retained one), which is all the judge compares. A control packet carries the fields
the judge reads, as JSON (``detail``); a 5.0 PUBLISH its properties, as the ``packets``
table writes them. Its topic name is the one the per-connection stage resolved (Topic
Alias included); an acknowledgement carries the topic name of the PUBLISH it
acknowledges, so that the cross-connection stage can partition by topic.

Time: each row carries the capture time of the frame that completed its packet, made
non-decreasing along the connection (``t``; ``skew`` is what was added to a frame stamped
earlier than one before it on the same connection: frames out of time order), the number
of that frame (``at_frame``) and the row's place on the connection (``seq``), which
together keep the order the connection saw whatever the capture's timestamps say.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Final

C2S: Final = "c2s"
S2C: Final = "s2c"
#: the packets the distribution judge reads, by the direction that sends them
READ: Final = {
    C2S: frozenset(
        {"CONNECT", "DISCONNECT", "SUBSCRIBE", "UNSUBSCRIBE", "PUBLISH", "PUBACK", "PUBREC",
         "PUBREL", "PUBCOMP"}
    ),
    S2C: frozenset({"CONNACK", "SUBACK", "UNSUBACK", "PUBLISH", "PUBACK", "PUBREC"}),
}  # fmt: skip
#: the link's own events (no packet)
LOST: Final = "lost"
CLOSED: Final = "closed"
#: what a control packet's row leaves out: credentials and the will (the judge reads none)
_PRIVATE: Final = frozenset({"user_name", "password", "will"})
#: the properties of a control packet the judge reads (the rest are left out)
_SESSION_PROPERTIES: Final = frozenset({
    "session_expiry_interval", "maximum_packet_size", "receive_maximum",
    "topic_alias_maximum", "subscription_identifier",
})  # fmt: skip
#: bytes of the payload digest
DIGEST_BYTES: Final = 8
_BLAKE2B: Final = hashlib.blake2b


def digest(payload: bytes) -> str:
    """A payload's digest: empty for an empty payload (a zero-byte retained message is
    still one), else 8 bytes of BLAKE2b in hex."""
    if not payload:
        return ""
    return _BLAKE2B(payload, digest_size=DIGEST_BYTES).hexdigest()


class Tap:
    """One connection's distribution events, appended to ``rows`` (the sink's ``events``)
    as tuples in the columns of :data:`pubproof.pipeline.tables.EVENTS`."""

    __slots__ = (
        "capture", "close_at", "connection", "flows", "last", "on", "rows", "seq", "server",
    )  # fmt: skip

    def __init__(self, capture: str, server: str, connection: str, rows: list[Any]) -> None:
        self.capture = capture
        self.server = server
        self.connection = connection
        self.rows = rows
        #: whether it writes (False: :class:`NullTap`, which writes nothing and keeps no
        #: flows: each method returns at once)
        self.on = True
        self.seq = 0
        self.last = 0.0  # the latest time seen on the connection
        #: per direction of a PUBLISH, its packet identifier -> topic name, while its flow
        #: is under way (its acknowledgements are routed to its topic)
        self.flows: dict[str, dict[int, str | None]] = {C2S: {}, S2C: {}}
        #: where the link ended: the frame of its latest FIN or RST, and its time
        self.close_at: tuple[int, float] | None = None

    def _row(
        self,
        direction: str,
        at: int,
        t: float,
        frame: int,
        offset: int,
        kind: str,
        topic: str | None,
        qos: int | None,
        dup: bool | None,
        retain: bool | None,
        packet_id: int | None,
        code: int | None,
        payload_digest: str | None,
        size: int | None,
        detail: str | None,
    ) -> None:
        skew = 0.0
        last = self.last
        if t < last:  # stamped earlier than a frame before it: kept in the connection's order
            skew = last - t
            t = last
        else:
            self.last = t
        self.seq += 1
        self.rows.append((
            self.capture, self.server, topic, t, at, self.connection, self.seq, frame, offset,
            direction, kind, qos, dup, retain, packet_id, code, payload_digest, size, detail,
            skew,
        ))  # fmt: skip

    def publish(
        self,
        direction: str,
        at: int,
        t: float,
        frame: int,
        offset: int,
        dup: bool,
        qos: int,
        retain: bool,
        topic: str | None,
        packet_id: int | None,
        payload: bytes,
        properties: str | None,
    ) -> None:
        """A PUBLISH (``topic``: its topic name, alias resolved; None when no mapping
        was known; ``properties``: 5.0's, as JSON)."""
        if not self.on:
            return
        if packet_id is not None:
            self.flows[direction][packet_id] = topic
        self._row(
            direction, at, t, frame, offset, "PUBLISH", topic, qos, dup, retain, packet_id,
            None, digest(payload), len(payload), properties,
        )  # fmt: skip

    def ack(
        self,
        direction: str,
        at: int,
        t: float,
        frame: int,
        offset: int,
        kind: str,
        packet_id: int,
        code: int | None,
    ) -> None:
        """An acknowledgement (``code``: its 5.0 Reason Code, None in 3.x), routed to the
        topic of the PUBLISH whose flow it belongs to."""
        if not self.on:
            return
        # PUBACK, PUBREC and PUBCOMP answer the other direction's PUBLISH; PUBREL follows
        # its own direction's PUBREC
        sender = direction if kind == "PUBREL" else (S2C if direction == C2S else C2S)
        flows = self.flows[sender]
        topic = flows.get(packet_id)
        if kind == "PUBACK" or kind == "PUBCOMP" or (kind == "PUBREC" and (code or 0) >= 0x80):
            flows.pop(packet_id, None)  # the flow is over
        if kind not in READ[direction]:
            return
        self._row(
            direction, at, t, frame, offset, kind, topic, None, None, None, packet_id, code,
            None, None, None,
        )  # fmt: skip

    def control(
        self, direction: str, at: int, t: float, frame: int, offset: int, fields: Mapping[str, Any]
    ) -> None:
        """A control packet (its description's fields), if the judge reads it."""
        if not self.on:
            return
        kind = str(fields.get("type"))
        if kind not in READ[direction]:
            return
        code = fields.get("reason_code", fields.get("return_code"))
        kept = {k: v for k, v in fields.items() if k not in _PRIVATE}
        properties = fields.get("properties")
        if isinstance(properties, Mapping):
            kept["properties"] = {k: v for k, v in properties.items() if k in _SESSION_PROPERTIES}
        self._row(
            direction, at, t, frame, offset, kind, None, None, None, None,
            fields.get("packet_id"), code if isinstance(code, int) else None, None, None,
            json.dumps(kept, sort_keys=True, ensure_ascii=False, default=_jsonable),
        )  # fmt: skip

    def lost(self, direction: str, at: int, t: float) -> None:
        """A gap: the capture lost bytes of ``direction`` here (whatever they held is
        unknown, so are the flows under way)."""
        if not self.on:
            return
        self.flows[direction].clear()
        self._row(direction, at, t, at, 0, LOST, None, None, None, None, None, None, None,
                  None, None)  # fmt: skip

    def closed(self) -> None:
        """The link ended (at its latest FIN or RST, :attr:`close_at`)."""
        if self.close_at is None or not self.on:
            return
        at, t = self.close_at
        self._row(C2S, at, t, at, 0, CLOSED, None, None, None, None, None, None, None, None,
                  None)  # fmt: skip


class NullTap(Tap):
    """A connection's tap when the cross-connection stage is off (``pubproof check
    --no-distribution``): it writes nothing (:attr:`Tap.on` is False)."""

    __slots__ = ()

    def __init__(self, capture: str, server: str, connection: str, rows: list[Any]) -> None:
        super().__init__(capture, server, connection, rows)
        self.on = False


def _jsonable(value: Any) -> Any:
    """What JSON cannot hold as it is: bytes as hex, tuples and sets as lists."""
    if isinstance(value, bytes | bytearray):
        return value.hex()
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    raise TypeError(f"{type(value).__name__} in a control packet's fields")
