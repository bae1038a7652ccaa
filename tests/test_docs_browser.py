"""The built site in a real browser (Debian's chromium, headless, no network): switching
the language of the clause excerpts changes the visible text to that language on every
clause of the page at once, and the screenshots land in build/site/_screenshots/."""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from docs_site import built_site
from PIL import Image

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


def test_switching_the_language_switches_every_clause(site_url: str) -> None:
    screenshots = built_site() / "_screenshots"
    screenshots.mkdir(exist_ok=True)
    outside: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1600})
            page.on(
                "request",
                lambda r: None if r.url.startswith(site_url) else outside.append(r.url),
            )
            page.goto(f"{site_url}/_generated/clauses.html#clause-dup")
            page.wait_for_load_state("load")
            expected = {lang: sum(1 for c in CLAUSES if lang in c.spans) for lang in
                        ("en", "de", "ja", "es", "zh")}  # fmt: skip
            assert len(_visible_excerpts(page, "en")) == expected["en"]
            assert _visible_excerpts(page, "ja") == []
            _settle(page, "#clause-dup")
            page.screenshot(path=str(screenshots / "clauses-en.png"))

            checks = [("ja", "日本語", KANA_KANJI), ("de", "Deutsch", GERMAN), ("zh", "中文", HAN)]
            for lang, label, script in checks:
                # click the tab of the DUP clause only: the other tab sets must follow
                section = page.locator("#clause-dup").locator("xpath=..")
                section.locator("label.sd-tab-label", has_text=label).first.click()
                page.wait_for_timeout(200)
                shown = _visible_excerpts(page, lang)
                assert len(shown) == expected[lang], (lang, len(shown))  # every clause followed
                assert all(script.search(text) for text in shown), (
                    lang,
                    [t[:80] for t in shown if not script.search(t)],
                )
                assert _visible_excerpts(page, "en") == [], f"English still shown after {lang}"
                gaps = page.eval_on_selector_all(
                    ".pp-gap", "els => els.filter(e => e.offsetParent !== null).length"
                )
                assert gaps == sum(1 for c in CLAUSES if lang in c.gaps), (lang, gaps)
                _settle(page, "#clause-dup")
                page.screenshot(path=str(screenshots / f"clauses-{lang}.png"))
                section.locator(".sd-tab-set").first.screenshot(
                    path=str(screenshots / f"clause-dup-{lang}.png")
                )
            # the choice is remembered: a reload keeps Chinese
            page.reload()
            page.wait_for_load_state("load")
            assert len(_visible_excerpts(page, "zh")) == expected["zh"]
        finally:
            browser.close()
    assert outside == [], f"the page fetched from outside the site: {outside}"
    for lang in ("en", "ja", "de", "zh"):
        assert _unpainted_rows(screenshots / f"clauses-{lang}.png") == 0, lang
