"""The agreement checks bite: each mutant of the reference codec is caught.

A mutant is a small, plausible bug (a check dropped, a table entry wrong, an off-by-one).
Each must be killed by the corpus check and by the Hypothesis agreement property, so that
neither can pass by being too weak to notice.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from support.agreement import Stream, model_verdict, reference_verdict, streams

from pubproof.reference import codec
from pubproof.vector_commands import check_corpus

from conftest import ROOT

CORPUS = ROOT / "vectors" / "corpus.jsonl"


@contextmanager
def patched(name: str, value: object) -> Iterator[None]:
    original = getattr(codec, name)
    setattr(codec, name, value)
    codec.clear_caches()
    try:
        yield
    finally:
        setattr(codec, name, original)
        codec.clear_caches()


def _no_hash_wildcard() -> object:
    return patched("_FORBIDDEN_TOPIC_BYTES", re.compile(rb"[\x00+]"))


def _pubrel_flags_zero() -> object:
    return patched("_ACK_FLAGS", {4: 0, 5: 0, 6: 0, 7: 0})


def _nul_allowed() -> object:
    return patched("_FORBIDDEN_TOPIC_BYTES", re.compile(rb"[+#]"))


MUTANTS: dict[str, Callable[[], object]] = {
    "wildcard # accepted": _no_hash_wildcard,
    "PUBREL flags 0000": _pubrel_flags_zero,
    "U+0000 accepted": _nul_allowed,
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_the_corpus_kills(mutant: str) -> None:
    with MUTANTS[mutant](), CORPUS.open(encoding="utf-8") as lines:  # type: ignore[attr-defined]
        _, failures = check_corpus(lines)
    assert failures, f"the corpus does not notice the mutant {mutant!r}"


@settings(max_examples=3000, database=None, derandomize=True)
@given(streams())
def _same_verdict(case: Stream) -> None:
    # property (b) of test_agreement.py: any bytes, the same verdict from both
    edition, readings, limits, data = case
    assert reference_verdict([data], edition, readings, limits) == model_verdict(
        data, edition, readings, limits
    )


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_the_agreement_property_kills(mutant: str) -> None:
    with MUTANTS[mutant](), pytest.raises(AssertionError):  # type: ignore[attr-defined]
        _same_verdict()


def test_the_mutants_are_gone_afterwards() -> None:
    with CORPUS.open(encoding="utf-8") as lines:
        _, failures = check_corpus(lines)
    assert failures == []
