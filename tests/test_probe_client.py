"""pubproof probe-client: pubproof plays the server, a driver makes a real client library
act, the model judges what the client sends and what its application receives."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pubproof.model.editions import Edition
from pubproof.probe.clients import BY_ID, CHECKS, probe_client, rejudge_client, select
from pubproof.probe.clients.judge import judge_client
from pubproof.probe.clients.shipped import SHIPPED, ShippedDriver

V311 = Edition.V311


def _run(*args: str) -> tuple[int, dict[str, Any], str]:
    result = subprocess.run(
        [sys.executable, "-m", "pubproof", "probe-client", "--json", "--quiet", *args],
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    return result.returncode, json.loads(result.stdout), result.stderr


def test_the_catalog_has_thirty_checks_per_edition_each_naming_rules() -> None:
    for edition in (Edition.V31, Edition.V311):
        assert len(select([], edition)) >= 30
        for check in CHECKS:
            assert check.rules_for(edition), check.id
    groups = {c.id.split(".")[0] for c in CHECKS}
    assert groups == {"send", "receive", "wire"}
    assert {"paho-mqtt", "mosquitto-clients", "mqttjs", "gmqtt", "paho-c"} <= set(SHIPPED)


def test_every_shipped_driver_says_how_to_run_it_and_why_it_cannot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each entry's command line names a driver that exists (a module of
    ``pubproof.probe.drivers``, a script of ``interop/drivers``, the C driver's program
    built under ``interop/drivers/paho_c/build``); where its library is
    missing it says so and what installs it, and never offers a command that cannot run."""
    import importlib.util

    root = Path(__file__).resolve().parent.parent
    monkeypatch.setenv("PUBPROOF_INTEROP", str(root / "interop"))
    for driver in SHIPPED.values():
        argv = driver.command_line()
        if argv[:2] == [sys.executable, "-m"]:
            assert importlib.util.find_spec(argv[2]) is not None, driver.name
        elif driver.name == "paho-c":  # the C driver, built: its program under interop/
            assert (root / "interop" / "drivers" / "paho_c" / "build").samefile(
                Path(argv[0]).parent
            )
        else:
            assert argv[0] == "node" and (root / "interop" / "drivers").samefile(
                Path(argv[1]).parent
            ), driver.name
    missing = ShippedDriver(
        name="nowhere", library="libnowhere", editions=("3.1.1",), install="apt-get nowhere",
        command=lambda: ["nowhere"], version=lambda: None,
    )  # fmt: skip
    assert missing.available() == "libnowhere is not installed (apt-get nowhere)"
    absent = ShippedDriver(
        name="absent", library="x", editions=("5.0",), install="get it",
        command=lambda: [], version=lambda: "1", programs=("pubproof-no-such-program",),
    )  # fmt: skip
    assert absent.available() == "pubproof-no-such-program is not on PATH (get it)"
    with pytest.raises(ValueError, match="editions"):
        ShippedDriver(name="x", library="x", editions=("4.0",), install="",
                      command=list, version=lambda: None)  # fmt: skip


def _evidence(*entries: dict[str, Any]) -> list[dict[str, Any]]:
    base: list[dict[str, Any]] = [
        {"event": "driver-start", "client": "driver", "argv": ["x"], "plan": {}, "t": 0.0},
        {"event": "accepted", "client": "conn1", "t": 0.1},
        {"type": "CONNECT", "dir": "from-client", "client": "conn1", "hex": "", "t": 0.1,
         "clean_session": False, "client_id": "c"},
        {"type": "CONNACK", "dir": "to-client", "client": "conn1", "hex": "20020000",
         "session_present": False, "return_code": 0, "t": 0.1},
    ]  # fmt: skip
    return [*base, *entries]


def _publish(conn: str, dup: bool, t: float, direction: str = "from-client") -> dict[str, Any]:
    first = 0x32 | (0x08 if dup else 0)
    data = bytes((first, 7, 0, 1)) + b"a" + (1).to_bytes(2, "big") + b"xy"
    return {"type": "PUBLISH", "dup": dup, "qos": 1, "retain": False, "topic": "a",
            "packet_id": 1, "payload_hex": "7879", "dir": direction, "client": conn,
            "hex": data.hex(), "t": t}  # fmt: skip


def test_a_resend_on_a_resumed_session_without_dup_is_a_violation() -> None:
    check = BY_ID["send.qos1-resent-on-resume"]
    reconnect = [
        _publish("conn1", False, 0.2),
        {"event": "dropped", "client": "conn1", "t": 0.3},
        {"event": "accepted", "client": "conn2", "t": 0.4},
        {"type": "CONNECT", "dir": "from-client", "client": "conn2", "hex": "", "t": 0.4,
         "clean_session": False, "client_id": "c"},
        {"type": "CONNACK", "dir": "to-client", "client": "conn2", "hex": "20020100",
         "session_present": True, "return_code": 0, "t": 0.4},
    ]  # fmt: skip
    rules = check.rules_for(V311)
    good = _evidence(*reconnect, _publish("conn2", True, 0.5), {"event": "quiet", "t": 0.6})
    assert judge_client(check.judge, rules, good, V311, {}).verdict == "pass"
    # the mutant: the same re-send with DUP 0
    bad = _evidence(*reconnect, _publish("conn2", False, 0.5), {"event": "quiet", "t": 0.6})
    judged = judge_client(check.judge, rules, bad, V311, {})
    assert judged.verdict == "violation" and judged.rule_verdicts["MQTT-3.3.1-1"] == "violation"
    # never re-sent at all: missing, a violation while the client is there
    none = _evidence(*reconnect, {"event": "quiet", "t": 0.6})
    assert judge_client(check.judge, rules, none, V311, {}).verdict == "violation"


def test_a_message_the_model_rejects_must_close_and_never_reach_the_application() -> None:
    check = BY_ID["wire.receive-packet-id-zero"]
    rules = check.rules_for(V311)
    case = {**_publish("conn1", False, 0.2, "to-client"), "case": True}
    case["hex"] = "3205000161" + "0000"  # QoS 1, topic "a", packet identifier 0
    closed = _evidence(case, {"event": "closed", "client": "conn1", "how": "end", "t": 0.3})
    assert judge_client(check.judge, rules, closed, V311, {}).verdict == "pass"
    kept = _evidence(case, {"event": "quiet", "t": 1.0})
    assert judge_client(check.judge, rules, kept, V311, {}).verdict == "violation"
    handed = {"event": "app", "client": "app", "what": "message", "topic": "a", "qos": 1,
              "payload_hex": "", "t": 0.25}  # fmt: skip
    both = _evidence(case, handed, {"event": "closed", "client": "conn1", "how": "e", "t": 0.3})
    judged = judge_client(check.judge, rules, both, V311, {})
    assert judged.verdict == "violation" and "handed" in judged.message


def test_qos2_delivered_twice_is_a_violation_once_is_a_pass() -> None:
    check = BY_ID["receive.qos2"]
    rules = check.rules_for(V311)
    msg = {"event": "app", "client": "app", "what": "message", "topic": "a", "qos": 2,
           "payload_hex": b"rx2".hex(), "t": 0.5}  # fmt: skip
    once = _evidence(msg, {"event": "quiet", "t": 1.0})
    twice = _evidence(msg, {**msg, "t": 0.6}, {"event": "quiet", "t": 1.0})
    assert judge_client(check.judge, rules, once, V311, {}).verdict == "pass"
    assert judge_client(check.judge, rules, twice, V311, {}).verdict == "violation"


def test_a_driver_that_crashes_is_an_error_never_a_pass(tmp_path: Path) -> None:
    crash = tmp_path / "crash.py"
    crash.write_text(
        textwrap.dedent(
            """
            import json, os, socket, sys
            from urllib.parse import urlsplit
            plan = json.loads(os.environ["PUBPROOF_PLAN"])
            print(json.dumps({"event": "hello", "library": "crashy", "version": "0"}), flush=True)
            url = urlsplit(plan["url"])
            s = socket.create_connection((url.hostname, url.port))
            s.sendall(bytes.fromhex("101000044d5154540402003c0004") + b"crsh")
            s.recv(4)
            sys.stderr.write("Traceback: boom\\n")
            sys.exit(3)
            """
        )
    )
    report = probe_client(f"{sys.executable} {crash}", only=["send.qos1", "receive.qos0"])
    assert report.target == "crashy 0"
    for check in report.checks:
        assert check.verdict == "error", check
        assert "status 3" in check.message and "boom" in check.message


def test_no_driver_at_all_is_an_error() -> None:
    report = probe_client("/nonexistent/driver", only=["send.qos0"])
    assert [c.verdict for c in report.checks] == ["error"]


@pytest.mark.parametrize("driver", ["paho-mqtt", "mosquitto-clients"])
def test_a_real_client_is_judged_and_every_verdict_replays(driver: str) -> None:
    only = [
        "send.qos1", "send.qos2-resent-on-resume", "receive.qos2",
        "receive.pubrel-unknown-id", "wire.receive-publish-qos3", "wire.puback-length",
    ]  # fmt: skip
    status, report, _ = _run("--driver", driver, "--only", *only)
    assert report["edition"] == "3.1.1" and report["target"].split()[-1][0].isdigit()
    assert [c["id"] for c in report["checks"]] == only
    verdicts = {c["id"]: c["verdict"] for c in report["checks"]}
    # what both libraries do right, every time
    for check_id in ("send.qos1", "receive.qos2", "receive.pubrel-unknown-id"):
        assert verdicts[check_id] == "pass", (check_id, report)
    assert verdicts["wire.receive-publish-qos3"] == "pass"
    for check in report["checks"]:
        assert check["evidence"] and check["rule_verdicts"]
        again = rejudge_client(check["id"], check["evidence"], V311, report["readings"])
        assert (again.verdict, again.message) == (check["verdict"], check["message"])
        assert dict(again.rule_verdicts) == check["rule_verdicts"]
    assert status == (0 if all(v in ("pass", "tolerated") for v in verdicts.values()) else 1)


def test_a_driver_that_cannot_do_the_plan_makes_the_check_not_applicable() -> None:
    check = BY_ID["send.qos0"]
    rules = check.rules_for(V311)
    unsupported: list[dict[str, Any]] = [
        {"event": "driver-start", "client": "driver", "argv": ["x"], "plan": {}, "t": 0.0},
        {"event": "app", "client": "app", "what": "unsupported", "message": "no 3.1", "t": 0.1},
        {"event": "timeout", "client": None, "waiting_for": "connection 1", "t": 6.0},
    ]  # fmt: skip
    judged = judge_client(check.judge, rules, unsupported, V311, {})
    assert judged.verdict == "not-applicable" and "no 3.1" in judged.message
    # without the driver's word, a client that never connects is an error
    silent = [unsupported[0], unsupported[2]]
    assert judge_client(check.judge, rules, silent, V311, {}).verdict == "error"
