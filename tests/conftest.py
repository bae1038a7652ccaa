"""Shared test settings: Hypothesis profiles and the spec excerpts' location; a loader of
the benchmarks' scripts."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

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


#: The test modules the quick loop (``scripts/test --quick``) leaves out: those that start
#: brokers, client libraries, Spark, a browser or the docs build, run the proofs, or fuzz.
#: ``scripts/test`` (what CI runs) runs every one. A module joins when its tests take more
#: than a few seconds; ``pytest --durations=20`` says which do. A light module's one test
#: that starts Spark carries ``@pytest.mark.heavy`` itself.
HEAVY = frozenset({
    "test_docs_browser", "test_docs_browser_readers", "test_docs_site", "test_docs_site50",
    "test_docs_distribution", "test_docs_states", "test_notebooks",
    "test_fuzz_smoke", "test_pipeline_fuzz", "test_judge50_mosquitto", "test_matrix",
    "test_pipeline_cli", "test_pipeline_cluster", "test_pipeline_live", "test_pipeline_spark",
    "test_pipeline_servers", "test_pipeline_live_distribution",
    "test_spark_class_archive", "test_probe_client", "test_probe_client50",
    "test_probe_client_paho_c", "test_probe_live", "test_probe_live50", "test_proofs",
    "test_proofs50", "test_proofs_crosscheck", "test_proofs_distribution",
    "test_session_stateful", "test_session50_stateful", "test_explore_live", "test_serve_live",
})


def pytest_collection_modifyitems(config: object, items: list[Any]) -> None:
    """Mark every test of a :data:`HEAVY` module ``heavy`` (``-m "not heavy"``: the quick
    loop)."""
    import pytest

    for item in items:
        if Path(str(item.fspath)).stem in HEAVY:
            item.add_marker(pytest.mark.heavy)
