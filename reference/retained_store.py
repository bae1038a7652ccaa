"""The retained store of the distribution core: at most one retained message per topic
name, found by topic filter through the retained-topic index, expired by the clock.

Rules / theory of operation
---------------------------
A message the server takes ownership of changes its topic's retained message by its
RETAIN flag and payload:

- RETAIN 1 with a payload: it becomes the topic's retained message [MQTT-3.3.1-5] (a QoS 0
  one too [MQTT-3.3.1-7]; 3.1 "should hold on to it");
- RETAIN 1 with a zero-byte payload: the topic's retained message is removed
  [MQTT-3.3.1-10] and this one is not stored [MQTT-3.3.1-11] (3.1: "may delete"; the
  store deletes, under either value of reading ``retained-empty-31``);
- RETAIN 0: nothing changes [MQTT-3.3.1-12];
- a session that ends changes nothing [MQTT-3.1.2-7];
- 5.0: "If the current retained message for a Topic expires, it is discarded" (3.3.1.3):
  at the clock's move past its Message Expiry Interval (reading ``expiry-boundary``).

The messages are kept by topic name in a dict (the whole store, in the order stored) and
in :class:`pubproof.reference.retained_topics.RetainedTopics`, which answers a new
subscription's question (which retained messages does its filter match, [MQTT-3.3.1-6])
without a scan. The strings that index refuses (MQTT 3.1 ``topic-rules=utf8-only``: an
empty topic name or filter, U+0000, wildcard characters in a name) and, under 3.1's
``dollar-topics=plain``, a filter starting with a wildcard (which there matches ``$``
names) are answered by a scan with :func:`.distribution_topics.plain_match`. The messages
that may expire wait in a heap by expiry time, so that a move of the clock past none of
them costs one comparison.
"""

from __future__ import annotations

import contextlib
import heapq

from pubproof.model.editions import Edition
from pubproof.reference.distribution_citations import RetainedCitations
from pubproof.reference.distribution_state import Message, RetainedChange, RetainedInput
from pubproof.reference.distribution_topics import (
    TopicRules,
    plain_match,
    starts_with_wildcard,
)
from pubproof.reference.errors import InvalidTopic
from pubproof.reference.retained_topics import RetainedTopics


class RetainedStore:
    """The retained messages of one server, by topic name."""

    __slots__ = ("_cited", "_expiring", "_held", "_index", "_rules", "_scan_all", "edition")

    def __init__(self, rules: TopicRules, cited: RetainedCitations) -> None:
        self.edition = rules.edition
        self._rules = rules
        self._cited = cited
        self._held: dict[str, Message] = {}
        self._index: RetainedTopics[Message] = RetainedTopics()
        #: (expires_at, seq, topic) of the messages held with a Message Expiry Interval
        self._expiring: list[tuple[int, int, str]] = []
        #: 3.1 dollar-topics=plain: a filter starting with a wildcard matches '$' names
        self._scan_all = not rules.dollar_rule

    def get(self, topic: str) -> Message | None:
        """The topic's retained message, if it has one."""
        return self._held.get(topic)

    def snapshot(self) -> dict[str, Message]:
        """The retained message of each topic that has one."""
        return dict(self._held)

    def __len__(self) -> int:
        return len(self._held)

    def may_discard(self, topic: str) -> bool:
        """Whether the text lets the server drop the topic's retained message: a QoS 0 one
        ([MQTT-3.3.1-7]; 5.0 likewise, unlabelled), under 3.1 any ("should hold on")."""
        held = self._held.get(topic)
        return held is not None and (self.edition is Edition.V31 or held.qos == 0)

    def apply(self, message: Message) -> RetainedChange | None:
        """The store after the server takes ownership of ``message`` (a valid topic name);
        None for RETAIN 0, which changes nothing [MQTT-3.3.1-12]."""
        publication = message.publication
        if not publication.retain:
            return None
        topic = publication.topic
        before = self._held.get(topic)
        if publication.payload:
            # [MQTT-3.3.1-5] "the Server MUST store the Application Message and its QoS, so
            # that it can be delivered to future subscribers"
            self._held[topic] = message
            self._index_set(topic, message)
            if message.expires_at is not None and self.edition is Edition.V50:
                heapq.heappush(self._expiring, (message.expires_at, message.seq, topic))
            cited = self._cited.store_qos0 if publication.qos == 0 else self._cited.store
            return RetainedChange(
                topic=topic,
                input=RetainedInput.RETAIN,
                before=before,
                after=message,
                rule_ids=cited,
            )
        # [MQTT-3.3.1-10] "any existing retained message with the same topic name MUST be
        # removed"; [MQTT-3.3.1-11] "A zero byte retained message MUST NOT be stored"
        self._drop(topic)
        return RetainedChange(
            topic=topic,
            input=RetainedInput.RETAIN_EMPTY,
            before=before,
            after=None,
            rule_ids=self._cited.empty,
        )

    def _index_set(self, topic: str, message: Message) -> None:
        # a 3.1 name the index refuses is found by the scan of ``_held``
        with contextlib.suppress(InvalidTopic):
            self._index.set(topic, message, self.edition)

    def _drop(self, topic: str) -> None:
        if self._held.pop(topic, None) is not None:
            self._index.discard(topic)  # (it does not judge names)

    def matching(self, topic_filter: str) -> list[Message]:
        """The retained messages a subscription with the (non-shared, valid)
        ``topic_filter`` matches, by topic name."""
        if not (self._scan_all and starts_with_wildcard(topic_filter)):
            try:
                found = self._index.match(topic_filter, self.edition)
            except InvalidTopic:
                pass  # a 3.1 filter the index refuses: scanned below
            else:
                found += self._aside_matching(topic_filter)
                found.sort(key=_by_topic)
                return [message for _, message in found]
        dollar = self._rules.dollar_rule
        return [
            self._held[topic]
            for topic in sorted(self._held)
            if plain_match(topic_filter, topic, dollar_rule=dollar)
        ]

    def _aside_matching(self, topic_filter: str) -> list[tuple[str, Message]]:
        """The names held outside the index (3.1) that ``topic_filter`` matches."""
        if len(self._index) == len(self._held):
            return []
        dollar = self._rules.dollar_rule
        return [
            (topic, message)
            for topic, message in self._held.items()
            if topic not in self._index and plain_match(topic_filter, topic, dollar_rule=dollar)
        ]

    def expire(self, now: int, boundary: str = "at") -> list[RetainedChange]:
        """5.0: drop the retained messages whose Message Expiry Interval has passed at
        ``now`` (reading ``expiry-boundary``), in the order they expired."""
        heap = self._expiring
        gone: list[RetainedChange] = []
        while heap and (heap[0][0] <= now if boundary == "at" else heap[0][0] < now):
            _, seq, topic = heapq.heappop(heap)
            held = self._held.get(topic)
            if held is None or held.seq != seq:
                continue  # replaced or deleted since
            self._drop(topic)
            gone.append(
                RetainedChange(
                    topic=topic,
                    input=RetainedInput.EXPIRE,
                    before=held,
                    after=None,
                    rule_ids=self._cited.expires,
                )
            )
        return gone


def _by_topic(entry: tuple[str, Message]) -> str:
    return entry[0]
