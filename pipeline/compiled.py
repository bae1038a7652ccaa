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

Where the modules go is where Python imports the package from (:func:`locate`, a
:class:`Layout`), in each of the three ways pubproof is installed:

- ``pip install .``: one tree, ``site-packages/pubproof/``;
- ``pip install -e . --config-settings editable_mode=strict`` (``scripts/setup``): one tree
  of links, ``build/__editable__.*/pubproof/``;
- ``pip install -e .``: no tree at all. Each package is imported from its own folder of the
  checkout (``cli/`` is ``pubproof``, ``pipeline/`` is ``pubproof.pipeline``, as
  ``pyproject.toml``'s ``package-dir`` maps them), which mypy cannot follow: the build
  links the packages it reads into one tree in a scratch folder (:func:`stage`) and
  compiles there, and the modules land beside their sources in the checkout.

Every compiled module imports one library, mypyc's group, named :data:`LIBRARY` and kept in
``pubproof``'s own folder (never at the top of ``site-packages``, where other mypyc builds,
mypy's among them, keep theirs).

``build`` does nothing when the sources, mypy and Python are those of the last build (a
stamp file in ``pubproof``'s folder), and copies the modules from
``~/.cache/pubproof/compiled`` when they were built before from the same sources (``pip
install -e`` drops them). A build takes a few minutes (mypy's analysis of the imports, then
gcc).
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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

#: the modules compiled: every frame and every packet goes through them (the judges of
#: pubproof.judge are not among them: the pipeline runs their compiled twins, in
#: pipeline.fast; the close judge runs only after an offence)
COMPILED = (
    "pubproof.pipeline.capture",
    "pubproof.pipeline.capture_plan",
    "pubproof.pipeline.capture_read",
    "pubproof.pipeline.dissect",
    "pubproof.pipeline.source",
    "pubproof.pipeline.reassembly",
    "pubproof.pipeline.framing",
    "pubproof.pipeline.detect",
    "pubproof.pipeline.trail",
    "pubproof.pipeline.rows",
    "pubproof.pipeline.receivers",
    "pubproof.pipeline.family",
    "pubproof.pipeline.tap",
    "pubproof.pipeline.connection_state",
    "pubproof.pipeline.connection_judging",
    "pubproof.pipeline.connection_packets",
    "pubproof.pipeline.connection",
    "pubproof.pipeline.engine_python",
    "pubproof.reference.common",
    "pubproof.reference.section50",
    "pubproof.reference.fast50",
    "pubproof.reference.decode50",
    "pubproof.reference.codec",
    "pubproof.pipeline.fast.layout",
    "pubproof.pipeline.fast.ends",
    "pubproof.pipeline.fast.link",
    "pubproof.pipeline.fast.link50_tables",
    "pubproof.pipeline.fast.link50",
    "pubproof.pipeline.fast.aliases",
    # the cross-connection stage's twin of the distribution judge: a table look-up per event
    "pubproof.pipeline.fast.distribution_state",
    "pubproof.pipeline.fast.distribution_quiet",
    "pubproof.pipeline.fast.distribution",
    # the stage around it: the events held and grouped, each row of ``deliveries`` made
    "pubproof.pipeline.events_held",
    "pubproof.pipeline.servers",
    # where a topic the twin gave up on is cut (a few passes over its rows)
    "pubproof.pipeline.handback",
    # the subscription index's match on a topic name not in its cache, about 2.5x (issue 34)
    "pubproof.reference.topics",
    "pubproof.reference.subscriptions",
    "pubproof.reference.retained_topics",
)
#: the environment variable that makes a process import the Python source
PURE = "PUBPROOF_PURE"
STAMP = ".pubproof-compiled"
#: mypyc's group: the one library every compiled module imports (a module of ``pubproof``)
GROUP = "pubproof.compiled"
LIBRARY = f"{GROUP}__mypyc"
#: the packages the build reads: ``pubproof`` itself, and the compiled modules' own with
#: every layer they may import (``tests/test_layers.py``: the pipeline imports the model,
#: the reference codec and the judges, nothing else of pubproof)
PACKAGES = (
    "pubproof",
    "pubproof.model",
    "pubproof.reference",
    "pubproof.judge",
    "pubproof.pipeline",
    "pubproof.pipeline.fast",
)


class Unlocatable(Exception):
    """The installed package is not a set of folders of source files the build can use."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Layout:
    """The folder each package of :data:`PACKAGES` is imported from."""

    folders: Mapping[str, Path]

    def __post_init__(self) -> None:
        missing = [p for p in PACKAGES if p not in self.folders]
        if missing:
            raise ValueError(f"a layout needs the folders of {', '.join(missing)}")

    @property
    def root(self) -> Path:
        """``pubproof``'s own folder: the stamp and the group's library are kept there."""
        return self.folders["pubproof"]

    def folder(self, module: str) -> Path:
        """The folder of a module (of one of :data:`PACKAGES`)."""
        return self.folders[module.rpartition(".")[0]]

    def source(self, module: str) -> Path:
        """The Python source of a module."""
        return self.folder(module) / f"{module.rpartition('.')[2]}.py"

    def extensions(self, module: str) -> list[Path]:
        """The compiled files of ``module`` (a module of :data:`COMPILED` or
        :data:`LIBRARY`)."""
        return extensions(self.folder(module), module.rpartition(".")[2])


def package_folder(name: str) -> Path | None:
    """The folder Python imports the package ``name`` from; None when it is not a package
    of files (a zip, a namespace without folders)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations or spec.origin is None:
        return None
    folder = Path(next(iter(spec.submodule_search_locations)))
    return folder if (folder / "__init__.py").is_file() else None


def locate(find: Callable[[str], Path | None] = package_folder) -> Layout:
    """Where the installed package is, in whichever of the three layouts it was installed
    (``find``: a package's folder, by default Python's own answer). Raises
    :class:`Unlocatable` saying why it cannot be compiled where it is."""
    folders = {}
    for package in PACKAGES:
        folder = find(package)
        if folder is None:
            raise Unlocatable(f"{package} is not imported from a folder of source files")
        folders[package] = folder
    layout = Layout(folders=folders)
    for module in COMPILED:
        if not layout.source(module).is_file():
            raise Unlocatable(f"the source of {module} is not at {layout.source(module)}")
    return layout


def extensions(folder: Path, name: str) -> list[Path]:
    """The compiled files of the module ``name`` in ``folder``."""
    return sorted(
        folder / f"{name}{suffix}"
        for suffix in importlib.machinery.EXTENSION_SUFFIXES
        if (folder / f"{name}{suffix}").exists()
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


def _fingerprint(layout: Layout) -> str:
    import mypy.version

    digest = hashlib.sha256()
    digest.update(f"{sys.version}|{mypy.version.__version__}|{COMPILED}|{GROUP}".encode())
    for module in COMPILED:
        digest.update(layout.source(module).read_bytes())
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


def _built(layout: Layout) -> list[Path]:
    """Every compiled module in the packages' folders, in :data:`COMPILED` or not: one left
    by a build of a longer list (an older checkout's) would shadow its source and fail to
    import once its group's library is replaced."""
    return sorted(
        {
            path
            for folder in layout.folders.values()
            for suffix in importlib.machinery.EXTENSION_SUFFIXES
            for path in folder.rglob(f"*{suffix}")
            if path.with_name(path.name[: -len(suffix)] + ".py").exists()
        }
    )


def clean(layout: Layout) -> None:
    """Remove every compiled module and the group's library (the source is used again)."""
    for path in [*_built(layout), *layout.extensions(LIBRARY)]:
        path.unlink()
    (layout.root / STAMP).unlink(missing_ok=True)


def _artifacts(layout: Layout) -> dict[str, Path]:
    """The files of a complete build, by the name the cache keeps them under (the module's
    dotted name and the file's suffix); empty when a module has none."""
    found: dict[str, Path] = {}
    for module in (*COMPILED, LIBRARY):
        paths = layout.extensions(module)
        if not paths:
            return {}
        found.update({module + path.name[len(module.rpartition(".")[2]) :]: path
                      for path in paths})  # fmt: skip
    return found


def stage(layout: Layout, work: Path) -> Path:
    """A tree under ``work`` that holds the packages of :data:`PACKAGES` at their dotted
    paths, for mypy (which reads a package from one folder tree only): ``pubproof/`` with
    the files of ``pubproof``'s folder linked one by one, and each subpackage a link to its
    folder, so that what the compiler writes into a subpackage lands beside its source.
    Returns ``work``."""
    top = work / "pubproof"
    top.mkdir(parents=True)
    for entry in sorted(layout.root.iterdir()):
        if entry.is_file() and (entry.suffix == ".py" or entry.name == "py.typed"):
            (top / entry.name).symlink_to(entry)
    for package in PACKAGES[1:]:
        link = work.joinpath(*package.split("."))
        if link.exists():
            continue  # a subpackage in its package's folder: the parent's link holds it
        link.symlink_to(layout.folders[package], target_is_directory=True)
    return work


def build(layout: Layout, *, force: bool = False) -> int:
    """Compile :data:`COMPILED` where ``layout`` says; 0 when built, up to date or
    impossible here (the reason is printed: the source then runs as it is), 1 when a build
    failed."""
    why = missing_tools()
    if why is not None:
        print(f"pubproof: not compiled, the pipeline runs as Python: {why}")
        return 0
    stamp = layout.root / STAMP
    fingerprint = _fingerprint(layout)
    if not force and _artifacts(layout) and stamp.exists() and stamp.read_text() == fingerprint:
        print("pubproof: the compiled pipeline is up to date")
        return 0
    clean(layout)
    cache = _cache() / fingerprint[:24]
    if not force and (cache / STAMP).exists():
        _restore(cache, layout)  # built before from the same sources (pip install -e wipes it)
        if _artifacts(layout):
            print(f"pubproof: the compiled pipeline copied from {cache}")
            return 0
        clean(layout)
    paths = [str(Path(*m.split(".")).with_suffix(".py")) for m in COMPILED]
    with tempfile.TemporaryDirectory(prefix="pubproof-mypyc-") as scratch:
        config = _config_file(Path(scratch))
        work = stage(layout, Path(scratch) / "tree")
        setup = Path(scratch) / "setup.py"
        setup.write_text(
            "from setuptools import setup\n"
            "from mypyc.build import mypycify\n"
            f"setup(name='pubproof_compiled', ext_modules=mypycify({[*config, *paths]!r}, "
            f"opt_level='3', group_name={GROUP!r}, target_dir={str(Path(scratch) / 'c')!r}))\n"
        )
        argv = [sys.executable, str(setup), "build_ext", "--inplace"]
        argv += ["--build-temp", str(Path(scratch) / "temp")]
        # run in the tree, so that the modules get their full names and land beside their
        # sources (through the links); the group's library lands in the tree's pubproof/
        result = subprocess.run(argv, cwd=work, capture_output=True, text=True, check=False)
        library = extensions(work / "pubproof", LIBRARY.rpartition(".")[2])
        for path in library:
            shutil.copy2(path, layout.root / path.name)
    if result.returncode != 0 or not library or not _artifacts(layout):
        print(result.stdout[-4000:] + result.stderr[-4000:], file=sys.stderr)
        print("pubproof: the compiled build FAILED; the pipeline runs as Python", file=sys.stderr)
        clean(layout)
        return 1
    stamp.write_text(fingerprint)
    shutil.rmtree(cache, ignore_errors=True)
    _save(layout, cache)
    print(f"pubproof: compiled {len(COMPILED)} pipeline modules with mypyc beside their sources "
          f"({layout.folder(COMPILED[0])})")  # fmt: skip
    return 0


def _cache() -> Path:
    """Where builds are kept, by fingerprint (``pip install -e`` rebuilds the link tree
    and drops them)."""
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(home) / "pubproof" / "compiled"


def _save(layout: Layout, cache: Path) -> None:
    """The build's files into ``cache``, each under its module's dotted name, and the
    stamp."""
    cache.mkdir(parents=True, exist_ok=True)
    for name, path in _artifacts(layout).items():
        shutil.copy2(path, cache / name)
    shutil.copy2(layout.root / STAMP, cache / STAMP)


def _restore(cache: Path, layout: Layout) -> None:
    """A build kept in ``cache`` (:func:`_save`) back beside the sources."""
    for module in (*COMPILED, LIBRARY):
        short = module.rpartition(".")[2]
        for path in cache.glob(f"{module}.*"):  # the module's name, then its file's suffix
            shutil.copy2(path, layout.folder(module) / (short + path.name[len(module) :]))
    shutil.copy2(cache / STAMP, layout.root / STAMP)


def _config_file(scratch: Path) -> list[str]:
    """The project's mypy configuration, when its ``pyproject.toml`` is at hand (the
    checkout the sources are in, else the working directory's). Without it (``pip install
    .``), one written in ``scratch`` that lets mypy type as ``Any`` what is not installed:
    the libraries the pipeline imports only when it uses them (PySpark, pyarrow), which
    the project's configuration lets it ignore too."""
    for folder in (*Path(__file__).resolve().parents, Path.cwd()):
        candidate = folder / "pyproject.toml"
        if candidate.exists() and "[tool.mypy]" in candidate.read_text(encoding="utf-8"):
            return ["--config-file", str(candidate)]
    config = scratch / "mypy.ini"
    config.write_text("[mypy]\nignore_missing_imports = True\n")
    return ["--config-file", str(config)]


def main(argv: Sequence[str] | None = None) -> int:
    """``build`` [``--force``], ``status`` or ``clean``."""
    args = list(sys.argv[1:] if argv is None else argv)
    command = args[0] if args else "status"
    if command in ("build", "clean"):
        try:
            layout = locate()
        except Unlocatable as why:
            # one line, no traceback: nothing was touched and the source runs as it is
            print(f"pubproof: not compiled, the pipeline runs as Python: {why} (install "
                  "pubproof from its source: pip install -e . or pip install .)")  # fmt: skip
            return 0
        if command == "clean":
            clean(layout)
            return 0
        return build(layout, force="--force" in args)
    if command == "status":
        for name, compiled in loaded().items():
            print(f"{name}: {'compiled' if compiled else 'Python'}")
        return 0
    print(f"unknown command {command!r} (build, status, clean)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
