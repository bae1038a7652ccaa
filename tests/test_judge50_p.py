"""The compiled 5.0 link judge's copy of a PUBLISH's ``P`` kept for its flow
(``pubproof.pipeline.fast.link50._p``): its fast path for the capture pipeline's 5.0 ``P``
(a dict of P's keys in P's order with ``properties`` before ``payload_hex``) gives what
the general copy gives, the same items in the same order, on that shape and on every
other; a mutant of the fast path that keeps the properties is caught."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pubproof.judge.describe import P_FIELDS
from pubproof.pipeline.fast import link50

_PIPELINE_ORDER = (*P_FIELDS[:-1], "properties", P_FIELDS[-1])


def _general(fields: Mapping[str, Any]) -> dict[str, Any]:
    return {k: fields[k] for k in P_FIELDS if k in fields}


def _kept_properties(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A mutant: the fast path without leaving the properties out."""
    if type(fields) is dict and tuple(fields) == _PIPELINE_ORDER:
        return dict(fields)
    return _general(fields)


_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "type": st.just("PUBLISH"),
    "dup": st.booleans(),
    "qos": st.integers(0, 2),
    "retain": st.booleans(),
    "topic": st.sampled_from(["", "a/b", "t"]),
    "packet_id": st.one_of(st.none(), st.integers(1, 65535)),
    "properties": st.sampled_from([{}, {"topic_alias": 3}, {"user_properties": [["a", "b"]]}]),
    "payload_hex": st.sampled_from(["", "00ff", "68656c6c6f"]),
}


@st.composite
def _fields(draw: st.DrawFn) -> dict[str, Any]:
    """The pipeline's shape often; else any subset of the keys, in any order."""
    if draw(st.booleans()):
        keys: list[str] = list(_PIPELINE_ORDER)
    else:
        keys = draw(st.permutations([*_PIPELINE_ORDER, "topic_alias"]))
        keys = keys[: draw(st.integers(0, len(keys)))]
    return {k: draw(_VALUES.get(k, st.integers(1, 10))) for k in keys}


def _agrees(copy: Callable[[Mapping[str, Any]], dict[str, Any]], fields: dict[str, Any]) -> bool:
    made, expected = copy(fields), _general(fields)
    return list(made.items()) == list(expected.items()) and made is not fields


@settings(max_examples=300, deadline=None)
@given(_fields())
def test_the_copy_is_the_general_one(fields: dict[str, Any]) -> None:
    before = dict(fields)
    assert _agrees(link50._p, fields)
    assert fields == before  # the fields themselves unchanged


def test_a_mutant_that_keeps_the_properties_is_caught() -> None:
    fields = {k: None for k in _PIPELINE_ORDER} | {"type": "PUBLISH", "properties": {}}
    assert _agrees(link50._p, fields)
    assert not _agrees(_kept_properties, fields)
