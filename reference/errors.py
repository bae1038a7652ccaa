"""Errors of the reference codec: one base, ``ProtocolError``, carrying the rule it names.

Every error says which rule was broken (its id in the edition in use), the edition, the
byte offset in the stream (``None`` when there is no stream, as when encoding) and a
message a person understands. The decoder raises nothing else, whatever bytes it is fed.
In MQTT 5.0 a decoding error also carries ``reason_code``: the DISCONNECT Reason Code the
receiver sends (0x81 Malformed Packet, 0x82 Protocol Error, or the rule's own code).
"""

from __future__ import annotations


class ProtocolError(Exception):
    """Base of every error pubproof's codec raises."""

    kind = "error"

    def __init__(
        self,
        rule: str,
        message: str,
        *,
        offset: int | None = None,
        edition: str | None = None,
        reason_code: int | None = None,
    ) -> None:
        self.rule = rule
        self.message = message
        self.offset = offset
        self.edition = edition
        #: MQTT 5.0: the DISCONNECT Reason Code; None in 3.1 and 3.1.1.
        self.reason_code = reason_code
        where = f" at byte {offset}" if offset is not None else ""
        super().__init__(f"[{rule}]{where}: {message}")

    def as_json(self) -> dict[str, object]:
        """The ``error`` object of ``pubproof decode``/``encode``."""
        out: dict[str, object] = {"rule": self.rule, "offset": self.offset, "message": self.message}
        if self.reason_code is not None:
            out["reason_code"] = self.reason_code
        return out


class MalformedPacket(ProtocolError):
    """The bytes are not a packet: the receiver must close the connection."""

    kind = "malformed"


class ProtocolViolation(ProtocolError):
    """A packet that parses but breaks an obligation of its sender."""

    kind = "violation"


class IncompleteStream(ProtocolError):
    """The stream ended inside a packet (rule ``incomplete``)."""

    kind = "incomplete"


class InvalidPacket(ProtocolViolation):
    """A packet object that cannot exist (raised on construction or when encoding)."""


class InvalidTopic(ProtocolViolation):
    """A topic name or topic filter that breaks a rule of section 4.7 (or, for a 5.0
    Shared Subscription, 4.8.2), raised by the subscription and retained-topic indexes
    (:mod:`pubproof.reference.topics`). ``offset`` is the byte offset in the string's UTF-8
    encoding; in 5.0 ``reason_code`` is 0x8F Topic Filter invalid or 0x90 Topic Name
    invalid."""


class DistributionError(ProtocolError):
    """An event the distribution core (:mod:`pubproof.reference.distribution`) cannot take:
    one the broker running it should never pass (a SUBSCRIBE for a client with no
    connection, a copy that is not owed, options an edition does not have). ``rule`` is
    the MQTT rule the event would break where there is one (a Control Packet before
    CONNECT: [MQTT-3.1.0-1]), else ``"usage"``."""

    kind = "usage"
