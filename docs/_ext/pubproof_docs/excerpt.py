"""``.. pp-excerpt::`` shows lines of a source text, clean (:mod:`pubproof_docs.clean`: the
``==`` capture marks become highlights, lines broken in mid-sentence are joined, headings
keep their lines) with its tables as tables (:mod:`pubproof_docs.tables`), in a block
marked with its language, so the browser picks the right fonts and the text wraps instead
of scrolling."""

from __future__ import annotations

from typing import Any, ClassVar

from docutils import nodes  # type: ignore[import-untyped]
from docutils.parsers.rst import directives  # type: ignore[import-untyped]
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from pubproof_docs import clean, tables


class excerpt_node(nodes.General, nodes.Element):  # type: ignore[misc]
    """A verbatim excerpt in one language."""


class Excerpt(SphinxDirective):
    has_content = True
    option_spec: ClassVar[dict[str, Any]] = {
        "lang": directives.unchanged_required,
        "lines": directives.unchanged,
    }

    def run(self) -> list[nodes.Node]:
        node = excerpt_node()
        node["lang"] = self.options["lang"]
        node["lines"] = self.options.get("lines", "")
        node["text"] = "\n".join(self.content)
        return [node]


def visit_html(self: Any, node: excerpt_node) -> None:
    lang = self.encode(node["lang"])
    where = self.encode(node["lines"])
    self.body.append(
        f'<div class="pp-excerpt" lang="{lang}" data-lang="{lang}" title="{where}">'
        f"{tables.to_html(node['text'], node['lang'], node['lines'])}</div>\n"
    )
    raise nodes.SkipNode


def visit_text(self: Any, node: excerpt_node) -> None:
    self.add_text(clean.to_text(node["text"], node["lang"]))
    raise nodes.SkipNode


def setup(app: Sphinx) -> None:
    app.add_node(
        excerpt_node,
        html=(visit_html, None),
        text=(visit_text, None),
    )
    app.add_directive("pp-excerpt", Excerpt)
