"""The theorems and ``pubproof prove``: statuses, mutants, counterexamples, the JSON contract.

Every registered theorem must reach its expected status and kill every one of its mutants;
the command line must print exactly the documented JSON and exit 1 when a theorem does not
come out as expected.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from functools import cache

import pytest

from pubproof import prove_command
from pubproof.main import main
from pubproof.model import wire
from pubproof.model.editions import Edition
from pubproof.model.rules import RULES
from pubproof.model.trace import publish
from pubproof.proofs.catalog import THEOREM_MODULES, UnknownTheorem, load
from pubproof.proofs.registry import (
    THEOREMS,
    Broken,
    Result,
    Theorem,
    TheoremRegistry,
    theorem,
    timed,
)

THEOREM_IDS = [t.id for t in load()]
# The protocol theorems have their own tests (test_protocol.py); here the wire format's.
WIRE_IDS = [i for i in THEOREM_IDS if i.startswith("wire.")]
MUTANTS = [(i, m.name) for i in WIRE_IDS for m in THEOREMS[i].mutants]
STATUSES = {"proved", "refuted", "unknown", "failed"}


@cache
def outcome(theorem_id: str) -> Result:
    return THEOREMS[theorem_id].check()


@cache
def mutant_outcome(theorem_id: str, name: str) -> Result:
    (mutant,) = [m for m in THEOREMS[theorem_id].mutants if m.name == name]
    return mutant.check()


# --- the registry ------------------------------------------------------------------------


def test_the_wire_theorems_are_registered() -> None:
    assert THEOREM_MODULES == (
        "pubproof.proofs.wire",
        "pubproof.proofs.protocol",
        "pubproof.proofs.methods",
        "pubproof.proofs.protocol50",
        "pubproof.proofs.distribution",
    )
    assert THEOREM_IDS[: len(WIRE_IDS)] == WIRE_IDS, "the wire theorems come first"
    expected = {
        "wire.rl-inverse", "wire.rl-minimal", "wire.rl-max", "wire.rl-prefix-free",
        "wire.first-bytes", "wire.packet-id-presence", "wire.publish-remaining-length",
        "wire.editions-agree",
    }  # fmt: skip
    assert expected <= set(THEOREM_IDS)
    readings = {i for i in WIRE_IDS if i.startswith("wire.reading-irrelevant.")}
    assert len(readings) == 9
    v5 = {i for i in WIRE_IDS if i.startswith("wire.v5.")}
    assert len(WIRE_IDS) == 8 + len(readings) + len(v5)


@pytest.mark.parametrize("theorem_id", WIRE_IDS)
def test_theorem_metadata(theorem_id: str) -> None:
    entry = THEOREMS[theorem_id]
    assert entry.statement and entry.method and entry.editions
    assert entry.expected in ("proved", "refuted")
    assert entry.rules, "a theorem rests on normative rules"
    for rule_id in entry.rules:
        # every id is a real rule's id in one of the editions the theorem covers (an id
        # can name different rules in 3.1.1 and 5.0, so the look-up is per edition)
        found = []
        for edition in entry.editions:
            try:
                found.append(RULES.by_id(rule_id, edition))
            except KeyError:
                continue
        assert found, rule_id
    assert len(entry.mutants) >= 1
    assert len({m.name for m in entry.mutants}) == len(entry.mutants)


def test_registry_refuses_duplicates_and_theorems_without_mutants() -> None:
    registry = TheoremRegistry()
    plain = Theorem(
        id="t", statement="s", rules=(), editions=(Edition.V311,), readings=(), method="explicit",
        expected="proved", check=lambda: Result(status="proved"),
    )  # fmt: skip
    with pytest.raises(ValueError, match="no mutant"):
        registry.add(plain)
    with_mutant = Theorem(
        id="t", statement="s", rules=(), editions=(Edition.V311,), readings=(),
        method="explicit", expected="proved", check=lambda: Result(status="proved"),
        mutants=THEOREMS["wire.rl-max"].mutants,
    )  # fmt: skip
    registry.add(with_mutant)
    with pytest.raises(ValueError, match="duplicate"):
        registry.add(with_mutant)


def test_decorator_binds_model_and_mutants_and_times_checks() -> None:
    seen: list[int] = []

    def check(variant: int) -> Result:
        seen.append(variant)
        return Result(status="proved" if variant == 0 else "refuted", counterexample=[])

    entry = theorem(
        id="test.decorator-binds", statement="0 is 0", rules=[], editions=[Edition.V311],
        method="explicit", model=0, mutants=[Broken("one", "1 is not 0", 1)],
    )(check)  # fmt: skip
    try:
        result = entry.check()
        assert result.status == "proved" and result.seconds >= 0
        assert entry.kills(entry.mutants[0].check())
        assert seen == [0, 1]
    finally:
        THEOREMS._theorems.pop("test.decorator-binds")


def test_a_crashing_check_is_failed_not_raised() -> None:
    def crash() -> Result:
        raise RuntimeError("boom")

    result = timed(crash)()
    assert result.status == "failed" and "boom" in result.details


def test_kills_needs_a_counterexample_when_the_theorem_should_hold() -> None:
    entry = THEOREMS["wire.rl-max"]
    assert not entry.kills(Result(status="proved"))
    assert not entry.kills(Result(status="refuted"))  # no evidence shown
    assert entry.kills(Result(status="refuted", counterexample=[publish(topic="a")]))
    refuted = THEOREMS["wire.editions-agree"]
    assert refuted.kills(Result(status="unknown")) and not refuted.kills(Result(status="refuted"))


def test_unknown_theorem_ids() -> None:
    with pytest.raises(UnknownTheorem, match=r"no\.such"):
        load(["no.such"])


# --- every theorem, every mutant ----------------------------------------------------------


@pytest.mark.parametrize("theorem_id", WIRE_IDS)
def test_theorem_reaches_its_expected_status(theorem_id: str) -> None:
    entry, result = THEOREMS[theorem_id], outcome(theorem_id)
    assert result.status == entry.expected, result.details
    assert result.details
    if entry.expected == "proved":
        assert result.counterexample is None
        assert "agrees with the model" in result.details or theorem_id == "wire.first-bytes"
    else:
        assert result.counterexample, "a refutation shows its witness"
        assert result.details.startswith("confirmed by the model")


@pytest.mark.parametrize(("theorem_id", "name"), MUTANTS)
def test_mutant_is_killed(theorem_id: str, name: str) -> None:
    entry, result = THEOREMS[theorem_id], mutant_outcome(theorem_id, name)
    assert result.status != entry.expected, result.details
    assert entry.kills(result)
    assert result.counterexample, "the kill comes with a counterexample"
    for packet in result.counterexample:
        assert packet["type"] in ("PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP")


# --- the counterexamples say what the statements say ---------------------------------------


def test_editions_witness_is_dup_on_qos0() -> None:
    result = outcome("wire.editions-agree")
    dup0 = publish(topic="a", dup=True)
    assert result.counterexample == [dup0]
    assert wire.encode(dup0, Edition.V31).hex() == "3803000161"
    with pytest.raises(wire.EncodeError) as refused:
        wire.encode(dup0, Edition.V311)
    assert refused.value.rule == "MQTT-3.3.1-2"
    for shown in ("42020001", "60020001", "30020000", "3003000100", "(32774 bytes)"):
        assert shown in result.details
    assert re.search(r"30030001(23|2b): 3\.1 -> ok, 3\.1\.1 -> MQTT-3\.3\.2-2", result.details)


def test_rl_encoding_witness_is_the_padded_puback() -> None:
    result = outcome("wire.reading-irrelevant.rl-encoding")
    assert result.counterexample == [{"type": "PUBACK", "packet_id": 1}]
    assert "4082000001: 3.1.1 -> ok, 3.1.1 rl-encoding=strict -> PP311-2.2.3-rl-minimal" in (
        result.details
    )
    strict = wire.decode(bytes.fromhex("4082000001"), Edition.V311, {"rl-encoding": "strict"})
    assert strict.failure is not None and strict.failure.rule == "PP311-2.2.3-rl-minimal"
    assert wire.decode(bytes.fromhex("4082000001")).packets == result.counterexample


def test_first_byte_sets_are_reported_with_their_sizes() -> None:
    details = outcome("wire.first-bytes").details
    assert "3.1.1: PUBLISH 10 (30 31 32 33 34 35 3a 3b 3c 3d), PUBACK 1 (40), PUBREC 1 (50), " \
        "PUBREL 1 (62), PUBCOMP 1 (70)" in details  # fmt: skip
    assert "3.1: PUBLISH 12 (30 31 32 33 34 35 38 39 3a 3b 3c 3d), PUBACK 16 (40-4f)" in details


def test_rl_minimal_reports_the_table_found_by_z3() -> None:
    assert outcome("wire.rl-minimal").details.startswith(
        "1 byte(s): 0..127; 2 byte(s): 128..16,383; 3 byte(s): 16,384..2,097,151; "
        "4 byte(s): 2,097,152..268,435,455"
    )


@pytest.mark.parametrize(
    ("theorem_id", "name", "packet"),
    [
        ("wire.rl-max", "five-rl-bytes", {"type": "PUBACK", "packet_id": 1}),
        ("wire.first-bytes", "qos3-guard-removed", publish(topic="a", qos=3, packet_id=1)),
        ("wire.packet-id-presence", "id-for-qos1-only", publish(topic="a", qos=2, packet_id=1)),
        ("wire.packet-id-presence", "id-on-qos0-sent", publish(topic="a", qos=0, packet_id=1)),
    ],
)
def test_mutant_counterexamples_are_the_smallest(
    theorem_id: str, name: str, packet: object
) -> None:
    assert mutant_outcome(theorem_id, name).counterexample == [packet]


def test_identifier_zero_counterexample() -> None:
    (packet,) = mutant_outcome("wire.packet-id-presence", "id-zero-accepted").counterexample or []
    assert packet["packet_id"] == 0 and packet["qos"] in (1, 2) and packet["topic"] == "a"


# --- the command line ------------------------------------------------------------------------


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pubproof", "prove", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=900,
    )


def test_prove_json_contract() -> None:
    result = run("--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert set(report) == {"seconds", "theorems"}
    # the time goal is a benchmark's (benchmarks/bench_protocol.py), never a test's
    assert isinstance(report["seconds"], float) and report["seconds"] > 0
    assert [t["id"] for t in report["theorems"]] == THEOREM_IDS
    keys = {"id", "statement", "rules", "editions", "method", "expected", "status", "seconds",
            "details", "counterexample", "mutants"}  # fmt: skip
    mutant_keys = {"name", "description", "status", "killed", "details", "counterexample"}
    for entry in report["theorems"]:
        assert set(entry) == keys
        assert entry["expected"] in ("proved", "refuted")
        assert entry["status"] == entry["expected"]
        assert all(isinstance(r, str) for r in entry["rules"]) and entry["rules"]
        assert set(entry["editions"]) <= {"3.1", "3.1.1", "5.0"} and entry["editions"]
        assert isinstance(entry["seconds"], float)
        cex = entry["counterexample"]
        assert cex is None if entry["expected"] == "proved" else isinstance(cex, list) and cex
        assert entry["details"], entry["id"]
        assert entry["mutants"] and all(set(m) == mutant_keys for m in entry["mutants"])
        for mutant in entry["mutants"]:
            assert mutant["status"] in STATUSES and mutant["status"] != entry["expected"]
            assert mutant["killed"] is True and mutant["description"] and mutant["details"]
            if mutant["status"] == "refuted":  # what told the broken variant apart
                assert isinstance(mutant["counterexample"], list) and mutant["counterexample"]
    # progress goes to stderr, one line per theorem
    assert len([line for line in result.stderr.splitlines() if line.startswith("[")]) == len(
        THEOREM_IDS
    )


def test_prove_table_and_selection() -> None:
    result = run("--theorem", "wire.rl-max", "--theorem", "wire.rl-prefix-free", "--details")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["theorem", "expected", "status", "method", "seconds", "mutants",
                                "killed"]  # fmt: skip
    assert lines[1].split()[:4] == ["wire.rl-max", "proved", "proved", "z3-bv"]
    assert lines[2].split()[:4] == ["wire.rl-prefix-free", "proved", "proved", "z3-bv"]
    assert lines[3].startswith("2/2 theorems as expected; 2/2 mutants killed")
    assert "mutant five-rl-bytes: refuted, killed" in result.stdout


def test_prove_unknown_theorem_is_a_usage_error() -> None:
    result = run("--theorem", "wire.no-such-theorem")
    assert result.returncode == 2
    assert "unknown theorem id: wire.no-such-theorem" in result.stderr


def test_prove_exits_1_when_a_theorem_is_not_as_expected(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    wrong = Theorem(
        id="test.wrong", statement="1 = 2", rules=(), editions=(Edition.V311,), readings=(),
        method="explicit", expected="proved",
        check=lambda: Result(status="refuted", counterexample=[publish(topic="a")]),
        mutants=THEOREMS["wire.rl-max"].mutants,
    )  # fmt: skip
    monkeypatch.setattr(prove_command, "load", lambda ids: [wrong])
    assert main(["prove", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["theorems"][0]["status"] == "refuted"
    assert report["theorems"][0]["counterexample"] == [publish(topic="a")]
