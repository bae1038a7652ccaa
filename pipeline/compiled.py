"""The compiled build of the per-frame path: the same typed Python source, compiled by
mypyc into C extension modules placed next to the sources of the installed package.

The Python source stays the reference: without a C compiler, Python's headers or mypyc,
nothing is built and the same modules run as Python; ``PUBPROOF_PURE=1`` in the
environment makes a process import the Python source even where the compiled modules
exist (:func:`prefer_source`, installed by the ``pubproof`` package's ``__init__``), which is
how the tests run on both builds. Python imports an extension module before a source file
of the same name, so nothing else changes.

    python -m pubproof.pipeline.compiled build    # compile (scripts/setup runs it)
    python -m pubproof.pipeline.compiled status   # which modules run compiled
    python -m pubproof.pipeline.compiled clean    # remove the compiled modules

``build`` does nothing when the sources, mypy and Python are those of the last build (a
stamp file next to the modules), and copies the modules from ``~/.cache/pubproof/compiled``
when they were built before from the same sources (``pip install -e`` drops them). A build
takes a few minutes (mypy's analysis of the imports, then gcc).
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

#: the modules compiled: every frame and every packet goes through them (the judges of
#: pubproof.judge are not among them: the pipeline runs their compiled twins, in
#: pipeline.fast; the close judge runs only after an offence)
COMPILED = (
    "pubproof.pipeline.capture",
    "pubproof.pipeline.dissect",
    "pubproof.pipeline.source",
    "pubproof.pipeline.reassembly",
    "pubproof.pipeline.framing",
    "pubproof.pipeline.detect",
    "pubproof.pipeline.trail",
    "pubproof.pipeline.rows",
    "pubproof.pipeline.receivers",
    "pubproof.pipeline.family",
    "pubproof.pipeline.connection",
    "pubproof.pipeline.engine_python",
    "pubproof.reference.common",
    "pubproof.reference.decode50",
    "pubproof.reference.codec",
    "pubproof.pipeline.fast.layout",
    "pubproof.pipeline.fast.ends",
    "pubproof.pipeline.fast.link",
    "pubproof.pipeline.fast.link50",
    "pubproof.pipeline.fast.aliases",
)
#: the environment variable that makes a process import the Python source
PURE = "PUBPROOF_PURE"
STAMP = ".pubproof-compiled"


def _installed() -> Path:
    """Where ``pubproof`` is imported from: the folder on ``sys.path`` that holds it (for
    the editable install, the link tree under ``build/__editable__.*``)."""
    spec = importlib.util.find_spec("pubproof")
    assert spec is not None and spec.submodule_search_locations is not None
    package = Path(next(iter(spec.submodule_search_locations)))
    return package.parent


def _source(root: Path, module: str) -> Path:
    return root.joinpath(*module.split(".")).with_suffix(".py")


def extensions(root: Path, module: str) -> list[Path]:
    """The compiled files of ``module`` under ``root``."""
    parts = module.split(".")
    folder = root.joinpath(*parts[:-1])
    return sorted(
        folder / f"{parts[-1]}{suffix}"
        for suffix in importlib.machinery.EXTENSION_SUFFIXES
        if (folder / f"{parts[-1]}{suffix}").exists()
    )


def loaded() -> dict[str, bool]:
    """For each module of :data:`COMPILED`, whether this process runs it compiled
    (imports them)."""
    found = {}
    for name in COMPILED:
        module: ModuleType = importlib.import_module(name)
        found[name] = not str(getattr(module, "__file__", "")).endswith(".py")
    return found


class _SourceFirst(importlib.abc.MetaPathFinder):
    """Imports the modules of :data:`COMPILED` from their Python source."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in COMPILED or not path:
            return None
        name = fullname.rsplit(".", 1)[-1]
        for folder in path:
            source = os.path.join(folder, name + ".py")
            if os.path.exists(source):
                return importlib.util.spec_from_file_location(fullname, source)
        return None


def prefer_source() -> None:
    """With ``PUBPROOF_PURE=1``: import the compiled modules' Python source instead."""
    if os.environ.get(PURE) == "1" and not any(
        isinstance(finder, _SourceFirst) for finder in sys.meta_path
    ):
        sys.meta_path.insert(0, _SourceFirst())


def _fingerprint(root: Path) -> str:
    import mypy.version

    digest = hashlib.sha256()
    digest.update(f"{sys.version}|{mypy.version.__version__}|{COMPILED}".encode())
    for module in COMPILED:
        digest.update(_source(root, module).read_bytes())
    return digest.hexdigest()


def missing_tools() -> str | None:
    """Why nothing can be compiled here (None: it can)."""
    if importlib.util.find_spec("mypyc") is None:
        return "mypyc is not installed (pip install mypy)"
    compiler = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    if shutil.which(compiler.split()[0]) is None:
        return f"no C compiler ({compiler.split()[0]}; scripts/system-deps installs gcc)"
    header = Path(sysconfig.get_paths()["include"]) / "Python.h"
    if not header.exists():
        return f"no Python headers ({header}; scripts/system-deps installs python3-dev)"
    return None


def _built(root: Path) -> list[Path]:
    """Every compiled module of the package under ``root``, in :data:`COMPILED` or not:
    one left by a build of a longer list (an older checkout's) would shadow its source
    and fail to import once its group's library is replaced."""
    package = root / "pubproof"
    return sorted(
        path
        for suffix in importlib.machinery.EXTENSION_SUFFIXES
        for path in package.rglob(f"*{suffix}")
        if path.with_name(path.name[: -len(suffix)] + ".py").exists()
    )


def clean(root: Path) -> None:
    """Remove every compiled module (the source is used again)."""
    for path in _built(root):
        path.unlink()
    for path in root.glob("*__mypyc*"):
        path.unlink()
    (root / STAMP).unlink(missing_ok=True)


def build(root: Path, *, force: bool = False) -> int:
    """Compile :data:`COMPILED` under ``root``; 0 when built, up to date or impossible
    here (the reason is printed: the source then runs as it is), 1 when a build failed."""
    why = missing_tools()
    if why is not None:
        print(f"pubproof: not compiled, the pipeline runs as Python: {why}")
        return 0
    stamp = root / STAMP
    fingerprint = _fingerprint(root)
    built = all(extensions(root, m) for m in COMPILED)
    if not force and built and stamp.exists() and stamp.read_text() == fingerprint:
        print("pubproof: the compiled pipeline is up to date")
        return 0
    clean(root)
    cache = _cache() / fingerprint[:24]
    if not force and (cache / STAMP).exists():
        _copy(cache, root)  # built before from the same sources (pip install -e wipes it)
        if all(extensions(root, m) for m in COMPILED):
            print(f"pubproof: the compiled pipeline copied from {cache}")
            return 0
        clean(root)
    config = _config_file()
    paths = [str(_source(root, m).relative_to(root)) for m in COMPILED]
    with tempfile.TemporaryDirectory(prefix="pubproof-mypyc-") as work:
        setup = Path(work) / "setup.py"
        setup.write_text(
            "from setuptools import setup\n"
            "from mypyc.build import mypycify\n"
            f"setup(name='pubproof_compiled', ext_modules=mypycify({[*config, *paths]!r}, "
            f"opt_level='3', target_dir={str(Path(work) / 'c')!r}))\n"
        )
        argv = [sys.executable, str(setup), "build_ext", "--inplace"]
        argv += ["--build-temp", str(Path(work) / "temp")]
        # run where the package is, so that the modules get their full names and the
        # extension modules land next to their sources
        result = subprocess.run(argv, cwd=root, capture_output=True, text=True, check=False)
    if result.returncode != 0 or not all(extensions(root, m) for m in COMPILED):
        print(result.stdout[-4000:] + result.stderr[-4000:], file=sys.stderr)
        print("pubproof: the compiled build FAILED; the pipeline runs as Python", file=sys.stderr)
        clean(root)
        return 1
    stamp.write_text(fingerprint)
    shutil.rmtree(cache, ignore_errors=True)
    _copy(root, cache)
    print(f"pubproof: compiled {len(COMPILED)} pipeline modules with mypyc under {root}")
    return 0


def _cache() -> Path:
    """Where builds are kept, by fingerprint (``pip install -e`` rebuilds the link tree
    and drops them)."""
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(home) / "pubproof" / "compiled"


def _copy(source: Path, target: Path) -> None:
    """The compiled files (and the stamp) from ``source`` to ``target``, same layout."""
    names = [path.relative_to(source) for m in COMPILED for path in extensions(source, m)]
    names += [path.relative_to(source) for path in source.glob("*__mypyc*")]
    names.append(Path(STAMP))
    for name in names:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / name, target / name)


def _config_file() -> list[str]:
    """The project's mypy configuration, when its ``pyproject.toml`` is at hand."""
    for folder in (Path.cwd(), *Path(__file__).resolve().parents):
        candidate = folder / "pyproject.toml"
        if candidate.exists() and "[tool.mypy]" in candidate.read_text(encoding="utf-8"):
            return ["--config-file", str(candidate)]
    return []


def main(argv: Sequence[str] | None = None) -> int:
    """``build`` [``--force``], ``status`` or ``clean``."""
    args = list(sys.argv[1:] if argv is None else argv)
    root = _installed()
    command = args[0] if args else "status"
    if command == "build":
        return build(root, force="--force" in args)
    if command == "clean":
        clean(root)
        return 0
    if command == "status":
        for name, compiled in loaded().items():
            print(f"{name}: {'compiled' if compiled else 'Python'}")
        return 0
    print(f"unknown command {command!r} (build, status, clean)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
