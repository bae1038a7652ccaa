"""The built site in a real browser (Debian's chromium, headless, no network): the clause
page shows the languages the reader picks side by side on every clause at once (and
remembers them, and stacks them on a narrow screen); no page repeats an element id or
shows raw markup (the capture's ``==``, literal backticks); a refuted theorem's page draws
its counterexample; the long tables keep their words at 1280 px; a rule id typed in the
search box finds its clause, statement, rules, theorems and tests; the landing page leads
each of the three readers on a path; the matrix keeps its header row and check column in
view; no excerpt is clipped and the picker keeps two to five languages; the charts have
contrast whatever colour scheme the reader's system uses; the clause page and the catalog
print as the article alone; every state diagram keeps its text at 11 px or more. The
screenshots land in build/site/_screenshots/."""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from PIL import Image
from support.docs_site import built_site

from pubproof.model.clauses import CLAUSES

playwright = pytest.importorskip("playwright.sync_api")  # installed by the docs extra

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
KANA_KANJI = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
HAN = re.compile(r"[\u4e00-\u9fff]")
#: The DUP clause's section (the anchor #clause-dup is a span inside it).
DUP = "section:has(> #clause-dup)"
GERMAN = re.compile(r"\b(der|die|das|und|wird|ist|nachricht\w*)\b|[äöüß]", re.IGNORECASE)


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def site_url() -> Iterator[str]:
    site = built_site()
    handler = functools.partial(_Quiet, directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _visible_excerpts(page: object, lang: str) -> list[str]:
    return page.eval_on_selector_all(  # type: ignore[attr-defined, no-any-return]
        f'.pp-excerpt[lang="{lang}"]',
        "els => els.filter(e => e.offsetParent !== null && e.getClientRects().length > 0)"
        ".map(e => e.innerText)",
    )


def _settle(page: object, anchor: str) -> None:
    """Wait until the page is painted where the screenshot looks: the fonts loaded, the anchor
    scrolled into view after layout, and two frames drawn. Without this, headless Chromium's
    screenshot sometimes caught the page mid-paint, a white band where the top should be."""
    page.evaluate("document.fonts.ready")  # type: ignore[attr-defined]
    page.locator(anchor).scroll_into_view_if_needed()  # type: ignore[attr-defined]
    page.evaluate(  # type: ignore[attr-defined]
        "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
    )


def _unpainted_rows(png: Path) -> int:
    """Rows of the screenshot that are pure white across the whole width. A painted page has
    none: the sidebar's grey runs from top to bottom."""
    with Image.open(png) as image:
        rgb = image.convert("RGB")
        width, height = rgb.size
        pixels = rgb.load()
        assert pixels is not None
        return sum(
            all(pixels[x, y] == (255, 255, 255) for x in range(0, width, 4)) for y in range(height)
        )


def _browser(p: object) -> object:
    return p.chromium.launch(executable_path=CHROMIUM, args=ARGS)  # type: ignore[attr-defined]


def test_the_parallel_view_shows_the_chosen_languages_side_by_side(site_url: str) -> None:
    screenshots = built_site() / "_screenshots"
    screenshots.mkdir(exist_ok=True)
    outside: list[str] = []
    with playwright.sync_playwright() as p:
        browser = _browser(p)
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
            assert len(_visible_excerpts(page, "en")) == expected["en"]
            assert len(_visible_excerpts(page, "de")) == expected["de"]
            assert _visible_excerpts(page, "ja") == []
            # choose Chinese and Japanese as well, drop German: three columns side by side
            picker = page.locator("#pp-language-picker")
            picker.locator('input[data-lang="zh"]').check()
            picker.locator('input[data-lang="ja"]').check()
            picker.locator('input[data-lang="de"]').uncheck()
            for lang, script in (("zh", HAN), ("ja", KANA_KANJI)):
                shown = _visible_excerpts(page, lang)
                assert len(shown) == expected[lang], (lang, len(shown))
                assert all(script.search(text) for text in shown), lang
            assert _visible_excerpts(page, "de") == []
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
            _settle(page, "#clause-dup")
            page.screenshot(path=str(screenshots / "clauses-parallel.png"))
            page.locator(f"{DUP} .pp-parallel").first.screenshot(
                path=str(screenshots / "clause-dup-parallel.png")
            )
            # the choice is remembered
            page.reload()
            page.wait_for_load_state("load")
            assert len(_visible_excerpts(page, "zh")) == expected["zh"]
            assert _visible_excerpts(page, "de") == []
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
    assert _unpainted_rows(screenshots / "clauses-parallel.png") == 0


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
        browser = _browser(p)
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
        browser = _browser(p)
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
            _settle(page, "svg.pp-msc")
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
        browser = _browser(p)
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
        browser = _browser(p)
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
    """Notebook 02's first cell and the probe results' reproduce block show all their
    text (wrapped, not clipped), and a notebook's diagram is drawn at a readable width with
    a link to the figure alone."""
    with playwright.sync_playwright() as p:
        browser = _browser(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1200})  # type: ignore[attr-defined]
            for name in ("notebooks/02-qos-flows.html", "probe-results.html"):
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
        browser = _browser(p)
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


def _search(page: object, site_url: str, query: str) -> None:
    page.goto(f"{site_url}/index.html")  # type: ignore[attr-defined]
    page.wait_for_load_state("load")  # type: ignore[attr-defined]
    box = page.locator("input[name=q]").first  # type: ignore[attr-defined]
    box.fill(query)
    box.press("Enter")
    page.wait_for_load_state("load")  # type: ignore[attr-defined]
    page.wait_for_selector("#pp-rule-results h2")  # type: ignore[attr-defined]


def test_the_implementers_loop_from_a_rule_id_to_the_matrix_and_back(site_url: str) -> None:
    """A rule id's search lists the matrix rows and evidence pages that judge it; the matrix
    row names the rule, linked to its statement; the evidence page leads back to the site
    and links the id to its statement. A project id is found too; an id that is no rule
    is said to be none, and Sphinx's hits on its numbers are not shown."""
    shots = built_site() / "_screenshots"
    shots.mkdir(exist_ok=True)
    with playwright.sync_playwright() as p:
        browser = _browser(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})  # type: ignore[attr-defined]
            _search(page, site_url, "MQTT-3.3.1-4")
            kinds = page.eval_on_selector_all(
                "#pp-rule-results li", "els => els.map(e => e.dataset.kind)"
            )
            assert {"matrix", "evidence"} <= set(kinds), kinds
            page.locator("#pp-rule-results li[data-kind=matrix] a").first.click()
            page.wait_for_load_state("load")
            assert "/_generated/matrix.html#matrix-" in page.url
            row = page.locator("tr:target")
            assert row.count() == 1
            rules = row.locator(".pp-check-rules a", has_text="MQTT-3.3.1-4")
            assert rules.count() == 1
            page.screenshot(path=str(shots / "matrix-from-search.png"))
            rules.click()
            page.wait_for_load_state("load")
            assert "/traceability.html#S_MQTT_3_3_1_4" in page.url, page.url

            _search(page, site_url, "MQTT-3.3.1-4")
            page.locator("#pp-rule-results li[data-kind=evidence] a").first.click()
            page.wait_for_load_state("load")
            assert "/_static/matrix/" in page.url
            nav = page.locator("nav.site a")
            assert nav.count() >= 2
            cited = page.locator("a.rule", has_text="MQTT-3.3.1-4").first
            cited.click()
            page.wait_for_load_state("load")
            assert "/_generated/traceability.html#S" in page.url, page.url
            page.go_back()
            page.wait_for_load_state("load")
            page.locator("nav.site a", has_text="conformance matrix").click()
            page.wait_for_load_state("load")
            assert page.url.endswith("/_generated/matrix.html")

            _search(page, site_url, "PP31-3.3-topic-empty")
            hits = page.locator("#pp-rule-results li").all_inner_texts()
            assert any(h.startswith("statement: PP31-3.3-topic-empty") for h in hits), hits

            _search(page, site_url, "MQTT-9.9.9-9")
            assert page.locator("#pp-rule-results h2").inner_text() == "No such rule: MQTT-9.9.9-9"
            assert page.locator("#pp-rule-results li").count() == 0
            page.wait_for_timeout(300)  # Sphinx's own search has had its time to list pages
            assert not page.locator("#search-results").is_visible()
        finally:
            browser.close()  # type: ignore[attr-defined]


def test_the_catalog_shows_its_ids_and_filters_by_edition_language_clause_and_kind(
    site_url: str,
) -> None:
    """Every entry of the ambiguity catalog shows its id; choosing a kind, then a language,
    shows exactly the entries (and summary rows) the model's catalog has with both."""
    from pubproof.model.ambiguities import AMBIGUITIES, Kind

    entries = list(AMBIGUITIES)
    shots = built_site() / "_screenshots"
    shots.mkdir(exist_ok=True)
    with playwright.sync_playwright() as p:
        browser = _browser(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})  # type: ignore[attr-defined]
            page.goto(f"{site_url}/_generated/ambiguity-catalog.html")
            page.wait_for_load_state("load")
            ids = page.eval_on_selector_all(
                "p.pp-entry a.pp-entry-id",
                "els => els.filter(e => e.offsetParent).map(e => e.innerText)",
            )
            assert ids == [e.id for e in entries]
            assert page.locator("#pp-catalog-filter select").count() == 4
            for facet in ("edition", "lang", "clause", "kind"):
                assert (
                    page.locator(f"#pp-catalog-filter select[data-facet={facet}] option").count()
                    > 2
                )

            def shown() -> list[str]:
                return page.eval_on_selector_all(  # type: ignore[no-any-return]
                    "p.pp-entry", "els => els.filter(e => e.offsetParent).map(e => e.innerText)"
                )

            def rows() -> int:
                return page.eval_on_selector_all(  # type: ignore[no-any-return]
                    "table tr",
                    "rs => rs.filter(r => r.offsetParent && r.querySelector("
                    "'a[href^=\"#ambiguity-\"]')).length",
                )

            page.select_option("select[data-facet=kind]", "mistranslation")
            wanted = [e.id for e in entries if Kind.MISTRANSLATION in e.kinds]
            assert shown() == wanted and rows() == len(wanted)
            page.select_option("select[data-facet=lang]", "zh")
            wanted = [e.id for e in entries if Kind.MISTRANSLATION in e.kinds
                      and any(q.lang == "zh" and q.source is None for q in e.quotes)]  # fmt: skip
            assert len(wanted) > 0 and shown() == wanted and rows() == len(wanted)
            assert page.locator("#pp-catalog-count").inner_text() == (
                f"{len(wanted)} of {len(entries)} entries"
            )
            page.select_option("select[data-facet=lang]", "")
            page.select_option("select[data-facet=kind]", "unstated-assumption")
            assert shown() == [e.id for e in entries if e.id.startswith("assume-")]
            page.select_option("select[data-facet=kind]", "")
            page.select_option("select[data-facet=edition]", "5.0")
            page.select_option("select[data-facet=clause]", "topic-name")
            assert shown() == [
                e.id for e in entries if e.clause == "topic-name"
                and any(q.source and "MQTT 5.0" in q.source for q in e.quotes)
            ]  # fmt: skip
            page.select_option("select[data-facet=clause]", "")
            # "3.1" is not "3.1.1": the zh excerpt (3.1.1) alone does not make an entry 3.1's
            page.select_option("select[data-facet=edition]", "3.1")
            assert shown() == [
                e.id for e in entries
                if any((q.source is None and q.lang != "zh") or "MQTT V3.1" in (q.source or "")
                       for q in e.quotes)
            ]  # fmt: skip
            page.select_option("select[data-facet=edition]", "")
            page.select_option("select[data-facet=kind]", "mistranslation")
            page.locator("#pp-catalog-filter").scroll_into_view_if_needed()
            page.screenshot(path=str(shots / "catalog-filtered.png"))
        finally:
            browser.close()  # type: ignore[attr-defined]


#: each reader's path from the landing page, and pages it must lead to
PATHS = {
    "Learn the QoS flows": (
        "paths/learn.html",
        ["notebooks/01-anatomy-of-a-publish.html", "_generated/wire-format.html",
         "notebooks/02-qos-flows.html", "guides/proofs.html",
         "notebooks/03-proving-with-z3.html", "_generated/theorems.html"],
    ),
    "Audit the texts": (
        "paths/audit.html",
        ["_generated/clauses.html", "_generated/ambiguity-catalog.html",
         "_generated/readings.html", "_generated/edition-diff.html"],
    ),
    "Check an implementation": (
        "paths/check.html",
        ["guides/probing.html", "guides/probing-clients.html", "guides/captures.html",
         "guides/matrix.html", "_generated/matrix.html", "guides/serve.html",
         "guides/explore.html"],
    ),
}  # fmt: skip


def _hrefs(page: object) -> list[str]:
    return page.eval_on_selector_all(  # type: ignore[attr-defined, no-any-return]
        "article a[href]", "els => els.map(e => e.href.split('#')[0])"
    )


def test_the_landing_page_leads_each_reader_on_a_path(site_url: str) -> None:
    """The landing page is short (its three paths and the glossary show without scrolling)
    and each path is an ordered list of pages that exist, with the glossary's terms linked."""
    screenshots = built_site() / "_screenshots"
    screenshots.mkdir(exist_ok=True)
    with playwright.sync_playwright() as p:
        browser = _browser(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
            page.goto(f"{site_url}/index.html")
            page.wait_for_load_state("load")
            article = page.locator("article")
            for name in (*PATHS, "the glossary"):
                link = article.locator("a", has_text=name).first
                box = link.bounding_box()
                assert box is not None and box["y"] + box["height"] <= 900, (name, box)
            # the page does not repeat the sidebar's lists (the toctrees feed the sidebar only)
            assert article.locator(".toctree-wrapper li").count() == 0
            assert page.locator(".sidebar-tree a", has_text="Learn the QoS flows").count() == 1
            page.screenshot(path=str(screenshots / "landing.png"))
            for name, (target, pages) in PATHS.items():
                page.goto(f"{site_url}/index.html")
                page.wait_for_load_state("load")
                page.locator("article a", has_text=name).first.click()
                page.wait_for_load_state("load")
                assert page.url == f"{site_url}/{target}", (name, page.url)
                steps = page.locator("article ol > li")
                assert steps.count() >= 4, name
                # every step says what it teaches, not just a title
                assert all(len(t) > 80 for t in steps.all_inner_texts()), name
                hrefs = _hrefs(page)
                missing = [p for p in pages if f"{site_url}/{p}" not in hrefs]
                assert missing == [], (name, missing)
                assert any("glossary.html" in h for h in hrefs), name
                _settle(page, "article h1")
                page.screenshot(
                    path=str(screenshots / f"path-{target.split('/')[-1][:-5]}.png"),
                    full_page=True,
                )
                for href in sorted(set(hrefs)):
                    if href.startswith(site_url):
                        answer = page.request.get(href)
                        assert answer.ok, (name, href, answer.status)
            # the learn path's terms lead to their definitions on the glossary
            page.goto(f"{site_url}/paths/learn.html")
            page.wait_for_load_state("load")
            terms = page.eval_on_selector_all(
                "article a[href*='glossary.html#term-']", "els => els.map(e => e.href)"
            )
            assert len(terms) >= 4, terms
            page.goto(terms[0])
            page.wait_for_load_state("load")
            anchor = terms[0].split("#", 1)[1]
            assert page.locator(f"[id='{anchor}']").count() == 1, anchor
        finally:
            browser.close()  # type: ignore[attr-defined]


def test_the_matrix_keeps_its_header_and_first_column_in_view(site_url: str) -> None:
    """Scrolled down and right inside its box (on a screen narrow enough that it must), the
    matrix's header row stays on top and its check column at the left (the CSS once named a
    class the table did not have)."""
    screenshots = built_site() / "_screenshots"
    screenshots.mkdir(exist_ok=True)
    with playwright.sync_playwright() as p:
        browser = _browser(p)
        try:
            page = browser.new_page(viewport={"width": 640, "height": 800})  # type: ignore[attr-defined]
            page.goto(f"{site_url}/_generated/matrix.html")
            page.wait_for_load_state("load")
            moved = page.evaluate(
                """() => {
                  const box = document.querySelector('.pp-matrix-scroll');
                  const table = box.querySelector('table.pubproof-matrix');
                  box.scrollTop = 600; box.scrollLeft = 400;
                  const at = box.getBoundingClientRect();
                  const head = table.rows[0].cells[1].getBoundingClientRect();
                  const row = Array.from(table.rows).find(r => {
                    const b = r.getBoundingClientRect();
                    return b.top > at.top + 40 && b.bottom < at.bottom;
                  });
                  const first = row.cells[0].getBoundingClientRect();
                  return {top: box.scrollTop, left: box.scrollLeft, boxTop: at.top,
                          boxLeft: at.left, headTop: head.top, firstLeft: first.left};
                }"""
            )
            # the box did scroll both ways, so the test would see a header left behind
            assert moved["top"] > 100 and moved["left"] > 100, moved
            assert abs(moved["headTop"] - moved["boxTop"]) <= 1, moved
            assert abs(moved["firstLeft"] - moved["boxLeft"]) <= 1, moved
            page.locator(".pp-matrix-scroll").first.screenshot(
                path=str(screenshots / "matrix-scrolled.png")
            )
        finally:
            browser.close()  # type: ignore[attr-defined]


def _clipped(page: object) -> list[str]:
    return page.eval_on_selector_all(  # type: ignore[attr-defined, no-any-return]
        ".pp-excerpt",
        "els => els.filter(e => e.offsetParent !== null && e.scrollHeight > e.clientHeight + 1)"
        ".map(e => e.lang + ': ' + e.innerText.slice(0, 40))",
    )


def test_no_excerpt_is_clipped_and_the_picker_keeps_two_to_five(site_url: str) -> None:
    with playwright.sync_playwright() as p:
        browser = _browser(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1200})  # type: ignore[attr-defined]
            page.goto(f"{site_url}/_generated/clauses.html")
            page.wait_for_load_state("load")
            page.evaluate("window.localStorage.clear()")
            page.reload()
            page.wait_for_load_state("load")
            picker = page.locator("#pp-language-picker")
            assert "two to five" in picker.inner_text()
            # one language is fewer than the legend allows: the box stays ticked
            picker.locator('input[data-lang="de"]').click()
            assert picker.locator('input[data-lang="de"]').is_checked()
            assert len(_visible_excerpts(page, "de")) > 0
            # a stored choice of one language is not honoured either
            page.evaluate("window.localStorage.setItem('pubproof.languages', '[\"ja\"]')")
            page.reload()
            page.wait_for_load_state("load")
            assert picker.locator("input:checked").count() >= 2
            # all five at once: every excerpt shown whole, on screen and on paper
            for lang in ("ja", "es", "zh"):
                picker.locator(f'input[data-lang="{lang}"]').check()
            assert picker.locator("input:checked").count() == 5
            assert page.locator(".pp-excerpt").count() > 50
            assert _clipped(page) == []
            page.emulate_media(media="print")
            assert _clipped(page) == []
        finally:
            browser.close()  # type: ignore[attr-defined]


def _luminance(colour: str) -> float:
    channels = [float(c) / 255 for c in re.findall(r"[\d.]+", colour)[:3]]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _contrast(a: str, b: str) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_charts_have_contrast_whatever_scheme_the_readers_system_uses(site_url: str) -> None:
    """A refuted theorem's chart, with the theme left on "auto": every line, arrow head and
    label has at least 4.5:1 contrast with the page under a light and under a dark system."""
    screenshots = built_site() / "_screenshots"
    screenshots.mkdir(exist_ok=True)
    with playwright.sync_playwright() as p:
        browser = _browser(p)
        try:
            for scheme in ("light", "dark"):
                page = browser.new_page(  # type: ignore[attr-defined]
                    viewport={"width": 1280, "height": 1400}, color_scheme=scheme
                )
                page.goto(
                    f"{site_url}/_generated/theorem/proto-refute-exactly-once-with-reordering.html"
                )
                page.wait_for_load_state("load")
                ground = page.evaluate(
                    """() => { const probe = document.createElement('div');
                      probe.style.background = 'var(--color-background-primary)';
                      document.body.appendChild(probe);
                      const colour = getComputedStyle(probe).backgroundColor;
                      probe.remove(); return colour; }"""
                )
                # the page itself follows the system: the test sees the scheme it asks for
                assert (_luminance(ground) < 0.1) == (scheme == "dark"), (scheme, ground)
                inks = page.eval_on_selector_all(
                    "svg.pp-msc line, svg.pp-msc polygon, svg.pp-msc path, svg.pp-msc text",
                    # a note's text sits on its own light box, in both schemes
                    """els => els.filter(e => !e.classList.contains('pp-msc-notetext'))
                      .map(e => { const s = getComputedStyle(e);
                        const filled = e.tagName === 'text' || e.tagName === 'polygon';
                        return [e.getAttribute('class'), filled ? s.fill : s.stroke]; })""",
                )
                assert len(inks) >= 8, inks
                faint = sorted({(c, k) for c, k in inks if _contrast(k, ground) < 4.5})
                assert faint == [], (scheme, ground, faint)
                page.locator("svg.pp-msc").first.screenshot(
                    path=str(screenshots / f"chart-{scheme}.png")
                )
                page.close()
        finally:
            browser.close()  # type: ignore[attr-defined]


def test_the_clause_page_and_the_catalog_print_as_the_article_alone(site_url: str) -> None:
    """On paper (print media, at a wide page so the screen layout's own breakpoints do not
    hide anything by themselves): no sidebar, table of contents or language picker, the
    article across the page, the chosen languages still side by side."""
    with playwright.sync_playwright() as p:
        browser = _browser(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1200})  # type: ignore[attr-defined]
            for name in ("_generated/clauses.html", "_generated/ambiguity-catalog.html"):
                page.goto(f"{site_url}/{name}")
                page.wait_for_load_state("load")
                page.emulate_media(media="print")
                shown = page.evaluate(
                    """() => ['.sidebar-drawer', '.toc-drawer', '#pp-language-picker']
                      .map(s => document.querySelector(s))
                      .filter(e => e && getComputedStyle(e).display !== 'none')
                      .map(e => e.className || e.id)"""
                )
                assert shown == [], (name, shown)
                width = page.evaluate(
                    "document.querySelector('article').getBoundingClientRect().width"
                )
                assert width >= 1100, (name, width)
                paper = page.evaluate("getComputedStyle(document.body).backgroundColor")
                assert paper == "rgb(255, 255, 255)", (name, paper)
                page.emulate_media(media="screen")
            page.goto(f"{site_url}/_generated/clauses.html")
            page.wait_for_load_state("load")
            page.emulate_media(media="print")
            boxes = page.eval_on_selector_all(
                f"{DUP} .pp-col:not(.pp-off)",
                "els => els.map(e => { const r = e.getBoundingClientRect();"
                " return [e.className, r.left, r.top]; })",
            )
            languages = [b for b in boxes if "pp-side" not in b[0]]
            side = [b for b in boxes if "pp-side" in b[0]]
            assert len(languages) == 2 and languages[0][2] == languages[1][2], boxes
            assert side and side[0][2] > languages[0][2], boxes  # the model's column under them
        finally:
            browser.close()  # type: ignore[attr-defined]


#: The displayed size of each text of each diagram in the article: the SVG's own font size
#: times the scale its embedding applies (an <object> shrinks a graph wider than the column).
_DIAGRAM_TEXT = r"""() => [...document.querySelectorAll('article section[id]')].filter(
    s => s.querySelector(':scope > h2')).map(s => [s.id,
  [...s.querySelectorAll('.graphviz object')].map(o => {
    const svg = o.contentDocument && o.contentDocument.querySelector('svg');
    const sizes = svg ? [...svg.querySelectorAll('text')].map(
      t => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a) : [];
    return [o.getAttribute('data'), sizes.length ? Math.min(...sizes) : 0,
            o.getBoundingClientRect().right <= s.getBoundingClientRect().right + 1];
  })])"""


def test_every_state_diagram_is_readable_at_1280_px(site_url: str) -> None:
    """The state-machines page draws each edition's tables as several diagrams, each small
    enough that its labels stay at 11 px or more at 1280 px (the whole table as one graph
    came out at about 7 px), and none wider than the column."""
    with playwright.sync_playwright() as p:
        browser = _browser(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})  # type: ignore[attr-defined]
            page.goto(f"{site_url}/_generated/state-machines.html")
            page.wait_for_load_state("load")
            sections = dict(page.evaluate(_DIAGRAM_TEXT))
            page.screenshot(path=str(built_site() / "_screenshots" / "state-machines.png"))
        finally:
            browser.close()  # type: ignore[attr-defined]
    assert set(sections) == {"mqtt-3-1-and-3-1-1", "mqtt-5-0"}, set(sections)
    for section, drawn in sections.items():
        assert len(drawn) > 1, section
        small = [(source, round(size, 1)) for source, size, _ in drawn if size < 11]
        assert small == [], (section, small)
        assert all(inside for *_, inside in drawn), section
