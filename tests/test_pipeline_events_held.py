"""The python engine's events held in memory (:mod:`pubproof.pipeline.events_held`): the
rows come back grouped as the ``events`` table's order (the oracle: Python's sort by the
table's own key, nulls first), each connection's run in its order, the same whether held
or spilled to the scratch file (which is gone afterwards); and a check with the stage
gives the same tables either way. Mutants the checks kill: the sessions (topic null)
placed by an empty topic name, a group's rows in arrival order, the order within a group
without the connection, the spill losing the rows held before it, a run's chunks read
back in another order, the rows held after a spill read before its chunks."""

from __future__ import annotations

import os
import random
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.builds import pure_only
from support.pipeline_builder import read_tables

from pubproof.pipeline import events_held
from pubproof.pipeline.events_held import HeldEvents
from pubproof.pipeline.run import Job, check
from pubproof.pipeline.servers import ORDER_KEY
from pubproof.pipeline.synth import SynthConfig, generate
from pubproof.pipeline.synth.broker import DistFault
from pubproof.pipeline.tables import EVENTS, sort_key

Row = tuple[Any, ...]
WIDTH = len(EVENTS)


def _connection_rows(rnd: random.Random, capture: str, server: str, connection: str) -> list[Row]:
    """One connection's rows in its own order: time never goes back, ties on it often,
    topics of a few names, an empty one and none (its sessions)."""
    rows, t = [], 0.0
    for seq in range(1, rnd.randint(1, 12)):
        t += rnd.choice([0.0, 0.0, 0.5, 1.0])
        row: list[Any] = [None] * WIDTH
        row[:9] = [capture, server, rnd.choice([None, "", "a", "a/b", "é"]), t,
                   int(t * 2) + rnd.randint(0, 1), connection, seq, seq, 0]  # fmt: skip
        row[9], row[10] = "c2s", "PUBLISH"
        rows.append(tuple(row))
    return rows


def _capture(seed: int) -> list[list[Row]]:
    rnd = random.Random(seed)
    return [
        _connection_rows(rnd, capture, server, f"{server}-{n}")
        for capture in ("x.pcap", "y.pcap")
        for server in ("10.0.0.1:1883", "10.0.0.2:1883")
        for n in range(rnd.randint(1, 4))
    ]


def _interleaved(connections: list[list[Row]], seed: int) -> list[list[Row]]:
    """The connections' rows interleaved at random (each kept in its order), in chunks as
    the engine flushes them."""
    rnd = random.Random(seed)
    queues = [list(rows) for rows in connections]
    merged: list[Row] = []
    while any(queues):
        queue = rnd.choice([q for q in queues if q])
        merged.append(queue.pop(0))
    chunks, start = [], 0
    while start < len(merged):
        size = rnd.randint(1, 9)
        chunks.append(merged[start : start + size])
        start += size
    return chunks


def _table_order(rows: list[Row]) -> list[Row]:
    """The rows handed over, each group sorted by the stage's order: the table's order
    if they were grouped right."""
    groups: dict[tuple[Any, ...], list[Row]] = {}
    for row in rows:
        groups.setdefault(row[:3], []).append(row)
    return [row for group in groups.values() for row in sorted(group, key=ORDER_KEY)]


def _runs_in_order(rows: list[Row]) -> bool:
    """Whether each (capture, server, topic, connection)'s rows are one run, in order."""
    seen: dict[tuple[Any, ...], int] = {}
    last: tuple[Any, ...] | None = None
    for row in rows:
        run = (*row[:3], row[5])
        if run != last and run in seen:
            return False
        if seen.get(run, 0) >= row[6]:
            return False
        seen[run], last = row[6], run
    return True


def _handed(chunks: list[list[Row]], most: int) -> tuple[list[Row], bool, bool]:
    with tempfile.TemporaryDirectory() as out:
        held = HeldEvents(out, most=most)
        for chunk in chunks:
            held.add(chunk)
        spilled = held.spilled
        rows = list(held.rows())
        return (
            rows,
            spilled,
            os.path.exists(held.path) or os.path.exists(os.path.join(out, "events")),
        )


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), most=st.sampled_from([0, 5, 40, 10_000]))
def test_rows_come_back_grouped_in_the_tables_order(seed: int, most: int) -> None:
    connections = _capture(seed)
    every = [row for rows in connections for row in rows]
    rows, spilled, left = _handed(_interleaved(connections, seed), most)
    assert _table_order(rows) == sorted(every, key=sort_key("events"))
    assert _runs_in_order(rows)
    assert spilled == (len(every) > most)
    assert not left  # the scratch file is removed once read


def test_held_and_spilled_alike_on_one_capture() -> None:
    connections = _capture(7)
    chunks = _interleaved(connections, 7)
    held, spilled_not, _ = _handed(chunks, 10_000)
    spilled, spilled_yes, _ = _handed(chunks, 3)
    assert not spilled_not and spilled_yes
    assert held == spilled  # by connection, each run in its order, spilled or not
    assert _table_order(held) == sorted(held, key=sort_key("events"))
    # the sessions (no topic) of each server come before its topics, "" among the topics
    first = held[0]
    assert first[2] is None


@pure_only  # patches a constant a compiled module has built in
def test_check_tables_alike_held_or_spilled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A synthetic capture with the broker's distribution faults, checked with the events
    held and with them spilled after 100 rows: every table alike, findings among them."""
    path = tmp_path / "faults.pcap"
    generate(SynthConfig(seed=5, frames=4000, connections=12, concurrent=8,
                         inject=tuple((f.value, 1) for f in DistFault)), path)  # fmt: skip
    tables = []
    for most in (events_held.MOST_HELD, 100):
        monkeypatch.setattr(events_held, "MOST_HELD", most)
        out = tmp_path / f"out-{most}"
        check(Job(paths=[str(path)], out=str(out), engine="python"))
        tables.append(read_tables(str(out)))
        assert not (out / "events").exists()
    assert tables[0] == tables[1]
    assert any(row["source"] == "distribution" for row in tables[0]["violations"])
