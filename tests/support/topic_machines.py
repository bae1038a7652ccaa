"""The subscription index and the retained-topic index under random sequences of changes.

Two ``RuleBasedStateMachine`` in the DatabaseComparison pattern. Each keeps the plain
truth beside the index (a dict of subscriptions matched one by one with the oracle, a
dict of stored topic names) and compares them after every step: the answers for a set of
probe topic names (so that the match cache, filled by earlier steps, must have been
dropped where a change touched it), the count, and the trie's size (no node left empty,
none missing). The machines are built for an index class (:func:`index_machine`), so that
the mutants of ``test_reference_topics_mutants.py`` run in the same machines, and
``test_reference_topics_stateful.py`` runs them on the reference indexes.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from pubproof.model.editions import Edition
from pubproof.reference.errors import InvalidTopic
from pubproof.reference.retained_topics import RetainedTopics
from pubproof.reference.subscriptions import SubscriptionIndex
from pubproof.reference.topics import split_shared
from support.topic_oracle import matches, subscribed_filters, topic_filters, topic_names

CLIENTS = st.sampled_from(["c1", "c2", "c3", "é"])
EDITIONS = st.sampled_from([Edition.V311, Edition.V50])
#: names the filters of the strategies hit often
PROBES = ["a", "a/b", "a/", "/", "b/a/b", "$SYS/a", "$", "é/e\u0301", "a//b", "A", "a/$", "$/$SYS"]
#: filters asked of the retained-topic index after every step
PROBE_FILTERS = ["#", "+", "+/#", "a/#", "+/+", "$SYS/#", "/#", "a/+", "$/+"]


def _trie_size(filters: list[str]) -> int:
    """The nodes of a trie holding ``filters`` (plain): the root and one per distinct
    prefix of levels, a final '#' not counted (it is kept on its parent)."""
    prefixes: set[tuple[str, ...]] = {()}
    for topic_filter in filters:
        levels = topic_filter.split("/")
        if levels[-1] == "#":
            levels.pop()
        prefixes.update(tuple(levels[:i]) for i in range(1, len(levels) + 1))
    return len(prefixes)


def index_machine(index_class: type[Any], cache_size: int) -> type[RuleBasedStateMachine]:
    """A machine comparing ``index_class`` (a :class:`SubscriptionIndex`) with a list."""

    class IndexAgrees(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.index: SubscriptionIndex[int] = index_class(cache_size=cache_size)
            #: (client identifier, filter as sent) -> (options, filter matched, ShareName)
            self.truth: dict[tuple[str, str], tuple[int, str, str | None]] = {}
            self.counter = 0

        def _expected(self, topic_name: str) -> set[tuple[str, str, int]]:
            return {
                (client, sent, options)
                for (client, sent), (options, plain, _) in self.truth.items()
                if matches(plain, topic_name)
            }

        def _found(self, topic_name: str) -> set[tuple[str, str, int]]:
            return {(s.client_id, s.topic_filter, s.options) for s in self.index.match(topic_name)}

        @rule(client=CLIENTS, topic_filter=subscribed_filters(), edition=EDITIONS)
        def subscribe(self, client: str, topic_filter: str, edition: Edition) -> None:
            self.counter += 1
            share_name, plain = split_shared(topic_filter, edition)
            old = self.index.subscribe(client, topic_filter, self.counter, edition=edition)
            before = self.truth.get((client, topic_filter))
            assert (None if old is None else old.options) == (before and before[0])
            self.truth[(client, topic_filter)] = (self.counter, plain, share_name)

        @precondition(lambda self: self.truth)
        @rule(data=st.data(), edition=EDITIONS)
        def subscribe_again(self, data: st.DataObject, edition: Edition) -> None:
            """The same filter again, perhaps under the other edition [MQTT-3.8.4-3]."""
            client, sent = data.draw(st.sampled_from(sorted(self.truth)))
            try:
                share_name, plain = split_shared(sent, edition)
            except InvalidTopic:  # "$share//a": plain in 3.1.1, refused in 5.0
                try:
                    self.index.subscribe(client, sent, -1, edition=edition)
                except InvalidTopic:
                    return
                raise AssertionError(f"{sent!r} was accepted in {edition.value}") from None
            self.counter += 1
            old = self.index.subscribe(client, sent, self.counter, edition=edition)
            assert old is not None and old.options == self.truth[(client, sent)][0]
            self.truth[(client, sent)] = (self.counter, plain, share_name)

        @rule(client=CLIENTS, topic_filter=st.text(st.sampled_from("a/+#\x00"), max_size=5))
        def subscribe_anything(self, client: str, topic_filter: str) -> None:
            """Invalid filters are refused and change nothing; valid ones are added."""
            try:
                share_name, plain = split_shared(topic_filter)
            except InvalidTopic:
                try:
                    self.index.subscribe(client, topic_filter, -1)
                except InvalidTopic:
                    return
                raise AssertionError(f"{topic_filter!r} was accepted") from None
            self.counter += 1
            self.index.subscribe(client, topic_filter, self.counter)
            self.truth[(client, topic_filter)] = (self.counter, plain, share_name)

        @precondition(lambda self: self.truth)
        @rule(data=st.data())
        def unsubscribe(self, data: st.DataObject) -> None:
            client, sent = data.draw(st.sampled_from(sorted(self.truth)))
            removed = self.index.unsubscribe(client, sent)
            assert removed is not None and removed.options == self.truth.pop((client, sent))[0]

        @rule(client=CLIENTS, topic_filter=subscribed_filters())
        def unsubscribe_what_may_not_exist(self, client: str, topic_filter: str) -> None:
            removed = self.index.unsubscribe(client, topic_filter)
            known = self.truth.pop((client, topic_filter), None)
            assert (None if removed is None else removed.options) == (known and known[0])

        @rule(client=CLIENTS)
        def remove_client(self, client: str) -> None:
            removed = {s.topic_filter for s in self.index.remove_client(client)}
            assert removed == {sent for c, sent in self.truth if c == client}
            self.truth = {k: v for k, v in self.truth.items() if k[0] != client}

        @rule(topic_name=topic_names)
        def match(self, topic_name: str) -> None:
            assert self._found(topic_name) == self._expected(topic_name)

        @invariant()
        def agrees(self) -> None:
            for topic_name in PROBES:
                assert self._found(topic_name) == self._expected(topic_name), topic_name
            assert len(self.index) == len(self.truth)
            plain = [v[1] for v in self.truth.values()]
            assert self.index.node_count() == _trie_size(plain)
            found = self.index.match("a/b")
            shared = {k: {s.options for s in v} for k, v in found.shared.items()}
            per_client = {k: {s.options for s in v} for k, v in found.per_client.items()}
            want_shared: dict[tuple[str, str], set[int]] = {}
            want_client: dict[str, set[int]] = {}
            for (client, _), (options, filter_, share) in self.truth.items():
                if matches(filter_, "a/b"):
                    if share is None:
                        want_client.setdefault(client, set()).add(options)
                    else:
                        want_shared.setdefault((share, filter_), set()).add(options)
            assert (shared, per_client) == (want_shared, want_client)

    return IndexAgrees


def retained_machine(retained_class: type[Any]) -> type[RuleBasedStateMachine]:
    """A machine comparing ``retained_class`` (a :class:`RetainedTopics`) with a dict."""

    class RetainedAgrees(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.retained: RetainedTopics[int] = retained_class()
            self.truth: dict[str, int] = {}
            self.counter = 0

        @rule(topic_name=topic_names)
        def store(self, topic_name: str) -> None:
            self.counter += 1
            self.retained.set(topic_name, self.counter)
            self.truth[topic_name] = self.counter

        @precondition(lambda self: self.truth)
        @rule(data=st.data())
        def discard(self, data: st.DataObject) -> None:
            topic_name = data.draw(st.sampled_from(sorted(self.truth)))
            assert self.retained.discard(topic_name) == self.truth.pop(topic_name)

        @rule(topic_name=topic_names)
        def discard_what_may_not_exist(self, topic_name: str) -> None:
            assert self.retained.discard(topic_name) == self.truth.pop(topic_name, None)

        @rule(topic_filter=topic_filters())
        def match(self, topic_filter: str) -> None:
            found = self.retained.match(topic_filter)
            assert len(found) == len(dict(found))
            assert dict(found) == {t: v for t, v in self.truth.items() if matches(topic_filter, t)}

        @invariant()
        def agrees(self) -> None:
            assert len(self.retained) == len(self.truth)
            assert sorted(self.retained) == sorted(self.truth)
            assert self.retained.node_count() == _trie_size(list(self.truth))
            for topic_name in PROBES:
                assert self.retained.get(topic_name) == self.truth.get(topic_name)
            for topic_filter in PROBE_FILTERS:
                want = {t: v for t, v in self.truth.items() if matches(topic_filter, t)}
                assert dict(self.retained.match(topic_filter)) == want, topic_filter

    return RetainedAgrees
