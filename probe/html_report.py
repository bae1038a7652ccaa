"""The HTML report: one self-contained page (no scripts, no outside resources), a table of
every check, and each check's evidence as a table of packets and events."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from pubproof.probe.evidence import Entry
from pubproof.probe.report import CheckResult, Report

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
code, .hex { font-family: ui-monospace, monospace; font-size: 12px; }
.hex { word-break: break-all; max-width: 28em; }
/* evidence holds anything a peer sent or a driver printed (a 32,768-character topic, a
   command line): a cell wraps anywhere, so the page is never wider than its window */
p, h2, td { overflow-wrap: anywhere; }
td code, p code { overflow-wrap: anywhere; word-break: break-all; }
.pass { background: #dff5df; } .tolerated { background: #fff6d6; }
.deviation { background: #eaf1fb; } .provoked { color: #666; }
.violation { background: #fadada; } .no-answer { background: #e6e6f5; }
.error { background: #f0d0f0; } .case td { font-weight: bold; }
.event td { color: #555; font-style: italic; }
"""

_PACKET_KEYS = ("dir", "client", "hex", "t", "type", "case")
#: the directions of the broker probe and of the client probe (pubproof as the server)
_ARROWS = {
    "to-broker": "&rarr; broker",
    "from-broker": "&larr; broker",
    "to-client": "&rarr; client (from pubproof's server)",
    "from-client": "&larr; client",
}


def render(report: Report) -> str:
    """The whole page."""
    counts = ", ".join(f"{n} {v}" for v, n in report.counts().items() if n)
    readings = ", ".join(f"{k}={v}" for k, v in report.readings.items())
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>pubproof probe: {escape(report.target)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>pubproof probe of <code>{escape(report.target)}</code></h1>",
        f"<p>MQTT {escape(report.edition)}; readings: {escape(readings) or 'none'}; "
        f"{len(report.checks)} checks in {report.seconds:.1f} s: {escape(counts)}.</p>",
        _summary(report),
        *(_check(result) for result in report.checks),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _summary(report: Report) -> str:
    rows = [
        f'<tr class="{escape(r.verdict)}"><td><a href="#{escape(r.id)}">{escape(r.id)}</a></td>'
        f"<td>{escape(r.verdict)}</td><td>{_rules(r)}</td><td>{escape(r.source)}</td>"
        f"<td>{escape(r.message)}</td></tr>"
        for r in report.checks
    ]
    head = "<tr><th>check</th><th>verdict</th><th>rules</th><th>judge</th><th>message</th></tr>"
    return f"<table>{head}{''.join(rows)}</table>"


def _rules(result: CheckResult) -> str:
    """The rules the implementation owes, each with its verdict, then what pubproof broke
    on purpose to bring the check about (never the implementation's fault)."""
    listed = [*result.rules, *(r for r in result.rule_verdicts if r not in result.rules)]
    own = " ".join(_rule(rule, result.rule_verdicts.get(rule)) for rule in listed)
    if not result.provoked:
        return own
    sent = " ".join(f"<code>{escape(rule)}</code>" for rule in result.provoked)
    return f'{own} <span class="provoked">provoked (sent on purpose): {sent}</span>'


def _rule(rule: str, verdict: str | None) -> str:
    """A rule id, coloured and titled with its own verdict where the check gives one."""
    if verdict is None:
        return f"<code>{escape(rule)}</code>"
    return (
        f'<code class="{escape(verdict)}" title="{escape(rule)}: {escape(verdict)}">'
        f"{escape(rule)}&nbsp;{escape(verdict)}</code>"
    )


def _check(result: CheckResult) -> str:
    rows = "".join(_entry(entry) for entry in result.evidence)
    head = "<tr><th>t (s)</th><th>client</th><th>direction</th><th>packet or event</th>" \
        "<th>bytes</th></tr>"  # fmt: skip
    return (
        f'<h2 id="{escape(result.id)}">{escape(result.id)}: '
        f'<span class="{escape(result.verdict)}">{escape(result.verdict)}</span></h2>'
        f"<p>{escape(result.title)}. {escape(result.message)}</p><p>{_rules(result)}</p>"
        f"<table>{head}{rows}</table>"
    )


def _entry(entry: Entry) -> str:
    t = f"{entry.get('t', 0.0):.3f}"
    client = escape(str(entry.get("client") or ""))
    if "event" in entry:
        details = {k: v for k, v in entry.items() if k not in ("event", "client", "t")}
        text = escape(entry["event"]) + (
            f" <code>{escape(_json(details))}</code>" if details else ""
        )
        return (
            f'<tr class="event"><td>{t}</td><td>{client}</td><td></td><td>{text}</td><td></td></tr>'
        )
    fields = {k: v for k, v in entry.items() if k not in _PACKET_KEYS}
    css = ' class="case"' if entry.get("case") else ""
    arrow = _ARROWS.get(str(entry.get("dir")), escape(str(entry.get("dir"))))
    name = escape(str(entry.get("type")))
    mark = " (the case)" if entry.get("case") else ""
    return (
        f"<tr{css}><td>{t}</td><td>{client}</td><td>{arrow}</td>"
        f"<td>{name}{mark} <code>{escape(_json(fields))}</code></td>"
        f'<td class="hex">{escape(str(entry.get("hex", "")))}</td></tr>'
    )


def _json(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)
