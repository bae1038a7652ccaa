"""The built site: internal links and anchors resolve, nothing loads from the network, the
traceability model is what the registries say, and the build fails on an uncovered
statement."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from docs_site import ROOT, built_site

# docs/_ext is on sys.path at run time (docs_site puts it there) and on mypy's search path
# (pyproject.toml's mypy_path)
from pubproof_docs import data, linkcheck, trace
from pubproof_docs.context import prove_json_path

from pubproof.model.clauses import CLAUSES
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
    assert html.count('data-sync-group="lang"') == 5 * len(CLAUSES)


def _trace(out_of_scope: dict[str, data.OutOfScope] | None = None) -> trace.Trace:
    docs = ROOT / "docs"
    return trace.build(
        root=ROOT,
        index=data.load_index(docs / "data" / "normative-index.md"),
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
    assert {r.key for r in model.rules.values() if r.key} == set(RULES)
    assert set(model.theorems) == {t.id for t in load_theorems()}
    for rule in RULES.values():
        for rule_id in rule.ids.values():
            assert rule_id in model.statements
    # every id of the PUBLISH and acknowledgement sections of 3.1.1 is traced
    index = data.load_index(ROOT / "docs" / "data" / "normative-index.md")
    sections = [i for i, e in index.items() if e.section[:3] in {"3.3", "3.4", "3.5", "3.6", "3.7"}]
    assert sections and all(i in model.statements for i in sections)


def test_a_statement_without_coverage_or_reason_is_reported() -> None:
    reasons = data.load_out_of_scope(ROOT / "docs" / "data" / "out-of-scope.toml")
    dropped = next(iter(reasons))
    model = _trace({k: v for k, v in reasons.items() if k != dropped})
    assert [s.ref for s in model.uncovered()] == [dropped]
    # and a reason for a statement that is in fact covered is reported as stale
    covered = next(s.ref for s in model.statements.values() if model.covered(s))
    extra = {**reasons, covered: data.OutOfScope(id=covered, reason="x", kind="unverified")}
    assert any(covered in p for p in _trace(extra).problems)


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
        index=data.load_index(docs / "data" / "normative-index.md"),
        out_of_scope=data.load_out_of_scope(docs / "data" / "out-of-scope.toml"),
        prove=data.load_prove(broken),
    )
    assert all(not v.startswith("TH_") for r in model.rules.values() for v in r.verified_by)


@pytest.mark.slow
def test_the_sphinx_build_fails_on_an_uncovered_statement(tmp_path: Path) -> None:
    """The real build, through sphinx-needs' warning check, with one reason removed."""
    built_site()
    source = (ROOT / "docs" / "data" / "out-of-scope.toml").read_text("utf-8")
    start = source.index("\n[[statement]]\n")
    end = source.index("\n[[statement]]\n", start + 1)
    dropped = source[start:end]
    (tmp_path / "oos.toml").write_text(source[:start] + source[end:], "utf-8")
    env = {
        **os.environ,
        "PUBPROOF_OUT_OF_SCOPE": str(tmp_path / "oos.toml"),
        "PUBPROOF_DOCS_NOTEBOOKS": "0",
        "PUBPROOF_PROVE_JSON": str(prove_json_path(ROOT)),
    }
    # the site's own sources, into a separate output and doctree folder
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(tmp_path / "doctrees"), str(ROOT / "docs"), str(tmp_path / "site")],
        env=env, capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode != 0
    stated = dropped.split('"')[1]
    assert "uncovered-statement" in done.stderr and stated in done.stderr, done.stderr[-2000:]
