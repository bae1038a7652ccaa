"""The rows each connection writes, one named tuple per table (columns as in :mod:`.tables`),
and the sink that collects them.

Rows travel as tuples (cheap to pickle between Spark workers); a named tuple is one, with
its columns named where it is built. The packet rows, one per packet, are built as plain
tuples in :class:`PacketRow`'s order (``pubproof.pipeline.connection_packets``: a named tuple costs
a second tuple per packet). ``tests/test_pipeline_rows.py`` holds each row's fields equal
to its table's columns.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple


class PacketRow(NamedTuple):
    """A row of ``packets``: one MQTT packet."""

    capture: str
    connection: str
    direction: str
    frame: int
    first_frame: int
    offset: int
    length: int
    type: str
    dup: bool | None
    qos: int | None
    retain: bool | None
    topic: str | None
    packet_id: int | None
    payload_len: int | None
    error_rule: str | None
    error_kind: str | None
    #: the connection's edition ("3.1", "3.1.1", "5.0"; null when its level is unknown)
    edition: str | None
    #: MQTT 5.0: the packet's Reason Code (null in 3.x, and for SUBACK and UNSUBACK, whose
    #: codes are one per topic filter: the evidence of a finding shows them)
    reason_code: int | None
    #: MQTT 5.0: the Topic Alias a PUBLISH carried (``topic`` is then the resolved name)
    topic_alias: int | None
    #: MQTT 5.0: the packet's properties as a JSON object (null in 3.x)
    properties: str | None


class ViolationRow(NamedTuple):
    """A row of ``violations``: one finding, with the judge that produced it (``source``)."""

    capture: str
    connection: str
    direction: str
    frame: int
    offset: int
    rule: str | None
    rules: str
    #: what the other end broke to bring the finding about (comma-separated; never the
    #: judged end's: :mod:`pubproof.model.duties`)
    provoked: str
    kind: str
    source: str
    role: str
    endpoint: str
    message: str
    evidence: str


class ConnectionRow(NamedTuple):
    """A row of ``connections``: one TCP connection and what became of its bytes."""

    capture: str
    connection: str
    client: str
    server: str
    client_id: str | None
    protocol: str | None
    level: int | None
    edition: str | None
    clean_session: bool | None
    first_frame: int
    last_frame: int
    frames: int
    bytes_c2s: int
    bytes_s2c: int
    framed_bytes: int
    missing_bytes: int
    unparsed: str
    packets: int
    violations: int
    tolerated: int
    #: findings of a SHOULD not followed (:data:`pubproof.judge.findings.DEVIATION`)
    deviations: int
    closed: str | None
    status: str


class QuarantineRow(NamedTuple):
    """A row of ``quarantine``: frames (or a connection's bytes) set aside, with the reason."""

    capture: str
    frame: int | None
    last_frame: int | None
    frames: int
    reason: str
    connection: str | None
    offset: int | None
    bytes: int | None
    detail: str


class EventRow(NamedTuple):
    """A row of ``events``: one packet the distribution judge reads, or a link's own event
    (``lost``, ``closed``), as a connection's :class:`~pubproof.pipeline.tap.Tap` writes
    it for the cross-connection stage (a scratch table: removed once that stage is done).
    Built as a plain tuple in this order."""

    capture: str
    server: str
    #: a PUBLISH's topic name (an acknowledgement's: its PUBLISH's); null for the rest
    topic: str | None
    t: float  # capture time, non-decreasing along the connection
    at_frame: int  # the frame that completed the packet
    connection: str
    seq: int  # its place among the connection's events
    frame: int  # the frame that carried its last byte (as in ``packets``)
    offset: int
    direction: str
    type: str
    qos: int | None
    dup: bool | None
    retain: bool | None
    packet_id: int | None
    code: int | None  # CONNACK's return code, a 5.0 Reason Code
    digest: str | None  # a PUBLISH's payload digest (:func:`.tap.digest`)
    size: int | None  # a PUBLISH's payload length
    detail: str | None  # a control packet's fields, a 5.0 PUBLISH's properties (JSON)
    skew: float  # seconds added to keep ``t`` non-decreasing (frames out of time order)


class DeliveryRow(NamedTuple):
    """A row of ``deliveries``: one message a server received (``direction`` ``in``) or
    one copy it sent (``out``), as the cross-connection stage followed it."""

    capture: str
    server: str
    topic: str
    direction: str  # "in": a message received; "out": a copy sent
    connection: str  # the publisher's (in) or the subscriber's (out)
    client_id: str | None
    frame: int
    offset: int
    time: float  # capture time of the packet
    qos: int
    dup: bool
    retain: bool
    packet_id: int | None
    payload_digest: str
    payload_len: int
    #: the message: its publisher's connection, frame and stream offset (for a copy of no
    #: message seen: null)
    in_connection: str | None
    in_frame: int | None
    in_offset: int | None
    #: 5.0: whether a copy's properties differ from the message's; null otherwise
    properties_changed: bool | None
    latency: float | None  # a copy: seconds from its message's PUBLISH
    #: what became of it: a message ``delivered``, ``no-subscriber``, ``missing``,
    #: ``refused``, or ``unknown:<why>``; a copy ``copy``, ``again`` (another copy of a
    #: message the session had), ``unowed`` (a finding), or ``unknown:<why>``
    outcome: str
    copies: int | None  # a message: the copies of it seen


class Columns:
    """A table's rows held column by column: one list per column, in the table's order.

    The cross-connection stage makes its ``deliveries`` rows this way (a copy's 22 values
    appended to 22 lists): no tuple per row, and Arrow converts a list of one type a
    column at a time (``pa.array``), about twice as fast as it converts a list of row
    tuples as a struct array (measured on 240,000 rows of ``deliveries``: 0.23 against
    0.51 s). The writers (:class:`~pubproof.pipeline.output.TableWriter`,
    :class:`~pubproof.pipeline.staging.RunWriter`) take either form. Iterating gives the
    rows as tuples; two are equal when their rows are."""

    __slots__ = ("lists",)

    def __init__(self, width: int) -> None:
        self.lists: list[list[Any]] = [[] for _ in range(width)]

    @property
    def width(self) -> int:
        """The number of columns."""
        return len(self.lists)

    def __len__(self) -> int:
        return len(self.lists[0]) if self.lists else 0

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return zip(*self.lists, strict=True)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Columns) and self.lists == other.lists

    def append(self, row: tuple[Any, ...]) -> None:
        """One more row (of the table's width: checked)."""
        if len(row) != len(self.lists):
            raise ValueError(f"a row of {len(row)} values for {len(self.lists)} columns")
        for column, value in zip(self.lists, row, strict=True):
            column.append(value)

    def extend(self, other: Columns) -> None:
        """``other``'s rows after these (of the same width)."""
        if other.width != self.width:
            raise ValueError(f"{other.width} columns added to {self.width}")
        for column, more in zip(self.lists, other.lists, strict=True):
            column.extend(more)

    def take(self, count: int) -> Columns:
        """The first ``count`` rows, removed from these."""
        taken = Columns(0)
        taken.lists = [column[:count] for column in self.lists]
        for column in self.lists:
            del column[:count]
        return taken

    def clear(self) -> None:
        """No rows."""
        for column in self.lists:
            column.clear()


@dataclass(slots=True)
class Sink:
    """Rows of each table, as tuples in column order (see :mod:`.tables`)."""

    packets: list[tuple[Any, ...]] = field(default_factory=list)
    violations: list[tuple[Any, ...]] = field(default_factory=list)
    connections: list[tuple[Any, ...]] = field(default_factory=list)
    quarantine: list[tuple[Any, ...]] = field(default_factory=list)
    events: list[tuple[Any, ...]] = field(default_factory=list)

    def drain(self) -> Iterable[tuple[str, tuple[Any, ...]]]:
        """Every row so far, tagged with its table; the sink is empty afterwards."""
        for name in ("packets", "violations", "connections", "quarantine", "events"):
            rows: list[tuple[Any, ...]] = getattr(self, name)
            for row in rows:
                yield name, row
            rows.clear()
