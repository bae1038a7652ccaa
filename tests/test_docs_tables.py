"""The tables of the five source texts in the parallel view: shown as HTML tables in every
language (the Chinese page's one-cell-a-line tables and the English page's cells between
``|`` lines as ``docs/data/tables.toml`` cuts them, the German and Japanese Markdown tables
as the text marks them), with every word of the excerpt kept. Light: the excerpts' HTML is
made by the extension's Python, as the clause page's excerpts are (no build)."""

from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser

import pytest

# docs/_ext is on sys.path at run time (docs_site puts it there)
from pubproof_docs import clean, tables
from pubproof_docs.data import DocsDataError
from support.docs_site import ROOT

from pubproof.model.clauses import CLAUSES, LANGUAGES, Clause


class _Tables(HTMLParser):
    """The tables of an HTML fragment: rows of (cell text, colspan)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[tuple[str, int]]]] = []
        self._cell: list[str] | None = None
        self._span = 1

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell, self._span = [], int(dict(attrs).get("colspan") or 1)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append(("".join(self._cell), self._span))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _excerpt(clause: Clause, lang: str) -> tuple[str, str]:
    """A clause's excerpt in ``lang`` as the clause page passes it: text and lines."""
    text = clause.text(lang)
    assert text is not None
    where = ", ".join(f"{s.first}-{s.last}" for s in clause.spans[lang])
    return text, f"publish.{lang}.txt lines {where}"


def _tables_of(html: str) -> list[list[list[tuple[str, int]]]]:
    parser = _Tables()
    parser.feed(html)
    return parser.tables


def _holding(lang: str, line: int) -> Clause:
    return next(c for c in CLAUSES if any(s.first <= line <= s.last for s in c.spans.get(lang, ())))


def test_the_chinese_qos_table_is_a_table_of_five_rows_of_four_cells() -> None:
    clause = _holding("zh", 37)  # 表格3.2-服务质量定义
    text, where = _excerpt(clause, "zh")
    html = tables.to_html(text, "zh", where)
    found = [t for t in _tables_of(html) if t and t[0][0][0] == "QoS value"]
    assert len(found) == 1
    rows = [[text for text, _ in row] for row in found[0]]
    assert rows == [
        ["QoS value", "Bit 2", "Bit 1", "描述"],
        ["0", "0", "0", "最多一次At most once delivery"],
        ["1", "0", "1", "最少一次At least once delivery"],
        ["2", "1", "0", "恰好一次Exactly once delivery"],
        ["-", "1", "1", "保留位-不得使用 Reserved – must not be used"],
    ]
    assert "<th>QoS value</th>" in html
    # the sentence after the table is text again, its highlight kept
    assert '<mark class="pp-normative">PUBLISH' in html.split("</table>", 1)[1]


@pytest.mark.parametrize("spec", tables.specs(), ids=lambda s: f"{s.text}:{s.first}")
def test_every_table_of_the_data_file_is_a_table_of_its_clause(spec: tables.TableSpec) -> None:
    lang = spec.text.split(".")[1]
    text, where = _excerpt(_holding(lang, spec.first), lang)
    found = _tables_of(tables.to_html(text, lang, where))
    lines = (ROOT / "model" / "texts" / spec.text).read_text("utf-8").split("\n")
    wanted = spec.split(lines[spec.first - 1 : spec.last])
    shapes = [[len(row) for row in t] for t in found]
    assert list(spec.rows) in shapes
    table = found[shapes.index(list(spec.rows))]
    assert tuple(tuple(text for text, _ in row) for row in table) == wanted
    width = max(spec.rows)
    # a row of one cell (a field's name over its bytes) spans the table
    assert all(row[0][1] == width for row in table if len(row) == 1)


@pytest.mark.parametrize("lang", ["de", "ja"])
def test_the_markdown_tables_are_tables_without_their_separator_lines(lang: str) -> None:
    found = []
    for clause in CLAUSES:
        if clause.text(lang) is not None:
            found += _tables_of(tables.to_html(_excerpt(clause, lang)[0], lang))
    separators = [
        n for n, line in enumerate((ROOT / "model" / "texts" / f"publish.{lang}.txt")
                                   .read_text("utf-8").split("\n"))
        if re.fullmatch(r"-{3}(\|-{3})*\|?", line.strip())
    ]  # fmt: skip
    assert len(found) == len(separators) == 4
    expected = {"de": ["QoS 0", "Keine"], "ja": ["QoS 0", "なし"]}[lang]
    assert any([text for text, _ in row] == expected for t in found for row in t)
    assert not any(set(text) <= set("-|:") and text for t in found for r in t for text, _ in r)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_word_of_an_excerpt_is_lost_to_its_tables(lang: str) -> None:
    for clause in CLAUSES:
        if clause.text(lang) is None:
            continue
        text, where = _excerpt(clause, lang)
        html = tables.to_html(text, lang, where)
        shown = unescape(re.sub(r"<[^>]+>", " ", html))
        # the separator lines of a Markdown table and the cells' "|" are layout, not words
        source = "\n".join(
            line for line in text.split("\n") if not tables._SEPARATOR.match(line)
        ).replace("|", "")
        assert clean.words_kept(source, shown.replace("|", "")), (clause.id, lang)


def test_a_table_whose_lines_do_not_hold_its_cells_is_an_error() -> None:
    spec = tables.specs()[0]
    wrong = tables.TableSpec(
        text=spec.text, first=spec.first, last=spec.last, cells=spec.cells,
        rows=(4, 4, 4, 4, 3), header=True,
    )  # fmt: skip
    lines = (ROOT / "model" / "texts" / spec.text).read_text("utf-8").split("\n")
    with pytest.raises(DocsDataError, match=r"lines 37-56 hold 20 cells, its rows"):
        wrong.split(lines[spec.first - 1 : spec.last])
    with pytest.raises(DocsDataError, match="cells"):
        tables.TableSpec(text=spec.text, first=1, last=2, cells="rows", rows=(1,), header=False)
