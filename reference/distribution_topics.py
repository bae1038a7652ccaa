"""Topic names and topic filters as the distribution core judges them, and the plain
matcher for the few strings the indexes do not hold.

Rules / theory of operation
---------------------------
The distribution core (:mod:`pubproof.reference.distribution`) judges every topic filter of
a SUBSCRIBE and every topic name it distributes here, under the edition and its readings,
before the subscription index and the retained-topic index see it. A string that breaks
a rule gives the first of these that applies, with the rule's id from the registry
(a wire rule for what topic names and filters share, as the codec cites them; a
distribution rule for what only filters obey; in MQTT 3.1 a rule the 3.1 text does not
state is cited by its 3.1.1 id) and the byte offset of the offending character in the
string's UTF-8 encoding:

1. a surrogate code point: not UTF-8 (a topic name [MQTT-1.5.3-1], a topic filter
   [MQTT-3.8.3-1]);
2. more than 65,535 bytes encoded [MQTT-4.7.3-3]: at the first character past them;
3. MQTT 3.1 under reading ``topic-length=32767-chars``: more than 32,767 characters;
4. where the string rules apply (3.1.1 and 5.0; 3.1 only under reading
   ``topic-rules=as-3.1.1``): empty [MQTT-4.7.3-1], then U+0000 [MQTT-4.7.3-2];
5. a topic name: a wildcard character [MQTT-3.3.2-2] (where the string rules apply); a
   topic filter: in 5.0 a ``$share/`` filter's form ([MQTT-4.8.2-1], [MQTT-4.8.2-2]), then
   the first misplaced wildcard from the left ([MQTT-4.7.1-2] '#', [MQTT-4.7.1-3] '+').

MQTT 3.1 under the default ``topic-rules=utf8-only`` allows an empty topic name or filter,
U+0000, and wildcard characters in a topic name (there they are ordinary characters). The
indexes apply 3.1.1's rules to 3.1 and refuse those strings, so the core keeps them apart
and matches them with :func:`plain_match`, as it does a ``$`` topic name against a filter
starting with a wildcard under 3.1's reading ``dollar-topics=plain`` (the indexes always
apply [MQTT-4.7.2-1]). Those are rare strings; the common ones take the indexes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from pubproof.model.editions import Edition
from pubproof.model.rules import MALFORMED_PACKET, Rule
from pubproof.reference.errors import InvalidTopic
from pubproof.reference.topic_citations import cite, topic_rules

V31: Final = Edition.V31
V311: Final = Edition.V311
V50: Final = Edition.V50
SEPARATOR: Final = "/"
MULTI: Final = "#"
SINGLE: Final = "+"
SHARE_PREFIX: Final = "$share/"
#: [MQTT-4.7.3-3] "they MUST NOT encode to more than 65535 bytes"
MAX_BYTES: Final = 65_535
#: MQTT 3.1 section 2.2: "Topic name has an upper length limit of 32,767 characters."
MAX_CHARS_31: Final = 32_767


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicRules:
    """The topic rules of one edition under its readings (build with :meth:`of`)."""

    edition: Edition
    #: empty strings and U+0000 are refused, wildcards in topic names too (3.1: a reading)
    string_rules: bool
    #: MQTT 3.1 under ``topic-length=32767-chars``: at most this many characters
    max_chars: int | None
    #: [MQTT-4.7.2-1] applies (3.1: reading ``dollar-topics``)
    dollar_rule: bool
    #: 5.0: ``$share/`` starts a Shared Subscription's filter
    shared: bool
    #: rule name -> (its id, the rule)
    cited: Mapping[str, tuple[str, Rule]]

    @classmethod
    def of(cls, edition: Edition, readings: Mapping[str, str]) -> TopicRules:
        """The rules of ``edition`` under ``readings`` (resolved: every reading present)."""
        v31 = edition is V31
        long_31 = v31 and readings.get("topic-length") == "32767-chars"
        cited = {}
        for name, found in topic_rules(edition).items():
            if edition in found.ids or V311 in found.ids:
                cited[name] = (cite(found, edition), found)
        return cls(
            edition=edition,
            string_rules=not v31 or readings.get("topic-rules") == "as-3.1.1",
            max_chars=MAX_CHARS_31 if long_31 else None,
            dollar_rule=not v31 or readings.get("dollar-topics") == "as-3.1.1",
            shared=edition is V50,
            cited=MappingProxyType(cited),
        )

    # -- the errors ------------------------------------------------------------------------

    def _error(self, name: str, text: str, at: int, message: str, *, filter_: bool) -> InvalidTopic:
        rule_id, found = self.cited[name]
        # a filter the server closes the connection on: 5.0 "a Malformed Packet" (reading
        # invalid-filter); a topic name: the DISCONNECT Reason Code its rule names
        code = (
            (MALFORMED_PACKET if filter_ else found.reason_code_in(self.edition))
            if (self.edition is V50)
            else None
        )
        return InvalidTopic(
            rule_id,
            message,
            offset=_byte_offset(text, at),
            edition=self.edition.value,
            reason_code=code,
        )

    def _string_error(self, text: str, *, filter_: bool) -> InvalidTopic | None:
        """Steps 1 to 4 of the module's list, which topic names and filters share."""
        what = "topic filter" if filter_ else "topic name"
        if text.isascii():
            size = len(text)
        else:
            try:
                size = len(text.encode("utf-8"))
            except UnicodeEncodeError as exc:
                # [MQTT-1.5.3-1] "MUST NOT include encodings of code points between U+D800
                # and U+DFFF"; a filter: [MQTT-3.8.3-1] "MUST be UTF-8 encoded strings"
                utf8 = "filter-utf8" if filter_ else "name-utf8"
                return self._error(
                    utf8, text, exc.start, f"the {what} has a surrogate code point", filter_=filter_
                )
        if size > MAX_BYTES:
            # [MQTT-4.7.3-3] "they MUST NOT encode to more than 65535 bytes"
            return self._error(
                "max-bytes",
                text,
                _past_max_bytes(text),
                f"the {what} encodes to {size} bytes; at most {MAX_BYTES}",
                filter_=filter_,
            )
        if self.max_chars is not None and len(text) > self.max_chars:
            # MQTT 3.1 section 2.2 "an upper length limit of 32,767 characters"
            return self._error(
                "max-chars",
                text,
                self.max_chars,
                f"the {what} has {len(text)} characters; MQTT 3.1 allows {self.max_chars:,}",
                filter_=filter_,
            )
        if not self.string_rules:
            return None
        if not text:
            # [MQTT-4.7.3-1] "All Topic Names and Topic Filters MUST be at least one
            # character long"
            return self._error("empty", text, 0, f"the {what} is empty", filter_=filter_)
        nul = text.find("\x00")
        if nul >= 0:
            # [MQTT-4.7.3-2] "Topic Names and Topic Filters MUST NOT include the null character"
            return self._error("nul", text, nul, f"the {what} contains U+0000", filter_=filter_)
        return None

    def name_error(self, topic_name: str) -> InvalidTopic | None:
        """What the topic name of a message breaks, or None when it may be distributed."""
        if type(topic_name) is not str:
            rule_id, _ = self.cited["name-utf8"]
            return InvalidTopic(
                rule_id,
                f"a topic name is a string, not {type(topic_name).__name__}",
                edition=self.edition.value,
            )
        problem = self._string_error(topic_name, filter_=False)
        if problem is not None or not self.string_rules:
            return problem
        for at, char in enumerate(topic_name):
            if char in "+#":
                # [MQTT-3.3.2-2] "The Topic Name in the PUBLISH Packet MUST NOT contain
                # wildcard characters"
                return self._error(
                    "name-wildcard",
                    topic_name,
                    at,
                    f"the topic name contains the wildcard {char!r}",
                    filter_=False,
                )
        return None

    def filter_error(self, topic_filter: str) -> InvalidTopic | None:
        """What a topic filter of a SUBSCRIBE breaks, or None when it is valid."""
        if type(topic_filter) is not str:
            rule_id, _ = self.cited["filter-utf8"]
            return InvalidTopic(
                rule_id,
                f"a topic filter is a string, not {type(topic_filter).__name__}",
                edition=self.edition.value,
            )
        problem = self._string_error(topic_filter, filter_=True)
        if problem is not None:
            return problem
        if self.shared and topic_filter.startswith(SHARE_PREFIX):
            return self._shared_error(topic_filter)
        return self._wildcard_error(topic_filter, topic_filter, 0)

    def _shared_error(self, whole: str) -> InvalidTopic | None:
        start = len(SHARE_PREFIX)
        share_name, separator, inner = whole[start:].partition(SEPARATOR)
        if not share_name:
            # [MQTT-4.8.2-1] "MUST contain a ShareName that is at least one character long"
            return self._error("share-name", whole, start, "the ShareName is empty", filter_=True)
        for at, char in enumerate(share_name):
            if char in "+#":
                # [MQTT-4.8.2-2] "The ShareName MUST NOT contain the characters "/", "+" or "#""
                return self._error(
                    "share-form",
                    whole,
                    start + at,
                    f"the ShareName contains {char!r}",
                    filter_=True,
                )
        if not separator or not inner:
            # [MQTT-4.8.2-2] "but MUST be followed by a "/" character. This "/" character
            # MUST be followed by a Topic Filter"
            return self._error(
                "share-form",
                whole,
                len(whole),
                "the ShareName is not followed by '/' and a topic filter",
                filter_=True,
            )
        return self._wildcard_error(inner, whole, start + len(share_name) + 1)

    def _wildcard_error(self, text: str, whole: str, base: int) -> InvalidTopic | None:
        """The first misplaced wildcard of the filter ``text``, which stands at ``base`` in
        ``whole``. A level holding a wildcard must be exactly "+", or exactly "#" and the
        last level; in any other level every wildcard is misplaced, so the first of them
        is the offender."""
        if "+" not in text and "#" not in text:
            return None
        start = 0
        parts = text.split(SEPARATOR)
        last = len(parts) - 1
        for index, level in enumerate(parts):
            if level == SINGLE or (level == MULTI and index == last):
                start += 2
                continue
            if level == MULTI:
                # [MQTT-4.7.1-2] "In either case it MUST be the last character specified in
                # the Topic Filter"
                return self._error(
                    "multi-level",
                    whole,
                    base + start,
                    "'#' is not the last character of the topic filter",
                    filter_=True,
                )
            for at, char in enumerate(level):
                if char == MULTI:
                    # [MQTT-4.7.1-2] "MUST be specified either on its own or following a
                    # topic level separator"
                    return self._error(
                        "multi-level",
                        whole,
                        base + start + at,
                        "'#' does not follow a '/'",
                        filter_=True,
                    )
                if char == SINGLE:
                    # [MQTT-4.7.1-3] "Where it is used it MUST occupy an entire level of
                    # the filter"
                    return self._error(
                        "single-level",
                        whole,
                        base + start + at,
                        "'+' does not occupy a whole level",
                        filter_=True,
                    )
            start += len(level) + 1
        return None


def _byte_offset(text: str, at: int) -> int:
    """The offset in ``text``'s UTF-8 encoding of its character ``at`` (the characters
    before it carry no surrogate, or this is the surrogate's own error)."""
    return at if text.isascii() else len(text[:at].encode("utf-8", "surrogatepass"))


def _past_max_bytes(text: str) -> int:
    """The index of the first character whose encoding ends past ``MAX_BYTES``."""
    total = 0
    for index, char in enumerate(text):
        point = ord(char)
        total += 1 if point < 0x80 else 2 if point < 0x800 else 3 if point < 0x10000 else 4
        if total > MAX_BYTES:
            return index
    raise AssertionError("the text is within the limit")  # pragma: no cover


def plain_match(topic_filter: str, topic_name: str, *, dollar_rule: bool) -> bool:
    """Whether the valid (non-shared) ``topic_filter`` matches ``topic_name``, level by
    level (4.7): for the strings the indexes do not hold. A wildcard character in a topic
    name (MQTT 3.1 ``topic-rules=utf8-only``) is an ordinary character there."""
    if dollar_rule and topic_name[:1] == "$" and topic_filter[:1] in ("#", "+"):
        # [MQTT-4.7.2-1] "MUST NOT match Topic Filters starting with a wildcard character
        # (# or +) with Topic Names beginning with a $ character"
        return False
    name = topic_name.split(SEPARATOR)
    levels = topic_filter.split(SEPARATOR)
    for depth, level in enumerate(levels):
        if level == MULTI:
            return True  # 4.7.1.2: the parent level and every level below
        if depth == len(name):
            return False
        if level != SINGLE and level != name[depth]:
            return False  # [MQTT-4.7.3-4] character for character, no normalisation
    return len(name) == len(levels)


def starts_with_wildcard(topic_filter: str) -> bool:
    """Whether a valid topic filter's first level is a wildcard (the filters that
    [MQTT-4.7.2-1] keeps from ``$`` topic names)."""
    return topic_filter[:1] in ("#", "+")
