"""The site's distribution pages: the decision graphs and the retained store drawn from the
model (one diagram per concern, a tab per edition), the edition diff's distribution part
with witnesses the model computes in both editions, the catalog's scenarios, the gaps on the
traceability page, the clause pages' distribution rules, and notebook 07."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

# docs/_ext is on sys.path at run time (docs_site puts it there)
from pubproof_docs import data, distribution_diff
from pubproof_docs.context import dist_index_path
from pubproof_docs.pages_diagrams import cluster_dot, merged_edges
from support.docs_site import ROOT, built_site

from pubproof.model.distribution_diagrams import GRAPHS, forwarding_dot, reachable, retained_dot
from pubproof.model.editions import Edition
from pubproof.model.retained import retained_table

GENERATED = "_generated"


def _nodes_and_edges(dot: str) -> tuple[set[str], int]:
    nodes = set(re.findall(r'^\s+"([\w.-]+)" \[shape=', dot, re.M))
    edges = len(re.findall(r'^\s+"[\w.-]+" -> "[\w.-]+"', dot, re.M))
    return nodes, edges


@pytest.mark.parametrize("edition", list(Edition), ids=lambda e: e.value)
def test_each_decision_graph_is_its_own_diagram_with_every_node_the_model_draws(
    edition: Edition,
) -> None:
    whole = forwarding_dot(edition)
    for name, title, nodes in GRAPHS:
        alone = cluster_dot(whole, name, title)
        found, edges = _nodes_and_edges(alone)
        assert found == {f"{name}.{key}" for key in reachable(nodes, edition)}, name
        assert edges >= len(found) - 1, name  # a connected graph
        assert f'label="{title}"' in alone and "subgraph" not in alone
        # no edge of another graph (the hand-overs are left out)
        assert not re.search(r'"(?!' + re.escape(name) + r'\.)[\w-]+\.[\w-]+" ->', alone)
    with pytest.raises(LookupError):
        cluster_dot(whole, "no-such-graph", "x")


@pytest.mark.parametrize("edition", list(Edition), ids=lambda e: e.value)
def test_the_retained_store_drawn_keeps_every_entry_and_allowed_outcome(edition: Edition) -> None:
    table = retained_table(edition)
    merged = merged_edges(retained_dot(edition))
    lines = [part for label in re.findall(r'label="(.*?)"', merged) for part in label.split("\\l")]
    lines = [line for line in lines if line]
    alternatives = sum(len(step.alternatives) for step in table.values())
    assert len(lines) == len(table) + alternatives
    # one edge per pair of states and style, at most
    edges = re.findall(r"^\s+(\w+) -> (\w+) \[label=\".*?\"(, style=dashed)?\];", merged, re.M)
    assert len(edges) == len(set(edges))


def test_the_distribution_diagrams_page_has_a_tab_per_edition_for_each_concern() -> None:
    html = (built_site() / GENERATED / "distribution-diagrams.html").read_text("utf-8")
    drawn = html.count('<div class="graphviz">')
    assert drawn == 3 * (len(GRAPHS) + 1), drawn  # four graphs and the store, three editions
    for edition in Edition:
        assert f"MQTT {edition.value}" in html
    assert "PP31-2.1-retain-may-delete" in html and "MQTT-3.3.1-10" in html


def test_the_distribution_index_lists_fifteen_differences_and_the_witnesses_show_them() -> None:
    found = distribution_diff.differences(dist_index_path(ROOT / "docs"))
    assert [d.number for d in found] == list(range(1, 16))
    assert found[0].title == "Session lifetime" and "3.1.2-23" in found[0].text
    numbers = {d.number for d in found}
    for witness in distribution_diff.WITNESSES:
        first, second = witness.outcomes()
        # the same events, another outcome in the other edition
        assert first != second, witness.title
        assert witness.item is None or witness.item in numbers
    html = (built_site() / GENERATED / "edition-diff.html").read_text("utf-8")
    assert "Distribution: a server across sessions" in html
    assert html.count("Witness") >= len(distribution_diff.WITNESSES)
    assert "PP31-2.1-retain-hold" in html and "MQTT-3.3.1-5" in html


def test_the_catalog_runs_every_scenario_and_the_readings_page_has_the_distribution_ones() -> None:
    site = built_site()
    catalog = (site / GENERATED / "ambiguity-catalog.html").read_text("utf-8")
    assert "The scenarios (run through the distribution model at every build)" in catalog
    assert "✘" not in catalog
    for entry in ("queue-qos0-offline", "dollar-topics-31", "ordering-same-qos"):
        assert f'id="ambiguity-{entry}"' in catalog, entry
    readings = (site / GENERATED / "readings.html").read_text("utf-8")
    assert "Readings of distribution" in readings
    assert 'id="reading-overlapping-copies"' in readings


def test_the_traceability_page_counts_distribution_and_lists_the_gaps() -> None:
    html = (built_site() / GENERATED / "traceability.html").read_text("utf-8")
    assert "of them, distribution" in html and "Beyond the labelled statements" in html
    for gap in data.load_gaps(ROOT / "docs" / "data" / "out-of-scope.toml"):
        assert gap.what.replace("'", "\u2019") in html, gap.what  # the site's quotes are curly


def test_a_gap_without_a_reason_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "oos.toml"
    path.write_text('[[gap]]\nwhat = "x"\nwhere = "y"\nreason = " "\n', "utf-8")
    with pytest.raises(data.DocsDataError, match="a gap needs"):
        data.load_gaps(path)
    path.write_text('[[gap]]\nwhat = "x"\nwhere = "y"\n', "utf-8")
    with pytest.raises(data.DocsDataError, match="a gap needs"):
        data.load_gaps(path)


def test_the_retain_clause_shows_the_distribution_rules_of_3_1_and_3_1_1() -> None:
    html = (built_site() / GENERATED / "clauses.html").read_text("utf-8")
    retain = html.split('id="clause-retain"')[1].split('id="clause-remaining-length"')[0]
    for need in ("R_DIST_RETAIN_STORE_31", "R_DIST_RETAIN_STORE", "R_DIST_RETAIN_EMPTY_DELETES"):
        assert need in retain, need


def test_notebook_07_is_executed_and_linked_from_the_site() -> None:
    site = built_site()
    html = (site / "notebooks" / "07-retained-messages-and-topic-filters.html").read_text("utf-8")
    assert "Retained messages, topic filters and overlapping subscriptions" in html
    assert html.count("<img") >= 2  # the timeline and the fan-out, executed
    assert "Traceback" not in html and "MQTT-3.3.1-10" in html
    index = (site / GENERATED / "notebooks.html").read_text("utf-8")
    assert "07-retained-messages-and-topic-filters.html" in index
