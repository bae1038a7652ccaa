"""The built site in a real browser (Debian's chromium, headless, no network), as a
reader meets it: the clause page shows the languages the reader picks side by side on
every clause at once (and remembers them, and stacks them on a narrow screen); no page
repeats an element id or shows raw markup (the capture's ``==``, literal backticks); a
refuted theorem's page draws its counterexample; the long tables keep their words at
1280 px; a rule id typed in the search box finds its clause, statement, rules, theorems and
tests. The site's tools for its readers: ``test_docs_browser_readers.py``. The screenshots
land in build/site/_screenshots/."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from support.browser import launch, served, settle, unpainted_rows, visible_excerpts
from support.docs_site import built_site

from pubproof.model.clauses import CLAUSES

playwright = pytest.importorskip("playwright.sync_api")  # installed by the docs extra

KANA_KANJI = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
HAN = re.compile(r"[\u4e00-\u9fff]")
#: The DUP clause's section (the anchor #clause-dup is a span inside it).
DUP = "section:has(> #clause-dup)"


@pytest.fixture(scope="module")
def site_url() -> Iterator[str]:
    with served(built_site()) as url:
        yield url


def test_the_parallel_view_shows_the_chosen_languages_side_by_side(site_url: str) -> None:
    screenshots = built_site() / "_screenshots"
    screenshots.mkdir(exist_ok=True)
    outside: list[str] = []
    with playwright.sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1600})  # type: ignore[attr-defined]
            page.on(
                "request",
                lambda r: None if r.url.startswith(site_url) else outside.append(r.url),
            )
            page.goto(f"{site_url}/_generated/clauses.html#clause-dup")
            page.wait_for_load_state("load")
            page.evaluate("window.localStorage.clear()")
            page.reload()
            page.wait_for_load_state("load")
            expected = {lang: sum(1 for c in CLAUSES if lang in c.spans) for lang in
                        ("en", "de", "ja", "es", "zh")}  # fmt: skip
            # the default: English and German, both shown at once on every clause
            assert len(visible_excerpts(page, "en")) == expected["en"]
            assert len(visible_excerpts(page, "de")) == expected["de"]
            assert visible_excerpts(page, "ja") == []
            # choose Chinese and Japanese as well, drop German: three columns side by side
            picker = page.locator("#pp-language-picker")
            picker.locator('input[data-lang="zh"]').check()
            picker.locator('input[data-lang="ja"]').check()
            picker.locator('input[data-lang="de"]').uncheck()
            for lang, script in (("zh", HAN), ("ja", KANA_KANJI)):
                shown = visible_excerpts(page, lang)
                assert len(shown) == expected[lang], (lang, len(shown))
                assert all(script.search(text) for text in shown), lang
            assert visible_excerpts(page, "de") == []
            # side by side: on the DUP clause the three columns share a row, left to right
            boxes = page.eval_on_selector_all(
                f"{DUP} .pp-col:not(.pp-off)",
                "els => els.map(e => { const r = e.getBoundingClientRect();"
                " return [e.className, r.left, r.top, r.width]; })",
            )
            columns = [b for b in boxes if "pp-side" not in b[0]]
            assert len(columns) == 3, boxes
            assert len({round(b[2]) for b in columns}) == 1, boxes  # one row
            assert all(b[3] >= 200 for b in columns), boxes  # each readable
            lefts = [b[1] for b in columns]
            assert lefts == sorted(lefts) and len(set(lefts)) == 3, boxes
            # the model's column beside them
            side = [b for b in boxes if "pp-side" in b[0]]
            assert side and side[0][1] > max(lefts), boxes
            settle(page, "#clause-dup")
            page.screenshot(path=str(screenshots / "clauses-parallel.png"))
            page.locator(f"{DUP} .pp-parallel").first.screenshot(
                path=str(screenshots / "clause-dup-parallel.png")
            )
            # the choice is remembered
            page.reload()
            page.wait_for_load_state("load")
            assert len(visible_excerpts(page, "zh")) == expected["zh"]
            assert visible_excerpts(page, "de") == []
            # a narrow screen stacks the columns
            page.set_viewport_size({"width": 600, "height": 1200})
            stacked = page.eval_on_selector_all(
                f"{DUP} .pp-col:not(.pp-off):not(.pp-side)",
                "els => els.map(e => e.getBoundingClientRect().top)",
            )
            assert len(stacked) == 3 and stacked == sorted(stacked) and len(set(stacked)) == 3
        finally:
            browser.close()  # type: ignore[attr-defined]
    assert outside == [], f"the page fetched from outside the site: {outside}"
    assert unpainted_rows(screenshots / "clauses-parallel.png") == 0


def _rendered_text(page: object) -> str:
    """The visible text of the article, without code (where == and backticks belong)."""
    return page.evaluate(  # type: ignore[attr-defined, no-any-return]
        """() => {
          const article = document.querySelector('article') || document.body;
          const copy = article.cloneNode(true);
          copy.querySelectorAll('pre, code, .highlight, script, style, svg, .headerlink')
              .forEach(e => e.remove());
          return copy.textContent;
        }"""
    )


def test_no_page_repeats_an_element_id_shows_raw_markup_or_scrolls_sideways(site_url: str) -> None:
    site = built_site()
    pages = sorted(
        p.relative_to(site).as_posix()
        for p in site.rglob("*.html")
        if "_generated/source/" not in p.as_posix()
        and "/api/" not in p.as_posix()
        # sphinx-needs' permalink page only redirects to the need it is given
        and p.name != "permalink.html"
    )
    assert len(pages) > 60
    repeated: dict[str, list[str]] = {}
    markup: dict[str, str] = {}
    wide: list[str] = []
    with playwright.sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
            for name in pages:
                page.goto(f"{site_url}/{name}")
                page.wait_for_load_state("load")
                ids = page.eval_on_selector_all("[id]", "els => els.map(e => e.id)")
                twice = sorted({i for i in ids if ids.count(i) > 1})
                if twice:
                    repeated[name] = twice
                # a wide table scrolls in its own box; the page itself never does
                if page.evaluate(
                    "document.documentElement.scrollWidth > document.documentElement.clientWidth"
                ):
                    wide.append(name)
                text = _rendered_text(page)
                for mark in ("==", "`"):
                    if mark in text:
                        at = text.index(mark)
                        markup[name] = text[max(0, at - 60) : at + 60]
        finally:
            browser.close()  # type: ignore[attr-defined]
    assert repeated == {}
    assert markup == {}
    assert wide == []


def test_a_theorem_page_draws_its_counterexample_and_the_index_links_it(site_url: str) -> None:
    screenshots = built_site() / "_screenshots"
    screenshots.mkdir(exist_ok=True)
    with playwright.sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1800})  # type: ignore[attr-defined]
            page.goto(f"{site_url}/_generated/theorems.html")
            page.wait_for_load_state("load")
            row = page.locator("tr", has_text="proto.refute.exactly-once-with-reordering").first
            assert "refuted, as expected" in row.inner_text()
            assert "pass" not in row.inner_text()
            row.locator("a").first.click()
            page.wait_for_load_state("load")
            assert page.url.endswith("proto-refute-exactly-once-with-reordering.html")
            chart = page.locator("svg.pp-msc").first
            chart.scroll_into_view_if_needed()
            box = chart.bounding_box()
            assert box is not None and box["width"] >= 600 and box["height"] >= 200, box
            labels = chart.locator("text").evaluate_all("els => els.map(e => e.textContent)")
            assert any(t.startswith("PUBLISH QoS 2") and "DUP" in t for t in labels), labels
            assert any("lost" in t for t in labels), labels  # the connection loss is drawn
            assert chart.locator("line.pp-msc-packet").count() >= 4
            assert "replay(trace)" in page.locator("article").inner_text()
            # run through the system it refutes, the trace delivers 01 twice, marked
            assert "delivered 01 twice" in page.locator("article").inner_text()
            # the invariant of a mutant is read over named variables, not solver terms
            text = page.locator("article").inner_text()
            assert "Var(" not in text and "n_publish" in text
            # the skip link shows while it has the focus the click left behind
            page.evaluate("document.activeElement && document.activeElement.blur()")
            page.mouse.move(0, 0)
            settle(page, "svg.pp-msc")
            page.screenshot(path=str(screenshots / "theorem-refuted.png"), full_page=True)
        finally:
            browser.close()  # type: ignore[attr-defined]


def test_the_long_tables_are_readable_at_1280_px(site_url: str) -> None:
    """No cell of the matrix or the theorem tables breaks into a tall column of single
    words: a cell that wraps to three lines or more holds 14 characters a line on average,
    and the first column is wide enough for an id."""
    screenshots = built_site() / "_screenshots"
    screenshots.mkdir(exist_ok=True)
    with playwright.sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1400})  # type: ignore[attr-defined]
            for name, table in (
                ("_generated/traceability.html", "table.pp-matrix"),
                ("_generated/theorems.html", "table.pp-wide"),
                ("_generated/clauses.html", "table.pp-wide"),
            ):
                page.goto(f"{site_url}/{name}")
                page.wait_for_load_state("load")
                cells = page.eval_on_selector_all(
                    f"{table} td",
                    r"""els => els.slice(0, 400).map(e => {
                      const style = getComputedStyle(e);
                      const line = parseFloat(style.lineHeight) || 1.5 * parseFloat(style.fontSize);
                      const range = document.createRange();
                      range.selectNodeContents(e);
                      return [e.innerText.slice(0, 40), e.innerText.trim().length,
                              Math.round(range.getBoundingClientRect().height / line),
                              e.clientWidth, e.cellIndex];
                    })""",
                )
                assert cells, name
                # a wrapped cell holds more than a short word per line (14 characters on
                # average: a long id alone on its line is fine, "out / of / scope" is not)
                squeezed = [c for c in cells if c[2] >= 3 and c[1] / c[2] < 14]
                assert squeezed == [], (name, squeezed[:5])
                first = [c[3] for c in cells if c[4] == 0]
                assert min(first) >= 140, (name, min(first))
                page.locator(table).first.screenshot(
                    path=str(screenshots / f"table-{name.split('/')[-1][:-5]}.png")
                )
        finally:
            browser.close()  # type: ignore[attr-defined]


def test_the_theorem_tables_show_every_column_at_1280_px(site_url: str) -> None:
    """The theorem tables (the index and the clause pages') fit their column at 1280 px:
    status, method and seconds are in view without scrolling sideways."""
    with playwright.sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})  # type: ignore[attr-defined]
            for name in ("_generated/theorems.html", "_generated/clauses.html"):
                page.goto(f"{site_url}/{name}")
                page.wait_for_load_state("load")
                wider = page.eval_on_selector_all(
                    "table.pp-theorems",
                    "ts => ts.filter(t => t.scrollWidth > t.parentElement.clientWidth + 1)"
                    ".map(t => [t.scrollWidth, t.parentElement.clientWidth])",
                )
                assert page.locator("table.pp-theorems").count() > 0, name
                assert wider == [], (name, wider[:3])
        finally:
            browser.close()  # type: ignore[attr-defined]


def test_code_blocks_wrap_and_diagrams_have_a_full_size_link(site_url: str) -> None:
    """Notebook 02's first cell and the probing guide's commands show all their
    text (wrapped, not clipped), and a notebook's diagram is drawn at a readable width with
    a link to the figure alone."""
    with playwright.sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1200})  # type: ignore[attr-defined]
            for name in ("notebooks/02-qos-flows.html", "guides/probing.html"):
                page.goto(f"{site_url}/{name}")
                page.wait_for_load_state("load")
                clipped = page.eval_on_selector_all(
                    "article pre",
                    "els => els.filter(e => e.scrollWidth > e.clientWidth + 1)"
                    ".map(e => e.textContent.slice(0, 60))",
                )
                assert page.locator("article pre").count() > 0, name
                assert clipped == [], (name, clipped)
            page.goto(f"{site_url}/notebooks/02-qos-flows.html")
            page.wait_for_load_state("load")
            figures = page.eval_on_selector_all(
                ".cell_output img[src$='.svg']",
                "els => els.map(e => [e.getBoundingClientRect().width,"
                " e.nextElementSibling && e.nextElementSibling.className])",
            )
            assert figures, "notebook 02 draws no diagram"
            for width, link in figures:
                assert width >= 600 and link == "pp-fullsize", (width, link)
        finally:
            browser.close()  # type: ignore[attr-defined]


def test_searching_a_rule_id_finds_its_clause_rule_theorems_and_tests(site_url: str) -> None:
    with playwright.sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1200})  # type: ignore[attr-defined]
            page.goto(f"{site_url}/index.html")
            page.wait_for_load_state("load")
            box = page.locator("input[name=q]").first
            box.fill("MQTT-3.3.1-4")
            box.press("Enter")
            page.wait_for_load_state("load")
            page.wait_for_selector("#pp-rule-results li")
            hits = page.locator("#pp-rule-results li").all_inner_texts()
            kinds = {h.split(":", 1)[0] for h in hits}
            assert {"clause", "statement", "model rule", "theorem", "test"} <= kinds, hits
            assert any("QoS" in h for h in hits if h.startswith("clause")), hits
            # every hit leads to a page of the site that has the anchor
            first_theorem = page.locator("#pp-rule-results li", has_text="theorem:").first
            first_theorem.locator("a").click()
            page.wait_for_load_state("load")
            assert "/_generated/theorem/" in page.url
            assert "MQTT-3.3.1-4" in page.locator("article").inner_text()
        finally:
            browser.close()  # type: ignore[attr-defined]
