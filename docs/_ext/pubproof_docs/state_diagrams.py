"""The flow tables split into one state diagram per concern, for the state-machines page.

Rules / theory of operation
---------------------------
A flow table drawn whole (the 3.1.1 sender has 14 entries, the 5.0 one 20) is a graph
too wide for the content column: the browser scales it down until its labels are about
7 px high. So each table is drawn as several small diagrams, one per *concern*: a concern
names the tables it draws from (``pubproof.model.diagrams.tables()`` and ``tables50()``)
and the inputs it keeps (the QoS 1 sender: the application's QoS 1 publish and PUBACK);
its edges are the entries of those tables with those inputs, nothing else. The concerns
of an edition must between them take every entry of its tables exactly once:
:func:`edition_diagrams` raises otherwise, so an input added to the model stops the
build instead of falling off the page.

Concerns that draw from both receiver tables (QoS 0 and 1, the reconnect) draw the
entries the two methods share once: an entry found in both tables must be the same step.

The entries between the same two states share an edge (its label one entry after another),
which carries an SVG id, ``<tables>--<state>--<inputs>`` (tables and inputs each joined by
``+``), so that the tests can check, from the built page alone, that the diagrams hold every
entry of every table.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from dataclasses import dataclass

from pubproof.model import diagrams

#: Widest label line, in characters: keeps each diagram inside the content column.
WRAP = 30


@dataclass(frozen=True, slots=True, kw_only=True)
class Concern:
    """One diagram: the entries of ``tables`` whose input is one of ``inputs`` (the input
    enum's member names; empty: every input)."""

    key: str
    title: str
    intro: str
    tables: tuple[str, ...]
    inputs: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if not self.key or not self.tables:
            raise ValueError(f"a concern needs a key and tables: {self!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Edge:
    """One table entry as drawn: the states by name, the label's three parts."""

    state: str
    event: str
    next: str
    text: str
    actions: str
    rules: tuple[str, ...]


def _c(key: str, title: str, intro: str, tables: tuple[str, ...], *inputs: str) -> Concern:
    return Concern(key=key, title=title, intro=intro, tables=tables, inputs=frozenset(inputs))


_RA = ("receiver-method-a",)
_RB = ("receiver-method-b",)
_R5A = ("receiver-5.0-method-a",)
_R5B = ("receiver-5.0-method-b",)

#: The concerns of the 3.1 and 3.1.1 tables (``diagrams.tables()``).
CONCERNS_3: tuple[Concern, ...] = (
    _c("sender-qos1", "QoS 1 sender",
       "The application publishes at QoS 1; the packet identifier waits for PUBACK.",
       ("sender",), "PUBLISH_QOS1", "PUBACK"),
    _c("sender-qos2", "QoS 2 sender",
       "PUBLISH, then PUBREC answered with PUBREL, then PUBCOMP; a repeated PUBREC gets "
       "PUBREL again.",
       ("sender",), "PUBLISH_QOS2", "PUBREC", "PUBCOMP"),
    _c("sender-reconnect", "The sender on reconnect",
       "A resumed session re-sends what is unacknowledged (PUBLISH with DUP=1, or PUBREL); "
       "a clean session drops every state.",
       ("sender",), "RESUME", "CLEAN"),
    _c("receiver-qos0-qos1", "QoS 0 and QoS 1 receiver (either method)",
       "No state is held: QoS 0 is delivered, QoS 1 delivered and acknowledged with PUBACK, "
       "in whatever state the identifier is.",
       _RA + _RB, "PUBLISH_QOS0", "PUBLISH_QOS1"),
    _c("receiver-qos2-method-a", "QoS 2 receiver, Method A",
       "Store the message and send PUBREC; deliver it on PUBREL (the only method of 3.1).",
       _RA, "PUBLISH_QOS2", "PUBREL"),
    _c("receiver-qos2-method-b", "QoS 2 receiver, Method B",
       "Deliver on PUBLISH and hold the packet identifier until PUBREL (3.1.1).",
       _RB, "PUBLISH_QOS2", "PUBREL"),
    _c("receiver-reconnect", "The receiver on reconnect",
       "A resumed session keeps each identifier's state; a clean one frees it.",
       _RA + _RB, "RESUME", "CLEAN"),
)  # fmt: skip

#: The concerns of the MQTT 5.0 tables (``diagrams.tables50()``).
CONCERNS_5: tuple[Concern, ...] = (
    _c("sender-qos1-5", "QoS 1 sender",
       "As in 3.1.1, and each PUBLISH sent takes a unit of the send quota (the peer's "
       "Receive Maximum), which PUBACK gives back.",
       ("sender-5.0",), "PUBLISH_QOS1", "PUBACK_OK"),
    _c("sender-qos2-5", "QoS 2 sender",
       "The quota is taken by PUBLISH and given back by PUBCOMP; a PUBREC for an "
       "identifier not held is answered with PUBREL 0x92.",
       ("sender-5.0",), "PUBLISH_QOS2", "PUBREC_OK", "PUBCOMP_OK"),
    _c("sender-reason-codes-5", "The sender's error Reason Codes",
       "A PUBACK or PUBREC of 0x80 or more, or a PUBCOMP 0x92, ends the flow: the "
       "identifier is free, the quota given back, nothing re-sent.",
       ("sender-5.0",), "PUBACK_ERROR", "PUBREC_ERROR", "PUBCOMP_NOT_FOUND"),
    _c("sender-reconnect-5", "The sender on reconnect",
       "Clean Start 0 with a session present re-sends, taking the quota again; Clean Start 1 "
       "or an expired session drops every state.",
       ("sender-5.0",), "RESUME", "CLEAN"),
    _c("receiver-qos0-qos1-5", "QoS 0 and QoS 1 receiver (either method)",
       "QoS 0 delivered; QoS 1 accepted (delivered, PUBACK 0x00) or refused (PUBACK with "
       "the refusal's code, nothing delivered).",
       _R5A + _R5B, "PUBLISH_QOS0", "PUBLISH_QOS1", "PUBLISH_QOS1_REFUSED"),
    _c("receiver-qos2-method-a-5", "QoS 2 receiver, Method A",
       "Store and PUBREC; deliver the stored message on PUBREL.",
       _R5A, "PUBLISH_QOS2", "PUBREL_OK"),
    _c("receiver-qos2-method-b-5", "QoS 2 receiver, Method B",
       "Deliver and PUBREC; hold the identifier until PUBREL.",
       _R5B, "PUBLISH_QOS2", "PUBREL_OK"),
    _c("receiver-reason-codes-5", "The receiver's Reason Codes (both methods)",
       "A refused QoS 2 message (PUBREC of 0x80 or more) frees the identifier at once; a "
       "PUBREL 0x92 releases a held flow all the same.",
       _R5A + _R5B, "PUBLISH_QOS2_REFUSED", "PUBREL_NOT_FOUND"),
    _c("receiver-receive-maximum-5", "The receiver's Receive Maximum",
       "A new QoS 1 or 2 PUBLISH beyond the Receive Maximum it announced: DISCONNECT 0x93.",
       _R5A + _R5B, "PUBLISH_OVER_RECEIVE_MAXIMUM"),
    _c("receiver-reconnect-5", "The receiver on reconnect",
       "A resumed session keeps each identifier's state; Clean Start 1 or an expired "
       "session frees it.",
       _R5A + _R5B, "RESUME", "CLEAN"),
    _c("topic-alias-receiver-5", "Topic Alias, receiver (per alias)",
       "A topic name with an alias sets the mapping, an alias alone is resolved through it; "
       "an unknown or invalid alias closes the connection; mappings last one connection.",
       ("topic-alias-receiver",)),
    _c("topic-alias-sender-5", "Topic Alias, sender (per topic name)",
       "An alias is assigned while one is free, then the alias is sent alone; the map is "
       "forgotten with the connection.",
       ("topic-alias-sender",)),
)  # fmt: skip

#: The page's editions: heading, the tables (by name), the concerns, the edition whose
#: statements the rule ids name.
EDITIONS: tuple[tuple[str, str, Mapping[str, Mapping[tuple[object, object], object]],
                      tuple[Concern, ...], str], ...] = (
    ("mqtt-3", "MQTT 3.1 and 3.1.1", diagrams.tables(), CONCERNS_3, "3.1.1"),
    ("mqtt-5", "MQTT 5.0", diagrams.tables50(), CONCERNS_5, "5.0"),
)  # fmt: skip


def _edge(state: object, event: object, step: object) -> Edge:
    actions = ", ".join(a.value for a in step.actions) or "nothing"  # type: ignore[attr-defined]
    return Edge(
        state=state.name,  # type: ignore[attr-defined]
        event=event.name,  # type: ignore[attr-defined]
        next=step.next.name,  # type: ignore[attr-defined]
        text=event.value,  # type: ignore[attr-defined]
        actions=actions,
        rules=tuple(step.rules),  # type: ignore[attr-defined]
    )


def concern_edges(
    concern: Concern, tables: Mapping[str, Mapping[tuple[object, object], object]]
) -> list[Edge]:
    """The entries of the concern's tables with its inputs; an entry the tables share must
    be the same step in each."""
    found: dict[tuple[str, str], tuple[object, Edge]] = {}
    for name in concern.tables:
        for (state, event), step in tables[name].items():
            if concern.inputs and event.name not in concern.inputs:  # type: ignore[attr-defined]
                continue
            edge = _edge(state, event, step)
            seen = found.setdefault((edge.state, edge.event), (step, edge))
            if seen[0] != step:
                raise ValueError(f"{concern.key}: {edge.state}, {edge.event} differs between "
                                 f"{concern.tables}")  # fmt: skip
    return [edge for _, edge in found.values()]


def edition_diagrams(
    tables: Mapping[str, Mapping[tuple[object, object], object]], concerns: tuple[Concern, ...]
) -> list[tuple[Concern, list[Edge]]]:
    """Each concern with its edges; raises unless the concerns take every entry of every
    table once (an input no concern keeps, or two concerns keeping the same one)."""
    taken: dict[tuple[str, object, object], str] = {}
    out = []
    for concern in concerns:
        for name in concern.tables:
            for state, event in tables[name]:
                if not concern.inputs or event.name in concern.inputs:  # type: ignore[attr-defined]
                    other = taken.setdefault((name, state, event), concern.key)
                    if other != concern.key:
                        raise ValueError(f"{name}: {state}, {event} drawn by {other} and "
                                         f"{concern.key}")  # fmt: skip
        out.append((concern, concern_edges(concern, tables)))
    missing = [(n, s, e) for n, t in tables.items() for s, e in t if (n, s, e) not in taken]
    if missing:
        raise ValueError(f"table entries no diagram draws: {missing}")
    return out


def _wrap(text: str) -> str:
    return "\\n".join(textwrap.wrap(text, WRAP, break_long_words=False, break_on_hyphens=False))


def dot(concern: Concern, edges: list[Edge]) -> str:
    """The concern's Graphviz digraph: a node per state, an edge per pair of states, its label
    the entries between them (input, actions, rule ids; each part wrapped to :data:`WRAP`
    characters, a blank line between entries): Graphviz lays several loops on one state over
    each other's labels. Top to bottom, or left to right when at least half the entries keep
    their state."""
    tables = "+".join(concern.tables)
    # mostly self-loops (the reconnect, QoS 0): states side by side would spread the loops'
    # labels across the page; left to right stacks them
    # (there, more room between the ranks: a loop's label sits beside the edges leaving it)
    across = 2 * sum(edge.state == edge.next for edge in edges) >= len(edges)
    layout = "rankdir=LR; nodesep=0.6; ranksep=1.6" if across else "rankdir=TB; nodesep=0.5"
    lines = [
        f'digraph "{concern.key}" {{',
        f"    {layout};",
        '    node [shape=box, style=rounded, fontname="Helvetica", fontsize=14];',
        '    edge [fontname="Helvetica", fontsize=12];',
    ]
    pairs: dict[tuple[str, str], list[Edge]] = {}
    for edge in edges:
        pairs.setdefault((edge.state, edge.next), []).append(edge)
    for (state, nxt), entries in pairs.items():
        label = "\\n\\n".join(
            "\\n".join([_wrap(e.text), _wrap("/ " + e.actions), _wrap(f"[{' '.join(e.rules)}]")])
            for e in entries
        ).replace('"', '\\"')
        ident = f"{tables}--{state}--{'+'.join(e.event for e in entries)}"
        lines.append(f'    {state} -> {nxt} [id="{ident}", label="{label}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"
