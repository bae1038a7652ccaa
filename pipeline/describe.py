"""What one framed packet says: PUBLISH and its acknowledgements decoded by the project's
codec (:class:`pubproof.reference.codec.Decoder`, so its errors name the rule and the byte
offset), every other packet described by :func:`pubproof.judge.packets.describe`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pubproof.judge.packets import (
    CONTROL_TYPES,
    DUP_FLAG,
    PUBLISH_FAMILY,
    QOS_BITS,
    QOS_SHIFT,
    RETAIN_FLAG,
    PacketType,
    header_length,
    type_name,
)
from pubproof.judge.packets import describe as describe_control
from pubproof.model import wire_rules as R
from pubproof.model.editions import READINGS, Edition
from pubproof.reference.codec import Decoder
from pubproof.reference.errors import ProtocolError
from pubproof.reference.packets import Packet, Publish

#: payloads longer than this are represented in ``P`` by a digest (the flow judge compares
#: messages for equality only); the evidence shows at most ``EVIDENCE_PAYLOAD`` bytes
JUDGE_PAYLOAD = 4096
EVIDENCE_PAYLOAD = 64


@dataclass(frozen=True, slots=True, kw_only=True)
class WireError:
    """The codec's judgement of a packet: rule, offset in the packet, message, kind."""

    rule: str | None
    offset: int
    message: str
    kind: str  # "malformed" | "violation"


@dataclass(frozen=True, slots=True, kw_only=True)
class Described:
    """A packet's fields, its ``P`` for the flow judge (when it is one), and its error."""

    type: str
    dup: bool | None = None
    qos: int | None = None
    retain: bool | None = None
    topic: str | None = None
    packet_id: int | None = None
    payload_len: int | None = None
    fields: Mapping[str, Any]  # what a trace entry shows (P, or a control packet's fields)
    error: WireError | None = None


@lru_cache(maxsize=16)
def readings_for(edition: Edition, chosen: tuple[tuple[str, str], ...]) -> Mapping[str, str] | None:
    """The chosen readings that apply to ``edition`` (a forced reading of the other
    edition is ignored for connections of this one); None for the defaults (the codec's
    fast path)."""
    applicable = {n: v for n, v in chosen if n in READINGS and READINGS[n].applies_to(edition)}
    return applicable or None


def describe(data: bytes, edition: Edition | None, readings: Mapping[str, str] | None) -> Described:
    """Describe one whole packet (as framed by its Remaining Length).

    ``edition`` None means the connection's protocol level is one the model does not cover
    (MQTT 5.0): the packet is named by its type only.
    """
    first = data[0]
    kind = first >> 4
    name = type_name(first)
    if edition is None:
        return Described(type=name, fields={"type": name})
    if kind in PUBLISH_FAMILY:
        return _publish_family(name, data, edition, readings)
    if kind in CONTROL_TYPES:
        header = header_length(data)
        assert header is not None  # framed packets are whole
        fields = describe_control(first, data[header[0] :])
        error = None
        if "error" in fields:
            body_error = fields["error"]
            error = WireError(
                rule=None,
                offset=header[0] + body_error["offset"],
                message=f"{name}: {body_error['message']}",
                kind="malformed",
            )
        return Described(type=name, fields=fields, error=error)
    rule = R.RESERVED_TYPE.id_for(edition)
    message = f"packet type {kind} is reserved"
    return Described(
        type=name,
        fields={"type": name},
        error=WireError(rule=rule, offset=0, message=message, kind="malformed"),
    )


class PublishFamilyDecoder:
    """Decodes whole PUBLISH, PUBACK, PUBREC, PUBREL and PUBCOMP packets of one edition
    and readings with the codec, one at a time.

    The codec's :class:`~pubproof.reference.codec.Decoder` is kept between packets: a
    whole packet leaves it with nothing buffered, so the next one starts it afresh, as a
    new decoder would, without resolving the readings again (which costs more than the
    decoding). After an error (the codec's decoder keeps raising it) a new one is made."""

    __slots__ = ("_decoder", "edition", "readings")

    def __init__(self, edition: Edition, readings: Mapping[str, str] | None) -> None:
        self.edition, self.readings = edition, readings
        self._decoder = Decoder(edition=edition, readings=readings)

    def decode(self, data: bytes) -> Packet | WireError:
        """The packet ``data`` holds (exactly one, whole), or the codec's error (its offset
        counted from the packet's first byte)."""
        decoder = self._decoder
        start = decoder.offset
        decoder.feed(data)
        try:
            for packet in decoder:
                if decoder.buffered:  # cannot happen (the packet is whole); start afresh
                    self._decoder = Decoder(edition=self.edition, readings=self.readings)
                return packet  # the codec's fast path, then its general one
            decoder.close()  # raises IncompleteStream: the codec wants more than RL said
            raise AssertionError("unreachable")
        except ProtocolError as error:
            self._decoder = Decoder(edition=self.edition, readings=self.readings)
            at = error.offset - start if error.offset is not None else 0
            return WireError(rule=error.rule, offset=at, message=error.message, kind=error.kind)


def decode_publish_family(
    data: bytes, edition: Edition, readings: Mapping[str, str] | None
) -> Packet | WireError:
    """:meth:`PublishFamilyDecoder.decode` with a decoder kept per edition and readings."""
    key = (edition, None if readings is None else tuple(sorted(readings.items())))
    decoder = _DECODERS.get(key)
    if decoder is None:
        decoder = _DECODERS[key] = PublishFamilyDecoder(edition, readings)
    return decoder.decode(data)


_DECODERS: dict[tuple[Edition, tuple[tuple[str, str], ...] | None], PublishFamilyDecoder] = {}


def publish_p(packet: Publish) -> dict[str, Any]:
    """``P`` of a decoded PUBLISH: what the flow judge compares (the payload as hex, or a
    digest of it when longer than ``JUDGE_PAYLOAD`` bytes)."""
    return {
        "type": "PUBLISH", "dup": packet.dup, "qos": packet.qos, "retain": packet.retain,
        "topic": packet.topic, "packet_id": packet.packet_id,
        "payload_hex": payload_hex(packet.payload),
    }  # fmt: skip


def payload_hex(payload: bytes) -> str:
    """A payload as ``P`` holds it: hex, or a digest when longer than ``JUDGE_PAYLOAD``."""
    if len(payload) <= JUDGE_PAYLOAD:
        return payload.hex()
    return "blake2b:" + hashlib.blake2b(payload, digest_size=16).hexdigest()


def _publish_family(
    name: str, data: bytes, edition: Edition, readings: Mapping[str, str] | None
) -> Described:
    first = data[0]
    result = decode_publish_family(data, edition, readings)
    if isinstance(result, WireError):
        flags: dict[str, Any] = {}
        if first >> 4 == PacketType.PUBLISH:
            flags = {
                "dup": bool(first & DUP_FLAG),
                "qos": (first & QOS_BITS) >> QOS_SHIFT,
                "retain": bool(first & RETAIN_FLAG),
            }
        return Described(type=name, fields={"type": name, **flags}, error=result, **flags)
    if isinstance(result, Publish):
        return Described(
            type=name, dup=result.dup, qos=result.qos, retain=result.retain,
            topic=result.topic, packet_id=result.packet_id, payload_len=len(result.payload),
            fields=publish_p(result),
        )  # fmt: skip
    packet_id = result.packet_id
    return Described(type=name, packet_id=packet_id, fields={"type": name, "packet_id": packet_id})


def evidence_fields(described: Described, data: bytes) -> dict[str, Any]:
    """The fields of a trace entry: ``P`` (payload cut to ``EVIDENCE_PAYLOAD`` bytes, with
    ``payload_len``), control fields, or ``{"type", "error"}`` with the packet's hex."""
    entry = evidence_from(described.fields, described.payload_len, payload_head(described, data))
    if described.error is not None:
        error = described.error
        entry["error"] = {"rule": error.rule, "offset": error.offset, "message": error.message}
        entry["hex"] = data[:256].hex()
    return entry


def payload_head(described: Described, data: bytes) -> bytes:
    """The first ``EVIDENCE_PAYLOAD`` bytes of the packet's payload (empty without one):
    all the evidence keeps of it, so this is all a trail of recent packets needs to hold."""
    if described.payload_len is None:
        return b""
    start = len(data) - described.payload_len
    return data[start : start + EVIDENCE_PAYLOAD]


def evidence_from(
    fields: Mapping[str, Any], payload_len: int | None, head: bytes
) -> dict[str, Any]:
    """A sound packet's trace entry fields, from its description's fields (whose
    ``payload_hex``, if any, is replaced), payload length and :func:`payload_head`."""
    entry: dict[str, Any] = dict(fields)
    if payload_len is not None:
        entry["payload_hex"] = head.hex()
        entry["payload_len"] = payload_len
        if payload_len > EVIDENCE_PAYLOAD:
            entry["payload_cut"] = True
    return entry
