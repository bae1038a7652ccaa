"""MQTT 5.0: what the two ends of a connection declared, and the limits each direction's
packets are judged by.

A client declares in its CONNECT what it accepts (its Receive Maximum, Topic Alias
Maximum and Maximum Packet Size): these bind what the server sends it. A server declares
the same in its CONNACK, binding what the client sends, and adds two limits of its own on
the client's PUBLISH: Maximum QoS and Retain Available. An absent property has the
standard's default (sections 3.1.2.11 and 3.2.2.3):

- Receive Maximum 65,535 ("If the Receive Maximum value is absent then its value defaults
  to 65,535"), Topic Alias Maximum 0, no Maximum Packet Size;
- Maximum QoS 2 ("If the Maximum QoS is absent, the Client uses a Maximum QoS of 2"),
  Retain Available 1 ("If not present, then retained messages are supported").

A value the standard calls a Protocol Error (Receive Maximum 0, Maximum Packet Size 0,
Maximum QoS or Retain Available other than 0 and 1) declares nothing: the default stands,
and judging such a CONNECT or CONNACK is not this module's job.
:meth:`Negotiated.limits_for` gives the model's :class:`~pubproof.model.editions.Limits`
that :func:`pubproof.model.wire.decode` takes for the packets sent one way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pubproof.judge.findings import VIOLATION, Finding, Source
from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition, Limits

C2S, S2C = "c2s", "s2c"
DEFAULT_RECEIVE_MAXIMUM = 65_535
#: the Server's Maximum Packet Size binds the Client [MQTT-3.2.2-15]; the Client's binds
#: the Server [MQTT-3.1.2-24]
_SENDER_RULE = {C2S: "MQTT-3.2.2-15", S2C: "MQTT-3.1.2-24"}
PACKET_TOO_LARGE = R.PACKET_TOO_LARGE.id_for(Edition.V50)


@dataclass(frozen=True, slots=True, kw_only=True)
class Declared:
    """What one end declared about the packets it receives."""

    receive_maximum: int = DEFAULT_RECEIVE_MAXIMUM
    topic_alias_maximum: int = 0
    maximum_packet_size: int | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.receive_maximum <= 0xFFFF:
            raise ValueError("receive_maximum is a Two Byte Integer from 1")
        self.wire_limits()  # the model's own bounds on the other two

    def wire_limits(self) -> Limits:
        """The model's limits for a decoder of what this end receives (one object per
        pair of values: limits are immutable, and a capture asks for them a few times per
        packet type of every connection, about 15 on a short 5.0 connection)."""
        alias, size = self.topic_alias_maximum, self.maximum_packet_size
        if type(alias) is not int or not (size is None or type(size) is int):
            # anything else is left to Limits to refuse, never kept
            return Limits(topic_alias_maximum=alias, maximum_packet_size=size)
        key = (alias, size)
        limits = _LIMITS.get(key)
        if limits is None:
            if len(_LIMITS) >= _LIMITS_KEPT:
                _LIMITS.clear()
            limits = _LIMITS[key] = Limits(topic_alias_maximum=alias, maximum_packet_size=size)
        return limits


#: :meth:`Declared.wire_limits`'s limits, by their two values (a value Limits refuses
#: raises before it is kept)
_LIMITS: dict[tuple[int, int | None], Limits] = {}
_LIMITS_KEPT = 1024


def _int(properties: Mapping[str, Any], key: str, low: int, high: int) -> int | None:
    value = properties.get(key)
    return value if type(value) is int and low <= value <= high else None


def declared(properties: Mapping[str, Any]) -> Declared:
    """What a CONNECT's or CONNACK's properties declare (an invalid value declares
    nothing)."""
    receive = _int(properties, "receive_maximum", 1, 0xFFFF)
    alias = _int(properties, "topic_alias_maximum", 0, 0xFFFF)
    return Declared(
        receive_maximum=DEFAULT_RECEIVE_MAXIMUM if receive is None else receive,
        topic_alias_maximum=alias or 0,
        maximum_packet_size=_int(properties, "maximum_packet_size", 1, 0xFFFF_FFFF),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Negotiated:
    """The limits of one connection as far as its CONNECT and CONNACK are known."""

    client: Declared = field(default_factory=Declared)  # from CONNECT: binds s2c
    server: Declared = field(default_factory=Declared)  # from CONNACK: binds c2s
    maximum_qos: int = 2
    retain_available: bool = True

    def receiver(self, direction: str) -> Declared:
        """What the receiver of packets sent ``direction`` ("c2s" or "s2c") declared."""
        if direction == C2S:
            return self.server
        if direction == S2C:
            return self.client
        raise ValueError(f"a direction is {C2S!r} or {S2C!r}, not {direction!r}")

    def limits_for(self, direction: str) -> Limits:
        """The model's limits for the packets sent ``direction``."""
        return self.receiver(direction).wire_limits()

    def with_connect(self, fields: Mapping[str, Any]) -> Negotiated:
        """With what a 5.0 CONNECT's description declares (a new connection: the server's
        declarations are forgotten until its CONNACK)."""
        return Negotiated(client=declared(fields.get("properties") or {}))

    def with_connack(self, fields: Mapping[str, Any]) -> Negotiated:
        """With what a 5.0 CONNACK's description declares."""
        properties = fields.get("properties") or {}
        qos = _int(properties, "maximum_qos", 0, 1)
        retain = _int(properties, "retain_available", 0, 1)
        return replace(
            self,
            server=declared(properties),
            maximum_qos=2 if qos is None else qos,
            retain_available=retain != 0,
        )


DEFAULT = Negotiated()


def too_large(
    size: int, direction: str, negotiated: Negotiated, *, role: str | None = None
) -> Finding | None:
    """A packet of ``size`` bytes (fixed header included) sent ``direction`` against its
    receiver's Maximum Packet Size: a finding about its sender, or None. For the packets
    the model does not decode (the model judges PUBLISH and its acknowledgements itself
    with :meth:`Negotiated.limits_for`)."""
    maximum = negotiated.receiver(direction).maximum_packet_size
    if maximum is None or size <= maximum:
        return None
    # "The packet size is the total number of bytes in an MQTT Control Packet" (2.1.4);
    # [MQTT-3.1.2-24] "The Server MUST NOT send packets exceeding Maximum Packet Size to
    # the Client"; [MQTT-3.2.2-15] "The Client MUST NOT send packets exceeding Maximum
    # Packet Size to the Server"
    return Finding(
        verdict=VIOLATION,
        rules=(PACKET_TOO_LARGE, _SENDER_RULE[direction]),
        message=f"the packet is {size} bytes; the receiver's Maximum Packet Size is {maximum}",
        source=Source.WIRE,
        role=role,
    )
