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
from pubproof.pipeline.reconcile import distribution_summary, distribution_text

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
    # the cross-connection stage in the summary: its unknowns by reason, as reconciled
    spread, found = rec["distribution"], summary["distribution"]
    assert found["messages_in"] == spread["messages_in"] == spread["publish_in"] > 0
    assert found["copies_out"] == spread["copies_out"] == spread["publish_out"]
    for what in ("messages", "copies"):
        by_reason = found[f"{what}_unknown_by_reason"]
        assert by_reason == spread[f"{what}_unknown_by_reason"]
        unknown = {
            k: n for k, n in spread[f"{what}_by_outcome"].items() if k.startswith("unknown:")
        }
        assert sum(by_reason.values()) == sum(unknown.values())


def test_the_distribution_summary_in_words() -> None:
    """Every unknown counted under its reason; the stage skipped said so."""
    spread = {
        "servers": 2, "topics": 20, "messages_in": 1593, "copies_out": 13045,
        "messages_unknown_by_reason": {"not-acknowledged": 6, "capture-ended": 1200},
        "copies_unknown_by_reason": {},
    }  # fmt: skip
    assert distribution_summary({"distribution": spread}) == spread
    assert distribution_text({"distribution": spread}) == (
        "distribution: 1,593 messages in, 13,045 copies out (2 servers, 20 topics); unknown: "
        "1,206 messages (1,200 capture-ended, 6 not-acknowledged), 0 copies"
    )
    skipped = {"distribution": {"ok": True, "skipped": True, "publish_in": 3}}
    assert distribution_summary(skipped) == {"skipped": True}
    assert distribution_text(skipped) == "distribution: not judged (--no-distribution)"


def test_human_summary_and_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(SAMPLE), "--out", str(tmp_path / "o"), "--engine", "python"]) == 0
    printed = capsys.readouterr().out
    assert "frames" in printed and "nothing quarantined" in printed
    assert "\ndistribution: " in printed and " messages in, " in printed
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
