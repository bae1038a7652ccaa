"""``pubproof check`` on the command line: the committed sample capture, the JSON line,
the report, usage errors, and the loud failure when frames or bytes do not reconcile
(shown by mutants that lose a frame or a byte count)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.builds import pure_only
from support.pipeline_builder import read_tables

from pubproof.main import main

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "mqtt-sample.pcapng"


def test_the_sample_capture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "check"
    assert main(["check", str(SAMPLE), "--out", str(out), "--engine", "python", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["frames_in"] == summary["frames_used"] + summary["frames_quarantined"]
    tables = read_tables(str(out))
    rules = sorted((r["rule"], r["role"]) for r in tables["violations"] if r["kind"] != "tolerated")
    assert rules == sorted(
        [
            ("MQTT-3.3.1-4", "client"),
            ("MQTT-3.3.2-2", "client"),
            ("MQTT-3.3.1-2", "client"),
            ("MQTT-2.3.1-1", "client"),
            ("MQTT-3.6.1-1", "client"),
            ("MQTT-4.3.3-1", "client"),
        ]
    )
    endpoints = {r["endpoint"] for r in tables["violations"]}
    assert all(isinstance(e, str) and e.startswith("crafted-") for e in endpoints)
    qos = {r["qos"] for r in tables["packets"] if r["type"] == "PUBLISH"}
    assert {0, 1, 2} <= qos
    assert any(r["first_frame"] != r["frame"] for r in tables["packets"])  # spans segments
    assert any("[::1]" in str(r["connection"]) for r in tables["connections"])
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "<svg" in html and "<script" not in html and "MQTT-4.3.3-1" in html
    rec = json.loads((out / "reconciliation.json").read_text(encoding="utf-8"))
    assert rec["ok"] and rec["bytes_unparsed"] == 0


def test_human_summary_and_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(SAMPLE), "--out", str(tmp_path / "o"), "--engine", "python"]) == 0
    printed = capsys.readouterr().out
    assert "frames" in printed and "nothing quarantined" in printed
    with pytest.raises(SystemExit) as stopped:
        main(
            [
                "check",
                str(tmp_path / "missing.pcap"),
                "--out",
                str(tmp_path / "o"),
                "--engine",
                "python",
            ]
        )
    assert stopped.value.code == 2


def test_a_directory_of_captures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "caps" / "deep"
    folder.mkdir(parents=True)
    (folder / "one.pcapng").write_bytes(SAMPLE.read_bytes())
    (folder / "notes.txt").write_text("not a capture")
    assert (
        main(
            [
                "check",
                str(tmp_path / "caps"),
                "--out",
                str(tmp_path / "o"),
                "--engine",
                "python",
                "--json",
                "--quiet",
            ]
        )
        == 0
    )
    tables = read_tables(str(tmp_path / "o"))
    assert {r["capture"] for r in tables["packets"]} == {str(folder / "one.pcapng")}


@pure_only
@pytest.mark.parametrize("mutant", ["lose-a-frame", "lose-unparsed-bytes", "frame-twice"])
def test_reconciliation_fails_loudly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, mutant: str
) -> None:
    from pubproof.pipeline import connection, framing

    if mutant == "lose-a-frame":
        original = connection.Connection.feed

        def feed(self: connection.Connection, frame: int, segment: object) -> None:
            if frame != 5:
                original(self, frame, segment)  # type: ignore[arg-type]

        monkeypatch.setattr(connection.Connection, "feed", feed)
    elif mutant == "frame-twice":
        original_track = connection.Tracker.feed

        def track(self: connection.Tracker, frame: int, segment: object) -> None:
            original_track(self, frame, segment)  # type: ignore[arg-type]
            if frame == 5:
                self.current.frames += 1  # type: ignore[union-attr]

        monkeypatch.setattr(connection.Tracker, "feed", track)
    else:
        monkeypatch.setattr(framing.Framer, "_unparsed", lambda self, reason, count: None)
    sample = SAMPLE if mutant != "lose-unparsed-bytes" else _with_garbage_session(tmp_path)
    status = main(
        ["check", str(sample), "--out", str(tmp_path / "o"), "--engine", "python", "--quiet"]
    )
    assert status == 1
    err = capsys.readouterr().err
    assert "RECONCILIATION FAILED" in err
    rec = json.loads((tmp_path / "o" / "reconciliation.json").read_text(encoding="utf-8"))
    assert rec["ok"] is False


def _with_garbage_session(tmp_path: Path) -> Path:
    from support.pipeline_builder import Conn, ether, pcap

    conn = Conn()
    frames = [*conn.handshake(), conn.segment("c2s", b"not mqtt at all"), *conn.close()]
    path = tmp_path / "g.pcap"
    path.write_bytes(pcap([ether(f) for f in frames]))
    return path
