"""Where a broker may be made to misbehave: the hooks :class:`Tricks` the broker calls at
each point where a server has a choice to make, which do nothing here.

``--misbehave NAME`` (:mod:`.misbehave`) and ``probe-client``'s checks (its server role,
:mod:`pubproof.probe.clients.server`) put their own in place: hold a client's packet back
from its session, refuse a message, lose a session, send a copy otherwise than the
reference would (or bytes that are no packet at all), send something the client did not
ask for after a CONNACK, a SUBACK or an answer. The broker stays the reference everywhere
else; whatever a trick sends goes through the same judges and the same trace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pubproof.reference.packets import Packet, Publish

if TYPE_CHECKING:
    from pubproof.probe.serve.connection import Connection


class Tricks:
    """The hooks; each one does what the reference does."""

    #: the broker the tricks play in (set by the broker)
    broker: Any = None

    def bind(self, broker: Any) -> None:
        """The broker these tricks play in."""
        self.broker = broker

    def hold(self, conn: Connection, packet: Packet) -> bool:
        """Keep a PUBLISH-family packet of the client from its session for now (True); the
        trick hands it on later (:meth:`pubproof.probe.serve.broker.Broker.answer`)."""
        return False

    def refuse(self, conn: Connection, packet: Publish) -> int:
        """5.0: the Reason Code (0x80 or more) that refuses a new QoS 1 or 2 message, or 0."""
        return 0

    def closes(self, conn: Connection, fault: str) -> bool:
        """Whether the broker closes ``conn`` for a fault of the client's, as the standard
        says it does (``fault``: "wire", "flow" or "control")."""
        return True

    def forget(self, conn: Connection) -> bool:
        """Whether the broker has lost the client's session (Session Present 0 whatever
        the CONNECT asked)."""
        return False

    def outgoing(self, conn: Connection, packet: Publish) -> bytes | None:
        """What goes in place of a PUBLISH to the client: None, the packet as the reference
        encodes it; bytes, sent as they are (b"": nothing more, the trick sent it)."""
        return None

    def connected(self, conn: Connection) -> None:
        """After the CONNACK of ``conn`` and what it owed."""

    def subscribed(self, conn: Connection) -> None:
        """After a SUBACK to ``conn`` and the retained messages it owed."""

    def answered(self, conn: Connection, packet: Packet) -> None:
        """After the broker answered a PUBLISH-family packet of the client."""

    def tick(self, now: float) -> None:
        """Time passed."""

    def ended(self, conn: Connection) -> None:
        """``conn`` is gone."""
