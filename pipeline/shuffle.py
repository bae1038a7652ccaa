"""What the Spark engine shuffles: a split's frames in *chunks*, each the consecutive
frames of one 4-tuple (or of the quarantine) that a reader held at once, pickled once.

PySpark's shuffle costs per record, in Python: a partition function, a place in a bucket,
a pickling callback for every object that is not a builtin (cloudpickle's
``reducer_override``, for every segment), and a key function in the reducer's sort. A
chunk of ten or a thousand frames pays that once; its frames are pickled together by the
C pickler into one ``bytes`` value, which the shuffle then carries as it is.

Order: a chunk is keyed by (capture, 4-tuple, its first frame). A reader appends a
4-tuple's frames to its open chunk in frame order and starts a new chunk only after the
open one was emitted, and the splits of a capture hold disjoint, increasing frame ranges;
so sorting a 4-tuple's chunks by their first frame and reading each in order gives its
frames in frame order, exactly the order of a sort by frame.

Memory: a reader holds at most ``max_frames`` frames or about ``max_bytes`` of payload
(whichever comes first) before it emits every open chunk.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Iterator
from typing import Any

from pubproof.pipeline.capture import Split
from pubproof.pipeline.source import keyed_frames

#: frames a reader holds before it emits its chunks
CHUNK_FRAMES = 8192
#: payload bytes a reader holds before it emits its chunks
CHUNK_BYTES = 4 << 20

#: a chunk's key: (capture, 4-tuple group, first frame)
Key = tuple[str, str, int]


def chunks(
    split: Split, *, max_frames: int = CHUNK_FRAMES, max_bytes: int = CHUNK_BYTES
) -> Iterator[tuple[Key, bytes]]:
    """The split's keyed frames (:func:`pubproof.pipeline.source.keyed_frames`) as
    pickled chunks of ``[(frame, value), ...]``, keyed by their first frame."""
    capture = split.capture
    open_chunks: dict[str, list[tuple[int, Any]]] = {}
    frames = size = 0
    for group, frame, value in keyed_frames(split):
        chunk = open_chunks.get(group)
        if chunk is None:
            chunk = open_chunks[group] = []
        chunk.append((frame, value))
        frames += 1
        payload = getattr(value, "payload", None)
        size += len(payload) if isinstance(payload, bytes) else 0
        if frames >= max_frames or size >= max_bytes:
            yield from _emit(capture, open_chunks)
            frames = size = 0
    yield from _emit(capture, open_chunks)


def _emit(
    capture: str, open_chunks: dict[str, list[tuple[int, Any]]]
) -> Iterator[tuple[Key, bytes]]:
    for group, chunk in open_chunks.items():
        yield (capture, group, chunk[0][0]), pickle.dumps(chunk, pickle.HIGHEST_PROTOCOL)
    open_chunks.clear()


def frames(records: Iterable[tuple[Key, bytes]]) -> Iterator[tuple[Key, Any]]:
    """Chunks sorted by key, back to ``((capture, group, frame), value)`` per frame, in
    that order (the order of the frames themselves sorted by key)."""
    for (capture, group, _), data in records:
        for frame, value in pickle.loads(data):
            yield (capture, group, frame), value
