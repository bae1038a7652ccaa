"""Topic filters and matching (pubproof.model.topic_filters): the standards' examples, the
rule and offset of each invalid filter per edition, and the laws of matching as
properties (a filter without wildcards matches itself alone; '#' matches its parent and
every level below; '+' exactly one level; no '$' topic for a leading wildcard)."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from support.distribution_checks import (
    check_filter_examples,
    check_matching_examples,
    regex_matches,
)

from pubproof.model.editions import Edition
from pubproof.model.topic_filters import (
    TopicFilterError,
    check_filter,
    filter_problem,
    is_valid_filter,
    levels,
    matches,
    name_problem,
    parse_shared,
    subscription_matches,
)

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50

# topic levels without wildcards or '/': letters, '$', a space, a non-ASCII letter
PLAIN = st.text(alphabet="ab$ é", max_size=4)
TOPIC = st.lists(PLAIN, min_size=1, max_size=4).map("/".join)
LEVEL = st.one_of(PLAIN, st.just("+"))
FILTER = st.builds(
    lambda body, tail: "/".join(body + (["#"] if tail else [])),
    st.lists(LEVEL, min_size=0, max_size=4),
    st.booleans(),
).filter(bool)


def test_the_examples_of_4_7_match_as_the_standards_say() -> None:
    # [MQTT-4.7.2-1] "#" and "+/monitor/Clients" do not match "$SYS/...";
    # [MQTT-4.7.3-4] no normalisation: "café" precomposed is not "café" decomposed
    check_matching_examples()


@pytest.mark.parametrize("edition", list(Edition), ids=lambda e: e.value)
def test_the_examples_of_4_7_1_are_valid_or_not(edition: Edition) -> None:
    check_filter_examples(edition)


@pytest.mark.parametrize(
    ("edition", "multi", "single"),
    [
        (V31, "PP31-A-multi-level-wildcard", "PP31-A-single-level-wildcard"),
        (V311, "MQTT-4.7.1-2", "MQTT-4.7.1-3"),
        (V50, "MQTT-4.7.1-1", "MQTT-4.7.1-2"),
    ],
    ids=["3.1", "3.1.1", "5.0"],
)
def test_a_misplaced_wildcard_names_the_rule_of_its_edition(
    edition: Edition, multi: str, single: str
) -> None:
    # [MQTT-4.7.1-2] "The multi-level wildcard character MUST be specified either on its own
    # or following a topic level separator. In either case it MUST be the last character"
    assert filter_problem("a#", edition).rule_id == multi  # type: ignore[union-attr]
    assert filter_problem("a/#/b", edition).rule_id == multi  # type: ignore[union-attr]
    # [MQTT-4.7.1-3] "Where it is used it MUST occupy an entire level of the filter"
    assert filter_problem("a+", edition).rule_id == single  # type: ignore[union-attr]
    assert filter_problem("+a", edition).rule_id == single  # type: ignore[union-attr]


def test_the_offset_is_given_in_code_points_and_in_bytes() -> None:
    problem = filter_problem("é/ü#", V311)
    assert problem is not None and problem.rule.key == "dist.filter.multi-level"
    assert (problem.offset, problem.byte_offset) == (3, 5)
    # [MQTT-4.7.3-3] "they MUST NOT encode to more than 65535 bytes": the first character
    # past the limit
    long = "é" * 32_768  # 65,536 bytes
    problem = filter_problem(long, V311)
    assert problem is not None and problem.rule_id == "MQTT-4.7.3-3"
    assert (problem.offset, problem.byte_offset) == (32_767, 65_534)
    assert is_valid_filter("é" * 32_767 + "a", V311)  # 65,535 bytes


def test_the_string_rules_of_topic_filters_per_edition() -> None:
    # [MQTT-4.7.3-1] "All Topic Names and Topic Filters MUST be at least one character long"
    assert filter_problem("", V311).rule.key == "topic.not-empty"  # type: ignore[union-attr]
    assert filter_problem("", V50).rule_id == "MQTT-4.7.3-1"  # type: ignore[union-attr]
    assert filter_problem("", V50).rule.key == "dist50.filter.not-empty"  # type: ignore[union-attr]
    # [MQTT-4.7.3-2] "MUST NOT include the null character": 3.1.1 cites 1.5.3-2 as the codec
    assert filter_problem("a\x00", V311).rule_id == "MQTT-1.5.3-2"  # type: ignore[union-attr]
    assert filter_problem("a\x00", V50).rule_id == "MQTT-4.7.3-2"  # type: ignore[union-attr]
    # [MQTT-3.8.3-1] "The Topic Filters in a SUBSCRIBE packet payload MUST be UTF-8 encoded
    # strings": no surrogate code point
    problem = filter_problem("a/\ud800", V311)
    assert problem is not None and (problem.rule_id, problem.offset) == ("MQTT-3.8.3-1", 2)
    # MQTT 3.1 is silent on empty filters and U+0000 (reading topic-rules, as for names)
    assert filter_problem("", V31) is None and filter_problem("\x00", V31) is None
    strict = {"topic-rules": "as-3.1.1"}
    assert filter_problem("", V31, strict).rule_id == "PP31-3.3-topic-empty"  # type: ignore[union-attr]
    # 3.1 "Topic name has an upper length limit of 32,767 characters" (reading topic-length)
    assert filter_problem("a" * 32_768, V31).rule.key == "topic.max-32767-chars"  # type: ignore[union-attr]


def test_shared_subscription_filters_are_checked_in_5_0_only() -> None:
    # [MQTT-4.8.2-1] "MUST start with $share/ and MUST contain a ShareName that is at least
    # one character long"
    assert filter_problem("$share//a", V50).rule_id == "MQTT-4.8.2-1"  # type: ignore[union-attr]
    # [MQTT-4.8.2-2] "The ShareName MUST NOT contain the characters "/", "+" or "#", but MUST
    # be followed by a "/" character. This "/" character MUST be followed by a Topic Filter"
    for bad, offset in (("$share/g", 8), ("$share/g/", 9), ("$share/g+/a", 8), ("$share/#/a", 7)):
        problem = filter_problem(bad, V50)
        assert problem is not None and (problem.rule_id, problem.offset) == ("MQTT-4.8.2-2", offset)
    inner = filter_problem("$share/g/a/#/b", V50)
    assert inner is not None and (inner.rule_id, inner.offset) == ("MQTT-4.7.1-1", 11)
    assert is_valid_filter("$share/g/sport/tennis/+", V50)
    assert parse_shared("$share/g//finance", V50).topic_filter == "/finance"  # type: ignore[union-attr]
    # before 5.0 it is an ordinary filter
    assert is_valid_filter("$share//a", V311) and parse_shared("$share/g/a", V311) is None
    # "The $share and {ShareName} portions of the Topic Filter are not taken into account"
    assert subscription_matches("$share/g/sport/+", "sport/x", V50)
    assert not subscription_matches("$share/g/sport/+", "sport/x", V311)


def test_mqtt_3_1_matches_dollar_topics_unless_read_as_3_1_1() -> None:
    # 3.1 Appendix A has no '$' exception (reading dollar-topics); 3.1.1 [MQTT-4.7.2-1] has
    assert subscription_matches("#", "$SYS/x", V31)
    assert not subscription_matches("#", "$SYS/x", V31, {"dollar-topics": "as-3.1.1"})
    assert not subscription_matches("#", "$SYS/x", V311)


def test_matching_refuses_an_invalid_filter_with_its_rule() -> None:
    with pytest.raises(TopicFilterError) as raised:
        matches("a/#/b", "a/x/b")
    assert raised.value.problem.rule.key == "dist.filter.multi-level"
    assert raised.value.problem.offset == 2
    with pytest.raises(TopicFilterError):
        check_filter("a+", V50)
    assert check_filter("a/+", V50) == "a/+"


def test_a_topic_name_to_distribute_is_checked_like_the_codec_checks_it() -> None:
    # [MQTT-3.3.2-2] / [MQTT-4.7.1-1] "MUST NOT be used within a Topic Name"
    problem = name_problem("a/+", V311)
    assert problem is not None and (problem.rule_id, problem.offset) == ("MQTT-3.3.2-2", 2)
    assert name_problem("a/+", V31) is None  # reading topic-rules=utf8-only
    assert name_problem("", V50).rule_id == "MQTT-4.7.3-1"  # type: ignore[union-attr]
    assert name_problem("a/b", V50) is None


@given(PLAIN, TOPIC)
def test_a_filter_without_wildcards_matches_exactly_itself(topic_filter: str, topic: str) -> None:
    assert matches(topic_filter, topic) is (topic_filter == topic)
    assert matches(topic, topic)


@given(TOPIC, TOPIC)
def test_multi_level_matches_its_parent_and_every_level_below(prefix: str, topic: str) -> None:
    expected = topic == prefix or topic.startswith(prefix + "/")
    assert matches(prefix + "/#", topic) is expected
    assert matches(prefix + "/#", prefix)  # "sport/# also matches the singular sport"
    # "#" alone: every topic but those starting with '$' [MQTT-4.7.2-1]
    assert matches("#", topic) is (not topic.startswith("$"))


@given(TOPIC, TOPIC)
def test_single_level_matches_exactly_one_level(prefix: str, topic: str) -> None:
    rest = topic[len(prefix) + 1 :]
    expected = topic.startswith(prefix + "/") and "/" not in rest
    assert matches(prefix + "/+", topic) is expected
    assert matches("+", topic) is ("/" not in topic and not topic.startswith("$"))
    assert not matches(prefix + "/+", prefix)  # "sport/+ does not match sport"
    assert not matches(prefix + "/+", prefix + "/a/b")
    assert matches(prefix + "/+", prefix + "/")  # an empty level is a level


@given(FILTER, TOPIC)
def test_matching_agrees_with_a_regular_expression_for_every_valid_filter(
    topic_filter: str, topic: str
) -> None:
    assert is_valid_filter(topic_filter, V311), topic_filter
    assert matches(topic_filter, topic) is regex_matches(topic_filter, topic)
    assert matches(topic_filter, topic, dollar_rule=False) is regex_matches(
        topic_filter, topic, dollar_rule=False
    )
    # the levels are what matching walks: as many as separators plus one
    assert len(levels(topic)) == topic.count("/") + 1


@given(FILTER, st.integers(min_value=0, max_value=40), st.sampled_from("#+"))
def test_a_wildcard_put_inside_a_level_is_reported_no_later_than_where_it_is(
    topic_filter: str, at: int, wildcard: str
) -> None:
    at = min(at, len(topic_filter))
    broken = topic_filter[:at] + wildcard + topic_filter[at:]
    whole_level = (at == 0 or broken[at - 1] == "/") and (
        at + 1 == len(broken) or broken[at + 1] == "/"
    )
    last = at + 1 == len(broken)
    assume(not (wildcard == "+" and whole_level) and not (wildcard == "#" and whole_level and last))
    problem = filter_problem(broken, V50)
    assert problem is not None
    assert problem.rule.key in {"dist.filter.multi-level", "dist.filter.single-level"}
    assert problem.offset <= at
