"""The traceability pages: one sphinx-needs need per statement, model rule, theorem and
test, linked statement <- rule <- theorem/test, and the matrix over them."""

from __future__ import annotations

from pubproof.model.editions import Edition
from pubproof.model.rules import Kind, Rule
from pubproof_docs import wording
from pubproof_docs.context import GENERATED, Context, out_of_scope_path
from pubproof_docs.data import IndexEntry, load_gaps
from pubproof_docs.rst import esc, heading, indent, list_table, literal
from pubproof_docs.sources import Span
from pubproof_docs.standards import oasis_block
from pubproof_docs.trace import ModelRule, Statement, TestNode, TheoremNode, by_section
from pubproof_docs.wording import Passage

TRACE_DOC = f"{GENERATED}/traceability"
RULES_DOC = f"{GENERATED}/model-rules"
TESTS_DOC = f"{GENERATED}/tests"


def need(role: str) -> str:
    return f":need:`{role}`"


def paraphrase(text: str) -> str:
    """A paraphrase of the normative index (Markdown) as reStructuredText: its
    ```code``` spans (a label as printed, ```[MQTT-3.3.1.-1]```) become literals, the rest
    is escaped text, so no backtick reaches the page."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: all text
        return esc(text)

    def plain(part: str) -> str:
        # esc() trims; keep one space at either end, where the literal needs it
        lead = " " if part[:1].isspace() else ""
        tail = " " if part[-1:].isspace() else ""
        return lead + esc(part) + tail if part.strip() else part[:1]

    return "".join(
        literal(part) if index % 2 else plain(part) for index, part in enumerate(parts)
    ).strip()


def verdict(ctx: Context, statement: Statement) -> str:
    if ctx.trace.covered(statement):
        return "covered"
    if statement.out_of_scope is not None:
        return "out of scope" if statement.out_of_scope.kind == "statement" else "not verified"
    return "UNCOVERED"


def _option_lines(options: dict[str, str]) -> str:
    return "\n".join(f"   :{k}: {v}" for k, v in options.items() if v)


def _need(kind: str, title: str, options: dict[str, str], body: str) -> str:
    head = f".. {kind}:: {' '.join(title.split())}\n{_option_lines(options)}\n"
    return head + ("\n" + indent(body, 3) + "\n" if body.strip() else "") + "\n"


def theorem_status(t: TheoremNode) -> str:
    from pubproof_docs.pages_theorems import status_words

    mark = "✔" if t.as_expected else "✘"
    return f"{mark} {status_words(t)}"


def source_links(ctx: Context, from_doc: str, spans: list[Span]) -> str:
    links = []
    for span in spans:
        where = f"{span.path.relative_to(ctx.root).as_posix()}:{span.start}-{span.end}"
        links.append(f"`{esc(where)} <{ctx.source_url(from_doc, span.path, span.start)}>`__")
    return ", ".join(links)


def _quotes_50(rule: Rule, shown: set[str]) -> str:
    """The rule's quotes of the MQTT 5.0 standard, as block quotes with their section
    (those not ``shown`` already)."""
    blocks = [
        f".. epigraph::\n\n   {esc(q.text)}\n\n   -- {esc(q.source)}\n"
        for q in rule.quotes
        if q.source.startswith("MQTT 5.0") and q.text not in shown
    ]
    return "\n".join(blocks)


def words_edition(s: Statement) -> str | None:
    """The edition whose standard words a statement (3.1.1, 5.0, or an id of every
    edition, read in 3.1.1); None for MQTT 3.1, whose text is not an OASIS standard."""
    return {"3.1.1": "3.1.1", "all": "3.1.1", "5.0": "5.0"}.get(s.edition)


def _statement_body(
    ctx: Context, s: Statement, passages: dict[str, dict[str, list[Passage]]]
) -> str:
    body = paraphrase(s.text) + "\n\n" + f"Taken from: {esc(s.origin)}."
    edition = words_edition(s)
    shown: set[str] = set()
    if edition is not None and s.ref in index_ids(ctx)[edition]:
        body += "\n\n" + wording.words(passages[edition], s.ref)
        shown = {p.text for p in passages[edition].get(s.ref, []) if p.label == s.ref}
    if s.edition == "5.0":
        # no excerpt holds 5.0: the id, the index's paraphrase, and the rule with the
        # standard's 5.0 wording as the registry quotes it
        for rule_need in s.implemented_by:
            node = ctx.trace.rules[rule_need]
            if node.rule is None:
                continue
            r = node.rule
            code = r.reason_code_in(Edition.V50)
            body += (
                f"\n\nThe project's rule {need(node.need)}: {esc(r.title)}; in 5.0 breaking it is "
                f"{literal(r.kind_in(Edition.V50).value)}"
                + (f", DISCONNECT Reason Code ``0x{code:02X}``" if code is not None else "")
                + (f", reading {literal(r.reading)}" if r.reading else "")
                + ". "
                + (
                    f"The other words it quotes:\n\n{others}"
                    if (others := _quotes_50(r, shown))
                    else "It quotes no other 5.0 text.\n"
                )
            )
    else:
        # a statement of distribution in 3.1 or 3.1.1: the words of that edition's text as
        # the distribution rule quotes them (the five excerpts hold only PUBLISH)
        prefix = "MQTT V3.1" if s.edition == "3.1" else "MQTT 3.1.1"
        for rule_need in s.implemented_by:
            node = ctx.trace.rules[rule_need]
            if node.rule is None or node.rule.kind is not Kind.DISTRIBUTION:
                continue
            quotes = [
                f".. epigraph::\n\n   {esc(q.text)}\n\n   -- {esc(q.source)}\n"
                for q in node.rule.quotes
                if q.source.startswith((prefix, "publish.")) and q.text not in shown
            ]
            if quotes:
                body += (
                    f"\n\nThe project's rule {need(node.need)}: {esc(node.rule.title)}. The "
                    "other words it quotes:\n\n" + "\n".join(quotes)
                )
    if s.out_of_scope is not None:
        body += f"\n\n**{verdict(ctx, s)}**: {esc(s.out_of_scope.reason)}"
    return body


def index_ids(ctx: Context) -> dict[str, dict[str, IndexEntry]]:
    """The ids of the normative and distribution indexes by edition (Tables A and C are
    3.1.1, B and D 5.0; a row of A or B wins over C or D, which repeat them)."""
    return {
        "3.1.1": {**ctx.dist_index, **ctx.index},
        "5.0": {**ctx.dist_index_50, **ctx.index_50},
    }


def _words_intro(ctx: Context, passages: dict[str, dict[str, list[Passage]]]) -> str:
    """What the entries below show of the standard, and the index ids not quoted yet."""
    ids = index_ids(ctx)
    missing = [
        f"{ref} ({edition})"
        for edition, refs in ids.items()
        for ref in wording.unquoted(passages[edition], list(refs))
    ]
    total = sum(len(refs) for refs in ids.values())
    return (
        "Each id of the normative and distribution indexes (MQTT 3.1.1 and 5.0) below shows "
        "the index's paraphrase (our wording) and then the standard's own sentence, the one "
        "that carries its label, as the model's rules quote it or as "
        "``docs/data/standard311.toml``, ``docs/data/standard50.toml`` or the ambiguity "
        "catalog record it (each checked against transcriptions of the OASIS text). "
        f"{total - len(missing)} of the {total} ids are quoted; {NOT_QUOTED_LIST}: "
        f"{esc(', '.join(missing)) or 'none'}.\n"
    )


#: The words that introduce the list of index ids shown without the standard's sentence.
NOT_QUOTED_LIST = "not quoted yet (the paraphrase only)"


def _other_ids(ctx: Context, passages: dict[str, dict[str, list[Passage]]]) -> str:
    """The index ids no statement of the matrix traces (outside the traced sections and
    cited by no rule): their paraphrase and the standard's words."""
    traced = {
        (edition, s.ref)
        for s in ctx.trace.statements.values()
        for edition in (("3.1.1", "5.0") if s.edition == "all" else (words_edition(s),))
    }
    out = []
    for edition, refs in index_ids(ctx).items():
        for ref, entry in refs.items():
            if (edition, ref) in traced:
                continue
            out.append(
                f"**{esc(ref)}** (MQTT {edition}, section {esc(entry.section)}; "
                f"{esc(entry.strength)}; binds {esc(entry.binds)}): "
                f"{paraphrase(entry.paraphrase)}\n\n" + wording.words(passages[edition], ref)
            )
    if not out:
        return ""
    return "\n".join(
        [
            heading("The indexes' other ids", "-"),
            "Ids of the indexes outside the sections the matrix traces and cited by no rule "
            "of the model: not traced, shown here with their words.\n",
            *out,
        ]
    )


def distribution(ctx: Context, statement: Statement) -> bool:
    """Whether a statement is one of distribution: a row of the distribution index, or one
    a distribution rule implements."""
    if statement.origin.startswith("distribution index"):
        return True
    return any(
        (node := ctx.trace.rules[r]).rule is not None and node.rule.kind is Kind.DISTRIBUTION
        for r in statement.implemented_by
    )


def _gaps(ctx: Context) -> str:
    """What the texts ask of a server that has no traced id, and why the model leaves it
    out (``[[gap]]`` in ``docs/data/out-of-scope.toml``)."""
    gaps = load_gaps(out_of_scope_path(ctx.docs))
    if not gaps:
        return ""
    out = [heading("Beyond the labelled statements", "-")]
    out.append(
        "What the texts ask of a server that carries no id the matrix traces (an unlabelled "
        "sentence, or a labelled one outside the traced sections), and that the model leaves "
        "out, each with the reason (``[[gap]]`` in ``docs/data/out-of-scope.toml``).\n"
    )
    out.append(
        list_table(
            ["what", "where", "why the model leaves it out"],
            [[esc(g.what), esc(g.where), esc(g.reason)] for g in gaps],
            widths=[18, 27, 55],
        )
    )
    return "\n".join(out)


def statements_page(ctx: Context) -> str:
    trace = ctx.trace
    statements = by_section(trace.statements.values())
    names = ("covered", "out of scope", "not verified", "UNCOVERED")
    counts = {v: 0 for v in names}
    for s in statements:
        counts[verdict(ctx, s)] += 1
    out = [heading("Traceability matrix", "=")]
    out.append(
        "Every normative statement of the PUBLISH and acknowledgement sections of MQTT 3.1.1 "
        "(3.3 to 3.7), every other id the model's rules, flow tables and the clause pages cite, "
        "every MQTT 3.1 rule of the registry, the MQTT 5.0 statements of the wire format "
        "(sections 1.5.4, 1.5.5, 2.2.1, 2.2.2, 3.3 to 3.7 of the normative index's Table B, and "
        "every 5.0 id the rules carry), and every statement of distribution, what a server "
        "does with a message across sessions (the distribution index's Tables C and D: "
        "sections 3.1.2.4, 3.8 to 3.11 and 4.4 to 4.8 of 3.1.1 and 5.0), traced to the model "
        "rule that implements it and to the theorems and tests that verify that rule. A 5.0 "
        "statement is its own entry (edition 5.0, need id ``S50_...``): 5.0 reuses some of "
        "3.1.1's numbers for other statements, and a rule counts for 5.0 only when a theorem "
        "covering 5.0, a test that names it for 5.0 (or runs in every edition), or the 5.0 "
        "vectors verify it. Generated at build time from ``pubproof.model.rules.RULES`` (wire, "
        "flow and distribution rules), the flow tables of ``pubproof.model.flows``, the theorem "
        "registry with the statuses of the latest ``pubproof prove`` run "
        f"({ctx.prove.seconds:.1f} s), a scan of ``tests/`` (a test with the helpers it calls) "
        "and the vector corpus. A statement is *covered* when a model rule implements it and a "
        "theorem (at its expected status) or a test verifies that rule; the build fails on any "
        "other statement unless ``docs/data/out-of-scope.toml`` gives the reason.\n"
    )
    out.append(oasis_block("3.1.1", "5.0"))
    rows = [["all", *(str(counts[v]) for v in names)]]
    for label, wanted in (
        ("MQTT 3.1", ("3.1",)),
        ("MQTT 3.1.1 (and ids of every edition)", ("3.1.1", "all")),
        ("MQTT 5.0", ("5.0",)),
    ):
        part = [s for s in statements if s.edition in wanted]
        rows.append([label, *(str(sum(verdict(ctx, s) == v for s in part)) for v in names)])
    part = [s for s in statements if distribution(ctx, s)]
    rows.append(
        ["of them, distribution", *(str(sum(verdict(ctx, s) == v for s in part)) for v in names)]
    )
    out.append(
        list_table(
            [
                "statements",
                "covered",
                "out of scope (reason given)",
                "implemented, not verified (reason given)",
                "uncovered",
            ],
            rows,
        )
    )
    out.append(
        "*Distribution*: a statement of the distribution index, or one a distribution rule "
        "implements (``Kind.DISTRIBUTION``).\n"
    )
    out.append(heading("The matrix", "-"))
    rows = []
    for s in statements:
        rules = [ctx.trace.rules[r] for r in s.implemented_by]
        thms = sorted({v for r in rules for v in r.verified_by if v.startswith("TH_")})
        tests = sorted({v for r in rules for v in r.verified_by if v.startswith("TE_")})
        state = verdict(ctx, s)
        if s.out_of_scope is not None:
            state += ": " + esc(s.out_of_scope.reason)
        rows.append(
            [
                need(s.need),
                esc(s.edition),
                ", ".join(need(r.need) for r in rules) or "—",
                ", ".join(need(t) for t in thms) or "—",
                f"{len(tests)} test(s)" if tests else "—",
                state,
            ]
        )
    out.append(
        list_table(
            ["statement", "edition", "model rules", "theorems", "tests", "verdict"],
            rows,
            widths=[18, 7, 25, 25, 8, 17],
            css="pp-matrix",
        )
    )
    out.append(_gaps(ctx))
    out.append(heading("As a sphinx-needs table", "-"))
    out.append(
        ".. needtable::\n   :types: stmt\n   :style: table\n"
        '   :columns: id;label as "statement";edition;implements_back as "model rules";'
        "coverage\n   :sort: id\n"
    )
    out.append(heading("Statements", "-"))
    passages = {e: wording.recorded(ctx.docs, e)[0] for e in ("3.1.1", "5.0")}
    out.append(_words_intro(ctx, passages))
    for s in statements:
        body = _statement_body(ctx, s, passages)
        out.append(
            _need(
                "stmt",
                s.title.replace("`", ""),
                {
                    "id": s.need,
                    "label": s.ref,
                    "edition": s.edition,
                    "section": s.section,
                    "strength": s.strength,
                    "binds": s.binds,
                    "coverage": verdict(ctx, s),
                    "out_of_scope": s.out_of_scope.reason if s.out_of_scope else "",
                },
                body,
            )
        )
    out.append(_other_ids(ctx, passages))
    return "\n".join(out)


def _rule_body(ctx: Context, rule: ModelRule) -> str:
    lines = []
    if rule.rule is not None:
        r = rule.rule
        v50 = Edition.V50 in rule.editions
        kind = r.kind_in(Edition.V50) if v50 else r.kind
        code = r.reason_code_in(Edition.V50) if v50 else None
        lines.append(
            f"Ids {', '.join(literal(i) for i in rule.ids)} "
            f"({', '.join(sorted(e.value for e in rule.editions))}). "
            f"Strength {literal(r.strength.value)}, binds the {esc(r.binds.value)}, breaking it "
            f"is {literal(kind.value)}"
            + (f" (DISCONNECT Reason Code ``0x{code:02X}``)" if code is not None else "")
            + (f", switched by the reading {literal(r.reading)}" if r.reading else "")
            + f". Vector corpus cases: {rule.corpus_cases}."
        )
    lines.append("")
    lines.append("Source: " + (source_links(ctx, RULES_DOC, rule.spans) or "not found"))
    return "\n".join(lines)


def rules_page(ctx: Context) -> str:
    out = [heading("Model rules", "=")]
    out.append(
        "The rules of the registry (``pubproof.model.rules.RULES``: the wire rules, the flow "
        "rules of 5.0 and those of 3.1.1 that the distribution model cites, and the "
        "distribution rules of ``pubproof.model.distribution_rules`` and "
        "``distribution_rules50``) and, for each flow table of "
        "``pubproof.model.flows``, the entries that implement each rule id the table cites. "
        "Each links to the statements it implements; the theorems and tests that verify it link "
        "back to it.\n"
    )
    for rule in ctx.trace.rules.values():
        out.append(
            _need(
                "rule",
                rule.title,
                {
                    "id": rule.need,
                    "label": rule.key or f"{rule.table}: {rule.implements[0]}",
                    "implements": ", ".join(ctx.trace.statements[i].need for i in rule.implements),
                },
                _rule_body(ctx, rule),
            )
        )
    return "\n".join(out)


def test_link(ctx: Context, from_doc: str, test: TestNode) -> str:
    f = test.function
    return f"`{esc(test.nodeid)} <{ctx.source_url(from_doc, f.path, f.start)}>`__"


def tests_page(ctx: Context) -> str:
    out = [heading("Tests", "=")]
    out.append(
        "The test functions of ``tests/`` that name a rule id, a rule key or a theorem id in "
        "their code (found with ``ast``), and the tests that run the whole vector corpus (they "
        "verify every rule the corpus has cases for). Each links to its source lines.\n"
    )
    for test in ctx.trace.tests.values():
        body = "Source: " + test_link(ctx, TESTS_DOC, test)
        if test.corpus:
            body += "\n\nRuns the vector corpus (``vectors/corpus.jsonl``) through the codec."
        out.append(
            _need(
                "test",
                test.nodeid,
                {
                    "id": test.need,
                    "label": test.function.name,
                    "verifies": ", ".join(test.verifies),
                    "checks": ", ".join(test.checks),
                },
                body,
            )
        )
    return "\n".join(out)
