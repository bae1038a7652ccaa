"""The distribution core against the distribution model, side by side, step by step.

A ``RuleBasedStateMachine`` in the DatabaseComparison pattern: every rule does the same
thing to :class:`pubproof.model.distribution.DistributionModel` (the oracle) and to
:class:`pubproof.reference.distribution.DistributionCore` (connect, clean or not, with a
5.0 Session Expiry Interval; disconnect; SUBSCRIBE with random filters, wildcards and
Shared Subscriptions among them, options and identifiers; UNSUBSCRIBE; PUBLISH with any
QoS, RETAIN, payload and Message Expiry Interval; send and complete the owed copies; move
the clock) and compares what each returned, and ``@invariant`` compares their whole state
after every step: the sessions (status, persistence, expiry), each session's subscriptions,
the copies it is owed, those kept as optional and those under way (normalised: message
seq, QoS, RETAIN, Subscription Identifiers, topic filters, cause), the Shared
Subscriptions' members, the retained store and the clock. Copies are named by their place
in a session's queue, since the two number them independently.

The machine is built for an edition, its readings and the server's limits
(:func:`comparison_machine`), and for a core class, so that the mutants of
``test_reference_distribution_mutants.py`` run in the same machine, and
``test_reference_distribution_stateful.py`` runs it for each of ``CASES``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from pubproof.model import subscriptions as model_subscriptions
from pubproof.model.distribution import DistributionModel
from pubproof.model.distribution_state import DistributionError as ModelError
from pubproof.model.editions import Edition
from pubproof.model.messages import Properties, Publication
from pubproof.model.topic_filters import filter_problem
from pubproof.reference import distribution_state as core_state
from pubproof.reference.distribution import DistributionCore
from pubproof.reference.errors import InvalidTopic
from pubproof.reference.properties import PublishProperties

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50
NEVER = 0xFFFF_FFFF
CLIENTS = ("c1", "c2", "c3")
#: topic names that the filters below match often and overlap on
NAMES = ("a", "b", "a/b", "a/a", "b/a", "a/", "/a", "a/b/a", "$SYS", "$SYS/a", "é")
FILTERS = ("a", "b", "a/b", "#", "+", "a/#", "+/b", "+/+", "+/#", "/+", "a/+", "$SYS/#", "é")
#: two Shared Subscriptions, so that sessions often share one
SHARED = ("$share/g/#", "$share/h/a/+")
#: a few strings that break the topic rules, or that only MQTT 3.1 allows as topic names
ODD_NAMES = ("", "a/+", "#", "a\x00", "\ud800", "+/b")
ODD_FILTERS = ("", "a#", "a/#/b", "+a", "a\x00", "\ud800/#", "$share//a", "$share/g", "$share/+/a")


def topic_names() -> st.SearchStrategy[str]:
    """Mostly the names the filters match; now and then one the rules refuse."""
    return st.sampled_from(NAMES * 4 + ODD_NAMES)


def topic_filters() -> st.SearchStrategy[str]:
    """Mostly valid filters with wildcards, some Shared Subscriptions, few invalid ones."""
    return st.sampled_from(FILTERS * 6 + SHARED * 6 + ODD_FILTERS)


def _copy(copy: Any) -> tuple[Any, ...]:
    """What the two must agree on of a copy."""
    return (
        copy.client_id,
        copy.message.seq,
        copy.qos,
        copy.retain,
        tuple(sorted(copy.subscription_identifiers)),
        tuple(copy.topic_filters),
        copy.cause.value,
    )


def _copies(copies: Any) -> list[tuple[Any, ...]]:
    return [_copy(c) for c in copies]


def _bag(copies: Any) -> list[tuple[Any, ...]]:
    return sorted(_copies(copies))


def _seq(message: Any) -> int | None:
    return None if message is None else int(message.seq)


def _change(change: Any) -> tuple[Any, ...]:
    """A change of the retained store (() for none: the core's RETAIN 0)."""
    if change is None:
        return ()
    return (
        change.topic,
        change.input.value,
        _seq(change.before),
        _seq(change.after),
        change.rule_ids,
    )


def _may_miss(outcome: Any) -> list[int]:
    """Which of a filter's retained copies the server may have discarded, by place."""
    ids = [c.copy_id for c in outcome.retained]
    return [ids.index(i) for i in outcome.may_miss]


def model_options(option: tuple[int, bool, bool, int]) -> Any:
    qos, no_local, rap, handling = option
    return model_subscriptions.SubscriptionOptions(
        qos=qos,
        no_local=no_local,
        retain_as_published=rap,
        retain_handling=model_subscriptions.RetainHandling(handling),
    )


def core_options(option: tuple[int, bool, bool, int]) -> Any:
    qos, no_local, rap, handling = option
    return core_state.SubscriptionOptions(
        qos=qos,
        no_local=no_local,
        retain_as_published=rap,
        retain_handling=core_state.RetainHandling(handling),
    )


def _grant(sub: Any) -> tuple[Any, ...]:
    return (
        sub.topic_filter,
        sub.granted_qos,
        sub.no_local,
        sub.retain_as_published,
        int(sub.retain_handling),
        sub.subscription_identifier,
    )


def comparison_machine(
    edition: Edition,
    readings: Mapping[str, str] | None = None,
    limits: Mapping[str, Any] | None = None,
    core_class: type[Any] = DistributionCore,
) -> type[RuleBasedStateMachine]:
    """A machine driving the model and ``core_class`` in ``edition`` under ``readings``
    with the server limits ``limits`` (``ServerConfig``'s fields)."""
    v50 = edition is V50
    options = st.builds(
        lambda qos, nl, rap, rh: (qos, nl and v50, rap and v50, rh if v50 else 0),
        st.integers(0, 2),
        st.sampled_from((False, False, False, True)),  # No Local
        st.booleans(),
        st.integers(0, 2),
    )
    #: 0 is a Protocol Error (3.8.2.1.2), drawn now and then
    identifiers = st.sampled_from((None,) * 8 + (1, 2, 3) * 2 + (0,)) if v50 else st.none()
    expiries = st.sampled_from((None, 0, 1, 2, 5)) if v50 else st.none()

    class DistributionComparison(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.model = DistributionModel(
                edition, readings, model_subscriptions.ServerConfig(**(limits or {}))
            )
            self.core = core_class(edition, readings, core_state.ServerConfig(**(limits or {})))

        # -- helpers -----------------------------------------------------------------------

        def connected(self) -> list[str]:
            return sorted(c for c, s in self.model.sessions.items() if s.connected)

        # -- sessions ----------------------------------------------------------------------

        @initialize(
            cleans=st.tuples(*(st.booleans() for _ in CLIENTS)),
            expiry=st.sampled_from((NEVER, 2, 0)) if v50 else st.just(0),
            subscriptions=st.lists(
                st.tuples(st.sampled_from(CLIENTS), st.sampled_from(FILTERS + SHARED * 6), options),
                min_size=3,
                max_size=8,
            ),
            away=st.sampled_from((None, *CLIENTS)),
        )
        def everyone_connects_and_subscribes(
            self,
            cleans: tuple[bool, ...],
            expiry: int,
            subscriptions: list[tuple[str, str, Any]],
            away: str | None,
        ) -> None:
            """Every client connects and subscribes; one may then go away (its session
            kept, if it outlives its connection: a Shared Subscription's absent member)."""
            for client, clean in zip(CLIENTS, cleans, strict=True):
                self.connect(client, clean, expiry)
            for index, (client, topic_filter, option) in enumerate(subscriptions):
                self._subscribe(client, index + 1, [(topic_filter, option)], None)
            if away is not None:
                want = self.model.disconnect(away)
                got = self.core.disconnect(away)
                assert (got.session_ended, _bag(got.dropped)) == (
                    want.session_ended,
                    _bag(want.dropped),
                )

        @rule(
            client=st.sampled_from(CLIENTS),
            clean=st.booleans(),
            expiry=st.sampled_from((NEVER, 2, 1, 0)) if v50 else st.just(0),
        )
        def connect(self, client: str, clean: bool, expiry: int) -> None:
            want = self.model.connect(client, clean=clean, session_expiry_interval=expiry)
            got = self.core.connect(client, clean=clean, session_expiry_interval=expiry)
            assert got.session_present == want.session_present
            assert _copies(got.owed) == _copies(want.owed)
            assert _copies(got.optional) == _copies(want.optional)
            assert _copies(got.resend) == _copies(want.resend)
            assert _bag(got.dropped) == _bag(want.dropped)
            assert got.rules == want.rules

        @precondition(lambda self: self.connected())
        @rule(
            data=st.data(),
            expiry=st.sampled_from((None, None, 0, 1, 3)) if v50 else st.none(),
        )
        def disconnect(self, data: st.DataObject, expiry: int | None) -> None:
            client = data.draw(st.sampled_from(self.connected()))
            want = self.model.disconnect(client, session_expiry_interval=expiry)
            got = self.core.disconnect(client, session_expiry_interval=expiry)
            assert (got.session_ended, got.rules) == (want.session_ended, want.rules)
            assert _bag(got.dropped) == _bag(want.dropped)

        # -- SUBSCRIBE, UNSUBSCRIBE --------------------------------------------------------

        @precondition(lambda self: self.connected())
        @rule(
            data=st.data(),
            requests=st.sampled_from((True,) * 15 + (False,)).flatmap(
                lambda some: (
                    st.lists(st.tuples(topic_filters(), options), min_size=1, max_size=3)
                    if some
                    else st.just([])
                )  # now and then an empty SUBSCRIBE [MQTT-3.8.3-3]
            ),
            ident=identifiers,
        )
        def subscribe(
            self, data: st.DataObject, requests: list[tuple[str, Any]], ident: int | None
        ) -> None:
            client = data.draw(st.sampled_from(self.connected()))
            self._subscribe(client, data.draw(st.integers(1, 65535)), requests, ident)

        def _subscribe(
            self, client: str, packet_id: int, requests: list[tuple[str, Any]], ident: int | None
        ) -> None:
            want = self.model.subscribe(
                client,
                packet_id,
                [(f, model_options(o)) for f, o in requests],
                subscription_identifier=ident,
            )
            got = self.core.subscribe(
                client,
                packet_id,
                [(f, core_options(o)) for f, o in requests],
                subscription_identifier=ident,
            )
            assert (got.packet_id, got.codes, got.closed) == (
                want.packet_id,
                want.codes,
                want.closed,
            )
            assert got.rules == want.rules
            if got.error is not None:
                # the filter's rule and its byte offset, as the model finds them
                problems = [filter_problem(f, edition, self.model.readings) for f, _ in requests]
                first = next(p for p in problems if p is not None)
                assert (got.error.rule, got.error.offset) == (first.rule_id, first.byte_offset)
            for mine, theirs in zip(got.filters, want.filters, strict=True):
                assert (mine.topic_filter, mine.code, mine.replaced) == (
                    theirs.topic_filter,
                    theirs.code,
                    theirs.replaced,
                )
                if mine.code >= 0x80:
                    assert mine.rule_ids[-1] == theirs.rule_ids[-1]  # the rule that refused
                assert _copies(mine.retained) == _copies(theirs.retained)
                assert _may_miss(mine) == _may_miss(theirs)

        def held(self, client: str) -> list[str]:
            """The topic filters of ``client``'s subscriptions, Shared ones too."""
            own = sorted(self.model.sessions[client].subscriptions)
            return own + sorted(f for f, m in self.model.shared.items() if client in m)

        @precondition(lambda self: any(self.held(c) for c in self.connected()))
        @rule(data=st.data(), option=options, ident=identifiers)
        def subscribe_again(self, data: st.DataObject, option: Any, ident: int | None) -> None:
            """The same filter again, with other options: it replaces the subscription
            [MQTT-3.8.4-3] (and 5.0's Retain Handling 1 sends no retained message)."""
            client = data.draw(st.sampled_from([c for c in self.connected() if self.held(c)]))
            topic_filter = data.draw(st.sampled_from(self.held(client)))
            self._subscribe(client, 3, [(topic_filter, option)], ident)

        @precondition(lambda self: self.connected())
        @rule(data=st.data(), chosen=st.lists(topic_filters(), max_size=3))
        def unsubscribe(self, data: st.DataObject, chosen: list[str]) -> None:
            client = data.draw(st.sampled_from(self.connected()))
            held = self.held(client)
            if held:  # and now and then one it holds
                chosen = data.draw(st.sampled_from((chosen, [*chosen, held[0]], [held[-1]])))
            want = self.model.unsubscribe(client, 7, chosen)
            got = self.core.unsubscribe(client, 7, chosen)
            assert (got.codes, got.deleted, got.closed, got.rules) == (
                want.codes,
                want.deleted,
                want.closed,
                want.rules,
            )
            assert _copies(got.buffered) == _copies(want.buffered)

        # -- messages ----------------------------------------------------------------------

        @rule(
            publisher=st.sampled_from(CLIENTS),
            topic=topic_names(),
            qos=st.integers(0, 2),
            retain=st.booleans(),
            payload=st.sampled_from((b"", b"x", b"yz")),
            expiry=expiries,
        )
        def publish(
            self,
            publisher: str,
            topic: str,
            qos: int,
            retain: bool,
            payload: bytes,
            expiry: int | None,
        ) -> None:
            theirs = Publication(
                publisher=publisher,
                topic=topic,
                payload=payload,
                qos=qos,
                retain=retain,
                properties=Properties(message_expiry_interval=expiry),
            )
            mine = core_state.Publication(
                publisher=publisher,
                topic=topic,
                payload=payload,
                qos=qos,
                retain=retain,
                properties=PublishProperties(message_expiry_interval=expiry) if v50 else None,
            )
            try:
                want = self.model.publish(theirs)
            except ModelError as error:
                # the topic name breaks a rule: the core names the same one
                with pytest.raises(InvalidTopic) as raised:
                    self.core.publish(mine)
                assert f"[{raised.value.rule}]" in str(error)
                return
            got = self.core.publish(mine)
            assert got.message.seq == want.message.seq
            assert got.message.received_at == want.message.received_at
            assert _bag(got.copies) == _bag(want.copies)
            assert _bag(got.optional) == _bag(want.optional)
            assert got.rules == want.rules
            assert _change(got.retained) == (_change(want.retained) if retain else ())

        @rule(
            publisher=st.sampled_from(CLIENTS),
            topics=st.lists(topic_names(), min_size=2, max_size=5),
            qos=st.integers(0, 2),
            retain=st.booleans(),
        )
        def publish_several(
            self, publisher: str, topics: list[str], qos: int, retain: bool
        ) -> None:
            """A publisher's burst: each message as :meth:`publish` takes one."""
            for topic in topics:
                self.publish(publisher, topic, qos, retain, b"m", None)

        @precondition(
            lambda self: any(
                self.model.owed(c) or self.model.sessions[c].optional for c in self.connected()
            )
        )
        @rule(data=st.data(), by_id=st.booleans())
        def send(self, data: st.DataObject, by_id: bool) -> None:
            ready = [
                c for c in self.connected() if self.model.owed(c) or self.model.sessions[c].optional
            ]
            client = data.draw(st.sampled_from(ready))
            model_pool = [
                *self.model.sessions[client].pending,
                *self.model.sessions[client].optional,
            ]
            core_pool = [*self.core.sessions[client].pending, *self.core.sessions[client].optional]
            assert _copies(model_pool) == _copies(core_pool)
            at = data.draw(st.integers(0, len(model_pool) - 1)) if by_id else 0
            want = self.model.send(client, model_pool[at].copy_id if by_id else None)
            got = self.core.send(client, core_pool[at].copy_id if by_id else None)
            assert (_copy(got[0]), got[1]) == (_copy(want[0]), want[1])

        @precondition(lambda self: any(self.model.owed(c) for c in self.connected()))
        @rule(data=st.data())
        def send_everything(self, data: st.DataObject) -> None:
            """A broker with room in its window sends all a session is owed, in order."""
            client = data.draw(st.sampled_from([c for c in self.connected() if self.model.owed(c)]))
            while self.model.owed(client):
                want = self.model.send(client)
                got = self.core.send(client)
                assert (_copy(got[0]), got[1]) == (_copy(want[0]), want[1])
            assert not self.core.owed(client)

        @precondition(lambda self: any(s.under_way for s in self.model.sessions.values()))
        @rule(data=st.data(), reason=st.sampled_from((0, 0x10, 0x80, 0x87)))
        def complete(self, data: st.DataObject, reason: int) -> None:
            client = data.draw(
                st.sampled_from(sorted(c for c, s in self.model.sessions.items() if s.under_way))
            )
            model_ids = list(self.model.sessions[client].under_way)
            core_ids = list(self.core.sessions[client].under_way)
            at = data.draw(st.integers(0, len(model_ids) - 1))
            want = self.model.complete(client, model_ids[at], reason)
            got = self.core.complete(client, core_ids[at], reason)
            assert (_copy(got.copy), got.rules) == (_copy(want.copy), want.rules)

        @rule(milliseconds=st.sampled_from((0, 1, 499, 999, 1000, 1001, 2000, 5000)))
        def advance(self, milliseconds: int) -> None:
            want = self.model.advance(milliseconds)
            got = self.core.advance(milliseconds)
            assert got.now == want.now
            assert _bag(got.expired) == _bag(want.expired)
            assert sorted(got.ended) == sorted(want.ended)
            assert _bag(got.dropped) == _bag(want.dropped)
            assert sorted(map(_change, got.retained)) == sorted(map(_change, want.retained))
            assert got.rules == want.rules

        # -- the invariant -----------------------------------------------------------------

        @invariant()
        def agree(self) -> None:
            model, core = self.model, self.core
            assert core.now == model.now
            assert sorted(core.sessions) == sorted(model.sessions)
            for client, want in model.sessions.items():
                got = core.sessions[client]
                assert (got.status.value, got.persistent, got.expiry_interval) == (
                    want.status.value,
                    want.persistent,
                    want.expiry_interval,
                ), client
                assert got.disconnected_at == want.disconnected_at
                assert _copies(core.owed(client)) == _copies(model.owed(client)), client
                assert _copies(got.optional) == _copies(want.optional), client
                assert _copies(got.under_way.values()) == _copies(want.under_way.values())
                assert [_grant(s) for s in got.subscriptions.values()] == [
                    _grant(s) for s in want.subscriptions.values()
                ]
            assert {
                f: [(c, _grant(s)) for c, s in m.items()] for f, m in core.shared().items()
            } == {f: [(c, _grant(s)) for c, s in m.items()] for f, m in model.shared.items()}
            held = {t: m.seq for t, m in core.retained.snapshot().items()}
            assert held == {t: m.seq for t, m in model.retained.snapshot().items()}

    return DistributionComparison


def scaled(examples: int) -> settings:
    """Bounded for CI: ``examples`` under the default profile (``ci``, 1,000 examples a
    test), proportionally more under ``deep``, fewer under ``dev``."""
    default = settings.default
    assert default is not None
    return settings(
        max_examples=max(1, examples * default.max_examples // 1000),
        stateful_step_count=40,
        deadline=None,
    )


#: (edition, readings, limits): the defaults, the other value of every reading that
#: changes what the server does, and a server that refuses what it may
CASES: tuple[tuple[Edition, dict[str, str], dict[str, Any]], ...] = (
    (V31, {}, {}),
    (
        V31,
        {
            "dollar-topics": "as-3.1.1",
            "topic-rules": "as-3.1.1",
            "topic-length": "65535-bytes",
            "retained-qos-31": "as-published",
            "retained-empty-31": "delete",
        },
        {"maximum_qos": 1},
    ),
    (V311, {}, {}),
    (
        V311,
        {
            "overlapping-copies": "per-subscription",
            "queue-qos0": "queue",
            "invalid-filter": "refuse",
        },
        {},
    ),
    (V311, {}, {"wildcard_subscriptions": False, "maximum_qos": 1}),
    (V50, {}, {}),
    (
        V50,
        {
            "overlapping-copies": "per-subscription",
            "queue-qos0": "queue",
            "invalid-filter": "refuse",
            "expiry-boundary": "after",
            "expiry-rounding": "up",
        },
        {},
    ),
    (
        V50,
        {"invalid-filter": "refuse"},
        {
            "maximum_qos": 1,
            "wildcard_subscriptions": False,
            "shared_subscriptions": False,
            "subscription_identifiers": False,
        },
    ),
)
