"""Topic names and topic filters: what makes them valid, and how a filter's levels match.

Rules (MQTT 3.1.1 and 5.0 section 4.7, the same text in both; 5.0 section 4.8.2):

* A topic name or topic filter is at least one character long [MQTT-4.7.3-1], has no
  U+0000 [MQTT-4.7.3-2], is well-formed UTF-8 (no surrogate code point) and encodes to at
  most 65,535 bytes [MQTT-4.7.3-3].
* A topic name has no wildcard character, ``+`` or ``#`` (3.1.1 [MQTT-4.7.1-1], 5.0
  [MQTT-4.7.0-1]).
* A topic filter's levels are the strings between ``/`` separators (an empty level counts).
  ``#`` is a whole level and the last one (3.1.1 [MQTT-4.7.1-2], 5.0 [MQTT-4.7.1-1]); ``+``
  is a whole level (3.1.1 [MQTT-4.7.1-3], 5.0 [MQTT-4.7.1-2]).
* In 5.0, a topic filter that starts with ``$share/`` is a Shared Subscription
  ``$share/{ShareName}/{filter}``: a ShareName of at least one character [MQTT-4.8.2-1]
  without ``/``, ``+`` or ``#``, then ``/`` and a topic filter [MQTT-4.8.2-2]. In 3.1 and
  3.1.1 such a filter is an ordinary one (it matches the topic names it spells).

Matching (applied by :mod:`pubproof.reference.subscriptions` and
:mod:`pubproof.reference.retained_topics`, level by level, strings compared exactly
[MQTT-4.7.3-4]): a plain level matches the identical level, ``+`` any one level (an empty
one too), ``#`` the level it stands at and every level below, and also none: ``a/#``
matches ``a``. A filter whose first character is ``#`` or ``+`` matches no topic name whose
first character is ``$`` [MQTT-4.7.2-1].

The errors are :class:`pubproof.reference.errors.InvalidTopic`, naming the rule's id in
the edition in use and the byte offset in the string's UTF-8 encoding. MQTT 3.1 has no
statement ids: its rules get the project's ``PP31-`` ids (3.1 has no ``$`` rule; the index
applies 3.1.1's, as brokers serving 3.1 clients do).
"""

from __future__ import annotations

from typing import Final

from pubproof.model.editions import Edition
from pubproof.reference.errors import InvalidTopic
from pubproof.reference.topic_citations import topic_rule_ids

V31: Final = Edition.V31
V311: Final = Edition.V311
V50: Final = Edition.V50

#: the separator of levels [4.7.1.1] "The forward slash ('/' U+002F) is used to separate
#: each level within a topic tree"
SEPARATOR: Final = "/"
#: [4.7.1.2] the multi-level wildcard; [4.7.1.3] the single-level wildcard
MULTI_LEVEL: Final = "#"
SINGLE_LEVEL: Final = "+"
#: 5.0 [4.8.2] "$share/{ShareName}/{filter}"
SHARE_PREFIX: Final = "$share/"
MAX_BYTES: Final = 65535
#: 5.0 Reason Codes: 0x8F Topic Filter invalid (SUBACK, DISCONNECT), 0x90 Topic Name invalid
TOPIC_FILTER_INVALID: Final = 0x8F
TOPIC_NAME_INVALID: Final = 0x90

#: the rules this module enforces: name -> its id in each edition, from the registry
#: (:mod:`.topic_citations`, the table the distribution core's topic rules cite too). The
#: numbering moved between 3.1.1 and 5.0 (distribution-index note (b) 15).
RULE_IDS: Final[dict[str, dict[Edition, str]]] = topic_rule_ids()


def _error(
    key: str, edition: Edition, text: str, at: int, message: str, *, name: bool
) -> InvalidTopic:
    """The error of rule ``key`` at character ``at`` of ``text`` (reported as a UTF-8 byte
    offset: the characters before it are well-formed, or this is the surrogate rule)."""
    offset = len(text[:at].encode("utf-8", "surrogatepass"))
    code = (TOPIC_NAME_INVALID if name else TOPIC_FILTER_INVALID) if edition is V50 else None
    return InvalidTopic(
        RULE_IDS[key][edition], message, offset=offset, edition=edition.value, reason_code=code
    )


def _check_string(text: object, edition: Edition, what: str, *, name: bool) -> str:
    """The rules of 4.7.3 that topic names and topic filters share."""
    if type(text) is not str:
        raise InvalidTopic(
            RULE_IDS["name-utf8" if name else "filter-utf8"][edition],
            f"a {what} is a string, not {type(text).__name__}",
            edition=edition.value,
        )
    if not text:
        # [MQTT-4.7.3-1] "All Topic Names and Topic Filters MUST be at least one character long"
        raise _error("empty", edition, text, 0, f"the {what} is empty", name=name)
    nul = text.find("\x00")
    if nul >= 0:
        # [MQTT-4.7.3-2] "Topic Names and Topic Filters MUST NOT include the null character"
        raise _error("nul", edition, text, nul, f"the {what} contains U+0000", name=name)
    if text.isascii():
        size = len(text)
    else:
        try:
            size = len(text.encode("utf-8"))
        except UnicodeEncodeError as exc:
            # [MQTT-1.5.3-1] "MUST NOT include encodings of code points between U+D800 and U+DFFF"
            raise _error(
                "name-utf8" if name else "filter-utf8",
                edition,
                text,
                exc.start,
                f"the {what} has a surrogate code point",
                name=name,
            ) from None
    if size > MAX_BYTES:
        # [MQTT-4.7.3-3] "they MUST NOT encode to more than 65535 bytes"
        raise InvalidTopic(
            RULE_IDS["max-bytes"][edition],
            f"the {what} encodes to {size} bytes, more than {MAX_BYTES}",
            offset=MAX_BYTES,
            edition=edition.value,
            reason_code=(TOPIC_NAME_INVALID if name else TOPIC_FILTER_INVALID)
            if edition is V50
            else None,
        )
    return text


def check_topic_name(topic_name: object, edition: Edition = V50) -> str:
    """``topic_name`` if it is a valid topic name in ``edition``; else raises
    :class:`InvalidTopic`."""
    if (
        type(topic_name) is str
        and topic_name.isascii()
        and 0 < len(topic_name) <= MAX_BYTES
        and SINGLE_LEVEL not in topic_name
        and MULTI_LEVEL not in topic_name
        and "\x00" not in topic_name
    ):
        return topic_name  # the common case, valid, in a few scans of C; else the rules below
    text = _check_string(topic_name, edition, "topic name", name=True)
    for wildcard in (SINGLE_LEVEL, MULTI_LEVEL):
        at = text.find(wildcard)
        if at >= 0:
            # 5.0 [MQTT-4.7.0-1] "The wildcard characters can be used in Topic Filters, but
            # MUST NOT be used within a Topic Name"
            raise _error(
                "name-wildcard",
                edition,
                text,
                at,
                f"the topic name contains the wildcard {wildcard!r}",
                name=True,
            )
    return text


def check_topic_filter(topic_filter: object, edition: Edition = V50, *, base: str = "") -> str:
    """``topic_filter`` if it is a valid (non-shared) topic filter in ``edition``; else
    raises :class:`InvalidTopic`. ``base`` is what stood before it in the string the client
    sent (a 5.0 ``$share/{ShareName}/``): offsets count from its start."""
    text = _check_string(topic_filter, edition, "topic filter", name=False)
    start = 0
    last = len(text)
    while start <= last:
        end = text.find(SEPARATOR, start)
        if end < 0:
            end = last
        problem: tuple[str, int, str] | None = None
        if end - start != 1 or text[start] not in (MULTI_LEVEL, SINGLE_LEVEL):
            hash_at = text.find(MULTI_LEVEL, start, end)
            plus_at = text.find(SINGLE_LEVEL, start, end)
            if hash_at >= 0:
                # 5.0 [MQTT-4.7.1-1] "The multi-level wildcard character MUST be specified
                # either on its own or following a topic level separator"
                problem = ("multi-level", hash_at, "'#' is not a whole level of the topic filter")
            elif plus_at >= 0:
                # 5.0 [MQTT-4.7.1-2] "Where it is used, the single-level wildcard MUST
                # occupy an entire level of the filter"
                problem = ("single-level", plus_at, "'+' is not a whole level of the topic filter")
        elif text[start] == MULTI_LEVEL and end != last:
            # 5.0 [MQTT-4.7.1-1] "In either case it MUST be the last character specified in
            # the Topic Filter"
            problem = ("multi-level", start, "'#' is not the last level of the topic filter")
        if problem is not None:
            key, at, message = problem
            raise _error(key, edition, base + text, len(base) + at, message, name=False)
        start = end + 1
    return text


def split_shared(topic_filter: object, edition: Edition = V50) -> tuple[str | None, str]:
    """``(share_name, filter)`` of a valid topic filter as a client sends it in SUBSCRIBE:
    in 5.0 a ``$share/{ShareName}/{filter}`` gives its ShareName and filter, any other
    filter (and every filter in 3.1 and 3.1.1) ``(None, topic_filter)``. Raises
    :class:`InvalidTopic` when the filter or the Shared Subscription's form is invalid."""
    if (
        edition is not V50
        or type(topic_filter) is not str
        or not topic_filter.startswith(SHARE_PREFIX)
    ):
        return None, check_topic_filter(topic_filter, edition)
    raw = _check_string(topic_filter, edition, "topic filter", name=False)
    slash = raw.find(SEPARATOR, len(SHARE_PREFIX))
    share_name = raw[len(SHARE_PREFIX) : slash if slash >= 0 else len(raw)]
    if not share_name:
        # [MQTT-4.8.2-1] "A Shared Subscription's Topic Filter MUST start with "$share/" and
        # MUST contain a ShareName that is at least one character long"
        raise _error(
            "share-name", edition, raw, len(SHARE_PREFIX), "the ShareName is empty", name=False
        )
    for wildcard in (SINGLE_LEVEL, MULTI_LEVEL):
        at = share_name.find(wildcard)
        if at >= 0:
            # [MQTT-4.8.2-2] "The ShareName MUST NOT contain the characters "/", "+" or "#",
            # but MUST be followed by a "/" character and a Topic Filter"
            raise _error(
                "share-form",
                edition,
                raw,
                len(SHARE_PREFIX) + at,
                f"the ShareName contains {wildcard!r}",
                name=False,
            )
    if slash < 0:
        # [MQTT-4.8.2-2] "but MUST be followed by a "/" character and a Topic Filter"
        raise _error(
            "share-form",
            edition,
            raw,
            len(raw),
            "the ShareName is not followed by '/' and a topic filter",
            name=False,
        )
    if slash + 1 == len(raw):
        # [MQTT-4.7.3-1] (and [MQTT-4.8.2-2] "followed by ... a Topic Filter")
        raise _error(
            "empty",
            edition,
            raw,
            len(raw),
            "the Shared Subscription's filter is empty",
            name=False,
        )
    return share_name, check_topic_filter(raw[slash + 1 :], edition, base=raw[: slash + 1])


def has_wildcard(topic_filter: str) -> bool:
    """Whether a valid topic filter has a wildcard level (else it matches exactly the
    topic name it spells, [MQTT-4.7.3-4])."""
    return SINGLE_LEVEL in topic_filter or MULTI_LEVEL in topic_filter
