"""Everything the generated pages are made from, loaded once per build."""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from pathlib import Path

from pubproof_docs.data import (
    IndexEntry,
    ProveRun,
    load_dist_index,
    load_index,
    load_index_50,
    load_out_of_scope,
    load_prove,
)
from pubproof_docs.trace import Trace, build

#: Where the generated pages go, relative to the docs source folder.
GENERATED = "_generated"


@dataclass(frozen=True, slots=True, kw_only=True)
class Context:
    root: Path  # the project
    docs: Path  # the Sphinx source folder
    prove: ProveRun
    index: dict[str, IndexEntry]  # Table A of the normative index (MQTT 3.1.1)
    index_50: dict[str, IndexEntry]  # its Table B (MQTT 5.0)
    dist_index: dict[str, IndexEntry]  # Table C of the distribution index (MQTT 3.1.1)
    dist_index_50: dict[str, IndexEntry]  # its Table D (MQTT 5.0)
    trace: Trace

    @property
    def out(self) -> Path:
        return self.docs / GENERATED

    def source_page(self, path: Path) -> str:
        """The docname of the generated page that shows a project file with line anchors."""
        relative = path.relative_to(self.root).as_posix()
        return f"{GENERATED}/source/{relative.replace('/', '--')}"

    def source_url(self, from_doc: str, path: Path, line: int | None = None) -> str:
        """A relative URL from the page ``from_doc`` to ``path`` (at ``line``) on its page."""
        target = self.source_page(path) + ".html"
        url = posixpath.relpath(target, posixpath.dirname(from_doc) or ".")
        return url + (f"#L-{line}" if line else "")


def load(root: Path, docs: Path, prove_json: Path) -> Context:
    index = load_index(docs / "data" / "normative-index.md")
    index_50 = load_index_50(docs / "data" / "normative-index.md")
    dist_index = load_dist_index(dist_index_path(docs), "C")
    dist_index_50 = load_dist_index(dist_index_path(docs), "D")
    prove = load_prove(prove_json)
    trace = build(
        root=root,
        index=index,
        index_50=index_50,
        dist_index=dist_index,
        dist_index_50=dist_index_50,
        out_of_scope=load_out_of_scope(out_of_scope_path(docs)),
        prove=prove,
    )
    return Context(
        root=root,
        docs=docs,
        prove=prove,
        index=index,
        index_50=index_50,
        dist_index=dist_index,
        dist_index_50=dist_index_50,
        trace=trace,
    )


def dist_index_path(docs: Path) -> Path:
    """The project's copy of the distribution index (Tables C and D)."""
    return docs / "data" / "distribution-index.md"


def prove_json_path(root: Path) -> Path:
    """``$PUBPROOF_PROVE_JSON`` or ``build/docs-data/prove.json`` (what ``scripts/docs`` writes)."""
    return Path(os.environ.get("PUBPROOF_PROVE_JSON", root / "build" / "docs-data" / "prove.json"))


def out_of_scope_path(docs: Path) -> Path:
    """``$PUBPROOF_OUT_OF_SCOPE`` (the tests use it to show the build fails without a
    reason) or ``docs/data/out-of-scope.toml``."""
    return Path(os.environ.get("PUBPROOF_OUT_OF_SCOPE", docs / "data" / "out-of-scope.toml"))
