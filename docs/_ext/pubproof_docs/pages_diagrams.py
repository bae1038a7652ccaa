"""Diagrams generated from the model: the flow tables as Graphviz state machines (one per
concern, :mod:`pubproof_docs.state_diagrams`), the
distribution model's decision graphs and retained store (one diagram per concern, a tab per
edition), and the wire format as bit tables computed by the model's encoder and decoder."""

from __future__ import annotations

import re

from pubproof.model import distribution_diagrams
from pubproof.model.editions import Edition
from pubproof.model.retained import retained_table
from pubproof.model.trace import PublishP
from pubproof.model.wire import decode, decode_remaining_length, encode, encode_remaining_length
from pubproof.model.wire_rules import ACK_TYPES
from pubproof_docs import state_diagrams
from pubproof_docs.context import GENERATED, Context
from pubproof_docs.rst import esc, heading, indent, list_table, literal
from pubproof_docs.rulepages import key_of, rule_pages

STATES_DOC = f"{GENERATED}/state-machines"
DISTRIBUTION_DOC = f"{GENERATED}/distribution-diagrams"
WIRE_DOC = f"{GENERATED}/wire-format"


def _rule_links(rules: list[str], edition: str, pages: dict[str, str]) -> str:
    """Each rule id as a link to its statement on the traceability page (plain when the site
    has no statement for it)."""
    out = []
    for rule in dict.fromkeys(rules):
        key = key_of(rule, edition, pages)
        target = pages[key].removeprefix(f"{GENERATED}/") if key else None
        out.append(f"`{rule} <{target}>`__" if target else literal(rule))
    return ", ".join(out)


def states_page(ctx: Context) -> str:
    out = [heading("The QoS flows as state machines", "=")]
    out.append(
        "Drawn at build time from the transition tables of ``pubproof.model.flows`` (3.1 and "
        "3.1.1), ``pubproof.model.flows50`` and ``pubproof.model.topic_alias`` (5.0): one edge "
        "per table entry, labelled with the input, the actions and the rule ids it rests on. "
        "Each table is split by concern (its inputs), one small diagram each; together they "
        "draw every entry once (``pubproof_docs.state_diagrams``). Pairs a table does not "
        "define are judged by the tables' ``UNDEFINED_*`` entries (see :doc:`model-rules`).\n"
    )
    pages = rule_pages(ctx)
    for _key, title, tables, concerns, edition in state_diagrams.EDITIONS:
        out.append(heading(title, "-"))
        if edition != "5.0":
            out.append("MQTT 3.1 uses these tables with Method A only; 3.1.1 allows both.\n")
        for concern, edges in state_diagrams.edition_diagrams(tables, concerns):
            out.append(heading(f"{concern.title}, {title}", "~"))
            rules = [rule for edge in edges for rule in edge.rules]
            out.append(f"{esc(concern.intro)} Rules drawn: {_rule_links(rules, edition, pages)}.\n")
            caption = f"{concern.title}: {len(edges)} entries of {', '.join(concern.tables)}"
            out.append(_graphviz(state_diagrams.dot(concern, edges), caption))
    return "\n".join(out)


#: What each decision graph of the forwarding decides, for the page.
_GRAPH_INTROS = {
    "subscription": "For one message and one subscription: does it match, does No Local "
    "(5.0) or a Shared Subscription (5.0) take the copy away, and at which QoS and RETAIN "
    "the copy goes.",
    "session": "For one message and the copies one session's subscriptions made: one copy, "
    "or several overlapping ones (the reading ``overlapping-copies``; 5.0 Subscription "
    "Identifiers).",
    "dispatch": "For each copy: owed now to a connected session, kept for a disconnected one "
    "whose session persists (QoS 0: never in 3.1, optionally in 3.1.1 and 5.0).",
    "retained": "For a subscription just made: which retained messages it is sent (5.0: by "
    "Retain Handling; a Shared Subscription gets none).",
}


def cluster_dot(dot: str, name: str, title: str) -> str:
    """One cluster (``subgraph "cluster_<name>"``) of a Graphviz digraph of the model, as a
    digraph of its own: its nodes and edges as the model wrote them, the hand-over edges
    between clusters left out (the page says where each graph hands over)."""
    match = re.search(
        rf'^    subgraph "cluster_{re.escape(name)}" \{{\n(.*?)^    \}}$', dot, re.S | re.M
    )
    if match is None:
        raise LookupError(f"no cluster {name!r} in the diagram")
    head = dot.splitlines()[:4]  # digraph, rankdir, node and edge styles
    body = [line for line in match.group(1).splitlines() if not line.strip().startswith("label=")]
    graph = head[0].split('"')[1]
    return "\n".join(
        [f'digraph "{graph}-{name}" {{', *head[1:], f'    label="{title}";', "    labelloc=t;",
         *body, "}"]
    ) + "\n"  # fmt: skip


_EDGE = re.compile(r'^    (\w+) -> (\w+) \[label="(.*?)"(, style=dashed)?\];$')


def merged_edges(dot: str) -> str:
    """A state diagram of the model with the entries between the same two states (and of
    the same style) on one edge, one left-aligned line each: the retained store has two
    states and a dozen entries, whose labels would otherwise lie on top of each other."""
    groups: dict[tuple[str, str, bool], list[str]] = {}
    lines = []
    for line in dot.splitlines():
        match = _EDGE.match(line)
        if match:
            source, target, label, dashed = match.groups()
            groups.setdefault((source, target, bool(dashed)), []).append(label)
        elif line != "}":
            lines.append(line)
    lines += ["    nodesep=0.6;", "    ranksep=1.2;", "    edge [fontsize=10];"]
    for (source, target, dashed), labels in groups.items():
        text = "".join(label + "\\l" for label in labels)
        style = ", style=dashed" if dashed else ""
        lines.append(f'    {source} -> {target} [label="{text}"{style}];')
    return "\n".join([*lines, "}"]) + "\n"


def _tabs(items: list[tuple[str, str]]) -> str:
    """A tab per edition, each with its content."""
    out = [".. tab-set::\n"]
    for label, content in items:
        out.append(f"   .. tab-item:: {label}\n")
        out.append(indent(content, 6) + "\n")
    return "\n".join(out)


def _graphviz(dot: str, caption: str) -> str:
    return f".. graphviz::\n   :caption: {esc(caption)}\n\n" + indent(dot, 3) + "\n"


def _retained_rows(edition: Edition) -> list[list[str]]:
    from pubproof.model.distribution_rules import cite

    rows = []
    for (state, event), step in retained_table(edition).items():
        others = "; ".join(f"{a.value} → {n.name}" for n, a in step.alternatives)
        rows.append(
            [literal(state.name), esc(event.value), esc(step.action.value), literal(step.next.name),
             ", ".join(literal(cite(r, edition)) for r in step.rules), esc(others) or "—"]
        )  # fmt: skip
    return rows


def distribution_page(ctx: Context) -> str:
    out = [heading("Distribution, drawn", "=")]
    out.append(
        "What a server does with a message across sessions, drawn at build time from the "
        "distribution model's own data (``pubproof.model.distribution_diagrams``): the four "
        "decision graphs of ``pubproof.model.forwarding`` a message meets, one diagram each, "
        "and the retained store's transition table (``pubproof.model.retained``). A question is "
        "a diamond with *yes* and *no* edges, an action a box, an outcome a rounded box; each "
        "names the ids of the rules that decide it in that edition. A tab per edition: a "
        "question that does not arise in an edition (No Local before 5.0) is left out of its "
        "diagram. The rules are on :doc:`the traceability matrix <traceability>`; the "
        "readings named on :doc:`the readings page <readings>`.\n"
    )
    out.append(
        "The graphs hand over: a copy made for a subscription goes to the session's graph; "
        "each copy the session is owed, and each retained message sent for a new "
        "subscription, goes to the graph of each copy.\n"
    )
    for name, title, _nodes in distribution_diagrams.GRAPHS:
        out.append(heading(title[0].upper() + title[1:], "-"))
        out.append(_GRAPH_INTROS.get(name, "") + "\n")
        tabs = []
        for edition in Edition:
            dot = cluster_dot(distribution_diagrams.forwarding_dot(edition), name, title)
            tabs.append((f"MQTT {edition.value}",
                         _graphviz(dot, f"{title}, MQTT {edition.value}")))  # fmt: skip
        out.append(_tabs(tabs))
    out.append(heading("The retained store", "-"))
    out.append(
        "At most one retained message per topic name, in one of two states (``NONE``, "
        "``HELD``). A line per table entry, *input / action [rule ids]*, the entries between "
        "the same two states on one edge; a dashed edge is another outcome the text allows, "
        "which a judge accepts (3.1: a zero-length retained message may be kept, reading "
        "``retained-empty-31``). The table under each diagram is the same data.\n"
    )
    tabs = []
    for edition in Edition:
        content = _graphviz(merged_edges(distribution_diagrams.retained_dot(edition)),
                            f"the retained store, MQTT {edition.value}")  # fmt: skip
        content += "\n" + list_table(
            ["state", "input", "action", "next", "rules", "also allowed"],
            _retained_rows(edition),
            widths=[9, 25, 24, 8, 18, 16],
        )
        tabs.append((f"MQTT {edition.value}", content))
    out.append(_tabs(tabs))
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
    return {
        STATES_DOC: states_page(ctx),
        DISTRIBUTION_DOC: distribution_page(ctx),
        WIRE_DOC: wire_page(ctx),
    }
