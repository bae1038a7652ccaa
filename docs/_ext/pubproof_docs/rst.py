"""Small helpers for writing reStructuredText."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

_SPECIAL = re.compile(r"([\\`*_|<>\[\]])")


def esc(text: str) -> str:
    """``text`` as literal inline reStructuredText (one line)."""
    return _SPECIAL.sub(r"\\\1", " ".join(text.split()))


def literal(text: str) -> str:
    """``text`` as an inline literal."""
    if "`" in text:
        return esc(text)
    return f"``{text}``" if text else ""


def heading(text: str, char: str, overline: bool = False) -> str:
    line = char * max(len(text.encode("utf-8")), 4)
    return f"{line}\n{text}\n{line}\n" if overline else f"{text}\n{line}\n"


def indent(text: str, spaces: int) -> str:
    pad = " " * spaces
    return "\n".join(pad + line if line.strip() else "" for line in text.splitlines())


def list_table(
    header: Sequence[str],
    rows: Iterable[Sequence[str]],
    *,
    widths: Sequence[int] | None = None,
    css: str = "",
) -> str:
    """A ``list-table``; cells are reStructuredText already (may span lines)."""
    out = [".. list-table::", "   :header-rows: 1"]
    if widths:
        out.append("   :widths: " + " ".join(str(w) for w in widths))
    if css:
        out.append(f"   :class: {css}")
    out.append("")
    for row in [header, *rows]:
        for index, cell in enumerate(row):
            lead = "   * - " if index == 0 else "     - "
            lines = (cell or " ").splitlines() or [" "]
            out.append(lead + lines[0])
            out.extend(("       " + line) if line.strip() else "" for line in lines[1:])
    return "\n".join(out) + "\n"


def write_if_changed(path: Path, text: str) -> bool:
    """Write ``text`` unless the file already holds it (keeps Sphinx's rebuilds incremental)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    path.write_text(text, encoding="utf-8")
    return True


def doc_link(docname: str, text: str) -> str:
    return f":doc:`{esc(text)} </{docname}>`"


def glossary_terms(*terms: str) -> str:
    """A paragraph linking the glossary's definitions of the ``terms`` the page uses."""
    linked = ", ".join(f":term:`{t}`" for t in terms)
    return f"Terms on this page (see the :doc:`glossary </glossary>`): {linked}.\n"
