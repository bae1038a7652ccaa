"""The conformance matrix page, from ``docs/matrix/results.json`` (written by
``scripts/probe-matrix``): every broker, client library and codec we can install,
judged by pubproof.

One table per kind: brokers and clients (a row per check, a column per implementation and
edition, each cell its verdict, coloured, linking to the check's evidence trace), codecs (a
row per rule, a column per codec and edition, each cell how many corpus vectors the codec
accepted that the model rejects, rejected that it accepts, or decoded differently). Then a
summary per implementation, and what each finding means in the standard's words (the
rule's title and quote from the registry, or the normative index for a rule the model does
not hold).

Each check's row names the rules it judges, each linked to its statement; each row has an
anchor (:func:`row_anchor`) the rule-id search links to.

The evidence pages are the probe's own HTML report (:mod:`pubproof.probe.html_report`) of
each implementation and edition, written at build time under ``_static/matrix/``, with a
line of navigation back to the site and each rule id linked to its statement.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from html import escape
from typing import Any

from pubproof.model.rules import RULES
from pubproof.probe.html_report import SiteLinks, render
from pubproof.probe.report import CheckResult, Report
from pubproof_docs.context import GENERATED, Context
from pubproof_docs.matrix_found import section as found_section
from pubproof_docs.rst import glossary_terms, heading, indent
from pubproof_docs.rulepages import key_of, rule_pages
from pubproof_docs.standards import oasis_block

MATRIX_DOC = f"{GENERATED}/matrix"
STATIC = "_static/matrix"
COLOURS = {
    "pass": "#dff5df", "tolerated": "#fff6d6", "deviation": "#eaf1fb", "violation": "#fadada",
    "no-answer": "#e6e6f5", "error": "#f0d0f0", "not-applicable": "#eeeeee",
}  # fmt: skip
BAD = ("violation", "no-answer", "error")
#: a SHOULD not followed: shown apart from what an implementation got wrong
SHOULD = ("deviation",)


def row_anchor(kind: str, check: str) -> str:
    """The anchor of a check's (or, for ``codec``, a rule's) row in its table."""
    return f"matrix-{kind}-" + re.sub(r"[^a-z0-9]+", "-", check.lower()).strip("-")


def cited(row: dict[str, Any]) -> list[str]:
    """The rules a result row judges: the check's own, then any other it gave a verdict on."""
    rules: list[str] = list(row["rules"])
    return rules + [r for r in row.get("rule_verdicts", {}) if r not in rules]


def load(ctx: Context) -> dict[str, Any] | None:
    """``docs/matrix/results.json``, if the matrix has been run."""
    path = ctx.docs / "matrix" / "results.json"
    if not path.is_file():
        return None
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _report(data: dict[str, Any]) -> Report:
    checks = tuple(
        CheckResult(
            id=c["id"], title=c["title"], rules=tuple(c["rules"]), verdict=c["verdict"],
            evidence=tuple(c["evidence"]), message=c["message"], source=c.get("source", ""),
            seconds=c.get("seconds", 0.0), rule_verdicts=c.get("rule_verdicts", {}),
            provoked=tuple(c.get("provoked", ())),
        )
        for c in data["checks"]
    )  # fmt: skip
    return Report(data["target"], data["edition"], data.get("readings", {}), checks,
                  data.get("seconds", 0.0))  # fmt: skip


def write_evidence(ctx: Context) -> None:
    """The HTML report of every probe in the matrix, under ``_static/matrix/``."""
    folder = ctx.docs / "matrix" / "evidence"
    out = ctx.docs / STATIC
    if not folder.is_dir():
        return
    out.mkdir(parents=True, exist_ok=True)
    pages = rule_pages(ctx)
    for path in sorted(folder.glob("*.json")):
        report = _report(json.loads(path.read_text(encoding="utf-8")))
        ids = {r for c in report.checks for r in (*c.rules, *c.rule_verdicts, *c.provoked)}
        rules = {}
        for rule in sorted(ids):
            key = key_of(rule, report.edition, pages)
            if key is not None:
                rules[rule] = f"../../{pages[key]}"
        links = SiteLinks(
            back=(("pubproof", "../../index.html"),
                  ("the conformance matrix", f"../../{MATRIX_DOC}.html")),
            rules=rules,
        )  # fmt: skip
        page = render(report, links=links)
        target = out / f"{path.stem}.html"
        if not target.is_file() or target.read_text(encoding="utf-8") != page:
            target.write_text(page, encoding="utf-8")


def meaning(rule: str) -> str:
    """What a rule says, in the standard's words where the project has them."""
    try:
        found = RULES.by_id(rule)
    except KeyError:
        return _index_row(rule)
    quote = found.quotes[0].text if found.quotes else ""
    return f"{found.title}: “{quote}”" if quote else found.title


def _index_row(rule: str) -> str:
    from importlib.resources import files

    text = (files("pubproof.model") / "texts" / "normative-index.txt").read_text("utf-8")
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] == rule and len(cells) >= 5:
            return f"{cells[-1]} (normative index, {cells[2]}, {cells[3]})"
    return "(not in the registry)"


def _cell(row: dict[str, Any]) -> str:
    verdict = row["verdict"]
    name, edition = row["implementation"], row["edition"]
    href = f"../{STATIC}/{name}-{edition}.html#{row['check']}"
    mark = "" if row.get("stable", True) else "*"
    title = escape(row["message"][:300], quote=True)
    return (
        f'<td style="background:{COLOURS.get(verdict, "#fff")};white-space:nowrap">'
        f'<a href="{escape(href)}" '
        f'title="{title}">{escape(verdict)}{mark}</a></td>'
    )


def _rule_links(rules: dict[str, str], pages: dict[str, str]) -> str:
    """Rule id -> edition it was cited under, as links to their statements (from the page)."""
    out = []
    for rule, edition in rules.items():
        key = key_of(rule, edition, pages)
        text = f"<code>{escape(rule)}</code>"
        href = pages[key].removeprefix(f"{GENERATED}/") if key else None
        out.append(f'<a href="{escape(href, quote=True)}">{text}</a>' if href else text)
    return f'<span class="pp-check-rules">{" ".join(out)}</span>'


def _table(kind: str, rows: list[dict[str, Any]], pages: dict[str, str]) -> str:
    columns = list(dict.fromkeys((r["implementation"], r["edition"]) for r in rows))
    checks = list(dict.fromkeys(r["check"] for r in rows))
    by = {(r["implementation"], r["edition"], r["check"]): r for r in rows}
    head = "".join(f"<th>{escape(n)}<br>{escape(e)}</th>" for n, e in columns)
    body = []
    for check in checks:
        cells = "".join(
            _cell(by[(n, e, check)]) if (n, e, check) in by else "<td></td>" for n, e in columns
        )
        rules: dict[str, str] = {}
        for r in rows:
            if r["check"] == check:
                for rule in cited(r):
                    # an id cited under 3.1 or 3.1.1 links to the older editions' statement
                    if rules.get(rule) in (None, "5.0"):
                        rules[rule] = r["edition"]
        body.append(
            f'<tr id="{row_anchor(kind, check)}"><td><code>{escape(check)}</code> '
            f"{_rule_links(rules, pages)}</td>{cells}</tr>"
        )
    return (
        '<div class="pp-matrix-scroll"><table class="pubproof-matrix">'
        f"<tr><th>check</th>{head}</tr>{''.join(body)}</table></div>"
    )


def _codec_table(codecs: list[dict[str, Any]], pages: dict[str, str]) -> str:
    columns = [(c["implementation"], c["edition"]) for c in codecs]
    counts: dict[str, dict[tuple[str, str], Counter[str]]] = defaultdict(
        lambda: defaultdict(Counter)
    )
    for c in codecs:
        for item in c["by_rule"]:
            counts[item["rule"]][(c["implementation"], c["edition"])][item["codec"]] += item[
                "count"
            ]
    head = "".join(f"<th>{escape(n)}<br>{escape(e)}</th>" for n, e in columns)
    body = []
    for rule in sorted(counts):
        cells = []
        for column in columns:
            found = counts[rule].get(column)
            if not found:
                cells.append("<td></td>")
                continue
            text = ", ".join(f"{n} {how}" for how, n in sorted(found.items()))
            cells.append(f'<td style="background:{COLOURS["violation"]}">{escape(text)}</td>')
        editions = {
            c["edition"]: None
            for c in codecs
            if counts[rule].get((c["implementation"], c["edition"]))
        }
        edition = next((e for e in editions if e != "5.0"), "5.0")
        body.append(
            f'<tr id="{row_anchor("codec", rule)}"><td>{_rule_links({rule: edition}, pages)}'
            f"</td>{''.join(cells)}</tr>"
        )
    agree = "".join(f"<td>{c['agree']} of {c['vectors']}</td>" for c in codecs)
    body.append(f"<tr><td><b>agree with the corpus</b></td>{agree}</tr>")
    return (
        '<div class="pp-matrix-scroll"><table class="pubproof-matrix">'
        f"<tr><th>rule</th>{head}</tr>{''.join(body)}</table></div>"
    )


def _raw(html: str) -> str:
    return ".. raw:: html\n\n" + indent(html, 3) + "\n"


def _summary(data: dict[str, Any]) -> tuple[str, set[str]]:
    lines, wrong_rules = [], set()
    for impl in data["implementations"]:
        name = impl["implementation"]
        editions = ", ".join(impl["editions"])
        head = f"**{name} {impl['version']}** ({impl['kind']}; MQTT {editions})"
        if impl["kind"] == "codec":
            results = [
                c for c in data["codecs"] if c["implementation"] == name.removesuffix("-codec")
            ]
            parts = []
            for c in results:
                rules = sorted({b["rule"] for b in c["by_rule"]})
                wrong_rules.update(rules)
                named = ", ".join(f"[{r}]" for r in rules) or "none"
                agrees = f"agrees on {c['agree']} of {c['vectors']} vectors"
                parts.append(f"{c['edition']}: {agrees}; disagrees on {named}")
            lines.append(f"- {head}: " + "; ".join(parts))
            continue
        rows = [r for r in data["results"] if r["implementation"] == name]
        parts = []
        for edition in impl["editions"]:
            mine = [r for r in rows if r["edition"] == edition]
            counted = Counter(r["verdict"] for r in mine)
            bad = sorted({rule for r in mine for rule, v in r["rule_verdicts"].items() if v in BAD})
            should = sorted(
                {rule for r in mine for rule, v in r["rule_verdicts"].items() if v in SHOULD}
            )
            wrong_rules.update(bad, should)
            verdicts = ", ".join(f"{n} {v}" for v, n in counted.most_common())
            part = f"{edition}: {verdicts}; got wrong "
            part += ", ".join(f"[{r}]" for r in bad) or "nothing"
            if should:
                part += "; did not follow the SHOULD of " + ", ".join(f"[{r}]" for r in should)
            parts.append(part)
        lines.append(f"- {head}: " + "; ".join(parts))
    return "\n".join(lines) + "\n", wrong_rules


def matrix_page(ctx: Context) -> str:
    """The page."""
    data = load(ctx)
    out = [heading("The conformance matrix", "=", overline=True), ""]
    if data is None:
        return "\n".join(out) + "\nNo results yet: run ``scripts/probe-matrix``.\n"
    write_evidence(ctx)
    out.append(
        f"Every implementation we could install, judged by pubproof {data['pubproof']} on "
        f"{data['date']}: brokers by ``pubproof probe``, client libraries by ``pubproof "
        "probe-client`` (pubproof plays the server), codecs by the vector corpus. Each "
        "verdict comes from the model, with the rule it rests on; each cell links to the "
        "packet trace it was judged on. An implementation is charged only with its own "
        "duties: the rules pubproof broke on purpose to provoke a check are listed as "
        "*provoked* in its trace, never as the implementation's; a SHOULD not followed is a "
        "*deviation*, shown apart from what it got wrong. A verdict marked * differed "
        "between two runs (a timing-dependent check) and is not compared in CI. Refresh with "
        "``scripts/probe-matrix`` (see the README).\n"
    )
    out.append(
        glossary_terms("pass", "tolerated", "deviation", "violation", "no-answer", "provoked",
                       "normative id", "project id", "edition", "reading")
    )  # fmt: skip
    summary, wrong = _summary(data)
    out += [heading("Summary per implementation", "="), "", summary]
    for kind, title in (("broker", "Brokers"), ("client", "Client libraries")):
        rows = [r for r in data["results"] if r["kind"] == kind]
        if rows:
            out += [heading(title, "="), "", _raw(_table(kind, rows, rule_pages(ctx)))]
    if data["codecs"]:
        out += [
            heading("Codecs against the vector corpus", "="), "",
            "For each rule, how many vectors of the corpus each codec *accepted* (handed "
            "back a packet the model rejects), *rejected* (raised on, or dropped, bytes the "
            "model accepts) or *decoded-differently*. Several rules (discouraged code "
            "points, the minimal Remaining Length) are judged under a reading, named in "
            "each vector (``results.json``).\n",
            _raw(_codec_table(data["codecs"], rule_pages(ctx))),
        ]  # fmt: skip
    found = found_section(ctx, data["results"])
    if found:
        out += [
            heading("What exploration found", "="), "",
            "Faults ``pubproof explore`` found on its own (moves the model enables, chosen "
            "at random for a few clients at once, every packet judged), each shrunk to the "
            "fewest moves that still fail the same rule and committed as a reproducer "
            "(``docs/matrix/reproducers/`` in the repository; CI replays each against a "
            "fresh broker). ``pubproof replay FOLDER --target mqtt://HOST:PORT`` runs one "
            "again. The last column names the hand-written checks above that fail its rules "
            "for the same implementation and edition: *none* marks a fault only exploration "
            "reports. How they were found: :doc:`the exploration guide </guides/explore>`.\n",
            _raw(found),
        ]  # fmt: skip
    out += [heading("What each finding means", "="), "", oasis_block("3.1.1", "5.0")]
    for rule in sorted(wrong):
        out.append(f"- **[{rule}]** {meaning(rule)}")
    return "\n".join(out) + "\n"


def pages(ctx: Context) -> dict[str, str]:
    """docname -> text."""
    return {MATRIX_DOC: matrix_page(ctx)}


__all__ = ["MATRIX_DOC", "cited", "load", "meaning", "pages", "row_anchor", "write_evidence"]
