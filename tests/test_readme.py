"""The README and the guides as a reader meets them: the two commands, a size a reader can
take in, every guide reachable, and no link that leads nowhere.

The README is for readers (what pubproof is, the two commands, a tour, the architecture,
one performance table); the details live in ``docs/guides/`` and the history of every
measurement in ``benchmarks/README.md``. These tests hold that shape: the two commands
that CI and the project's rules require are there, the README stays about 20 KB, it names
every top-level package and links every guide, every guide is in the site's table of
contents, and every relative link (Markdown, and the guides' ``{doc}`` references to other
guides) resolves.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT

README = ROOT / "README.md"
GUIDES = sorted((ROOT / "docs" / "guides").glob("*.md"))
#: the Markdown files whose relative links must resolve
LINKED = [README, ROOT / "benchmarks" / "README.md", ROOT / "docs" / "index.md", *GUIDES]
#: "about 20 KB": the bound of the project's own before-stop check is 22,000 bytes
MAX_README_BYTES = 20_480
#: the packages of the layers (tests/test_layers.py) and the other top-level folders
FOLDERS = (
    "model", "reference", "judge", "proofs", "probe", "pipeline", "cli", "interop", "docs",
    "notebooks", "tests", "benchmarks", "vectors", "samples", "scripts",
)  # fmt: skip

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^()\s]+)\)")
_DOC = re.compile(r"\{doc\}`(?:[^`<]*<([^>`]+)>|([^`<]+))`")


def _prose(text: str) -> str:
    """The text without its code: fenced blocks and inline code spans."""
    return _INLINE_CODE.sub("", _FENCE.sub("", text))


def _sh_blocks(text: str) -> list[str]:
    return re.findall(r"^```sh\n(.*?)^```", text, re.MULTILINE | re.DOTALL)


def markdown_links(path: Path) -> Iterator[str]:
    """The targets of the Markdown links of ``path`` outside its code."""
    for match in _LINK.finditer(_prose(path.read_text(encoding="utf-8"))):
        yield match.group(1)


def broken_links(path: Path) -> list[str]:
    """The relative link targets of ``path`` (anchors dropped) that name no file or folder."""
    broken = []
    for target in markdown_links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL with a scheme, or an anchor on the same page
        if not (path.parent / target.split("#", 1)[0]).exists():
            broken.append(target)
    return broken


def broken_doc_references(path: Path) -> list[str]:
    """The ``{doc}`` targets of a page (outside the pages the build generates) that name
    no page of the site."""
    docs = ROOT / "docs"
    broken = []
    for match in _DOC.finditer(_prose_keep_roles(path.read_text(encoding="utf-8"))):
        target = (match.group(1) or match.group(2)).strip()
        base = docs if target.startswith("/") else path.parent
        page = (base / target.lstrip("/")).resolve()
        if "_generated" in page.parts:
            continue  # written at build time from the registries; the build checks them
        if not (page.with_suffix(".md").exists() or page.with_suffix(".ipynb").exists()):
            broken.append(target)
    return broken


def _prose_keep_roles(text: str) -> str:
    """The text without its fenced blocks (a ``{doc}`` role is inline code to the
    Markdown parser, so inline code stays)."""
    return _FENCE.sub("", text)


def test_the_readme_holds_the_two_commands_first_class() -> None:
    text = README.read_text(encoding="utf-8")
    blocks = [block.strip() for block in _sh_blocks(text)]
    assert "scripts/main" in blocks, "the main command, alone in an sh block"
    assert "scripts/test" in blocks, "the test command, alone in an sh block"
    commands = text.index("## The two commands")
    assert commands < text.index("scripts/main") and commands < text.index("\nscripts/test")
    assert "scripts/test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_the_readme_is_for_readers_at_most_about_20_kb() -> None:
    size = len(README.read_bytes())
    assert size <= MAX_README_BYTES, (
        f"README.md is {size:,} bytes: history and details go to benchmarks/README.md "
        "and docs/guides/"
    )


def test_the_readme_names_every_top_level_folder() -> None:
    text = README.read_text(encoding="utf-8")
    missing = [f for f in FOLDERS if f"`{f}/`" not in text]
    assert not missing, f"the architecture section does not name {missing}"


def test_the_readme_links_every_guide() -> None:
    linked = {(README.parent / t.split("#", 1)[0]).resolve() for t in markdown_links(README)}
    missing = [g.name for g in GUIDES if g.resolve() not in linked]
    assert not missing, f"the README does not link the guides {missing}"


def test_every_guide_is_in_a_toctree_of_the_site() -> None:
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    entries = {
        line.strip()
        for block in re.findall(r"^```\{toctree\}\n(.*?)^```", index, re.MULTILINE | re.DOTALL)
        for line in block.splitlines()
        if line.strip() and not line.startswith(":")
    }
    missing = [g.stem for g in GUIDES if f"guides/{g.stem}" not in entries]
    assert not missing, f"docs/index.md's toctrees leave out {missing}"


@pytest.mark.parametrize("path", LINKED, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path: Path) -> None:
    assert broken_links(path) == []
    assert broken_doc_references(path) == []


def test_a_broken_link_and_a_missing_page_are_found(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](page.md) [gone](nowhere.md#x) [web](https://example.org) [anchor](#here)\n"
        "`[in code](nowhere-either.md)`\n```sh\n[fenced](not-a-link.md)\n```\n"
        "{doc}`a guide <no-such-guide>` {doc}`../_generated/cli`\n",
        encoding="utf-8",
    )
    assert broken_links(page) == ["nowhere.md#x"]
    assert broken_doc_references(page) == ["no-such-guide"]
