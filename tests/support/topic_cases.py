"""The topic rules' case tables (each filter's error with its rule and offset per edition,
the Shared Subscription splits), the plain reading of a valid filter, and the match cache's
policy as a check: what the reference topic tests and their mutants share."""

from __future__ import annotations

from pubproof.model.editions import Edition
from pubproof.reference.subscriptions import SubscriptionIndex

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50


FILTER_ERRORS = [
    # (filter, edition, rule, offset)
    ("a/#/b", V50, "MQTT-4.7.1-1", 2),
    ("a/#/b", V311, "MQTT-4.7.1-2", 2),
    ("a/#/b", V31, "PP31-A-multi-level-wildcard", 2),
    ("a#", V50, "MQTT-4.7.1-1", 1),
    ("#a", V50, "MQTT-4.7.1-1", 0),
    ("é/b#", V50, "MQTT-4.7.1-1", 4),
    ("a+/b", V50, "MQTT-4.7.1-2", 1),
    ("a+/b", V311, "MQTT-4.7.1-3", 1),
    ("a/++", V50, "MQTT-4.7.1-2", 2),
    ("+#", V50, "MQTT-4.7.1-1", 1),
    ("", V50, "MQTT-4.7.3-1", 0),
    ("", V31, "PP31-3.3-topic-empty", 0),
    ("a\x00", V50, "MQTT-4.7.3-2", 1),
    ("é\x00", V311, "MQTT-1.5.3-2", 2),
    ("a/\ud800", V50, "MQTT-3.8.3-1", 2),
    ("a/\ud800", V311, "MQTT-3.8.3-1", 2),
    ("x" * 65536, V50, "MQTT-4.7.3-3", 65535),
    ("é" * 32768, V311, "MQTT-4.7.3-3", 65535),
]


SHARED = [
    # (filter, edition, (share name, filter) or (rule, offset))
    ("$share/g/a/+", V50, ("g", "a/+")),
    ("$share/é/#", V50, ("é", "#")),
    ("$share/g//", V50, ("g", "/")),
    ("$share/g/a", V311, (None, "$share/g/a")),
    ("$share//a", V311, (None, "$share//a")),
    ("$sharex/a", V50, (None, "$sharex/a")),
    ("$share", V50, (None, "$share")),
    ("$share//a", V50, ("MQTT-4.8.2-1", 7)),
    ("$share/", V50, ("MQTT-4.8.2-1", 7)),
    ("$share/g+/a", V50, ("MQTT-4.8.2-2", 8)),
    ("$share/#", V50, ("MQTT-4.8.2-2", 7)),
    ("$share/g", V50, ("MQTT-4.8.2-2", 8)),
    ("$share/g/", V50, ("MQTT-4.7.3-1", 9)),
    ("$share/g/a#", V50, ("MQTT-4.7.1-1", 10)),
    ("$share/é/+a", V50, ("MQTT-4.7.1-2", 10)),
    ("$share/g/+a", V311, ("MQTT-4.7.1-3", 9)),
]


def spec_valid_filter(text: str) -> bool:
    """Validity of a topic filter read off 4.7 (no length or UTF-8 question arises for the
    short, surrogate-free strings this is given)."""
    if not text or "\x00" in text:
        return False
    levels = text.split("/")
    for i, level in enumerate(levels):
        if "#" in level and (level != "#" or i != len(levels) - 1):
            return False
        if "+" in level and level != "+":
            return False
    return True


def cache_policy_holds(index_class: type[SubscriptionIndex[int]], bypass: int) -> None:
    """A generation of the cache whose answers were not asked for again stops the storing
    for ``bypass`` generations' worth of answers; one that paid keeps it."""
    index = index_class(cache_size=4)
    index.subscribe("c", "#", 1)
    for name in "abcd":
        index.match(name)
    assert index.cached() == 4
    index.match("e")  # full: the generation ends, no hit in it: nothing stored for a while
    assert index.cached() == 0
    for number in range(bypass * 4):
        assert [s.options for s in index.match(f"x{number}")] == [1]
        assert index.cached() == 0
    index.match("f")  # stored again
    assert index.cached() == 1
    for name in "ghi":
        index.match(name)
    for _ in range(2):
        index.match("f")  # two hits of four: enough
    index.match("j")
    assert index.cached() == 1
    index.clear_cache()
    assert index.cached() == 0
