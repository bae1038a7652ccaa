"""The published conformance matrix (docs/matrix/results.json) is reproduced: the fast
implementations (brokers and clients that start in seconds, every codec) are probed again
and every stable verdict must be what the committed results say."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from brokers import BROKERS
from support.docs_site import EXT

from pubproof.probe.clients.shipped import SHIPPED

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "matrix" / "results.json"
VERDICTS = {"pass", "tolerated", "deviation", "violation", "no-answer", "error", "not-applicable"}


def _results() -> dict[str, object]:
    data: dict[str, object] = json.loads(RESULTS.read_text(encoding="utf-8"))
    return data


def test_the_committed_matrix_is_complete_and_each_verdict_has_its_evidence() -> None:
    data = _results()
    kinds = {i["implementation"]: i["kind"] for i in data["implementations"]}  # type: ignore[attr-defined]
    assert set(BROKERS) <= {n for n, k in kinds.items() if k == "broker"}
    clients = set(SHIPPED)  # every shipped driver has its place in the matrix
    assert clients <= {n for n, k in kinds.items() if k == "client"}
    rows = data["results"]
    assert isinstance(rows, list)
    for client in clients:
        mine = [r for r in rows if r["implementation"] == client and r["edition"] == "3.1.1"]
        assert len(mine) >= 30, client
    for row in rows:
        assert row["verdict"] in VERDICTS, row["check"]
        # a row names the implementation's own duties it judged, or (a check whose rules
        # all bind the other end, judged under a reading) what pubproof sent on purpose
        assert (row["rules"] and row["rule_verdicts"]) or row["provoked"], row["check"]
        path, anchor = row["evidence"].split("#")
        report = json.loads((RESULTS.parent / path).read_text(encoding="utf-8"))
        check = next(c for c in report["checks"] if c["id"] == anchor)
        assert check["verdict"] == row["verdict"] and check["evidence"]
    codecs = {c["implementation"] for c in data["codecs"]}  # type: ignore[attr-defined]
    assert {"mqtt-packet", "paho-mqtt", "gmqtt", "amqtt"} <= codecs


@pytest.mark.skipif(
    not (ROOT / "interop" / "node_modules").is_dir(), reason="npm ci in interop/ first"
)
def test_the_matrix_is_reproduced_for_the_implementations_that_start_fast() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "interop" / "matrix.py"), "--check", "--fast"],
        capture_output=True, text=True, timeout=1500, cwd=ROOT,
        env={**os.environ, "PUBPROOF_INTEROP": str(ROOT / "interop")},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]


def test_the_matrix_page_colours_each_verdict_and_links_it_to_its_trace(tmp_path: Path) -> None:
    import shutil
    import types

    assert (EXT / "pubproof_docs" / "pages_matrix.py").is_file()
    from pubproof_docs import pages_matrix

    docs = tmp_path / "docs"
    shutil.copytree(RESULTS.parent, docs / "matrix")
    # no statements: the evidence pages' rule ids stay text (the site's build links them)
    ctx = types.SimpleNamespace(docs=docs, trace=types.SimpleNamespace(statements={}))
    page = pages_matrix.matrix_page(ctx)  # type: ignore[arg-type]
    data = _results()
    for row in data["results"]:  # type: ignore[attr-defined]
        name, edition, check = row["implementation"], row["edition"], row["check"]
        href = f"../_static/matrix/{name}-{edition}.html#{check}"
        assert href in page, href
        report = (docs / "_static" / "matrix" / f"{name}-{edition}.html").read_text()
        assert f'id="{check}"' in report
    assert pages_matrix.COLOURS["violation"] in page and pages_matrix.COLOURS["pass"] in page
    # each rule an implementation broke is explained in the standard's words
    assert "What each finding means" in page and "[MQTT-4.8.0-1]" in page
    assert "Unless stated otherwise" in pages_matrix.meaning("MQTT-4.8.0-1")
    assert "PUBACKs are sent in the order" in pages_matrix.meaning("MQTT-4.6.0-2")
    # what exploration found: every committed reproducer, its moves and trace folded below
    from pubproof_docs import matrix_found

    found = matrix_found.reproducers(docs)
    assert len(found) >= 20 and "What exploration found" in page
    for name, repro in found:
        last = [e["hex"] for e in repro["trace"] if "hex" in e][-1]
        assert f'id="{matrix_found.anchor(name)}"' in page and f"[{last}]" in page, name


def test_every_committed_verdict_is_reproduced_from_its_evidence_alone() -> None:
    from pubproof.model.editions import Edition
    from pubproof.probe import rejudge
    from pubproof.probe.clients import rejudge_client

    data = _results()
    kinds = {i["implementation"]: i["kind"] for i in data["implementations"]}  # type: ignore[attr-defined]
    for path in sorted((RESULTS.parent / "evidence").glob("*.json")):
        report = json.loads(path.read_text(encoding="utf-8"))
        edition = Edition(report["edition"])
        name = path.stem.removesuffix(f"-{report['edition']}")
        for check in report["checks"]:
            if check["verdict"] == "not-applicable":
                continue  # decided from the evidence and the broker's declared maximum QoS
            again = (
                rejudge_client(check["id"], check["evidence"], edition, report["readings"])
                if kinds[name] == "client"
                else rejudge(check["id"], check["evidence"], edition, report["readings"])
            )
            assert again.verdict == check["verdict"], (path.name, check["id"])
            assert dict(again.rule_verdicts) == check["rule_verdicts"], (path.name, check["id"])


def _row(name: str, kind: str, edition: str, check: str, verdict: str = "pass") -> dict[str, Any]:
    return {"implementation": name, "kind": kind, "edition": edition, "check": check,
            "verdict": verdict, "stable": True}  # fmt: skip


def test_a_committed_implementation_not_probed_again_is_named_never_ignored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--check`` once compared only what it re-ran: a committed implementation that
    could not be probed here (not installed) passed unseen. :func:`matrix.unprobed` names
    it with why; ``--skip`` leaves it out on purpose; a check missing from a probe that ran,
    and a codec not run again, are named too."""
    import matrix

    gone = dataclasses.replace(
        BROKERS["aedes"], name="gone", version=lambda: None, install="apt-get install gone"
    )
    monkeypatch.setitem(BROKERS, "gone", gone)  # the registry matrix.py reads
    committed = {
        "results": [
            _row("gone", "broker", "3.1.1", "a"), _row("gone", "broker", "3.1.1", "b"),
            _row("mosquitto", "broker", "3.1.1", "a"), _row("mosquitto", "broker", "3.1.1", "b"),
            _row("mosquitto", "broker", "5.0", "a"),
        ],
        "codecs": [{"implementation": "gmqtt", "edition": "3.1.1", "by_rule": []}],
    }  # fmt: skip
    fresh = {"results": [_row("mosquitto", "broker", "3.1.1", "a")], "codecs": []}
    lines = matrix.unprobed(committed, fresh, [], [], [])
    assert lines == [
        "gone/3.1.1: committed, not probed again: gone is not installed (apt-get install gone)",
        "mosquitto/3.1.1/b: committed pass, not in this run",
        "mosquitto/5.0: committed, not probed again: no verdicts",
        "gmqtt-codec/3.1.1: committed, not run again: no run",
    ]
    # left out on purpose, or outside the selection (--only, --edition, --fast): not asked
    skipped = matrix.unprobed(committed, fresh, [], [], ["gone", "gmqtt-codec"])
    assert not any(line.startswith(("gone", "gmqtt")) for line in skipped)
    assert matrix.unprobed(committed, fresh, ["mosquitto"], ["3.1.1"], []) == [lines[1]]
    assert matrix.unprobed(committed, committed, [], [], ["gone", "gmqtt-codec"]) == []
    assert "gone" not in {n for n, *_ in matrix.implementations([])}


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_check_fails_when_a_committed_implementation_cannot_be_probed(tmp_path: Path) -> None:
    """End to end, without node on PATH: aedes (a committed broker) cannot start, and
    ``--check`` says so and exits 1; told to ``--skip`` it, it exits 0."""
    environment = {**os.environ, "PATH": str(tmp_path), "PUBPROOF_INTEROP": str(ROOT / "interop")}
    argv = [sys.executable, str(ROOT / "interop" / "matrix.py"), "--check", "--only", "aedes"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env=environment)  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "aedes/3.1.1: committed, not probed again: aedes is not installed" in done.stdout
    assert "aedes/3.1: committed, not probed again" in done.stdout
    skipped = subprocess.run([*argv, "--skip", "aedes"], capture_output=True, text=True,
                             timeout=300, cwd=ROOT, env=environment)  # fmt: skip
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    assert "0 committed not re-run" in skipped.stdout


def test_what_exploration_found_names_the_hand_written_checks_that_fail_the_same_rule() -> None:
    """A reproducer's row names the checks of the same implementation and edition that fail
    one of its rules, and none of another implementation's: aedes's wildcard QoS fault
    (MQTT-3.8.4-6) is one no check of aedes reports, though amqtt's checks fail that rule."""
    from pubproof_docs import matrix_found

    results: list[dict[str, Any]] = _results()["results"]  # type: ignore[assignment]
    found = dict(matrix_found.reproducers(ROOT / "docs"))
    aedes = found["aedes-1.2.0-3.1.1-mqtt-3.8.4-6"]
    amqtt = found["amqtt-0.12.1-3.1.1-mqtt-3.8.4-6"]
    assert matrix_found.reporting_checks(aedes, results) == []
    assert "dist.qos-0-granted-1" in matrix_found.reporting_checks(amqtt, results)
    assert matrix_found.reporting_checks(found["amqtt-0.12.1-3.1.1-mqtt-3.2.2-3"], results) == []
    fives = found["mosquitto-2.0.11-5.0-mqtt-3.8.3-3"]
    assert matrix_found.reporting_checks(fives, results) == []
    # a check of another edition of the same implementation does not count
    elsewhere = {"implementation": "mosquitto", "edition": "3.1.1", "check": "forward.x",
                 "rule_verdicts": {"MQTT-3.8.3-3": "violation"}}  # fmt: skip
    assert matrix_found.reporting_checks(fives, [*results, elsewhere]) == []
    assert matrix_found.reporting_checks(fives, [*results, {**elsewhere, "edition": "5.0"}]) == [
        "forward.x"
    ]
    # a specific rule with the general close rule: the checks of both, not of every close
    qos3 = found["amqtt-0.12.1-3.1.1-mqtt-3.3.1-4-mqtt-4.8.0-1"]
    assert matrix_found.reporting_checks(qos3, results) == ["wire.publish-qos3"]
