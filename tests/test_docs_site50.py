"""The MQTT 5.0 pages of the site: the PUBLISH family statement by statement (all 78
statements of Table B's sections 3.3 to 3.7, 4.3 and 4.9, each covered or out of scope
with a reason), the edition diff with its witnesses, the 5.0 entries of the ambiguity
catalog with their traces, and notebook 06."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

# docs/_ext is on sys.path at run time (docs_site puts it there)
from pubproof_docs import clauses50, data, edition_diff, trace
from pubproof_docs.context import Context, load, prove_json_path
from support.docs_site import ROOT, built_site

from pubproof.model.editions import Edition
from pubproof.model.wire import decode

DOCS = ROOT / "docs"


def _context(out_of_scope: dict[str, data.OutOfScope] | None = None) -> Context:
    built_site()  # writes the prove report the context reads
    ctx = load(ROOT, DOCS, prove_json_path(ROOT))
    if out_of_scope is None:
        return ctx
    model = trace.build(
        root=ROOT, index=ctx.index, index_50=ctx.index_50, dist_index=ctx.dist_index,
        dist_index_50=ctx.dist_index_50, out_of_scope=out_of_scope, prove=ctx.prove,
    )  # fmt: skip
    return replace(ctx, trace=model)


def test_the_78_statements_of_the_publish_family_are_all_accounted_for() -> None:
    ctx = _context()
    listed = clauses50.statements(ctx)
    assert len(listed) == clauses50.EXPECTED == 78
    assert clauses50.problems(ctx) == []
    covered = [s for _, s in listed if s is not None and ctx.trace.covered(s)]
    outside = [
        s
        for _, s in listed
        if s is not None and not ctx.trace.covered(s) and s.out_of_scope is not None
    ]
    assert len(covered) + len(outside) == 78
    assert all(s.out_of_scope is not None and s.out_of_scope.kind == "statement" for s in outside)
    # the flow statements the 5.0 sessions carry out are covered, none merely "unverified"
    for ref in ("MQTT-3.3.4-1", "MQTT-4.3.1-1", "MQTT-4.3.2-5", "MQTT-4.3.3-12"):
        assert ctx.trace.covered(ctx.trace.statements[f"5.0:{ref}"]), ref


def test_a_statement_without_a_reason_or_with_an_unverified_one_is_a_problem() -> None:
    reasons = data.load_out_of_scope(DOCS / "data" / "out-of-scope.toml")
    key = "5.0:MQTT-3.3.4-6"
    dropped = {k: v for k, v in reasons.items() if k != key}
    found = clauses50.problems(_context(dropped))
    assert found == [
        "the 5.0 statement MQTT-3.3.4-6 is neither covered nor out of scope with a reason "
        "(UNCOVERED)"
    ]
    unverified = {**reasons, key: replace(reasons[key], kind="unverified")}
    found = clauses50.problems(_context(unverified))
    assert len(found) == 1 and "MQTT-3.3.4-6" in found[0] and "not verified" in found[0]


def test_the_clause_page_shows_every_statement_with_its_rules_and_quotes() -> None:
    html = (built_site() / "_generated" / "clauses50.html").read_text("utf-8")
    ctx = _context()
    for ref, statement in clauses50.statements(ctx):
        assert statement is not None
        assert f'id="{clauses50.anchor(ref)}"' in html, ref
    assert "78 statements" in html
    # a covered statement quotes the standard as its rule does; one out of scope gives why
    assert "A Topic Alias of 0 is not permitted." in html
    assert "an identifier a Client sent is never forwarded" in html
    # a statement the distribution model covers quotes its rule's 5.0 words
    assert "the Server MUST replace any existing retained message for this topic" in html


def test_every_edition_diff_witness_is_judged_differently_by_the_model() -> None:
    """Each witness the page shows, decoded again here by the model in both editions:
    the verdicts differ beyond the rule's id (and the 5.0 Reason Code)."""
    shown = 0
    for a, b in edition_diff.PAIRS:
        changes = edition_diff.changes(ROOT, a, b)
        for change in changes:
            if change.witness is None:
                continue
            shown += 1
            w = change.witness
            verdicts = tuple(
                (e, edition_diff.verdict_text(w.data, e, w.readings, w.limits)) for e in (a, b)
            )
            assert verdicts == w.verdicts and edition_diff.differ(verdicts), change.rule.key
            # one side names the rule (or accepts the bytes the other side faults it on)
            assert any(
                (e in change.rule.ids and change.rule.ids[e] in v) or v == "ok" for e, v in verdicts
            ), change.rule.key
        keys = {c.rule.key for c in changes if c.wire}
        if (a, b) == (Edition.V311, Edition.V50):
            assert {"props.present", "rl.minimal", "puback.reason-code", "topic.not-empty"} <= keys
            assert all(c.witness is not None for c in changes if c.wire)
    assert shown >= 30
    # the Z3 witness of dup-qos0 is what the theorem wire.editions-agree reports first
    [dup] = [c for c in edition_diff.changes(ROOT, Edition.V31, Edition.V311)
             if c.rule.key == "publish.dup-qos0"]  # fmt: skip
    assert dup.witness is not None and dup.witness.origin == "Z3"
    assert decode(dup.witness.data, Edition.V31).failure is None
    html = (built_site() / "_generated" / "edition-diff.html").read_text("utf-8")
    assert dup.witness.data.hex() in html and "MQTT 3.1.1 → 5.0" in html


def test_the_catalog_page_replays_the_5_0_traces() -> None:
    html = (built_site() / "_generated" / "ambiguity-catalog.html").read_text("utf-8")
    for entry in (
        "v5-resend-with-topic-alias",
        "v5-pubrel-resend-quota",
        "v5-retained-message-expiry",
        "v5-disconnect-code-several-faults",
        "v5-puback-error-then-resend",
    ):
        assert f'id="ambiguity-{entry}"' in html, entry
    assert "The traces (replayed by the model" in html
    assert "✘" not in html


def test_notebook_06_is_executed_and_linked_from_the_site() -> None:
    site = built_site()
    page = site / "notebooks" / "06-flow-control-and-topic-aliases.html"
    html = page.read_text("utf-8")
    assert "MQTT 5.0 flow control and topic aliases" in html
    assert html.count("<img") >= 4  # the quota plot and three sequence charts, executed
    assert "DISCONNECT 0x93" in html and "Traceback" not in html
    index = (site / "_generated" / "notebooks.html").read_text("utf-8")
    assert "06-flow-control-and-topic-aliases.html" in index


def test_every_statement_of_the_78_is_quoted_from_a_checked_record() -> None:
    """A covered statement through its rules' 5.0 quotes, one out of scope through
    docs/data/standard50.toml or the catalog's [[standard]] passages; no sentence twice."""
    ctx = _context()
    passages, problems = clauses50.recorded(DOCS)
    assert problems == []
    for ref, statement in clauses50.statements(ctx):
        assert statement is not None
        quoted = [
            q
            for r in statement.implemented_by
            if (rule := ctx.trace.rules[r].rule) is not None
            for q in rule.quotes
            if q.source.startswith("MQTT 5.0")
        ]
        assert quoted or passages.get(ref), ref
    own = [p for ps in passages.values() for p in ps if p.origin == "standard50.toml"]
    # 3.3.2-3 and 3.6.1-1 (their rules quote 3.1.1), 3.3.4-6 and 4.3.3-13 (out of scope);
    # the distribution rules quote the other 21 the file held before them; the rest are
    # ids of Tables B and D no rule quotes with its own label (test_docs_words)
    assert {"MQTT-3.3.2-3", "MQTT-3.6.1-1", "MQTT-3.3.4-6", "MQTT-4.3.3-13"} <= {
        p.label for p in own
    }
    assert len(own) == 73
    assert all(p.source.startswith("MQTT 5.0 section ") for p in own)


def test_a_passage_recorded_twice_or_without_one_label_is_a_problem(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "standard50.toml").write_text(
        "[[passage]]\n"
        'source = "MQTT 5.0 section 3.3.2.3.4"\n'
        'text = "A Topic Alias of 0 is not permitted ... [MQTT-3.3.2-8]."\n'
        "[[passage]]\n"
        'source = "MQTT 5.0 section 3.3.4"\n'
        'text = "Two labels [MQTT-3.3.4-2] and [MQTT-3.3.4-3]."\n',
        "utf-8",
    )
    _, problems = clauses50.recorded(tmp_path)
    assert problems == [
        "standard50.toml: MQTT-3.3.2-8 is recorded twice",
        "standard50.toml: a passage carries 2 labels: "
        "'Two labels [MQTT-3.3.4-2] and [MQTT-3.3.4-3].'",
    ]


def test_a_statement_covered_by_theorems_alone_is_a_problem() -> None:
    """The 78 need a rule and a test naming it: a statement whose rule only a theorem
    verifies fails the build (MQTT-4.3.3-8's tests taken away here)."""
    ctx = _context()
    rules = {k: replace(r, verified_by=list(r.verified_by)) for k, r in ctx.trace.rules.items()}
    model = replace(ctx.trace, rules=rules)
    statement = model.statements["5.0:MQTT-4.3.3-8"]
    for rule_need in statement.implemented_by:
        rule = model.rules[rule_need]
        rule.verified_by = [v for v in rule.verified_by if not v.startswith("TE_")]
        assert rule.verified_by  # the theorems still verify it
    found = clauses50.problems(replace(ctx, trace=model))
    assert found == ["the 5.0 statement MQTT-4.3.3-8 is covered, but no test names its rule"]
