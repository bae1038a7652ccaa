"""Where things are in the project's source: found with ``ast``, never typed in.

The site shows each model rule by including its definition from the code. These functions
find the lines: the ``rule("key", ...)`` call that registers a rule in
``model/wire_rules.py`` (a key built by an f-string in a loop is matched against the
f-string's pattern, and the whole loop is shown), and the entries of a flow table in
``model/flows.py`` that cite a given rule id, with the comment lines that quote the spec
above them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path


@dataclass(frozen=True, slots=True, kw_only=True)
class Span:
    """Lines ``start`` to ``end`` (1-based, inclusive) of ``path``."""

    path: Path
    start: int
    end: int


def _statement_parents(tree: ast.AST) -> dict[ast.AST, ast.stmt]:
    """Each node's innermost enclosing top-level statement."""
    parents: dict[ast.AST, ast.stmt] = {}
    assert isinstance(tree, ast.Module)
    for statement in tree.body:
        for node in ast.walk(statement):
            parents[node] = statement
    return parents


@cache
def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _key_pattern(node: ast.expr) -> re.Pattern[str] | None:
    """The keys a ``rule(...)`` call's first argument can take, as a regex."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return re.compile(re.escape(node.value) + r"\Z")
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                parts.append(re.escape(value.value))
            else:
                parts.append(r".+")
        return re.compile("".join(parts) + r"\Z")
    return None


def rule_definition(path: Path, key: str, call: str = "rule") -> Span:
    """The lines that register the rule ``key``: its ``rule(...)`` call (or the call of
    ``call``, a module's own wrapper of it), or the whole top-level statement (a loop) when
    the key is built from a pattern."""
    tree = _parse(path)
    parents = _statement_parents(tree)
    patterned: list[ast.Call] = []
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == call
            and node.args
        ):
            continue
        pattern = _key_pattern(node.args[0])
        if pattern is None or not pattern.match(key):
            continue
        if isinstance(node.args[0], ast.Constant):
            statement = parents[node]
            # the assignment that names the rule, when the call is the whole statement
            start = statement.lineno if statement.end_lineno == node.end_lineno else node.lineno
            return Span(path=path, start=start, end=node.end_lineno or node.lineno)
        patterned.append(node)
    if len(patterned) == 1:
        statement = parents[patterned[0]]
        return Span(path=path, start=statement.lineno, end=statement.end_lineno or 0)
    raise LookupError(f"no single rule(...) definition of {key!r} in {path}")


def _string_constants(node: ast.AST) -> Iterator[str]:
    for child in ast.walk(node):
        if isinstance(child, ast.Constant) and isinstance(child.value, str):
            yield child.value


def _comment_start(lines: list[str], line: int) -> int:
    """The first line of the run of comment lines directly above ``line`` (1-based)."""
    start = line
    while start > 1 and lines[start - 2].strip().startswith("#"):
        start -= 1
    return start


def _assigned(tree: ast.Module, name: str) -> ast.expr:
    for statement in tree.body:
        if isinstance(statement, ast.AnnAssign | ast.Assign):
            targets = (
                [statement.target] if isinstance(statement, ast.AnnAssign) else statement.targets
            )
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                assert statement.value is not None
                return statement.value
    raise LookupError(f"no top-level assignment to {name}")


def _dicts(node: ast.expr) -> list[ast.Dict]:
    """The dict displays of a table: ``MappingProxyType({...})`` and nested method tables."""
    return [n for n in ast.walk(node) if isinstance(n, ast.Dict)]


def _entries(table: ast.Dict) -> Iterator[tuple[ast.expr | None, ast.expr]]:
    yield from zip(table.keys, table.values, strict=True)


def table_entries(path: Path, table: str, rule_id: str, method: str | None = None) -> list[Span]:
    """The entries of the flow table ``table`` (a top-level name in ``path``; for
    ``RECEIVER_METHOD`` the sub-table of ``method``) whose definition cites ``rule_id``,
    each with the comment lines above it."""
    tree = _parse(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    value = _assigned(tree, table)
    outer = _dicts(value)[0]
    if method is not None:
        found = None
        for key, sub in _entries(outer):
            if isinstance(key, ast.Attribute) and key.attr == method:
                found = _dicts(sub)[0]
        if found is None:
            raise LookupError(f"{table} has no table for method {method}")
        outer = found
    spans = []
    for key, entry in _entries(outer):
        node = entry if key is None else key
        cited = any(rule_id == s for s in _string_constants(entry))
        if not cited:
            continue
        start = _comment_start(lines, node.lineno)
        spans.append(Span(path=path, start=start, end=entry.end_lineno or entry.lineno))
    return spans


def merged(spans: list[Span]) -> list[Span]:
    """Spans of one file, sorted, with overlapping and adjacent ones joined."""
    out: list[Span] = []
    for span in sorted(spans, key=lambda s: (s.start, s.end)):
        if out and span.start <= out[-1].end + 1:
            last = out[-1]
            out[-1] = Span(path=last.path, start=last.start, end=max(last.end, span.end))
        else:
            out.append(span)
    return out


def lines_option(spans: list[Span]) -> str:
    """A ``literalinclude`` ``:lines:`` value for spans of one file."""
    return ",".join(f"{s.start}-{s.end}" for s in merged(spans))


# --- the tests -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class TestFunction:
    """One pytest test function and every string constant in it (decorators included) and
    in the helper functions of ``tests/`` it calls."""

    path: Path
    name: str  # "test_x" or "TestClass::test_x"
    start: int
    end: int
    strings: frozenset[str]
    calls: frozenset[str]  # names of functions it calls
    #: every name and attribute it uses (``Edition.V50`` gives ``Edition`` and ``V50``)
    names: frozenset[str] = frozenset()
    #: parametrized over the editions by a collection that is not written out
    #: (``@pytest.mark.parametrize("edition", ALL)``): it runs in every edition
    all_editions: bool = False
    #: the helper functions of ``tests/`` whose strings and names count as its own
    helpers: tuple[str, ...] = ()

    @property
    def nodeid(self) -> str:
        return f"tests/{self.path.name}::{self.name}"


def _functions(
    body: list[ast.stmt], prefix: str = ""
) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            yield prefix + node.name, node
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            yield from _functions(node.body, f"{prefix}{node.name}::")


Function = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True, slots=True, kw_only=True)
class _Module:
    """A module of ``tests/`` or ``tests/support/``: its top-level functions, and the names
    it imports from the other modules there (``from support.distribution_checks import
    check_suback``)."""

    functions: dict[str, Function]
    imported: dict[str, tuple[str, str]]  # local name -> (module, name there)
    modules: dict[str, str]  # local name -> module (``import distribution_checks``)


def _module(tree: ast.Module, local: set[str]) -> _Module:
    functions = {n.name: n for n in tree.body if isinstance(n, Function)}
    imported: dict[str, tuple[str, str]] = {}
    modules: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module in local and not node.level:
            for alias in node.names:
                imported[alias.asname or alias.name] = (node.module, alias.name)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            # ``from support import distribution_checks as C``
            for alias in node.names:
                if f"{node.module}.{alias.name}" in local:
                    modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in local:
                    modules[alias.asname or alias.name] = alias.name
    return _Module(functions=functions, imported=imported, modules=modules)


def _called(node: ast.AST, module: str, modules: dict[str, _Module]) -> list[tuple[str, str]]:
    """The functions of ``tests/`` that ``node`` calls, as (module, name)."""
    here = modules[module]
    found = []
    for call in ast.walk(node):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        if isinstance(func, ast.Name):
            if func.id in here.imported:
                found.append(here.imported[func.id])
            elif func.id in here.functions:
                found.append((module, func.id))
        elif (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in here.modules
        ):
            found.append((here.modules[func.value.id], func.attr))
    return [(m, n) for m, n in found if n in modules[m].functions]


def _helpers(node: Function, module: str, modules: dict[str, _Module]) -> list[tuple[str, str]]:
    """Every helper function of ``tests/`` the test calls, directly or through another."""
    seen: list[tuple[str, str]] = []
    todo = _called(node, module, modules)
    while todo:
        found = todo.pop(0)
        if found in seen or modules[found[0]].functions[found[1]] is node:
            continue
        seen.append(found)
        todo += _called(modules[found[0]].functions[found[1]], found[0], modules)
    return seen


def _names(node: ast.AST) -> set[str]:
    return {
        n.id if isinstance(n, ast.Name) else n.attr
        for n in ast.walk(node)
        if isinstance(n, ast.Name | ast.Attribute)
    }


def _all_editions(node: Function) -> bool:
    """Whether a ``parametrize`` decorator gives the test an ``edition`` argument from a
    collection that is not written out (``ALL``, ``list(Edition)``): a written-out list
    names its editions itself (``[V311, V50]``)."""
    for decorator in node.decorator_list:
        if not (
            isinstance(decorator, ast.Call)
            and isinstance(decorator.func, ast.Attribute)
            and decorator.func.attr == "parametrize"
            and len(decorator.args) >= 2
        ):
            continue
        argnames, values = decorator.args[0], decorator.args[1]
        if (
            isinstance(argnames, ast.Constant)
            and isinstance(argnames.value, str)
            and "edition" in [a.strip() for a in argnames.value.split(",")]
            and not isinstance(values, ast.List | ast.Tuple)
        ):
            return True
    return False


def test_functions(tests: Path) -> list[TestFunction]:
    """Every test function in ``tests/test_*.py``, with the strings and names of the helper
    functions of ``tests/`` and ``tests/support/`` it calls
    (``distribution_checks.check_suback``, a module's own ``_judge(...)``): what a helper
    names, the test verifies through it."""
    paths = [*sorted(tests.glob("*.py")), *sorted(tests.glob("support/*.py"))]

    def key(path: Path) -> str:  # the name a test imports it by: ``support.builds``
        return path.stem if path.parent == tests else f"{path.parent.name}.{path.stem}"

    local = {key(path) for path in paths}
    modules = {key(path): _module(_parse(path), local) for path in paths}
    found = []
    for path in paths:
        if path.parent != tests or not path.name.startswith("test_"):
            continue
        tree = _parse(path)
        for name, node in _functions(tree.body):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            helpers = _helpers(node, key(path), modules)
            bodies: list[ast.AST] = [node, *(modules[m].functions[n] for m, n in helpers)]
            calls = frozenset(
                c.func.id if isinstance(c.func, ast.Name) else c.func.attr
                for body in bodies
                for c in ast.walk(body)
                if isinstance(c, ast.Call) and isinstance(c.func, ast.Name | ast.Attribute)
            )
            found.append(
                TestFunction(
                    path=path,
                    name=name,
                    start=start,
                    end=node.end_lineno or node.lineno,
                    strings=frozenset(s for body in bodies for s in _string_constants(body)),
                    calls=calls,
                    names=frozenset(n for body in bodies for n in _names(body)),
                    all_editions=_all_editions(node),
                    helpers=tuple(f"{m}.{n}" for m, n in helpers),
                )
            )
    return found
