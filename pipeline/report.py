"""``report.html``: one self-contained page (no scripts, nothing fetched): findings per
rule with an inline SVG bar chart, the first example of each rule as a decoded packet
trace, distribution per server and topic (:mod:`.report_distribution`: messages, copies,
findings with their traces across connections, the delivery latency plotted), the
reconciliation, and an overview of the connections.

Everything is read back from the written tables, so the page shows what the files hold.
Each rule id's title is what the project's registries say of it
(:func:`pubproof.model.titles.title`: the rule registry, then the normative index, then the
flow tables); the cell's tooltip names which one.
"""

from __future__ import annotations

import json
import os
from html import escape
from typing import Any

from pubproof.model.titles import title
from pubproof.pipeline.output import REPORT, read
from pubproof.pipeline.reconcile import quarantine_text, unreadable_text
from pubproof.pipeline.report_distribution import section

MAX_CONNECTIONS = 200
_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; max-width: 80em; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } td.n { text-align: right; }
code, .hex { font-family: ui-monospace, monospace; font-size: 12px; }
.hex { word-break: break-all; max-width: 28em; }
.violation, .malformed { background: #fadada; } .tolerated { background: #fff6d6; }
.deviation { background: #eaf1fb; }
.bad { color: #a00; font-weight: bold; } .ok { color: #070; font-weight: bold; }
.evidence td { font-size: 12px; }
"""
_KIND_COLOURS = {
    "malformed": "#c0392b", "violation": "#e67e22", "deviation": "#2f6db5", "tolerated": "#c9a400",
}  # fmt: skip


#: the title of an id that no registry holds (the report says so rather than guess)
NO_STATEMENT = (
    "(no statement for this id in the rule registry, the normative index or the flow tables)"
)


def _title(rule: str | None) -> tuple[str, str]:
    """The title of ``rule`` in the rule table, and where it comes from."""
    if rule is None:
        return "(no rule id: a control packet the model does not cover)", ""
    found = title(rule)
    if found is None:
        return NO_STATEMENT, ""
    return found.text, f"from {found.source.value}"


def write_report(out: str, reconciliation: dict[str, Any]) -> str:
    """Write ``out/report.html``; return its path."""
    summary = read(out, "summary")
    connections = read(out, "connections", limit=MAX_CONNECTIONS)
    path = os.path.join(out, REPORT)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(render(summary, connections, reconciliation, section(out, reconciliation)))
    return path


def render(
    summary: list[dict[str, Any]],
    connections: list[dict[str, Any]],
    reconciliation: dict[str, Any],
    distribution: str = "",
) -> str:
    """The whole page (``distribution``: its section, :func:`.report_distribution.section`)."""
    per_rule: dict[tuple[str | None, str], int] = {}
    for row in summary:
        key = (row["rule"], row["kind"])
        per_rule[key] = per_rule.get(key, 0) + row["count"]
    ordered = sorted(per_rule.items(), key=lambda item: (-item[1], item[0][0] or "", item[0][1]))
    ok = reconciliation.get("ok")
    verdict = (
        '<span class="ok">reconciled</span>' if ok else '<span class="bad">NOT RECONCILED</span>'
    )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>pubproof check</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>pubproof check</h1>",
        f"<p>{reconciliation['captures']} capture(s), {reconciliation['frames_in']:,} frames, "
        f"{reconciliation['connections']:,} MQTT connection(s), {reconciliation['packets']:,} "
        f"packets; engine {escape(str(reconciliation.get('engine')))}, edition "
        f"{escape(str(reconciliation.get('edition')))}; {verdict}.</p>",
        *(f'<p class="bad">{escape(line)}</p>' for line in unreadable_text(reconciliation)),
        f"<p>{escape(quarantine_text(reconciliation))}.</p>",
        "<h2>Findings per rule</h2>",
        _chart(ordered),
        _rule_table(ordered),
        "<h2>Per implementation endpoint</h2>",
        _summary_table(summary),
        "<h2>First example of each rule</h2>",
        *(_example(row) for row in _first_per_rule(summary)),
        distribution,
        "<h2>Reconciliation</h2>",
        _reconciliation(reconciliation),
        f"<h2>Connections (first {MAX_CONNECTIONS})</h2>",
        _connections(connections),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _chart(ordered: list[tuple[tuple[str | None, str], int]]) -> str:
    if not ordered:
        return "<p>No findings.</p>"
    bar_height, label_width, width = 18, 330, 420
    top = max(count for _, count in ordered)
    height = bar_height * len(ordered) + 10
    bars = []
    for i, ((rule, kind), count) in enumerate(ordered):
        y = 5 + i * bar_height
        length = max(1, round(width * count / top))
        colour = _KIND_COLOURS.get(kind, "#7f8c8d")
        label = escape(f"{rule or '(no rule)'} ({kind})")
        bars.append(
            f'<text x="{label_width - 6}" y="{y + 13}" text-anchor="end" font-size="12">'
            f"{label}</text>"
            f'<rect x="{label_width}" y="{y + 2}" width="{length}" height="{bar_height - 4}" '
            f'fill="{colour}"><title>{label}: {count}</title></rect>'
            f'<text x="{label_width + length + 4}" y="{y + 13}" font-size="12">{count}</text>'
        )
    total = label_width + width + 60
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="{height}" '
        f'role="img" aria-label="findings per rule">{"".join(bars)}</svg>'
    )


def _rule_table(ordered: list[tuple[tuple[str | None, str], int]]) -> str:
    rows = "".join(
        f'<tr class="{escape(kind)}"><td><code>{escape(rule or "-")}</code></td>'
        f"<td>{escape(kind)}</td><td class=n>{count:,}</td>{_title_cell(rule)}</tr>"
        for (rule, kind), count in ordered
    )
    return f"<table><tr><th>rule</th><th>kind</th><th>count</th><th>title</th></tr>{rows}</table>"


def _title_cell(rule: str | None) -> str:
    text, source = _title(rule)
    tip = f' title="{escape(source)}"' if source else ""
    return f"<td{tip}>{escape(text)}</td>"


def _summary_table(summary: list[dict[str, Any]]) -> str:
    rows = "".join(
        f'<tr class="{escape(r["kind"])}"><td>{escape(r["role"])}</td>'
        f"<td><code>{escape(r['endpoint'])}</code></td><td><code>{escape(r['rule'] or '-')}"
        f"</code></td><td>{escape(r['kind'])}</td><td class=n>{r['count']:,}</td>"
        f"<td class=n>{r['connections']:,}</td><td>{escape(r['example_capture'])} frame "
        f"{r['example_frame']}</td><td>{escape(_show(r.get('example_source')))}</td></tr>"
        for r in summary
    )
    head = (
        "<tr><th>role</th><th>endpoint</th><th>rule</th><th>kind</th><th>count</th>"
        "<th>connections</th><th>first example</th><th>its judge</th></tr>"
    )
    return f"<table>{head}{rows}</table>"


def _first_per_rule(summary: list[dict[str, Any]]) -> list[dict[str, Any]]:
    best: dict[tuple[str | None, str], dict[str, Any]] = {}
    for row in summary:
        key = (row["rule"], row["kind"])
        mine = (row["example_capture"], row["example_frame"], row["example_offset"])
        if key not in best or mine < (
            best[key]["example_capture"],
            best[key]["example_frame"],
            best[key]["example_offset"],
        ):
            best[key] = row
    return [best[k] for k in sorted(best, key=lambda k: (k[0] or "", k[1]))]


def _example(row: dict[str, Any]) -> str:
    entries = json.loads(row["example_evidence"])
    keys = ("frame", "dir", "offset", "type", "packet_id", "qos", "dup", "retain", "topic")
    lines = []
    for entry in entries:
        cells = "".join(f"<td>{escape(_show(entry.get(k)))}</td>" for k in keys)
        rest = {k: v for k, v in entry.items() if k not in (*keys, "conn")}
        lines.append(
            f"<tr>{cells}<td class=hex>{escape(json.dumps(rest, ensure_ascii=False))}</td></tr>"
        )
    head = "".join(f"<th>{k}</th>" for k in (*keys, "more"))
    return (
        f'<h3 id="{escape(str(row["rule"]))}"><code>{escape(row["rule"] or "-")}</code> '
        f"({escape(row['kind'])}) by {escape(row['role'])} <code>{escape(row['endpoint'])}"
        f"</code></h3><p>{escape(row['example_message'])}<br>"
        f"found by the {escape(_show(row.get('example_source')))} judge, "
        f"<code>{escape(row['example_connection'])}</code>, frame {row['example_frame']}, "
        f"stream offset {row['example_offset']}</p>"
        f'<table class="evidence"><tr>{head}</tr>{"".join(lines)}</table>'
    )


def _show(value: Any) -> str:
    return "" if value is None else str(value)


def _reconciliation(result: dict[str, Any]) -> str:
    rows = "".join(
        f"<tr><th>{escape(k)}</th><td><code>{escape(json.dumps(v))}</code></td></tr>"
        for k, v in result.items()
    )
    return f"<table>{rows}</table>"


def _connections(connections: list[dict[str, Any]]) -> str:
    keys = (
        "connection",
        "client_id",
        "edition",
        "clean_session",
        "first_frame",
        "last_frame",
        "frames",
        "bytes_c2s",
        "bytes_s2c",
        "packets",
        "violations",
        "tolerated",
        "deviations",
        "status",
    )
    head = "".join(f"<th>{k}</th>" for k in keys)
    rows = "".join(
        "<tr>" + "".join(f"<td>{escape(_show(c.get(k)))}</td>" for k in keys) + "</tr>"
        for c in connections
    )
    return f"<table><tr>{head}</tr>{rows}</table>"
