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

from pubproof.model import wire50
from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition, Limits, resolve_readings
from pubproof.model.wire50 import PUBLISH_PROPERTIES, REASON_STRING, Property
from pubproof.model.wire_core import Context, Fail, variable_byte_integer

V50 = Edition.V50


def _p(identifier: int, name: str, key: str, kind: str, *, repeatable: bool = False) -> Property:
    strings = REASON_STRING if kind == "string" else None
    return Property(
        identifier=identifier, name=name, key=key, type=kind, repeatable=repeatable,
        strings=strings,
    )  # fmt: skip


_PUB = PUBLISH_PROPERTIES
_SIA = "Subscription Identifier Available"
#: Table 2-4 (Properties): every identifier, with the model's rows where it has them
ALL: Mapping[int, Property] = MappingProxyType(
    {
        **{i: _PUB[i] for i in (0x01, 0x02, 0x03, 0x08, 0x09, 0x0B, 0x23, 0x26)},
        0x11: _p(0x11, "Session Expiry Interval", "session_expiry_interval", "four"),
        0x12: _p(0x12, "Assigned Client Identifier", "assigned_client_identifier", "string"),
        0x13: _p(0x13, "Server Keep Alive", "server_keep_alive", "two"),
        0x15: _p(0x15, "Authentication Method", "authentication_method", "string"),
        0x16: _p(0x16, "Authentication Data", "authentication_data_hex", "binary"),
        0x17: _p(0x17, "Request Problem Information", "request_problem_information", "byte"),
        0x18: _p(0x18, "Will Delay Interval", "will_delay_interval", "four"),
        0x19: _p(0x19, "Request Response Information", "request_response_information", "byte"),
        0x1A: _p(0x1A, "Response Information", "response_information", "string"),
        0x1C: _p(0x1C, "Server Reference", "server_reference", "string"),
        0x1F: wire50.ACK_PROPERTIES[0x1F],
        0x21: _p(0x21, "Receive Maximum", "receive_maximum", "two"),
        0x22: _p(0x22, "Topic Alias Maximum", "topic_alias_maximum", "two"),
        0x24: _p(0x24, "Maximum QoS", "maximum_qos", "byte"),
        0x25: _p(0x25, "Retain Available", "retain_available", "byte"),
        0x27: _p(0x27, "Maximum Packet Size", "maximum_packet_size", "four"),
        0x28: _p(
            0x28, "Wildcard Subscription Available", "wildcard_subscription_available", "byte"
        ),
        0x29: _p(0x29, _SIA, "subscription_identifier_available", "byte"),
        0x2A: _p(0x2A, "Shared Subscription Available", "shared_subscription_available", "byte"),
    }
)

#: which identifiers each packet (and the Will Properties of CONNECT, "WILL") may carry,
#: Table 2-4's last column
_ALLOWED: Mapping[str, tuple[int, ...]] = {
    "CONNECT": (0x11, 0x21, 0x27, 0x22, 0x19, 0x17, 0x26, 0x15, 0x16),
    "WILL": (0x18, 0x01, 0x02, 0x03, 0x08, 0x09, 0x26),
    "CONNACK": (
        0x11, 0x21, 0x24, 0x25, 0x27, 0x12, 0x22, 0x1F, 0x26, 0x28, 0x29, 0x2A, 0x13, 0x1A,
        0x1C, 0x15, 0x16,
    ),
    "PUBLISH": tuple(_PUB),
    "PUBACK": (0x1F, 0x26),
    "PUBREC": (0x1F, 0x26),
    "PUBREL": (0x1F, 0x26),
    "PUBCOMP": (0x1F, 0x26),
    "SUBSCRIBE": (0x0B, 0x26),
    "SUBACK": (0x1F, 0x26),
    "UNSUBSCRIBE": (0x26,),
    "UNSUBACK": (0x1F, 0x26),
    "DISCONNECT": (0x11, 0x1F, 0x26, 0x1C),
    "AUTH": (0x15, 0x16, 0x1F, 0x26),
}  # fmt: skip
#: the property rows of each packet (identifiers in Table 2-4's order, which is also the
#: order the writer uses)
TABLES: Mapping[str, Mapping[int, Property]] = MappingProxyType(
    {name: MappingProxyType({i: ALL[i] for i in sorted(ids)}) for name, ids in _ALLOWED.items()}
)
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
