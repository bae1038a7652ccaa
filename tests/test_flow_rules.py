"""The flow rules are registered: every id the flow tables and the judges cite is a rule of
the registry, of kind FLOW, found by id like a wire rule, and none is a wire rule."""

from __future__ import annotations

import ast
from pathlib import Path
from types import ModuleType

import pytest

from pubproof.judge import close, ends, link
from pubproof.judge.findings import Finding, Source
from pubproof.model import flow_rules, flows
from pubproof.model.editions import Edition
from pubproof.model.rules import RULES, Kind, Rule, RuleRegistry, Strength, rule

V311 = Edition.V311
ROOT = Path(__file__).resolve().parent.parent


def _table_ids() -> set[str]:
    steps = [
        *flows.SENDER.values(),
        *flows.RECEIVER_COMMON.values(),
        *(step for table in flows.RECEIVER_METHOD.values() for step in table.values()),
    ]
    undefined = [*flows.UNDEFINED_SENDER.values(), *flows.UNDEFINED_RECEIVER.values()]
    return {r for step in steps for r in step.rules} | {r for u in undefined for r in u.rules}


def _source(module: ModuleType) -> str:
    """The module's Python source, read from the checkout (``pubproof.judge.link`` is
    ``judge/link.py``): inspect.getsource cannot read a compiled module, and the strict
    editable install keeps no source beside a compiled one."""
    parts = module.__name__.split(".")[1:]
    return ROOT.joinpath(*parts[:-1], parts[-1] + ".py").read_text("utf-8")


def _judge_ids() -> set[str]:
    ids: set[str] = set()
    for module in (link, close, ends):
        for node in ast.walk(ast.parse(_source(module))):
            text = node.value if isinstance(node, ast.Constant) else None
            if isinstance(text, str) and text.startswith("MQTT-"):
                ids.add(text)
    ids |= {*link.SESSION_LOST, link.RESENT_DUP, link.FORWARD_DUP, link.RESEND}
    ids |= {link.ID_IN_USE_SERVER, link.ID_IN_USE_CLIENT, link.QOS2_SENDER, link.QOS2_RECEIVER}
    return ids | {close.CLOSE_ON_VIOLATION}


def test_every_id_the_tables_and_the_judges_cite_is_a_flow_rule() -> None:
    cited = _table_ids() | _judge_ids()
    assert len(cited) >= 15
    for rule_id in cited:
        found = RULES.by_id(rule_id, V311)
        assert found.kind is Kind.FLOW, rule_id
        assert found in RULES.flows()
        assert found.quotes and found.quotes[0].text and found.title


def test_flow_rules_are_found_by_id_but_are_not_wire_rules() -> None:
    for found in RULES.flows():
        assert found.key not in RULES  # the mapping is the wire rules
        assert RULES.flow(found.key) is found
        edition = V311 if V311 in found.ids else Edition.V50  # the 5.0 flow rules
        assert RULES.by_id(found.id_for(edition), edition) is found
    assert all(r.kind is not Kind.FLOW for r in RULES.values())
    assert flow_rules.CLOSE_ON_VIOLATION.id_for(V311) == close.CLOSE_ON_VIOLATION


def test_a_flow_rule_cannot_take_a_wire_rules_id() -> None:
    wire = next(iter(RULES.values()))
    registry = RuleRegistry()
    registry.add(wire)
    clash = Rule(
        key="flow.clash", title="t", ids={V311: wire.id_for(V311)}, also=(),
        strength=Strength.MUST, binds=wire.binds, kind=Kind.FLOW, quotes=(),
    )  # fmt: skip
    with pytest.raises(ValueError, match="used by"):
        registry.add(clash)
    with pytest.raises(ValueError, match="duplicate"):
        rule(wire.key, "again", ids={}, strength=Strength.MUST, binds=wire.binds,
             kind=Kind.FLOW, quotes=())  # fmt: skip


def test_a_finding_cites_rule_objects() -> None:
    found = Finding(
        verdict="violation", rules=(link.QOS2_SENDER, "incomplete"), message="m",
        source=Source.LINK,
    )  # fmt: skip
    assert found.cited() == (flow_rules.QOS2_SENDER,)
    with pytest.raises(ValueError, match="unknown judge"):
        Finding(verdict="violation", rules=(), message="m", source="guesswork")
