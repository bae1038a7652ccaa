"""``pubproof check`` as a library call: plan, run an engine, write and reconcile.

>>> from pubproof.pipeline.run import Job, check
>>> result = check(Job(paths=["samples/mqtt-sample.pcapng"], out="out/check",
...                    engine="python"))  # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pubproof.pipeline.capture import DEFAULT_SPLIT_BYTES, split_bytes_for
from pubproof.pipeline.connection_state import Config
from pubproof.pipeline.output import RECONCILIATION, clear
from pubproof.pipeline.progress import Progress
from pubproof.pipeline.reconcile import check as check_reconciliation
from pubproof.pipeline.reconcile import reconcile
from pubproof.pipeline.source import inputs, plans
from pubproof.pipeline.tables import OUTPUTS

ENGINES = ("spark", "python")


@dataclass(frozen=True, slots=True, kw_only=True)
class Job:
    """What to check, where to write, and how."""

    paths: Sequence[str]
    out: str
    engine: str = "spark"
    master: str = "local[*]"
    partitions: int | None = None
    #: how the Spark engine brings frames to their tasks (None: by the master)
    spark_read: str | None = None
    split_bytes: int | None = None  # None: chosen by :func:`split_bytes` from the input
    config: Config = field(default_factory=Config)
    #: the job is all its process does (the command line's process, which exits after
    #: it): the python engine may then make choices for the whole process
    #: (:func:`~pubproof.pipeline.optional_imports.spare_optional_imports`) that would
    #: not suit a caller that goes on
    whole_process: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Result:
    """Where the outputs are, the reconciliation, and how long it took."""

    out: str
    tables: dict[str, str]
    report: str
    reconciliation: dict[str, Any]
    seconds: float
    startup_seconds: float  # Spark's session start (0 for the python engine)


#: the environment variable that sets how many threads OpenBLAS (numpy's) starts
OPENBLAS_THREADS = "OPENBLAS_NUM_THREADS"


def local_cores(master: str) -> int | None:
    """The cores an embedded master runs on (``local``, ``local[N]``, ``local[*]``,
    ``local[N,F]``); None for a cluster, whose size is not known before it starts."""
    match = re.fullmatch(r"local(?:\[(\*|\d+)(?:,\d+)?\])?", master.strip())
    if match is None:
        return None
    count = match.group(1)
    if count is None:
        return 1
    return (os.cpu_count() or 1) if count == "*" else max(1, int(count))


def split_bytes(job: Job, total_bytes: int) -> int:
    """The job's split size: as given, else :data:`DEFAULT_SPLIT_BYTES` for the python
    engine and a cluster, else two splits per local core
    (:func:`~pubproof.pipeline.capture.split_bytes_for`)."""
    if job.split_bytes is not None:
        return job.split_bytes
    cores = local_cores(job.master) if job.engine == "spark" else None
    return DEFAULT_SPLIT_BYTES if cores is None else split_bytes_for(total_bytes, cores)


def check(job: Job, *, progress: Progress | None = None, spark: Any = None) -> Result:
    """Run the job. Raises ``ReconciliationError`` (after writing every output, so the
    difference can be inspected) when frames or bytes do not add up."""
    started = time.monotonic()
    captures = inputs(job.paths)
    planned = plans(captures, split_bytes(job, sum(os.path.getsize(c.path) for c in captures)))
    if progress is not None:
        progress.files = len(captures)
        progress.total_bytes = sum(p.size for p in planned)
        progress.total_frames = sum(p.frames for p in planned)
    os.makedirs(job.out, exist_ok=True)
    clear(job.out)
    startup = 0.0
    if job.engine == "python":
        # numpy, which pyarrow imports, starts OpenBLAS's threads, which spin on the other
        # cores though nothing here does linear algebra: 1 to 1.5% of the run's CPU
        os.environ.setdefault(OPENBLAS_THREADS, "1")
        from pubproof.pipeline import engine_python

        if job.whole_process:
            from pubproof.pipeline.memory import arrow_from_malloc
            from pubproof.pipeline.optional_imports import spare_optional_imports

            arrow_from_malloc()  # read at pyarrow's import, which the next call makes
            spare_optional_imports()

        def advance(size: int, frames: int) -> None:
            if progress is not None:
                progress.advance(size, frames)

        figures = engine_python.run(planned, job.config, job.out, on_split=advance)
    elif job.engine == "spark":
        from pubproof.pipeline import engine_spark

        startup, figures = engine_spark.run(
            planned,
            job.config,
            job.out,
            master=job.master,
            partitions=job.partitions,
            spark=spark,
            read=job.spark_read,
            progress=progress,
        )
    else:
        raise ValueError(f"unknown engine {job.engine!r} (known: {', '.join(ENGINES)})")
    if progress is not None:
        progress.done()
    result = reconcile(job.out, planned, figures)
    result["engine"] = job.engine
    result["edition"] = job.config.edition.value if job.config.edition else "from CONNECT"
    result["ports"] = sorted(job.config.ports)
    with open(os.path.join(job.out, RECONCILIATION), "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=2, sort_keys=True)
        handle.write("\n")
    from pubproof.pipeline.report import write_report

    report = write_report(job.out, result)
    check_reconciliation(result)
    return Result(
        out=job.out,
        tables={t: os.path.join(job.out, t) for t in OUTPUTS},
        report=report,
        reconciliation=result,
        seconds=time.monotonic() - started,
        startup_seconds=startup,
    )
