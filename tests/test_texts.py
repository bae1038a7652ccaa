"""The copied spec excerpts are the source material, unchanged."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from conftest import ROOT

SHARED = ROOT.parent / "shared" / "spec"


def test_texts_ship_with_the_package_with_provenance() -> None:
    texts = resources.files("pubproof.model") / "texts"
    provenance = json.loads((texts / "provenance.json").read_text(encoding="utf-8"))
    assert set(provenance["texts"]) == {"en", "de", "ja", "es", "zh"}
    for entry in provenance["texts"].values():
        assert (texts / entry["file"]).read_text(encoding="utf-8")


@pytest.mark.parametrize("lang", ["en", "de", "ja", "es", "zh"])
def test_copies_are_byte_identical_to_the_shared_source(lang: str) -> None:
    source = SHARED / f"publish.{lang}.txt"
    if not source.exists():
        pytest.skip("shared/spec is not beside this checkout")
    assert (ROOT / "model" / "texts" / f"publish.{lang}.txt").read_bytes() == source.read_bytes()
