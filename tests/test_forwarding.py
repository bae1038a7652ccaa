"""Forwarding (pubproof.model.forwarding and its diagrams): the copies a session is owed
for a message, by the rules of each edition; what a judge accepts; and, as properties, that
no copy goes above the QoS granted or published and that the oracle's copies are always
among those the judge accepts."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.distribution_checks import (
    check_expiry,
    check_forwarded_properties,
    check_live_retain_flag,
    check_min_qos,
    check_no_local,
    check_overlap,
    check_retain_as_published,
    check_subscription_identifiers,
)

from pubproof.model.decisions import NodeKind, action, graph, outcome, question, rules_by_edition
from pubproof.model.distribution import DistributionModel
from pubproof.model.distribution_diagrams import GRAPHS, diagrams, reachable, retained_dot
from pubproof.model.editions import Edition
from pubproof.model.forwarding import Shape, dispatch, session_delivery
from pubproof.model.messages import Message, Properties, Publication
from pubproof.model.subscriptions import Subscription, SubscriptionOptions
from pubproof.model.topic_filters import subscription_matches

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50
ALL = list(Edition)


@pytest.mark.parametrize(
    ("edition", "rule"),
    [(V31, "PP31-3.8-qos-downgrade"), (V311, "MQTT-3.8.4-6"), (V50, "MQTT-3.8.4-8")],
    ids=["3.1", "3.1.1", "5.0"],
)
def test_a_copy_goes_at_the_lower_of_the_published_and_the_granted_qos(
    edition: Edition, rule: str
) -> None:
    check_min_qos(edition)
    model = DistributionModel(edition)
    model.connect("sub", clean=True)
    model.subscribe("sub", 1, [("t", SubscriptionOptions(qos=1))])
    (copy,) = model.publish(Publication(publisher="p", topic="t", qos=2)).copies
    assert rule in copy.rules


@pytest.mark.parametrize(
    ("edition", "live"),
    [(V31, "PP31-2.1-retain-live"), (V311, "MQTT-3.3.1-9"), (V50, "MQTT-3.3.1-12")],
    ids=["3.1", "3.1.1", "5.0"],
)
def test_a_live_forward_has_retain_0(edition: Edition, live: str) -> None:
    check_live_retain_flag(edition)
    model = DistributionModel(edition)
    model.connect("sub", clean=True)
    model.subscribe("sub", 1, [("t", SubscriptionOptions(qos=1))])
    (copy,) = model.publish(Publication(publisher="p", topic="t", qos=1, retain=True)).copies
    assert live in copy.rules and not copy.retain


def test_retain_as_published_keeps_or_clears_retain() -> None:
    # [MQTT-3.3.1-12] "MUST set the RETAIN flag to 0"; [MQTT-3.3.1-13] "MUST set the RETAIN
    # flag equal to the RETAIN flag in the received PUBLISH packet"
    check_retain_as_published()


def test_no_local_sends_nothing_back_to_the_publisher() -> None:
    # [MQTT-3.8.3-3] "MUST NOT be forwarded to a connection with a ClientID equal to the
    # ClientID of the publishing connection"
    check_no_local()
    message = Message(seq=1, received_at=0, publication=Publication(publisher="me", topic="t"))
    sub = Subscription(topic_filter="t", granted_qos=0, no_local=True)
    assert session_delivery(message, "me", [sub], V50, {}) is None
    # 3.1.1 has no No Local: a client subscribed to its own topic gets its message back
    assert session_delivery(
        message, "me", [Subscription(topic_filter="t", granted_qos=0)], V311, {}
    )


@pytest.mark.parametrize("edition", ALL, ids=lambda e: e.value)
def test_overlapping_subscriptions_get_one_copy_at_the_highest_qos_or_one_each(
    edition: Edition,
) -> None:
    # [MQTT-3.3.5-1] "MUST deliver the message to the Client respecting the maximum QoS of all
    # the matching subscriptions ... MAY deliver further copies" (5.0: [MQTT-3.3.4-2])
    check_overlap(edition)


def test_subscription_identifiers_go_with_their_copies() -> None:
    # [MQTT-3.3.4-3] [MQTT-3.3.4-4] [MQTT-3.3.4-5]
    check_subscription_identifiers()
    model = DistributionModel(V50)
    model.connect("s", clean=True)
    model.subscribe("s", 1, [("t", SubscriptionOptions(qos=0))], subscription_identifier=9)
    (copy,) = model.publish(Publication(publisher="p", topic="t")).copies
    assert copy.subscription_identifiers == (9,) and "MQTT-3.3.4-3" in copy.rules


def test_duplicates_of_a_qos1_message_are_allowed_at_a_qos0_grant() -> None:
    # [MQTT-3.8.4-6] "The server is permitted to send duplicate copies of a message to a
    # subscriber in the case where the original message was published with QoS 1 and the
    # maximum QoS granted was QoS 0"
    message = Message(
        seq=1, received_at=0, publication=Publication(publisher="p", topic="t", qos=1)
    )
    zero = Subscription(topic_filter="t", granted_qos=0)
    delivery = session_delivery(message, "s", [zero], V311, {})
    assert delivery is not None
    assert delivery.judge([Shape(qos=0, retain=False)] * 3) == []
    two = Message(seq=2, received_at=0, publication=Publication(publisher="p", topic="t", qos=2))
    once = session_delivery(two, "s", [zero], V311, {})
    assert once is not None and once.judge([Shape(qos=0, retain=False)] * 2)
    assert once.judge([]), "no copy at all"


def test_a_copy_carries_the_properties_unaltered_without_topic_alias_and_with_dup_0() -> None:
    check_forwarded_properties()
    model = DistributionModel(V50)
    model.connect("s", clean=True)
    model.subscribe("s", 1, [("t", SubscriptionOptions(qos=2))])
    props = Properties(
        payload_format_indicator=1, content_type="text/plain", response_topic="r/1",
        correlation_data=b"\x01\x02", user_properties=(("b", "2"), ("a", "1"), ("b", "3")),
        topic_alias=7,
    )  # fmt: skip
    (copy,) = model.publish(Publication(publisher="p", topic="t", qos=2, properties=props)).copies
    sent = copy.to_p(model.now, packet_id=5)
    # [MQTT-3.3.2-4] [MQTT-3.3.2-15] [MQTT-3.3.2-16] [MQTT-3.3.2-20] unaltered; [MQTT-3.3.2-17]
    # [MQTT-3.3.2-18] every User Property, in order; [MQTT-3.3.2-7] no Topic Alias carried over
    assert sent["properties"] == {
        "payload_format_indicator": 1, "response_topic": "r/1", "correlation_data_hex": "0102",
        "user_properties": [["b", "2"], ["a", "1"], ["b", "3"]], "content_type": "text/plain",
    }  # fmt: skip
    # [MQTT-3.3.1-3] "its value MUST be determined solely by whether the outgoing PUBLISH
    # packet is a retransmission": a first transmission
    assert sent["dup"] is False and copy.dup is False
    for rule in ("MQTT-3.3.2-4", "MQTT-3.3.2-15", "MQTT-3.3.2-16", "MQTT-3.3.2-17",
                 "MQTT-3.3.2-18", "MQTT-3.3.2-20", "MQTT-3.3.2-7", "MQTT-3.3.1-3"):  # fmt: skip
        assert rule in copy.rules, rule
    old = DistributionModel(V311)
    old.connect("s", clean=True)
    old.subscribe("s", 1, [("t", SubscriptionOptions(qos=1))])
    (copy,) = old.publish(Publication(publisher="p", topic="t", qos=1)).copies
    assert "MQTT-3.3.1-3" in copy.rules and copy.to_p(0)["dup"] is False


def test_message_expiry_deletes_and_reduces() -> None:
    # [MQTT-3.3.2-5] deleted before onward delivery starts; [MQTT-3.3.2-6] "the received value
    # minus the time that the Application Message has been waiting in the Server"
    check_expiry()
    model = DistributionModel(V50)
    model.connect("s", clean=True)
    model.subscribe("s", 1, [("t", SubscriptionOptions(qos=1))])
    model.publish(
        Publication(
            publisher="p", topic="t", qos=1, properties=Properties(message_expiry_interval=1)
        )
    )
    clock = model.advance(1_000)
    assert len(clock.expired) == 1 and "MQTT-3.3.2-5" in clock.rules
    # reading expiry-boundary=after: not yet at the exact end; expiry-rounding=up
    late = DistributionModel(V50, {"expiry-boundary": "after", "expiry-rounding": "up"})
    late.connect("s", clean=True)
    late.subscribe("s", 1, [("t", SubscriptionOptions(qos=1))])
    late.publish(
        Publication(
            publisher="p", topic="t", qos=1, properties=Properties(message_expiry_interval=3)
        )
    )
    assert late.advance(3_000).expired == ()
    assert late.advance(1).expired != ()
    late.publish(
        Publication(
            publisher="p", topic="t", qos=1, properties=Properties(message_expiry_interval=3)
        )
    )
    late.advance(500)
    copy, interval = late.send("s")
    assert interval == 3 and copy.expiry_interval_at(late.now, "down") == 2


def test_a_copy_for_an_absent_session_is_kept_or_not_by_its_qos() -> None:
    shape = Shape(qos=0, retain=False)
    assert dispatch(shape, True, V311, {})[0] == "owed-now"
    assert dispatch(shape, False, V31, {})[0] == "not-kept"  # 3.1: "never stored"
    assert dispatch(shape, False, V311, {"queue-qos0": "queue"})[0] == "queued"
    end, trail = dispatch(Shape(qos=1, retain=False), False, V50, {})
    assert end == "queued" and "MQTT-3.1.2-23" in [i for p in trail for i in p.rule_ids]


def test_the_graphs_are_closed_and_every_node_is_reached_in_some_edition() -> None:
    for _, _, nodes in GRAPHS:
        seen = {k for e in Edition for k in reachable(nodes, e)}
        assert seen == set(nodes)
        assert any(n.kind is NodeKind.OUTCOME for n in nodes.values())
    with pytest.raises(ValueError, match="not a node"):
        graph(question("q", "?", rules_by_edition(), yes="a", no="nowhere"), outcome("a", "a"))
    with pytest.raises(ValueError, match="share a key"):
        graph(outcome("a", "a"), outcome("a", "b"))
    assert action("x", "x", rules_by_edition(), then="y").successors() == ("y",)


def test_the_diagrams_are_drawn_from_the_same_graphs() -> None:
    named = diagrams()
    assert set(named) == {f"{k}-{e.value}" for k in ("forwarding", "retained") for e in Edition}
    assert "MQTT-3.3.5-1" in named["forwarding-3.1.1"] and "MQTT-3.3.4-4" in named["forwarding-5.0"]
    assert "No Local" not in named["forwarding-3.1.1"]  # a question 3.1.1 never asks
    assert "(allowed)" in retained_dot(V31) and "(allowed)" not in retained_dot(V311)
    if shutil.which("dot") is None:
        pytest.skip("Graphviz is not installed (scripts/system-deps installs it)")
    for name, text in named.items():
        done = subprocess.run(
            ["dot", "-Tsvg"], input=text.encode(), capture_output=True, check=False
        )
        assert done.returncode == 0, (name, done.stderr)


FILTERS = st.sampled_from(["#", "a/#", "a/+", "+/b", "a/b", "+/+", "a", "$SYS/#", "+"])
TOPICS = st.sampled_from(["a", "a/b", "a/c", "x/b", "$SYS/b", "a/b/c"])


@pytest.mark.parametrize("edition", ALL, ids=lambda e: e.value)
@given(
    subs=st.lists(
        st.tuples(FILTERS, st.integers(0, 2)), min_size=1, max_size=4, unique_by=lambda s: s[0]
    ),
    topic=TOPICS, qos=st.integers(0, 2), retain=st.booleans(),
    overlap=st.sampled_from(["one-copy", "per-subscription"]),
)  # fmt: skip
def test_no_copy_goes_above_its_grant_and_the_oracle_is_always_allowed(
    edition: Edition, subs: list[tuple[str, int]], topic: str, qos: int, retain: bool, overlap: str
) -> None:
    readings = {"overlapping-copies": overlap}
    subscriptions = [Subscription(topic_filter=f, granted_qos=g) for f, g in subs]
    message = Message(seq=1, received_at=0, publication=Publication(
        publisher="p", topic=topic, qos=qos, retain=retain))  # fmt: skip
    delivery = session_delivery(message, "s", subscriptions, edition, readings)
    matching = [s for s in subscriptions if subscription_matches(s.topic_filter, topic, edition)]
    if not matching:
        assert delivery is None
        return
    assert delivery is not None
    granted = {s.topic_filter: s.granted_qos for s in matching}
    for shape in delivery.shapes:
        assert shape.qos <= qos and shape.qos <= max(granted[f] for f in shape.topic_filters)
        assert shape.retain is False
    assert max(s.qos for s in delivery.shapes) == min(qos, max(granted.values()))
    assert delivery.judge(delivery.shapes) == []
    higher = [Shape(qos=min(s.qos + 1, 2), retain=s.retain) for s in delivery.shapes]
    if any(h.qos != s.qos for h, s in zip(higher, delivery.shapes, strict=True)):
        assert delivery.judge(higher), "a copy above its grant is refused"


@pytest.mark.parametrize(
    ("edition", "rule"),
    [(V31, "PP31-3.3-delivered-to-subscribers"), (V311, "MQTT-4.5.0-1"), (V50, "MQTT-4.5.0-1")],
    ids=["3.1", "3.1.1", "5.0"],
)
def test_every_session_with_a_matching_subscription_gets_the_message(
    edition: Edition, rule: str
) -> None:
    # [MQTT-4.5.0-1] "it MUST add it to the Session state of those clients that have matching
    # Subscriptions"; [MQTT-3.3.2-3] the Topic Name sent "MUST match the Subscription's Topic
    # Filter"
    model = DistributionModel(edition)
    for name, topic_filter in (("one", "a/#"), ("two", "+/b"), ("three", "c")):
        model.connect(name, clean=True)
        model.subscribe(name, 1, [(topic_filter, SubscriptionOptions(qos=1))])
    out = model.publish(Publication(publisher="p", topic="a/b", qos=1))
    assert sorted(c.client_id for c in out.copies) == ["one", "two"]
    for copy in out.copies:
        assert rule in copy.rules
        assert ("MQTT-3.3.2-3" in copy.rules) is (edition is not V31)
        assert all(subscription_matches(f, copy.topic, edition) for f in copy.topic_filters)
    assert rule in out.rules


def test_a_5_0_retained_message_goes_with_retain_1_and_its_interval_left() -> None:
    # 3.3.1.3 (PP50-3.3.1-retained-flag): "These messages are sent with the RETAIN flag set
    # to 1"; [MQTT-3.3.2-6] its Message Expiry Interval less the time it waited
    model = DistributionModel(V50)
    model.publish(Publication(publisher="p", topic="t", payload=b"x", qos=1, retain=True,
                              properties=Properties(message_expiry_interval=60)))  # fmt: skip
    model.advance(20_000)
    model.connect("s", clean=True)
    (made,) = model.subscribe("s", 1, [("t", SubscriptionOptions(qos=1))]).filters
    (copy,) = made.retained
    assert copy.retain and "PP50-3.3.1-retained-flag" in made.rule_ids
    assert model.send("s") == (copy, 40)


@given(
    topic=st.sampled_from(["a/b", "a", "$SYS/x", "a/b/c"]),
    qos=st.integers(0, 2),
    retain=st.booleans(),
    publisher=st.sampled_from(["me", "other"]),
    topic_filter=st.sampled_from(["a/b", "a/+", "#", "+/b/#", "$SYS/#"]),
    granted=st.integers(0, 2),
    no_local=st.booleans(),
    rap=st.booleans(),
    edition=st.sampled_from(ALL),
)
def test_a_walk_kept_is_the_walk_made_afresh(
    topic: str, qos: int, retain: bool, publisher: str, topic_filter: str, granted: int,
    no_local: bool, rap: bool, edition: Edition,
) -> None:  # fmt: skip
    """The walks a model keeps (``forwarding.Walks``) answer as a walk made afresh, asked
    twice (kept, then read back), for a message alike another in what the walk reads."""
    from pubproof.model.forwarding import Walks, subscription_copy

    if edition is not V50:
        no_local = rap = False
    readings = {"dollar-topics": "as-3.1.1"} if edition is V31 else {}
    walks = Walks(edition, readings)
    subscription = Subscription(topic_filter=topic_filter, granted_qos=granted,
                                no_local=no_local, retain_as_published=rap)  # fmt: skip
    for payload in (b"one", b"two"):  # the second: read back
        message = Message(seq=1, received_at=0, publication=Publication(
            topic=topic, qos=qos, retain=retain, payload=payload, publisher=publisher))  # fmt: skip
        fresh = subscription_copy(message, "me", subscription, edition, readings)
        kept = subscription_copy(message, "me", subscription, edition, readings, walks=walks)
        assert kept == fresh
    assert len(walks.made) == 1


def test_a_walk_is_kept_under_its_own_readings_and_edition_only() -> None:
    """Walks kept for one edition under one mapping of readings are not an answer under
    another: 3.1's ``dollar-topics`` decides whether ``#`` matches ``$SYS/x``, and a walk
    asked under another mapping (or edition) is made afresh, not read from the walks."""
    from pubproof.model.forwarding import Walks, subscription_copy

    plain, rule = {"dollar-topics": "plain"}, {"dollar-topics": "as-3.1.1"}
    message = Message(seq=1, received_at=0, publication=Publication(
        topic="$SYS/x", qos=0, payload=b"m", publisher="p"))  # fmt: skip
    everything = Subscription(topic_filter="#", granted_qos=0)
    walks = Walks(V31, plain)
    found, _ = subscription_copy(message, "s", everything, V31, plain, walks=walks)
    assert found is not None and len(walks.made) == 1  # plain 3.1: '#' matches '$SYS/x'
    found, _ = subscription_copy(message, "s", everything, V31, rule, walks=walks)
    assert found is None  # the '$' rule, as 3.1.1 has it, whatever the walks kept
    found, _ = subscription_copy(message, "s", everything, V311, plain, walks=walks)
    assert found is None  # 3.1.1's own rule [MQTT-4.7.2-1]
    assert len(walks.made) == 1  # nothing more kept
    model = DistributionModel(V31, plain)
    assert model.walks.readings is model.readings and model.walks.edition is V31


@pytest.mark.parametrize("edition", ALL)
@pytest.mark.parametrize("queue", ["queue", "drop"])
def test_a_dispatch_walk_kept_is_the_walk_made_afresh(edition: Edition, queue: str) -> None:
    """``dispatch`` keeps its walks in a model's ``Walks`` by what the walk reads (the
    session connected or not, the copy's QoS 0 or not): each kept answers as made afresh,
    in whatever order they are asked."""
    from pubproof.model.forwarding import Walks

    readings = {"queue-qos0": queue}
    walks = Walks(edition, readings)
    cases = [(Shape(qos=q, retain=r), c) for q in (0, 1, 2, 0) for r in (False, True)
             for c in (True, False)]  # fmt: skip
    for shape, connected in cases:
        fresh = dispatch(shape, connected, edition, readings)
        assert dispatch(shape, connected, edition, readings, walks) == fresh
    assert len(walks.dispatches) == 4


@pytest.mark.parametrize("edition", ALL)
def test_a_session_walk_kept_is_the_walk_made_afresh(edition: Edition) -> None:
    """``session_delivery`` keeps its walk of the session graph by whether several
    subscriptions made a copy: a delivery of one subscription, then of two, then of one
    again, each as made afresh."""
    from pubproof.model.forwarding import Walks

    readings: dict[str, str] = {}
    walks = Walks(edition, readings)
    message = Message(seq=1, received_at=0, publication=Publication(
        publisher="p", topic="a/b", qos=2))  # fmt: skip
    one = [Subscription(topic_filter="a/b", granted_qos=1)]
    two = [*one, Subscription(topic_filter="a/+", granted_qos=2)]
    for subscriptions in (one, two, one, two):
        fresh = session_delivery(message, "s", subscriptions, edition, readings)
        kept = session_delivery(message, "s", subscriptions, edition, readings, walks)
        assert kept == fresh and kept is not None and fresh is not None
        assert kept.trail == fresh.trail
    assert len(walks.sessions) == 2
