"""The internal link check of the built site: every ``href`` and ``src`` inside the site
resolves to a file, every ``#anchor`` to an ``id`` (or ``name``) in the target page, and no
page loads anything from the network (``http(s)://`` or ``//`` in ``src``, or in a
stylesheet ``<link>``), so the site works offline as it is.

``python -m pubproof_docs.linkcheck build/site`` prints every problem and exits 1 if any.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

#: Attributes that load an asset (must be local) and those that only link.
LOADS = {("script", "src"), ("img", "src"), ("link", "href"), ("iframe", "src"),
         ("source", "src"), ("embed", "src"), ("object", "data")}  # fmt: skip
LINKS = {("a", "href"), ("area", "href")}


@dataclass
class Page(HTMLParser):
    ids: set[str] = field(default_factory=set)
    refs: list[tuple[str, str, str]] = field(default_factory=list)  # (tag, attr, url)

    def __post_init__(self) -> None:
        HTMLParser.__init__(self, convert_charrefs=True)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v for k, v in attrs if v is not None}
        for key in ("id", "name"):
            if key in values and (key == "id" or tag == "a"):
                self.ids.add(values[key])
        for attr in ("href", "src", "data"):
            if attr in values and ((tag, attr) in LOADS or (tag, attr) in LINKS):
                self.refs.append((tag, attr, values[attr]))


def _parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8", errors="replace"))
    return page


def problems(site: Path) -> Iterator[str]:
    """Every broken internal link, missing anchor and network asset under ``site``."""
    pages = {p.resolve(): _parse(p) for p in sorted(site.rglob("*.html"))}
    if not pages:
        yield f"{site}: no HTML pages"
        return
    for path, page in pages.items():
        where = path.relative_to(site.resolve())
        for tag, attr, url in page.refs:
            parts = urlsplit(url)
            if parts.scheme in {"http", "https"} or url.startswith("//"):
                if (tag, attr) in LOADS:
                    yield f"{where}: <{tag} {attr}> loads from the network: {url}"
                continue
            if parts.scheme or parts.netloc:  # mailto:, data:, javascript:
                continue
            target = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                yield f"{where}: <{tag} {attr}={url!r}>: no such file"
                continue
            anchor = unquote(parts.fragment)
            if anchor and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if anchor not in ids:
                    yield f"{where}: <{tag} {attr}={url!r}>: no id {anchor!r} in the target"


def main(argv: list[str]) -> int:
    site = Path(argv[0] if argv else "build/site")
    found = list(problems(site))
    for problem in found:
        print(problem)
    count = len(list(site.rglob("*.html")))
    print(f"link check: {count} pages, {len(found)} problem(s)", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
