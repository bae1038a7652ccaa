"""The cross-connection stage of ``pubproof check``: every message followed from its
publisher through the server to each subscriber, on both engines.

The synthetic captures' server is a broker (:mod:`pubproof.pipeline.synth.broker`) with
faults injected in distribution (drop, duplicate, reorder, QoS upgraded, DUP propagated,
RETAIN kept on a live copy, a 5.0 property altered, an expired message delivered, the
retained message missed): each must be found under its rule on its subscriber's
connection, and nothing else. Every message in is accounted for (delivered, judged
undeliverable, or unknown with its reason), the partitions of the stage give the same rows
as one, and frames out of time order change nothing but their count.
"""

from __future__ import annotations

import json
import struct
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.pipeline_builder import read_tables, stage_events

from pubproof.judge.distribution_capture import PATIENCE
from pubproof.model.editions import Edition
from pubproof.model.topic_filters import subscription_matches
from pubproof.pipeline.connection_state import Config
from pubproof.pipeline.reconcile import reconcile
from pubproof.pipeline.run import Job, check
from pubproof.pipeline.servers import Stage, may_match, partition_of
from pubproof.pipeline.source import inputs, plans
from pubproof.pipeline.synth import SynthConfig, generate
from pubproof.pipeline.synth.broker import DistFault
from pubproof.pipeline.synth.check import compare_distribution, compare_violations
from pubproof.pipeline.tap import C2S, S2C, NullTap, Tap, digest

EVERY = tuple((f.value, 2) for f in DistFault)
#: all 3.1.1, faults of every kind (one of each per-connection one too)
PLAIN = SynthConfig(
    seed=21, frames=9000, connections=24, concurrent=14,
    inject=(("qos3", 1), ("qos1-on-held-id", 1), *EVERY),
)  # fmt: skip
#: half the connections 5.0: the 5.0 faults, and two editions on each server
MIXED = SynthConfig(seed=22, frames=9000, connections=24, concurrent=14, mqtt5=0.6, inject=EVERY)


def _made(tmp: pytest.TempPathFactory, config: SynthConfig, name: str) -> tuple[Path, Any]:
    path = tmp.mktemp(name) / f"{name}.pcap"
    return path, generate(config, path)


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, Path]:
    path, expected = _made(tmp_path_factory, PLAIN, "plain")
    out = path.parent / "out"
    check(Job(paths=[str(path)], out=str(out), engine="python"))
    return path, expected, out


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, Path]:
    path, expected = _made(tmp_path_factory, MIXED, "mixed")
    out = path.parent / "out"
    check(Job(paths=[str(path)], out=str(out), engine="python"))
    return path, expected, out


def _rows(out: Path, table: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = pq.read_table(out / table).to_pylist()
    return rows


@pytest.mark.parametrize("name", ["plain", "mixed"])
def test_each_broker_fault_is_found_under_its_rule_and_none_is_invented(
    name: str, request: pytest.FixtureRequest
) -> None:
    _, expected, out = request.getfixturevalue(name)
    violations = _rows(out, "violations")
    comparison = compare_distribution(expected, violations)
    assert comparison.ok, comparison.problems
    assert compare_violations(expected, violations).ok  # and the per-connection ones
    injected = Counter(r["fault"] for r in expected["distribution"])
    wanted = {f for f in DistFault if not f.v5_only} if name == "plain" else set(DistFault)
    assert {DistFault(f) for f in injected} >= wanted, injected
    found = [r for r in violations if r["source"] == "distribution"]
    assert found and all(r["role"] == "server" for r in found)
    for row in found:  # a trace across the connections involved, reported at its last
        trace = json.loads(row["evidence"])
        assert trace[-1]["conn"] == row["connection"] and trace[-1]["frame"] == row["frame"]
        assert "payload_digest" in json.dumps(trace) or row["kind"] == "missing"


@pytest.mark.parametrize("name", ["plain", "mixed"])
def test_every_message_in_is_accounted_for(name: str, request: pytest.FixtureRequest) -> None:
    _, expected, out = request.getfixturevalue(name)
    spread = json.loads((out / "reconciliation.json").read_text())["distribution"]
    assert spread["ok"] and spread["servers"] == 2  # an IPv4 and an IPv6 server
    assert (
        spread["messages_in"]
        == spread["publish_in"]
        == expected["packets_by_direction"]["c2s"] - _not_publish(out, "c2s")
    )
    assert sum(spread["messages_by_outcome"].values()) == spread["messages_in"]
    assert sum(spread["copies_by_outcome"].values()) == spread["copies_out"]
    faults = Counter(r["fault"] for r in expected["distribution"])
    # the broker drops only what its faults drop (a message is missing when no session
    # got it and one was owed it: a drop towards one of several subscribers leaves it
    # delivered); every other message was delivered, had no subscriber, was never
    # acknowledged (the flow fault's), or expired (5.0)
    outcomes = spread["messages_by_outcome"]
    assert outcomes.get("missing", 0) <= faults["drop"]
    allowed = {"delivered", "no-subscriber", "missing", "unknown:not-acknowledged", "expired"}
    if name == "mixed":
        allowed |= {"unknown:other-edition", "unknown:ambiguous"}
    assert set(outcomes) <= allowed, outcomes
    rows = _rows(out, "deliveries")
    copies = [r for r in rows if r["direction"] == "out" and r["in_frame"] is not None]
    assert copies and all(r["latency"] >= 0 for r in copies)
    ins = {(r["connection"], r["frame"], r["offset"]): r for r in rows if r["direction"] == "in"}
    for r in copies:  # each copy names its message (of its topic), which counts it
        message = ins[r["in_connection"], r["in_frame"], r["in_offset"]]
        assert message["topic"] == r["topic"]
        if r["outcome"] in ("copy", "again"):
            assert message["copies"] >= 1
    # a message in is its own: its place, no latency, no properties changed, its copies
    for r in ins.values():
        assert (r["in_connection"], r["in_frame"], r["in_offset"]) == (
            r["connection"], r["frame"], r["offset"]
        )  # fmt: skip
        assert r["latency"] is None and r["properties_changed"] is None and r["copies"] is not None
    assert all(r["copies"] is None for r in rows if r["direction"] == "out")


def _not_publish(out: Path, direction: str) -> int:
    """Packets of ``direction`` that are no sound PUBLISH."""
    return sum(
        1
        for r in _rows(out, "packets")
        if r["direction"] == direction
        and not (r["type"] == "PUBLISH" and r["error_rule"] is None and r["edition"])
    )


def _judged(rows: list[tuple[Any, ...]], count: int) -> tuple[list[Any], list[Any], Counter[str]]:
    deliveries: list[Any] = []
    violations: list[Any] = []
    figures: Counter[str] = Counter()
    for partition in range(count):
        stage = Stage(count=count, partition=partition)
        stage.run(rows)
        deliveries += stage.deliveries
        violations += stage.violations
        figures.update(stage.figures)
    return sorted(deliveries, key=repr), sorted(violations, key=repr), figures


def test_partitions_of_the_stage_give_the_rows_of_one(mixed: tuple[Path, Any, Path]) -> None:
    """A topic's judgement needs its rows and its server's sessions only: three partitions
    (each judging its topics, every one reading the sessions) give what one gives."""
    rows = stage_events(mixed[0])
    one = _judged(rows, 1)
    three = _judged(rows, 3)
    assert one == three
    assert one[2]["topics"] > 10 and one[2]["servers"] == 2
    assert len({partition_of("c", "s", str(t), 3) for t in range(30)}) == 3


def test_both_engines_write_the_same_tables(mixed: tuple[Path, Any, Path], tmp_path: Path) -> None:
    out = tmp_path / "spark"
    check(Job(paths=[str(mixed[0])], out=str(out), engine="spark", partitions=3,
              split_bytes=400_000))  # fmt: skip
    assert read_tables(str(out)) == read_tables(str(mixed[2]))
    assert not (out / "events").exists() and not (mixed[2] / "events").exists()


def _shifted(source: Path, target: Path, every: int, seconds: float) -> int:
    """A copy of a classic pcap with every ``every``-th record stamped ``seconds``
    earlier; how many were."""
    data = bytearray(source.read_bytes())
    endian = "<" if data[:4] == b"\xd4\xc3\xb2\xa1" else ">"
    pos, frame, moved = 24, 0, 0
    while pos + 16 <= len(data):
        sec, usec, caplen, _ = struct.unpack_from(endian + "IIII", data, pos)
        frame += 1
        if frame % every == 0:
            stamp = sec * 1_000_000 + usec - int(seconds * 1_000_000)
            struct.pack_into(endian + "II", data, pos, stamp // 1_000_000, stamp % 1_000_000)
            moved += 1
        pos += 16 + caplen
    target.write_bytes(bytes(data))
    return moved


def test_frames_out_of_time_order_change_nothing_but_their_count(
    plain: tuple[Path, Any, Path], tmp_path: Path
) -> None:
    """Frames stamped earlier than the frame before them: each connection's events keep
    the connection's own order (their time made non-decreasing, the skew counted); the
    findings and what became of every message stay those of the capture in order."""
    path, _, out = plain
    shifted = tmp_path / "shifted.pcap"
    assert _shifted(path, shifted, 97, 0.0005) > 50
    again = tmp_path / "out"
    check(Job(paths=[str(shifted)], out=str(again), engine="python"))
    spread = json.loads((again / "reconciliation.json").read_text())["distribution"]
    before = json.loads((out / "reconciliation.json").read_text())["distribution"]
    assert spread["events_out_of_time_order"] > 0 == before["events_out_of_time_order"]
    assert spread["messages_by_outcome"] == before["messages_by_outcome"]

    def found(folder: Path) -> Counter[tuple[str, str]]:
        return Counter(
            (r["rule"], r["kind"]) for r in _rows(folder, "violations")
            if r["source"] == "distribution"
        )  # fmt: skip

    assert found(again) == found(out)


def test_a_lost_delivery_row_fails_the_reconciliation(plain: tuple[Path, Any, Path]) -> None:
    """The accounting is checked against the packets table: a row the stage lost (here,
    the deliveries table's last row taken away) fails the run."""
    import pyarrow as pa

    path, _, out = plain
    planned = plans(inputs([str(path)]))
    assert reconcile(str(out), planned)["ok"]
    table = pq.read_table(out / "deliveries")
    broken = out.parent / "broken"
    for name in ("packets", "connections", "quarantine", "violations"):
        (broken / name).mkdir(parents=True, exist_ok=True)
        pq.write_table(pq.read_table(out / name), broken / name / "part-00000.parquet")
    (broken / "deliveries").mkdir()
    pq.write_table(table.slice(0, table.num_rows - 1), broken / "deliveries" / "p.parquet")
    result = reconcile(str(broken), planned)
    assert not result["ok"] and not result["distribution"]["ok"]
    assert pa is not None


_LEVEL = st.sampled_from(["a", "b", "+", "é", ""])


@given(st.lists(_LEVEL, min_size=1, max_size=4), st.lists(_LEVEL, min_size=1, max_size=4),
       st.booleans(), st.booleans())  # fmt: skip
def test_the_stage_keeps_every_session_a_topic_may_need(
    levels: list[str], names: list[str], hashed: bool, shared: bool
) -> None:
    """:func:`may_match` is true wherever the judge's match is, in every edition (a
    session left out of a topic's judgement would make its copies look unowed)."""
    topic = "/".join(n.replace("+", "x") for n in names)
    topic_filter = "/".join(levels) + ("/#" if hashed else "")
    if shared:
        topic_filter = f"$share/g/{topic_filter}"
    for edition in (Edition.V311, Edition.V50):
        try:
            matched = subscription_matches(topic_filter, topic, edition, {})
        except ValueError:
            continue
        if matched:
            assert may_match(topic_filter, topic), (topic_filter, topic, edition)


def test_the_default_patience_is_the_judges() -> None:
    assert Config().patience == PATIENCE


def test_the_tap_routes_acknowledgements_and_digests_payloads() -> None:
    rows: list[tuple[Any, ...]] = []
    tap = Tap("c", "s:1883", "c:conn", rows)
    tap.publish(C2S, 1, 1.0, 1, 0, False, 2, False, "t/1", 7, b"payload", None)
    tap.ack(S2C, 2, 1.1, 2, 0, "PUBREC", 7, None)
    tap.ack(C2S, 3, 1.2, 3, 4, "PUBREL", 7, None)
    tap.ack(S2C, 4, 1.3, 4, 4, "PUBCOMP", 7, None)  # the judge reads none: not written
    tap.ack(C2S, 5, 0.9, 5, 8, "PUBACK", 7, None)  # its flow is over: no topic; stamped early
    assert [(r[10], r[2]) for r in rows] == [
        ("PUBLISH", "t/1"), ("PUBREC", "t/1"), ("PUBREL", "t/1"), ("PUBACK", None),
    ]  # fmt: skip
    assert rows[-1][3] == 1.2 and rows[-1][19] == pytest.approx(0.3)  # kept in order
    assert [r[6] for r in rows] == [1, 2, 3, 4]
    assert digest(b"") == "" and digest(b"a") != digest(b"b") and len(digest(b"a")) == 16
    assert rows[0][16] == digest(b"payload") and rows[0][17] == len(b"payload")


def _feed(tap: Tap) -> None:
    """One event of every kind a tap takes."""
    tap.publish(C2S, 1, 1.0, 1, 0, False, 1, False, "t/1", 7, b"x", None)
    tap.ack(S2C, 2, 1.1, 2, 0, "PUBACK", 7, None)
    tap.publish(S2C, 3, 1.2, 3, 0, False, 2, False, "t/1", 8, b"y", None)
    tap.control(C2S, 4, 1.3, 4, 0, {"type": "SUBSCRIBE", "packet_id": 1})
    tap.lost(C2S, 5, 1.4)
    tap.close_at = (6, 1.5)
    tap.closed()


def test_a_null_tap_writes_nothing_and_keeps_no_flows() -> None:
    """``--no-distribution``: no event is built (nothing would read it, so no table shows
    a null tap that writes: this test is what holds it), and no flow is kept."""
    rows: list[tuple[Any, ...]] = []
    null = NullTap("c", "s:1883", "c:conn", rows)
    _feed(null)
    assert rows == [] and null.flows == {C2S: {}, S2C: {}} and null.seq == 0
    _feed(Tap("c", "s:1883", "c:conn", rows))  # the same events, written by a tap
    assert [r[10] for r in rows] == ["PUBLISH", "PUBACK", "PUBLISH", "SUBSCRIBE", "lost", "closed"]


def test_the_report_shows_each_server_and_topic_and_links_each_finding_to_its_trace(
    plain: tuple[Path, Any, Path],
) -> None:
    _, _, out = plain
    page = (out / "report.html").read_text()
    part = page[page.index("<h2>Distribution") :]
    found = [r for r in _rows(out, "violations") if r["source"] == "distribution"]
    assert 'aria-label="delivery latency per topic"' in part and "99th percentile" in part
    assert part.count('<h4 id="distribution-') == len(found)
    for anchor in {part[i + 7 : part.index('"', i + 7)] for i in _all(part, 'href="#')}:
        assert f'id="{anchor}"' in part  # each link lands on a finding's trace
    assert "192.168.0.1:1883" in part and "[fd00::1883]:1883" in part


def _all(text: str, needle: str) -> list[int]:
    found, at = [], text.find(needle)
    while at >= 0:
        found.append(at)
        at = text.find(needle, at + 1)
    return found


def test_the_reports_counts_and_latencies_are_the_deliveries_tables(
    plain: tuple[Path, Any, Path],
) -> None:
    """The section's messages in, copies out and sorted latencies per (server, topic),
    counted by Arrow, against the rows themselves (a Python oracle)."""
    from pubproof.pipeline import report_distribution

    _, _, out = plain
    want: dict[tuple[str, str], list[Any]] = {}
    for row in _rows(out, "deliveries"):
        entry = want.setdefault((row["server"], row["topic"]), [0, 0, []])
        entry[0 if row["direction"] == "in" else 1] += 1
        if row["direction"] == "out" and row["latency"] is not None:
            entry[2].append(row["latency"])
    topics, latencies = report_distribution._counted(str(out))
    keys = sorted(topics)
    latencies(keys[::2])  # those shown get theirs; the others none
    assert len(keys) > 4
    for i, key in enumerate(keys):
        got = topics[key]
        wanted = want[key]
        assert (got.messages, got.copies) == (wanted[0], wanted[1])
        assert got.latencies == (sorted(wanted[2]) if i % 2 == 0 else [])
    assert any(topics[k].latencies for k in keys[::2])
    empty = out.parent / "empty"
    (empty / "deliveries").mkdir(parents=True)
    assert report_distribution._counted(str(empty))[0] == {}


def test_the_report_is_made_in_the_commands_own_process(
    plain: tuple[Path, Any, Path], tmp_path: Path
) -> None:
    """``pubproof check`` as users run it: one process, where numpy and pandas are hidden
    from pyarrow (pubproof.pipeline.optional_imports); the section's latencies are still
    taken (with Arrow alone)."""
    import subprocess
    import sys

    path, _, _ = plain
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "pubproof", "check", str(path), "--engine", "python",
         "--out", str(out), "--quiet"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    part = (out / "report.html").read_text()
    assert 'aria-label="delivery latency per topic"' in part and "99th percentile" in part
