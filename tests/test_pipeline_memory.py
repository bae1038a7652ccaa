"""Where the pipeline's Arrow buffers come from (:mod:`pubproof.pipeline.memory`):
``malloc``'s pool in both engines, unless the user named another. Each case runs in a
process of its own: pyarrow reads its variable once, at its import."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "mqtt-sample.pcapng"


def _backend(code: str, *args: str, pool: str | None = None) -> str:
    """The default pool's backend after ``code`` ran in a fresh interpreter."""
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    if pool is not None:
        env["ARROW_DEFAULT_MEMORY_POOL"] = pool
    script = code + "\nimport pyarrow as pa\nprint(pa.default_memory_pool().backend_name)\n"
    done = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout.split()[-1]


def test_pyarrow_default_is_not_malloc_here() -> None:
    # the negative case: without the pipeline's choice the wheels' own pool is used, so
    # the cases below would tell a missing call
    assert _backend("") != "system"


@pytest.mark.parametrize("imported_first", [False, True])
def test_arrow_from_malloc_before_and_after_pyarrow_is_imported(imported_first: bool) -> None:
    first = "import pyarrow\n" if imported_first else ""
    code = first + "from pubproof.pipeline.memory import arrow_from_malloc\narrow_from_malloc()"
    assert _backend(code) == "system"


def test_a_pool_the_user_named_is_kept() -> None:
    import pyarrow as pa

    other = next(
        (name for name in ("jemalloc", "mimalloc") if _available(pa, name)), None
    )  # fmt: skip
    if other is None:
        pytest.skip("this pyarrow has no pool besides the system's")
    code = "from pubproof.pipeline.memory import arrow_from_malloc\narrow_from_malloc()"
    assert _backend(code, pool=other) == other


def _available(pa: Any, name: str) -> bool:
    try:
        getattr(pa, f"{name}_memory_pool")()
    except (NotImplementedError, AttributeError):
        return False
    return True


def test_the_python_engine_takes_arrow_buffers_from_malloc(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from pubproof.pipeline import engine_python, source\n"
        "from pubproof.pipeline.connection_state import Config\n"
        "plans = source.plans(source.inputs([sys.argv[1]]))\n"
        "engine_python.run(plans, Config(), sys.argv[2])\n"
    )
    assert _backend(code, str(SAMPLE), str(tmp_path / "out")) == "system"
    assert (tmp_path / "out" / "packets").is_dir()


def test_every_spark_task_takes_arrow_buffers_from_malloc(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cluster's worker does not inherit the driver's environment: each task makes the
    choice itself, before its first Arrow buffer."""
    from pubproof.pipeline import engine_spark, source
    from pubproof.pipeline.connection_state import Config

    calls: list[str] = []
    monkeypatch.setattr(engine_spark, "arrow_from_malloc", lambda: calls.append("called"))
    (plan,) = source.plans(source.inputs([str(SAMPLE)]))
    captures = [(plan.capture, plan.splits)]
    settings = engine_spark._settings(Config())
    list(engine_spark._scan(settings, captures, str(tmp_path / "a"), 64, 0, 1, 0, iter(())))
    assert calls == ["called"]
    list(engine_spark._stage(settings, str(tmp_path / "b"), 64, 0, 0, iter(())))
    assert calls == ["called", "called"]
