"""Search by rule id.

Sphinx's search splits ``MQTT-3.3.1-4`` at every dot and dash, so the query finds every
page with the numbers 3, 1 and 4 in it. The site's script (``_static/pubproof.js``) looks a
rule id up in a table of its own instead, written here at the end of the build as
``_static/pp-ruleids.js``: for each id, its clauses, its statement, the model rules that
implement it, and the theorems and tests that verify them, each with its page and anchor.
The search page shows them above Sphinx's own results.
"""

from __future__ import annotations

import json
from pathlib import Path

from pubproof.model.clauses import CLAUSES
from pubproof_docs.context import GENERATED, Context
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
    return table


def write(ctx: Context, outdir: Path) -> Path:
    """``_static/pp-ruleids.js`` in the built site."""
    path = outdir / "_static" / "pp-ruleids.js"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(rule_ids(ctx), ensure_ascii=False, separators=(",", ":"))
    path.write_text(f"window.PP_RULE_IDS = {data};\n", encoding="utf-8")
    return path
