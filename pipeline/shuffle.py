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
from pubproof.pipeline.fast.layout import new_tuple
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
    pickled chunks of one group's frames and values, keyed by their first frame."""
    capture = split.capture
    open_chunks: dict[str, _Chunk] = {}
    held = size = 0
    for group, frame, value in keyed_frames(split):
        chunk = open_chunks.get(group)
        if chunk is None:
            chunk = open_chunks[group] = ([], [])
        chunk[0].append(frame)
        chunk[1].append(value)
        held += 1
        size += len(getattr(value, "payload", b""))  # a quarantine row has none
        if held >= max_frames or size >= max_bytes:
            yield from _emit(capture, open_chunks)
            held = size = 0
    yield from _emit(capture, open_chunks)


#: an open chunk: its frames, and their values
_Chunk = tuple[list[int], list[Any]]


def _emit(capture: str, open_chunks: dict[str, _Chunk]) -> Iterator[tuple[Key, bytes]]:
    for group, (frames_, values) in open_chunks.items():
        yield (capture, group, frames_[0]), _pack(frames_, values)
    open_chunks.clear()


def _pack(frames_: list[int], values: list[Any]) -> bytes:
    """One chunk as bytes. Named tuples (the segments) go as plain tuples with their class
    named once: pickling a named tuple calls Python code per object (its
    ``__getnewargs__``, then its ``__new__`` to load it), which costs more than the rest
    of the pickling; a plain tuple is all C."""
    kind = type(values[0])
    if _plain(kind) and all(type(value) is kind for value in values):
        if kind is not tuple:
            values = [tuple(value) for value in values]
        return pickle.dumps((kind, frames_, values), pickle.HIGHEST_PROTOCOL)
    return pickle.dumps((None, frames_, values), pickle.HIGHEST_PROTOCOL)


def _plain(kind: type) -> bool:
    """Whether a value of ``kind`` is exactly its items: a tuple or a named tuple."""
    return kind is tuple or (issubclass(kind, tuple) and hasattr(kind, "_fields"))


def frames(records: Iterable[tuple[Key, bytes]]) -> Iterator[tuple[Key, Any]]:
    """Chunks sorted by key, back to ``((capture, group, frame), value)`` per frame, in
    that order (the order of the frames themselves sorted by key)."""
    make = new_tuple  # each frame's named tuple made in C (pipeline.fast.layout)
    for (capture, group, _), data in records:
        kind, numbers, values = pickle.loads(data)
        if kind is None or kind is tuple:
            for frame, value in zip(numbers, values, strict=True):
                yield (capture, group, frame), value
        else:
            for frame, value in zip(numbers, values, strict=True):
                yield (capture, group, frame), make(kind, value)
