"""What one framed packet says: PUBLISH and its acknowledgements decoded by the project's
codec (:class:`pubproof.reference.codec.Decoder`, so its errors name the rule and the byte
offset), every other packet described by :func:`pubproof.judge.packets.describe`.

MQTT 5.0: the codec decodes with the receiving end's :class:`~pubproof.model.editions.Limits`
(its Topic Alias Maximum and Maximum Packet Size), and a description adds the Reason Code,
the Topic Alias and the properties as the ``properties`` column writes them (a JSON object,
the keys of ``pubproof decode --edition 5.0``; :func:`properties_json`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pubproof.judge.packets import (
    DUP_FLAG,
    PUBLISH_FAMILY,
    QOS_BITS,
    QOS_SHIFT,
    RETAIN_FLAG,
    PacketType,
    control_types,
    header_length,
    type_name,
)
from pubproof.judge.packets import describe as describe_control
from pubproof.model import wire_rules as R
from pubproof.model.editions import READINGS, Edition, Limits
from pubproof.model.rules import RULES, Kind
from pubproof.pipeline.family import decode_publish_family
from pubproof.pipeline.wire_error import WireError
from pubproof.reference.jsonform import _ack_props as ack_props
from pubproof.reference.jsonform import _publish_props as publish_props
from pubproof.reference.packets import Publish
from pubproof.reference.properties import AckProperties, PublishProperties

#: payloads longer than this are represented in ``P`` by a digest (the flow judge compares
#: messages for equality only); the evidence shows at most ``EVIDENCE_PAYLOAD`` bytes
JUDGE_PAYLOAD = 4096
EVIDENCE_PAYLOAD = 64


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
    #: MQTT 5.0: the Reason Code, the Topic Alias and the properties (JSON) of the packet
    reason_code: int | None = None
    topic_alias: int | None = None
    properties: str | None = None


@lru_cache(maxsize=16)
def readings_for(edition: Edition, chosen: tuple[tuple[str, str], ...]) -> Mapping[str, str] | None:
    """The chosen readings that apply to ``edition`` (a forced reading of the other
    edition is ignored for connections of this one); None for the defaults (the codec's
    fast path)."""
    applicable = {n: v for n, v in chosen if n in READINGS and READINGS[n].applies_to(edition)}
    return applicable or None


#: the descriptions of control packets (any type but the PUBLISH family) of at most
#: ``_KEPT_BYTES`` bytes, per edition (by its identity: a memo keyed by ``id()``, of
#: objects that live as long as the process, :mod:`pubproof.pipeline.fast.layout`) and by
#: the packet's bytes. A control packet's description is a function of its
#: bytes and edition alone (not of readings or limits), and immutable: the same CONNACK,
#: SUBSCRIBE, SUBACK or DISCONNECT on many connections is described once (the 200,000-frame
#: 5.0 editions capture's 2,874 described packets are 408 distinct ones, 402 of them
#: CONNECTs).
#: Bounded: each starts afresh at ``_KEPT`` packets.
_DESCRIBED: dict[int, dict[bytes, Described]] = {id(e): {} for e in Edition}
_KEPT = 1024
_KEPT_BYTES = 256
_FAMILY_KINDS = frozenset(PUBLISH_FAMILY)


def describe(
    data: bytes,
    edition: Edition | None,
    readings: Mapping[str, str] | None,
    limits: Limits | None = None,
) -> Described:
    """Describe one whole packet (as framed by its Remaining Length); ``limits`` are the
    receiving end's (MQTT 5.0).

    ``edition`` None means the connection's protocol level is one the model does not cover:
    the packet is named by its type only. The result is not to be changed (the fields of a
    control packet are shared by every packet with the same bytes).
    """
    if (
        edition is not None
        and data[0] >> 4 not in _FAMILY_KINDS
        and len(data) <= _KEPT_BYTES
        and type(data) is bytes  # hashable
    ):
        kept = _DESCRIBED[id(edition)]
        described = kept.get(data)
        if described is None:
            described = _describe(data, edition, readings, limits)
            if len(kept) >= _KEPT:
                kept.clear()
            kept[data] = described
        return described
    return _describe(data, edition, readings, limits)


def _describe(
    data: bytes,
    edition: Edition | None,
    readings: Mapping[str, str] | None,
    limits: Limits | None,
) -> Described:
    first = data[0]
    kind = first >> 4
    name = type_name(first, edition)
    if edition is None:
        return Described(type=name, fields={"type": name})
    if kind in PUBLISH_FAMILY:
        return _publish_family(name, data, edition, readings, limits)
    if kind in control_types(edition):
        header = header_length(data)
        assert header is not None  # framed packets are whole
        fields = describe_control(first, data[header[0] :], edition)
        error = None
        if "error" in fields:
            body_error = fields["error"]
            rule = body_error["rule"]  # 5.0: the rule a property section breaks
            error = WireError(
                rule=rule,
                offset=header[0] + body_error["offset"],
                message=f"{name}: {body_error['message']}",
                kind=_kind(rule, edition),
            )
            return Described(type=name, fields=fields, error=error)
        if edition is Edition.V50:
            shown = fields.get("properties")  # PINGREQ and PINGRESP have no section
            text = None if shown is None else NO_PROPERTIES
            if shown:
                text = json.dumps(shown, ensure_ascii=False, separators=(",", ":"))
            return Described(
                type=name, fields=fields, reason_code=fields.get("reason_code"), properties=text
            )
        return Described(type=name, fields=fields)
    rule = R.RESERVED_TYPE.id_for(edition)
    message = f"packet type {kind} is reserved"
    return Described(
        type=name,
        fields={"type": name},
        error=WireError(rule=rule, offset=0, message=message, kind="malformed"),
    )


def _kind(rule: str | None, edition: Edition) -> str:
    """``malformed`` or ``violation``: what breaking the rule a control packet's
    description names makes of it (a packet that cannot be read at all: malformed)."""
    if rule is None:
        return "malformed"
    try:
        kind = RULES.by_id(rule, edition).kind_in(edition)
    except KeyError:
        return "malformed"
    return "violation" if kind is Kind.VIOLATION else "malformed"


#: the ``properties`` column of a 5.0 packet without properties
NO_PROPERTIES = "{}"
#: property sections seen, by identity (the codec hands out one object per distinct
#: section it has judged, see ``reference.fast50``): (the object, its JSON, its dict);
#: a memo keyed by ``id()`` that keeps the object (:mod:`pubproof.pipeline.fast.layout`).
#: The capture pipeline's packets that the codec's fast path takes do not come here: what
#: is shown of their section is kept with it (``reference.common.Section.shown``, made by
#: :func:`show_properties`); this serves the rest (the codec's general way, ``P`` of a
#: decoded packet)
SHOWN: dict[int, tuple[PublishProperties | AckProperties, str, dict[str, Any]]] = {}
SHOWN_KEPT = 4096
#: the same by value (properties are frozen, hashable and compared field by field):
#: decoders for different limits, or one whose section memory started afresh, make their
#: own objects for sections already shown
SHOWN_BY_VALUE: dict[PublishProperties | AckProperties, tuple[str, dict[str, Any]]] = {}


#: json.dumps(shown, ensure_ascii=False, separators=(",", ":")) with its encoder made once:
#: dumps with options makes a JSONEncoder at every call
_PROPERTIES_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def shown_properties(props: PublishProperties | AckProperties) -> tuple[str, dict[str, Any]]:
    """A 5.0 PUBLISH's or acknowledgement's properties as the ``properties`` column writes
    them (a JSON object with ``pubproof decode``'s keys, in its order; ``{}`` without any)
    and as ``P`` holds them (a dict shared by every packet with the same section: not to
    be changed)."""
    kept = SHOWN.get(id(props))
    if kept is not None and kept[0] is props:
        return kept[1], kept[2]
    # the same section decoded by another decoder (another connection's, or the other
    # direction's) is another object with the same values
    try:
        known = SHOWN_BY_VALUE.get(props)
        hashable = True
    except TypeError:  # a list where the decoder makes tuples: not kept by value
        known, hashable = None, False
    if known is not None:
        text, shown = known
    else:
        text, shown = show_properties(props)
        if hashable:
            if len(SHOWN_BY_VALUE) >= SHOWN_KEPT:
                SHOWN_BY_VALUE.clear()
            SHOWN_BY_VALUE[props] = (text, shown)
    if len(SHOWN) >= SHOWN_KEPT:
        SHOWN.clear()
    SHOWN[id(props)] = (props, text, shown)
    return text, shown


def show_properties(props: PublishProperties | AckProperties) -> tuple[str, dict[str, Any]]:
    """:func:`shown_properties` made anew, for a caller that keeps it (the fast path's
    section memory, ``reference.common.Section.shown``)."""
    shown: dict[str, Any] = (
        publish_props(props) if type(props) is PublishProperties else ack_props(props)  # type: ignore[arg-type,assignment]
    )
    return (_PROPERTIES_JSON(shown) if shown else NO_PROPERTIES), shown


def properties_json(props: PublishProperties | AckProperties) -> str:
    """The ``properties`` column of a 5.0 PUBLISH or acknowledgement
    (:func:`shown_properties`)."""
    return shown_properties(props)[0]


def publish_p5(packet: Publish, topic: str) -> dict[str, Any]:
    """``P`` of a decoded 5.0 PUBLISH (:func:`publish_p` and its ``properties``), with
    ``topic`` for its topic (as sent: empty when only a Topic Alias stands for it)."""
    props = packet.properties
    return {
        "type": "PUBLISH", "dup": packet.dup, "qos": packet.qos, "retain": packet.retain,
        "topic": topic, "packet_id": packet.packet_id,
        "payload_hex": payload_hex(packet.payload),
        "properties": shown_properties(props)[1] if props is not None else {},
    }  # fmt: skip


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
    name: str,
    data: bytes,
    edition: Edition,
    readings: Mapping[str, str] | None,
    limits: Limits | None,
) -> Described:
    first = data[0]
    result = decode_publish_family(data, edition, readings, limits)
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
        props = result.properties
        if props is None:
            return Described(
                type=name, dup=result.dup, qos=result.qos, retain=result.retain,
                topic=result.topic, packet_id=result.packet_id, payload_len=len(result.payload),
                fields=publish_p(result),
            )  # fmt: skip
        return Described(
            type=name, dup=result.dup, qos=result.qos, retain=result.retain,
            topic=result.topic, packet_id=result.packet_id, payload_len=len(result.payload),
            fields=publish_p5(result, result.topic), topic_alias=props.topic_alias,
            properties=properties_json(props),
        )  # fmt: skip
    packet_id = result.packet_id
    ack = result.properties
    if ack is None:
        return Described(
            type=name, packet_id=packet_id, fields={"type": name, "packet_id": packet_id}
        )
    code = result.reason_code
    fields = {"type": name, "packet_id": packet_id, "reason_code": code,
              "properties": ack_props(ack)}  # fmt: skip
    return Described(
        type=name, packet_id=packet_id, fields=fields, reason_code=code,
        properties=properties_json(ack),
    )  # fmt: skip


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
