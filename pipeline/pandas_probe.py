"""Sparing a one-job process pyarrow's import of pandas.

pyarrow's first conversion of Python objects (``pa.array``, which turns the engines' rows
into Arrow columns) asks whether pandas is installed, to tell a pandas object from a plain
sequence, and so imports pandas: 0.17 s of CPU with pandas 2.3, about a third of
``pubproof check --engine python``'s fixed cost, for a library the python engine never
uses. pyarrow asks once per process and keeps the answer. :func:`spare_pandas` asks it
first with pandas hidden, so that it notes "no pandas" and converts sequences exactly as
before.

The answer is kept for the rest of the process, where it would matter to a caller that
later hands pyarrow pandas objects (a notebook, the tests, PySpark's conversions in the
Spark engine's driver): there pyarrow would treat a ``Series`` as a plain sequence until
one of its pandas calls imports pandas itself. So only the command line asks for it, in a
process that runs one ``pubproof check --engine python`` and exits
(:attr:`pubproof.pipeline.run.Job.whole_process`).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

PANDAS = "pandas"


class _Hidden(importlib.abc.MetaPathFinder):
    """A finder that says pandas is not installed (and nothing of any other module)."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname == PANDAS:
            raise ModuleNotFoundError(f"No module named {PANDAS!r}", name=PANDAS)
        return None


def spare_pandas() -> bool:
    """Let pyarrow note, once for this process, that pandas is not there, unless pandas
    is imported already (then asking costs nothing). Returns whether it did. Call it only
    in a process whose callers hand pyarrow no pandas objects (see the module's text);
    pyarrow is imported here, so set its environment before (the memory pool, OpenBLAS's
    threads)."""
    if PANDAS in sys.modules:
        return False
    import pyarrow as pa

    hidden = _Hidden()
    sys.meta_path.insert(0, hidden)
    try:
        pa.array([], type=pa.int8())  # pyarrow's first conversion: it asks here
    finally:
        sys.meta_path.remove(hidden)
    return PANDAS not in sys.modules
