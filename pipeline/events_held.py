"""The python engine's ``events`` held in memory for the cross-connection stage, while
they are few enough; written as the scratch table when they are not.

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
past :data:`MOST_HELD` rows the held rows go to a
:class:`~pubproof.pipeline.output.TableWriter` (sorted runs, bounded memory), and so do
all that come after: the table is read back as before.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Iterator
from typing import Any, Final

from pubproof.pipeline.output import TableWriter, rows_of
from pubproof.pipeline.tables import EVENTS, index

_E = index(EVENTS)
CAPTURE, SERVER, TOPIC, CONNECTION = _E["capture"], _E["server"], _E["topic"], _E["connection"]
#: the most rows held in memory (about 180 MB); past it, the scratch table. The real
#: capture of the benchmarks (403,361 frames) has 480,030 events; 1,025,478 synthetic
#: frames with the broker's faults 1,005,289, where holding a million first raised the
#: peak memory from 701 to 918 MB for no time saved (the readable judge's topics cost more
#: than the round trip); spilled past 600,000, 721 MB
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
        self.count = 0
        #: the scratch table, once more than ``most`` rows came
        self.writer: TableWriter | None = None

    def add(self, rows: Iterable[tuple[Any, ...]]) -> None:
        """More rows."""
        if self.writer is not None:
            self.writer.add(rows)
            return
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
        writer = self.writer = TableWriter(self.out, "events")
        runs = self.runs
        while runs:  # each run let go as it is handed on (the table's order is total)
            writer.add(runs.popitem()[1])

    @property
    def spilled(self) -> bool:
        """Whether the rows went to the scratch table."""
        return self.writer is not None

    def rows(self) -> Iterator[tuple[Any, ...]]:
        """Every row, grouped as the module says (in the table's order if they were
        spilled); each run is let go once handed over (the scratch table, if any, is
        removed at the end)."""
        if self.writer is not None:
            self.writer.close()
            try:
                yield from rows_of(self.out, "events")
            finally:
                shutil.rmtree(os.path.join(self.out, "events"), ignore_errors=True)
            return
        runs = self.runs
        for run in sorted(runs, key=_run_order):
            yield from runs.pop(run)
