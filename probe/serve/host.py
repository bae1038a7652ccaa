"""What the packet handlers (:mod:`.control`, :mod:`.flows`) need of the broker: the one
interface they are written against, so that they and :class:`pubproof.probe.serve.broker.
Broker`, which calls them, do not import each other."""

from __future__ import annotations

from typing import Any, Protocol

from pubproof.judge.findings import Finding
from pubproof.model.editions import Edition
from pubproof.probe.serve.connect import Will
from pubproof.probe.serve.connection import ClientSession, Connection
from pubproof.probe.serve.engine import Copy, Engine, PublishOutcome
from pubproof.probe.serve.live import Reporter
from pubproof.probe.serve.rules import ServeRule
from pubproof.probe.serve.settings import ServeSettings
from pubproof.probe.serve.tricks import Tricks
from pubproof.reference.packets import Packet, Publish


class Host(Protocol):
    """The broker, as its packet handlers see it."""

    settings: ServeSettings
    engine: Engine
    sessions: dict[str, ClientSession]
    reporter: Reporter
    tricks: Tricks
    now: float

    def assign_client_id(self) -> str: ...

    def type_name(self, frame: bytes) -> str: ...

    def send_raw(
        self, conn: Connection, data: bytes, *, kind: str, fields: dict[str, Any] | None = None
    ) -> None: ...

    def feed_judge(
        self, conn: Connection, direction: str, fields: dict[str, Any] | None
    ) -> None: ...

    def found(
        self, conn: Connection | None, finding: Finding, packet: bytes | None = None
    ) -> None: ...

    def refuse(
        self, conn: Connection, rule: ServeRule, message: str, *, source: str,
        verdict: str = ..., disconnect: bool = ...,
    ) -> None: ...  # fmt: skip

    def close_for(
        self, conn: Connection, reason_code: int | None, why: str, fault: str = ...
    ) -> None: ...

    def close(self, conn: Connection, why: str, *, by_client: bool = False) -> None: ...

    def send_case(self, conn: Connection, data: bytes) -> None: ...

    def publish_will(self, client_id: str, edition: Edition, will: Will) -> None: ...

    # -- hooks (the store's, the misbehaviours') ---------------------------------------------

    def connected(self, session: ClientSession) -> None: ...

    def session_ended(self, client_id: str) -> None: ...

    def subscribed(self, session: ClientSession) -> None: ...

    def owned(self, outcome: PublishOutcome) -> None: ...

    def sent(self, session: ClientSession, packet: Publish, copy: Copy) -> None: ...

    def completed(self, session: ClientSession, packet_id: int) -> None: ...

    def on_packet(self, conn: Connection, packet: Packet) -> None: ...
