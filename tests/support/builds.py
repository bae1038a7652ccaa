"""Which build of the pipeline the tests run on: the compiled one (mypyc, built by
``scripts/setup``) or the Python source (no compiler, or ``PUBPROOF_PURE=1``).
``scripts/test`` runs the pipeline's tests on both.

A test that patches, subclasses or reads the source of a compiled module (a mutant, a
switch such as ``Connection.FAST``) can only run on the Python source: compiled classes
call their methods directly, so a patch would not take and the test would prove nothing.
Such a test is marked :data:`pure_only`; it runs in the pure pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from pubproof.pipeline.compiled import loaded

#: whether this process runs any pipeline module compiled
COMPILED = any(loaded().values())

pure_only = pytest.mark.skipif(
    COMPILED,
    reason="patches or reads the Python source of a compiled module: runs in the pure pass "
    "(PUBPROOF_PURE=1, scripts/test)",
)


@contextmanager
def patched(owner: Any, name: str, value: object) -> Iterator[None]:
    """``owner.name`` is ``value`` for the block (a mutant), then what it was."""
    original = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, original)
