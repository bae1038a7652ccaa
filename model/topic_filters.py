"""Topic names and topic filters (MQTT 3.1.1 and 5.0 section 4.7, 3.1 Appendix A): which
filters are valid, and which topic names a filter matches.

Rules / theory of operation
---------------------------
A topic name and a topic filter are split into *levels* at every ``/`` (U+002F); adjacent
separators make a zero-length level, and a leading or trailing ``/`` makes an empty first or
last level (4.7.1.1, 4.7.3). A filter level is one of:

- ``#`` (the multi-level wildcard): alone or after a ``/``, and the last character of the
  filter [MQTT-4.7.1-2] (5.0: 4.7.1-1); it matches its parent level and every level below:
  ``sport/#`` matches ``sport``, ``sport/`` and ``sport/a/b``;
- ``+`` (the single-level wildcard): it occupies a whole level [MQTT-4.7.1-3] (5.0:
  4.7.1-2) and matches exactly one level, empty ones included: ``sport/+`` matches
  ``sport/`` but not ``sport`` or ``sport/a/b``;
- anything else: it matches the level of the topic name that is the same string, code point
  for code point, with no normalisation of any kind [MQTT-4.7.3-4].

A filter whose first character is a wildcard never matches a topic name whose first
character is ``$`` [MQTT-4.7.2-1] (3.1: reading ``dollar-topics``). Every filter is also a
string: UTF-8 without surrogates [MQTT-3.8.3-1], at least one character [MQTT-4.7.3-1], no
U+0000 [MQTT-4.7.3-2], at most 65,535 bytes encoded [MQTT-4.7.3-3] (3.1: the readings
``topic-rules`` and ``topic-length`` of the wire format decide the last three, as they do
for topic names). In MQTT 5.0 a filter that starts with ``$share/`` is a Shared
Subscription filter, ``$share/{ShareName}/{filter}``: a ShareName of one character or more
[MQTT-4.8.2-1] without ``/``, ``+`` or ``#``, then ``/`` and a topic filter
[MQTT-4.8.2-2]; only ``{filter}`` takes part in matching. Before 5.0 such a string is an
ordinary filter.

:func:`filter_problem` reports the first rule a filter breaks, reading it left to right,
with the rule, its id in the edition, and the offset of the offending character both in
code points (``offset``) and in the bytes of its UTF-8 encoding (``byte_offset``), as the
codec's errors give byte offsets. :func:`matches` is the plain matching function the fast
index of the reference is compared with; it is total on valid filters and refuses a filter
with a misplaced wildcard (a ``TopicFilterError``, never another exception).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pubproof.model import wire_rules as W
from pubproof.model.distribution_readings import DISTRIBUTION_READINGS
from pubproof.model.distribution_rules import FILTER_UTF8, MULTI_LEVEL, SINGLE_LEVEL, cite
from pubproof.model.distribution_rules50 import FILTER_NOT_EMPTY, SHARED_FILTER, SHARED_SHARE_NAME
from pubproof.model.editions import READINGS, Edition
from pubproof.model.rules import Rule

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50

SEPARATOR, MULTI, SINGLE = "/", "#", "+"
WILDCARDS = frozenset(MULTI + SINGLE)
SHARE_PREFIX = "$share/"
#: "they MUST NOT encode to more than 65535 bytes" [MQTT-4.7.3-3]
MAX_BYTES = 65_535
#: MQTT 3.1 section 2.2: "Topic name has an upper length limit of 32,767 characters."
MAX_CHARS_31 = 32_767


@dataclass(frozen=True, slots=True, kw_only=True)
class FilterProblem:
    """The first rule a topic filter (or topic name) breaks, and where."""

    rule: Rule
    rule_id: str  # the rule's id in the edition judged
    offset: int  # of the offending character, in code points from the start
    byte_offset: int  # the same position in the UTF-8 encoding
    message: str


class TopicFilterError(ValueError):
    """A topic filter (or topic name) that breaks a rule; ``problem`` says which and where."""

    def __init__(self, problem: FilterProblem) -> None:
        super().__init__(f"{problem.message} [{problem.rule_id}] at offset {problem.offset}")
        self.problem = problem


@dataclass(frozen=True, slots=True, kw_only=True)
class SharedFilter:
    """A 5.0 Shared Subscription filter ``$share/{ShareName}/{filter}``, taken apart."""

    share_name: str
    topic_filter: str  # the {filter} part: what is matched against topic names


def reading(readings: Mapping[str, str] | None, edition: Edition, name: str) -> str | None:
    """The value of the wire or distribution reading ``name`` in ``readings``, else its
    default in ``edition`` (None when it does not apply there)."""
    if readings is not None and name in readings:
        return readings[name]
    found = READINGS.get(name) or DISTRIBUTION_READINGS.get(name)
    if found is None:
        raise KeyError(f"no reading {name!r}")
    return found.defaults.get(edition)


def levels(topic: str) -> list[str]:
    """The levels of a topic name or filter: split at every '/' (4.7.1.1: "Adjacent Topic
    level separators indicate a zero length topic level")."""
    return topic.split(SEPARATOR)


def _byte_offset(text: str, offset: int) -> int:
    return len(text[:offset].encode("utf-8", "surrogatepass"))


def _problem(rule: Rule, edition: Edition, text: str, offset: int, message: str) -> FilterProblem:
    return FilterProblem(
        rule=rule,
        rule_id=cite(rule, edition),
        offset=offset,
        byte_offset=_byte_offset(text, offset),
        message=message,
    )


def _string_rules_apply(edition: Edition, readings: Mapping[str, str] | None) -> bool:
    """3.1.1 and 5.0 forbid empty strings and U+0000; 3.1 only by reading topic-rules."""
    return edition is not V31 or reading(readings, edition, "topic-rules") == "as-3.1.1"


def _string_problem(
    text: str, edition: Edition, readings: Mapping[str, str] | None, what: str, utf8: Rule
) -> FilterProblem | None:
    """The rules every topic name and topic filter obeys as a string (1.5.3, 4.7.3)."""
    for offset, char in enumerate(text):
        if "\ud800" <= char <= "\udfff":
            # [MQTT-1.5.3-1] "The character data in a UTF-8 encoded string MUST be well-formed
            # UTF-8 ... In particular this data MUST NOT include encodings of code points
            # between U+D800 and U+DFFF."
            return _problem(utf8, edition, text, offset, f"the {what} has a surrogate code point")
    encoded = len(text.encode("utf-8", "surrogatepass"))
    if encoded > MAX_BYTES:
        # [MQTT-4.7.3-3] "they MUST NOT encode to more than 65535 bytes"
        offset = next(i for i in range(len(text)) if _byte_offset(text, i + 1) > MAX_BYTES)
        return _problem(
            W.TOPIC_MAX_BYTES,
            edition,
            text,
            offset,
            f"the {what} encodes to {encoded} bytes; at most {MAX_BYTES}",
        )
    long_31 = edition is V31 and reading(readings, edition, "topic-length") == "32767-chars"
    if long_31 and len(text) > MAX_CHARS_31:
        return _problem(
            W.TOPIC_MAX_31,
            edition,
            text,
            MAX_CHARS_31,
            f"the {what} has {len(text)} characters; MQTT 3.1 allows 32,767",
        )
    if not _string_rules_apply(edition, readings):
        return None
    if not text:
        # [MQTT-4.7.3-1] "All Topic Names and Topic Filters MUST be at least one character long"
        empty = FILTER_NOT_EMPTY if edition is V50 else W.TOPIC_NOT_EMPTY
        return _problem(empty, edition, text, 0, f"the {what} is empty")
    nul = text.find("\x00")
    if nul >= 0:
        # [MQTT-4.7.3-2] "Topic Names and Topic Filters MUST NOT include the null character"
        return _problem(W.TOPIC_NUL, edition, text, nul, f"the {what} contains U+0000")
    return None


def _wildcard_problem(text: str, start: int, edition: Edition, whole: str) -> FilterProblem | None:
    """The first misplaced wildcard of the filter ``text`` (which sits at ``start`` in
    ``whole``, the string reported on)."""
    for offset, char in enumerate(text):
        before = text[offset - 1] if offset else SEPARATOR
        if char == MULTI:
            # [MQTT-4.7.1-2] "The multi-level wildcard character MUST be specified either on
            # its own or following a topic level separator. In either case it MUST be the last
            # character specified in the Topic Filter"
            if before != SEPARATOR:
                return _problem(
                    MULTI_LEVEL, edition, whole, start + offset, "'#' does not follow a '/'"
                )
            if offset != len(text) - 1:
                return _problem(
                    MULTI_LEVEL,
                    edition,
                    whole,
                    start + offset,
                    "'#' is not the last character of the topic filter",
                )
        elif char == SINGLE:
            # [MQTT-4.7.1-3] "Where it is used it MUST occupy an entire level of the filter"
            after = text[offset + 1] if offset + 1 < len(text) else SEPARATOR
            if before != SEPARATOR or after != SEPARATOR:
                return _problem(
                    SINGLE_LEVEL,
                    edition,
                    whole,
                    start + offset,
                    "'+' does not occupy a whole level",
                )
    return None


def parse_shared(topic_filter: str, edition: Edition = V50) -> SharedFilter | None:
    """The parts of a 5.0 Shared Subscription filter, or None for any other filter (in 3.1
    and 3.1.1 every filter is an ordinary one). The parts are not validated here."""
    if edition is not V50 or not topic_filter.startswith(SHARE_PREFIX):
        return None
    name, _, rest = topic_filter[len(SHARE_PREFIX) :].partition(SEPARATOR)
    return SharedFilter(share_name=name, topic_filter=rest)


def _shared_problem(topic_filter: str, edition: Edition) -> FilterProblem | None:
    rest = topic_filter[len(SHARE_PREFIX) :]
    name, separator, inner = rest.partition(SEPARATOR)
    start = len(SHARE_PREFIX)
    if not name:
        # [MQTT-4.8.2-1] "MUST contain a ShareName that is at least one character long"
        return _problem(SHARED_SHARE_NAME, edition, topic_filter, start, "the ShareName is empty")
    wildcard = next((i for i, c in enumerate(name) if c in WILDCARDS), None)
    if wildcard is not None:
        # [MQTT-4.8.2-2] "The ShareName MUST NOT contain the characters "/", "+" or "#""
        return _problem(
            SHARED_FILTER,
            edition,
            topic_filter,
            start + wildcard,
            f"the ShareName contains {name[wildcard]!r}",
        )
    if not separator or not inner:
        # [MQTT-4.8.2-2] "but MUST be followed by a "/" character. This "/" character MUST
        # be followed by a Topic Filter"
        return _problem(
            SHARED_FILTER,
            edition,
            topic_filter,
            len(topic_filter),
            "the ShareName is not followed by '/' and a topic filter",
        )
    return _wildcard_problem(inner, start + len(name) + 1, edition, topic_filter)


def filter_problem(
    topic_filter: str, edition: Edition = V311, readings: Mapping[str, str] | None = None
) -> FilterProblem | None:
    """The first rule ``topic_filter`` breaks in ``edition`` (under ``readings``, wire or
    distribution, defaults otherwise), or None when it is a valid topic filter."""
    if not isinstance(topic_filter, str):
        raise TypeError(f"a topic filter is a str, not {type(topic_filter).__name__}")
    problem = _string_problem(topic_filter, edition, readings, "topic filter", FILTER_UTF8)
    if problem is not None:
        return problem
    if parse_shared(topic_filter, edition) is not None:
        return _shared_problem(topic_filter, edition)
    return _wildcard_problem(topic_filter, 0, edition, topic_filter)


def is_valid_filter(
    topic_filter: str, edition: Edition = V311, readings: Mapping[str, str] | None = None
) -> bool:
    """Whether ``topic_filter`` is a valid topic filter in ``edition``."""
    return filter_problem(topic_filter, edition, readings) is None


def check_filter(
    topic_filter: str, edition: Edition = V311, readings: Mapping[str, str] | None = None
) -> str:
    """``topic_filter`` itself when valid; otherwise a ``TopicFilterError``."""
    problem = filter_problem(topic_filter, edition, readings)
    if problem is not None:
        raise TopicFilterError(problem)
    return topic_filter


def name_problem(
    topic_name: str, edition: Edition = V311, readings: Mapping[str, str] | None = None
) -> FilterProblem | None:
    """The first rule ``topic_name`` (the topic of a message the server distributes, any
    Topic Alias resolved) breaks, or None: the string rules and no wildcard [MQTT-4.7.1-1]
    (3.1: under reading ``topic-rules``, as the codec judges a PUBLISH)."""
    problem = _string_problem(topic_name, edition, readings, "topic name", W.TOPIC_UTF8)
    if problem is not None or not _string_rules_apply(edition, readings):
        return problem
    wildcard = next((i for i, c in enumerate(topic_name) if c in WILDCARDS), None)
    if wildcard is not None:
        # [MQTT-4.7.1-1] "The wildcard characters can be used in Topic Filters, but MUST NOT
        # be used within a Topic Name"
        return _problem(
            W.TOPIC_NO_WILDCARDS,
            edition,
            topic_name,
            wildcard,
            f"the topic name contains the wildcard {topic_name[wildcard]!r}",
        )
    return None


def matches(topic_filter: str, topic_name: str, *, dollar_rule: bool = True) -> bool:
    """Whether ``topic_filter`` matches ``topic_name`` (MQTT 3.1.1 and 5.0 section 4.7).

    The filter is taken as written (a 5.0 ``$share/`` filter is matched by its {filter}
    part: :func:`subscription_matches`); a misplaced wildcard raises ``TopicFilterError``.
    The topic name is any string: a wildcard character in it is an ordinary character.
    ``dollar_rule=False`` drops [MQTT-4.7.2-1], for MQTT 3.1 under reading
    ``dollar-topics=plain``.
    """
    problem = _wildcard_problem(topic_filter, 0, V311, topic_filter)
    if problem is not None:
        raise TopicFilterError(problem)
    if dollar_rule and topic_name.startswith("$") and topic_filter[:1] in WILDCARDS:
        # [MQTT-4.7.2-1] "The Server MUST NOT match Topic Filters starting with a wildcard
        # character (# or +) with Topic Names beginning with a $ character"
        return False
    name = levels(topic_name)
    for depth, level in enumerate(levels(topic_filter)):
        if level == MULTI:
            # 4.7.1.2: "The multi-level wildcard represents the parent and any number of
            # child levels": ``sport/#`` matches ``sport`` too
            return True
        if depth >= len(name):
            return False  # the topic name ran out of levels first
        if level == SINGLE:
            continue  # 4.7.1.3: "matches only one topic level", an empty one included
        if level != name[depth]:
            # [MQTT-4.7.3-4] no normalisation: "Each non-wildcarded level in the Topic Filter
            # has to match the corresponding level in the Topic Name character for character"
            return False
    return len(name) == len(levels(topic_filter))


def subscription_matches(
    topic_filter: str,
    topic_name: str,
    edition: Edition = V311,
    readings: Mapping[str, str] | None = None,
) -> bool:
    """Whether a subscription with ``topic_filter`` matches ``topic_name`` in ``edition``:
    :func:`matches`, on the {filter} part of a 5.0 Shared Subscription ("The $share and
    {ShareName} portions of the Topic Filter are not taken into account when matching
    against publications", 4.8.2), with the '$' rule as the edition and reading say."""
    shared = parse_shared(topic_filter, edition)
    plain = shared.topic_filter if shared is not None else topic_filter
    dollar = edition is not V31 or reading(readings, edition, "dollar-topics") == "as-3.1.1"
    return matches(plain, topic_name, dollar_rule=dollar)
