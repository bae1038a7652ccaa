"""State diagrams generated from the flow tables (never drawn by hand).

``mermaid(table)`` gives a Mermaid ``stateDiagram-v2``; ``dot(table)`` a Graphviz digraph.
Each edge is one table entry: the input, then the actions, then the rules it rests on.
``tables()`` are the 3.1 and 3.1.1 flows, ``tables50()`` the MQTT 5.0 ones and Topic Alias.
"""

from __future__ import annotations

from collections.abc import Mapping

from pubproof.model.flows import SENDER, Method, Step, receiver_table
from pubproof.model.flows50 import SENDER50, Step50, receiver_table50
from pubproof.model.topic_alias import RECEIVER_ALIAS, SENDER_ALIAS, AliasStep

AnyStep = Step | Step50 | AliasStep


def _edges(table: Mapping[tuple[object, object], AnyStep]) -> list[tuple[str, str, str]]:
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


def tables50() -> dict[str, Mapping[tuple[object, object], AnyStep]]:
    """The MQTT 5.0 tables by name: the sender, the receiver for each QoS 2 method, and
    the Topic Alias tables of the receiver and the sender."""
    named: dict[str, Mapping[tuple[object, object], AnyStep]] = {"sender-5.0": SENDER50}  # type: ignore[dict-item]
    for method in Method:
        named[f"receiver-5.0-method-{method.value.lower()}"] = receiver_table50(method)  # type: ignore[assignment]
    named["topic-alias-receiver"] = RECEIVER_ALIAS  # type: ignore[assignment]
    named["topic-alias-sender"] = SENDER_ALIAS  # type: ignore[assignment]
    return named


def _initial(table: Mapping[tuple[object, object], AnyStep]) -> str:
    """The initial state: the state of the table's first entry (FREE, UNSET, NONE)."""
    return next(iter(table))[0].name  # type: ignore[attr-defined,no-any-return]


def mermaid(table: Mapping[tuple[object, object], AnyStep]) -> str:
    lines = ["stateDiagram-v2", f"    [*] --> {_initial(table)}"]
    for source, target, label in _edges(table):
        lines.append(f"    {source} --> {target}: {label.replace(':', ' ')}")
    return "\n".join(lines) + "\n"


def dot(table: Mapping[tuple[object, object], AnyStep], name: str = "flow") -> str:
    lines = [f'digraph "{name}" {{', "    rankdir=LR;", "    node [shape=box, style=rounded];"]
    for source, target, label in _edges(table):
        escaped = label.replace('"', '\\"')
        lines.append(f'    {source} -> {target} [label="{escaped}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"
