"""The single-process engine: reads the splits in order and streams every frame to its
connection's :class:`~pubproof.pipeline.connection.Tracker` as it comes.

Each tracker sees exactly the segments of its 4-tuple in frame order, as under Spark's
secondary sort, so both engines run the same per-connection code on the same input and
write the same tables. Spark is not imported here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pubproof.pipeline.capture import Plan
from pubproof.pipeline.connection import Config, Sink, Tracker
from pubproof.pipeline.source import QUARANTINE_GROUP, keyed_frames, problem_row
from pubproof.pipeline.summary import summarize

Rows = dict[str, list[tuple[Any, ...]]]
PROGRESS_FRAMES = 65536  # frames between two progress calls within a split


def run(
    plans: Sequence[Plan], config: Config, on_split: Callable[[int, int], None] | None = None
) -> Rows:
    """Every table's rows (unsorted); ``on_split(bytes, frames)`` reports what is done:
    the frames as they go, a split's bytes when it ends."""
    sink = Sink()
    for plan in plans:
        sink.quarantine.extend(problem_row(p) for p in plan.problems)
        trackers: dict[str, Tracker] = {}
        for split in plan.splits:
            done = 0
            for group, frame, value in keyed_frames(split):
                done += 1
                if on_split is not None and not done % PROGRESS_FRAMES:
                    on_split(0, PROGRESS_FRAMES)
                if group == QUARANTINE_GROUP:
                    sink.quarantine.append(value)
                    continue
                tracker = trackers.get(group)
                if tracker is None:
                    tracker = trackers[group] = Tracker(plan.capture, config, sink)
                tracker.feed(frame, value)
            if on_split is not None:
                on_split(split.end - split.start, split.frames - done + done % PROGRESS_FRAMES)
        for group in sorted(trackers):
            trackers[group].finish()
    rows: Rows = {
        "packets": sink.packets,
        "violations": sink.violations,
        "connections": sink.connections,
        "quarantine": sink.quarantine,
    }
    rows["summary"] = summarize(rows["violations"])
    return rows
