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
    keys = {"id", "op", "edition", "reading", "hex", "verdict", "rule", "offset", "packets"}
    for case in cases:
        # 5.0 cases also say the receiver's limits and the DISCONNECT Reason Code
        expected = keys | {"limits", "reason_code"} if case["edition"] == "5.0" else keys
        assert set(case) == expected
        assert case["verdict"] in {"ok", "malformed", "violation", "incomplete"}
        assert case["edition"] in {"3.1", "3.1.1", "5.0"}
        if case["edition"] == "5.0" and case["op"] == "decode":
            failed = case["verdict"] in {"malformed", "violation"}
            assert (case["reason_code"] is not None) == failed, case["id"]


def test_every_rule_of_every_edition_on_both_sides(cases: list[dict[str, object]]) -> None:
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


def test_every_edition_is_present(cases: list[dict[str, object]]) -> None:
    assert {c["edition"] for c in cases} == {e.value for e in Edition}


def test_every_5_0_reason_code_of_every_acknowledgement(cases: list[dict[str, object]]) -> None:
    """Both sides of [MQTT-3.4.2-1] and its siblings: every valid code decodes, and each
    acknowledgement's short forms and full form are there."""
    from pubproof.model import wire_rules as R

    seen: dict[str, set[int]] = defaultdict(set)
    lengths: dict[str, set[int]] = defaultdict(set)
    for case in cases:
        if case["edition"] != "5.0" or case["op"] != "decode" or case["verdict"] != "ok":
            continue
        data = bytes.fromhex(str(case["hex"]))
        for packet in case["packets"]:  # type: ignore[attr-defined]
            if packet["type"] != "PUBLISH":
                seen[packet["type"]].add(packet["reason_code"])
        if len(data) >= 2 and data[0] >> 4 in (4, 5, 6, 7) and len(data) == 2 + data[1]:
            lengths[str(case["packets"][0]["type"])].add(min(data[1], 4))  # type: ignore[index]
    for name, codes in R.ACK_REASON_CODES.items():
        assert set(codes) <= seen[name], name
        assert lengths[name] >= {2, 3, 4}, name


def test_every_5_0_property_is_decoded(cases: list[dict[str, object]]) -> None:
    from pubproof.model.trace import ACK_PROPERTY_KEYS, PUBLISH_PROPERTY_KEYS

    keys: set[str] = set()
    for case in cases:
        if case["edition"] == "5.0" and case["verdict"] == "ok":
            for packet in case["packets"]:  # type: ignore[attr-defined]
                keys |= set(packet.get("properties", {}))
    assert set(PUBLISH_PROPERTY_KEYS) | set(ACK_PROPERTY_KEYS) <= keys
