"""The built site's tools for its three readers, in a real browser (Debian's chromium,
headless, no network): a rule id's search leads to the matrix rows and evidence that judge
it and back; the catalog shows its ids and filters; the landing page leads each reader on a
path; the matrix keeps its header row and check column in view; no excerpt is clipped and
the picker keeps two to five languages; the charts have contrast whatever colour scheme
the reader's system uses; the clause page and the catalog print as the article alone;
every state diagram keeps its text at 11 px or more. The screenshots land in
build/site/_screenshots/."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from support.browser import launch, search, served, settle, visible_excerpts
from support.docs_site import built_site

playwright = pytest.importorskip("playwright.sync_api")  # installed by the docs extra

#: The DUP clause's section (the anchor #clause-dup is a span inside it).
DUP = "section:has(> #clause-dup)"


@pytest.fixture(scope="module")
def site_url() -> Iterator[str]:
    with served(built_site()) as url:
        yield url


def test_the_implementers_loop_from_a_rule_id_to_the_matrix_and_back(site_url: str) -> None:
    """A rule id's search lists the matrix rows and evidence pages that judge it; the matrix
    row names the rule, linked to its statement; the evidence page leads back to the site
    and links the id to its statement. A project id is found too; an id that is no rule
    is said to be none, and Sphinx's hits on its numbers are not shown."""
    shots = built_site() / "_screenshots"
    shots.mkdir(exist_ok=True)
    with playwright.sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})  # type: ignore[attr-defined]
            search(page, site_url, "MQTT-3.3.1-4")
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

            search(page, site_url, "MQTT-3.3.1-4")
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

            search(page, site_url, "PP31-3.3-topic-empty")
            hits = page.locator("#pp-rule-results li").all_inner_texts()
            assert any(h.startswith("statement: PP31-3.3-topic-empty") for h in hits), hits

            search(page, site_url, "MQTT-9.9.9-9")
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
        browser = launch(p)
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
        browser = launch(p)
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
                settle(page, "article h1")
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
        browser = launch(p)
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
        browser = launch(p)
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
            assert len(visible_excerpts(page, "de")) > 0
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
        browser = launch(p)
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
        browser = launch(p)
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
        browser = launch(p)
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
