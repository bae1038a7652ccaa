"""MQTT 5.0: what the two ends of one connection declared, as each direction's receiver
holds it.

A 5.0 receiver judges what it receives with its own limits (``docs/guides/mqtt5-wire.md``):
the client declares its Topic Alias Maximum and Maximum Packet Size in CONNECT, so they
bind what the server sends (``s2c``); the server declares its own in CONNACK, and they bind
what the client sends (``c2s``). What was declared is the judge layer's
:class:`~pubproof.judge.limits.Negotiated`; until CONNACK is seen the client's packets are
judged with the standard's defaults (no alias, no size limit beyond the protocol's).
Each direction has the codec's decoder with its receiver's limits (one decoder serves
every connection with the same limits: :func:`~pubproof.pipeline.family.decoder_for`).

Each direction also keeps its receiver's Topic Alias map (section 3.3.2.3.4): a PUBLISH with
a topic name and an alias sets it, one with an empty topic name and an alias is resolved
through it, so that the ``packets`` table shows the topic the receiver reads. The map lasts
one Network Connection [MQTT-3.3.2-7]: a :class:`Receivers` belongs to one connection.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pubproof.judge.limits import DEFAULT, Negotiated
from pubproof.model.editions import Edition
from pubproof.pipeline.family import PublishFamilyDecoder, decoder_for
from pubproof.pipeline.fast.ends import C2S, S2C
from pubproof.pipeline.wire_error import WireError
from pubproof.reference.common import Whole5
from pubproof.reference.packets import Packet


class Receivers:
    """One 5.0 connection's receivers: what the two ends declared, per direction the
    codec's decoder that judges with its receiver's limits, and its Topic Alias map."""

    __slots__ = ("aliases_c2s", "aliases_s2c", "decoder_c2s", "decoder_s2c", "negotiated",
                 "readings")  # fmt: skip

    def __init__(self, readings: Mapping[str, str] | None) -> None:
        self.readings = readings
        self.negotiated: Negotiated = DEFAULT
        decoder = decoder_for(Edition.V50, readings, None)
        # both directions start with the defaults: one decoder until an end declares
        self.decoder_c2s: PublishFamilyDecoder = decoder
        self.decoder_s2c: PublishFamilyDecoder = decoder
        # each direction's map as an attribute (the per-packet path reads it: no look-up
        # keyed by the direction)
        self.aliases_c2s: dict[int, str] = {}
        self.aliases_s2c: dict[int, str] = {}

    def connect(self, fields: Mapping[str, Any]) -> None:
        """The client's CONNECT (its description): its limits bind what the server sends."""
        self._declared(self.negotiated.with_connect(fields))

    def connack(self, fields: Mapping[str, Any]) -> None:
        """The server's CONNACK: its limits bind what the client sends."""
        self._declared(self.negotiated.with_connack(fields))

    def _declared(self, negotiated: Negotiated) -> None:
        before, self.negotiated = self.negotiated, negotiated
        for direction in (C2S, S2C):
            limits = negotiated.limits_for(direction)
            if limits != before.limits_for(direction):
                decoder = decoder_for(Edition.V50, self.readings, limits)
                if direction == C2S:
                    self.decoder_c2s = decoder
                else:
                    self.decoder_s2c = decoder

    def scan(self, direction: str, data: bytes) -> Whole5 | None:
        """The PUBLISH-family packet ``data`` (one, whole) sent ``direction``, as the
        codec's fast path reads it with its receiver's limits
        (:meth:`~pubproof.reference.codec.Decoder.scan_whole5`: no packet object, no
        generator); None where the fast path does not take it (:meth:`decode` then). The
        decoder's record, filled anew by its next packet: read it at once."""
        decoder = self.decoder_c2s if direction == C2S else self.decoder_s2c
        return decoder._decoder.scan_whole5(data)

    def decode(self, direction: str, data: bytes) -> Packet | WireError:
        """The PUBLISH-family packet ``data`` (one, whole) sent ``direction``, decoded with
        its receiver's limits as :meth:`.PublishFamilyDecoder.decode` decodes it: the
        packet, or the codec's error (for a packet :meth:`scan` does not take)."""
        decoder = self.decoder_c2s if direction == C2S else self.decoder_s2c
        return decoder.decode(data)

    def forget_aliases(self, direction: str | None = None) -> None:
        """The receiver of ``direction`` (None: of both) holds no Topic Alias mapping any
        more: a new Network Connection [MQTT-3.3.2-7], or bytes lost that could have set
        one."""
        if direction != S2C:
            self.aliases_c2s.clear()
        if direction != C2S:
            self.aliases_s2c.clear()

    def resolve(self, direction: str, topic: str, alias: int) -> str | None:
        """The topic name a PUBLISH sent ``direction`` with ``alias`` stands for: ``topic``
        itself when it has one (and the alias is mapped to it from now on), else the
        mapping's (None: the receiver holds none for the alias)."""
        aliases = self.aliases_c2s if direction == C2S else self.aliases_s2c
        if topic:
            aliases[alias] = topic
            return topic
        return aliases.get(alias)
