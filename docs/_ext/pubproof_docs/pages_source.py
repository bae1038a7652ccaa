"""Pages that show a project file with an anchor on every line (``#L-<n>``), so that the
site can link a test or a rule to its exact lines."""

from __future__ import annotations

from pathlib import Path

from pygments import highlight  # type: ignore[import-untyped]
from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]
from pygments.lexers import PythonLexer  # type: ignore[import-untyped]

from pubproof_docs.context import Context
from pubproof_docs.rst import esc, heading, indent


def referenced_files(ctx: Context) -> list[Path]:
    """Every file a generated page links to by line."""
    files = {span.path for rule in ctx.trace.rules.values() for span in rule.spans}
    files |= {test.function.path for test in ctx.trace.tests.values()}
    return sorted(files)


def source_page(ctx: Context, path: Path) -> str:
    relative = path.relative_to(ctx.root).as_posix()
    formatter = HtmlFormatter(linenos="inline", linespans="L", cssclass="highlight")
    html: str = highlight(path.read_text(encoding="utf-8"), PythonLexer(), formatter)
    return (
        f":orphan:\n\n{heading(esc(relative), '=')}\n"
        f"``{relative}`` as this build read it (each line has the anchor ``#L-<number>``).\n\n"
        f".. raw:: html\n\n{indent(html, 3)}\n"
    )
