"""Diagrams of distribution, generated from the model's own data (never drawn by hand).

``forwarding_dot(edition)`` draws the decision graphs of :mod:`.forwarding` (the copy one
subscription makes, the copies one session is owed, what happens to each copy, and the
retained messages a new subscription gets) as one Graphviz digraph: a question is a
diamond with "yes" and "no" edges, an action a box, an outcome a rounded box, each
labelled with the ids of the rules that decide it in ``edition``. ``retained_dot(edition)``
draws the retained store's transition table (:mod:`.retained`): one edge per entry,
"input / action [rule ids]", and a dashed edge for each other outcome the text allows.
``diagrams()`` gives every diagram of every edition by name, as ``diagrams.py`` does for
the flow tables.
"""

from __future__ import annotations

from collections.abc import Mapping

from pubproof.model.decisions import Node, NodeKind
from pubproof.model.distribution_rules import cite
from pubproof.model.editions import Edition
from pubproof.model.forwarding import (
    DISPATCH_GRAPH,
    RETAINED_GRAPH,
    SESSION_GRAPH,
    SUBSCRIPTION_GRAPH,
)
from pubproof.model.retained import retained_table

#: The decision graphs, in the order a message meets them, with their titles.
GRAPHS: tuple[tuple[str, str, Mapping[str, Node]], ...] = (
    ("subscription", "one message, one subscription", SUBSCRIPTION_GRAPH),
    ("session", "one message, one session", SESSION_GRAPH),
    ("dispatch", "each copy", DISPATCH_GRAPH),
    ("retained", "a subscription just made", RETAINED_GRAPH),
)
_SHAPES = {
    NodeKind.QUESTION: "diamond",
    NodeKind.ACTION: "box",
    NodeKind.OUTCOME: "box, style=rounded",
}


def _quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _label(node: Node, edition: Edition) -> str:
    ids = " ".join(cite(r, edition) for r in node.rules.get(edition, ()))
    return f"{node.text}\\n[{ids}]" if ids else node.text


def _skip(nodes: Mapping[str, Node], key: str, edition: Edition) -> str:
    """Past the questions that do not arise in ``edition`` (answered "no" unasked, as
    :func:`.decisions.walk` does): the node a walk really reaches from ``key``."""
    node = nodes[key]
    while node.kind is NodeKind.QUESTION and not node.applies(edition):
        assert node.no is not None
        node = nodes[node.no]
    return node.key


def _edges(nodes: Mapping[str, Node], edition: Edition) -> list[tuple[str, str, str]]:
    """The edges a walk in ``edition`` can take, from the start node on."""
    start = _skip(nodes, next(iter(nodes)), edition)
    edges, seen, todo = [], {start}, [start]
    while todo:
        node = nodes[todo.pop(0)]
        for target, label in ((node.yes, "yes"), (node.no, "no"), (node.then, "")):
            if target is None:
                continue
            target = _skip(nodes, target, edition)
            edges.append((node.key, target, label))
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return edges


def reachable(nodes: Mapping[str, Node], edition: Edition) -> list[str]:
    """The keys of the nodes a walk in ``edition`` can pass, in the graph's order."""
    start = _skip(nodes, next(iter(nodes)), edition)
    found = {start} | {t for _, t, _ in _edges(nodes, edition)}
    return [k for k in nodes if k in found]


def forwarding_dot(edition: Edition) -> str:
    """The forwarding decisions of ``edition`` as one Graphviz digraph."""
    lines = [
        f'digraph "forwarding-{edition.value}" {{',
        "    rankdir=TB;",
        '    node [fontsize=10, fontname="Helvetica"];',
        '    edge [fontsize=9, fontname="Helvetica"];',
    ]
    for name, title, nodes in GRAPHS:
        lines.append(f'    subgraph "cluster_{name}" {{')
        lines.append(f'        label="{_quote(title)}";')
        for key in reachable(nodes, edition):
            node = nodes[key]
            label = _quote(_label(node, edition)).replace("\\\\n", "\\n")
            lines.append(f'        "{name}.{key}" [shape={_SHAPES[node.kind]}, label="{label}"];')
        for source, target, edge in _edges(nodes, edition):
            attrs = f' [label="{edge}"]' if edge else ""
            lines.append(f'        "{name}.{source}" -> "{name}.{target}"{attrs};')
        lines.append("    }")
    # how the graphs hand over: a copy made goes to the session's graph, its copies each
    # to the dispatch graph; the retained messages of a new subscription are dispatched too
    retained_start = _skip(RETAINED_GRAPH, next(iter(RETAINED_GRAPH)), edition)
    lines.append('    "subscription.copy" -> "session.any-copy" [style=dotted];')
    lines.append('    "session.shaped" -> "dispatch.connected" [style=dotted];')
    lines.append('    "retained.rs-sent" -> "dispatch.connected" [style=dotted];')
    lines.append(f'    "subscription.match" -> "retained.{retained_start}" [style=invis];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def retained_dot(edition: Edition, readings: Mapping[str, str] | None = None) -> str:
    """The retained store's transitions in ``edition`` as a Graphviz digraph."""
    table = retained_table(edition, readings)
    lines = [
        f'digraph "retained-{edition.value}" {{',
        "    rankdir=LR;",
        "    node [shape=box, style=rounded];",
    ]
    for (state, event), step in table.items():
        ids = " ".join(cite(r, edition) for r in step.rules)
        label = _quote(f"{event.value} / {step.action.value} [{ids}]")
        lines.append(f'    {state.name} -> {step.next.name} [label="{label}"];')
        for other, action in step.alternatives:
            alt = _quote(f"{event.value} / {action.value} (allowed)")
            lines.append(f'    {state.name} -> {other.name} [label="{alt}", style=dashed];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def diagrams() -> dict[str, str]:
    """Every distribution diagram of every edition, by name."""
    named: dict[str, str] = {}
    for edition in Edition:
        named[f"forwarding-{edition.value}"] = forwarding_dot(edition)
        named[f"retained-{edition.value}"] = retained_dot(edition)
    return named
