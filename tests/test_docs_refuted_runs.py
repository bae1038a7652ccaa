"""A refuted theorem's page draws the run that fails: its counterexample replayed through the
system the theorem refutes (``pubproof.proofs.refuted_runs``) breaks the theorem's property,
the chart marks the step and the words under it say what went wrong; the same trace through
the correct system breaks nothing (so the replay is not the model's own sessions)."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache
from typing import cast

import pytest
from pubproof_docs.pages_theorems import theorem_doc, trace_block
from support.docs_site import built_site

from pubproof.model.editions import Edition
from pubproof.model.explore import Mutations
from pubproof.proofs.catalog import load
from pubproof.proofs.distribution_explore import SUBSCRIBER
from pubproof.proofs.distribution_forwarding import Forwarding
from pubproof.proofs.distribution_graphs import Setting
from pubproof.proofs.distribution_ordering import Ordering
from pubproof.proofs.distribution_retained import Stores
from pubproof.proofs.distribution_run import Lost, Publish, Run
from pubproof.proofs.protocol import Case
from pubproof.proofs.refuted_runs import SUMMARY_EVENTS, NotARun, replay_refuted
from pubproof.proofs.refuted_servers import ABOVE, HOLDS
from pubproof.proofs.registry import Evidence, Theorem

REFUTED = [t for t in load() if ".refute." in t.id and t.expected == "refuted"]


@cache
def _counterexample(theorem_id: str) -> Evidence:
    result = next(t for t in REFUTED if t.id == theorem_id).check()
    assert result.status == "refuted" and result.counterexample, (theorem_id, result.details)
    return result.counterexample


def test_there_are_the_fourteen_refuted_theorems_and_each_is_replayed() -> None:
    assert len(REFUTED) == 14
    for t in REFUTED:
        assert replay_refuted(t, _counterexample(t.id)) is not None, t.id


def _sent(trace: Evidence) -> list[int]:
    return [i for i, e in enumerate(trace) if e.get("type") == "PUBLISH" and e.get("dir") == "s2c"]


def _above_grant(trace: Evidence) -> int:
    """The first copy at a QoS above every grant its SUBACK gave (read off the rows)."""
    granted = max(cast("list[int]", next(e["granted"] for e in trace if e.get("type") == "SUBACK")))
    return next(i for i in _sent(trace) if cast(int, trace[i]["qos"]) > granted)


def _empty_held(trace: Evidence) -> int:
    """The table's note that it holds the zero-byte message (no payload: "")."""
    return next(i for i, e in enumerate(trace)
                if e.get("event") == "retained-store" and e["holds"] == "")  # fmt: skip


def _last(trace: Evidence) -> int:
    moves = [i for i, row in enumerate(trace) if row.get("event") not in SUMMARY_EVENTS]
    return moves[-1]


#: per distribution refutation: where its property fails (read off the trace by other
#: means than the replay's), which property, and words of the reason
SERVERS = {
    "dist.refute.retained-never-empty-31": (_empty_held, HOLDS, "holds message 1 (zero bytes)"),
    "dist.refute.retained-qos-31-as-published": (_above_grant, ABOVE, "granted QoS 0"),
    "dist.refute.order-across-qos": (
        _last, "in the order received, whatever the QoS", "message 2 from 'p1' on 'a' after "
        "message 3"),
    "dist.refute.order-retained-all": (
        _last, "the order of 4.6 (ordering-retained=all)", "message 1 from 'p1' on 'a' at QoS 1 "
        "was sent after message 3"),
}  # fmt: skip


@pytest.mark.parametrize("theorem", REFUTED, ids=lambda t: t.id)
def test_the_counterexample_fails_when_replayed_through_the_refuted_system(
    theorem: Theorem,
) -> None:
    trace = _counterexample(theorem.id)
    run = replay_refuted(theorem, trace)
    assert run is not None and run.failed_at is not None and run.failed, theorem.id
    if theorem.id in SERVERS:  # a distribution server: the failing row, as the trace shows it
        row, name, why = SERVERS[theorem.id]
        assert (run.failed_at, run.failed) == (row(trace), (name,)), theorem.id
        assert why in run.reason and not run.counted, (theorem.id, run.reason)
    else:  # the shortest trace ends where the property first fails (bar a summary row)
        assert run.failed_at == _last(trace), (theorem.id, run.failed_at, len(trace))
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
    if theorem.id in SERVERS:
        assert SERVERS[theorem.id][2] in words.replace("\\", ""), theorem.id


def _theorem(suffix: str) -> Theorem:
    return next(t for t in REFUTED if t.id.endswith(suffix))


def test_a_distribution_trace_through_the_correct_server_breaks_nothing_or_is_no_run() -> None:
    """The contrasts: each refuted server's counterexample, run through the server in which
    the property holds, either runs and breaks nothing or stops at the row it cannot make."""
    retained_all = _theorem("order-retained-all")
    assert isinstance(retained_all.model, Ordering)
    judged = ((("ordering-retained", "live-only"),),)
    live_only = replace(retained_all, model=replace(retained_all.model, judged=judged))
    run = replay_refuted(live_only, _counterexample(retained_all.id))
    assert run is not None and run.failed_at is None and not run.failed
    # the oracle's table deletes the zero-byte message: it cannot say it holds it
    never_empty = _theorem("retained-never-empty-31")
    assert isinstance(never_empty.model, Stores)
    oracle = Stores(stores=tuple(replace(s, alternatives=False) for s in never_empty.model.stores))
    trace = _counterexample(never_empty.id)
    with pytest.raises(NotARun, match=f"row {_empty_held(trace)} "):
        replay_refuted(replace(never_empty, model=oracle), trace)
    # under retained-qos-31=granted the model sends the retained message at the grant
    as_published = _theorem("retained-qos-31-as-published")
    setting = Setting(Edition.V31, retained_qos_31="granted")
    granted = replace(as_published, model=Forwarding(settings=(setting,)))
    trace = [dict(e) for e in _counterexample(as_published.id)]
    readings = cast("dict[str, str]", trace[0]["readings"])
    trace[0] = {**trace[0], "readings": {**readings, "retained-qos-31": "granted"}}
    with pytest.raises(NotARun, match=f"row {_above_grant(trace)} "):
        replay_refuted(granted, trace)
    # a trace of another server than the theorem checks is refused at its first row
    across = _theorem("order-across-qos")
    assert isinstance(across.model, Ordering)
    scenes = tuple(s for s in across.model.scenes if ("queue-qos0", "queue") in s.readings)
    queued = replace(across, model=replace(across.model, scenes=scenes))
    with pytest.raises(NotARun, match="row 0 "):
        replay_refuted(queued, _counterexample(across.id))


def test_a_run_of_the_model_beyond_the_scene_the_explorer_searched_is_no_run_of_it() -> None:
    """The ordering theorems' server is the explorer of their scene, not any run of the
    model: under ordering-retained=all the subscriber never loses its connection."""
    theorem = _theorem("order-retained-all")
    assert isinstance(theorem.model, Ordering)
    scene = next(s for s in theorem.model.scenes if s.edition is Edition.V31)
    assert scene.disconnects == 0
    run = Run(scene.edition, dict(scene.readings)).run(scene.prologue())
    run.run([Publish("p1", "a", 1, True, b"p1-1"), Lost(SUBSCRIBER)])
    lost = next(i for i, e in enumerate(run.trace) if e.get("event") == "connection-lost")
    with pytest.raises(NotARun, match=f"row {lost} "):
        replay_refuted(theorem, run.trace)


def test_a_distribution_trace_with_a_row_the_server_does_not_make_is_refused_by_row() -> None:
    theorem = _theorem("order-across-qos")
    trace = [dict(e) for e in _counterexample(theorem.id)]
    sent = _sent(trace)[0]
    trace[sent]["payload_hex"] = "00"
    with pytest.raises(NotARun, match=f"row {sent} "):
        replay_refuted(theorem, trace)


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
        run = replay_refuted(theorem, _counterexample(theorem.id))
        assert run is not None and run.failed_at is not None
        assert html.count('class="pp-msc-fail"') == 2, theorem.id  # the bar and the label
        assert f"fails at step {run.failed_at + 1}" in text, theorem.id
