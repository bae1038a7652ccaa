"""``pubproof probe`` against real brokers on loopback: Debian's mosquitto and amqtt (PyPI).

Each broker runs in a subprocess on a free loopback port with its own configuration file in
a temporary folder. The tests pin no verdict (brokers differ, and that is what the probe
reports); they check that the probe finishes in bounded time, that every verdict rests on
evidence, and that the evidence replays through the model consistently with the verdict.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from brokers import BROKERS, started

from pubproof.judge.close import expectation
from pubproof.judge.packets import PUBLISH_FAMILY, describe, header_length
from pubproof.model import wire as model_wire
from pubproof.model.editions import Edition
from pubproof.model.replay import replay
from pubproof.probe import BY_ID, VERDICTS, rejudge

#: a run of the whole catalog must end well within this (the issue: ~30 s for mosquitto)
RUN_BOUND = 60.0
P_KEYS = ("type", "dup", "qos", "retain", "topic", "packet_id", "payload_hex")


def _broker(name: str) -> Iterator[int]:
    """The broker of the registry (interop/brokers.py), started as the matrix starts it."""
    why = BROKERS[name].available()
    if why is not None:
        pytest.skip(why)
    with started(name) as broker:
        yield broker.port


@pytest.fixture(scope="module")
def mosquitto() -> Iterator[int]:
    yield from _broker("mosquitto")


@pytest.fixture(scope="module")
def amqtt() -> Iterator[int]:
    yield from _broker("amqtt")


def run_cli(port: int, *args: str) -> tuple[dict[str, Any], str, float]:
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "pubproof", "probe", f"mqtt://127.0.0.1:{port}", "--json", *args],
        capture_output=True,
        text=True,
        timeout=RUN_BOUND + 30,
    )
    elapsed = time.monotonic() - started
    assert result.returncode in (0, 1), result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    assert (result.returncode == 0) == all(
        c["verdict"] in ("pass", "tolerated") for c in report["checks"]
    )
    return report, result.stderr, elapsed


# -- what every report must satisfy -----------------------------------------------------------


def check_report(report: dict[str, Any], edition: Edition) -> None:
    assert report["edition"] == edition.value
    for check in report["checks"]:
        assert check["verdict"] in VERDICTS
        assert check["evidence"], check["id"]
        assert check["message"], check["id"]
        if edition is Edition.V311:
            assert check["rules"], check["id"]
        check_evidence_decodes(check, edition)
        check_verdict_replays(check, edition, report["readings"])


def check_evidence_decodes(check: dict[str, Any], edition: Edition) -> None:
    """Every packet's fields are what its bytes decode to: the model for PUBLISH and its
    acknowledgements (the error rule, for bytes the model rejects), the control codec else."""
    for entry in check["evidence"]:
        if "dir" not in entry:
            assert entry["event"] in (
                "closed", "dropped", "timeout", "quiet", "connect-failed", "error", "deadline"
            ), entry  # fmt: skip
            continue
        assert entry["dir"] in ("to-broker", "from-broker") and entry["client"]
        data = bytes.fromhex(entry["hex"])
        if data[0] >> 4 in PUBLISH_FAMILY:
            verdict = model_wire.decode(data, edition)
            if "error" in entry:
                assert verdict.failure is not None, entry
                if entry["error"]["rule"] is not None:
                    assert verdict.failure.rule == entry["error"]["rule"], entry
            else:
                assert verdict.failure is None, entry
                assert verdict.packets == [{k: entry[k] for k in P_KEYS if k in entry}], entry
        elif "error" not in entry:
            header = header_length(data)
            assert header is not None
            fields = {k: v for k, v in entry.items() if k not in ("dir", "client", "hex", "t")}
            assert describe(data[0], data[header[0] :]) == fields, entry


def check_verdict_replays(
    check: dict[str, Any], edition: Edition, readings: dict[str, str]
) -> None:
    """The verdict follows from the evidence alone, and agrees with the model's replay."""
    again = rejudge(check["id"], check["evidence"], edition, readings)
    assert (again.verdict, list(again.rules), again.message) == (
        check["verdict"], check["rules"], check["message"],
    ), check["id"]  # fmt: skip
    assert dict(again.rule_verdicts) == check["rule_verdicts"], check["id"]
    assert set(check["rules"]) <= set(check["rule_verdicts"]), check["id"]
    evidence = check["evidence"]
    from_broker_rejected = [
        e for e in evidence
        if e.get("dir") == "from-broker" and bytes.fromhex(e["hex"])[0] >> 4 in PUBLISH_FAMILY
        and model_wire.decode(bytes.fromhex(e["hex"]), edition, readings).failure is not None
    ]  # fmt: skip
    timeouts = [e for e in evidence if e.get("event") in ("timeout", "deadline")]
    if check["verdict"] in ("pass", "tolerated"):
        assert not from_broker_rejected, check["id"]
        assert not timeouts, check["id"]
        for client in {e["client"] for e in evidence if e.get("dir")}:
            outputs = replay(client_trace(evidence, client)).judgements()
            assert not [o for o in outputs if o.kind == "violation"], (check["id"], outputs)
    if check["verdict"] == "no-answer":
        assert timeouts, check["id"]
    if check["id"].startswith("wire.") and check["verdict"] == "pass":
        check_case_outcome(check, edition, readings)


def client_trace(evidence: list[dict[str, Any]], client: str) -> list[dict[str, Any]]:
    """One client's packets as a :func:`pubproof.model.replay.replay` trace: the client is
    the sending end, the broker the receiving end; a second CONNECT is a reconnect."""
    trace: list[dict[str, Any]] = []
    connects = 0
    persistent = False
    for entry in evidence:
        if entry.get("client") != client or "dir" not in entry or "error" in entry:
            continue
        if entry.get("case"):
            break  # what follows is the broker's answer to the probe's fault
        if entry["type"] == "CONNECT":
            connects += 1
            if connects > 1:
                resumed = persistent and not entry["clean_session"]
                trace.append({"event": "reconnect", "session": "resumed" if resumed else "clean"})
            persistent = not entry["clean_session"]
        if entry["type"] in ("PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP"):
            direction = "c2s" if entry["dir"] == "to-broker" else "s2c"
            trace.append({**{k: entry[k] for k in P_KEYS if k in entry}, "dir": direction})
    return trace


def check_case_outcome(check: dict[str, Any], edition: Edition, readings: dict[str, str]) -> None:
    """A wire check passes exactly when the broker closed the connection over a case the
    model rejects, or answered PINGREQ after one it accepts."""
    evidence = check["evidence"]
    index, case = next((i, e) for i, e in enumerate(evidence) if e.get("case"))
    after = [e for e in evidence[index + 1 :] if e.get("client") == case["client"]]
    closed = any(e.get("event") == "closed" for e in after)
    if expectation(bytes.fromhex(case["hex"]), edition, readings).close:
        assert closed, check["id"]
    else:
        assert not closed and any(e.get("type") == "PINGRESP" for e in after), check["id"]


# -- the brokers ----------------------------------------------------------------------------


def test_mosquitto(mosquitto: int, tmp_path: Path) -> None:
    out = tmp_path / "report"
    report, stderr, elapsed = run_cli(mosquitto, "--out", str(out))
    assert elapsed < 30, elapsed
    assert [c["id"] for c in report["checks"]] == list(BY_ID)
    check_report(report, Edition.V311)
    # the progress display, one line per check, on standard error
    assert stderr.count("\n") >= len(BY_ID) and f"[{len(BY_ID)}/{len(BY_ID)}]" in stderr
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "<script" not in page and "<link" not in page
    assert all(f'id="{check_id}"' in page for check_id in BY_ID)
    assert json.loads((out / "report.json").read_text(encoding="utf-8")) == report
    # mosquitto forwards a re-sent QoS 1 PUBLISH with DUP 0 as [MQTT-3.3.1-3] asks; the
    # check is tolerated for the second delivery alone, and says so rule by rule
    dup = next(c for c in report["checks"] if c["id"] == "forward.dup-not-propagated")
    if dup["verdict"] == "tolerated":
        assert dup["rule_verdicts"]["MQTT-3.3.1-3"] == "pass"
        assert dup["rule_verdicts"]["MQTT-4.3.2-1"] == "tolerated"


def test_mosquitto_mqtt31(mosquitto: int) -> None:
    report, _, elapsed = run_cli(mosquitto, "--edition", "3.1", "--only", "wire", "flow")
    assert elapsed < 30
    assert report["checks"] and all(c["verdict"] != "error" for c in report["checks"])
    check_report(report, Edition.V31)


def test_amqtt(amqtt: int) -> None:
    report, _, elapsed = run_cli(amqtt)
    assert elapsed < RUN_BOUND, elapsed
    assert [c["id"] for c in report["checks"]] == list(BY_ID)
    check_report(report, Edition.V311)
