"""The Sphinx extension that generates pubproof's site pages from the project's registries.

At ``builder-inited`` it loads the latest ``pubproof prove --json`` report, the clause
alignment, the rule, theorem and ambiguity registries, the flow tables and the tests, and
writes reStructuredText pages under ``docs/_generated/`` (only the files whose text
changed, and it removes the ones no longer generated). Problems in that data (a rule whose
source cannot be found, a stale prove report, a statement with no coverage, a catalog
example whose bytes the model judges otherwise than stated) are Sphinx warnings, so
``sphinx-build -W`` fails on them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

from pubproof_docs import coverage, excerpt
from pubproof_docs.context import GENERATED, Context, load, prove_json_path
from pubproof_docs.rst import write_if_changed

logger = logging.getLogger(__name__)

Pages = Callable[[Context], dict[str, str]]


def _all_pages(ctx: Context, notebooks: bool) -> dict[str, str]:
    """Every generated page: docname -> reStructuredText."""
    from pubproof_docs import (
        pages_ambiguities,
        pages_clauses,
        pages_diagrams,
        pages_matrix,
        pages_notebooks,
        pages_reference,
        pages_source,
        pages_theorems,
        pages_trace,
    )

    pages = {
        pages_trace.TRACE_DOC: pages_trace.statements_page(ctx),
        pages_trace.RULES_DOC: pages_trace.rules_page(ctx),
        pages_trace.TESTS_DOC: pages_trace.tests_page(ctx),
    }
    pages.update(pages_theorems.pages(ctx))
    pages.update(pages_clauses.pages(ctx))
    pages.update(pages_ambiguities.pages(ctx))
    pages.update(pages_diagrams.pages(ctx))
    pages.update(pages_reference.pages(ctx))
    pages.update(pages_notebooks.pages(ctx, included=notebooks))
    pages.update(pages_matrix.pages(ctx))
    from pubproof_docs import clauses50, edition_diff

    pages.update(clauses50.pages(ctx))
    pages.update(edition_diff.pages(ctx))
    for path in pages_source.referenced_files(ctx):
        pages[ctx.source_page(path)] = pages_source.source_page(ctx, path)
    return pages


#: The context of the running build (the search table is written from it at the end).
CONTEXT: list[Context] = []


def generate(app: Sphinx) -> None:
    docs = Path(app.srcdir)
    root = docs.parent
    ctx = load(root, docs, prove_json_path(root))
    CONTEXT[:] = [ctx]
    coverage.APP[:] = [app]
    for problem in ctx.trace.problems:
        logger.warning("pubproof traceability: %s", problem)
    from pubproof_docs import clauses50

    # the 78 statements of the 5.0 PUBLISH family: each covered or out of scope with a reason
    for problem in clauses50.problems(ctx):
        logger.warning("pubproof traceability (MQTT 5.0 PUBLISH family): %s", problem)
    from pubproof_docs import wording

    # the 3.1.1 sentences no rule quotes (standard50.toml's problems are among those above)
    for problem in wording.recorded(docs, "3.1.1")[1]:
        logger.warning("pubproof standard's words (MQTT 3.1.1): %s", problem)
    from pubproof.model.ambiguities import AMBIGUITIES, example_problems

    # an example of the catalog the model's decoder no longer confirms fails the build
    for problem in example_problems(AMBIGUITIES):
        logger.warning("pubproof ambiguity catalog: %s", problem)
    pages = _all_pages(ctx, notebooks="notebooks" not in app.config.exclude_patterns)
    out = docs / GENERATED
    written = 0
    for docname, text in pages.items():
        written += write_if_changed(docs / f"{docname}.rst", text)
    wanted = {docs / f"{d}.rst" for d in pages}
    for stale in out.rglob("*.rst"):
        if stale not in wanted:
            stale.unlink()
    logger.info("pubproof: %d generated pages (%d rewritten)", len(pages), written)


def write_search_table(app: Sphinx, exception: Exception | None) -> None:
    """The rule-id search table (:mod:`pubproof_docs.search`), for an HTML build."""
    if exception is None and app.builder.format == "html" and CONTEXT:
        from pubproof_docs import search

        search.write(CONTEXT[0], Path(app.outdir))


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", generate)
    app.connect("build-finished", write_search_table)
    coverage.register(app)
    excerpt.setup(app)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
