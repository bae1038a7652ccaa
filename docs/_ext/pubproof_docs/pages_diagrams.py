"""Diagrams generated from the model: the flow tables as Graphviz state machines, and the
wire format as bit tables computed by the model's encoder and decoder."""

from __future__ import annotations

from pubproof.model import diagrams
from pubproof.model.editions import Edition
from pubproof.model.trace import PublishP
from pubproof.model.wire import decode, decode_remaining_length, encode, encode_remaining_length
from pubproof.model.wire_rules import ACK_TYPES
from pubproof_docs.context import GENERATED, Context
from pubproof_docs.rst import esc, heading, indent, list_table, literal

STATES_DOC = f"{GENERATED}/state-machines"
WIRE_DOC = f"{GENERATED}/wire-format"

_TITLES = {
    "sender": "Sender (per packet identifier)",
    "receiver-method-a": "Receiver, QoS 2 Method A (store, deliver on PUBREL)",
    "receiver-method-b": "Receiver, QoS 2 Method B (deliver on PUBLISH, hold the identifier)",
}


def states_page(ctx: Context) -> str:
    out = [heading("The QoS flows as state machines", "=")]
    out.append(
        "Drawn at build time by ``pubproof.model.diagrams.dot`` from the transition tables of "
        "``pubproof.model.flows``: one edge per table entry, labelled with the input, the "
        "actions and the rule ids it rests on. Pairs a table does not define are judged by "
        "the tables' ``UNDEFINED_*`` entries (see :doc:`model-rules`).\n"
    )
    for name, table in diagrams.tables().items():
        out.append(heading(_TITLES.get(name, name), "-"))
        out.append(f".. graphviz::\n   :caption: {esc(name)}: {len(table)} table entries\n")
        out.append(indent(diagrams.dot(table, name), 3) + "\n")
    return "\n".join(out)


def _bits(byte: int) -> list[str]:
    return [str(byte >> bit & 1) for bit in range(7, -1, -1)]


def _field_masks() -> dict[str, int]:
    """Which bits of the first byte each PUBLISH flag field occupies: the model's encoder
    is asked for packets that differ in one field only, and the bytes compared."""
    base: PublishP = {
        "type": "PUBLISH", "dup": False, "qos": 1, "retain": False, "topic": "a",
        "packet_id": 1, "payload_hex": "",
    }  # fmt: skip
    first = encode(base)[0]
    masks = {
        "DUP": encode({**base, "dup": True})[0] ^ first,
        "QoS": (encode({**base, "qos": 2})[0] ^ first)
        | (encode({**base, "qos": 0, "packet_id": None})[0] ^ first),
        "RETAIN": encode({**base, "retain": True})[0] ^ first,
    }
    masks["packet type"] = 0xF0
    return masks


def _first_byte_table() -> str:
    masks = _field_masks()
    header = ["", *(f"bit {b}" for b in range(7, -1, -1))]
    names = []
    for bit in range(7, -1, -1):
        owner = next((n for n, m in masks.items() if m >> bit & 1), "?")
        names.append(esc(owner))
    rows = [["field", *names]]
    packet: PublishP = {
        "type": "PUBLISH", "dup": False, "qos": 1, "retain": False, "topic": "a/b",
        "packet_id": 10, "payload_hex": "",
    }  # fmt: skip
    first = encode(packet)[0]
    rows.append([f"{literal(f'0x{first:02x}')} (QoS 1)", *_bits(first)])
    for qos in (0, 2):
        other = encode({**packet, "qos": qos, "packet_id": None if qos == 0 else 10})[0]
        rows.append([f"{literal(f'0x{other:02x}')} (QoS {qos})", *_bits(other)])
    return list_table(header, rows, css="pp-bits")


def _ack_table() -> str:
    header = ["packet", *(f"bit {b}" for b in range(7, -1, -1)), "3.1: flags accepted"]
    rows = []
    for name in ACK_TYPES.values():
        data = encode({"type": name, "packet_id": 10})  # type: ignore[typeddict-item]
        accepted = sum(
            decode(bytes([data[0] & 0xF0 | flags]) + data[1:], Edition.V31).failure is None
            for flags in range(16)
        )
        rows.append([f"{name} 3.1.1 ({literal(data.hex())})", *_bits(data[0]), f"{accepted} of 16"])
    return list_table(header, rows, css="pp-bits")


def _rl_table() -> str:
    header = ["value", "bytes", "byte 1 bits", "byte 2 bits", "byte 3 bits", "byte 4 bits"]
    rows = []
    for value in (0, 127, 128, 16_383, 16_384, 2_097_151, 2_097_152, 268_435_455):
        data = encode_remaining_length(value)
        cells = ["".join(_bits(b)) for b in data] + [""] * (4 - len(data))
        rows.append(
            [f"{value:,}", literal(data.hex(" ")), *(literal(c) if c else "" for c in cells)]
        )
    return list_table(header, rows, css="pp-rl")


def _example_table() -> str:
    """The worked example of the texts, encoded by the model; its fields found from the
    decoded packet."""
    packet: PublishP = {
        "type": "PUBLISH", "dup": False, "qos": 1, "retain": False, "topic": "a/b",
        "packet_id": 10, "payload_hex": "",
    }  # fmt: skip
    data = encode(packet)
    decoded = decode(data).packets[0]
    assert decoded == packet
    field = decode_remaining_length(data[1:])
    assert isinstance(field, tuple)
    remaining, body = field
    rl_bytes = body  # the field's bytes: the body starts right after them
    topic = decoded["topic"].encode("utf-8")
    labels = ["fixed header: type and flags"]
    labels += [f"Remaining Length ({remaining})"] * rl_bytes
    labels += [
        f"topic name length MSB ({len(topic) >> 8})",
        f"topic name length LSB ({len(topic) & 0xFF})",
    ]
    labels += [f"topic name {chr(b)!r}" for b in topic]
    labels += [f"packet identifier MSB ({10 >> 8})", f"packet identifier LSB ({10 & 0xFF})"]
    rows = []
    for index, byte in enumerate(data):
        rows.append(
            [f"byte {index + 1}", esc(labels[index]), literal(f"0x{byte:02x}"), *_bits(byte)]
        )
    header = ["", "field", "hex", *(str(b) for b in range(7, -1, -1))]
    return list_table(header, rows, css="pp-bits")


def wire_page(ctx: Context) -> str:
    out = [heading("The wire format, bit by bit", "=")]
    out.append(
        "Every table here is computed at build time by the model (``pubproof.model.wire``): "
        "bytes come from its encoder, field positions from encoding packets that differ in one "
        "field, and the 3.1 column from its decoder.\n"
    )
    out.append(heading("PUBLISH fixed header, byte 1", "-"))
    out.append(_first_byte_table())
    out.append(heading("The acknowledgements' fixed header, byte 1", "-"))
    out.append(
        "In 3.1.1 the flags are fixed (PUBREL ``0010``, the others ``0000``) [MQTT-2.2.2-1]; "
        "3.1 marks them ``x``. The last column counts the flag values the model's 3.1 decoder "
        "accepts with its default reading ``ack-flags=ignore``.\n"
    )
    out.append(_ack_table())
    out.append(heading("Remaining Length", "-"))
    out.append(
        "Seven bits per byte, least significant group first; bit 7 says another byte follows. "
        "Shortest encodings at each boundary, from ``encode_remaining_length``:\n"
    )
    out.append(_rl_table())
    out.append(heading("The worked example: topic a/b, QoS 1, packet identifier 10", "-"))
    example = encode({"type": "PUBLISH", "dup": False, "qos": 1, "retain": False, "topic": "a/b",
                      "packet_id": 10, "payload_hex": ""})  # fmt: skip
    out.append(f"The whole packet: {literal(example.hex())}.\n")
    out.append(_example_table())
    return "\n".join(out)


def pages(ctx: Context) -> dict[str, str]:
    return {STATES_DOC: states_page(ctx), WIRE_DOC: wire_page(ctx)}
