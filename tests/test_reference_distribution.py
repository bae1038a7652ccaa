"""The distribution core by example: each test one behaviour a broker relies on, with the
rule that asks for it (the stateful comparison with the model is
``test_reference_distribution_stateful.py``)."""

from __future__ import annotations

import pytest

from pubproof.model.editions import Edition
from pubproof.model.messages import Publication as ModelPublication
from pubproof.reference import Publish
from pubproof.reference.distribution import DistributionCore
from pubproof.reference.distribution_state import (
    Cause,
    Publication,
    RetainHandling,
    ServerConfig,
    SubscriptionOptions,
)
from pubproof.reference.errors import DistributionError, InvalidTopic, ProtocolError
from pubproof.reference.properties import PublishProperties

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50


def pub(topic: str = "a/b", qos: int = 1, **kw: object) -> Publication:
    return Publication(publisher=str(kw.pop("publisher", "p")), topic=topic, qos=qos, **kw)  # type: ignore[arg-type]


def opts(qos: int = 2, **kw: object) -> SubscriptionOptions:
    return SubscriptionOptions(qos=qos, **kw)  # type: ignore[arg-type]


def server(edition: Edition = V311, **readings: str) -> DistributionCore:
    core = DistributionCore(edition, {k.replace("_", "-"): v for k, v in readings.items()})
    for client in ("p", "s1", "s2"):
        core.connect(client, clean=True)
    return core


def shapes(core: DistributionCore, client: str) -> list[tuple[int, int, bool, tuple[int, ...]]]:
    return [(c.message.seq, c.qos, c.retain, c.subscription_identifiers) for c in core.owed(client)]


@pytest.mark.parametrize("edition", [V31, V311, V50])
def test_a_copy_goes_at_the_lower_of_the_published_and_granted_qos(edition: Edition) -> None:
    core = server(edition)
    assert core.subscribe("s1", 1, [("a/+", opts(1))]).codes == (1,)
    core.subscribe("s2", 2, [("#", opts(2))])
    out = core.publish(pub(qos=2, retain=True, payload=b"x"))
    assert sorted((c.client_id, c.qos, c.retain) for c in out.copies) == [
        ("s1", 1, False),  # [MQTT-3.8.4-6] the minimum; [MQTT-3.3.1-9] RETAIN 0 when live
        ("s2", 2, False),
    ]
    assert core.owed("s1") == (out.copies[0],) or core.owed("s1") == (out.copies[1],)


def test_the_maximum_qos_granted_is_the_servers() -> None:
    core = DistributionCore(V50, config=ServerConfig(maximum_qos=1))
    core.connect("s", clean=True)
    assert core.subscribe("s", 1, [("a", opts(2)), ("b", opts(0))]).codes == (1, 0)


def test_retain_as_published_and_no_local() -> None:
    core = server(V50)
    core.subscribe("s1", 1, [("a/b", opts(retain_as_published=True))])
    core.subscribe("p", 2, [("a/#", opts(no_local=True))])
    out = core.publish(pub(retain=True, payload=b"x"))
    # [MQTT-3.3.1-13] RETAIN as published; [MQTT-3.8.3-3] not to the publisher's own
    assert [(c.client_id, c.retain) for c in out.copies] == [("s1", True)]


def test_overlapping_subscriptions_give_one_copy_or_one_each() -> None:
    one = server(V50)
    one.subscribe("s1", 1, [("a/+", opts(0))], subscription_identifier=7)
    one.subscribe("s1", 2, [("a/#", opts(2))], subscription_identifier=3)
    one.publish(pub(qos=2))
    # [MQTT-3.3.5-1] the highest QoS, [MQTT-3.3.4-4] every identifier
    assert shapes(one, "s1") == [(1, 2, False, (3, 7))]
    assert one.owed("s1")[0].topic_filters == ("a/+", "a/#")
    each = server(V50, overlapping_copies="per-subscription")
    each.subscribe("s1", 1, [("a/+", opts(0))], subscription_identifier=7)
    each.subscribe("s1", 2, [("a/#", opts(2))], subscription_identifier=3)
    each.publish(pub(qos=2))
    # [MQTT-3.3.4-5] each copy with its own subscription's identifier
    assert shapes(each, "s1") == [(1, 0, False, (7,)), (1, 2, False, (3,))]


def test_a_shared_subscription_gives_each_message_to_one_member() -> None:
    core = server(V50)
    core.connect("s1", clean=False, session_expiry_interval=60)
    core.subscribe("s1", 1, [("$share/g/a/+", opts(1))])
    core.subscribe("s2", 2, [("$share/g/a/+", opts(2))])
    assert [c.client_id for c in core.publish(pub(qos=2)).copies] == ["s1"]
    core.disconnect("s1")  # still a member, not connected
    (copy,) = core.publish(pub(qos=2)).copies
    assert (copy.client_id, copy.qos, copy.topic_filters) == ("s2", 2, ("$share/g/a/+",))
    assert list(core.shared()) == ["$share/g/a/+"]
    assert list(core.shared()["$share/g/a/+"]) == ["s1", "s2"]  # in joining order


def test_retained_messages_on_subscribe_by_retain_handling() -> None:
    core = server(V50)
    core.publish(pub("a/b", qos=2, retain=True, payload=b"x"))
    core.publish(pub("a/c", qos=0, retain=True, payload=b"y"))
    new = core.subscribe("s1", 1, [("a/#", opts(1))])
    # [MQTT-3.3.1-9] sent on a new subscription, RETAIN 1, at the lower QoS, by topic
    (found,) = new.filters
    assert [(c.topic, c.qos, c.retain, c.cause) for c in found.retained] == [
        ("a/b", 1, True, Cause.RETAINED),
        ("a/c", 0, True, Cause.RETAINED),
    ]
    assert found.may_miss == (found.retained[1].copy_id,)  # a QoS 0 one may be gone
    again = core.subscribe("s1", 2, [("a/#", opts(1, retain_handling=RetainHandling.SEND_IF_NEW))])
    assert again.filters[0].replaced and again.filters[0].retained == ()  # [MQTT-3.3.1-10]
    never = core.subscribe("s2", 3, [("a/#", opts(1, retain_handling=RetainHandling.DONT_SEND))])
    assert never.filters[0].retained == ()  # [MQTT-3.3.1-11]
    shared = core.subscribe("s2", 4, [("$share/g/a/#", opts(1))])
    assert shared.filters[0].retained == ()  # never to a Shared Subscription


def test_the_retained_store() -> None:
    core = server(V311)
    first = core.publish(pub("t", retain=True, payload=b"1")).message
    assert core.retained.get("t") == first  # [MQTT-3.3.1-5]
    core.publish(pub("t", retain=False, payload=b"2"))
    assert core.retained.get("t") == first  # [MQTT-3.3.1-12] RETAIN 0 leaves it
    change = core.publish(pub("t", retain=True, payload=b"")).retained
    assert change is not None and change.after is None  # [MQTT-3.3.1-10]
    assert change.rule_ids == ("MQTT-3.3.1-10", "MQTT-3.3.1-11")
    assert core.retained.get("t") is None
    assert core.publish(pub("t", retain=False)).retained is None


def test_a_persistent_session_queues_and_resumes() -> None:
    core = server(V311)
    core.connect("s1", clean=False)
    core.subscribe("s1", 1, [("a/b", opts(2))])
    core.disconnect("s1")
    core.publish(pub(qos=1))
    core.publish(pub(qos=0))  # [MQTT-3.1.2-5] "MAY also store QoS 0": kept as optional
    back = core.connect("s1", clean=False)
    assert back.session_present
    assert [(c.message.seq, c.qos) for c in back.owed] == [(1, 1)]
    assert [(c.message.seq, c.qos) for c in back.optional] == [(2, 0)]
    queued = server(V311, queue_qos0="queue")
    queued.connect("s1", clean=False)
    queued.subscribe("s1", 1, [("a/b", opts(2))])
    queued.disconnect("s1")
    queued.publish(pub(qos=0))
    assert [c.qos for c in queued.connect("s1", clean=False).owed] == [0]


def test_mqtt_3_1_never_stores_qos_0() -> None:
    core = server(V31)
    core.connect("s1", clean=False)
    core.subscribe("s1", 1, [("a/b", opts(2))])
    core.disconnect("s1")
    out = core.publish(pub(qos=0))
    assert (out.copies, out.optional) == ((), ())  # "QoS 0 messages are never stored"


def test_clean_session_and_takeover() -> None:
    core = server(V311)
    core.subscribe("s1", 1, [("a/b", opts(1))])
    core.publish(pub())
    taken = core.connect("s1", clean=True)  # [MQTT-3.1.4-2] the old connection goes first
    assert not taken.session_present and [c.message.seq for c in taken.dropped] == [1]
    assert core.publish(pub()).copies == ()  # the subscription went with the session


def test_message_expiry_before_and_after_the_copy_starts() -> None:
    core = server(V50)
    core.subscribe("s1", 1, [("a/b", opts(1))])
    core.subscribe("s2", 2, [("a/b", opts(1))])
    core.publish(pub(properties=PublishProperties(message_expiry_interval=10)))
    core.advance(3_500)
    copy, interval = core.send("s1")
    assert interval == 6  # [MQTT-3.3.2-6] the received value minus the time waited
    out = core.advance(6_500)  # s2's copy never started: deleted [MQTT-3.3.2-5]
    assert [c.client_id for c in out.expired] == ["s2"] and out.rules == ("MQTT-3.3.2-5",)
    assert core.sessions["s1"].under_way == {copy.copy_id: copy}  # started: it stays


def test_a_retained_message_expires() -> None:
    core = server(V50)
    core.publish(
        pub("t", retain=True, payload=b"x", properties=PublishProperties(message_expiry_interval=2))
    )
    assert core.advance(1_999).retained == ()
    (change,) = core.advance(1).retained
    assert change.topic == "t" and core.retained.get("t") is None


def test_a_session_expires_after_its_interval() -> None:
    core = server(V50)
    core.connect("s1", clean=False, session_expiry_interval=5)
    core.subscribe("s1", 1, [("a/b", opts(1))])
    core.disconnect("s1")
    core.publish(pub())
    assert core.advance(4_999).ended == ()
    out = core.advance(1)
    assert out.ended == ("s1",) and len(out.dropped) == 1  # [MQTT-4.1.0-2]
    assert out.rules == ("MQTT-4.1.0-2",)
    core.connect("s2", clean=False, session_expiry_interval=5)
    core.disconnect("s2")
    core.connect("s2", clean=False, session_expiry_interval=5)  # back in time
    assert core.advance(10_000).ended == ()


def test_unsubscribe_deletes_the_same_string_and_keeps_what_is_queued() -> None:
    core = server(V50)
    core.subscribe("s1", 1, [("a/+", opts(1)), ("$share/g/a/b", opts(1))])
    core.publish(pub())
    out = core.unsubscribe("s1", 9, ["a/b", "a/+", "$share/g/a/b"])
    assert out.codes == (0x11, 0x00, 0x00) and out.deleted == ("a/+", "$share/g/a/b")
    # its two copies (one of a/+, one of the Shared Subscription) are still owed
    assert len(out.buffered) == 2 and core.owed("s1") == out.buffered
    assert core.publish(pub()).copies == ()
    assert core.unsubscribe("s1", 10, []).closed == "MQTT-3.10.3-2"


def test_an_invalid_topic_filter_names_its_rule_and_byte_offset() -> None:
    core = server(V311)
    out = core.subscribe("s1", 1, [("a", opts()), ("sport/tennis#", opts())])
    assert out.codes == () and out.closed == "MQTT-4.7.1-2"
    assert out.error is not None and out.error.offset == 12
    wide = server(V50).subscribe("s1", 1, [("é/+é", opts())])
    assert wide.error is not None and (wide.error.rule, wide.error.offset) == ("MQTT-4.7.1-2", 3)
    assert wide.error.reason_code == 0x81  # 5.0: a Malformed Packet
    refused = server(V311, invalid_filter="refuse").subscribe(
        "s1", 1, [("a/#/b", opts()), ("a", opts(1))]
    )
    assert refused.codes == (0x80, 1) and refused.filters[0].rule_ids[-1] == "MQTT-4.7.1-2"
    assert server(V50).subscribe("s1", 1, [("$share/g/a", opts(no_local=True))]).closed == (
        "MQTT-3.8.3-4"
    )


def test_an_invalid_topic_name_raises_with_its_rule_and_offset() -> None:
    core = server(V311)
    with pytest.raises(InvalidTopic) as raised:
        core.publish(pub("a/b+"))
    assert (raised.value.rule, raised.value.offset) == ("MQTT-3.3.2-2", 3)
    with pytest.raises(InvalidTopic) as raised:
        server(V50).publish(pub("ü\x00"))
    assert (raised.value.rule, raised.value.offset, raised.value.reason_code) == (
        "MQTT-4.7.3-2",
        2,
        0x81,  # the wire rule's: a Malformed Packet
    )


def test_mqtt_3_1_topic_names_under_its_readings() -> None:
    core = server(V31)  # topic-rules=utf8-only, dollar-topics=plain
    core.subscribe("s1", 1, [("#", opts(1))])
    core.subscribe("s2", 2, [("", opts(1))])
    assert {c.client_id for c in core.publish(pub("")).copies} == {"s1", "s2"}
    assert [c.client_id for c in core.publish(pub("a/+")).copies] == ["s1"]
    assert [c.client_id for c in core.publish(pub("$SYS/x")).copies] == ["s1"]
    strict = server(V31, topic_rules="as-3.1.1", dollar_topics="as-3.1.1")
    strict.subscribe("s1", 1, [("#", opts(1))])
    assert strict.publish(pub("$SYS/x")).copies == ()
    with pytest.raises(InvalidTopic) as raised:
        strict.publish(pub(""))
    assert raised.value.rule == "PP31-3.3-topic-empty"


def test_events_the_core_cannot_take_raise_its_own_error() -> None:
    core = server(V311)
    for call in (
        lambda: core.subscribe("nobody", 1, [("a", opts())]),
        lambda: core.send("s1"),
        lambda: core.complete("s1", 99),
        lambda: core.advance(-1),
        lambda: core.connect("s1", clean=True, session_expiry_interval=5),
        lambda: core.subscribe("s1", 1, [("a", opts(no_local=True))]),
        lambda: core.subscribe("s1", 1, [("a", opts())], subscription_identifier=1),
        lambda: core.unsubscribe("s1", 1, "a/b"),
        lambda: core.publish(object()),  # type: ignore[arg-type]
        lambda: DistributionCore(V311, {"no-such-reading": "x"}),
        lambda: DistributionCore(V31, config=ServerConfig(wildcard_subscriptions=False)),
    ):
        with pytest.raises(DistributionError) as raised:
            call()
        assert isinstance(raised.value, ProtocolError)
    with pytest.raises(DistributionError) as raised:
        core.subscribe("nobody", 1, [("a", opts())])
    assert raised.value.rule == "MQTT-3.1.0-1"


def test_publications_from_a_packet_or_the_model() -> None:
    core = server(V50)
    core.subscribe("s1", 1, [("a/b", opts())])
    packet = Publish(
        topic="a/b",
        payload=b"x",
        qos=1,
        packet_id=3,
        properties=PublishProperties(message_expiry_interval=9),
    )
    mine = core.publish(Publication.from_packet("p", packet))
    assert mine.message.expires_at == 9_000
    theirs = core.publish(ModelPublication(publisher="p", topic="a/b", qos=2))
    assert [c.qos for c in theirs.copies] == [2]


def test_a_copy_is_the_publish_a_broker_sends() -> None:
    core = server(V50)
    core.subscribe("s1", 1, [("a/#", opts(1))], subscription_identifier=5)
    props = PublishProperties(
        message_expiry_interval=30,
        topic_alias=4,
        user_properties=(("k", "v"),),
        content_type="text/plain",
    )
    core.publish(pub(qos=2, retain=True, payload=b"hi", properties=props))
    core.advance(10_400)
    copy, interval = core.send("s1")
    packet = copy.to_packet(packet_id=17, message_expiry_interval=interval, v50=True)
    assert (packet.topic, packet.payload, packet.qos, packet.packet_id, packet.dup) == (
        "a/b",
        b"hi",
        1,
        17,
        False,
    )
    assert packet.retain is False  # [MQTT-3.3.1-12] a live copy
    assert packet.properties == PublishProperties(
        message_expiry_interval=19,  # [MQTT-3.3.2-6]
        user_properties=(("k", "v"),),
        content_type="text/plain",
        subscription_identifiers=(5,),  # no Topic Alias [MQTT-3.3.2-7]
    )
    old = server(V311)
    old.subscribe("s1", 1, [("a/b", opts(0))])
    old.publish(pub(qos=1, payload=b"x"))
    copy, interval = old.send("s1")
    assert copy.to_packet(packet_id=None, message_expiry_interval=interval, v50=False) == Publish(
        topic="a/b", payload=b"x"
    )
