"""MQTT 5.0: what the two ends of one connection declared, as each direction's receiver
holds it.

A 5.0 receiver judges what it receives with its own limits (``docs/guides/mqtt5-wire.md``):
the client declares its Topic Alias Maximum and Maximum Packet Size in CONNECT, so they
bind what the server sends (``s2c``); the server declares its own in CONNACK, and they bind
what the client sends (``c2s``). Until CONNACK is seen the client's packets are judged with
the standard's defaults (no alias, no size limit beyond the protocol's): "If the Topic
Alias Maximum property is absent, the default value is 0" (3.2.2.3.8).

Each direction also keeps its receiver's Topic Alias map (section 3.3.2.3.4): a PUBLISH with
a topic name and an alias sets it, one with an empty topic name and an alias is resolved
through it, so that the ``packets`` table shows the topic the receiver reads. The map lasts
one Network Connection [MQTT-3.3.2-7]: a :class:`Receivers` belongs to one connection.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pubproof.judge.ends import C2S, S2C
from pubproof.model.editions import DEFAULT_LIMITS, Edition, Limits
from pubproof.pipeline.describe import PublishFamilyDecoder


def limits_of(properties: Mapping[str, Any]) -> Limits | None:
    """The receiving limits a CONNECT's or CONNACK's properties declare; None when their
    values are out of range (a Maximum Packet Size of 0, say: the packet is the judges'
    to report, and the receiver's limits are then the defaults)."""
    try:
        return Limits(
            topic_alias_maximum=properties.get("topic_alias_maximum", 0),
            maximum_packet_size=properties.get("maximum_packet_size"),
        )
    except ValueError:
        return None


class Receivers:
    """One 5.0 connection's receivers: per direction, the limits its receiver declared,
    the codec's decoder that judges with them, and the receiver's Topic Alias map."""

    __slots__ = ("aliases", "decoders", "limits", "readings")

    def __init__(self, readings: Mapping[str, str] | None) -> None:
        self.readings = readings
        self.limits: dict[str, Limits] = {C2S: DEFAULT_LIMITS, S2C: DEFAULT_LIMITS}
        decoder = PublishFamilyDecoder(Edition.V50, readings, None)
        # both directions start with the defaults: one decoder until one end declares
        self.decoders: dict[str, PublishFamilyDecoder] = {C2S: decoder, S2C: decoder}
        self.aliases: dict[str, dict[int, str]] = {C2S: {}, S2C: {}}

    def declare(self, direction: str, properties: Mapping[str, Any]) -> None:
        """The receiver of ``direction`` declared ``properties`` (CONNECT's for ``s2c``,
        CONNACK's for ``c2s``)."""
        limits = limits_of(properties) or DEFAULT_LIMITS
        if limits == self.limits[direction]:
            return
        self.limits[direction] = limits
        self.decoders[direction] = PublishFamilyDecoder(Edition.V50, self.readings, limits)

    def resolve(self, direction: str, topic: str, alias: int) -> str | None:
        """The topic name a PUBLISH sent ``direction`` with ``alias`` stands for: ``topic``
        itself when it has one (and the alias is mapped to it from now on), else the
        mapping's (None: the receiver holds none for the alias)."""
        aliases = self.aliases[direction]
        if topic:
            aliases[alias] = topic
            return topic
        return aliases.get(alias)
