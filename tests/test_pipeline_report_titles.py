"""report.html gives every rule id a report can show its title from the project's
registries (the rule registry, the packaged normative index, the flow tables), never a
blank cell; a mutant that looks in the rule registry only is caught."""

from __future__ import annotations

import ast
import hashlib
import importlib
import inspect
import pkgutil
import re
from collections.abc import Callable, Iterator, Sequence
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from support.builds import pure_only

from pubproof.main import main
from pubproof.model import flows, normative_index
from pubproof.model.editions import Edition
from pubproof.model.rules import RULES
from pubproof.model.titles import Source, Title, title
from pubproof.pipeline import report

from conftest import ROOT

SAMPLE = ROOT / "samples" / "mqtt-sample.pcapng"
_ID = re.compile(r"MQTT-\d+(?:\.\d+)+-\d+|PP(?:31|311)?-[A-Za-z0-9.-]+")
#: modules that put rule ids into the violations table besides the codec (whose ids are
#: the registry's): every literal id in their source is one a report can show
_CITING = (
    "pubproof.judge.link",  # the link judge (its ids are the flow rules', as objects)
    "pubproof.judge.close",  # the close judge
    "pubproof.model.flows",  # the tables the link judge is compiled from
)
# The ids the tests name are constants here, not strings inside the test functions: the
# docs' traceability counts a test function whose strings name a rule id as verifying that
# rule, and these tests verify the report's titles, not the rules.
#: ids cited by a judge that the registry and the index do not hold (the report says so):
#: none, since the flow rules are registered
GAPS: set[str] = set()
#: cited by the flow tables and the judges (the ids the report showed without a title)
FLOW_IDS = {"MQTT-4.3.2-1", "MQTT-4.3.3-1", "MQTT-2.3.1-2", "MQTT-3.3.4-1", "MQTT-4.4.0-1"}
#: cited by the judges only, as literals in their code
JUDGE_ONLY = {"MQTT-3.3.1-3", "MQTT-2.3.1-4", "MQTT-3.2.2-2", "MQTT-3.1.2-4"}
#: the project's own ids (the framer's and the describer's wire rules)
PROJECT_IDS = {"PP-scope-packet-type", "PP31-2.1-reserved-type"}
QOS3, QOS3_V31 = "MQTT-3.3.1-4", "PP31-2.1-qos-reserved"  # one registry rule, two editions
QOS1_SENDER, QOS2_SENDER = "MQTT-4.3.2-1", "MQTT-4.3.3-1"
CLEAN_SESSION = "MQTT-3.1.2-6"  # neither in the registry nor in the index: the flow tables
SESSION_PRESENT = "MQTT-3.2.2-2"
RESUMED_SESSION, CLIENT_IDENTIFIERS = "MQTT-3.1.2-4", "MQTT-2.3.1-2"
UNKNOWN = "MQTT-9.9.9-9"


def _literal_ids(module: str) -> set[str]:
    tree = ast.parse(inspect.getsource(importlib.import_module(module)))
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and _ID.fullmatch(node.value)
    }


def _pipeline_modules() -> Iterator[str]:
    import pubproof.pipeline as pipeline

    for info in pkgutil.iter_modules(pipeline.__path__):
        yield f"pubproof.pipeline.{info.name}"


def citable_ids() -> set[str]:
    """Every rule id the codec, the wire rules, the control-packet describer and the flow
    judges can put in a violation row."""
    ids: set[str] = set()
    for edition in Edition:
        ids.update(RULES.ids(edition))  # the codec's errors and the framer's wire rules
    for rule in RULES.values():
        ids.update(rule.also)
    steps = [
        *flows.SENDER.values(),
        *flows.RECEIVER_COMMON.values(),
        *(step for table in flows.RECEIVER_METHOD.values() for step in table.values()),
    ]
    undefined = [*flows.UNDEFINED_SENDER.values(), *flows.UNDEFINED_RECEIVER.values()]
    for cited in (*(step.rules for step in steps), *(u.rules for u in undefined)):
        ids.update(cited)
    for module in (*_pipeline_modules(), *_CITING):
        ids.update(_literal_ids(module))
    for flow_rule in RULES.flows():  # what the link and close judges cite, as objects
        ids.update(flow_rule.ids.values())
    return ids


class _Tables(HTMLParser):
    """Each ``<table>`` of a page as rows of (text, attributes) cells."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[tuple[str, dict[str, str | None]]]]] = []
        self._cell: list[str] | None = None
        self._attrs: dict[str, str | None] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell, self._attrs = [], dict(attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append(("".join(self._cell), self._attrs))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def rule_titles(page: str) -> dict[str, tuple[str, str | None]]:
    """The findings-per-rule table of a page: rule id -> (title, the title cell's tooltip)."""
    parser = _Tables()
    parser.feed(page)
    for rows in parser.tables:
        head = [text for text, _ in rows[0]]
        if head == ["rule", "kind", "count", "title"]:
            return {row[0][0]: (row[3][0], row[3][1].get("title")) for row in rows[1:]}
    raise AssertionError("the page has no findings-per-rule table")


def _summary_row(rule: str | None, frame: int) -> dict[str, Any]:
    return {
        "role": "client", "endpoint": "crafted-1", "rule": rule, "kind": "violation",
        "count": 1, "connections": 1, "example_capture": "c.pcapng",
        "example_connection": "tcp 1", "example_frame": frame, "example_offset": 0,
        "example_message": "m", "example_evidence": "[]",
    }  # fmt: skip


def _page(ids: Sequence[str | None]) -> str:
    summary = [_summary_row(rule, frame) for frame, rule in enumerate(ids)]
    reconciliation = {"captures": 1, "frames_in": 0, "connections": 0, "packets": 0, "ok": True}
    return report.render(summary, [], reconciliation)


def untitled(ids: set[str]) -> set[str]:
    """The ids whose title cell in a page listing them all is empty, or says that no
    registry holds them."""
    shown = rule_titles(_page(sorted(ids)))
    assert set(shown) == ids
    return {rule for rule, (text, _) in shown.items() if not text.strip()} | {
        rule for rule, (text, _) in shown.items() if text == report.NO_STATEMENT
    }


@pure_only
def test_the_ids_a_report_can_show_include_the_flow_rules() -> None:
    assert citable_ids() >= FLOW_IDS | JUDGE_ONLY | PROJECT_IDS


@pure_only
def test_every_id_a_report_can_show_has_a_title() -> None:
    ids = citable_ids()
    assert untitled(ids) == GAPS
    shown = rule_titles(_page(sorted(ids)))
    for rule in ids - GAPS:
        text, tooltip = shown[rule]
        assert text and tooltip and tooltip.startswith("from the "), rule
    text, tooltip = shown[SESSION_PRESENT]
    assert text == RULES.by_id(SESSION_PRESENT).title and tooltip == "from the rule registry"


def test_a_control_packet_without_a_rule_id_is_named_so() -> None:
    text, _ = rule_titles(_page([None]))["-"]
    assert "control packet" in text


def _wire_rules_only(rule_id: str) -> Title | None:
    """Titles from the wire rules alone (the registry's mapping), as before the flow
    rules were registered."""
    found = next((r for r in RULES.values() if rule_id in r.ids.values()), None)
    return None if found is None else Title(text=found.title, source=Source.REGISTRY)


@pure_only
@pytest.mark.parametrize(
    "mutant", [_wire_rules_only, lambda rule_id: None], ids=["wire-rules-only", "no-titles"]
)
def test_a_report_with_titles_from_the_registry_only_is_caught(
    monkeypatch: pytest.MonkeyPatch, mutant: Callable[[str], Title | None]
) -> None:
    monkeypatch.setattr(report, "title", mutant)
    missing = untitled(citable_ids())
    assert missing >= FLOW_IDS


def test_titles_come_from_the_first_registry_that_holds_the_id() -> None:
    # the rule registry first: a codec error's id
    assert title(QOS3) == Title(text=RULES.by_id(QOS3).title, source=Source.REGISTRY)
    assert title(QOS3_V31) == title(QOS3)
    # the flow rules are in the registry too, the index's paraphrase notwithstanding
    for flow_id in (QOS1_SENDER, CLEAN_SESSION, SESSION_PRESENT):
        assert title(flow_id) == Title(text=RULES.by_id(flow_id).title, source=Source.REGISTRY)
    # then the normative index: an id a rule only cites in "also"
    also = next(
        i for r in RULES.values() for i in r.also
        if i in normative_index.table_a() and _unregistered(i)
    )  # fmt: skip
    entry = normative_index.table_a()[also]
    assert title(also) == Title(text=entry.paraphrase, source=Source.INDEX)
    assert title(UNKNOWN) is None


def _unregistered(rule_id: str) -> bool:
    try:
        RULES.by_id(rule_id)
    except KeyError:
        return True
    return False


def test_the_sample_capture_report_titles_every_rule(tmp_path: Path) -> None:
    out = tmp_path / "check"
    assert main(["check", str(SAMPLE), "--out", str(out), "--engine", "python", "--quiet"]) == 0
    shown = rule_titles((out / "report.html").read_text(encoding="utf-8"))
    assert QOS2_SENDER in shown  # a flow judge's finding
    assert all(text and text != report.NO_STATEMENT for text, _ in shown.values()), shown


# -- the packaged normative index ---------------------------------------------------------


def _packaged() -> str:
    files = resources.files("pubproof.model.texts")
    return (files / normative_index.FILE).read_text(encoding="utf-8")


def test_the_packaged_index_is_the_shared_index_unchanged() -> None:
    first, rest = _packaged().split("\n", 1)
    recorded = re.search(r"sha256 of the original: ([0-9a-f]{64})", first)
    assert recorded is not None
    assert hashlib.sha256(rest.encode("utf-8")).hexdigest() == recorded.group(1)
    docs_copy = (ROOT / "docs" / "data" / "normative-index.md").read_text(encoding="utf-8")
    assert docs_copy.split("\n", 1)[1] == rest
    shared = ROOT.parent / "shared" / "spec" / "normative-index.md"
    if shared.exists():
        assert shared.read_text(encoding="utf-8") == rest


def test_table_a_is_read_whole() -> None:
    table = normative_index.table_a()
    # "All 57 ids below" of Table A, and the 4 related 3.1.1 ids listed after it
    assert len(table) == 61
    assert table[RESUMED_SESSION].section == "3.1.2.4"
    assert table[CLIENT_IDENTIFIERS].binds == "Client"
    assert all(_ID.fullmatch(rule_id) and e.paraphrase for rule_id, e in table.items())
    assert table[QOS1_SENDER].strength == "MUST"


def test_a_malformed_index_is_refused() -> None:
    text = _packaged()
    row = next(line for line in text.splitlines() if line.startswith(f"| {QOS1_SENDER} |"))
    twice = text.replace(row, f"{row}\n{row}", 1)
    clash = re.escape(f"{QOS1_SENDER} has two rows")
    with pytest.raises(normative_index.MalformedIndex, match=clash):
        normative_index.parse(twice)
    with pytest.raises(normative_index.MalformedIndex, match="Table A"):
        normative_index.parse(text.replace("## Table A", "## Table Z"))
    # Table B (MQTT 5.0) repeats 3.1.1 ids with other meanings: read past it, they clash
    past_b = text.replace("## Table B", "## Table Y").replace("## Notes", "## Table B")
    with pytest.raises(normative_index.MalformedIndex, match="two rows"):
        normative_index.parse(past_b)
