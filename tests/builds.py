"""Which build of the pipeline the tests run on: the compiled one (mypyc, built by
``scripts/setup``) or the Python source (no compiler, or ``PUBPROOF_PURE=1``).
``scripts/test`` runs the pipeline's tests on both.

A test that patches, subclasses or reads the source of a compiled module (a mutant, a
switch such as ``Connection.FAST``) can only run on the Python source: compiled classes
call their methods directly, so a patch would not take and the test would prove nothing.
Such a test is marked :data:`pure_only`; it runs in the pure pass.
"""

from __future__ import annotations

import pytest

from pubproof.pipeline.compiled import loaded

#: whether this process runs any pipeline module compiled
COMPILED = any(loaded().values())

pure_only = pytest.mark.skipif(
    COMPILED,
    reason="patches or reads the Python source of a compiled module: runs in the pure pass "
    "(PUBPROOF_PURE=1, scripts/test)",
)
