"""The notebooks' landing page: every notebook in ``notebooks/`` (through the ``docs/notebooks``
link), each executed by myst-nb when the site is built."""

from __future__ import annotations

import json

from pubproof_docs.context import GENERATED, Context
from pubproof_docs.rst import esc, heading

NOTEBOOKS_DOC = f"{GENERATED}/notebooks"


def _title(source: list[str] | str) -> str:
    text = "".join(source)
    for line in text.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return ""


def pages(ctx: Context, included: bool) -> dict[str, str]:
    out = [heading("Notebooks", "=")]
    out.append(
        "Teaching notebooks, executed top to bottom on every build of this site (an error in "
        "any cell fails the build), and shown here with their outputs. Run them yourself with "
        "``jupyter lab notebooks/`` after ``pip install -e '.[docs]'``.\n"
    )
    notebooks = sorted((ctx.docs / "notebooks").glob("*.ipynb"))
    if not included:
        out.append("This build left the notebooks out (``PUBPROOF_DOCS_NOTEBOOKS=0``).\n")
        return {NOTEBOOKS_DOC: "\n".join(out)}
    out.append(".. toctree::\n   :maxdepth: 1\n")
    for path in notebooks:
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        title = next(
            (t for c in cells if c["cell_type"] == "markdown" for t in [_title(c["source"])] if t),
            path.stem,
        )
        out.append(f"   {esc(title)} <../notebooks/{path.stem}>")
    return {NOTEBOOKS_DOC: "\n".join(out) + "\n"}
