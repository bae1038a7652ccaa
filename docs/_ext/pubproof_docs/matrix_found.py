"""The matrix page's section on what exploration found: every committed reproducer of
``pubproof explore`` (``docs/matrix/reproducers/*/reproducer.json``), beside the
hand-written checks.

A row per reproducer: the implementation and edition, the rules it fails (linked to their
statements), how many moves it takes, what the implementation did, and which of the
matrix's own checks of that implementation and edition fail one of those rules (none: the
fault is one only exploration reports). Under the table, each reproducer folds open to its
moves and its trace, byte for byte, as its README in the repository gives them; CI replays
each against a fresh broker (``tests/test_explore_live.py``).
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from pubproof.testing.reproducer import load, move_lines, trace_lines
from pubproof_docs.context import GENERATED, Context
from pubproof_docs.rulepages import key_of, rule_pages

#: verdicts of a matrix row that count as the check reporting a fault
BAD = ("violation", "no-answer", "error")


def reproducers(docs: Path) -> list[tuple[str, dict[str, Any]]]:
    """(folder name, data) of each reproducer committed under the docs folder ``docs``, in
    folder order."""
    folder = docs / "matrix" / "reproducers"
    if not folder.is_dir():
        return []
    return [
        (path.name, load(path))
        for path in sorted(folder.iterdir())
        if (path / "reproducer.json").is_file()
    ]


def anchor(name: str) -> str:
    """The anchor of a reproducer's folded trace on the matrix page."""
    return "found-" + name.replace(".", "-")


def reporting_checks(data: dict[str, Any], results: list[dict[str, Any]]) -> list[str]:
    """The matrix's checks of the reproducer's implementation and edition that fail every
    rule it fails; if none does, those that fail one of them. (A failure under a specific
    rule and the general MQTT-4.8.0-1 is thereby matched to the checks of that specific
    rule, not to every check of a malformed packet.)"""
    name = data["implementation"].split()[0]
    rules = data["failure"]["rules"]
    mine = [r for r in results if r["implementation"] == name and r["edition"] == data["edition"]]
    for wanted in (all, any):
        checks = sorted(
            {r["check"] for r in mine if wanted(r["rule_verdicts"].get(x) in BAD for x in rules)}
        )
        if checks and rules:
            return checks
    return []


def _rules(data: dict[str, Any], pages: dict[str, str]) -> str:
    rules = data["failure"]["rules"]
    if not rules:
        return f"<em>{escape(data['failure']['key'])}</em>"
    out = []
    for rule in rules:
        key = key_of(rule, data["edition"], pages)
        text = f"<code>{escape(rule)}</code>"
        href = pages[key].removeprefix(f"{GENERATED}/") if key else None
        out.append(f'<a href="{escape(href, quote=True)}">{text}</a>' if href else text)
    return " ".join(out)


def section(ctx: Context, results: list[dict[str, Any]]) -> str:
    """The section's raw HTML (empty when nothing is committed)."""
    found = reproducers(ctx.docs)
    if not found:
        return ""
    pages = rule_pages(ctx)
    rows, folds = [], []
    for name, data in found:
        checks = reporting_checks(data, results)
        by_hand = (
            ", ".join(f"<code>{escape(c)}</code>" for c in checks)
            if checks
            else "<strong>none</strong>"
        )
        rows.append(
            f"<tr><td>{escape(data['implementation'])}</td><td>{escape(data['edition'])}</td>"
            f"<td>{_rules(data, pages)}</td><td>{len(data['moves'])}</td>"
            f'<td>{escape(data["observed"])} <a href="#{anchor(name)}">moves and trace</a></td>'
            f"<td>{by_hand}</td></tr>"
        )
        moves = "".join(f"<li>{escape(m)}</li>" for m in move_lines(data))
        trace = escape("\n".join(trace_lines(data)))
        folds.append(
            f'<details class="pp-found" id="{anchor(name)}"><summary><code>{escape(name)}'
            f"</code></summary><p>Expected (the model): {escape(data['expected'])}</p>"
            f"<ol>{moves}</ol><pre>{trace}</pre></details>"
        )
    table = (
        '<div class="pp-matrix-scroll"><table class="pp-found-table"><tr>'
        "<th>implementation</th><th>edition</th><th>rule</th><th>moves</th>"
        "<th>what it did</th><th>a hand-written check that fails it</th></tr>"
        + "".join(rows)
        + "</table></div>"
    )
    return table + "".join(folds)


__all__ = ["anchor", "reporting_checks", "reproducers", "section"]
