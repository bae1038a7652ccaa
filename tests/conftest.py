"""Shared test settings: Hypothesis profiles and the spec excerpts' location; a loader of
the benchmarks' scripts."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from hypothesis import HealthCheck, settings

# "ci" is the default: enough examples to matter, within the CI budget on 2 cores.
settings.register_profile(
    "ci", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile(
    "deep", max_examples=20_000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

ROOT = Path(__file__).resolve().parent.parent
SPEC = Path(os.environ.get("PUBPROOF_SPEC_DIR", ROOT / "model" / "texts"))


def load_benchmark(name: str) -> ModuleType:
    """The script ``benchmarks/<name>.py`` (or a module of one) imported as the module
    ``name`` (registered in ``sys.modules``: dataclasses look their module up by name),
    with ``benchmarks/`` on the path, as when a script is run, for the modules it imports
    from beside it."""
    folder = str(ROOT / "benchmarks")
    if folder not in sys.path:
        sys.path.append(folder)
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
