"""The subscription index and the retained-topic index under random sequences of changes:
the machines of ``support/topic_machines.py`` run on the reference indexes (the
subscription index with a large cache, a cache of two entries and none)."""

from __future__ import annotations

from hypothesis import settings
from support.topic_machines import index_machine, retained_machine

from pubproof.reference.retained_topics import RetainedTopics
from pubproof.reference.subscriptions import SubscriptionIndex

STEPS = settings(max_examples=300, stateful_step_count=40, deadline=None)

IndexAgrees = index_machine(SubscriptionIndex, cache_size=65536)
IndexAgrees.TestCase.settings = STEPS
TestIndexAgrees = IndexAgrees.TestCase

#: a cache of two entries: emptied when full, again and again
SmallCacheAgrees = index_machine(SubscriptionIndex, cache_size=2)
SmallCacheAgrees.TestCase.settings = STEPS
TestSmallCacheAgrees = SmallCacheAgrees.TestCase

NoCacheAgrees = index_machine(SubscriptionIndex, cache_size=0)
NoCacheAgrees.TestCase.settings = settings(max_examples=100, stateful_step_count=40, deadline=None)
TestNoCacheAgrees = NoCacheAgrees.TestCase

RetainedAgrees = retained_machine(RetainedTopics)
RetainedAgrees.TestCase.settings = STEPS
TestRetainedAgrees = RetainedAgrees.TestCase
