"""The state-machines page of the built site: the flow tables drawn as several small
diagrams per edition that between them hold every (state, input) entry of every table, on
an edge from the state to the entry's next state whose label holds its input, actions and
rules.
Read from the built HTML and the SVG files it embeds (the browser test measures the text)."""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path

from support.docs_site import built_site

from pubproof.model import diagrams

SVG = "{http://www.w3.org/2000/svg}"
#: The page's edition sections and the tables each draws.
Tables = Mapping[str, Mapping[tuple[object, object], object]]
SECTIONS: dict[str, Tables] = {
    "mqtt-3-1-and-3-1-1": diagrams.tables(),
    "mqtt-5-0": diagrams.tables50(),
}

Drawn = dict[str, tuple[str, str]]  # edge id -> (next state, the label's text)


def _diagrams(page: Path, section: str) -> list[Drawn]:
    """The edges of each diagram in ``section`` of the page: its SVG files, read."""
    text = page.read_text("utf-8")
    start = text.index(f'<section id="{section}">')
    ends = [text.find(f'<section id="{s}">', start + 1) for s in SECTIONS]
    end = min([e for e in ends if e > start] or [len(text)])
    out = []
    for source in re.findall(r'<object data="([^"]+\.svg)"', text[start:end]):
        root = ET.parse(page.parent / html.unescape(source)).getroot()
        edges: Drawn = {}
        for group in root.iter(f"{SVG}g"):
            if group.get("class") != "edge":
                continue
            title = group.findtext(f"{SVG}title") or ""
            label = " ".join(t.text or "" for t in group.iter(f"{SVG}text"))
            edges[group.get("id", "")] = (title.split("->")[-1], label)
        out.append(edges)
    return out


def _entries(tables: Tables) -> set[tuple[str, ...]]:
    """(table, state, input, next) of every entry, with its label's parts."""
    out: set[tuple[str, ...]] = set()
    for name, table in tables.items():
        for (state, event), step in table.items():
            actions = ", ".join(a.value for a in step.actions) or "nothing"  # type: ignore[attr-defined]
            out.add((name, state.name, event.name, step.next.name,  # type: ignore[attr-defined]
                     event.value, actions, " ".join(step.rules)))  # type: ignore[attr-defined]  # fmt: skip
    return out


def _holds(label: str, *parts: str) -> bool:
    """Every part is in the label, whatever the line breaks (a wrapped line is a space)."""
    flat = " ".join(label.split())
    return all(" ".join(part.split()) in flat for part in parts)


def _names(ident: str, table: str, state: str, event: str) -> bool:
    """The edge id ``<tables>--<state>--<inputs>`` (tables and inputs each joined by ``+``:
    the entries between two states share an edge) names this table's entry."""
    names, source, events = ident.split("--")
    return source == state and event in events.split("+") and table in names.split("+")


def test_each_edition_draws_every_table_entry_once_over_several_diagrams() -> None:
    page = built_site() / "_generated" / "state-machines.html"
    for section, tables in SECTIONS.items():
        drawn = _diagrams(page, section)
        assert len(drawn) > 1, section
        edges = {ident: edge for one in drawn for ident, edge in one.items()}
        # no edge drawn twice (in two diagrams)
        assert sum(len(one) for one in drawn) == len(edges), section
        expected = _entries(tables)
        for table, state, event, nxt, text, actions, rules in expected:
            found = [edge for ident, edge in edges.items() if _names(ident, table, state, event)]
            assert len(found) == 1, (section, table, state, event)
            target, label = found[0]
            assert target == nxt, (table, state, event)
            assert _holds(label, text, actions, rules), (table, state, event, label)
        # and nothing the tables do not hold
        keys = {(t, s, e) for t, s, e, *_ in expected}
        for ident in edges:
            names, state, events = ident.split("--")
            for event in events.split("+"):
                assert any((t, state, event) in keys for t in names.split("+")), ident
