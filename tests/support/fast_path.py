"""The pipeline's per-connection fast path and its general path run on the same frames
(``Connection.FAST`` on and off), for the tests that hold them equal."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pubproof.pipeline.connection import Connection, Tracker
from pubproof.pipeline.connection_state import Config
from pubproof.pipeline.rows import Sink
from pubproof.pipeline.source import QUARANTINE_GROUP, inputs, keyed_frames, plans


def both_paths(keyed: Sequence[tuple[str, int, Any]], config: Config | None = None) -> Rows:
    config = config or Config()
    fast = run_rows(keyed, fast=True, config=config)
    general = run_rows(keyed, fast=False, config=config)
    for table in fast:
        assert fast[table] == general[table], table
    return fast


def keyed_capture(path: Path) -> list[tuple[str, int, Any]]:
    return [
        item for plan in plans(inputs([str(path)])) for s in plan.splits for item in keyed_frames(s)
    ]


Rows = dict[str, list[tuple[Any, ...]]]


def run_rows(keyed: Sequence[tuple[str, int, Any]], *, fast: bool, config: Config) -> Rows:
    saved = Connection.FAST
    Connection.FAST = fast
    try:
        sink = Sink()
        trackers: dict[str, Tracker] = {}
        for group, frame, value in keyed:
            if group == QUARANTINE_GROUP:
                continue
            tracker = trackers.get(group)
            if tracker is None:
                tracker = trackers[group] = Tracker("cap", config, sink)
            tracker.feed(frame, value)
        for group in sorted(trackers):
            trackers[group].finish()
        return {
            "packets": list(sink.packets),
            "violations": list(sink.violations),
            "connections": list(sink.connections),
            "events": list(sink.events),  # what the cross-connection stage reads
        }
    finally:
        Connection.FAST = saved
