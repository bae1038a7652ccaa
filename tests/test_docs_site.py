"""The built site: internal links and anchors resolve, nothing loads from the network, the
traceability model is what the registries say, and the build fails on an uncovered
statement."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

# docs/_ext is on sys.path at run time (docs_site puts it there) and on mypy's search path
# (pyproject.toml's mypy_path)
from pubproof_docs import data, linkcheck, trace
from pubproof_docs.context import prove_json_path
from pubproof_docs.pages_theorems import theorem_doc
from support.docs_site import ROOT, built_site

from pubproof.model.clauses import CLAUSES
from pubproof.model.editions import READINGS, Edition
from pubproof.model.rules import RULES
from pubproof.proofs.catalog import load as load_theorems


def test_every_internal_link_and_anchor_of_the_built_site_resolves() -> None:
    site = built_site()
    assert list(linkcheck.problems(site)) == []


def test_the_link_check_finds_broken_links_anchors_and_network_assets(tmp_path: Path) -> None:
    (tmp_path / "a.html").write_text('<p id="here">x</p><a href="#here">ok</a>', "utf-8")
    (tmp_path / "b.html").write_text(
        '<a href="a.html#here">ok</a><a href="a.html#gone">bad anchor</a>'
        '<a href="missing.html">no file</a><script src="https://cdn.example/x.js"></script>'
        '<link rel="stylesheet" href="//cdn.example/x.css"><a href="https://example.org">ok</a>',
        "utf-8",
    )
    found = list(linkcheck.problems(tmp_path))
    assert len(found) == 4, found
    assert any("gone" in p for p in found) and any("missing.html" in p for p in found)
    assert sum("network" in p for p in found) == 2


def test_every_clause_is_on_the_clause_page_in_every_language_or_as_a_marked_gap() -> None:
    html = (built_site() / "_generated" / "clauses.html").read_text("utf-8")
    for clause in CLAUSES:
        assert f'id="clause-{clause.id}"' in html, clause.id
    excerpts = sum(1 for c in CLAUSES for lang in c.spans)
    gaps = sum(1 for c in CLAUSES for lang in c.gaps)
    assert html.count('class="pp-excerpt"') == excerpts
    assert html.count("pp-gap") == gaps
    # one column per language on every clause (the picker shows the chosen ones), and the
    # model's column beside them
    assert html.count('class="pp-col pp-col-') == 5 * len(CLAUSES)
    assert html.count("pp-col pp-side") == len(CLAUSES)
    assert 'id="pp-language-picker"' in html


def _indexes() -> dict[str, dict[str, data.IndexEntry]]:
    """The four tables the trace reads: Tables A and B of the normative index, Tables C
    and D of the distribution index (the project's copies)."""
    docs = ROOT / "docs"
    return {
        "index": data.load_index(docs / "data" / "normative-index.md"),
        "index_50": data.load_index_50(docs / "data" / "normative-index.md"),
        "dist_index": data.load_dist_index(docs / "data" / "distribution-index.md", "C"),
        "dist_index_50": data.load_dist_index(docs / "data" / "distribution-index.md", "D"),
    }


def _trace(out_of_scope: dict[str, data.OutOfScope] | None = None) -> trace.Trace:
    docs = ROOT / "docs"
    return trace.build(
        root=ROOT,
        **_indexes(),
        out_of_scope=out_of_scope
        if out_of_scope is not None
        else data.load_out_of_scope(docs / "data" / "out-of-scope.toml"),
        prove=data.load_prove(prove_json_path(ROOT)),
    )


def test_the_traceability_model_follows_the_registries() -> None:
    built_site()  # writes the prove report the model reads
    model = _trace()
    assert model.problems == []
    assert model.uncovered() == []
    flow50 = {r.key for r in RULES.flows() if Edition.V50 in r.ids}
    flow311 = {r.key for r in RULES.flows() if Edition.V311 in r.ids}
    distribution = {r.key for r in RULES.distributions()}
    assert len(distribution) >= 90
    assert {r.key for r in model.rules.values() if r.key} == (
        set(RULES) | flow50 | flow311 | distribution
    )
    assert set(model.theorems) == {t.id for t in load_theorems()}
    for rule in (*RULES.values(), *RULES.distributions()):
        for edition, rule_id in rule.ids.items():
            key = trace.key_50(rule_id) if edition is Edition.V50 else rule_id
            assert key in model.statements, (rule.key, edition)
            # a distribution rule implements its statement in the edition it names
            node = model.rules[trace.need_id("R50_" if edition is Edition.V50 else "R_", rule.key)]
            assert key in node.implements, (rule.key, edition)
    # every id of the PUBLISH and acknowledgement sections of 3.1.1 is traced
    index = data.load_index(ROOT / "docs" / "data" / "normative-index.md")
    sections = [i for i, e in index.items() if e.section[:3] in {"3.3", "3.4", "3.5", "3.6", "3.7"}]
    assert sections and all(i in model.statements for i in sections)


def test_every_statement_of_distribution_is_traced_and_4_6_and_4_7_accounted_for() -> None:
    """Tables C (3.1.1) and D (5.0) of the distribution index: each statement traced, in
    its edition, with the index's paraphrase where Tables A and B have no row; those of 4.6
    and 4.7 (and every other) covered or out of scope with a reason that is not that the
    server is not modelled."""
    built_site()
    model = _trace()
    tables = _indexes()
    assert (len(tables["dist_index"]), len(tables["dist_index_50"])) == (43, 59)
    for table, edition, home in (
        ("dist_index", "3.1.1", "index"),
        ("dist_index_50", "5.0", "index_50"),
    ):
        for rule_id, entry in tables[table].items():
            statement = model.statements[data.statement_key(rule_id, edition)]
            assert statement.edition == edition, rule_id
            if rule_id not in tables[home]:
                assert statement.text == entry.paraphrase, rule_id
                assert statement.origin.startswith("distribution index"), rule_id
            assert model.covered(statement) or statement.out_of_scope is not None, rule_id
    in_4_6_4_7 = [s for s in model.statements.values() if s.section.startswith(("4.6", "4.7"))]
    assert len(in_4_6_4_7) >= 28  # 3.1.1: 6 + 8, 5.0: 6 + 8
    assert all(model.covered(s) or s.out_of_scope is not None for s in in_4_6_4_7)
    # 4.7 (topic names and filters, matching) is covered whole, in both editions
    assert all(model.covered(s) for s in in_4_6_4_7 if s.section.startswith("4.7.")
               and s.key != "5.0:MQTT-4.7.0-1")  # fmt: skip
    # the promise: no statement is out of scope because the server is not modelled
    reasons = data.load_out_of_scope(ROOT / "docs" / "data" / "out-of-scope.toml")
    for reason in reasons.values():
        said = reason.reason.lower()
        assert "not modelled" not in said and "outside one flow" not in said, reason.key
        for word in ("subscriptions are not", "no retained store", "forwarding is not",
                     "queue is not", "matching is not"):  # fmt: skip
            assert word not in said, reason.key


def test_the_distribution_index_is_the_shared_one_unchanged() -> None:
    """The copy in docs/data records the SHA-256 of what it copies, and is the shared
    source's text byte for byte where the shared source is at hand."""
    first, rest = (
        (ROOT / "docs" / "data" / "distribution-index.md").read_text("utf-8").split("\n", 1)
    )
    recorded = re.search(r"sha256 of the original: ([0-9a-f]{64})", first)
    assert recorded is not None and first.startswith("<!-- provenance:")
    assert hashlib.sha256(rest.encode("utf-8")).hexdigest() == recorded.group(1)
    # the shared source beside the checkout, or above it (a worktree sits deeper)
    found = [b / "shared" / "spec" / "distribution-index.md" for b in ROOT.parents]
    for shared in (f for f in found if f.exists()):
        assert shared.read_text(encoding="utf-8") == rest, shared


def test_a_distribution_index_with_a_row_missing_or_twice_is_refused(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "data" / "distribution-index.md").read_text("utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| MQTT-4.7.2-1 |"))
    missing, twice = tmp_path / "missing.md", tmp_path / "twice.md"
    missing.write_text(text.replace(row + "\n", "", 1), "utf-8")
    twice.write_text(text.replace(row, row + "\n" + row, 1), "utf-8")
    with pytest.raises(data.DocsDataError, match="42 rows of Table C"):
        data.load_dist_index(missing, "C")
    with pytest.raises(data.DocsDataError, match="two rows in Table C"):
        data.load_dist_index(twice, "C")
    assert len(data.load_dist_index(missing, "D")) == 59  # Table D keeps its own row


def test_the_5_0_statements_of_the_wire_format_are_traced_apart_from_3_1_1() -> None:
    built_site()
    model = _trace()
    table_b = data.load_index_50(ROOT / "docs" / "data" / "normative-index.md")
    sections = {"1.5.4", "1.5.5", "2.2.1", "3.3", "3.4", "3.5", "3.6", "3.7"}
    wanted = [i for i, e in table_b.items() if e.section in sections or e.section[:3] in sections]
    wanted.append("MQTT-2.2.2-1")
    assert len(wanted) == 66
    for rule_id in wanted:
        statement = model.statements[f"5.0:{rule_id}"]
        assert statement.edition == "5.0" and statement.need.startswith("S50_")
        assert statement.text == table_b[rule_id].paraphrase
    # the 5.0 ids and the `also` ids of the rules that exist in 5.0 alone are traced as 5.0
    for rule in RULES.values():
        if rule.editions == (Edition.V50,):
            for rule_id in rule.also:
                assert f"5.0:{rule_id}" in model.statements, (rule.key, rule_id)
    # one id, two statements: 3.1.1's reserved flags and 5.0's Property Length
    old, new = model.statements["MQTT-2.2.2-1"], model.statements["5.0:MQTT-2.2.2-1"]
    assert old.need != new.need and old.edition == "3.1.1"
    assert {model.rules[r].key for r in old.implemented_by} == {"ack.flags", "pubrel.flags"}
    assert [model.rules[r].rule for r in new.implemented_by] == [
        RULES.by_id("MQTT-2.2.2-1", Edition.V50)
    ]
    # a 5.0 statement is implemented only by the rules' 5.0 nodes
    for statement in model.statements_of("5.0"):
        for rule_need in statement.implemented_by:
            assert Edition.V50 in model.rules[rule_need].editions, (statement.key, rule_need)
    for statement in model.statements_of("3.1.1"):
        if statement.edition == "all":  # PP-scope-packet-type: one statement, every edition
            continue
        for rule_need in statement.implemented_by:
            assert Edition.V50 not in model.rules[rule_need].editions, (statement.key, rule_need)


def test_a_5_0_reason_is_keyed_by_its_edition() -> None:
    reasons = data.load_out_of_scope(ROOT / "docs" / "data" / "out-of-scope.toml")
    key = "5.0:MQTT-3.9.2-1"
    assert reasons[key].edition == "5.0"
    # without its edition the reason names a 3.1.1 statement that does not exist, and the
    # 5.0 statement is left without one
    bare = data.OutOfScope(id="MQTT-3.9.2-1", reason="x", kind="statement")
    model = _trace({**{k: v for k, v in reasons.items() if k != key}, bare.key: bare})
    assert [s.key for s in model.uncovered()] == [key]
    assert any("MQTT-3.9.2-1, which is not a traced statement" in p for p in model.problems)
    # and a 5.0 reason does not excuse the 3.1.1 statement of the same number
    assert "5.0:MQTT-3.8.1-1" in reasons
    dropped = {k: v for k, v in reasons.items() if k != "MQTT-3.8.1-1"}
    assert [s.key for s in _trace(dropped).uncovered()] == ["MQTT-3.8.1-1"]


def test_a_statement_without_coverage_or_reason_is_reported() -> None:
    reasons = data.load_out_of_scope(ROOT / "docs" / "data" / "out-of-scope.toml")
    dropped = next(iter(reasons))
    model = _trace({k: v for k, v in reasons.items() if k != dropped})
    assert [s.ref for s in model.uncovered()] == [dropped]
    # and a reason for a statement that is in fact covered is reported as stale
    covered = next(s for s in model.statements.values() if model.covered(s))
    stale = data.OutOfScope(
        id=covered.ref,
        reason="x",
        kind="unverified",
        edition="5.0" if covered.edition == "5.0" else None,
    )
    extra = {**reasons, stale.key: stale}
    assert any(covered.key in p for p in _trace(extra).problems)


def test_a_test_naming_an_id_of_two_editions_verifies_the_rule_of_the_edition_it_names(
    tmp_path: Path,
) -> None:
    """MQTT-2.2.2-1 is 3.1.1's reserved flags (ack.flags) and 5.0's Property Length
    (props.present): a test counts for the 5.0 rule only when it names 5.0."""
    (tmp_path / "model").mkdir()
    for name in ("wire_rules.py", "flows.py", "flow_rules.py", "flow_rules50.py",
                 "distribution_rules.py", "distribution_rules50.py"):  # fmt: skip
        (tmp_path / "model" / name).write_text((ROOT / "model" / name).read_text("utf-8"), "utf-8")
    (tmp_path / "vectors").mkdir()
    (tmp_path / "vectors" / "corpus.jsonl").write_text("", "utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(
        "def test_old():\n    check('MQTT-2.2.2-1')\n\n"
        "def test_new():\n    check('MQTT-2.2.2-1', edition='5.0')\n\n"
        "def test_key():\n    check('ack.flags')\n\n"
        "def test_key_new():\n    check('ack.flags', Edition.V50)\n\n"
        "def test_only_new():\n    check('MQTT-3.3.2-8')\n",
        "utf-8",
    )
    model = trace.build(
        root=tmp_path,
        **_indexes(),
        out_of_scope={},
        prove=data.load_prove(prove_json_path(ROOT)),
    )
    verified = {t.function.name: set(t.verifies) for t in model.tests.values()}
    assert verified["test_old"] == {"R_ACK_FLAGS", "R_PUBREL_FLAGS"}
    assert verified["test_new"] == {"R50_PROPS_PRESENT"}
    assert verified["test_key"] == {"R_ACK_FLAGS"}
    assert verified["test_key_new"] == {"R50_ACK_FLAGS"}
    assert verified["test_only_new"] == {"R50_PUBLISH_TOPIC_ALIAS_ZERO"}


def test_every_reading_witness_shown_parts_the_reading() -> None:
    """The bytes a reading's witness shows get different verdicts from its values, also
    where the decoded packet cannot show the difference (pfi-mei-once: P keeps one of the
    two Payload Format Indicators, so encoding it again loses the witness)."""
    from pubproof_docs.witness import configurations, rebuild, shown_witness

    built_site()
    run = data.load_prove(prove_json_path(ROOT))
    for name in READINGS:
        proved = run.theorems[f"wire.reading-irrelevant.{name}"]
        assert proved.counterexample, name
        found = shown_witness(proved.counterexample, proved.details, proved.editions, name)
        assert found is not None and len({v.verdict for v in found.verdicts}) > 1, name
    proved = run.theorems["wire.reading-irrelevant.pfi-mei-once"]
    configs = configurations(proved.editions, "pfi-mei-once")
    again = rebuild(proved.counterexample or [], configs)
    assert again is not None and len({v.verdict for v in again.verdicts}) == 1


def test_a_failed_theorem_verifies_nothing(tmp_path: Path) -> None:
    built_site()
    report = json.loads(prove_json_path(ROOT).read_text("utf-8"))
    for entry in report["theorems"]:
        entry["status"] = "failed"
    broken = tmp_path / "prove.json"
    broken.write_text(json.dumps(report), "utf-8")
    docs = ROOT / "docs"
    model = trace.build(
        root=ROOT,
        **_indexes(),
        out_of_scope=data.load_out_of_scope(docs / "data" / "out-of-scope.toml"),
        prove=data.load_prove(broken),
    )
    assert all(not v.startswith("TH_") for r in model.rules.values() for v in r.verified_by)


@pytest.mark.slow
def test_the_sphinx_build_fails_on_an_uncovered_or_an_only_unverified_statement(
    tmp_path: Path,
) -> None:
    """The real build, with two faults in one out-of-scope table: one statement's reason
    removed (sphinx-needs' warning check, at the end of the build) and a 5.0 statement of the
    PUBLISH family moved from [[statement]] to [[unverified]], which satisfies sphinx-needs (it
    has a reason) but not the 5.0 page's check (when the build starts). Both checks run
    whatever the builder writes, so the build uses the builder that writes nothing: the two
    separate html builds this replaces cost about 200 s each on CI and showed nothing more."""
    built_site()
    source = (ROOT / "docs" / "data" / "out-of-scope.toml").read_text("utf-8")
    start = source.index("\n[[statement]]\n")
    end = source.index("\n[[statement]]\n", start + 1)
    dropped = source[start:end]
    stated = dropped.split('"')[1]
    unverified = '[[statement]]\nid = "MQTT-3.3.4-6"\nedition = "5.0"'
    assert stated != "MQTT-3.3.4-6" and source.count(unverified) == 1
    source = source[:start] + source[end:]
    source = source.replace(unverified, unverified.replace("[[statement]]", "[[unverified]]"))
    (tmp_path / "oos.toml").write_text(source, "utf-8")
    env = {
        **os.environ,
        "PUBPROOF_OUT_OF_SCOPE": str(tmp_path / "oos.toml"),
        "PUBPROOF_DOCS_NOTEBOOKS": "0",
        "PUBPROOF_PROVE_JSON": str(prove_json_path(ROOT)),
    }
    # the site's own sources, into a separate output and doctree folder
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "dummy",
         "-d", str(tmp_path / "doctrees"), str(ROOT / "docs"), str(tmp_path / "site")],
        env=env, capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode != 0
    assert "uncovered-statement" in done.stderr and stated in done.stderr, done.stderr[-2000:]
    assert "MQTT 5.0 PUBLISH family" in done.stderr, done.stderr[-2000:]
    assert "MQTT-3.3.4-6" in done.stderr, done.stderr[-2000:]


# --- the clean text ------------------------------------------------------------------------


def test_the_clean_text_keeps_every_character_of_the_source_but_the_capture_marks() -> None:
    from pubproof_docs import clean

    for clause in CLAUSES:
        for lang in clause.spans:
            source = clause.text(lang)
            assert source is not None
            shown = clean.to_text(source, lang)
            assert clean.words_kept(source, shown), (clause.id, lang)
            assert "==" not in shown
            rendered = clean.to_html(source, lang)
            assert "==" not in rendered, (clause.id, lang)
            assert rendered.count("<mark") == rendered.count("</mark>")
    # the Chinese DUP clause: its three normative sentences are highlights, and the
    # sentence broken after "PUBLISH" and after "必须" reads as one line
    dup = next(c for c in CLAUSES if c.id == "dup")
    zh = dup.text("zh")
    assert zh is not None and "==" in zh  # the file keeps the capture
    html = clean.to_html(zh, "zh")
    assert html.count('<mark class="pp-normative">') == 3
    assert "客户端或服务端尝试重发一个PUBLISH报文时,必须将重发标志位设置为1" in html
    # a quote cut out of a highlighted run is still balanced
    assert clean.to_html("设置为0==。", "zh") == '<mark class="pp-normative">设置为0</mark>。'


def test_the_built_pages_show_no_capture_marks_and_no_backticked_labels() -> None:
    site = built_site()
    clauses = (site / "_generated" / "clauses.html").read_text("utf-8")
    excerpts = re.findall(r'<div class="pp-excerpt"[^>]*>(.*?)</div>', clauses, re.S)
    assert excerpts and not any("==" in e for e in excerpts)
    assert '<mark class="pp-normative">' in clauses
    for page in ("traceability.html", "clauses.html"):
        html = (site / "_generated" / page).read_text("utf-8")
        assert "`[MQTT-3.3.1.-1]`" not in html, page
        label = '<code class="docutils literal notranslate"><span class="pre">[MQTT-3.3.1.-1]'
        assert label in html, page


def test_the_sidebar_names_each_page_once() -> None:
    """The sidebar's entries are told apart by their titles (the guide "Editions and
    readings" and the generated page of the readings once had the same)."""
    html = (built_site() / "index.html").read_text("utf-8")
    entries = re.findall(r'<li class="toctree-l1[^"]*"><a[^>]*>(.*?)</a>', html)
    assert len(entries) > 20
    assert sorted({e for e in entries if entries.count(e) > 1}) == []


# --- the theorem pages ---------------------------------------------------------------------


def test_every_theorem_has_its_page_with_its_status_in_words() -> None:
    site = built_site()
    report = data.load_prove(prove_json_path(ROOT))
    index = (site / "_generated" / "theorems.html").read_text("utf-8")
    for theorem in load_theorems():
        slug = theorem.id.replace(".", "-")
        page = site / "_generated" / "theorem" / f"{slug}.html"
        assert page.is_file(), theorem.id
        html = page.read_text("utf-8")
        assert f"theorem/{slug}.html" in index
        proved = report.theorems[theorem.id]
        words = (
            "proved"
            if proved.status == proved.expected == "proved"
            else ("refuted, as expected" if proved.status == proved.expected else "FAILED")
        )
        assert words in html, theorem.id
        assert ">pass<" not in html
        assert "Var(" not in html, theorem.id  # the invariants are read over named variables
        traces = [proved.counterexample, *(m.counterexample for m in proved.mutants)]
        drawn = sum(1 for t in traces if t and any("dir" in e or "event" in e for e in t))
        assert html.count('<svg class="pp-msc"') == drawn, theorem.id
        assert html.count("replay(trace)") >= drawn, theorem.id


def test_every_unstated_assumption_is_in_the_catalog_and_linked_from_its_theorems() -> None:
    from pubproof_docs.pages_theorems import assumptions

    from pubproof.model.ambiguities import BY_ID

    listed = assumptions(ROOT / "docs" / "data" / "assumptions.toml")
    theorems = load_theorems()
    for a in listed:
        assert (a.stated is None) != (a.catalog is None), a.id
        if a.catalog is not None:
            assert a.catalog in BY_ID, a.id
        assert any(a.applies(t.id) for t in theorems), a.id
    site = built_site()
    for theorem in theorems:
        if not theorem.id.startswith("proto."):
            continue
        mine = [a for a in listed if a.applies(theorem.id)]
        assert any(a.catalog for a in mine), theorem.id
        html = site / "_generated" / "theorem" / f"{theorem.id.replace('.', '-')}.html"
        text = html.read_text("utf-8")
        for a in mine:
            if a.catalog:
                assert f"ambiguity-catalog.html#ambiguity-{a.catalog}" in text, (theorem.id, a.id)


def test_a_spacer_invariant_reads_as_predicates_over_named_variables() -> None:
    from pubproof_docs import invariant

    names = ["pub", "s", "d"]
    text = (
        "And(Not(Var(2) >= 2), Or(Not(Var(0) <= 0), Var(1) == 1), "
        "Or(Not(Var(1) == 2), Not(Var(2) >= 1)), Not(Var(0) + -1*Var(2) <= -1))"
    )
    assert invariant.clauses(text, names, {"s": ["FREE", "AWAIT_PUBACK", "AWAIT_PUBREC"]}) == [
        "d ≤ 1",
        "(pub ≥ 1 or s = 1 (AWAIT_PUBACK))",
        "never: s = 2 (AWAIT_PUBREC) and d ≥ 1",
        "pub - d ≥ 0",
    ]
    details = f"{invariant.PREFIX}{text}; explorer agrees (36 worlds)"
    assert invariant.split_details(details) == (text, "explorer agrees (36 worlds)")


def test_the_rule_id_search_table_names_clause_statement_rules_theorems_and_tests() -> None:
    site = built_site()
    js = (site / "_static" / "pp-ruleids.js").read_text("utf-8")
    table = json.loads(js.removeprefix("window.PP_RULE_IDS = ").rstrip().rstrip(";"))
    hits = table["MQTT-3.3.1-4"]
    assert {h[0] for h in hits} >= {"clause", "statement", "model rule", "theorem", "test"}
    for _, _, url in hits:
        path, _, anchor = url.partition("#")
        html = (site / path).read_text("utf-8")
        assert not anchor or f'id="{anchor}"' in html, url
    assert "5.0:MQTT-3.3.1-4" not in table or table["5.0:MQTT-3.3.1-4"]


def test_the_matrix_and_its_evidence_pages_link_each_rule_they_judge_to_its_statement() -> None:
    """Every matrix row names the rules its check judges; every evidence page leads back to
    the site and links each rule id the site has a statement for to that statement; the
    search table lists for such an id the matrix rows and evidence pages that cite it."""
    site = built_site()
    js = (site / "_static" / "pp-ruleids.js").read_text("utf-8")
    table = json.loads(js.removeprefix("window.PP_RULE_IDS = ").rstrip().rstrip(";"))
    results = json.loads((ROOT / "docs" / "matrix" / "results.json").read_text("utf-8"))
    matrix = (site / "_generated" / "matrix.html").read_text("utf-8")
    rows = dict(re.findall(r'<tr id="(matrix-[^"]+)"><td>(.*?)</td>', matrix))
    for row in results["results"]:
        anchor = "matrix-{}-{}".format(
            row["kind"], re.sub(r"[^a-z0-9]+", "-", row["check"].lower()).strip("-")
        )
        for rule in {*row["rules"], *row["rule_verdicts"]}:
            assert f"<code>{rule}</code>" in rows[anchor], (anchor, rule)
            key = f"5.0:{rule}" if row["edition"] == "5.0" else rule
            page = f"{row['implementation']}-{row['edition']}.html#{row['check']}"
            assert any(h[0] == "evidence" and h[2] == f"_static/matrix/{page}" for h in table[key])
            assert any(h[0] == "matrix" and h[2].endswith(f"#{anchor}") for h in table[key])
    pages = sorted((site / "_static" / "matrix").glob("*.html"))
    assert len(pages) >= 20
    for path in pages:
        html = path.read_text("utf-8")
        assert '<nav class="site"><a href="../../index.html">' in html, path.name
        edition = path.stem.rsplit("-", 1)[1]
        cited = re.findall(r'(<a class="rule" href="([^"]*)">)?<code[^>]*>([A-Z][\w.-]+)', html)
        assert cited, path.name
        for link, href, rule in cited:
            key = f"5.0:{rule}" if edition == "5.0" else rule
            statements = [h[2] for h in table.get(key, []) if h[0] == "statement"]
            if statements:
                assert link and href == f"../../{statements[0]}", (path.name, rule, href)


def test_a_refutation_calls_the_system_in_which_its_property_holds_a_contrast() -> None:
    """A "... FAILS when ..." theorem's variants (the receiver as the model's tables have
    it, an in-order channel, another reading) are never labelled mutants on its page; the
    other theorems' are."""
    site = built_site()
    refutations = [t for t in load_theorems() if ".refute." in t.id]
    assert len(refutations) >= 10
    for t in refutations:
        html = (site / f"{theorem_doc(t.id)}.html").read_text()
        text = re.sub(r"<[^>]+>", "", html)
        assert "Mutant:" not in text and "Contrast:" in text, t.id
    proved = (site / f"{theorem_doc('proto.qos2.exactly-once.method-a')}.html").read_text()
    assert "Mutant:" in re.sub(r"<[^>]+>", "", proved)


def test_the_pages_of_3_1_1_and_5_0_statements_link_each_oasis_standard_with_its_notice() -> None:
    """The traceability matrix, the 5.0 statements page and the matrix's findings link the
    OASIS standards whose ids they list, each with its copyright notice beside the link."""
    site = built_site() / "_generated"
    wanted = {
        "traceability.html": ("3.1.1", "5.0"),
        "clauses50.html": ("5.0",),
        "matrix.html": ("3.1.1", "5.0"),
    }
    notices = {
        "3.1.1": ("https://docs.oasis-open.org/mqtt/mqtt/v3.1.1/os/mqtt-v3.1.1-os.html",
                  "Copyright © OASIS Open 2014. All Rights Reserved."),
        "5.0": ("https://docs.oasis-open.org/mqtt/mqtt/v5.0/os/mqtt-v5.0-os.html",
                "Copyright © OASIS Open 2019. All Rights Reserved."),
    }  # fmt: skip
    for page, editions in wanted.items():
        html = (site / page).read_text("utf-8")
        (block,) = re.findall(r'<p class="pp-oasis">(.*?)</p>', html, re.S)
        for edition in editions:
            url, notice = notices[edition]
            assert re.search(rf'href="{re.escape(url)}"[^>]*>[^<]*</a>\s*\({notice}\)', block), (
                page,
                edition,
            )


def test_the_matrix_theorems_and_catalog_pages_link_the_glossary_terms_they_use() -> None:
    site = built_site() / "_generated"
    wanted = {
        "matrix.html": {"pass", "violation", "deviation", "provoked", "tolerated"},
        "theorems.html": {"theorem", "counterexample", "mutant", "witness", "reading"},
        "ambiguity-catalog.html": {"ambiguity", "reading", "edition", "witness"},
    }
    glossary = (site.parent / "glossary.html").read_text("utf-8")
    for page, terms in wanted.items():
        linked = set(
            re.findall(r'href="\.\./glossary\.html#term-([^"]+)"', (site / page).read_text())
        )
        assert {t.replace(" ", "-") for t in terms} <= linked, (page, linked)
        for anchor in linked:
            assert f'id="term-{anchor}"' in glossary, anchor


def test_notebook_03_shows_spacers_invariant_over_named_state_variables() -> None:
    """Notebook 03 prints the invariant as the theorem pages show it (predicates over the
    named variables and states), never Spacer's raw terms (``And(Not(Var(1) == 1), ...``)."""
    html = (built_site() / "notebooks" / "03-proving-with-z3.html").read_text("utf-8")
    output = r'<div class="cell_output docutils container">(.*?)</div>\s*</div>'
    outputs = "".join(re.findall(output, html, re.S))
    assert "predicates over the state variables" in outputs
    assert re.search(r"\d+\. d ≤ 1", outputs), "the invariant's predicates"
    assert "Var(" not in outputs


def test_the_catalog_shows_each_quote_of_an_excerpt_as_whole_sentences() -> None:
    """A quote cut where a line of the page ended ("... sends a message to a") is shown as
    the sentence it lies in: every English, German and Spanish excerpt of the catalog that
    is prose (not a table's cells, not a heading) starts a sentence and ends one, and holds
    the quote."""
    from html import unescape

    from pubproof.model.ambiguities import AMBIGUITIES

    html = (built_site() / "_generated" / "ambiguity-catalog.html").read_text("utf-8")
    shown = {
        lang: [" ".join(unescape(re.sub(r"<[^>]+>", "", t)).split()) for t in texts]
        for lang in ("en", "de", "es")
        for texts in [
            re.findall(rf'<div class="pp-excerpt" lang="{lang}"[^>]*>(.*?)</div>', html, re.S)
        ]
    }
    # a quote of another text (a standard's section, with its source) is shown as it is
    others = {" ".join(q.text.split()) for e in AMBIGUITIES for q in e.quotes if q.source}
    cut = []
    for lang, texts in shown.items():
        for text in texts:
            if "|" in text or not re.search(r"[.!?]", text) or text in others:
                continue
            if not re.match(r'[A-ZÁÉÍÓÚÄÖÜ0-9"“(¿¡]', text) or not re.search(r'[.!?:)"”]$', text):
                cut.append((lang, text[:80]))
    assert cut == []
    for entry in AMBIGUITIES:
        for quote in entry.quotes:
            if quote.source is None and quote.lang in shown:
                wanted = " ".join(quote.text.split())
                assert any(wanted in text for text in shown[quote.lang]), (entry.id, wanted)


def test_spacer_numbers_an_invariants_variables_by_argument_position() -> None:
    """The theorem pages name ``Var(i)`` after the relation's ``i``-th argument: Z3's own
    answer on a two-argument relation whose second argument is fixed at 5 says so."""
    import z3
    from pubproof_docs import invariant

    fp = z3.Fixedpoint()
    fp.set(engine="spacer")
    a, b, a2 = z3.Ints("a b a2")
    reach = z3.Function("R", z3.IntSort(), z3.IntSort(), z3.BoolSort())
    error = z3.Function("E", z3.BoolSort())
    fp.register_relation(reach, error)
    fp.declare_var(a, b, a2)
    fp.rule(reach(0, 5))
    fp.rule(reach(a2, b), [reach(a, b), a2 == a + 1, a < 3])
    fp.rule(error(), [reach(a, b), b != 5])
    assert fp.query(error()) == z3.unsat
    found = invariant.clauses(str(fp.get_cover_delta(-1, reach)), ["first", "second"])
    assert found and all("second" in p and "first" not in p for p in found), found


# --- the readers' way in: the glossary, the favicon ----------------------------------------

#: every term and id scheme the site relies on, as the glossary names it
GLOSSARY = (
    "reading", "tolerated", "deviation", "provoked", "violation", "mutant", "witness",
    "Method A", "Method B", "PP31-", "PP311-", "PP50-", "MQTT-x.y.z-n", "distribution",
    "retained message", "overlapping subscription", "twin",
)  # fmt: skip


def test_the_glossary_defines_every_term_and_id_scheme_and_the_way_in_links_it() -> None:
    site = built_site()
    html = (site / "glossary.html").read_text("utf-8")
    defined = {
        re.sub(r"<[^>]+>", "", term).strip()
        for term in re.findall(r'<dt id="term-[^"]*">(.*?)<a class="headerlink"', html, re.S)
    }
    missing = [t for t in GLOSSARY if t not in defined]
    assert missing == [], (missing, sorted(defined))
    # each definition says something: a sentence, never a word or two
    for body in re.findall(r"</dt>\s*<dd>(.*?)</dd>", html, re.S):
        assert len(re.sub(r"<[^>]+>", "", body).split()) >= 8, body[:80]
    # the landing page and each reader's path link it
    for page in ("index.html", "paths/learn.html", "paths/audit.html", "paths/check.html"):
        text = (site / page).read_text("utf-8")
        assert re.search(r'href="(\.\./)?glossary\.html[#"]', text), page


def test_every_page_names_the_favicon() -> None:
    site = built_site()
    icon = site / "_static" / "favicon.svg"
    assert icon.is_file() and icon.read_text("utf-8").lstrip().startswith("<svg")
    for page in ("index.html", "_generated/clauses.html", "_generated/ambiguity-catalog.html"):
        html = (site / page).read_text("utf-8")
        assert re.search(
            r'<link rel="(shortcut )?icon" href="(\.\./)*_static/favicon\.svg"', html
        ), page
