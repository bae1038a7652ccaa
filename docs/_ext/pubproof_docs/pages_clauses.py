"""The clause pages: the PUBLISH section clause by clause, all five languages aligned in
tabs that follow each other (one sync group per page), and beside each clause its normative
ids, the model rules with their source included from the code, the theorems with the
latest status, and the tests."""

from __future__ import annotations

import json
from importlib import resources

from pubproof.model.clauses import CLAUSES, LANGUAGES, Clause
from pubproof_docs.context import GENERATED, Context
from pubproof_docs.pages_trace import (
    need,
    source_links,
    test_link,
    theorem_status,
    verdict,
)
from pubproof_docs.rst import esc, heading, indent, list_table, literal
from pubproof_docs.sources import lines_option, merged
from pubproof_docs.trace import ModelRule

CLAUSES_DOC = f"{GENERATED}/clauses"

#: The tab label of each language, in the language itself.
LANGUAGE_NAMES = {"en": "English", "de": "Deutsch", "ja": "日本語", "es": "Español", "zh": "中文"}


def provenance() -> dict[str, dict[str, str | None]]:
    text = (resources.files("pubproof.model.texts") / "provenance.json").read_text("utf-8")
    texts: dict[str, dict[str, str | None]] = json.loads(text)["texts"]
    return texts


def _tabs(clause: Clause, sources: dict[str, dict[str, str | None]]) -> str:
    out = [".. tab-set::", "   :sync-group: lang", "   :class: pp-languages", ""]
    for lang in LANGUAGES:
        edition = sources[lang]["edition"]
        out.append(f"   .. tab-item:: {LANGUAGE_NAMES[lang]} ({edition})")
        out.append(f"      :sync: {lang}")
        out.append("")
        text = clause.text(lang)
        if text is None:
            reason = clause.gaps.get(lang, "")
            out.append("      .. container:: pp-gap")
            out.append("")
            out.append(f"         **Not in the {sources[lang]['language']} text.** {esc(reason)}")
        else:
            where = ", ".join(f"{s.first}-{s.last}" for s in clause.spans[lang])
            out.append("      .. pp-excerpt::")
            out.append(f"         :lang: {lang}")
            out.append(f"         :lines: publish.{lang}.txt lines {where}")
            out.append("")
            out.append(indent(text, 9))
            out.append("")
            out.append(
                f"      .. rst-class:: pp-where\n\n         publish.{lang}.txt, lines {where}"
            )
        out.append("")
    return "\n".join(out) + "\n"


def _normative(ctx: Context, clause: Clause, rules: list[ModelRule]) -> str:
    ids = list(dict.fromkeys([*clause.normative_ids, *(i for r in rules for i in r.implements)]))
    rows = []
    for ref in ids:
        statement = ctx.trace.statements.get(ref)
        if statement is None:
            continue
        rows.append(
            [
                need(statement.need),
                esc(statement.strength) or "—",
                esc(statement.binds) or "—",
                esc(statement.text),
                verdict(ctx, statement),
            ]
        )
    if not rows:
        return ""
    return list_table(
        ["id", "strength", "binds", "statement (paraphrase)", "coverage"],
        rows,
        widths=[18, 12, 15, 43, 12],
    )


def _rule_block(ctx: Context, rule: ModelRule) -> str:
    out = []
    spans = merged(rule.spans)
    files = {s.path for s in spans}
    assert len(files) <= 1, rule.need
    title = f"{rule.title}"
    out.append(f".. dropdown:: {esc(title)}\n   :class-container: pp-rule\n")
    if rule.rule is not None:
        ids = ", ".join(f"{literal(i)} ({e.value})" for e, i in rule.rule.ids.items())
        also = ", ".join(literal(i) for i in rule.rule.also)
        out.append(
            indent(
                f"{need(rule.need)}: ids {ids}"
                + (f"; also {also}" if also else "")
                + f"; vector corpus cases: {rule.corpus_cases}.",
                3,
            )
        )
        out.append("")
    for span in spans:
        path = span.path.relative_to(ctx.root).as_posix()
        out.append(f"   .. literalinclude:: /../{path}")
        out.append("      :language: python")
        out.append(f"      :lines: {lines_option([span])}")
        out.append("      :lineno-match:")
        out.append("")
    if spans:
        out.append("   " + source_links(ctx, CLAUSES_DOC, spans))
    out.append("")
    return "\n".join(out) + "\n"


def _clause_rules(ctx: Context, clause: Clause) -> list[ModelRule]:
    rules = [ctx.trace.rules_for_key(key) for key in clause.rules]
    for ref in clause.normative_ids:
        rules += [r for r in ctx.trace.flow_rules_for(ref) if r not in rules]
    return rules


def _theorems(ctx: Context, rules: list[ModelRule]) -> str:
    wanted = {v for r in rules for v in r.verified_by if v.startswith("TH_")}
    rows = []
    for t in ctx.trace.theorems.values():
        # a theorem that does not reach its expected status verifies nothing, but it is
        # still shown here, failed, beside the rules it names
        if t.need in wanted or (not t.as_expected and set(t.verifies) & {r.need for r in rules}):
            rows.append(
                [need(t.need), esc(t.statement), theorem_status(t), esc(t.method),
                 f"{t.seconds:.2f} s"]
            )  # fmt: skip
    if not rows:
        return "No theorem names these rules.\n"
    return list_table(
        ["theorem", "statement", "status", "method", "time"], rows, widths=[18, 44, 16, 12, 10]
    )


def _tests(ctx: Context, rules: list[ModelRule]) -> str:
    wanted = {v for r in rules for v in r.verified_by if v.startswith("TE_")}
    items = []
    for test in ctx.trace.tests.values():
        if test.need in wanted:
            named = [ctx.trace.rules[r] for r in test.verifies if ctx.trace.rules[r] in rules]
            what = ", ".join(esc(r.key or r.implements[0]) for r in named)
            kind = "runs the vector corpus" if test.corpus else "names"
            items.append(f"- {test_link(ctx, CLAUSES_DOC, test)}: {kind} {what}")
    cases = [f"{esc(r.key)}: {r.corpus_cases}" for r in rules if r.key and r.corpus_cases]
    text = "\n".join(items) + "\n" if items else "No test names these rules.\n"
    if cases:
        text += (
            "\nVector corpus cases per rule (``vectors/corpus.jsonl``): " + "; ".join(cases) + ".\n"
        )
    return text


def _clause_section(ctx: Context, clause: Clause, sources: dict[str, dict[str, str | None]]) -> str:
    rules = _clause_rules(ctx, clause)
    out = [f".. _clause-{clause.id}:\n", heading(clause.title, "-"), esc(clause.summary) + "\n"]
    if clause.readings:
        out.append(
            "Readings: " + ", ".join(f":ref:`{r} <reading-{r}>`" for r in clause.readings) + "\n"
        )
    out.append(_tabs(clause, sources))
    if not rules and not clause.normative_ids:
        out.append(".. rst-class:: pp-none\n\nNo normative statement or model rule: prose only.\n")
        return "\n".join(out)
    out.append(".. rubric:: Normative ids\n")
    out.append(_normative(ctx, clause, rules) or "None.\n")
    out.append(".. rubric:: Model rules (source included from the code)\n")
    out.append("".join(_rule_block(ctx, r) for r in rules) or "None.\n")
    out.append(".. rubric:: Theorems (latest run)\n")
    out.append(_theorems(ctx, rules))
    out.append(".. rubric:: Tests\n")
    out.append(_tests(ctx, rules))
    return "\n".join(out)


def pages(ctx: Context) -> dict[str, str]:
    sources = provenance()
    out = [heading("The PUBLISH section, clause by clause", "=")]
    out.append(
        "The five source texts (``model/texts/publish.*.txt``, copied unchanged) split into "
        "aligned clauses (``model/texts/clauses.toml``). Choose a language in any tab: every "
        "clause on the page follows, and the choice is remembered. Beside each clause: its "
        "normative ids, the model rules with their source as it is in the code, the theorems "
        "with the status of the latest ``pubproof prove`` run, and the tests.\n"
    )
    rows = []
    for lang in LANGUAGES:
        s = sources[lang]
        rows.append(
            [literal(f"publish.{lang}.txt"), esc(s["language"] or ""), esc(s["edition"] or ""),
             esc(s["publisher"] or ""), esc(s["date"] or "not given"), esc(s["what"] or "")]
        )  # fmt: skip
    out.append(
        list_table(["file", "language", "edition", "publisher", "date", "what"], rows,
                   widths=[14, 12, 8, 18, 16, 32])
    )  # fmt: skip
    for clause in CLAUSES:
        out.append(_clause_section(ctx, clause, sources))
    return {CLAUSES_DOC: "\n".join(out)}
