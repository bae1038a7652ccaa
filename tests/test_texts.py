"""The copied spec excerpts are the source material, unchanged.

``model/texts/provenance.json`` records the SHA-256 of each source text as it was copied, so
a plain clone checks its copies against that record; where the project's shared source
material is at hand (a ``shared/spec`` folder beside the checkout or above it), the record
itself is checked against the source, byte for byte.
"""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from typing import Any

import pytest

from conftest import ROOT

LANGUAGES = ("en", "de", "ja", "es", "zh")
#: where the shared source material may be: ``shared/spec`` beside the checkout, or beside
#: a folder above it (a worktree under ``wt/`` next to ``shared/``)
SHARED = next(
    (p / "shared" / "spec" for p in ROOT.parents if (p / "shared" / "spec").is_dir()), None
)


def _provenance() -> dict[str, Any]:
    texts = resources.files("pubproof.model") / "texts"
    found: dict[str, Any] = json.loads((texts / "provenance.json").read_text(encoding="utf-8"))
    return found


def test_texts_ship_with_the_package_with_provenance() -> None:
    texts = resources.files("pubproof.model") / "texts"
    provenance = _provenance()
    assert set(provenance["texts"]) == set(LANGUAGES)
    for entry in provenance["texts"].values():
        assert (texts / entry["file"]).read_text(encoding="utf-8")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_copies_are_byte_identical_to_the_recorded_source(lang: str) -> None:
    """Runs on any clone: the copy's SHA-256 is the one recorded when it was copied."""
    entry = _provenance()["texts"][lang]
    copy = (ROOT / "model" / "texts" / entry["file"]).read_bytes()
    assert hashlib.sha256(copy).hexdigest() == entry["sha256"]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_record_is_the_shared_source(lang: str) -> None:
    if SHARED is None:
        pytest.skip("the shared source material (shared/spec) is not beside this checkout")
    source = (SHARED / f"publish.{lang}.txt").read_bytes()
    assert hashlib.sha256(source).hexdigest() == _provenance()["texts"][lang]["sha256"]
    assert (ROOT / "model" / "texts" / f"publish.{lang}.txt").read_bytes() == source


def test_a_changed_copy_is_seen() -> None:
    """The record can fail: one byte more and the digest differs."""
    entry = _provenance()["texts"]["en"]
    copy = (ROOT / "model" / "texts" / entry["file"]).read_bytes()
    assert hashlib.sha256(copy + b"\n").hexdigest() != entry["sha256"]
