"""The vector corpus: deterministic, complete, and passed by the reference and the model."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from pubproof.model import vectors
from pubproof.model.editions import Edition
from pubproof.model.rules import RULES, Kind
from pubproof.vector_commands import check_case, check_corpus

from conftest import ROOT

CORPUS = ROOT / "vectors" / "corpus.jsonl"


@pytest.fixture(scope="module")
def cases() -> list[dict[str, object]]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]


def test_the_committed_corpus_is_what_the_generator_makes() -> None:
    assert vectors.dumps(vectors.generate()) == CORPUS.read_text(encoding="utf-8"), (
        "regenerate with: pubproof vectors --out vectors/corpus.jsonl"
    )


def test_generation_is_deterministic() -> None:
    assert vectors.dumps(vectors.generate()) == vectors.dumps(vectors.generate())


def test_corpus_size_and_shape(cases: list[dict[str, object]]) -> None:
    assert len(cases) >= 500
    ids = [c["id"] for c in cases]
    assert len(set(ids)) == len(ids)
    for case in cases:
        assert set(case) == {
            "id",
            "op",
            "edition",
            "reading",
            "hex",
            "verdict",
            "rule",
            "offset",
            "packets",
        }
        assert case["verdict"] in {"ok", "malformed", "violation", "incomplete"}
        assert case["edition"] in {"3.1", "3.1.1"}


def test_every_rule_of_both_editions_on_both_sides(cases: list[dict[str, object]]) -> None:
    sides: dict[tuple[str, str], set[str]] = defaultdict(set)
    for case in cases:
        if case["rule"] is not None:
            side = "accept" if case["verdict"] == "ok" else "reject"
            sides[(str(case["edition"]), str(case["rule"]))].add(side)
    missing = []
    for rule in RULES.values():
        for edition, rule_id in rule.ids.items():
            need = {"accept"} if rule.kind is Kind.ACCEPT else {"accept", "reject"}
            if rule.key == "type.out-of-scope":
                need = {"reject"}
            have = sides.get((edition.value, rule_id), set())
            if not need <= have:
                missing.append(f"{edition.value} {rule_id}: has {sorted(have)}")
    assert not missing, "\n".join(missing)


@pytest.mark.parametrize("engine", ["reference", "model"])
def test_engine_passes_the_corpus(engine: str) -> None:
    with CORPUS.open(encoding="utf-8") as lines:
        counts, failures = check_corpus(lines, engine)
    assert failures == []
    assert counts["pass"] >= 500


def test_a_case_that_lies_is_caught(cases: list[dict[str, object]]) -> None:
    """The corpus check is not a formality: a corrupted expectation fails it."""
    case = next(c for c in cases if c["verdict"] == "malformed")
    assert check_case(dict(case)) is None
    assert check_case(dict(case, offset=999)) is not None
    assert check_case(dict(case, rule="MQTT-0.0.0-0")) is not None
    ok = next(c for c in cases if c["verdict"] == "ok" and c["op"] == "decode" and c["packets"])
    assert check_case(dict(ok, packets=[])) is not None


def test_both_editions_are_present(cases: list[dict[str, object]]) -> None:
    assert {c["edition"] for c in cases} == {e.value for e in Edition}
