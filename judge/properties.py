"""MQTT 5.0 properties of the control packets: Table 2-4 beyond PUBLISH and its
acknowledgements, read and written with the model's own property reader and writer.

The model (:mod:`pubproof.model.wire50`) reads the property sections of PUBLISH, PUBACK,
PUBREC, PUBREL and PUBCOMP; its :class:`~pubproof.model.wire50.Property` rows, its
per-property reader (the value of each type, the repeat and range judgements) and its
writer (:func:`~pubproof.model.wire50.encode_properties`) serve here for every other
packet, so a property is read one way wherever it appears. What this module adds is the
rest of Table 2-4 (section 2.2.2.2) and which identifiers each packet may carry.

Values take ``P``'s form: integers, strings, binary data as hex (keys ending ``_hex``),
the repeatable User Property as a list of ``[name, value]`` pairs in wire order and the
Subscription Identifier as a list.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from pubproof.model import properties50, wire50
from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition, Limits, resolve_readings
from pubproof.model.properties50 import PropertyRow
from pubproof.model.wire50 import PUBLISH_PROPERTIES, REASON_STRING, Property
from pubproof.model.wire_core import Context, Fail, variable_byte_integer

V50 = Edition.V50


def _row(row: PropertyRow) -> Property:
    """How the model reads ``row``: its own row where it has one (the properties of
    PUBLISH and the acknowledgements, with their string rules), else one made from the
    table. Where the table lets a property repeat in some packet its value is a list in
    every packet (the Subscription Identifier of PUBLISH and SUBSCRIBE alike); whether it
    may repeat in a given packet is :data:`ONCE`'s."""
    model_row = _PUB.get(row.identifier) or wire50.ACK_PROPERTIES.get(row.identifier)
    if model_row is not None:
        return model_row
    kind = row.type.code
    return Property(
        identifier=row.identifier, name=row.name, key=row.key, type=kind,
        repeatable=bool(row.repeatable_in),
        strings=REASON_STRING if kind in ("string", "pair") else None,
    )  # fmt: skip


_PUB = PUBLISH_PROPERTIES
#: the packets' names as Table 2-4 writes them, as this module's callers do ("WILL" for the
#: Will Properties of CONNECT)
_NAMES = {properties50.WILL: "WILL"}
#: Table 2-4: every identifier, with how the model reads it
ALL: Mapping[int, Property] = MappingProxyType(
    {row.identifier: _row(row) for row in properties50.PROPERTIES}
)
#: the property rows of each packet, in Table 2-4's order, which is also the order the
#: writer uses: read from the one property table (:mod:`pubproof.model.properties50`)
TABLES: Mapping[str, Mapping[int, Property]] = MappingProxyType({
    _NAMES.get(packet, packet): MappingProxyType({
        row.identifier: ALL[row.identifier]
        for row in sorted(properties50.of(packet), key=lambda r: r.identifier)
    })
    for packet in properties50.PROPERTY_SECTIONS
})  # fmt: skip
#: the identifiers each packet may carry only once, though they repeat elsewhere: "It is a
#: Protocol Error to include the Subscription Identifier more than once" (3.8.2.1.2)
ONCE: Mapping[str, frozenset[int]] = MappingProxyType({
    _NAMES.get(packet, packet): frozenset(
        row.identifier for row in properties50.of(packet)
        if row.repeatable_in and packet not in row.repeatable_in
    )
    for packet in properties50.PROPERTY_SECTIONS
})  # fmt: skip
#: every property key, by identifier
KEYS: Mapping[str, int] = MappingProxyType({p.key: i for i, p in ALL.items()})

#: the context a control packet's body is read in: 5.0, its default readings (no limits:
#: the receiver's limits bind PUBLISH and the acknowledgements, judged by the model)
_READINGS = MappingProxyType(resolve_readings(V50))
_NO_LIMITS = Limits(topic_alias_maximum=0xFFFF)


class PropertyError(Exception):
    """A property section the model's reader rejects: the rule id, the offset into the
    body and the message."""

    def __init__(self, rule: str | None, offset: int, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.offset = offset
        self.message = message


def read(body: bytes, start: int, packet: str) -> tuple[dict[str, Any], int]:
    """The property section at ``start`` of ``body`` (a Property Length and the properties
    it covers) of the packet named ``packet`` ("WILL" for the Will Properties):
    (properties, the offset after the section). :class:`PropertyError` when the section
    is not one the model accepts."""
    table = TABLES[packet]
    ctx = Context(body, V50, _READINGS, _NO_LIMITS)
    end = len(body)
    try:
        # [MQTT-2.2.2-1] "If there are no properties, this MUST be indicated by including a
        # Property Length of zero": a missing Property Length is a packet that ends early
        if start >= end:
            raise PropertyError(None, start, "the packet ends before its Property Length")
        length, first = variable_byte_integer(
            ctx, start, bound=end, past_bound=R.PROPERTY_LENGTH, at=start,
            what="Property Length",
        )  # fmt: skip
        if first + length > end:
            raise ctx.fail(
                R.PROPERTY_LENGTH,
                start,
                f"the Property Length {length} runs past the packet, which has "
                f"{end - first} byte(s) left",
            )
        section_end = first + length
        properties: dict[str, Any] = {}
        seen: set[int] = set()
        position = first
        while position < section_end:
            identifier = body[position]
            spec = table.get(identifier)
            if spec is None:
                # "A Control Packet which contains an Identifier which is not valid for its
                # packet type ... is a Malformed Packet." (2.2.2.2)
                what = "the Will Properties" if packet == "WILL" else packet
                raise ctx.fail(
                    R.PROPERTY_IDENTIFIER,
                    position,
                    f"0x{identifier:02X} is not a property identifier of {what}",
                )
            if identifier in seen and identifier in ONCE[packet]:
                raise ctx.fail(R.PROPERTY_ONCE, position, f"the {spec.name} appears more than once")
            # the model's own reader and judge of one property (value by type, repeats)
            value, after = wire50._value(ctx, spec, position, section_end)
            wire50._judge_property(ctx, spec, value, position, seen)
            seen.add(identifier)
            if spec.repeatable:
                properties.setdefault(spec.key, []).append(value)
            else:
                properties[spec.key] = value
            position = after
    except Fail as fail:
        failure = fail.failure
        raise PropertyError(failure.rule, failure.offset, failure.message) from None
    return properties, section_end


def encode(packet: str, properties: Mapping[str, Any] | None) -> bytes:
    """The property section (Property Length first) of ``properties`` for the packet named
    ``packet``, written by the model's writer; ``ValueError`` (the model's
    :class:`~pubproof.model.wire_core.EncodeError`) for a key the packet cannot carry or a
    value its type cannot hold."""
    table = TABLES[packet]
    return wire50.encode_properties(dict(properties or {}), table, tuple(table))
