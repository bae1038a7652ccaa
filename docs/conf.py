"""Sphinx configuration of the pubproof site.

Build it with ``scripts/docs`` (it first runs ``pubproof prove --json`` so that every
theorem's status on the site is the latest). The pages under ``_generated/`` are written at
build time by the ``pubproof_docs`` extension (``_ext/``) from the project's registries.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

from pubproof import __version__  # noqa: E402

project = "pubproof"
author = "the pubproof authors"
copyright = "the pubproof authors"
release = version = __version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.graphviz",
    "sphinx_design",
    "sphinx_needs",
    "pubproof_docs",
]

# matrix/reproducers: exploration's reproducers, read on GitHub beside their data
exclude_patterns = ["_build", "data", "_ext", "**/.ipynb_checkpoints", ".gitignore",
                    "matrix/reproducers"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
language = "en"
nitpicky = False

# --- HTML: static, offline (no CDN: every asset is served from the site itself) ----------
html_theme = "furo"
html_title = f"pubproof {release}"
html_static_path = ["_static"]
#: the tab's icon: a PUBLISH and its acknowledgement, two arrows between two ends
html_favicon = "_static/favicon.svg"
html_css_files = ["pubproof.css"]
html_js_files = ["pubproof.js"]
html_copy_source = False
html_show_sourcelink = False
html_last_updated_fmt = None
# No MathJax from a CDN: a page with math would point here, a file the site does not have,
# and the internal link check of scripts/docs would fail on it.
mathjax_path = "mathjax-is-not-bundled.js"
html_theme_options = {"navigation_with_keys": True}

# --- diagrams -------------------------------------------------------------------------
graphviz_output_format = "svg"

# --- autodoc --------------------------------------------------------------------------
autodoc_member_order = "bysource"
autodoc_typehints = "description"
# Two modules of the pipeline each define a Segment (a captured one, and one the test
# capture writer makes); an unqualified annotation naming it is ambiguous, not broken.
suppress_warnings = ["ref.python"]
autodoc_default_options = {"undoc-members": False}

# --- notebooks (myst-nb): executed at every build; an error fails the build -------------
# PUBPROOF_DOCS_NOTEBOOKS=0 leaves the notebooks out (a quick build while writing pages;
# scripts/docs and CI never set it).
WITH_NOTEBOOKS = os.environ.get("PUBPROOF_DOCS_NOTEBOOKS", "1") != "0"
if not WITH_NOTEBOOKS:
    exclude_patterns.append("notebooks")
nb_execution_mode = "force"
nb_execution_raise_on_error = True
nb_execution_timeout = 600
nb_execution_show_tb = True
nb_merge_streams = True
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# --- sphinx-needs: the traceability matrix ----------------------------------------------
needs_types = [
    {"directive": "stmt", "title": "Normative statement", "prefix": "S_", "color": "#BFD8D2",
     "style": "node"},
    {"directive": "rule", "title": "Model rule", "prefix": "R_", "color": "#FEDCD2",
     "style": "node"},
    {"directive": "thm", "title": "Theorem", "prefix": "TH_", "color": "#DF744A",
     "style": "node"},
    {"directive": "test", "title": "Test", "prefix": "TE_", "color": "#DCB239", "style": "node"},
]  # fmt: skip
needs_links = {
    "implements": {"incoming": "implemented by", "outgoing": "implements"},
    "verifies": {"incoming": "verified by", "outgoing": "verifies"},
    "checks": {"incoming": "checked by", "outgoing": "checks"},
}
needs_fields = {
    name: {"description": about, "nullable": True}
    for name, about in {
        "label": "the readable id (rule id, rule key, theorem id, test name)",
        "edition": "the edition of a statement",
        "section": "the section of a statement",
        "strength": "RFC 2119 strength",
        "binds": "the party the statement binds",
        "coverage": "covered, out of scope, not verified or UNCOVERED",
        "out_of_scope": "why a statement is not covered (docs/data/out-of-scope.toml)",
        "result": "a theorem's status in the latest prove run",
        "method": "how a theorem is checked",
        "seconds": "a theorem's time in the latest prove run",
    }.items()
}
needs_id_required = True
needs_id_regex = r"^[A-Z0-9_]{4,}$"
needs_role_need_template = "{{ label }}"
needs_table_style = "TABLE"
# the check "uncovered-statement" is registered by the pubproof_docs extension
# (pubproof_docs.coverage): a function in needs_warnings would stop Sphinx caching the config
needs_warnings_always_warn = True
needs_build_json = True
# the default layouts give every need a collapse button with the same element id
# ("target__show__meta"), repeated on every page of needs; this one has no button
needs_layouts = {
    "pubproof": {
        "grid": "simple",
        "layout": {
            "head": ['<<meta("type_name")>>: **<<meta("title")>>** <<meta_id()>>'],
            "meta": ["<<meta_all(no_links=True)>>", "<<meta_links_all()>>"],
        },
    }
}
needs_default_layout = "pubproof"
