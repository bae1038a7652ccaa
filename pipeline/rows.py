"""The rows each connection writes, one named tuple per table (columns as in :mod:`.tables`),
and the sink that collects them.

Rows travel as tuples (cheap to pickle between Spark workers); a named tuple is one, with
its columns named where it is built. The packet rows, one per packet, are built as plain
tuples in :class:`PacketRow`'s order (``pubproof.pipeline.connection_packets``: a named tuple costs
a second tuple per packet). ``tests/test_pipeline_rows.py`` holds each row's fields equal
to its table's columns.
"""

from __future__ import annotations

from collections.abc import Iterable
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


@dataclass(slots=True)
class Sink:
    """Rows of each table, as tuples in column order (see :mod:`.tables`)."""

    packets: list[tuple[Any, ...]] = field(default_factory=list)
    violations: list[tuple[Any, ...]] = field(default_factory=list)
    connections: list[tuple[Any, ...]] = field(default_factory=list)
    quarantine: list[tuple[Any, ...]] = field(default_factory=list)

    def drain(self) -> Iterable[tuple[str, tuple[Any, ...]]]:
        """Every row so far, tagged with its table; the sink is empty afterwards."""
        for name in ("packets", "violations", "connections", "quarantine"):
            rows: list[tuple[Any, ...]] = getattr(self, name)
            for row in rows:
                yield name, row
            rows.clear()
