"""The cross-connection stage on Spark: one task per partition of the topics.

The connection stage's tasks staged their ``events`` as sorted runs (:mod:`.staging`),
like every table. This stage is a second job of ``count`` tasks; task ``p`` reads every
staged run of ``events``, keeps (vectorised, with Arrow) the rows without a topic (the
sessions, which every task needs) and those of the topics
:func:`~pubproof.pipeline.servers.partition_of` gives partition ``p``, sorts them in the
table's order and runs :class:`~pubproof.pipeline.servers.Stage` over them; its
``deliveries`` and distribution ``violations`` go to staged runs of their own (partitions
numbered after the connection stage's), and only its figures and row counts go back to
the driver, which then writes the tables from every run as for the other tables.

Like a scanning connection stage, each task reads all the staged events (a handful of
columns per packet the judge reads): on one machine that costs little beside the
judging; on a cluster they come from the shared file system, once per task.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Iterable, Iterator
from typing import Any

from pubproof.pipeline import staging
from pubproof.pipeline.connection_state import Config
from pubproof.pipeline.engine_python import collector_tuned
from pubproof.pipeline.memory import arrow_from_malloc
from pubproof.pipeline.output import sorted_table
from pubproof.pipeline.servers import Stage, rows_of_batches
from pubproof.pipeline.staging import STAGE_RUN_ROWS

#: what a task returns: its figures, and the rows it staged of deliveries and violations
Done = tuple[dict[str, int], int, int]


def share(out: str, count: int, partition: int) -> Any:
    """The staged events partition ``partition`` of ``count`` judges, sorted (an Arrow
    table): every row without a topic, and the rows of its topics."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kept = []
    for path in staging.runs(out, "events"):
        table = staging.read_run(path)
        topic = table["topic"]
        keys = pc.binary_join_element_wise(table["capture"], table["server"], topic, "\x00")
        distinct = pc.unique(keys).drop_null().to_pylist()
        mine = [k for k in distinct if zlib.crc32(k.encode()) % count == partition]
        chosen = pc.or_(pc.is_null(topic), pc.is_in(keys, value_set=pa.array(mine, pa.string())))
        kept.append(table.filter(chosen))
    if not kept:
        return None
    return sorted_table("events", pa.concat_tables(kept).combine_chunks())


def task(
    settings: dict[str, Any],
    out: str,
    count: int,
    offset: int,
    arrow: bool,
    partition: int,
    _: Iterable[Any],
) -> Iterator[Done]:
    """Partition ``partition``'s share of the cross-connection stage; its rows staged as
    partition ``offset + partition`` of ``deliveries`` and ``violations``."""
    config = Config(**settings)
    arrow_from_malloc()
    with collector_tuned():
        yield _judge(config, out, count, offset, arrow, partition)


def _judge(config: Config, out: str, count: int, offset: int, arrow: bool, partition: int) -> Done:
    number = offset + partition
    deliveries = staging.RunWriter(out, "deliveries", number, STAGE_RUN_ROWS, arrow=arrow)
    violations = staging.RunWriter(out, "violations", number, STAGE_RUN_ROWS, arrow=arrow)

    def hand_on(stage: Stage) -> None:
        deliveries.add(stage.deliveries)
        violations.add(stage.violations)
        stage.deliveries.clear()
        stage.violations.clear()

    stage = Stage(
        dict(config.readings), patience=config.patience, count=count, partition=partition,
        flush=hand_on,
    )  # fmt: skip
    table = share(out, count, partition)
    if table is not None:
        stage.run(rows_of_batches(table.to_batches(max_chunksize=16384)))
    hand_on(stage)
    return dict(stage.figures), deliveries.close(), violations.close()


def run(
    sc: Any, settings: dict[str, Any], out: str, count: int, offset: int, arrow: bool
) -> tuple[dict[str, int], int, int]:
    """The stage's job: its figures summed, and the rows staged of each table."""
    work = functools.partial(task, settings, out, count, offset, arrow)
    done: list[Done] = sc.parallelize(range(count), count).mapPartitionsWithIndex(work).collect()
    figures: dict[str, int] = {}
    delivered = found = 0
    for each, deliveries, violations in done:
        for name, value in each.items():
            figures[name] = figures.get(name, 0) + value
        delivered += deliveries
        found += violations
    return figures, delivered, found
