"""The python engine's ``events`` held in memory for the cross-connection stage, while
they are few enough; spilled to a scratch file a chunk at a time when they are not.

Rules / theory of operation
---------------------------
The cross-connection stage (:mod:`.servers`) reads the events in the ``events`` table's
order: by capture, server and topic (a server's events of no topic first), then by
:data:`~.servers.ORDER` (capture time, the frame that completed the row, its connection, its place
on the connection). The python engine made them a moment before, in the same process:
written to Parquet and read back, each row crossed Arrow twice (its struct conversion,
the Parquet file, the columns back to Python), half the stage's cost on a real capture
(the profile in ``benchmarks/README.md``). So :class:`HeldEvents` keeps the rows as they
come, by (capture, server, topic) and connection, and hands them over grouped: the groups
in the table's order (a server's sessions, topic null, first), within a group each
connection's rows one after the other, each in its own order (which is the table's order
within a connection: :mod:`.tap` numbers a connection's rows as time goes). The stage
sorts each topic's rows by :data:`~.servers.ORDER` with its sessions' rows anyway (the merge of the
two), so handing them over as runs makes that sort a merge of a few runs (a sort of the
group here first was 0.3 s of 10 on a real capture, for nothing). Every column of the
order but ``topic`` is never null (:mod:`.tap` writes them from the link), so sorting each
group by :data:`~.servers.ORDER` gives the table's order exactly.

Memory: a row held is a Python tuple (about 300 bytes with its values). The stage holds
a topic's rows while it judges them anyway, so a capture of few topics costs no more;
each time more than :data:`MOST_HELD` rows are held, they are *spilled*: each run's rows
marshalled (:mod:`marshal`: the rows are tuples of strings, numbers, booleans and None)
as one chunk of a scratch file, and let go. :meth:`HeldEvents.rows` then reads each run's
chunks back in the order they were written, before the rows of it still held: the same
rows in the same order as had they all been held, in memory bounded by :data:`MOST_HELD`
rows and a chunk. (The scratch table this replaced, written as Parquet through a
:class:`~pubproof.pipeline.output.TableWriter` and read back, each row crossing Arrow
twice, took 0.93 s of CPU for 213,599 rows; this takes 0.39 s.)
"""

from __future__ import annotations

import contextlib
import marshal
import os
from collections.abc import Iterable, Iterator
from typing import IO, Any, Final

from pubproof.pipeline.output import SCRATCH
from pubproof.pipeline.tables import EVENTS, index

_E = index(EVENTS)
CAPTURE, SERVER, TOPIC, CONNECTION = _E["capture"], _E["server"], _E["topic"], _E["connection"]
#: the most rows held in memory (about 180 MB); past it, they are spilled. The real
#: capture of the benchmarks (403,361 frames) has 480,030 events; 1,025,478 synthetic
#: frames with the broker's faults 1,005,289
MOST_HELD: Final = 600_000

#: a run: the capture, the server, the topic (None: the server's sessions), the connection
Run = tuple[str, str, "str | None", str]


def _run_order(run: Run) -> tuple[str, str, bool, str, str]:
    """A run's place: its group's in the table's order (nulls first, as Spark and Arrow
    sort them), then its connection's."""
    capture, server, topic, connection = run
    return capture, server, topic is not None, topic or "", connection


class HeldEvents:
    """The ``events`` rows of one check, added in any order (each connection's in its own
    order), handed back once by :meth:`rows`, grouped as the module says."""

    def __init__(self, out: str, *, most: int | None = None) -> None:
        self.out = out
        self.most = MOST_HELD if most is None else most
        self.runs: dict[Run, list[tuple[Any, ...]]] = {}
        self.count = 0  # the rows held now
        #: the scratch file, once rows were spilled, and each run's chunks in it (offset,
        #: size), in the order they were written
        self.path = os.path.join(out, SCRATCH, "events-held.marshal")
        self.file: IO[bytes] | None = None
        self.chunks: dict[Run, list[tuple[int, int]]] = {}

    def add(self, rows: Iterable[tuple[Any, ...]]) -> None:
        """More rows."""
        runs = self.runs
        added = 0
        for row in rows:
            added += 1
            run = (row[CAPTURE], row[SERVER], row[TOPIC], row[CONNECTION])
            held = runs.get(run)
            if held is None:
                runs[run] = [row]
            else:
                held.append(row)
        self.count += added
        if self.count > self.most:
            self._spill()

    def _spill(self) -> None:
        if self.file is None:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            self.file = open(self.path, "w+b")  # noqa: SIM115 (closed by rows())
        write, chunks = self.file.write, self.chunks
        offset = self.file.tell()
        for run, rows in self.runs.items():
            data = marshal.dumps(rows)
            write(data)
            found = chunks.get(run)
            if found is None:
                chunks[run] = [(offset, len(data))]
            else:
                found.append((offset, len(data)))
            offset += len(data)
        self.runs, self.count = {}, 0

    @property
    def spilled(self) -> bool:
        """Whether rows went to the scratch file."""
        return self.file is not None

    def rows(self) -> Iterator[tuple[Any, ...]]:
        """Every row, grouped as the module says; each run is let go once handed over (the
        scratch file, if any, is removed at the end)."""
        runs, chunks, handle = self.runs, self.chunks, self.file
        try:
            for run in sorted(runs.keys() | chunks.keys(), key=_run_order):
                if handle is not None:
                    for offset, size in chunks.pop(run, ()):
                        handle.seek(offset)
                        yield from marshal.loads(handle.read(size))
                yield from runs.pop(run, ())
        finally:
            if handle is not None:
                handle.close()
                os.remove(self.path)
                with contextlib.suppress(OSError):  # empty unless a table's runs are there
                    os.rmdir(os.path.dirname(self.path))
