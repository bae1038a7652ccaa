"""The HTML report: one self-contained page (no scripts, no outside resources), a table of
every check, and each check's evidence as a table of packets and events.

Published inside a site (the docs' conformance matrix), the page can carry a line of
navigation back to the site and link each rule id to the rule's page there
(:class:`SiteLinks`); on its own (``pubproof probe --html``) it links nowhere.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
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
nav.site { margin-bottom: 1em; } a.rule { text-decoration: none; }
"""

_PACKET_KEYS = ("dir", "client", "hex", "t", "type", "case")
#: the directions of the broker probe and of the client probe (pubproof as the server)
_ARROWS = {
    "to-broker": "&rarr; broker",
    "from-broker": "&larr; broker",
    "to-client": "&rarr; client (from pubproof's server)",
    "from-client": "&larr; client",
}


@dataclass(frozen=True, kw_only=True, slots=True)
class SiteLinks:
    """Where a report published inside a site links to: ``back`` the (label, URL) pairs of
    its navigation line, ``rules`` each rule id's page; URLs relative to the report."""

    back: tuple[tuple[str, str], ...] = ()
    rules: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for label, url in self.back:
            if not label or not url:
                raise ValueError(f"a navigation link needs a label and a URL: {(label, url)!r}")


_NOWHERE = SiteLinks()


def render(report: Report, *, links: SiteLinks = _NOWHERE) -> str:
    """The whole page; ``links`` when it is published inside a site."""
    counts = ", ".join(f"{n} {v}" for v, n in report.counts().items() if n)
    readings = ", ".join(f"{k}={v}" for k, v in report.readings.items())
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>pubproof probe: {escape(report.target)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        _nav(links),
        f"<h1>pubproof probe of <code>{escape(report.target)}</code></h1>",
        f"<p>MQTT {escape(report.edition)}; readings: {escape(readings) or 'none'}; "
        f"{len(report.checks)} checks in {report.seconds:.1f} s: {escape(counts)}.</p>",
        _summary(report, links),
        *(_check(result, links) for result in report.checks),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _nav(links: SiteLinks) -> str:
    if not links.back:
        return ""
    items = " &middot; ".join(
        f'<a href="{escape(url, quote=True)}">{escape(label)}</a>' for label, url in links.back
    )
    return f'<nav class="site">{items}</nav>'


def _summary(report: Report, links: SiteLinks) -> str:
    rows = [
        f'<tr class="{escape(r.verdict)}"><td><a href="#{escape(r.id)}">{escape(r.id)}</a></td>'
        f"<td>{escape(r.verdict)}</td><td>{_rules(r, links)}</td><td>{escape(r.source)}</td>"
        f"<td>{escape(r.message)}</td></tr>"
        for r in report.checks
    ]
    head = "<tr><th>check</th><th>verdict</th><th>rules</th><th>judge</th><th>message</th></tr>"
    return f"<table>{head}{''.join(rows)}</table>"


def _rules(result: CheckResult, links: SiteLinks) -> str:
    """The rules the implementation owes, each with its verdict, then what pubproof broke
    on purpose to bring the check about (never the implementation's fault)."""
    listed = [*result.rules, *(r for r in result.rule_verdicts if r not in result.rules)]
    own = " ".join(_rule(rule, result.rule_verdicts.get(rule), links) for rule in listed)
    if not result.provoked:
        return own
    sent = " ".join(_linked(f"<code>{escape(r)}</code>", r, links) for r in result.provoked)
    return f'{own} <span class="provoked">provoked (sent on purpose): {sent}</span>'


def _rule(rule: str, verdict: str | None, links: SiteLinks) -> str:
    """A rule id, coloured and titled with its own verdict where the check gives one."""
    if verdict is None:
        return _linked(f"<code>{escape(rule)}</code>", rule, links)
    return _linked(
        f'<code class="{escape(verdict)}" title="{escape(rule)}: {escape(verdict)}">'
        f"{escape(rule)}&nbsp;{escape(verdict)}</code>",
        rule,
        links,
    )


def _linked(html: str, rule: str, links: SiteLinks) -> str:
    """``html`` inside a link to the rule's page, where the site has one."""
    url = links.rules.get(rule)
    return f'<a class="rule" href="{escape(url, quote=True)}">{html}</a>' if url else html


def _check(result: CheckResult, links: SiteLinks) -> str:
    rows = "".join(_entry(entry) for entry in result.evidence)
    head = "<tr><th>t (s)</th><th>client</th><th>direction</th><th>packet or event</th>" \
        "<th>bytes</th></tr>"  # fmt: skip
    return (
        f'<h2 id="{escape(result.id)}">{escape(result.id)}: '
        f'<span class="{escape(result.verdict)}">{escape(result.verdict)}</span></h2>'
        f"<p>{escape(result.title)}. {escape(result.message)}</p><p>{_rules(result, links)}</p>"
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
