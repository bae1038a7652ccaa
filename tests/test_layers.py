"""The import contract: the layers of the README's architecture section, read from the code.

    docs/_ext                     reads everything
    cli (the package root)        the command line over all of it
    testing                       tests generated from the model (pubproof explore, the
                                  strategies and fixtures for implementers): drives peers
                                  with the probe's machinery
    pipeline   probe   proofs     apply the judges / encode the model; none imports another
    judge                         findings, packet descriptions, the link and close judges
    reference                     the fast codec and session; the rule registry, no logic
    model                         imports nothing above it

Every ``import`` and ``from ... import`` in every module counts, wherever it stands (inside
a function, under ``TYPE_CHECKING``): an arrow is an arrow. The reference may use the rule
registry and its plain data (rules, wire rules, editions and the distribution readings, the
trace form ``P``, the texts, the 5.0 property table) but none of the model's logic: it is the
independent implementation the tests compare with the model.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT

#: folder -> the layer (subpackage of pubproof) its modules are
FOLDERS = {
    "model": "model",
    "reference": "reference",
    "judge": "judge",
    "proofs": "proofs",
    "probe": "probe",
    "pipeline": "pipeline",
    "testing": "testing",
    "cli": "cli",
}
#: layer -> the layers it may import (its own always)
ALLOWED: dict[str, set[str]] = {
    "model": set(),
    "reference": {"model"},
    "judge": {"model", "reference"},
    "proofs": {"model", "reference"},
    "probe": {"model", "reference", "judge"},
    "pipeline": {"model", "reference", "judge"},
    "testing": {"model", "reference", "judge", "probe"},
    "cli": {"model", "reference", "judge", "proofs", "probe", "pipeline", "testing"},
}
#: the modules of the model the reference may import: the registry and its data
REFERENCE_MAY_USE = {
    "pubproof.model",  # the package itself (for ``from pubproof.model import wire_rules``)
    "pubproof.model.rules",
    "pubproof.model.wire_rules",
    "pubproof.model.editions",
    "pubproof.model.trace",
    "pubproof.model.texts",
    "pubproof.model.properties50",  # Table 2-4 of MQTT 5.0 as data
    # the table of distribution readings (names, values, defaults per edition) and its
    # resolver, as editions' READINGS and resolve_readings are: the distribution core
    # must take the same readings, by the same names, as the model
    "pubproof.model.distribution_readings",
}
SUBPACKAGES = {"model", "reference", "judge", "proofs", "probe", "pipeline", "testing"}


def _package_of(path: Path) -> str:
    """The dotted module name a source file is installed as (``package-dir`` mapping)."""
    folder, *rest = path.relative_to(ROOT).with_suffix("").parts
    parts = ["pubproof"] if folder == "cli" else ["pubproof", folder]
    parts += [p for p in rest if p != "__init__"]
    return ".".join(parts)


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, module) for every module the file imports, relative imports resolved;
    ``from pkg import name`` gives ``pkg.name`` too when that is a module of pubproof."""
    module = _package_of(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            yield node.lineno, target
            for alias in node.names:
                yield node.lineno, f"{target}.{alias.name}"


def _layer(module: str) -> str | None:
    """The layer of a pubproof module; None outside pubproof."""
    parts = module.split(".")
    if parts[0] != "pubproof":
        return None
    if len(parts) > 1 and parts[1] in SUBPACKAGES:
        return parts[1]
    return "cli"


def _is_module(name: str) -> bool:
    """Whether a dotted pubproof name is a module or package of the source tree."""
    parts = name.split(".")[1:]
    if not parts:
        return True
    folder = ROOT / parts[0] if parts[0] in SUBPACKAGES else ROOT / "cli" / parts[0]
    rest = parts[1:] if parts[0] in SUBPACKAGES else []
    path = folder.joinpath(*rest)
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _sources() -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py"))


def _arrows() -> Iterator[tuple[Path, int, str, str, str]]:
    """(file, line, its layer, imported module, that module's layer) for every arrow
    between pubproof modules."""
    for path in _sources():
        own = FOLDERS[path.relative_to(ROOT).parts[0]]
        for line, target in _imports(path):
            layer = _layer(target)
            if layer is not None and _is_module(target):
                yield path, line, own, target, layer


def test_the_layers_point_down_only() -> None:
    wrong = [
        f"{path.relative_to(ROOT)}:{line}: {own} imports {target} ({layer})"
        for path, line, own, target, layer in _arrows()
        if layer != own and layer not in ALLOWED[own]
    ]
    assert wrong == []


def test_the_reference_uses_the_registry_and_none_of_the_models_logic() -> None:
    wrong = [
        f"{path.relative_to(ROOT)}:{line}: {target}"
        for path, line, own, target, layer in _arrows()
        if own == "reference"
        and layer == "model"
        and target not in REFERENCE_MAY_USE
        and not target.startswith("pubproof.model.texts.")
    ]
    assert wrong == []


@pytest.mark.parametrize(
    ("one", "other"),
    [("pipeline", "probe"), ("probe", "pipeline"), ("probe", "testing"), ("pipeline", "testing")],
)
def test_neither_application_imports_the_other(one: str, other: str) -> None:
    assert not [t for _, _, own, t, layer in _arrows() if own == one and layer == other]


def test_the_contract_sees_every_kind_of_import(tmp_path: Path) -> None:
    """A test that cannot fail is a defect: the reader finds the arrows it must find."""
    arrows = {(own, t) for _, _, own, t, _ in _arrows()}
    assert ("pipeline", "pubproof.judge.close") in arrows  # from ... import
    assert ("reference", "pubproof.model.rules") in arrows
    assert ("model", "pubproof.model.flows") in arrows  # relative or absolute, in-layer
    # a sideways arrow, as the probe's package once had to the pipeline's
    assert _layer("pubproof.pipeline.connection") == "pipeline"
    assert "pipeline" not in ALLOWED["probe"] and "probe" not in ALLOWED["pipeline"]
    assert _package_of(ROOT / "cli" / "main.py") == "pubproof.main"
    assert _package_of(ROOT / "judge" / "__init__.py") == "pubproof.judge"


def test_every_source_folder_is_a_layer() -> None:
    """A new top-level folder of Python code must take its place in the contract."""
    packaged = {p.parent.relative_to(ROOT).parts[0] for p in ROOT.glob("*/__init__.py")}
    assert packaged <= set(FOLDERS)


def _modules_imported(path: Path) -> set[str]:
    """The top-level names of every module ``path`` imports, wherever the import stands."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def _test_imports(tests: Path) -> set[str]:
    """``file imports test_file`` for every test file or support module of ``tests`` that
    imports a test file."""
    test_files = {p.stem for p in tests.glob("test_*.py")}
    return {
        f"{path.relative_to(tests)} imports {name}"
        for path in sorted([*tests.glob("*.py"), *tests.glob("support/*.py")])
        for name in _modules_imported(path) & test_files
    }


def test_no_test_file_imports_another() -> None:
    """What tests share lives in ``tests/support`` (tests/README.md); a mutation runner
    reaches the file whose tests kill its mutants through ``support.suites``, by name."""
    tests = ROOT / "tests"
    assert _test_imports(tests) == set()
    assert {p.name for p in tests.glob("*.py") if not p.name.startswith("test_")} == {
        "conftest.py"
    }


def test_a_test_file_importing_another_is_seen(tmp_path: Path) -> None:
    (tmp_path / "support").mkdir()
    (tmp_path / "test_a.py").write_text("def test_a() -> None: ...\n")
    (tmp_path / "test_b.py").write_text("def f() -> None:\n    from test_a import test_a\n")
    (tmp_path / "support" / "x.py").write_text("import test_a as A\n")
    (tmp_path / "test_c.py").write_text("from support.x import A\n")
    assert _test_imports(tmp_path) == {"test_b.py imports test_a", "support/x.py imports test_a"}


def test_every_test_file_is_on_the_map() -> None:
    """tests/README.md maps the code to its tests by file-name patterns; a test file no
    pattern names is a test nobody looks for."""
    tests = ROOT / "tests"
    text = (tests / "README.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    patterns = {p for row in rows for p in re.findall(r"`(test_[\w*]+)`", row.split("|")[2])}
    assert len(patterns) > 20
    unmapped = [
        p.name
        for p in sorted(tests.glob("test_*.py"))
        if not any(fnmatch.fnmatch(p.stem, pattern) for pattern in patterns)
    ]
    assert unmapped == []
    # every support module is named in the map's paragraph on support/
    named = set(re.findall(r"`(\w+)`", text.split("`support/`", 1)[1]))
    modules = {p.stem for p in (tests / "support").glob("*.py")} - {"__init__"}
    assert modules <= named, sorted(modules - named)
