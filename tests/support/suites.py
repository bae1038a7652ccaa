"""The test files a mutation runner runs under its mutants.

A mutant is killed when a named test of another file fails under it (the 5.0 judges'
mutants of ``test_judge50_mutants.py`` are killed by the tests of
``test_judge50_link.py``, ``test_judge50_close.py`` and ``test_judge50_packets.py``). The
runner names the file here and calls its tests; it borrows nothing else from it (what tests
share lives in this package). This is the one way a test file reaches another, and
``tests/test_layers.py`` holds that no test file imports another.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

TESTS = Path(__file__).resolve().parents[1]


@functools.cache
def suite(name: str) -> ModuleType:
    """The test file ``tests/<name>.py``, loaded once as a module of its own."""
    path = TESTS / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"suite_{name}", path)
    if spec is None or spec.loader is None:
        raise FileNotFoundError(path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # a dataclass of the file looks its module up there
    spec.loader.exec_module(module)
    return module
