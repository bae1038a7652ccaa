"""Search by rule id.

Sphinx's search splits ``MQTT-3.3.1-4`` at every dot and dash, so the query finds every
page with the numbers 3, 1 and 4 in it. The site's script (``_static/pubproof.js``) looks a
rule id up in a table of its own instead, written here at the end of the build as
``_static/pp-ruleids.js``: for each id, its clauses, its statement, the model rules that
implement it, the theorems and tests that verify them, and the conformance matrix's rows
and evidence pages that cite it, each with its page and anchor. The keys are the
standard's ids (``MQTT-3.3.1-4``, ``5.0:MQTT-3.3.1-4`` for MQTT 5.0's) and the project's
(``PP31-3.3-topic-empty``, ``5.0:PP50-...``); an id the matrix cites but no statement holds
gets its matrix hits alone. The search page shows them above Sphinx's own results, and for
an id the table lacks says there is no such rule instead of Sphinx's pages of numbers.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from pubproof.model.clauses import CLAUSES
from pubproof_docs.context import GENERATED, Context
from pubproof_docs.pages_matrix import MATRIX_DOC, STATIC, cited, load, row_anchor
from pubproof_docs.pages_theorems import theorem_doc

Hit = tuple[str, str, str]  # kind, text, URL from the site's root


def rule_ids(ctx: Context) -> dict[str, list[Hit]]:
    """Statement key (``MQTT-3.3.1-4``, ``5.0:MQTT-3.3.1-4``) -> what the site has on it."""
    table: dict[str, list[Hit]] = {}
    theorems = {t.need: t for t in ctx.trace.theorems.values()}
    tests = {t.need: t for t in ctx.trace.tests.values()}
    for key, statement in ctx.trace.statements.items():
        hits: list[Hit] = []
        if statement.edition != "5.0":
            for clause in CLAUSES:
                if statement.ref in clause.normative_ids:
                    hits.append(
                        ("clause", clause.title, f"{GENERATED}/clauses.html#clause-{clause.id}")
                    )
        hits.append(("statement", statement.title.replace("`", ""),
                     f"{GENERATED}/traceability.html#{statement.need}"))  # fmt: skip
        verifiers: list[str] = []
        for rule_need in statement.implemented_by:
            rule = ctx.trace.rules[rule_need]
            hits.append(("model rule", rule.title, f"{GENERATED}/model-rules.html#{rule.need}"))
            verifiers += [v for v in rule.verified_by if v not in verifiers]
        for need in verifiers:
            if need in theorems:
                t = theorems[need]
                hits.append(("theorem", t.id, f"{theorem_doc(t.id)}.html"))
        for need in verifiers:
            if need in tests:
                hits.append(("test", tests[need].nodeid, f"{GENERATED}/tests.html#{need}"))
        table[key] = hits
    data = load(ctx)
    if data is not None:
        for key, found in matrix_hits(data).items():
            table.setdefault(key, []).extend(found)
    return table


def _key(rule: str, edition: str) -> str:
    return f"5.0:{rule}" if edition == "5.0" else rule


def matrix_hits(data: dict[str, Any]) -> dict[str, list[Hit]]:
    """Statement key -> the matrix rows that judge the rule (with their verdicts counted)
    and the evidence pages of each implementation and edition that judged it."""
    rows: dict[str, dict[tuple[str, str], Counter[str]]] = {}
    evidence: dict[str, list[Hit]] = {}
    for row in data["results"]:
        for rule in cited(row):
            key = _key(rule, row["edition"])
            verdict = row["rule_verdicts"].get(rule, row["verdict"])
            rows.setdefault(key, {}).setdefault((row["kind"], row["check"]), Counter())[
                verdict
            ] += 1
            text = f"{row['implementation']} {row['edition']}, {row['check']}: {verdict}"
            url = f"{STATIC}/{row['implementation']}-{row['edition']}.html#{row['check']}"
            evidence.setdefault(key, []).append(("evidence", text, url))
    for codec in data["codecs"]:
        for item in codec["by_rule"]:
            key = _key(item["rule"], codec["edition"])
            rows.setdefault(key, {}).setdefault(("codec", item["rule"]), Counter())[
                f"{codec['implementation']} {item['codec']}"
            ] += item["count"]
    out: dict[str, list[Hit]] = {}
    for key, checks in rows.items():
        for (kind, check), verdicts in checks.items():
            counted = ", ".join(f"{n} {v}" for v, n in verdicts.most_common())
            name = "codecs" if kind == "codec" else f"{kind} check {check}"
            out.setdefault(key, []).append(
                ("matrix", f"{name}: {counted}", f"{MATRIX_DOC}.html#{row_anchor(kind, check)}")
            )
        out[key] += evidence.get(key, [])
    return out


def write(ctx: Context, outdir: Path) -> Path:
    """``_static/pp-ruleids.js`` in the built site."""
    path = outdir / "_static" / "pp-ruleids.js"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(rule_ids(ctx), ensure_ascii=False, separators=(",", ":"))
    path.write_text(f"window.PP_RULE_IDS = {data};\n", encoding="utf-8")
    return path
