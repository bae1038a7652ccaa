"""A short run of benchmarks/fuzz_distribution.py: the distribution core against the model
on seeded random programs of events (and arguments of the wrong types), all three editions.

The long campaign (``python benchmarks/fuzz_distribution.py --runs 1000000``, with atheris)
is not a test; this runs the same ``judge`` on a few hundred inputs, checks that they reach
every edition and every kind of event, and shows that the comparison can fail: a foreign
exception and a planted difference are each reported.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from pubproof.model.editions import Edition
from pubproof.reference.distribution import DistributionCore

from conftest import load_benchmark

fuzz = load_benchmark("fuzz_distribution")
RUNS = 1500


def test_the_core_raises_only_its_own_errors_and_agrees_with_the_model() -> None:
    rng = random.Random(0)
    editions: Counter[str] = Counter()
    findings = []
    pool = fuzz.seeds()
    for count, data in enumerate(fuzz.random_inputs(rng, pool)):
        if count == RUNS:
            break
        editions[fuzz.setting(data[0])[0].value] += 1
        finding = fuzz.judge(data)
        if finding is not None:
            findings.append((data.hex(), finding))
    assert findings == []
    assert all(editions[e.value] > RUNS // 10 for e in Edition), editions


def test_the_seeds_are_clean_in_every_setting() -> None:
    assert {data[0] for data in fuzz.seeds()} == set(range(16))
    assert [fuzz.judge(data) for data in fuzz.seeds()] == [None] * len(fuzz.seeds())


def test_a_foreign_exception_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise KeyError("planted")

    monkeypatch.setattr(DistributionCore, "advance", broken)
    finding = fuzz.judge(bytes((2, 7, 0, 0)))  # 3.1.1: one clock move
    assert finding is not None and finding.kind == "foreign" and "KeyError" in finding.detail


def test_a_planted_disagreement_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    honest = DistributionCore.connect

    def forgetful(self: Any, client_id: str, **kwargs: Any) -> Any:
        outcome = honest(self, client_id, **kwargs)
        self.sessions[client_id].persistent = not self.sessions[client_id].persistent
        return outcome

    monkeypatch.setattr(DistributionCore, "connect", forgetful)
    finding = fuzz.judge(bytes((2, 0, 0, 0)))  # 3.1.1: c1 connects
    assert finding is not None and finding.kind == "disagreement"


def test_arguments_of_the_wrong_type_must_not_change_the_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    honest = DistributionCore.advance

    def lenient(self: Any, milliseconds: Any) -> Any:
        if type(milliseconds) is not int:
            self.now += 1
        return honest(self, milliseconds)

    monkeypatch.setattr(DistributionCore, "advance", lenient)
    found = [
        fuzz.judge(bytes((2, op, 0, bad, pick)))
        for op in (8, 9)
        for bad in range(6)
        for pick in range(30)
    ]
    assert any(f is not None and "wrong type" in f.detail for f in found)
