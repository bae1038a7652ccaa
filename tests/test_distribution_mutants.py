"""Mutants of the distribution model, each killed by a check of
tests/support/distribution_checks.py.

Every invariant the distribution tests hold has a mutant here: a small change to the model
(patched for the test only) that breaks one rule, and the check that must then fail. A
mutant that survives would mean the check cannot fail, which is a defect of the tests.
"""

from __future__ import annotations

import dataclasses
import unicodedata
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

import pytest
from support import distribution_checks as C

from pubproof.model import (
    distribution,
    forwarding,
    ordering,
    retained,
    subscriptions,
    topic_filters,
)
from pubproof.model.editions import Edition
from pubproof.model.forwarding import Delivery, Shape
from pubproof.model.messages import Copy, Properties
from pubproof.model.retained import RetainedAction, RetainedInput, RetainedState, RetainedStep
from pubproof.model.subscriptions import RetainHandling

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50
Patch = Callable[[pytest.MonkeyPatch], None]
_matches = topic_filters.matches
_wildcard_problem = topic_filters._wildcard_problem
_retained_table = retained.retained_table
_dispatch = forwarding.dispatch
_retained_on_subscribe = forwarding.retained_on_subscribe
_grant = subscriptions.grant
_owed = distribution.DistributionModel.owed


def _matching(mutant: Callable[[str, str, bool], bool | None]) -> Patch:
    """A mutant of matching: ``mutant`` answers first where it returns a bool."""

    def matches(topic_filter: str, topic_name: str, *, dollar_rule: bool = True) -> bool:
        answer = mutant(topic_filter, topic_name, dollar_rule)
        return (
            _matches(topic_filter, topic_name, dollar_rule=dollar_rule)
            if answer is None
            else answer
        )

    return lambda mp: mp.setattr(topic_filters, "matches", matches)


def _hash_not_parent(f: str, t: str, d: bool) -> bool | None:
    return False if f.endswith("/#") and t == f[:-2] else None


def _plus_many_levels(f: str, t: str, d: bool) -> bool | None:
    if f.endswith("/+") and t.startswith(f[:-1]) and t != f[:-1]:
        return True
    return None


def _normalising(f: str, t: str, d: bool) -> bool | None:
    return _matches(unicodedata.normalize("NFC", f), unicodedata.normalize("NFC", t), dollar_rule=d)


def _wildcards(skip: str) -> Patch:
    def problem(text: str, start: int, edition: Edition, whole: str) -> Any:
        found = _wildcard_problem(text, start, edition, whole)
        return None if found is not None and skip in found.message else found

    return lambda mp: mp.setattr(topic_filters, "_wildcard_problem", problem)


def _table(event: RetainedInput, action: RetainedAction) -> Patch:
    def table(edition: Edition, readings: Any = None) -> Any:
        entries = dict(_retained_table(edition, readings))
        for state in RetainedState:
            if (state, event) in entries:
                entries[state, event] = RetainedStep(
                    next=RetainedState.HELD, action=action, rules=()
                )
        return MappingProxyType(entries)

    return lambda mp: mp.setattr(retained, "retained_table", table)


def _dispatching(answer: Callable[[Shape, bool], str | None]) -> Patch:
    def dispatch(
        shape: Shape, connected: bool, edition: Edition, readings: Any, walks: Any = None
    ) -> Any:
        end, trail = _dispatch(shape, connected, edition, readings)  # (made afresh)
        return answer(shape, connected) or end, trail

    return lambda mp: mp.setattr(distribution, "dispatch", dispatch)


def _retained_sent(answer: Callable[[Any, bool, Edition], bool | None]) -> Patch:
    def decide(subscription: Any, existed: bool, edition: Edition) -> Any:
        send, trail = _retained_on_subscribe(subscription, existed, edition)
        mutated = answer(subscription, existed, edition)
        return (send if mutated is None else mutated), trail

    return lambda mp: mp.setattr(distribution, "retained_on_subscribe", decide)


def _granting(mutant: Callable[..., tuple[int, str | None]]) -> Patch:
    return lambda mp: mp.setattr(distribution, "grant", mutant)


def _single_first_id(self: Delivery) -> tuple[Shape, ...]:
    ids = tuple(i for c in self.candidates for i in c.shape.subscription_identifiers)[:1]
    return tuple(dataclasses.replace(s, subscription_identifiers=ids) for s in _single(self))


_single = Delivery.single_copies


def _forwarded(keep_alias: bool) -> Callable[[Properties], Properties]:
    def forwarded(self: Properties) -> Properties:
        if keep_alias:
            return self
        return dataclasses.replace(
            self, topic_alias=None, user_properties=self.user_properties[::-1]
        )

    return forwarded


MUTANTS: dict[str, tuple[Patch, Callable[[], None]]] = {
    # topic names and filters (4.7)
    "hash-does-not-match-its-parent": (_matching(_hash_not_parent), C.check_matching_examples),
    "dollar-topics-matched": (_matching(lambda f, t, d: _matches(f, t, dollar_rule=False)),
                              C.check_matching_examples),
    "plus-matches-several-levels": (_matching(_plus_many_levels), C.check_matching_examples),
    "matching-normalises": (_matching(_normalising), C.check_matching_examples),
    "hash-anywhere-accepted": (_wildcards("last character"), lambda: C.check_filter_examples(V311)),
    "plus-inside-a-level-accepted": (
        _wildcards("whole level"), lambda: C.check_filter_examples(V50)),
    # forwarding (3.3.1, 3.8.4, 3.3.5, 3.3.4)
    "qos-max-instead-of-min": (
        lambda mp: mp.setitem(forwarding._DO, "qos", lambda c: dataclasses.replace(
            c, qos=max(c.message.qos, c.subscription.granted_qos))),
        lambda: C.check_min_qos(V311)),
    "retain-copied-to-live-forwards": (
        lambda mp: mp.setitem(forwarding._DO, "retain-0", lambda c: dataclasses.replace(
            c, retain=c.message.publication.retain)),
        lambda: C.check_live_retain_flag(V311)),
    "retain-as-published-ignored": (lambda mp: mp.setitem(forwarding._ASK, "rap", lambda c: False),
                                    C.check_retain_as_published),
    "no-local-ignored": (lambda mp: mp.setitem(forwarding._ASK, "no-local", lambda c: False),
                         C.check_no_local),
    "shared-copy-to-every-member": (
        lambda mp: mp.setitem(forwarding._ASK, "shared", lambda c: False),
                                    C.check_shared_one_member),
    "overlap-at-the-lowest-qos": (
        lambda mp: mp.setattr(Delivery, "highest_qos", property(
            lambda self: min(c.shape.qos for c in self.candidates))),
        lambda: C.check_overlap(V311)),
    "one-copy-with-the-first-identifier-only": (
        lambda mp: mp.setattr(Delivery, "single_copies", _single_first_id),
        C.check_subscription_identifiers),
    "retained-copy-with-retain-0": (
        lambda mp: mp.setattr(distribution, "retained_shape", lambda *a: dataclasses.replace(
            forwarding.retained_shape(*a), retain=False)),
        lambda: C.check_live_retain_flag(V311)),
    "user-properties-reordered": (lambda mp: mp.setattr(Properties, "forwarded", _forwarded(False)),
                                  C.check_forwarded_properties),
    "topic-alias-forwarded": (lambda mp: mp.setattr(Properties, "forwarded", _forwarded(True)),
                              C.check_forwarded_properties),
    # the retained store (3.3.1.3)
    "empty-retained-message-stored": (_table(RetainedInput.RETAIN_EMPTY, RetainedAction.STORE),
                                      lambda: C.check_retained_store(V311)),
    "retain-0-replaces-the-retained-message": (
        _table(RetainedInput.NOT_RETAINED, RetainedAction.STORE),
        lambda: C.check_retained_store(V50)),
    # sessions, queues and time (3.1.2, 3.3.2.3.3, 4.1)
    "qos0-kept-under-3.1": (_dispatching(lambda s, c: "queued" if not c else None),
                            lambda: C.check_queue_offline(V31)),
    "qos1-not-kept-for-an-absent-session": (
        _dispatching(lambda s, c: "not-kept" if not c and s.qos else None),
        lambda: C.check_queue_offline(V311)),
    "expiry-interval-not-reduced": (
        lambda mp: mp.setattr(Copy, "expiry_interval_at", lambda self, now, rounding="down":
                              self.message.publication.properties.message_expiry_interval),
        C.check_expiry),
    "expired-copies-kept": (lambda mp: mp.setattr(Copy, "expired", lambda self, now, b="at": False),
                            C.check_expiry),
    "session-expiry-ignored": (
        lambda mp: mp.setattr(distribution, "NEVER", 5), C.check_session_expiry),
    # subscribing (3.8.4, 3.3.1.3, 3.9.3)
    "no-retained-messages-on-resubscribe": (
        _retained_sent(lambda s, existed, e: False if existed else None),
        lambda: C.check_resubscribe_retained(V311)),
    "retain-handling-1-as-0": (
        _retained_sent(
            lambda s, existed, e: True if s.retain_handling is RetainHandling.SEND_IF_NEW else None
        ),
        lambda: C.check_resubscribe_retained(V50)),
    "granted-above-the-server-maximum": (
        _granting(lambda options, **kw: (options.qos, None)), lambda: C.check_suback(V311)),
    "wildcards-never-refused": (
        _granting(lambda options, **kw: _grant(options, **{**kw, "has_wildcard": False})),
        lambda: C.check_suback(V50)),
    # ordering (4.6)
    "owed-copies-last-first": (
        lambda mp: mp.setattr(distribution.DistributionModel, "owed",
                              lambda self, c: tuple(reversed(_owed(self, c)))),
        lambda: C.check_order(V311)),
    "every-topic-unordered": (lambda mp: mp.setattr(ordering, "ordered_topic", lambda *a: False),
                              lambda: C.check_order(V50)),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_the_mutant_is_killed(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    patch, check = MUTANTS[name]
    check()  # the model itself passes
    patch(monkeypatch)
    with pytest.raises(AssertionError):
        check()
