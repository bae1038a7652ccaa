"""The tables of the source texts, shown as tables in the excerpts of every language.

The captures flattened them three ways, and the seed texts stay as captured:

- Markdown (the German and Japanese pages): ``cell | cell |`` rows under a ``---|---``
  line. Found in the text itself: a line with ``|`` followed by a separator line starts a
  table, which runs while the lines hold a ``|``.
- One cell per line (the Chinese page): nothing in the text says where a row ends, so
  ``docs/data/tables.toml`` says it: the lines of each table and the cells of each row.
- Cells between ``|`` lines (the English page, a PDF's text): the same file says which
  lines, and how many cells each row holds once the lines are split at ``|``.

A table is shown only where the excerpt holds all its lines, in the order of the file;
its cells are the words of those lines (whitespace aside), so the excerpt loses nothing
(:func:`pubproof_docs.clean.words_kept` still holds of its text). A ``tables.toml`` entry
whose lines do not split into the cells its rows count is an error naming the table.
"""

from __future__ import annotations

import html
import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pubproof_docs import clean
from pubproof_docs.data import DocsDataError

#: The data file of the tables the texts do not delimit themselves.
TABLES_PATH = Path(__file__).resolve().parents[2] / "data" / "tables.toml"

_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_WHERE = re.compile(r"^(publish\.\w+\.txt) lines (\d+-\d+(?:, \d+-\d+)*)$")

#: A table: its rows of cells, and whether the first row is a header.
Rows = tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class TableSpec:
    """A table of a source text the text does not delimit: its lines and rows."""

    text: str  # "publish.zh.txt"
    first: int  # its first and last line (1-based, inclusive)
    last: int
    cells: str  # "lines": a cell a line; "pipes": the lines split at "|"
    rows: tuple[int, ...]  # the cells of each row
    header: bool  # whether the first row heads the columns

    def __post_init__(self) -> None:
        if not re.fullmatch(r"publish\.\w+\.txt", self.text):
            raise DocsDataError(f"tables.toml: not a source text: {self.text!r}")
        if not 1 <= self.first <= self.last:
            raise DocsDataError(f"tables.toml: {self.text} lines {self.first}-{self.last}")
        if self.cells not in ("lines", "pipes"):
            raise DocsDataError(f"tables.toml: {self.text}: cells {self.cells!r}")
        if not self.rows or min(self.rows) < 1:
            raise DocsDataError(f"tables.toml: {self.text} line {self.first}: rows {self.rows}")

    def split(self, lines: list[str]) -> Rows:
        """The rows of the table made of ``lines`` (its lines, first to last)."""
        if self.cells == "lines":
            cells = [line.strip() for line in lines]
        else:
            cells = [" ".join(c.split()) for c in "\n".join(lines).split("|")]
            if cells and not cells[-1]:
                cells.pop()  # the "|" that closes the last cell
        if len(cells) != sum(self.rows):
            raise DocsDataError(
                f"tables.toml: {self.text} lines {self.first}-{self.last} hold {len(cells)} "
                f"cells, its rows {list(self.rows)} count {sum(self.rows)}"
            )
        out, at = [], 0
        for count in self.rows:
            out.append(tuple(cells[at : at + count]))
            at += count
        return tuple(out)


def load_specs(path: Path) -> tuple[TableSpec, ...]:
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    found = []
    for t in raw.get("table", []):
        rows = tuple(int(r) for r in t["rows"])
        found.append(
            TableSpec(text=t["text"], first=int(t["first"]), last=int(t["last"]),
                      cells=t["cells"], rows=rows, header=bool(t.get("header", False)))
        )  # fmt: skip
    return tuple(found)


@cache
def specs() -> tuple[TableSpec, ...]:
    return load_specs(TABLES_PATH)


def line_numbers(where: str, count: int) -> tuple[str, list[int]] | None:
    """The source text and the line number of each of an excerpt's ``count`` lines, from
    its ``:lines:`` option (``publish.zh.txt lines 36-60, 70-80``); None when it says
    otherwise."""
    match = _WHERE.match(where.strip())
    if match is None:
        return None
    numbers: list[int] = []
    for span in match[2].split(", "):
        first, last = (int(n) for n in span.split("-"))
        numbers += range(first, last + 1)
    return (match[1], numbers) if len(numbers) == count else None


def _pipe_cells(line: str) -> tuple[str, ...]:
    cells = [c.strip() for c in line.split("|")]
    if cells and not cells[-1]:
        cells.pop()
    return tuple(cells)


def segments(
    text: str, where: str = "", known: tuple[TableSpec, ...] = ()
) -> list[str | tuple[Rows, bool]]:
    """``text`` cut into runs of lines (str) and tables (rows, header or not)."""
    lines = text.split("\n")
    located = line_numbers(where, len(lines)) if where else None
    starts: dict[int, TableSpec] = {}
    if located is not None:
        name, numbers = located
        for known_spec in known:
            first, last = known_spec.first, known_spec.last
            if known_spec.text != name or first not in numbers:
                continue
            at = numbers.index(first)
            if numbers[at : at + last - first + 1] == list(range(first, last + 1)):
                starts[at] = known_spec
    out: list[str | tuple[Rows, bool]] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            out.append("\n".join(run))
            run.clear()

    i = 0
    while i < len(lines):
        spec = starts.get(i)
        if spec is not None:
            flush()
            size = spec.last - spec.first + 1
            out.append((spec.split(lines[i : i + size]), spec.header))
            i += size
        elif "|" in lines[i] and i + 1 < len(lines) and _SEPARATOR.match(lines[i + 1]):
            flush()
            rows = [_pipe_cells(lines[i])]
            i += 2
            while i < len(lines) and "|" in lines[i] and i not in starts:
                rows.append(_pipe_cells(lines[i]))
                i += 1
            out.append((tuple(rows), True))
        else:
            run.append(lines[i])
            i += 1
    flush()
    return out


def _cell(text: str, lang: str, tag: str) -> str:
    return f"<{tag}>{clean.to_html(text, lang)}</{tag}>"


def table_html(rows: Rows, header: bool, lang: str) -> str:
    """A table of a source text as HTML (on one line: the excerpt keeps its line breaks)."""
    width = max(len(row) for row in rows)
    body = []
    for index, row in enumerate(rows):
        tag = "th" if header and index == 0 else "td"
        if len(row) == 1 and width > 1:
            # a row of one cell names the field of the rows under it: across the table
            cells = f'<{tag} colspan="{width}">{clean.to_html(row[0], lang)}</{tag}>'
        else:
            cells = "".join(_cell(c, lang, tag) for c in row)
        body.append(f"<tr>{cells}</tr>")
    return f'<table class="pp-src-table" lang="{html.escape(lang)}">{"".join(body)}</table>'


def to_html(text: str, lang: str, where: str = "") -> str:
    """The clean excerpt as HTML, its tables as tables (see :func:`clean.to_html`)."""
    out = ""
    previous: str | None = None
    for segment in segments(text, where, specs()):
        if isinstance(segment, str):
            # a line break between two runs of text (a table between them breaks them)
            out += ("\n" if previous == "text" else "") + clean.to_html(segment, lang)
            previous = "text"
        else:
            out += table_html(*segment, lang)
            previous = "table"
    return out
