"""The two builds of the per-frame path: the compiled modules (mypyc, ``scripts/setup``)
run where they were built, ``PUBPROOF_PURE=1`` runs the Python source instead, and a
machine without a compiler keeps the Python source with a word saying why."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.builds import COMPILED

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
    layout = compiled.locate()
    for name in compiled.COMPILED:
        assert layout.source(name).is_file(), name


def _layout(root: Path) -> compiled.Layout:
    """A layout of one tree under ``root`` (as ``pip install .`` and the strict editable
    install have it)."""
    return compiled.Layout(folders={p: root.joinpath(*p.split(".")) for p in compiled.PACKAGES})


def test_without_a_compiler_nothing_is_built(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr(compiled, "missing_tools", lambda: "no C compiler (cc)")
    assert compiled.build(_layout(tmp_path)) == 0
    assert "runs as Python: no C compiler" in capsys.readouterr().out
    assert not list(tmp_path.iterdir())


def test_clean_removes_compiled_modules_no_longer_in_the_list(tmp_path: Path) -> None:
    """A module compiled by an older list (then dropped from it) would shadow its source
    and fail to import without its group's library: :func:`compiled.clean`, which every
    build starts with, removes it too, and the group's library, and nothing that is not
    pubproof's: a mypyc library at the top of ``site-packages`` is another package's (mypy
    keeps its own there)."""
    import importlib.machinery

    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    layout = _layout(tmp_path)
    folder = layout.folders["pubproof.pipeline"]
    folder.mkdir(parents=True)
    for name in ("dropped", "capture"):
        (folder / f"{name}.py").write_text("")
        (folder / f"{name}{suffix}").write_bytes(b"")
    (folder / f"native{suffix}").write_bytes(b"")  # no source beside it: not ours
    library = layout.root / f"{compiled.LIBRARY.rpartition('.')[2]}{suffix}"
    library.write_bytes(b"")
    (tmp_path / f"abc__mypyc{suffix}").write_bytes(b"")  # mypy's, say
    compiled.clean(layout)
    left = sorted(p.name for p in folder.iterdir())
    assert left == ["capture.py", "dropped.py", f"native{suffix}"]
    assert not library.exists() and (tmp_path / f"abc__mypyc{suffix}").exists()


# -- the plain editable install: pubproof's packages in the checkout's own folders ------------

#: the finder of a plain ``pip install -e .``, as setuptools writes it: each package of
#: ``package-dir`` imported from its folder of the checkout (``cli/`` is ``pubproof``)
NON_STRICT_FINDER = """
import importlib.abc, importlib.util, sys
from pathlib import Path

ROOT = Path(sys.argv[1])
MAPPING = {"pubproof": ROOT / "cli", **{f"pubproof.{p}": ROOT / p for p in (
    "model", "reference", "judge", "proofs", "probe", "pipeline")}}


class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        folder = MAPPING.get(fullname)
        if folder is None:
            return None
        return importlib.util.spec_from_file_location(
            fullname, folder / "__init__.py", submodule_search_locations=[str(folder)])


sys.meta_path.insert(0, Finder())
"""


def test_the_build_locates_a_plain_editable_install(tmp_path: Path) -> None:
    """Under a plain ``pip install -e .`` the packages are not in one tree (``pubproof`` is
    ``cli/``): the build finds each where Python imports it from, every source beside its
    compiled module to be, and links them into one tree in which each module has its
    dotted path and the compiler's output for a subpackage lands in its folder."""
    code = (
        NON_STRICT_FINDER
        + """
import json
import re
from pubproof.pipeline import compiled
assert compiled.__file__ == str(ROOT / "pipeline" / "compiled.py"), compiled.__file__
layout = compiled.locate()
tree = compiled.stage(layout, Path(sys.argv[2]))
print(json.dumps({
    "folders": {k: str(v) for k, v in layout.folders.items()},
    "sources": {m: str(layout.source(m)) for m in compiled.COMPILED},
    "staged": {m: str((tree / m.replace(".", "/")).with_suffix(".py").resolve())
               for m in compiled.COMPILED},
    "init": str((tree / "pubproof" / "__init__.py").resolve()),
}))
"""
    )
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-S", "-c", code, str(root), str(tmp_path / "tree")],
        capture_output=True, text=True, check=False, env=_environ(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["folders"]["pubproof"] == str(root / "cli")
    assert found["folders"]["pubproof.pipeline"] == str(root / "pipeline")
    for module in compiled.COMPILED:
        checkout = root.joinpath(*module.split(".")[1:]).with_suffix(".py")
        assert found["sources"][module] == str(checkout)
        assert found["staged"][module] == str(checkout)
    assert found["init"] == str(root / "cli" / "__init__.py")


def test_a_package_that_is_not_a_folder_of_sources_is_said_in_one_line(tmp_path: Path) -> None:
    """Where the build cannot work (no folder of sources), it says why, names what to do,
    and ends without a traceback."""
    with pytest.raises(compiled.Unlocatable, match=re.escape("pubproof.judge")):
        compiled.locate(lambda name: None if name == "pubproof.judge" else tmp_path)
    (tmp_path / "x").mkdir()
    with pytest.raises(
        compiled.Unlocatable, match=re.escape("the source of pubproof.pipeline.capture")
    ):
        compiled.locate(lambda name: tmp_path / "x")
    code = (
        "import sys; from pubproof.pipeline import compiled\n"
        "def nowhere(): raise compiled.Unlocatable('pubproof.model is a zip')\n"
        "compiled.locate = nowhere\n"
        "sys.exit(compiled.main(['build']))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, env=_environ()
    )
    assert done.returncode == 0 and not done.stderr, done.stderr
    assert done.stdout.count("\n") == 1 and "pubproof.model is a zip" in done.stdout
    assert "pip install -e ." in done.stdout


def _compiled_elsewhere() -> bool:
    """Whether a process without ``PUBPROOF_PURE`` runs the compiled build (this one may
    be the pure pass)."""
    return any(_loaded(pure=False).values())


def test_both_builds_write_the_same_tables(tmp_path: Path) -> None:
    """The sample through ``pubproof check --engine python`` on each build."""
    if not _compiled_elsewhere():
        # the two runs would both be the Python source: a comparison that cannot fail
        pytest.skip("no compiled build here (python -m pubproof.pipeline.compiled build)")
    from support.pipeline_builder import read_tables

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
