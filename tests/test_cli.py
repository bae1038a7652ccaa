"""``pubproof decode`` and ``pubproof encode``: the exact contract, run as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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


# --- MQTT 5.0 ---------------------------------------------------------------------------

FIVE_P = {
    "type": "PUBLISH", "dup": False, "qos": 1, "retain": False, "topic": "", "packet_id": 10,
    "payload_hex": "6869",
    "properties": {"topic_alias": 3, "user_properties": [["k", "v"], ["k", "w"]],
                   "subscription_identifiers": [7, 300], "correlation_data_hex": "00ff"},
}  # fmt: skip


@pytest.mark.parametrize("engine", ["reference", "model"])
def test_decode_5_0_contract(engine: str) -> None:
    encoded = run(["encode", "--edition", "5.0"], json.dumps(FIVE_P) + "\n")
    assert encoded.returncode == 0, encoded.stdout + encoded.stderr
    hex_line = encoded.stdout.strip()
    lines = [
        hex_line,
        "40020001 4003000110 50040001 0000 6203000192",
        "32090003612f62000a6869",  # a 3.1.1 PUBLISH: its payload read as a Property Length
        "3006000003230001",  # an alias above the default Topic Alias Maximum (0)
    ]
    args = ["decode", "--edition", "5.0", "--engine", engine]
    out = [json.loads(line) for line in run(args, "\n".join(lines) + "\n").stdout.splitlines()]
    first = out[0]["error"]
    assert (first["rule"], first["offset"], first["reason_code"]) == (
        "PP50-3.3.4-topic-alias-maximum",
        7,  # the Topic Alias: after the topic length, packet id and Property Length
        0x94,
    )
    assert out[1] == {
        "ok": True,
        "packets": [
            {"type": "PUBACK", "packet_id": 1, "reason_code": 0, "properties": {}},
            {"type": "PUBACK", "packet_id": 1, "reason_code": 0x10, "properties": {}},
            {"type": "PUBREC", "packet_id": 1, "reason_code": 0, "properties": {}},
            {"type": "PUBREL", "packet_id": 1, "reason_code": 0x92, "properties": {}},
        ],
    }
    assert out[2]["error"]["rule"] == "PP50-2.2.2-property-length"
    assert out[2]["error"]["reason_code"] == 0x81
    assert out[3]["error"]["rule"] == "PP50-3.3.4-topic-alias-maximum"
    with_aliases = run([*args, "--topic-alias-maximum", "3"], hex_line + "\n")
    assert json.loads(with_aliases.stdout) == {"ok": True, "packets": [FIVE_P]}
    small = run([*args, "--maximum-packet-size", "4"], "4003000110\n")
    error = json.loads(small.stdout)["error"]
    assert (error["rule"], error["reason_code"]) == ("PP50-3.1.2-packet-too-large", 0x95)


def test_encode_5_0_writes_the_shortest_form_and_refuses() -> None:
    lines = [
        {"type": "PUBACK", "packet_id": 1},
        {"type": "PUBACK", "packet_id": 1, "reason_code": 0, "properties": {}},
        {"type": "PUBREC", "packet_id": 1, "reason_code": 0x80},
        {"type": "PUBCOMP", "packet_id": 1, "reason_code": 0, "properties": {"reason_string": "x"}},
        {"type": "PUBREL", "packet_id": 1, "reason_code": 0x10},
        {**FIVE_P, "properties": {"topic_alias": 0}},
    ]
    result = run(["encode", "--edition", "5.0"], "\n".join(map(json.dumps, lines)) + "\n")
    out = result.stdout.splitlines()
    assert out[:4] == ["40020001", "40020001", "5003000180", "7008000100041f000178"]
    assert json.loads(out[4])["error"]["rule"] == "MQTT-3.6.2-1"
    assert json.loads(out[5])["error"]["rule"] == "MQTT-3.3.2-8"
    assert result.returncode == 1


def test_3_1_1_output_has_no_5_0_keys_and_limits_are_5_0_only() -> None:
    out = json.loads(run(["decode"], "40020001\n").stdout)
    assert out == {"ok": True, "packets": [{"type": "PUBACK", "packet_id": 1}]}
    refused = run(["decode", "--topic-alias-maximum", "3"], "40020001\n")
    assert refused.returncode == 2 and "5.0" in refused.stderr


def test_a_subcommand_imports_only_its_own_module() -> None:
    """``pubproof check`` does not import the probe's modules (0.1 s of every run), while
    the help and a mistyped command still know every subcommand."""
    script = (
        "import sys\n"
        "from pubproof.main import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('pubproof.probe')))\n"
    )
    for args, probe_loaded, shown in (
        (["check", "--help"], False, "usage: pubproof check"),
        (["--help"], True, "judge captured MQTT traffic"),
    ):
        result = subprocess.run(
            [sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=60
        )
        assert result.returncode == 0, result.stderr
        assert (result.stdout.strip().splitlines()[-1] != "[]") == probe_loaded
        assert shown in result.stdout
    typo = run(["chek"], "")
    assert typo.returncode == 2
    assert "'check'" in typo.stderr and "'probe-client'" in typo.stderr


def test_the_process_exits_with_main_status_and_its_objects_frozen(tmp_path: Path) -> None:
    """``pubproof`` and ``python -m pubproof`` exit with :func:`main`'s status, the
    collector's objects frozen first (the interpreter's exit then does not walk them:
    0.1 to 0.25 s of CPU after a large ``pubproof check``), while ``atexit`` handlers
    still run; :func:`main` called in a process that goes on freezes nothing."""
    script = (
        "import atexit, gc, sys\n"
        "from pubproof.main import command, main\n"
        "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0, flush=True))\n"
        "if sys.argv[1] == 'main':\n"
        "    main(sys.argv[2:])\n"
        "    print('after main', gc.get_freeze_count(), flush=True)\n"
        "else:\n"
        "    sys.argv[1:] = sys.argv[2:]\n"
        "    command()\n"
    )
    ok = subprocess.run(
        [sys.executable, "-c", script, "command", "decode"],
        input="40020001\n", capture_output=True, text=True, check=False, cwd=ROOT,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.splitlines()[-1] == "frozen True"
    junk = tmp_path / "junk.bin"
    junk.write_bytes(bytes(range(256)))  # not a capture: `check` returns 3
    refused = subprocess.run(
        [sys.executable, "-c", script, "command", "check", str(junk), "--out",
         str(tmp_path / "out"), "--engine", "python", "--quiet"],
        capture_output=True, text=True, check=False, cwd=ROOT,
    )  # fmt: skip
    assert refused.returncode == 3 and refused.stdout.splitlines()[-1] == "frozen True"
    library = subprocess.run(
        [sys.executable, "-c", script, "main", "decode"],
        input="40020001\n", capture_output=True, text=True, check=False, cwd=ROOT,
    )  # fmt: skip
    assert library.stdout.splitlines()[-2:] == ["after main 0", "frozen False"]


def test_the_script_and_python_m_enter_through_command() -> None:
    """The installed ``pubproof`` script names :func:`command`, and ``python -m pubproof``
    (``__main__``, run as the interpreter runs it) goes through it: an ``atexit`` handler
    sees the collector's objects frozen."""
    from importlib.metadata import entry_points

    (script,) = entry_points(group="console_scripts", name="pubproof")
    assert script.value == "pubproof.main:command"
    runner = (
        "import atexit, gc, runpy, sys\n"
        "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0, flush=True))\n"
        "sys.argv[0] = 'pubproof'\n"
        "runpy.run_module('pubproof', run_name='__main__', alter_sys=True)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", runner, "decode"],
        input="40020001\n", capture_output=True, text=True, check=False, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["ok"] is True
    assert done.stdout.splitlines()[-1] == "frozen True"


def test_check_as_the_command_line_spares_pyarrow_importing_numpy_and_pandas(
    tmp_path: Path,
) -> None:
    """``pubproof check --engine python`` run as the command line (:func:`command`) lets
    pyarrow note "no numpy" at its import and "no pandas" before its first conversion,
    which would otherwise import them (0.16 s and 0.14 s of CPU) for objects the engine
    never hands it; :func:`main` called in a process that goes on leaves pyarrow as it is
    (it imports both there). Both write the same tables."""
    import pyarrow.parquet as pq

    script = (
        "import atexit, sys\n"
        "from pubproof.main import command, main\n"
        "atexit.register(lambda: print(*(m in sys.modules for m in ('numpy', 'pandas')),"
        " flush=True))\n"
        "if sys.argv[1] == 'main':\n"
        "    sys.exit(main(sys.argv[2:]))\n"
        "sys.argv[1:] = sys.argv[2:]\n"
        "command()\n"
    )
    sample = str(ROOT / "samples" / "mqtt-sample.pcapng")
    seen = {}
    for entry in ("command", "main"):
        done = subprocess.run(
            [sys.executable, "-c", script, entry, "check", sample, "--out",
             str(tmp_path / entry), "--engine", "python", "--quiet"],
            capture_output=True, text=True, check=False, cwd=ROOT,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        seen[entry] = done.stdout.splitlines()[-1]
    # numpy, then pandas, imported at exit
    assert seen == {"command": "False False", "main": "True True"}
    for table in ("packets", "violations", "connections", "quarantine", "summary"):
        ours, library = (pq.read_table(tmp_path / e / table) for e in ("command", "main"))
        assert ours.equals(library) and ours.num_rows == library.num_rows
