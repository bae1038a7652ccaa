"""How ``bench_codec.py`` measures: a codec checked on a whole stream before it is timed
(:func:`check`), then timed in repeated passes (:func:`measure`), each figure a
:class:`Result`.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from codec_streams import Stream
from peer_codecs import Codec


@dataclass
class Result:
    codec: str
    stream: str
    operation: str
    packets: int
    best_s: float
    median_s: float
    repeats: int
    runtime: str = "Python"
    ratio: float | None = None  # pubproof's rate / this rate

    @property
    def rate(self) -> float:
        return self.packets / self.best_s


def measure(
    run: Callable[[], Any],
    check: Callable[[Any], bool],
    budget: float,
    min_repeats: int,
    max_repeats: int,
) -> tuple[float, float, int]:
    """Best and median seconds of repeated ``run()``; at least ``min_repeats`` passes, then
    more while the time budget lasts. Every pass's result must pass ``check`` (outside the
    timing, as is the freeing of the result)."""
    times: list[float] = []
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        started = time.perf_counter()
        while len(times) < max_repeats and (
            len(times) < min_repeats or time.perf_counter() - started < budget
        ):
            t0 = time.perf_counter()
            out = run()
            t1 = time.perf_counter()
            times.append(t1 - t0)
            if not check(out):
                raise RuntimeError("a timed pass gave a wrong result")
            del out
            gc.collect()
    finally:
        if enabled:
            gc.enable()
    return min(times), statistics.median(times), len(times)


def verify_decode(codec: Codec, stream: Stream) -> str | None:
    """None if the codec decodes the stream to the same packets as pubproof, else why not."""
    try:
        records = codec.records(stream)
    except Exception as error:  # a peer may fail in its own way
        return f"decoding raised {type(error).__name__}: {error}"
    if len(records) != len(stream.records):
        return f"{len(records)} packets decoded, {len(stream.records)} expected"
    for index, (got, want) in enumerate(zip(records, stream.records, strict=True)):
        if got != want:
            return f"packet {index} differs: {got!r} != {want!r}"
    return None


def check(codec: Codec, stream: Stream) -> str | None:
    """``verify_decode``, then pubproof's chunked decoding and every encoder's round trip."""
    problem = verify_decode(codec, stream)
    if problem is None and codec.decode_chunked is not None:
        to_record = codec.record5 if stream.v5 else codec.record
        assert to_record is not None
        chunked = [to_record(p) for p in codec.decode_chunked(stream)]
        problem = None if chunked == stream.records else "chunked decoding differs"
    if problem is None and codec.encode is not None and codec.decode is not None:
        encoded = codec.encode(codec.decode(stream), stream.edition)
        problem = None if encoded == stream.data else "encoding does not give back the stream"
    return problem
