"""``pubproof decode`` and ``pubproof encode``: the exact contract, run as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT

EXAMPLE_HEX = "32090003612f62000a6869"
EXAMPLE_P = {
    "type": "PUBLISH", "dup": False, "qos": 1, "retain": False, "topic": "a/b",
    "packet_id": 10, "payload_hex": "6869",
}  # fmt: skip


def run(args: list[str], stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pubproof", *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )


def test_decode_contract() -> None:
    lines = [
        EXAMPLE_HEX,
        "32 09 00 03 61 2f 62 00 0a 68 69 40020001",
        "",
        "36",
        EXAMPLE_HEX + "3209",
        "xyz",
        "3004000261 2b",
    ]
    result = run(["decode"], "\n".join(lines) + "\n")
    assert result.returncode == 0, result.stderr
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(out) == len(lines)
    assert out[0] == {"ok": True, "packets": [EXAMPLE_P]}
    assert out[1] == {"ok": True, "packets": [EXAMPLE_P, {"type": "PUBACK", "packet_id": 1}]}
    assert out[2] == {"ok": True, "packets": []}
    assert out[3]["ok"] is False and out[3]["error"]["rule"] == "MQTT-3.3.1-4"
    assert out[3]["error"]["offset"] == 0 and out[3]["error"]["message"]
    assert out[4]["packets"] == [EXAMPLE_P]
    assert out[4]["error"]["rule"] == "incomplete" and out[4]["error"]["offset"] == 11
    assert out[5]["error"]["rule"] == "PP-input-not-hex"
    assert out[6]["error"] == {
        "rule": "MQTT-3.3.2-2", "offset": 5, "message": "the topic name contains the wildcard '+'"
    }  # fmt: skip


def test_decode_edition_and_readings() -> None:
    dup0 = "3803000161"
    assert json.loads(run(["decode"], dup0).stdout)["error"]["rule"] == "MQTT-3.3.1-2"
    assert json.loads(run(["decode", "--edition", "3.1"], dup0).stdout)["ok"] is True
    strict = run(["decode", "--edition", "3.1", "--reading", "dup-qos0=reject"], dup0)
    assert json.loads(strict.stdout)["error"]["rule"] == "PP31-3.3-dup-qos0"
    model = run(["decode", "--engine", "model"], dup0)
    assert json.loads(model.stdout)["error"]["rule"] == "MQTT-3.3.1-2"


@pytest.mark.parametrize(
    "args",
    [
        ["--reading", "qos3=accept"],
        ["--reading", "nope=1"],
        ["--reading", "rl-encoding"],
        ["--edition", "5"],
    ],
)
def test_bad_options_are_usage_errors(args: list[str]) -> None:
    result = run(["decode", *args], "")
    assert result.returncode == 2
    assert "error" in result.stderr


def test_encode_contract() -> None:
    lines = [
        json.dumps(EXAMPLE_P),
        json.dumps({"type": "PUBCOMP", "packet_id": 65535}),
        "not json",
        json.dumps({"type": "PUBLISH", "topic": "a/#", "qos": 0, "packet_id": None,
                    "dup": False, "retain": False, "payload_hex": ""}),
        json.dumps({"type": "PUBLISH", "topic": "a", "qos": 0, "packet_id": 4,
                    "dup": False, "retain": False, "payload_hex": ""}),
        json.dumps({"type": "PUBACK", "packet_id": 1}),
    ]  # fmt: skip
    result = run(["encode"], "\n".join(lines) + "\n")
    assert result.returncode == 1
    out = result.stdout.splitlines()
    assert len(out) == len(lines)
    assert out[0] == EXAMPLE_HEX
    assert out[1] == "7002ffff"
    assert json.loads(out[2])["error"]["rule"] == "PP-input-not-json"
    assert json.loads(out[3])["error"]["rule"] == "MQTT-3.3.2-2"
    assert json.loads(out[4])["error"]["rule"] == "MQTT-2.3.1-5"
    assert out[5] == "40020001"
    assert run(["encode"], json.dumps(EXAMPLE_P) + "\n").returncode == 0


def test_encode_names_the_rule_of_the_chosen_edition() -> None:
    line = json.dumps({"type": "PUBLISH", "topic": "a", "qos": 1, "packet_id": 0,
                       "dup": False, "retain": False, "payload_hex": ""})  # fmt: skip
    out = run(["encode", "--edition", "3.1"], line + "\n").stdout
    assert json.loads(out)["error"]["rule"] == "PP31-3.3-message-id-nonzero"


def test_decode_and_encode_stream_line_by_line() -> None:
    """Each answer comes out before the next line goes in: nothing waits for the end."""
    for command, line, expected in (
        ("decode", EXAMPLE_HEX, '"ok": true'),
        ("encode", json.dumps(EXAMPLE_P), EXAMPLE_HEX),
    ):
        process = subprocess.Popen(
            [sys.executable, "-m", "pubproof", command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            bufsize=1,
        )
        assert process.stdin is not None and process.stdout is not None
        try:
            for _ in range(3):
                process.stdin.write(line + "\n")
                process.stdin.flush()
                assert expected in process.stdout.readline()
        finally:
            process.stdin.close()
            process.wait(timeout=30)


def test_round_trip_through_both_commands() -> None:
    decoded = run(["decode"], EXAMPLE_HEX + "\n").stdout
    packets = json.loads(decoded)["packets"]
    encoded = run(["encode"], "\n".join(json.dumps(p) for p in packets) + "\n").stdout
    assert "".join(encoded.split()) == EXAMPLE_HEX


def test_vectors_check_command() -> None:
    corpus = str(ROOT / "vectors" / "corpus.jsonl")
    result = subprocess.run(
        [sys.executable, "-m", "pubproof", "vectors", "--check", corpus],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-2000:]
    assert "cases agree" in result.stdout
