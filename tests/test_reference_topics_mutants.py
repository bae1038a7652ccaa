"""The tests of the topic indexes bite: each mutant of them is killed.

A mutant is a plausible bug made by one textual change to a module's source, which is then
run as a module of its own (so the compiled build is left alone and the test runs on either
build). The stateful machines of ``test_reference_topics_stateful.py`` must kill every
mutant of the two indexes, and the rule tables and properties of ``test_reference_topics.py``
every mutant of the topic rules; the unmutated sources must pass the same checks. The
mutants read the Python source of compiled modules and do not depend on the build: they
run once, in the pure pass (``builds.pure_only``).
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import run_state_machine_as_test
from support import topic_cases as rules
from support.builds import pure_only
from support.topic_machines import index_machine, retained_machine

from pubproof.reference.errors import InvalidTopic

from conftest import ROOT

pytestmark = pure_only

#: enough to kill every mutant (most die within a few examples); the unmutated sources
#: run with fewer (the stateful tests run them in full)
QUICK = settings(
    max_examples=300,
    stateful_step_count=40,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],  # a kill needs no shrinking
)
SHORT = settings(max_examples=30, stateful_step_count=40, deadline=None, database=None)

#: module -> {mutant: (text in the source, its replacement)}
MUTANTS: dict[str, dict[str, tuple[str, str]]] = {
    "subscriptions": {
        "'#' does not match its parent level": (
            "        slot = node.hash\n        if slot is not None:",
            "        slot = node.hash\n        if slot is not None and i < n:",
        ),
        "'$' rule dropped": ('    if topic_name[0] == "$":', "    if False:"),
        "'$' rule applied at every level": (
            "            if plus is not None:",
            '            if plus is not None and not levels[i].startswith("$"):',
        ),
        "'+' does not match an empty level": (
            "            if plus is not None:",
            "            if plus is not None and levels[i]:",
        ),
        "cache kept when a wildcard filter changes": (
            "        if has_wildcard(filter_):\n            self._cache.clear()",
            "        if has_wildcard(filter_):\n            pass",
        ),
        "cache kept when a plain filter changes": (
            "            self._cache.pop(filter_, None)",
            "            pass",
        ),
        "cache kept when a client's wildcard filters go": (
            "        if wildcard:\n            self._cache.clear()",
            "        if False:\n            self._cache.clear()",
        ),
        "a node's tuple kept after a subscribe": (
            "        slot.members[(client_id, topic_filter)] = sub\n        slot.chunk = None",
            "        slot.members[(client_id, topic_filter)] = sub",
        ),
        "empty nodes kept": (
            "            if not child.empty():\n                break",
            "            if True:\n                break",
        ),
        "a replacement counted as a new subscription": (
            "        if old is None:\n            self._count += 1",
            "        self._count += 1",
        ),
        "the cache stops storing for good": (
            "                self._storing = True\n                self._bypassed = 0",
            "                self._bypassed = 0",
        ),
        "the cache stores whatever the hits": (
            "        self._storing = self._hits * 4 >= self._inserted",
            "        self._storing = True",
        ),
        "the same string under another edition left where it was": (
            "        if old is not None and (old.filter != filter_ or old.share_name != share_name)"
            ":",
            "        if False:",
        ),
    },
    "retained_topics": {
        "'#' does not match its parent level": (
            "        if here.entry is not None:",
            "        if here.entry is not None and here is not node:",
        ),
        "'$' rule dropped for '+'": (
            '                if i == 0 and name.startswith("$"):',
            "                if False:",
        ),
        "'$' rule dropped for '#'": ("skip_dollar=i == 0", "skip_dollar=False"),
        "'+' does not match an empty level": (
            '                if i == 0 and name.startswith("$"):',
            '                if (i == 0 and name.startswith("$")) or not name:',
        ),
        "empty nodes kept": (
            "            del path[depth - 1].children[levels[depth - 1]]",
            "            break",
        ),
    },
    "topics": {
        "'#' accepted before the last level": (
            "        elif text[start] == MULTI_LEVEL and end != last:",
            "        elif False:",
        ),
        "'+' accepted inside a level": (
            "            plus_at = text.find(SINGLE_LEVEL, start, end)",
            "            plus_at = -1",
        ),
        "U+0000 accepted": ('    nul = text.find("\\x00")', "    nul = -1"),
        "wildcards accepted in a topic name": (
            '    text = _check_string(topic_name, edition, "topic name", name=True)\n'
            "    for wildcard in (SINGLE_LEVEL, MULTI_LEVEL):",
            '    text = _check_string(topic_name, edition, "topic name", name=True)\n'
            "    for wildcard in ():",
        ),
        "'#' let through the fast path of topic names": (
            "        and MULTI_LEVEL not in topic_name\n",
            "",
        ),
        "an empty ShareName accepted": ("    if not share_name:", "    if False:"),
        "'$share/' read as shared in 3.1.1": (
            "        edition is not V50\n        or type(topic_filter)",
            "        type(topic_filter)",
        ),
    },
}


def mutant(module: str, name: str | None) -> types.ModuleType:
    """``reference/{module}.py`` with mutant ``name`` applied (None: unmutated), run as a
    module of its own."""
    path = ROOT / "reference" / f"{module}.py"
    source = path.read_text(encoding="utf-8")
    if name is not None:
        old, new = MUTANTS[module][name]
        assert source.count(old) == 1, f"{name}: the text to mutate is not there once"
        source = source.replace(old, new)
    built = types.ModuleType(f"pubproof.reference.{module}_mutant")
    exec(compile(source, str(path), "exec"), built.__dict__)
    return built


def _index_agrees(built: types.ModuleType, how: settings) -> None:
    rules.cache_policy_holds(built.SubscriptionIndex, built.BYPASS)
    run_state_machine_as_test(index_machine(built.SubscriptionIndex, 65536), settings=how)


def _retained_agrees(built: types.ModuleType, how: settings) -> None:
    run_state_machine_as_test(retained_machine(built.RetainedTopics), settings=how)


def _refused(call: Callable[[], object]) -> InvalidTopic:
    """The InvalidTopic ``call()`` raised (an AssertionError if it raised none)."""
    try:
        call()
    except InvalidTopic as error:
        return error
    raise AssertionError("accepted")


def _rules_hold(built: types.ModuleType, how: settings) -> None:
    for topic_filter, edition, rule, offset in rules.FILTER_ERRORS:
        error = _refused(lambda: built.check_topic_filter(topic_filter, edition))  # noqa: B023
        assert (error.rule, error.offset) == (rule, offset)
    for topic_filter, edition, expected in rules.SHARED:
        if isinstance(expected[1], int):
            error = _refused(lambda: built.split_shared(topic_filter, edition))  # noqa: B023
            assert (error.rule, error.offset) == expected
        else:
            assert built.split_shared(topic_filter, edition) == expected

    @settings(how)
    @given(st.text(st.sampled_from("a/+#\x00é$"), max_size=8))
    def accepted_when_valid(text: str) -> None:
        try:
            built.check_topic_filter(text)
        except InvalidTopic:
            assert not rules.spec_valid_filter(text)
        else:
            assert rules.spec_valid_filter(text)
        try:
            built.check_topic_name(text)
        except InvalidTopic:
            assert not text or any(c in text for c in "\x00+#")
        else:
            assert text and not any(c in text for c in "\x00+#")

    accepted_when_valid()


CHECKS: dict[str, Callable[[types.ModuleType, settings], None]] = {
    "subscriptions": _index_agrees,
    "retained_topics": _retained_agrees,
    "topics": _rules_hold,
}


def _failed(check: Callable[[], Any]) -> BaseException | None:
    """What the check raised: an AssertionError (alone or in a group), or None."""
    try:
        check()
    except AssertionError as error:
        return error
    except BaseExceptionGroup as group:
        if group.subgroup(AssertionError) is not None:
            return group
        raise
    return None


@pytest.mark.parametrize(
    ("module", "name"), [(m, n) for m, mutants in MUTANTS.items() for n in mutants]
)
def test_the_mutant_is_killed(module: str, name: str) -> None:
    built = mutant(module, name)
    assert _failed(lambda: CHECKS[module](built, QUICK)) is not None, f"{module}: {name} survived"


@pytest.mark.parametrize("module", sorted(MUTANTS))
def test_the_unmutated_source_passes_the_same_checks(module: str) -> None:
    CHECKS[module](mutant(module, None), SHORT)
