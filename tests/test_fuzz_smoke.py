"""A short run of benchmarks/fuzz_codec.py's comparison: reference against model, all
three editions, chunked at the inputs' own cut points.

The long campaign (``python benchmarks/fuzz_codec.py --runs 10000000``, coverage-guided
with atheris) is not a test; this drives the same ``Comparator.judge`` with a few thousand
seeded random inputs and mutations of the corpus vectors, and shows that the comparison
can fail: each planted difference (packet, rule, offset, kind, Reason Code, a foreign
exception on either side) is reported.
"""

from __future__ import annotations

import random
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pubproof.model.editions import Edition, Limits

from conftest import load_benchmark

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "fuzz_codec.py"


fuzz = load_benchmark("fuzz_codec")
RUNS = 3000


@pytest.fixture(scope="module")
def comparator() -> Any:
    return fuzz.Comparator()


@pytest.fixture(scope="module")
def pool(comparator: Any) -> list[bytes]:
    return list(fuzz.seeds(comparator))


def test_reference_and_model_agree_on_random_and_mutated_inputs(
    comparator: Any, pool: list[bytes]
) -> None:
    rng = random.Random(0)
    editions: Counter[str] = Counter()
    verdicts: Counter[tuple[str, str]] = Counter()
    findings = []
    for count, data in enumerate(fuzz.random_inputs(rng, pool)):
        if count == RUNS:
            break
        setting, stream = comparator.setting(data)
        editions[setting.edition.value] += 1
        finding = comparator.judge(data)
        if finding is not None:
            findings.append((data.hex(), finding))
            continue
        outcome = comparator.model(stream, setting)
        verdicts[(setting.edition.value, "ok" if outcome.error is None else outcome.error[2])] += 1
    assert findings == []
    # every edition is reached, with accepted streams and both kinds of fault
    for edition in ("3.1", "3.1.1", "5.0"):
        assert editions[edition] > RUNS // 10, editions
        for verdict in ("ok", "malformed", "incomplete"):
            assert verdicts[(edition, verdict)] > 0, (edition, verdict, verdicts)
    assert verdicts[("5.0", "violation")] > 0, verdicts


def test_the_header_chooses_the_setting(comparator: Any) -> None:
    readings = {"pfi-mei-once": "accept", "rl-encoding": "lenient"}
    limits = {"topic_alias_maximum": 10, "maximum_packet_size": 300}
    setting, stream = comparator.setting(
        comparator.header(Edition.V50, readings, limits, cut=3) + b"\x30"
    )
    assert stream == b"\x30"
    assert setting.edition is Edition.V50
    assert setting.readings["pfi-mei-once"] == "accept"
    assert setting.readings["rl-encoding"] == "lenient"
    assert setting.readings["payload-utf8"] == "reject"  # the default
    assert setting.limits == Limits(topic_alias_maximum=10, maximum_packet_size=300)
    assert setting.chunks[:2] == (slice(0, 3), slice(3, 3))
    assert not setting.next_packet
    # no header at all: 3.1 with its defaults, one chunk; bit 7 of byte 7: byte by byte
    empty, _ = comparator.setting(b"")
    assert empty.edition is Edition.V31 and empty.limits is None
    assert empty.readings["qos3"] == "reject"
    byte_by_byte, _ = comparator.setting(bytes((0x81, 0, 0, 0, 0, 0, 0, 0x80)))
    assert byte_by_byte.edition is Edition.V311 and byte_by_byte.chunks is None
    assert byte_by_byte.next_packet


# Planted differences: each must be reported. The inputs are corpus vectors whose
# verdict has what the mutant changes (an error with a Reason Code, a 5.0 packet).


def _input(comparator: Any, pool: list[bytes], want: str) -> bytes:
    for data in pool:
        setting, stream = comparator.setting(data)
        outcome = comparator.model(stream, setting)
        v50 = setting.edition is Edition.V50
        if want == "5.0 error" and v50 and outcome.error and outcome.error[3] is not None:
            return data
        if want == "5.0 packet" and v50 and outcome.packets:
            return data
    raise AssertionError(f"no seed with a {want}")


@pytest.mark.parametrize(
    ("want", "mutant"),
    [
        ("5.0 error", lambda o: replace(o, error=(o.error[0] + "x", *o.error[1:]))),
        ("5.0 error", lambda o: replace(o, error=(o.error[0], o.error[1] + 1, *o.error[2:]))),
        ("5.0 error", lambda o: replace(o, error=(*o.error[:2], "other", o.error[3]))),
        ("5.0 error", lambda o: replace(o, error=(*o.error[:3], o.error[3] ^ 1))),
        ("5.0 packet", lambda o: replace(o, packets=[{**o.packets[0], "properties": {"x": 1}}])),
        ("5.0 packet", lambda o: replace(o, packets=o.packets[1:])),
    ],
    ids=["rule", "offset", "kind", "reason-code", "properties", "packet-count"],
)
def test_a_planted_disagreement_is_reported(
    comparator: Any, pool: list[bytes], monkeypatch: pytest.MonkeyPatch, want: str, mutant: Any
) -> None:
    data = _input(comparator, pool, want)
    assert comparator.judge(data) is None
    honest = comparator.model
    monkeypatch.setattr(
        comparator, "model", lambda stream, setting: mutant(honest(stream, setting))
    )
    finding = comparator.judge(data)
    assert finding is not None and finding.kind == "disagreement", finding


@pytest.mark.parametrize("side", ["reference", "model"])
def test_a_foreign_exception_is_reported(
    comparator: Any, pool: list[bytes], monkeypatch: pytest.MonkeyPatch, side: str
) -> None:
    def broken(stream: bytes, setting: Any) -> Any:
        raise KeyError("planted")

    monkeypatch.setattr(comparator, side, broken)
    finding = comparator.judge(pool[0])
    assert finding is not None and finding.kind == "foreign-exception"
    assert finding.detail.startswith(side)


def test_the_random_engine_saves_findings_and_fails(
    comparator: Any, pool: list[bytes], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    honest = comparator.model

    def off_by_one(stream: bytes, setting: Any) -> Any:
        outcome = honest(stream, setting)
        if outcome.error is None:
            return outcome
        return replace(outcome, error=(outcome.error[0], -1, *outcome.error[2:]))

    monkeypatch.setattr(comparator, "model", off_by_one)
    recorder = fuzz.Recorder(tmp_path, progress=0)
    fuzz.run_random(comparator, 200, 0, pool, recorder)
    assert recorder.stats.runs == 200
    assert recorder.stats.disagreements > 0
    saved = sorted(tmp_path.glob("disagreement-*.bin"))
    assert len(saved) > 0
    # a saved input is the input that failed: judged again by the mutant, it fails again
    assert comparator.judge(saved[0].read_bytes()) is not None


def test_the_atheris_engine_runs_when_installed(tmp_path: Path) -> None:
    pytest.importorskip("atheris")
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--runs",
            "3000",
            "--progress",
            "0",
            "--corpus",
            str(tmp_path / "corpus"),
            "--findings",
            str(tmp_path / "findings"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    final = [line for line in done.stdout.splitlines() if line.startswith("FINAL")]
    assert final and "disagreements 0" in final[0] and "foreign exceptions 0" in final[0], final
    assert "runs 3,000" in final[0]
    assert not list((tmp_path / "findings").glob("*.bin"))
