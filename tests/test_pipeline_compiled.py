"""The two builds of the per-frame path: the compiled modules (mypyc, ``scripts/setup``)
run where they were built, ``PUBPROOF_PURE=1`` runs the Python source instead, and a
machine without a compiler keeps the Python source with a word saying why."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from builds import COMPILED

from pubproof.pipeline import compiled

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "mqtt-sample.pcapng"
QUIET = ("--engine", "python", "--quiet")


def _loaded(pure: bool) -> dict[str, bool]:
    env_code = (
        "import json; from pubproof.pipeline.compiled import loaded; print(json.dumps(loaded()))"
    )
    done = subprocess.run(
        [sys.executable, "-c", env_code],
        capture_output=True,
        text=True,
        check=True,
        env={**_environ(), compiled.PURE: "1" if pure else "0"},
    )
    found: dict[str, bool] = json.loads(done.stdout)
    return found


def _environ() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != compiled.PURE}


def test_pure_runs_the_python_source() -> None:
    assert _loaded(pure=True) == dict.fromkeys(compiled.COMPILED, False)


@pytest.mark.skipif(not COMPILED, reason="no compiled build here (no compiler, or pure pass)")
def test_the_compiled_build_is_used_where_it_was_built() -> None:
    assert _loaded(pure=False) == dict.fromkeys(compiled.COMPILED, True)


def test_every_compiled_module_has_its_source_beside_it() -> None:
    root = compiled._installed()
    for name in compiled.COMPILED:
        assert compiled._source(root, name).is_file(), name


def test_without_a_compiler_nothing_is_built(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr(compiled, "missing_tools", lambda: "no C compiler (cc)")
    assert compiled.build(tmp_path) == 0
    assert "runs as Python: no C compiler" in capsys.readouterr().out
    assert not list(tmp_path.iterdir())


def test_clean_removes_compiled_modules_no_longer_in_the_list(tmp_path: Path) -> None:
    """A module compiled by an older list (then dropped from it) would shadow its source
    and fail to import without its group's library: :func:`compiled.clean`, which every
    build starts with, removes it too, and nothing that is not a compiled module."""
    import importlib.machinery

    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    folder = tmp_path / "pubproof" / "pipeline"
    folder.mkdir(parents=True)
    for name in ("dropped", "capture"):
        (folder / f"{name}.py").write_text("")
        (folder / f"{name}{suffix}").write_bytes(b"")
    (folder / f"native{suffix}").write_bytes(b"")  # no source beside it: not ours
    (tmp_path / "abc__mypyc.so").write_bytes(b"")
    compiled.clean(tmp_path)
    left = sorted(p.name for p in folder.iterdir())
    assert left == ["capture.py", "dropped.py", f"native{suffix}"]
    assert not (tmp_path / "abc__mypyc.so").exists()


def test_both_builds_write_the_same_tables(tmp_path: Path) -> None:
    """The sample through ``pubproof check --engine python`` on each build."""
    from pipeline_builder import read_tables

    tables = []
    for pure in ("1", "0"):
        out = tmp_path / f"pure-{pure}"
        subprocess.run(
            [sys.executable, "-m", "pubproof", "check", str(SAMPLE), "--out", str(out), *QUIET],
            check=True,
            env={**_environ(), compiled.PURE: pure},
        )
        tables.append(read_tables(str(out)))
    assert tables[0] == tables[1] and tables[0]["packets"]
