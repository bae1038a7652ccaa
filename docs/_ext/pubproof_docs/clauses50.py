"""The MQTT 5.0 clause page: every labelled statement of the PUBLISH family in MQTT 5.0
(normative index, Table B, sections 3.3 to 3.7, 4.3 and 4.9), with what the project has
for each.

No seed text of 5.0 is in the project (the five PUBLISH excerpts are 3.1 and 3.1.1), so a
statement is shown by its id, the index's paraphrase (a paraphrase, not the standard's
words), and beside it the model rules that implement it, with the standard's 5.0 wording
as those rules quote it (each quote checked against the OASIS text when the rule was
written), the theorems and the tests that verify them, or the reason it is out of scope.

The page also holds the build to the issue's promise: the 78 statements are all traced, and
each is covered, with a test that names one of its rules for 5.0 (a theorem alone is not
enough here), or out of scope with a reason (``[[statement]]`` in
``docs/data/out-of-scope.toml``; an ``[[unverified]]`` reason is not enough here).
:func:`problems` lists what breaks that, and the extension turns each into a warning, which
fails the ``-W`` build.
"""

from __future__ import annotations

from pathlib import Path

from pubproof.model.rules import Rule
from pubproof_docs import wording
from pubproof_docs.context import GENERATED, Context
from pubproof_docs.pages_trace import need, test_link, theorem_status, verdict
from pubproof_docs.rst import esc, heading, list_table, literal
from pubproof_docs.standards import oasis_block
from pubproof_docs.trace import ModelRule, Statement, TestNode, TheoremNode
from pubproof_docs.wording import Passage

CLAUSES50_DOC = f"{GENERATED}/clauses50"

#: The sections of Table B this page covers, and how many statements they hold.
SECTIONS = ("3.3", "3.4", "3.5", "3.6", "3.7", "4.3", "4.9")
EXPECTED = 78

#: The standard's headings of the subsections the statements sit in (MQTT 5.0, OASIS
#: Standard, 7 March 2019).
HEADINGS = {
    "3.3.1": "PUBLISH Fixed Header",
    "3.3.2": "PUBLISH Variable Header",
    "3.3.4": "PUBLISH Actions",
    "3.4.2": "PUBACK Variable Header",
    "3.5.2": "PUBREC Variable Header",
    "3.6.1": "PUBREL Fixed Header",
    "3.6.2": "PUBREL Variable Header",
    "3.7.2": "PUBCOMP Variable Header",
    "4.3.1": "QoS 0: At most once delivery",
    "4.3.2": "QoS 1: At least once delivery",
    "4.3.3": "QoS 2: Exactly once delivery",
    "4.9": "Flow Control",
}


def standard_path(docs: Path) -> Path:
    return wording.standard_path(docs, "5.0")


def recorded(docs: Path) -> tuple[dict[str, list[Passage]], list[str]]:
    """Every labelled 5.0 sentence the project records, by label (see
    :func:`pubproof_docs.wording.recorded`), and the problems of ``standard50.toml``."""
    return wording.recorded(docs, "5.0")


def in_sections(section: str) -> bool:
    return any(section == s or section.startswith(s + ".") for s in SECTIONS)


def statements(ctx: Context) -> list[tuple[str, Statement | None]]:
    """The Table B ids of :data:`SECTIONS`, in the index's order, each with its traced
    statement (None when the traceability model lacks it)."""
    return [
        (ref, ctx.trace.statements.get(f"5.0:{ref}"))
        for ref, entry in ctx.index_50.items()
        if in_sections(entry.section)
    ]


def problems(ctx: Context) -> list[str]:
    """What keeps the 5.0 PUBLISH family from being fully accounted for (empty when all is)."""
    found: list[str] = []
    listed = statements(ctx)
    if len(listed) != EXPECTED:
        found.append(
            f"Table B has {len(listed)} statements in sections {', '.join(SECTIONS)}, "
            f"not the {EXPECTED} this page promises"
        )
    passages, file_problems = recorded(ctx.docs)
    found += file_problems
    refs = {*ctx.index_50, *ctx.dist_index_50}
    found += [
        f"{standard_path(ctx.docs).name} records {p.label}, not an id of Table B or D"
        for ps in passages.values()
        for p in ps
        if p.origin == standard_path(ctx.docs).name and p.label not in refs
    ]
    for ref, statement in listed:
        if statement is None:
            found.append(f"the 5.0 statement {ref} is not traced")
        elif not ctx.trace.covered(statement) and (
            statement.out_of_scope is None or statement.out_of_scope.kind != "statement"
        ):
            found.append(
                f"the 5.0 statement {ref} is neither covered nor out of scope with a reason "
                f"({verdict(ctx, statement)})"
            )
        elif ctx.trace.covered(statement) and not tested(ctx, statement):
            found.append(f"the 5.0 statement {ref} is covered, but no test names its rule")
    return found


def tested(ctx: Context, statement: Statement) -> bool:
    """Whether a test names (for 5.0) a rule that implements the statement: the issue asks
    for rule and test, a theorem alone is not enough here."""
    return any(
        v.startswith("TE_")
        for r in statement.implemented_by
        for v in ctx.trace.rules[r].verified_by
    )


def anchor(ref: str) -> str:
    """The label of a statement's entry: ``clause50-mqtt-3-3-1-1``."""
    return "clause50-" + ref.lower().replace(".", "-")


def _quotes(rule: Rule, ref: str) -> list[str]:
    """The rule's 5.0 quotes, those that carry ``ref``'s label first (only those, when any)."""
    quotes = [q for q in rule.quotes if q.source.startswith("MQTT 5.0")]
    labelled = [q for q in quotes if f"[{ref}]" in q.text]
    return [
        f".. epigraph::\n\n   {esc(q.text)}\n\n   -- {esc(q.source)}\n"
        for q in (labelled or quotes)
    ]


def _rule_line(node: ModelRule) -> str:
    rule = node.rule
    if rule is None:
        return f"- {need(node.need)}"
    from pubproof.model.editions import Edition

    kind = rule.kind_in(Edition.V50).value
    code = rule.reason_code_in(Edition.V50) if kind != "flow" else None
    return (
        f"- {need(node.need)}: {esc(rule.title)} (kind {literal(kind)}"
        + (f", DISCONNECT Reason Code ``0x{code:02X}``" if code is not None else "")
        + (f", reading {literal(rule.reading)}" if rule.reading else "")
        + ")"
    )


def _entry(
    ctx: Context,
    ref: str,
    statement: Statement,
    theorems: dict[str, TheoremNode],
    tests: dict[str, TestNode],
    passages: dict[str, list[Passage]],
) -> str:
    out = [f".. _{anchor(ref)}:\n", heading(ref, "~")]
    out.append(
        f"{need(statement.need)} · {esc(statement.strength) or '—'} · binds the "
        f"{esc(statement.binds) or '—'} · **{verdict(ctx, statement)}**\n"
    )
    out.append(f"Paraphrase (normative index, Table B): *{esc(statement.text)}*\n")
    rules = [ctx.trace.rules[r] for r in statement.implemented_by]
    if statement.out_of_scope is not None:
        out.append(f"Out of scope: {esc(statement.out_of_scope.reason)}\n")
    if rules:
        out.append(".. rubric:: The project's rules\n")
        out.extend(_rule_line(r) for r in rules)
        out.append("")
    # the sentence that carries the id's own label, wherever the project records it (a
    # rule's quote, the catalog, standard50.toml); else the rules' other 5.0 quotes
    quotes = [q for r in rules if r.rule is not None for q in _quotes(r.rule, ref)]
    if passages.get(ref) or not quotes:
        out.append(".. rubric:: The standard\n")
        out.append(wording.words(passages, ref))
    else:
        out.append(".. rubric:: The standard, as the rules quote it (none carries its label)\n")
        out.extend(dict.fromkeys(quotes))
    if not rules:
        return "\n".join(out)
    verifiers = sorted({v for r in rules for v in r.verified_by})
    shown = [theorems[v] for v in verifiers if v in theorems]
    if shown:
        out.append(".. rubric:: Theorems\n")
        out.extend(f"- {need(t.need)}: {theorem_status(t)}, {esc(t.method)}" for t in shown)
        out.append("")
    ran = [tests[v] for v in verifiers if v in tests]
    if ran:
        out.append(".. rubric:: Tests\n")
        for test in ran:
            how = " (runs the vector corpus)" if test.corpus else ""
            out.append(f"- {test_link(ctx, CLAUSES50_DOC, test)}{how}")
        out.append("")
    return "\n".join(out)


def _summary(ctx: Context, listed: list[tuple[str, Statement | None]]) -> str:
    rows = []
    for ref, statement in listed:
        if statement is None:
            continue
        rules = [ctx.trace.rules[r] for r in statement.implemented_by]
        thms = {v for r in rules for v in r.verified_by if v.startswith("TH_")}
        tests = {v for r in rules for v in r.verified_by if v.startswith("TE_")}
        rows.append(
            [
                f":ref:`{ref} <{anchor(ref)}>`",
                esc(statement.text),
                ", ".join(esc(r.key or r.need) for r in rules) or "—",
                str(len(thms)),
                str(len(tests)),
                verdict(ctx, statement),
            ]
        )
    return list_table(
        ["id", "paraphrase", "rules", "theorems", "tests", "verdict"],
        rows,
        widths=[17, 35, 22, 8, 7, 11],
        css="pp-matrix",
    )


def pages(ctx: Context) -> dict[str, str]:
    listed = statements(ctx)
    passages, _ = recorded(ctx.docs)
    theorems = {t.need: t for t in ctx.trace.theorems.values()}
    tests = ctx.trace.tests
    counted = [s for _, s in listed if s is not None]
    covered = sum(ctx.trace.covered(s) for s in counted)
    reasons = sum(
        not ctx.trace.covered(s)
        and s.out_of_scope is not None
        and s.out_of_scope.kind == "statement"
        for s in counted
    )
    out = [heading("MQTT 5.0: the PUBLISH family, statement by statement", "=")]
    out.append(
        f"Every labelled statement of MQTT 5.0 (OASIS Standard, 7 March 2019) in sections "
        f"3.3 to 3.7 (PUBLISH, PUBACK, PUBREC, PUBREL, PUBCOMP), 4.3 (Quality of Service "
        f"levels and protocol flows) and 4.9 (Flow Control): {len(listed)} statements, "
        f"**{covered} covered** (a model rule implements it, and a test that names it for 5.0 "
        f"verifies that rule, most also a theorem at its expected status) and **{reasons} out of "
        "scope**, each with its reason (``docs/data/out-of-scope.toml``). The build fails "
        "if one is missing, or is neither.\n"
    )
    out.append(
        "The project holds no text of 5.0 beside the 3.1 and 3.1.1 excerpts, so each "
        "statement is shown by its id and the normative index's paraphrase; the standard's "
        "own words are quoted as the model's rules quote them (their wording was "
        "checked against the OASIS text; see :doc:`the 5.0 wire format "
        "</guides/mqtt5-wire>`), and for a statement no rule implements, as "
        "``docs/data/standard50.toml`` or the ambiguity catalog records it. The model's "
        "rules, theorems and tests link to the "
        ":doc:`traceability matrix <traceability>`; what 5.0 leaves open is in the "
        ":doc:`ambiguity catalog <ambiguity-catalog>`, and what changed from 3.1.1 on the "
        ":doc:`edition diff <edition-diff>`.\n"
    )
    out.append(oasis_block("5.0"))
    out.append(heading("Summary", "-"))
    out.append(_summary(ctx, listed))
    current = ""
    for ref, statement in listed:
        if statement is None:
            continue
        section = ctx.index_50[ref].section
        if section != current:
            current = section
            title = HEADINGS.get(section)
            out.append(heading(f"{section} {title}" if title else section, "-"))
        out.append(_entry(ctx, ref, statement, theorems, tests, passages))
    return {CLAUSES50_DOC: "\n".join(out)}
