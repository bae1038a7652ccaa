"""Sparing a one-job process the imports pyarrow makes of optional libraries it does not
need there: numpy and pandas.

- numpy: ``import pyarrow`` imports numpy if it is installed (pyarrow's
  ``pyarrow.lib``, ``pyarrow.compute`` and ``pyarrow.parquet`` each try), to convert
  numpy arrays and to start numpy's C API. numpy is optional to pyarrow (it runs without
  it, and converts Python objects exactly as before); the python engine hands it no numpy
  object. Importing pyarrow, its compute functions and Parquet with numpy hidden took
  0.13 s of CPU instead of 0.29 s when measured alone, and ``pubproof check --engine
  python`` on a 100-frame capture 0.24 s instead of 0.28 s at the best of twelve
  alternating runs (0.27 s instead of 0.32 s at the median).
- pandas: pyarrow's first conversion of Python objects (``pa.array``, which turns the
  engines' rows into Arrow columns) asks whether pandas is installed, to tell a pandas
  object from a plain sequence, and so imports pandas: 0.14 s of CPU with pandas 2.3,
  for a library the python engine never uses.

pyarrow asks each once per process and keeps the answer. :func:`spare_optional_imports`
makes those first imports and that first conversion with numpy and pandas hidden, so
that pyarrow notes "no numpy" and "no pandas".

The answers are kept for the rest of the process, where they would matter to a caller
that later hands pyarrow numpy or pandas objects (a notebook, the tests, PySpark's
conversions in the Spark engine's driver): pyarrow would refuse a numpy array and treat
a ``Series`` as a plain sequence. So only the command line asks for it, in a process that
runs one ``pubproof check --engine python`` and exits
(:attr:`pubproof.pipeline.run.Job.whole_process`).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

NUMPY = "numpy"
PANDAS = "pandas"
#: the pyarrow modules the python engine imports, each of which asks for numpy once
PYARROW_MODULES = ("pyarrow", "pyarrow.compute", "pyarrow.parquet", "pyarrow.ipc")


class _Hidden(importlib.abc.MetaPathFinder):
    """A finder that says the given top-level packages (and their modules) are not
    installed, and nothing of any other module."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None


def spare_optional_imports() -> tuple[bool, bool]:
    """Let pyarrow note, once for this process, that numpy and pandas are not there:
    numpy only if neither pyarrow nor numpy is imported yet, pandas unless it is imported
    already (then asking costs nothing). Returns whether each was spared (numpy's, then
    pandas'). Call it only in a process whose callers hand pyarrow no numpy or pandas
    objects (see the module's text); pyarrow is imported here, so set its environment
    before (the memory pool)."""
    hidden: list[str] = []
    if "pyarrow" not in sys.modules and NUMPY not in sys.modules:
        hidden.append(NUMPY)
    if PANDAS not in sys.modules:
        hidden.append(PANDAS)
    if not hidden:
        return False, False
    finder = _Hidden(hidden)
    sys.meta_path.insert(0, finder)
    try:
        for name in PYARROW_MODULES:
            importlib.import_module(name)
        import pyarrow as pa

        pa.array([], type=pa.int8())  # pyarrow's first conversion: it asks for pandas here
    finally:
        sys.meta_path.remove(finder)
    return (
        NUMPY in hidden and NUMPY not in sys.modules,
        PANDAS in hidden and PANDAS not in sys.modules,
    )
