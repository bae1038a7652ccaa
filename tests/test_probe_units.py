"""``pubproof probe`` without a real broker: its codec, its judges, and its bounds (against
small fake brokers on loopback: one that never answers, one that answers only CONNECT and
SUBSCRIBE)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from support.fake_broker import FAST, FakeBroker

from pubproof.judge.close import expectation
from pubproof.judge.findings import VIOLATION
from pubproof.judge.packets import FrameError, connect, describe, subscribe
from pubproof.model import wire as model_wire
from pubproof.model.editions import Edition, resolve_readings
from pubproof.probe import CHECKS, VERDICTS, Target, probe, rejudge, select
from pubproof.probe.checks_wire import BUILDS, PUBLISH_CHECKS
from pubproof.probe.findings import NO_ANSWER, conclude, missing
from pubproof.probe.frames import FrameSplitter, describe_bytes
from pubproof.probe.html_report import render
from pubproof.probe.judge_link import ClientLink

V311 = Edition.V311
DEFAULTS = resolve_readings(V311)


# -- the target -------------------------------------------------------------------------


def test_target_is_mqtt_host_port_only() -> None:
    assert Target.parse("mqtt://127.0.0.1:1884") == Target("127.0.0.1", 1884)
    assert Target.parse("mqtt://localhost") == Target("localhost", 1883)
    assert Target.parse("mqtt://[::1]:1883/").url == "mqtt://[::1]:1883"
    for bad in ("tcp://h:1", "mqtts://h:1", "mqtt://h:1/x", "mqtt://u@h:1", "mqtt://h:99999", "h"):
        with pytest.raises(ValueError):
            Target.parse(bad)


# -- the control packets and frames ---------------------------------------------------------


def test_control_packets_describe_what_they_encode() -> None:
    data = connect("pp1", clean=False, edition=V311)
    assert describe(data[0], data[2:]) == {
        "type": "CONNECT", "protocol": "MQTT", "level": 4, "clean_session": False,
        "keep_alive": 60, "client_id": "pp1",
    }  # fmt: skip
    data31 = connect("pp1", clean=True, edition=Edition.V31)
    assert describe(data31[0], data31[2:])["protocol"] == "MQIsdp"
    data = subscribe(7, [("a/+", 1), ("a/#", 2)])
    assert data[0] == 0x82  # [MQTT-3.8.1-1]
    fields = describe(data[0], data[2:])
    assert fields["subscriptions"] == [{"filter": "a/+", "qos": 1}, {"filter": "a/#", "qos": 2}]
    assert describe(0x20, bytes.fromhex("0100")) == {
        "type": "CONNACK", "session_present": True, "return_code": 0
    }  # fmt: skip
    assert describe(0x90, bytes.fromhex("00070180"))["granted"] == [1, 0x80]
    assert "error" in describe(0x20, bytes.fromhex("01"))
    assert "error" in describe(0x20, bytes.fromhex("010000"))


def test_frames_are_cut_by_remaining_length_and_described_like_pubproof_decode() -> None:
    stream = bytes.fromhex("2002000032090003612f62000a6869d000")
    splitter = FrameSplitter()
    frames = []
    for byte in stream:  # byte by byte
        splitter.feed(bytes((byte,)))
        while (frame := splitter.next_frame()) is not None:
            frames.append(frame)
    assert [f.hex() for f in frames] == ["20020000", "32090003612f62000a6869", "d000"]
    fields, packet = describe_bytes(frames[1], V311, DEFAULTS)
    assert packet is not None
    assert [fields] == model_wire.decode(frames[1], V311).packets
    bad, none = describe_bytes(bytes.fromhex("3628000161000178"), V311, DEFAULTS)
    assert none is None and bad["error"]["rule"] == "MQTT-3.3.1-4"
    splitter = FrameSplitter()
    splitter.feed(bytes.fromhex("30ffffffff7f"))
    with pytest.raises(FrameError):
        splitter.next_frame()


# -- the judges ---------------------------------------------------------------------------


#: cases the model accepts under the default readings, and the reading that rejects them
ACCEPTED = {
    Edition.V311: {
        "wire.rl-non-minimal": "rl-encoding",
        "wire.topic-discouraged": "discouraged-code-points",
        "wire.topic-32768-characters": None,
    },
    Edition.V31: {
        "wire.publish-dup-qos0": "dup-qos0",
        "wire.topic-wildcard-plus": "topic-rules",
        "wire.topic-wildcard-hash": "topic-rules",
        "wire.topic-empty": "topic-rules",
        "wire.topic-nul": "topic-rules",
        "wire.rl-non-minimal": "rl-encoding",
        "wire.topic-discouraged": None,
    },
}


@pytest.mark.parametrize("edition", [Edition.V31, Edition.V311])
def test_every_publish_case_is_what_the_model_says_it_is(edition: Edition) -> None:
    """Each wire case is rejected by the model, or accepted and then rejected under a named
    reading (or, where listed, accepted in this edition outright)."""
    readings = resolve_readings(edition)
    for check in PUBLISH_CHECKS:
        exp = expectation(_case_bytes(check.id), edition, readings)
        if check.id in ACCEPTED[edition]:
            reading = ACCEPTED[edition][check.id]
            assert not exp.close, check.id
            assert [name for name, _, _ in exp.alternatives] == ([reading] if reading else [])
        else:
            assert exp.close and exp.failure is not None, check.id
            assert exp.failure.rule in check.rules_for(edition), check.id


def _case_bytes(check_id: str) -> bytes:
    """The bytes a wire check sends for a topic name like the probe's."""
    return BUILDS[check_id]("pubproof/0a1b2c/" + check_id + "/t")


def test_a_missing_answer_is_no_answer_when_the_broker_is_silent_and_a_violation_when_not() -> None:
    findings = [missing("no PUBACK", "MQTT-4.3.2-2")]
    assert conclude(findings, (), broker_alive=False).verdict == NO_ANSWER
    assert conclude(findings, (), broker_alive=True).verdict == VIOLATION
    assert conclude([], ("X",), broker_alive=True).verdict == "pass"


def _p(dir_: str, kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, **fields, "dir": dir_, "client": "c"}


def test_the_flow_judge_owes_answers_and_resends() -> None:
    publish = {"dup": False, "qos": 1, "retain": False, "topic": "a", "payload_hex": "00"}
    trace: list[dict[str, Any]] = [
        _p("to-broker", "CONNECT", clean_session=False),
        _p("from-broker", "CONNACK", session_present=False, return_code=0),
        _p("to-broker", "PUBLISH", **publish, packet_id=1),
        {"event": "quiet", "client": None},
    ]
    judge = ClientLink("c")
    for index, entry in enumerate(trace):
        judge.feed(index, entry)
    judge.finish()
    assert [f.verdict for f in judge.findings] == ["missing"]
    assert "PUBACK 1" in judge.findings[0].message

    # the broker forwards a QoS 1 message; the client drops without PUBACK and resumes
    judge = ClientLink("c")
    trace = [
        _p("to-broker", "CONNECT", clean_session=False),
        _p("from-broker", "CONNACK", session_present=False, return_code=0),
        _p("from-broker", "PUBLISH", **publish, packet_id=5),
        {"event": "dropped", "client": "c"},
        _p("to-broker", "CONNECT", clean_session=False),
        _p("from-broker", "CONNACK", session_present=True, return_code=0),
        _p("from-broker", "PUBLISH", **{**publish, "dup": False}, packet_id=5),
        {"event": "quiet", "client": None},
    ]
    for index, entry in enumerate(trace):
        judge.feed(index, entry)
    judge.finish()
    messages = [f.message for f in judge.findings]
    assert any("DUP 0" in m for m in messages), messages  # [MQTT-3.3.1-1]
    assert len(judge.deliveries) == 2


# -- bounds, against fake brokers on loopback -------------------------------------------------


@pytest.fixture
def silent_broker() -> Iterator[FakeBroker]:
    broker = FakeBroker(lambda frame: b"")
    yield broker
    broker.stop()


@pytest.fixture
def lazy_broker() -> Iterator[FakeBroker]:
    """Answers CONNECT and SUBSCRIBE, and nothing else: alive, but owes everything."""

    def answer(frame: bytes) -> bytes:
        if frame[0] >> 4 == 1:
            return bytes.fromhex("20020000")
        if frame[0] >> 4 == 8:
            return bytes.fromhex("9003") + frame[2:4] + b"\x02"
        return b""

    broker = FakeBroker(answer)
    yield broker
    broker.stop()


def test_a_broker_that_never_answers_gives_no_answer_in_bounded_time(
    silent_broker: FakeBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    contacted: list[tuple[str, int]] = []
    real = socket.create_connection

    def recording(address: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
        contacted.append(address)
        return real(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", recording)
    target = Target("127.0.0.1", silent_broker.port)
    only = ["flow.qos2", "wire.publish-qos3", "session.resend-pubrel", "retain.qos0-replaces"]
    started = time.monotonic()
    report = probe(target, only=only, timing=FAST, jobs=4)
    elapsed = time.monotonic() - started
    assert [c.verdict for c in report.checks] == [NO_ANSWER] * 4
    assert elapsed < 2 * (FAST.check + 2 * FAST.liveness + 2 * FAST.answer + 0.5)
    assert contacted and set(contacted) == {("127.0.0.1", silent_broker.port)}
    for check in report.checks:
        assert any(e.get("event") == "timeout" for e in check.evidence)


def test_a_broker_that_answers_but_does_not_deliver_is_in_violation(
    lazy_broker: FakeBroker,
) -> None:
    report = probe(Target("127.0.0.1", lazy_broker.port), only=["flow.qos1"], timing=FAST)
    (check,) = report.checks
    assert check.verdict == VIOLATION
    assert "PUBACK 1" in check.message
    assert rejudge(check.id, list(check.evidence)).verdict == VIOLATION


def test_no_broker_at_all_is_an_error_and_the_json_is_as_documented() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]  # closed again below: nothing listens
    result = subprocess.run(
        [sys.executable, "-m", "pubproof", "probe", f"mqtt://127.0.0.1:{port}", "--json",
         "--only", "flow.qos0", "MQTT-3.3.1-4"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert set(report) >= {"target", "edition", "checks"}
    assert report["target"] == f"mqtt://127.0.0.1:{port}" and report["edition"] == "3.1.1"
    assert [c["id"] for c in report["checks"]] == ["wire.publish-qos3", "flow.qos0"]
    for check in report["checks"]:
        assert set(check) >= {"id", "rules", "verdict", "evidence", "message"}
        assert check["verdict"] == "error" and check["evidence"]
        assert check["evidence"][0]["event"] == "connect-failed"
    assert "probing" in result.stderr and "[1/2]" in result.stderr


def test_usage_errors() -> None:
    for args in (["probe", "ftp://127.0.0.1:1"], ["probe", "mqtt://127.0.0.1:1", "--only", "x"]):
        result = subprocess.run(
            [sys.executable, "-m", "pubproof", *args, "--quiet"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert result.returncode == 2, result.stderr


# -- the catalog and the report -----------------------------------------------------------


def test_the_catalog_covers_the_issue_and_names_rules() -> None:
    ids = {c.id for c in CHECKS}
    assert len(ids) == len(CHECKS)
    groups = {i.split(".")[0] for i in ids}
    assert groups == {"wire", "flow", "qos2", "forward", "retain", "subscribe", "dist",
                      "session", "packet-id"}  # fmt: skip
    for check in CHECKS:
        assert check.rules_for(V311), check.id
        assert check.title
    assert select(["MQTT-3.3.1-10"], V311)[0].id == "retain.zero-byte-deletes"
    assert {c.id for c in select(["retain"], V311)} == {i for i in ids if i.startswith("retain.")}


def test_the_html_report_is_self_contained_and_escaped() -> None:
    from pubproof.probe.report import CheckResult, Report

    evidence = (
        {"type": "PUBLISH", "dup": False, "qos": 0, "retain": False, "topic": "<x>",
         "packet_id": None, "payload_hex": "", "dir": "to-broker", "client": "pub",
         "hex": "3003000078", "case": True, "t": 0.0},
        {"event": "closed", "client": "pub", "how": "end of stream", "t": 0.1},
    )  # fmt: skip
    result = CheckResult(
        "wire.x", "a <case>", ("MQTT-3.3.1-4",), "pass", evidence, "ok", "close", 0.1
    )
    page = render(Report("mqtt://127.0.0.1:1", "3.1.1", {}, (result,), 0.1))
    assert page.startswith("<!DOCTYPE html>")
    assert "<x>" not in page and "&lt;x&gt;" in page
    assert "<script" not in page and "http" not in page.replace("mqtt://", "")
    assert 'id="wire.x"' in page and "3003000078" in page
    assert set(VERDICTS) >= {"pass"}


def test_each_rule_gets_its_own_verdict_beside_the_checks() -> None:
    from pubproof.probe.findings import error, passed, rule_verdicts, tolerated

    # forward.dup-not-propagated on a broker that delivers twice with DUP 0
    findings = [
        tolerated("sub got it 2 times: QoS 1 is at least once", "MQTT-4.3.2-1"),
        passed("forwarded with DUP 0", "MQTT-3.3.1-3"),
    ]
    judged = conclude(findings, ("MQTT-3.3.1-3", "MQTT-4.3.2-2"), broker_alive=True)
    assert judged.verdict == "tolerated"
    assert dict(judged.rule_verdicts) == {
        "MQTT-3.3.1-3": "pass", "MQTT-4.3.2-2": "pass", "MQTT-4.3.2-1": "tolerated",
    }  # fmt: skip
    # a finding that cites no rule (a refused connection) counts against every rule
    refused = rule_verdicts([error("no connection"), passed("x", "A")], ("A", "B"))
    assert dict(refused) == {"A": "error", "B": "error"}
    # a missing answer resolves as the check does, rule by rule
    silent = conclude([missing("no PUBACK", "B")], ("A",), broker_alive=False)
    assert dict(silent.rule_verdicts) == {"A": "pass", "B": NO_ANSWER}
    # the worst rule verdict is the check's
    for judgement in (judged, silent):
        ranks = [VERDICTS.index(v) for v in judgement.rule_verdicts.values()]
        assert VERDICTS[max(ranks)] == judgement.verdict


def test_the_reports_show_each_rules_verdict() -> None:
    from pubproof.probe.report import CheckResult, Report
    from pubproof.probe_command import table

    per_rule = {"MQTT-3.3.1-3": "pass", "MQTT-4.3.2-1": "tolerated"}
    result = CheckResult(
        "forward.dup-not-propagated", "dup", ("MQTT-3.3.1-3", "MQTT-4.3.2-1"), "tolerated",
        (), "twice", "check", 0.1, rule_verdicts=per_rule,
    )  # fmt: skip
    report = Report("mqtt://127.0.0.1:1", "3.1.1", {}, (result,), 0.1)
    assert report.to_json()["checks"][0]["rule_verdicts"] == per_rule
    assert "[MQTT-3.3.1-3] pass" in table(report)
    assert '<code class="pass" title="MQTT-3.3.1-3: pass">' in render(report)


def test_a_check_beyond_the_brokers_qos_is_not_applicable_never_a_failure() -> None:
    from pubproof.probe.support import beyond

    qos2 = {"type": "PUBLISH", "qos": 2, "dir": "to-broker", "client": "pub", "hex": ""}
    pubrel = {"type": "PUBREL", "packet_id": 1, "dir": "to-broker", "client": "pub", "hex": ""}
    qos1 = {**qos2, "qos": 1}
    assert beyond([qos2], 1) is not None and beyond([pubrel], 1) is not None
    assert beyond([qos2], 2) is None and beyond([qos1], 1) is None
    assert beyond([{**qos2, "case": True}], 1) is None  # a wire check's case is not a flow
    assert beyond([qos1], 0) is not None


@pytest.mark.parametrize("edition", [Edition.V311, Edition.V50])
def test_the_close_judge_charges_a_close_after_an_accepted_packet_not_after_disconnect(
    edition: Edition,
) -> None:
    """A broker that closes after a PUBLISH the model accepts is charged; one that closes
    after the client's DISCONNECT did what 3.14.4 says it should (exploration of mosquitto
    5.0 met it: the broker closed first, before the client dropped the connection)."""
    from pubproof.probe.check import Closes

    def closes_after(last: dict[str, Any]) -> list[Any]:
        judge = Closes(edition)
        judge.feed([
            {"client": "c0", "dir": "to-broker", "type": "CONNECT"},
            {"client": "c0", "dir": "from-broker", "type": "CONNACK", "return_code": 0,
             "reason_code": 0},
            {"client": "c0", "dir": "to-broker", **last},
            {"client": "c0", "event": "closed"},
        ])  # fmt: skip
        return judge.findings

    publish = {
        "type": "PUBLISH",
        "qos": 1,
        "dup": False,
        "retain": False,
        "topic": "a",
        "packet_id": 1,
    }
    [charged] = closes_after(publish)
    assert charged.verdict == VIOLATION and "after PUBLISH" in charged.message
    assert closes_after({"type": "DISCONNECT"}) == []
