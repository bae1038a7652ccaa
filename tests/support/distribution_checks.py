"""Checks of the distribution model, shared by its tests and its mutation tests.

Each ``check_*`` function drives the model through examples taken from the standards and
raises ``AssertionError`` when the model does not do what the rule it names says. The
tests call them on the model as it is; ``test_distribution_mutants.py`` calls each one on
a mutant of the model and expects it to fail.
"""

from __future__ import annotations

import re

from pubproof.model import topic_filters
from pubproof.model.distribution import DistributionModel
from pubproof.model.editions import Edition
from pubproof.model.forwarding import Shape
from pubproof.model.messages import Properties, Publication
from pubproof.model.ordering import ordering_problems
from pubproof.model.retained import RetainedStore
from pubproof.model.subscriptions import RetainHandling, ServerConfig, SubscriptionOptions

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50
EDITIONS = (V31, V311, V50)

#: (topic filter, topic name, matches?): the non-normative examples of 4.7 (3.1.1 and 5.0)
SPEC_MATCHES: tuple[tuple[str, str, bool], ...] = (
    ("sport/tennis/player1/#", "sport/tennis/player1", True),
    ("sport/tennis/player1/#", "sport/tennis/player1/ranking", True),
    ("sport/tennis/player1/#", "sport/tennis/player1/score/wimbledon", True),
    ("sport/#", "sport", True),  # "# includes the parent level"
    ("#", "anything/at/all", True),
    ("sport/tennis/+", "sport/tennis/player1", True),
    ("sport/tennis/+", "sport/tennis/player2", True),
    ("sport/tennis/+", "sport/tennis/player1/ranking", False),
    ("sport/+", "sport", False),
    ("sport/+", "sport/", True),
    ("+/+", "/finance", True),
    ("/+", "/finance", True),
    ("+", "/finance", False),
    ("#", "$SYS/monitor/Clients", False),  # [MQTT-4.7.2-1]
    ("+/monitor/Clients", "$SYS/monitor/Clients", False),
    ("$SYS/#", "$SYS/monitor/Clients", True),
    ("$SYS/monitor/+", "$SYS/monitor/Clients", True),
    ("ACCOUNTS", "Accounts", False),  # case sensitive
    ("Accounts payable", "Accounts payable", True),
    ("/finance", "finance", False),
    ("a/+", "a", False),
    ("a/+", "a/b/c", False),
    ("a/+/b", "a//b", True),  # a zero-length level
    ("caf\u00e9", "cafe\u0301", False),  # no normalisation [MQTT-4.7.3-4]
)

#: (filter, valid?, the rule key broken, its character offset): 4.7.1's examples and more
SPEC_FILTERS: tuple[tuple[str, bool, str | None, int | None], ...] = (
    ("#", True, None, None),
    ("sport/tennis/#", True, None, None),
    ("sport/tennis#", False, "dist.filter.multi-level", 12),
    ("sport/tennis/#/ranking", False, "dist.filter.multi-level", 13),
    ("+", True, None, None),
    ("+/tennis/#", True, None, None),
    ("sport+", False, "dist.filter.single-level", 5),
    ("sport/+/player1", True, None, None),
    ("sport/+x", False, "dist.filter.single-level", 6),
    ("/", True, None, None),
    ("a//b", True, None, None),
)


def regex_matches(topic_filter: str, topic_name: str, dollar_rule: bool = True) -> bool:
    """An independent statement of 4.7 matching: the filter as a regular expression."""
    if dollar_rule and topic_name.startswith("$") and topic_filter[:1] in "#+":
        return False
    parts = []
    for level in topic_filter.split("/"):
        parts.append("[^/]*" if level == "+" else "#" if level == "#" else re.escape(level))
    pattern = "/".join(parts)
    if pattern == "#":
        pattern = ".*"
    elif pattern.endswith("/#"):
        pattern = pattern[:-2] + "(/.*)?"
    return re.fullmatch(pattern, topic_name, re.DOTALL) is not None


def check_matching_examples() -> None:
    for topic_filter, topic_name, expected in SPEC_MATCHES:
        # through the module, so that a mutant of matching is what is checked
        assert topic_filters.matches(topic_filter, topic_name) is expected, (
            topic_filter,
            topic_name,
        )
        assert topic_filters.subscription_matches(topic_filter, topic_name, V311) is expected
        assert regex_matches(topic_filter, topic_name) is expected, (topic_filter, topic_name)
    # the server's model decides its copies by the same matching, and cites the rules of it
    for edition in (V311, V50):
        model = DistributionModel(edition)
        model.connect("c", clean=True)
        model.subscribe("c", 1, [("#", SubscriptionOptions(qos=1))])
        # [MQTT-4.7.2-1] "#" does not match a topic name that starts with '$'
        dollar = model.publish(Publication(publisher="p", topic="$SYS/x", qos=1))
        assert dollar.copies == (), edition
        (copy,) = model.publish(Publication(publisher="p", topic="a/b", qos=1)).copies
        assert {"MQTT-4.7.2-1", "MQTT-4.7.3-4"} <= set(copy.rules), (edition, copy.rules)
        # [MQTT-4.7.3-4] no normalisation: precomposed "café" is not decomposed "café"
        model.unsubscribe("c", 2, ["#"])
        model.subscribe("c", 3, [("caf\u00e9", SubscriptionOptions(qos=1))])
        other = model.publish(Publication(publisher="p", topic="cafe\u0301", qos=1))
        assert other.copies == (), edition


def check_filter_examples(edition: Edition) -> None:
    for topic_filter, valid, key, offset in SPEC_FILTERS:
        problem = topic_filters.filter_problem(topic_filter, edition)
        assert (problem is None) is valid, (topic_filter, problem)
        if problem is not None:
            assert (problem.rule.key, problem.offset) == (key, offset), (topic_filter, problem)


def _model(edition: Edition, **readings: str) -> DistributionModel:
    return DistributionModel(edition, {k.replace("_", "-"): v for k, v in readings.items()})


def _publish(model: DistributionModel, topic: str, qos: int, **kw: object) -> object:
    return model.publish(Publication(publisher="pub", topic=topic, qos=qos, **kw))  # type: ignore[arg-type]


def check_min_qos(edition: Edition) -> None:
    """[MQTT-3.8.4-6] (5.0: 3.8.4-8) a copy goes at min(published QoS, granted QoS)."""
    for granted in (0, 1, 2):
        model = _model(edition)
        model.connect("sub", clean=True)
        model.subscribe("sub", 1, [("t", SubscriptionOptions(qos=granted))])
        for published in (0, 1, 2):
            outcome = _publish(model, "t", published, payload=b"x")
            (copy,) = outcome.copies  # type: ignore[attr-defined]
            assert copy.qos == min(published, granted), (edition, published, granted)


def check_live_retain_flag(edition: Edition) -> None:
    """[MQTT-3.3.1-9] a live forward has RETAIN 0; [MQTT-3.3.1-8] a retained message sent
    for a new subscription has RETAIN 1 (5.0 with Retain As Published 0)."""
    model = _model(edition)
    model.connect("sub", clean=True)
    model.subscribe("sub", 1, [("t", SubscriptionOptions(qos=1))])
    (live,) = _publish(model, "t", 1, payload=b"x", retain=True).copies  # type: ignore[attr-defined]
    assert live.retain is False
    model.connect("late", clean=True)
    (sub,) = model.subscribe("late", 2, [("t", SubscriptionOptions(qos=1))]).filters
    (retained,) = sub.retained
    assert retained.retain is True and retained.message.publication.payload == b"x"


def check_retain_as_published() -> None:
    """[MQTT-3.3.1-13] Retain As Published 1 keeps the RETAIN received; [MQTT-3.3.1-12] 0
    clears it."""
    for rap in (False, True):
        model = _model(V50)
        model.connect("sub", clean=True)
        model.subscribe("sub", 1, [("t", SubscriptionOptions(qos=0, retain_as_published=rap))])
        for flag in (False, True):
            (copy,) = _publish(model, "t", 0, payload=b"x", retain=flag).copies  # type: ignore[attr-defined]
            assert copy.retain is (flag and rap), (rap, flag)


def check_no_local() -> None:
    """[MQTT-3.8.3-3] No Local: no copy back to the publisher's own ClientID."""
    model = _model(V50)
    model.connect("me", clean=True)
    model.subscribe("me", 1, [("t", SubscriptionOptions(qos=1, no_local=True))])
    assert model.publish(Publication(publisher="me", topic="t", qos=1)).copies == ()
    assert len(model.publish(Publication(publisher="other", topic="t", qos=1)).copies) == 1


def check_overlap(edition: Edition) -> None:
    """[MQTT-3.3.5-1] (5.0: 3.3.4-2) overlapping subscriptions: one copy at the highest QoS
    (oracle, reading one-copy) or one per subscription; both allowed."""
    model = _model(edition)
    model.connect("sub", clean=True)
    model.subscribe("sub", 1, [("a/#", SubscriptionOptions(qos=0)),
                               ("a/+", SubscriptionOptions(qos=2)),
                               ("a/b", SubscriptionOptions(qos=1))])  # fmt: skip
    outcome = _publish(model, "a/b", 2, payload=b"x")
    (copy,) = outcome.copies  # type: ignore[attr-defined]
    assert copy.qos == 2 and set(copy.topic_filters) == {"a/#", "a/+", "a/b"}
    (delivery,) = outcome.deliveries  # type: ignore[attr-defined]
    assert delivery.judge([Shape(qos=2, retain=False)]) == []
    assert delivery.judge([Shape(qos=1, retain=False)]), "one copy below the highest QoS"
    per = [Shape(qos=0, retain=False), Shape(qos=2, retain=False), Shape(qos=1, retain=False)]
    assert delivery.judge(per) == []
    assert delivery.judge(per[:2]) == [], "extra copies for some of the others only"
    assert delivery.judge([per[0], per[2]]), "several copies, none at the highest QoS"
    model = _model(edition, overlapping_copies="per-subscription")
    model.connect("sub", clean=True)
    model.subscribe("sub", 1, [("a/#", SubscriptionOptions(qos=0)),
                               ("a/+", SubscriptionOptions(qos=2))])  # fmt: skip
    copies = _publish(model, "a/b", 2, payload=b"x").copies  # type: ignore[attr-defined]
    assert sorted(c.qos for c in copies) == [0, 2]


def check_subscription_identifiers() -> None:
    """[MQTT-3.3.4-3] identifiers are sent; [MQTT-3.3.4-4] one copy carries all;
    [MQTT-3.3.4-5] several copies carry their own."""
    model = _model(V50)
    model.connect("sub", clean=True)
    model.subscribe("sub", 1, [("a/#", SubscriptionOptions(qos=1))], subscription_identifier=3)
    model.subscribe("sub", 2, [("a/+", SubscriptionOptions(qos=1))], subscription_identifier=4)
    model.subscribe("sub", 3, [("a/b", SubscriptionOptions(qos=1))])
    outcome = _publish(model, "a/b", 1, payload=b"x")
    (copy,) = outcome.copies  # type: ignore[attr-defined]
    assert sorted(copy.subscription_identifiers) == [3, 4]
    (delivery,) = outcome.deliveries  # type: ignore[attr-defined]
    assert delivery.judge([Shape(qos=1, retain=False, subscription_identifiers=(3, 4))]) == []
    assert delivery.judge([Shape(qos=1, retain=False, subscription_identifiers=(3,))])
    own = [Shape(qos=1, retain=False, subscription_identifiers=(i,)) for i in (3, 4)]
    assert delivery.judge(own) == []
    assert delivery.judge([own[0], own[0]]), "the same subscription's copy twice"


def check_queue_offline(edition: Edition) -> None:
    """[MQTT-3.1.2-5] a persistent session away keeps new QoS 1 and 2 messages (QoS 0: 3.1
    never, 3.1.1 and 5.0 optionally) and gets them, in order, on reconnecting."""
    model = _model(edition)
    model.connect("sub", clean=False, session_expiry_interval=60 if edition is V50 else 0)
    model.subscribe("sub", 1, [("t", SubscriptionOptions(qos=2))])
    model.disconnect("sub")
    kept = [_publish(model, "t", q, payload=bytes([q])) for q in (2, 0, 1)]
    assert [len(o.copies) for o in kept] == [1, 0, 1]  # type: ignore[attr-defined]
    assert len(kept[1].optional) == (0 if edition is V31 else 1)  # type: ignore[attr-defined]
    again = model.connect("sub", clean=False, session_expiry_interval=60 if edition is V50 else 0)
    assert again.session_present and [c.qos for c in again.owed] == [2, 1]


def check_expiry() -> None:
    """[MQTT-3.3.2-5] a copy that expires before it starts is deleted; [MQTT-3.3.2-6] one
    sent carries the interval left."""
    model = _model(V50)
    model.connect("sub", clean=False, session_expiry_interval=3600)
    model.subscribe("sub", 1, [("t", SubscriptionOptions(qos=1))])
    model.disconnect("sub")
    _publish(model, "t", 1, payload=b"a", properties=Properties(message_expiry_interval=10))
    _publish(model, "t", 1, payload=b"b", properties=Properties(message_expiry_interval=100))
    clock = model.advance(10_000)
    assert [c.message.publication.payload for c in clock.expired] == [b"a"]
    model.advance(2_500)
    model.connect("sub", clean=False, session_expiry_interval=3600)
    copy, interval = model.send("sub")
    assert copy.message.publication.payload == b"b" and interval == 87


def check_session_expiry() -> None:
    """[MQTT-4.1.0-2] the session goes once its Session Expiry Interval has passed."""
    model = _model(V50)
    model.connect("sub", clean=False, session_expiry_interval=5)
    model.subscribe("sub", 1, [("t", SubscriptionOptions(qos=1))])
    model.disconnect("sub")
    _publish(model, "t", 1, payload=b"x")
    assert model.advance(4_999).ended == ()
    clock = model.advance(1)
    assert clock.ended == ("sub",) and len(clock.dropped) == 1
    assert model.connect("sub", clean=False, session_expiry_interval=5).session_present is False


def check_resubscribe_retained(edition: Edition) -> None:
    """3.1.1 [MQTT-3.8.4-3]: subscribing again to the same filter replaces the subscription
    and sends the retained messages again; 5.0 [MQTT-3.8.4-4] only with Retain Handling 0
    ([MQTT-3.3.1-10]: 1 sends only for a new subscription, [MQTT-3.3.1-11]: 2 never)."""
    model = _model(edition)
    _publish(model, "t", 1, payload=b"kept", retain=True)
    model.connect("sub", clean=True)
    handlings = list(RetainHandling) if edition is V50 else [RetainHandling.SEND]
    for handling in handlings:
        first = model.subscribe(
            "sub", 1, [("t", SubscriptionOptions(qos=1, retain_handling=handling))]
        )
        again = model.subscribe(
            "sub", 2, [("t", SubscriptionOptions(qos=0, retain_handling=handling))]
        )
        assert (first.filters[0].replaced, again.filters[0].replaced) == (False, True)
        new = len(first.filters[0].retained)
        repeat = len(again.filters[0].retained)
        assert new == (0 if handling is RetainHandling.DONT_SEND else 1), (edition, handling)
        if edition is not V50 or handling is RetainHandling.SEND:
            assert repeat == 1, (edition, handling)
        else:
            assert repeat == 0, (edition, handling)
        model.unsubscribe("sub", 3, ["t"])
        fresh = model.subscribe(
            "sub", 4, [("t", SubscriptionOptions(qos=1, retain_handling=handling))]
        )
        expected = 0 if handling is RetainHandling.DONT_SEND else 1
        assert len(fresh.filters[0].retained) == expected, (edition, handling)
        model.unsubscribe("sub", 5, ["t"])
    assert len(model.sessions["sub"].subscriptions) == 0


def check_shared_one_member() -> None:
    """5.0 4.8.2: a message matching a Shared Subscription goes to one member, at that
    member's granted QoS [MQTT-4.8.2-3]."""
    model = _model(V50)
    for name, qos in (("a", 2), ("b", 0)):
        model.connect(name, clean=True)
        model.subscribe(name, 1, [("$share/g/t/+", SubscriptionOptions(qos=qos))])
    outcome = _publish(model, "t/x", 2, payload=b"x")
    (offer,) = outcome.shared  # type: ignore[attr-defined]
    assert len(outcome.copies) == 1 and outcome.deliveries == ()  # type: ignore[attr-defined]
    assert offer.members == ("a", "b") and offer.chosen == "a"
    assert offer.judge({"b": [Shape(qos=0, retain=False)]}) == []
    assert offer.judge({"b": [Shape(qos=2, retain=False)]}), "above b's grant"
    assert offer.judge({"a": [Shape(qos=2, retain=False)], "b": [Shape(qos=0, retain=False)]})


def check_suback(edition: Edition) -> None:
    """[MQTT-3.8.4-5] a code per filter, in order [MQTT-3.9.3-1]: the QoS granted (at most
    the server's maximum) or a failure ([MQTT-3.8.3-2]; 5.0 0xA2)."""
    config = ServerConfig(maximum_qos=1, wildcard_subscriptions=edition is V31)
    model = DistributionModel(edition, config=config)
    model.connect("sub", clean=True)
    outcome = model.subscribe("sub", 7, [("a", SubscriptionOptions(qos=2)),
                                         ("b/#", SubscriptionOptions(qos=0)),
                                         ("c", SubscriptionOptions(qos=0))])  # fmt: skip
    refused = {V31: 0, V311: 0x80, V50: 0xA2}[edition]
    assert outcome.packet_id == 7 and outcome.codes == (1, refused, 0), outcome.codes


def check_order(edition: Edition) -> None:
    """[MQTT-4.6.0-6] (5.0: 4.6.0-5) the copies owed keep the publisher's order, and an
    order that breaks it is reported."""
    model = _model(edition)
    model.connect("sub", clean=True)
    model.subscribe("sub", 1, [("t/#", SubscriptionOptions(qos=2))])
    for n in range(4):
        _publish(model, "t/x", 1, payload=bytes([n]))
    owed = model.owed("sub")
    assert [c.message.seq for c in owed] == [1, 2, 3, 4]
    assert ordering_problems(owed, edition) == []
    swapped = [owed[1], owed[0], *owed[2:]]
    assert ordering_problems(swapped, edition), "message 2 before message 1"


def check_retained_store(edition: Edition) -> None:
    """[MQTT-3.3.1-5] store; [MQTT-3.3.1-10] an empty one deletes; [MQTT-3.3.1-11] and is
    not stored; [MQTT-3.3.1-12] RETAIN 0 leaves it."""
    model = _model(edition)
    store: RetainedStore = model.retained
    _publish(model, "t", 1, payload=b"one", retain=True)
    assert store.get("t") is not None and store.get("t").publication.payload == b"one"  # type: ignore[union-attr]
    _publish(model, "t", 1, payload=b"live")
    assert store.get("t").publication.payload == b"one"  # type: ignore[union-attr]
    _publish(model, "t", 1, payload=b"", retain=True)
    assert store.get("t") is None


def check_forwarded_properties() -> None:
    """5.0: every property unaltered [MQTT-3.3.2-4] [MQTT-3.3.2-15] [MQTT-3.3.2-16]
    [MQTT-3.3.2-20], the User Properties all and in order [MQTT-3.3.2-17] [MQTT-3.3.2-18],
    no Topic Alias [MQTT-3.3.2-7]."""
    model = _model(V50)
    model.connect("sub", clean=True)
    model.subscribe("sub", 1, [("t", SubscriptionOptions(qos=1))])
    props = Properties(
        payload_format_indicator=0,
        content_type="c",
        response_topic="r",
        correlation_data=b"d",
        user_properties=(("z", "1"), ("a", "2"), ("z", "3")),
        topic_alias=4,
    )
    (copy,) = _publish(model, "t", 1, properties=props).copies  # type: ignore[attr-defined]
    sent = copy.to_p(model.now)["properties"]
    assert sent == {
        "payload_format_indicator": 0,
        "response_topic": "r",
        "correlation_data_hex": "64",
        "user_properties": [["z", "1"], ["a", "2"], ["z", "3"]],
        "content_type": "c",
    }, sent
