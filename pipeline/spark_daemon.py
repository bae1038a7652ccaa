"""The Python worker daemon of an embedded (local) Spark: PySpark's own daemon, started
from the installed PySpark instead of the ``pyspark.zip`` copy Spark puts first on the
workers' ``PYTHONPATH``.

Python cannot cache compiled bytecode for modules imported from a zip file, so every
worker daemon compiles PySpark's sources again (about 1.5 s of each job's start here,
against 0.3 s from the installed package's ``__pycache__``). On a local master the zip and
the installed package are the same release (:func:`usable` checks it in the driver), so
the daemon drops the zip from ``sys.path`` and imports the installed one. It also imports
the pipeline's task code once, before it forks its workers (those modules start no
threads, which a fork would not carry over, and leave pyarrow to the workers).

Spark runs it as ``python -m pubproof.pipeline.spark_daemon`` when
``spark.python.daemon.module`` names it (:func:`pubproof.pipeline.engine_spark.session`).
"""

from __future__ import annotations

import importlib.util
import os
import sys

#: the module whose functions the pipeline's tasks run
PRELOAD = "pubproof.pipeline.engine_spark"
#: the files Spark prepends to the workers' PYTHONPATH (``$SPARK_HOME/python/lib``)
SPARK_ZIPS = ("pyspark.zip", "py4j-")


def _from_spark_lib(entry: str) -> bool:
    name = os.path.basename(entry)
    parent = os.path.basename(os.path.dirname(entry))
    return parent == "lib" and name.endswith(".zip") and name.startswith(SPARK_ZIPS)


def installed_path(path: list[str]) -> list[str]:
    """``path`` without the zip files Spark adds (the rest in the same order)."""
    return [entry for entry in path if not _from_spark_lib(entry)]


def usable(spark_home: str | None) -> bool:
    """Whether the workers of a local master can import the installed PySpark in place of
    ``spark_home``'s zip: true when ``spark_home`` is that installed package itself (as
    when PySpark comes from pip), so both are the same files."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None or not spark_home:
        return False
    package = os.path.dirname(spec.origin)
    return os.path.realpath(spark_home) == os.path.realpath(package)


def main() -> None:
    """Fix the import path, import the per-connection code, run PySpark's daemon."""
    original = list(sys.path)
    sys.path[:] = installed_path(original)
    if importlib.util.find_spec("pyspark") is None:  # no installed copy: keep the zip
        sys.path[:] = original
    from pyspark.daemon import manager

    # the tasks' code, imported once here and inherited by every forked worker (it starts
    # no threads and imports no pyarrow, so the fork is safe: a test checks it)
    importlib.import_module(PRELOAD)
    manager()


if __name__ == "__main__":
    main()
