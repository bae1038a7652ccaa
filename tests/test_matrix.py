"""The published conformance matrix (docs/matrix/results.json) is reproduced: the fast
implementations (brokers and clients that start in seconds, every codec) are probed again
and every stable verdict must be what the committed results say."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from docs_site import EXT

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "matrix" / "results.json"
VERDICTS = {"pass", "tolerated", "violation", "no-answer", "error", "not-applicable"}


def _results() -> dict[str, object]:
    data: dict[str, object] = json.loads(RESULTS.read_text(encoding="utf-8"))
    return data


def test_the_committed_matrix_is_complete_and_each_verdict_has_its_evidence() -> None:
    data = _results()
    kinds = {i["implementation"]: i["kind"] for i in data["implementations"]}  # type: ignore[attr-defined]
    assert {"mosquitto", "amqtt", "aedes"} <= {n for n, k in kinds.items() if k == "broker"}
    clients = {"paho-mqtt", "mosquitto-clients", "mqttjs", "gmqtt", "paho-c"}
    assert clients <= {n for n, k in kinds.items() if k == "client"}
    rows = data["results"]
    assert isinstance(rows, list)
    for client in clients:
        mine = [r for r in rows if r["implementation"] == client and r["edition"] == "3.1.1"]
        assert len(mine) >= 30, client
    for row in rows:
        assert row["verdict"] in VERDICTS and row["rules"] and row["rule_verdicts"], row["check"]
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
    page = pages_matrix.matrix_page(types.SimpleNamespace(docs=docs))  # type: ignore[arg-type]
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
