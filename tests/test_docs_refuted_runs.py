"""A refuted theorem's page draws the run that fails: its counterexample replayed through the
system the theorem refutes (``pubproof.proofs.refuted_runs``) breaks the theorem's property,
the chart marks the step and the words under it say what went wrong; the same trace through
the correct system breaks nothing (so the replay is not the model's own sessions)."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache

import pytest
from pubproof_docs.pages_theorems import theorem_doc, trace_block
from support.docs_site import built_site

from pubproof.model.explore import Mutations
from pubproof.proofs.catalog import load
from pubproof.proofs.protocol import Case
from pubproof.proofs.refuted_runs import NOT_REPLAYED, SUMMARY_EVENTS, NotARun, replay_refuted
from pubproof.proofs.registry import Evidence, Theorem

REFUTED = [t for t in load() if ".refute." in t.id and t.expected == "refuted"]


@cache
def _counterexample(theorem_id: str) -> Evidence:
    result = next(t for t in REFUTED if t.id == theorem_id).check()
    assert result.status == "refuted" and result.counterexample, (theorem_id, result.details)
    return result.counterexample


def test_there_are_the_fourteen_refuted_theorems_and_each_is_replayed_or_listed_as_not() -> None:
    assert len(REFUTED) == 14
    ids = {t.id for t in REFUTED}
    assert ids >= NOT_REPLAYED
    for t in REFUTED:
        run = replay_refuted(t, _counterexample(t.id))
        assert (run is None) == (t.id in NOT_REPLAYED), t.id


@pytest.mark.parametrize("theorem", [t for t in REFUTED if t.id not in NOT_REPLAYED],
                         ids=lambda t: t.id)  # fmt: skip
def test_the_counterexample_fails_when_replayed_through_the_refuted_system(
    theorem: Theorem,
) -> None:
    trace = _counterexample(theorem.id)
    run = replay_refuted(theorem, trace)
    assert run is not None and run.failed_at is not None and run.failed, theorem.id
    # the shortest trace ends where the property first fails (bar a summary row after it)
    moves = [i for i, row in enumerate(trace) if row.get("event") not in SUMMARY_EVENTS]
    assert run.failed_at == moves[-1], (theorem.id, run.failed_at, len(trace))
    if "at most once" in run.failed:
        assert max(run.counts(run.failed_at).values()) >= 2, theorem.id
    # the page: the chart marks the step, the words say what failed, not the model's verdict
    block = trace_block(theorem.id, trace, "chart", refuted=True)
    step = run.failed_at + 1
    assert 'class="pp-msc-fail"' in block and 'class="pp-msc-failband"' in block
    assert f"step {step}: " in block, theorem.id
    words = re.sub(r"\*\*", "", block)
    assert f"fails at step {step}" in words, theorem.id
    for name in run.failed:
        assert f"\u201c{name}\u201d fails at step {step}" in words, theorem.id
    assert "(the model's sessions, Method" not in block, theorem.id
    if "at most once" in run.failed:
        twice = [m for m, n in run.counts(run.failed_at).items() if n == 2]
        assert any(f"delivered {m} twice" in words for m in twice), theorem.id


def test_through_the_correct_tables_the_same_trace_delivers_once_and_breaks_nothing() -> None:
    """The contrast: the receiver as the model's tables have it makes nothing of the re-sent
    PUBLISH, so a replay through the correct system must not report the failure."""
    theorem = next(t for t in REFUTED if t.id.endswith("forgetting-on-pubrec"))
    case = theorem.model
    assert isinstance(case, Case)
    system = replace(case.system, mutations=Mutations())
    correct = replace(theorem, model=replace(case, system=system))
    run = replay_refuted(correct, _counterexample(theorem.id))
    assert run is not None and run.failed_at is None and run.counts() == {"01": 1}


def test_a_trace_that_is_no_run_of_the_refuted_system_is_refused_by_row() -> None:
    theorem = next(t for t in REFUTED if t.id.endswith("forgetting-on-pubrec"))
    trace = [dict(e) for e in _counterexample(theorem.id)]
    trace[1]["packet_id"] = 2
    with pytest.raises(NotARun, match="row 1 "):
        replay_refuted(theorem, trace)


def test_other_traces_are_still_judged_by_the_models_own_sessions() -> None:
    theorem = next(t for t in REFUTED if t.id.endswith("forgetting-on-pubrec"))
    block = trace_block(theorem.id, _counterexample(theorem.id), "contrast")
    assert "(the model's sessions, Method B" in block and "pp-msc-fail" not in block


@pytest.mark.heavy  # reads the built site (built by scripts/docs when missing)
def test_the_built_page_of_each_replayed_refutation_marks_and_names_the_failing_step() -> None:
    site = built_site()
    for theorem in REFUTED:
        html = (site / f"{theorem_doc(theorem.id)}.html").read_text("utf-8")
        text = re.sub(r"<[^>]+>", "", html)
        assert "Contrast:" in text, theorem.id
        if theorem.id in NOT_REPLAYED:
            assert "pp-msc-fail" not in html, theorem.id
            continue
        run = replay_refuted(theorem, _counterexample(theorem.id))
        assert run is not None and run.failed_at is not None
        assert html.count('class="pp-msc-fail"') == 2, theorem.id  # the bar and the label
        assert f"fails at step {run.failed_at + 1}" in text, theorem.id
