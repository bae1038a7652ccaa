"""State diagrams generated from the flow tables (never drawn by hand).

``mermaid(table)`` gives a Mermaid ``stateDiagram-v2``; ``dot(table)`` a Graphviz digraph.
Each edge is one table entry: the input, then the actions, then the rules it rests on.
"""

from __future__ import annotations

from collections.abc import Mapping

from pubproof.model.flows import SENDER, Method, Step, receiver_table


def _edges(table: Mapping[tuple[object, object], Step]) -> list[tuple[str, str, str]]:
    edges = []
    for (state, event), step in table.items():
        actions = ", ".join(a.value for a in step.actions) or "nothing"
        label = f"{event.value} / {actions} [{' '.join(step.rules)}]"  # type: ignore[attr-defined]
        edges.append((state.name, step.next.name, label))  # type: ignore[attr-defined]
    return edges


def tables() -> dict[str, Mapping[tuple[object, object], Step]]:
    """Every table by name: the sender, and the receiver for each QoS 2 method."""
    named: dict[str, Mapping[tuple[object, object], Step]] = {"sender": SENDER}  # type: ignore[dict-item]
    for method in Method:
        named[f"receiver-method-{method.value.lower()}"] = receiver_table(method)  # type: ignore[assignment]
    return named


def mermaid(table: Mapping[tuple[object, object], Step]) -> str:
    lines = ["stateDiagram-v2", "    [*] --> FREE"]
    for source, target, label in _edges(table):
        lines.append(f"    {source} --> {target}: {label.replace(':', ' ')}")
    return "\n".join(lines) + "\n"


def dot(table: Mapping[tuple[object, object], Step], name: str = "flow") -> str:
    lines = [f'digraph "{name}" {{', "    rankdir=LR;", "    node [shape=box, style=rounded];"]
    for source, target, label in _edges(table):
        escaped = label.replace('"', '\\"')
        lines.append(f'    {source} -> {target} [label="{escaped}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"
