"""The reference's topic rules, subscription index and retained-topic index.

* the rules of topic names and topic filters (4.7, 4.8.2): each error's rule id in each
  edition and its byte offset; acceptance equal to a validity predicate written here;
* the laws of matching, as properties of the index: a filter without wildcards matches
  exactly itself, ``#`` its parent level and everything below but no ``$`` name from the
  first level, ``+`` exactly one level (an empty one too), no normalisation;
* both indexes against the oracle (:mod:`topic_oracle`) on random filters and names;
* any strings at all: the indexes raise :class:`InvalidTopic` and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from functools import partial

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from support.topic_cases import FILTER_ERRORS, SHARED, cache_policy_holds, spec_valid_filter
from support.topic_oracle import (
    matches,
    name_levels,
    subscribed_filters,
    topic_filters,
    topic_names,
)

from pubproof.model import wire_rules as W
from pubproof.model.editions import Edition
from pubproof.model.rules import RULES
from pubproof.reference.errors import InvalidTopic, ProtocolViolation
from pubproof.reference.retained_topics import RetainedTopics
from pubproof.reference.subscriptions import BYPASS, SubscriptionIndex
from pubproof.reference.topic_citations import cite
from pubproof.reference.topics import (
    RULE_IDS,
    check_topic_filter,
    check_topic_name,
    split_shared,
)

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50


def _matched(index: SubscriptionIndex[int], topic_name: str) -> set[str]:
    return {s.topic_filter for s in index.match(topic_name)}


def _index(*filters: str) -> SubscriptionIndex[int]:
    index = SubscriptionIndex[int]()
    for number, topic_filter in enumerate(filters):
        index.subscribe("c", topic_filter, number)
    return index


# --- the rules of topic names and filters ------------------------------------------------


@pytest.mark.parametrize(("topic_filter", "edition", "rule", "offset"), FILTER_ERRORS)
def test_an_invalid_filter_names_its_rule_and_offset(
    topic_filter: str, edition: Edition, rule: str, offset: int
) -> None:
    with pytest.raises(InvalidTopic) as caught:
        check_topic_filter(topic_filter, edition)
    assert (caught.value.rule, caught.value.offset) == (rule, offset)
    assert caught.value.edition == edition.value
    assert caught.value.reason_code == (0x8F if edition is V50 else None)
    assert isinstance(caught.value, ProtocolViolation)
    with pytest.raises(InvalidTopic):
        _index(topic_filter)


NAME_ERRORS = [
    ("a/+", V50, "MQTT-3.3.2-2", 2),
    ("a/+", V311, "MQTT-3.3.2-2", 2),
    ("#", V31, "PP31-3.3-topic-wildcards", 0),
    ("温/#", V50, "MQTT-3.3.2-2", 4),
    ("", V50, "MQTT-4.7.3-1", 0),
    ("\x00", V311, "MQTT-1.5.3-2", 0),
    ("\udfff", V50, "MQTT-3.3.2-1", 0),
    ("y" * 65536, V50, "MQTT-4.7.3-3", 65535),
]


@pytest.mark.parametrize(("topic_name", "edition", "rule", "offset"), NAME_ERRORS)
def test_an_invalid_topic_name_names_its_rule_and_offset(
    topic_name: str, edition: Edition, rule: str, offset: int
) -> None:
    for check in (
        lambda: check_topic_name(topic_name, edition),
        lambda: _index("#").match(topic_name, edition),
        lambda: RetainedTopics[int]().set(topic_name, 1, edition),
    ):
        with pytest.raises(InvalidTopic) as caught:
            check()
        assert (caught.value.rule, caught.value.offset) == (rule, offset)
        assert caught.value.reason_code == (0x90 if edition is V50 else None)


@pytest.mark.parametrize(("topic_filter", "edition", "expected"), SHARED)
def test_shared_subscriptions_are_read_in_50_only(
    topic_filter: str, edition: Edition, expected: tuple[str | None, object]
) -> None:
    if isinstance(expected[1], int):
        with pytest.raises(InvalidTopic) as caught:
            split_shared(topic_filter, edition)
        assert (caught.value.rule, caught.value.offset) == expected
    else:
        assert split_shared(topic_filter, edition) == expected


@given(st.text(st.sampled_from("a/+#\x00é$"), max_size=8))
@example("a/#")
@example("#/")
@example("/#")
@example("+/+")
@example("++")
@example("/")
def test_a_filter_is_accepted_exactly_when_it_is_valid(text: str) -> None:
    try:
        check_topic_filter(text)
    except InvalidTopic:
        assert not spec_valid_filter(text)
    else:
        assert spec_valid_filter(text)


@given(st.text(st.sampled_from("a/+#\x00é$"), max_size=8))
def test_a_topic_name_is_accepted_exactly_when_it_is_valid(text: str) -> None:
    valid = bool(text) and not any(c in text for c in "\x00+#")
    try:
        check_topic_name(text)
    except InvalidTopic:
        assert not valid
    else:
        assert valid


# --- the laws of matching ----------------------------------------------------------------


@given(topic_names, topic_names)
def test_a_filter_without_wildcards_matches_exactly_itself(plain: str, topic_name: str) -> None:
    # [MQTT-4.7.3-4] "The Server MUST NOT perform any normalization of Topic Names"
    assert _matched(_index(plain), topic_name) == ({plain} if plain == topic_name else set())
    assert _matched(_index(plain), plain) == {plain}


@given(topic_names, topic_names)
@example("a", "a")
@example("a", "a/")
@example("a", "ab")
@example("$SYS", "$SYS/x")
def test_hash_matches_its_parent_and_every_level_below(prefix: str, topic_name: str) -> None:
    below = topic_name == prefix or topic_name.startswith(prefix + "/")
    assert _matched(_index(prefix + "/#"), topic_name) == ({prefix + "/#"} if below else set())


@given(topic_names)
@example("$SYS")
@example("$")
@example("$/a")
@example("/$")
@example("a$")
def test_a_filter_starting_with_a_wildcard_matches_no_dollar_topic(topic_name: str) -> None:
    # [MQTT-4.7.2-1]
    index = _index("#", "+", "+/#", "+/+", "+/+/#", "+/+/+", "+/+/+/+", "+/+/+/+/+")
    found = _matched(index, topic_name)
    if topic_name.startswith("$"):
        assert found == set()
    else:
        levels = topic_name.count("/") + 1
        expected = {"#", "+/#"} | ({"+/+/#"} if levels >= 2 else set())
        expected.add("/".join(["+"] * levels))
        assert found == expected


@given(st.lists(name_levels, min_size=1, max_size=5), st.data())
def test_plus_matches_exactly_one_level(levels: list[str], data: st.DataObject) -> None:
    topic_name = "/".join(levels)
    if not topic_name:
        levels, topic_name = ["", ""], "/"
    at = data.draw(st.integers(0, len(levels) - 1))
    wild = "/".join([*levels[:at], "+", *levels[at + 1 :]])
    index = _index(wild)
    # any one level, the empty one too; not at the first level of a '$' name [MQTT-4.7.2-1]
    dollar_first = at == 0 and topic_name.startswith("$")
    assert _matched(index, topic_name) == (set() if dollar_first else {wild})
    # one level more, one level less: never
    assert _matched(index, topic_name + "/x") == set()
    shorter = "/".join(levels[:-1])
    if shorter:
        assert _matched(index, shorter) == set()


@pytest.mark.parametrize(
    ("topic_filter", "yes", "no"),
    [
        ("+", ["a", " "], ["/", "a/b", "$"]),
        ("+/+", ["/", "a/", "/a"], ["a", "//"]),
        ("a/+/b", ["a//b"], ["a/b", "a///b"]),
        ("/#", ["/", "/a", "//"], ["a", "a/"]),
        ("a/#", ["a", "a/", "a//", "a/b/c"], ["ab", "b/a", "/a"]),
        ("#", ["/", "//", "a"], ["$", "$a/b"]),
        ("+/#", ["a", "/"], ["$SYS/a", "$"]),
        ("$SYS/#", ["$SYS", "$SYS/a"], ["$SYSx", "SYS/a"]),
        ("$SYS/+", ["$SYS/a", "$SYS/"], ["$SYS"]),
        ("/", ["/"], ["//", "a/"]),
        ("a//", ["a//"], ["a/", "a///"]),
    ],
)
def test_empty_levels_and_dollar(topic_filter: str, yes: list[str], no: list[str]) -> None:
    index = _index(topic_filter)
    for topic_name in yes:
        assert _matched(index, topic_name) == {topic_filter}, topic_name
    for topic_name in no:
        assert _matched(index, topic_name) == set(), topic_name


@pytest.mark.parametrize(
    ("topic_filter", "topic_name"),
    [
        ("é", "e\u0301"),  # precomposed and decomposed: no normalisation [MQTT-4.7.3-4]
        ("e\u0301/+", "é/x"),
        ("\u2126", "\u03a9"),  # OHM SIGN and GREEK CAPITAL LETTER OMEGA
        ("A/#", "a/b"),  # no case folding
        ("\ufb01", "fi"),  # the ligature
        ("a /b", "a/b"),
    ],
)
def test_strings_are_compared_exactly(topic_filter: str, topic_name: str) -> None:
    assert _matched(_index(topic_filter), topic_name) == set()
    same = topic_filter.replace("+", "x").replace("#", "x")
    assert _matched(_index(topic_filter), same) == {topic_filter}


# --- against the oracle ------------------------------------------------------------------


@given(
    st.lists(subscribed_filters(), max_size=12, unique=True),
    st.lists(topic_names, max_size=12),
)
def test_the_index_matches_what_the_oracle_matches(filters: list[str], names: list[str]) -> None:
    index = _index(*filters)
    plain = {f: split_shared(f)[1] for f in filters}
    for topic_name in names + names:  # twice: the second answer comes from the cache
        assert _matched(index, topic_name) == {f for f in filters if matches(plain[f], topic_name)}


@given(st.lists(topic_names, max_size=12, unique=True), st.lists(topic_filters(), max_size=12))
def test_the_retained_index_matches_what_the_oracle_matches(
    names: list[str], filters: list[str]
) -> None:
    retained = RetainedTopics[int]()
    for number, topic_name in enumerate(names):
        retained.set(topic_name, number)
    for topic_filter in filters:
        found = retained.match(topic_filter)
        assert len(found) == len({name for name, _ in found})
        assert dict(found) == {
            name: number for number, name in enumerate(names) if matches(topic_filter, name)
        }


def test_deep_names_and_filters_need_no_recursion() -> None:
    """32,767 levels fit in 65,535 bytes: the walks keep their own stacks."""
    deep_name = "/".join(["a"] * 32_000)
    deep_filter = "/".join(["+"] * 32_000)
    index = _index(deep_filter, deep_filter[:-1] + "#", "#")
    assert _matched(index, deep_name) == {deep_filter, deep_filter[:-1] + "#", "#"}
    retained = RetainedTopics[int]()
    retained.set(deep_name, 1)
    assert retained.match(deep_filter) == [(deep_name, 1)]
    assert retained.match("#") == [(deep_name, 1)]
    assert retained.node_count() == 32_001 and index.node_count() == 32_001
    assert retained.discard(deep_name) == 1 and retained.node_count() == 1
    index.remove_client("c")
    assert index.node_count() == 1


# --- any strings -------------------------------------------------------------------------

any_text = st.text(st.characters(blacklist_categories=[]), max_size=12)


@given(
    st.lists(st.tuples(any_text, any_text, st.sampled_from(list(Edition))), max_size=6),
    st.lists(any_text, max_size=6),
)
def test_any_strings_raise_invalid_topic_and_nothing_else(
    subscriptions: list[tuple[str, str, Edition]], names: list[str]
) -> None:
    index = SubscriptionIndex[None](cache_size=2)
    retained = RetainedTopics[None]()
    for client_id, topic_filter, edition in subscriptions:
        calls: list[Callable[[], object]] = [
            partial(index.subscribe, client_id, topic_filter, None, edition=edition),
            partial(index.match, topic_filter, edition),
            partial(retained.set, topic_filter, None, edition),
            partial(retained.match, topic_filter, edition),
        ]
        for call in calls:
            try:
                call()
            except InvalidTopic as error:
                assert error.rule and error.message
        index.unsubscribe(client_id, topic_filter)
        retained.discard(topic_filter)
        assert retained.get(topic_filter) is None
    for topic_name in names:
        with suppress(InvalidTopic):
            index.match(topic_name)
        index.remove_client(topic_name)


# --- the rest of the API -----------------------------------------------------------------


def test_subscribing_again_replaces_and_unsubscribing_compares_exactly() -> None:
    index = SubscriptionIndex[str]()
    assert index.subscribe("c", "a/+", "qos1") is None
    old = index.subscribe("c", "a/+", "qos2")  # [MQTT-3.8.4-3]
    assert old is not None and old.options == "qos1"
    assert [s.options for s in index.match("a/b")] == ["qos2"]
    assert len(index) == 1
    assert index.unsubscribe("c", "a/b") is None  # wildcards taken literally [MQTT-3.10.4-1]
    assert index.unsubscribe("d", "a/+") is None
    removed = index.unsubscribe("c", "a/+")
    assert removed is not None and removed.options == "qos2"
    assert len(index) == 0 and not index.match("a/b") and index.node_count() == 1


def test_matches_are_grouped_per_client_and_per_shared_subscription() -> None:
    index = SubscriptionIndex[int]()
    index.subscribe("c1", "a/+", 1)
    index.subscribe("c1", "a/#", 2)
    index.subscribe("c2", "a/b", 3)
    index.subscribe("c2", "$share/g/a/+", 4)
    index.subscribe("c3", "$share/g/a/+", 5)
    index.subscribe("c3", "$share/h/a/+", 6)
    found = index.match("a/b")
    assert len(found) == 6
    assert {k: sorted(s.options for s in v) for k, v in found.per_client.items()} == {
        "c1": [1, 2],
        "c2": [3],
    }
    assert {k: sorted(s.options for s in v) for k, v in found.shared.items()} == {
        ("g", "a/+"): [4, 5],
        ("h", "a/+"): [6],
    }
    assert [s.topic_filter for s in index.subscriptions_of("c3")] == [
        "$share/g/a/+",
        "$share/h/a/+",
    ]
    assert index.get("c2", "$share/g/a/+") is not None and index.get("c2", "a/+") is None
    assert sorted(s.options for s in index.remove_client("c1")) == [1, 2]
    assert sorted(s.options for s in index.match("a/b")) == [3, 4, 5, 6]
    assert sorted(s.options for s in index) == [3, 4, 5, 6]


def test_the_same_string_under_another_edition_moves_the_subscription() -> None:
    index = SubscriptionIndex[int]()
    index.subscribe("c", "$share/g/a", 1, edition=V311)  # a plain filter in 3.1.1
    assert _matched(index, "$share/g/a") == {"$share/g/a"} and not index.match("a")
    index.subscribe("c", "$share/g/a", 2, edition=V50)  # a Shared Subscription in 5.0
    assert not index.match("$share/g/a") and [s.options for s in index.match("a")] == [2]
    assert len(index) == 1 and index.node_count() == 2


def test_the_match_cache_stops_storing_where_names_do_not_repeat() -> None:
    cache_policy_holds(SubscriptionIndex, BYPASS)


def test_the_retained_index_stores_replaces_and_discards() -> None:
    retained = RetainedTopics[str]()
    retained.set("a/b", "1")
    retained.set("a/b", "2")
    retained.set("a", "3")
    assert len(retained) == 2 and "a/b" in retained and "a/c" not in retained
    assert retained.get("a/b") == "2" and retained.get("a/") is None
    assert sorted(retained.match("a/#")) == [("a", "3"), ("a/b", "2")]
    assert sorted(retained) == ["a", "a/b"]
    assert retained.discard("a/c") is None
    assert retained.discard("a/b") == "2" and retained.discard("a/b") is None
    assert retained.node_count() == 2
    assert retained.discard("a") == "3"
    assert len(retained) == 0 and retained.node_count() == 1


def test_every_rule_the_topic_checks_cite_is_in_the_registry() -> None:
    """The indexes name a fault by the registry's id for it, as the codec and the
    distribution core do (reference.topic_citations): never an id of their own."""
    for name, ids in RULE_IDS.items():
        for edition, rule_id in ids.items():
            # in 3.1 a rule the 3.1 text does not state is cited by its 3.1.1 id
            cited = edition if rule_id.startswith("PP31-") or edition is not V31 else V311
            found = RULES.by_id(rule_id, cited)
            assert cite(found, edition) == rule_id, (name, edition)
    assert RULE_IDS["nul"][V311] == cite(W.TOPIC_NUL, V311)
