"""The clause page: the PUBLISH section clause by clause, the languages the reader picks
(two to five, remembered by the browser) side by side in columns aligned clause by clause,
the model's column beside them (normative ids, rules, theorems, tests), and under them the
normative ids, the model rules with their source included from the code, the theorems with
the latest status, and the tests."""

from __future__ import annotations

import json
from importlib import resources

from pubproof.model.clauses import CLAUSES, LANGUAGES, Clause
from pubproof.model.rules import Kind
from pubproof_docs import wording
from pubproof_docs.context import GENERATED, Context
from pubproof_docs.pages_theorems import status_words, theorem_ref
from pubproof_docs.pages_trace import (
    index_ids,
    need,
    paraphrase,
    source_links,
    test_link,
    theorem_status,
    verdict,
    words_edition,
)
from pubproof_docs.rst import esc, heading, indent, list_table, literal
from pubproof_docs.sources import lines_option, merged
from pubproof_docs.trace import ModelRule, TheoremNode
from pubproof_docs.wording import Passage

CLAUSES_DOC = f"{GENERATED}/clauses"

#: The tab label of each language, in the language itself.
LANGUAGE_NAMES = {"en": "English", "de": "Deutsch", "ja": "日本語", "es": "Español", "zh": "中文"}


def provenance() -> dict[str, dict[str, str | None]]:
    text = (resources.files("pubproof.model.texts") / "provenance.json").read_text("utf-8")
    texts: dict[str, dict[str, str | None]] = json.loads(text)["texts"]
    return texts


def _columns(clause: Clause, sources: dict[str, dict[str, str | None]]) -> list[str]:
    """One column per language: its name, the clean excerpt (or why the language lacks the
    clause) and the lines it comes from."""
    out = []
    for lang in LANGUAGES:
        edition = sources[lang]["edition"]
        col = [f".. container:: pp-col pp-col-{lang}", ""]
        col.append(f"   .. rst-class:: pp-col-head\n\n   {LANGUAGE_NAMES[lang]} ({edition})\n")
        text = clause.text(lang)
        if text is None:
            reason = clause.gaps.get(lang, "")
            col.append("   .. container:: pp-gap")
            col.append("")
            col.append(f"      **Not in the {sources[lang]['language']} text.** {esc(reason)}")
        else:
            where = ", ".join(f"{s.first}-{s.last}" for s in clause.spans[lang])
            col.append("   .. pp-excerpt::")
            col.append(f"      :lang: {lang}")
            col.append(f"      :lines: publish.{lang}.txt lines {where}")
            col.append("")
            col.append(indent(text, 6))
            col.append("")
            col.append(f"   .. rst-class:: pp-where\n\n      publish.{lang}.txt, lines {where}")
        out.append("\n".join(col) + "\n")
    return out


def _aside(ctx: Context, clause: Clause, rules: list[ModelRule]) -> str:
    """The column beside the texts: the clause's normative ids, rules, theorems and tests,
    as links (the tables under the texts give the details)."""
    ids = list(dict.fromkeys([*clause.normative_ids, *(i for r in rules for i in r.implements)]))
    statements = [ctx.trace.statements[i] for i in ids if i in ctx.trace.statements]
    theorems = _clause_theorems(ctx, rules)
    tests = {v for r in rules for v in r.verified_by if v.startswith("TE_")}
    lines = [".. container:: pp-col pp-side", "", "   .. rst-class:: pp-col-head", "",
             "   The model", ""]  # fmt: skip
    items = [
        ("Normative ids", ", ".join(need(s.need) for s in statements)),
        ("Rules", ", ".join(need(r.need) for r in rules)),
        ("Theorems", ", ".join(f"{theorem_ref(t)} ({status_words(t)})" for t in theorems)),
        ("Tests", f"{len(tests)} (listed below)" if tests else ""),
    ]
    for name, value in items:
        lines.append(f"   | **{name}:** {value or '—'}")
    return "\n".join(lines) + "\n"


def _parallel(
    ctx: Context, clause: Clause, rules: list[ModelRule], sources: dict[str, dict[str, str | None]]
) -> str:
    """The languages side by side (the reader's choice of two to five, see pubproof.js),
    with the model's column beside them; stacked on a narrow screen."""
    body = "\n".join([*_columns(clause, sources), _aside(ctx, clause, rules)])
    return ".. container:: pp-parallel\n\n" + indent(body, 3) + "\n"


def _normative(
    ctx: Context, clause: Clause, rules: list[ModelRule], passages: dict[str, list[Passage]]
) -> str:
    """The clause's normative ids: the index's paraphrase and, for an id of the indexes,
    the standard's own sentence under it in the same cell (:mod:`pubproof_docs.wording`; a
    column of its own would squeeze the table at 1280 px)."""
    ids = list(dict.fromkeys([*clause.normative_ids, *(i for r in rules for i in r.implements)]))
    indexed = index_ids(ctx)["3.1.1"]
    rows = []
    for ref in ids:
        statement = ctx.trace.statements.get(ref)
        if statement is None:
            continue
        own = words_edition(statement) == "3.1.1" and ref in indexed
        rows.append(
            [
                need(statement.need),
                esc(statement.strength) or "—",
                esc(statement.binds) or "—",
                paraphrase(statement.text)
                + (f"\n\n**The standard:** {wording.inline(passages, ref)}" if own else ""),
                verdict(ctx, statement),
            ]
        )
    if not rows:
        return ""
    return list_table(
        ["id", "strength", "binds", "statement (paraphrase; the standard's words)", "coverage"],
        rows,
        widths=[15, 20, 21, 32, 12],
        css="pp-wide pp-normative",
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


def _squeezed(text: str) -> str:
    return "".join(text.replace("==", "").split())


def _distribution_rules(ctx: Context, clause: Clause) -> list[ModelRule]:
    """The distribution rules (3.1 and 3.1.1) of a clause: those that implement one of its
    normative ids, those that quote a passage of its text in one of the excerpts, and those
    the ambiguity catalog's entries filed under it name."""
    from pubproof.model.ambiguities import AMBIGUITIES

    named = {k for a in AMBIGUITIES if a.clause == clause.id for k in a.rules}
    texts = {lang: _squeezed(clause.text(lang) or "") for lang in clause.spans}
    found = []
    for node in ctx.trace.rules.values():
        rule = node.rule
        if rule is None or rule.kind is not Kind.DISTRIBUTION or node.need.startswith("R50_"):
            continue
        quoted = any(
            q.source == f"publish.{lang}.txt" and _squeezed(q.text) in text
            for q in rule.quotes
            for lang, text in texts.items()
        )
        if quoted or rule.key in named or set(clause.normative_ids) & set(node.implements):
            found.append(node)
    return found


def _clause_rules(ctx: Context, clause: Clause) -> list[ModelRule]:
    rules = [ctx.trace.rules_for_key(key) for key in clause.rules]
    for ref in clause.normative_ids:
        rules += [r for r in ctx.trace.flow_rules_for(ref) if r not in rules]
    rules += [r for r in _distribution_rules(ctx, clause) if r not in rules]
    return rules


def _clause_theorems(ctx: Context, rules: list[ModelRule]) -> list[TheoremNode]:
    wanted = {v for r in rules for v in r.verified_by if v.startswith("TH_")}
    # a theorem that does not reach its expected status verifies nothing, but it is still
    # shown here, failed, beside the rules it names
    return [
        t
        for t in ctx.trace.theorems.values()
        if t.need in wanted or (not t.as_expected and set(t.verifies) & {r.need for r in rules})
    ]


def _theorems(ctx: Context, rules: list[ModelRule]) -> str:
    rows = [
        [theorem_ref(t), esc(t.statement), theorem_status(t), esc(t.method), f"{t.seconds:.2f} s"]
        for t in _clause_theorems(ctx, rules)
    ]
    if not rows:
        return "No theorem names these rules.\n"
    return list_table(
        ["theorem", "statement", "status", "method", "time"],
        rows,
        widths=[20, 36, 14, 22, 8],
        css="pp-wide pp-theorems",
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


def _clause_section(
    ctx: Context,
    clause: Clause,
    sources: dict[str, dict[str, str | None]],
    passages: dict[str, list[Passage]],
) -> str:
    rules = _clause_rules(ctx, clause)
    out = [f".. _clause-{clause.id}:\n", heading(clause.title, "-"), esc(clause.summary) + "\n"]
    if clause.readings:
        out.append(
            "Readings: " + ", ".join(f":ref:`{r} <reading-{r}>`" for r in clause.readings) + "\n"
        )
    out.append(_parallel(ctx, clause, rules, sources))
    if not rules and not clause.normative_ids:
        out.append(".. rst-class:: pp-none\n\nNo normative statement or model rule: prose only.\n")
        return "\n".join(out)
    out.append(".. rubric:: Normative ids\n")
    out.append(_normative(ctx, clause, rules, passages) or "None.\n")
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
        "aligned clauses (``model/texts/clauses.toml``), shown clean: the Chinese page's "
        "highlight marks around its normative sentences are highlights again and lines broken "
        "in mid-sentence are joined (the files keep them). Pick the languages to read side by "
        "side (two to five; every clause follows and the browser remembers the choice); on a "
        "narrow screen they stack. Beside each clause, the model: its normative ids, rules, "
        "theorems and tests; under it, the details: the model rules with their source as it is "
        "in the code, the theorems with the status of the latest ``pubproof prove`` run, and "
        "the tests.\n"
    )
    out.append(
        ".. raw:: html\n\n"
        '   <div id="pp-language-picker" class="pp-picker" data-languages="'
        + " ".join(f"{lang}:{LANGUAGE_NAMES[lang]}" for lang in LANGUAGES)
        + '"></div>\n'
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
    passages = wording.recorded(ctx.docs, "3.1.1")[0]
    for clause in CLAUSES:
        out.append(_clause_section(ctx, clause, sources, passages))
    return {CLAUSES_DOC: "\n".join(out)}
