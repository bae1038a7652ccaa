"""The docs tests' browser: the built site served on a free loopback port, Debian's
chromium launched headless with no network, and the waits and reads the browser tests
share (``tests/test_docs_browser*.py``)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from PIL import Image

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


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def served(site: Path) -> Iterator[str]:
    """The site's folder over HTTP on a free loopback port: its URL."""
    handler = functools.partial(_Quiet, directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def launch(p: object) -> object:
    """Headless chromium from Playwright's ``p``."""
    return p.chromium.launch(executable_path=CHROMIUM, args=ARGS)  # type: ignore[attr-defined]


def visible_excerpts(page: object, lang: str) -> list[str]:
    return page.eval_on_selector_all(  # type: ignore[attr-defined, no-any-return]
        f'.pp-excerpt[lang="{lang}"]',
        "els => els.filter(e => e.offsetParent !== null && e.getClientRects().length > 0)"
        ".map(e => e.innerText)",
    )


def settle(page: object, anchor: str) -> None:
    """Wait until the page is painted where the screenshot looks: the fonts loaded, the anchor
    scrolled into view after layout, and two frames drawn. Without this, headless Chromium's
    screenshot sometimes caught the page mid-paint, a white band where the top should be."""
    page.evaluate("document.fonts.ready")  # type: ignore[attr-defined]
    page.locator(anchor).scroll_into_view_if_needed()  # type: ignore[attr-defined]
    page.evaluate(  # type: ignore[attr-defined]
        "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
    )


def unpainted_rows(png: Path) -> int:
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


def search(page: object, site_url: str, query: str) -> None:
    page.goto(f"{site_url}/index.html")  # type: ignore[attr-defined]
    page.wait_for_load_state("load")  # type: ignore[attr-defined]
    box = page.locator("input[name=q]").first  # type: ignore[attr-defined]
    box.fill(query)
    box.press("Enter")
    page.wait_for_load_state("load")  # type: ignore[attr-defined]
    page.wait_for_selector("#pp-rule-results h2")  # type: ignore[attr-defined]
