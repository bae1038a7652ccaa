"""Each check of the 5.0 decoder is live: removed one at a time (a table widened, a rule
dropped), the case tables of :mod:`wire50_cases` notice."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import pytest
from support.builds import pure_only
from support.wire50_cases import ACCEPT, REJECT, verdict

from pubproof.reference import codec, decode50, section50


@contextmanager
def patched(modules: tuple[ModuleType, ...], name: str, value: object) -> Iterator[None]:
    """``name`` replaced by ``value`` in each of ``modules`` (those whose code reads it)."""
    originals = [getattr(module, name) for module in modules]
    for module in modules:
        setattr(module, name, value)
    codec.clear_caches()
    try:
        yield
    finally:
        for module, original in zip(modules, originals, strict=True):
            setattr(module, name, original)
        codec.clear_caches()


def _widened_codes() -> dict[int, frozenset[int]]:
    return {kind: frozenset(range(256)) for kind in decode50._ACK_CODES}


#: mutant -> (the modules whose code reads the name, the name, its mutated value)
MUTANTS: dict[str, tuple[tuple[ModuleType, ...], str, Any]] = {
    "any ack Reason Code": ((decode50,), "_ACK_CODES", _widened_codes()),
    "Reason String valid in PUBLISH": (
        (section50,),
        "_PUBLISH_IDS",
        section50._PUBLISH_IDS | {0x1F},
    ),
    "PFI valid in acks": ((section50,), "_ACK_IDS", section50._ACK_IDS | {0x01}),
    "Response Topic wildcards allowed": (
        (section50,),
        "_WILDCARD_BYTES",
        re.compile(rb"[^\x00-\xff]"),
    ),
    "MEI three bytes": ((section50,), "_FIXED_SIZE", {**section50._FIXED_SIZE, 0x02: 3}),
    "no minimal rule": ((decode50, section50), "_vbi_size", lambda value: 4),
    "Content Type judged as a Reason String": (
        (section50,),
        "_STRING_RULES",
        {**section50._STRING_RULES, 0x03: section50._STRING_RULES[0x1F]},
    ),
}


def _table_fails() -> bool:
    for _, data, readings, limits, expected in REJECT:
        for chunk in (None, 1):
            if verdict(data, readings, limits, chunk) != ([], expected):
                return True
    for _, data, readings, limits, packets in ACCEPT:
        for chunk in (None, 1):
            if verdict(data, readings, limits, chunk) != (packets, None):
                return True
    return False


#: the mutants that replace a function of the decoder, which its compiled callers call
#: directly: they run in the pure pass
PATCH_COMPILED_CODE = {"no minimal rule"}


@pytest.mark.parametrize(
    "mutant",
    [pytest.param(m, marks=pure_only) if m in PATCH_COMPILED_CODE else m for m in sorted(MUTANTS)],
)
def test_each_check_is_live(mutant: str) -> None:
    modules, name, value = MUTANTS[mutant]
    with patched(modules, name, value):
        assert _table_fails(), f"the case table does not notice: {mutant}"
    assert not _table_fails()
