"""The distribution judge (:mod:`pubproof.judge.distribution`): a server's copies, judged
across its links by the distribution model.

Each scenario is a short exchange written as a server that does what the model says; the
tests then break the server in one way each (a copy dropped, duplicated, upgraded, RETAIN
kept on a live copy, a property altered, an expired message sent, the retained message
missed or a replaced one sent) and hold the judge to the rule it must name, and to naming
nothing for the server that behaves. A judge that found nothing would fail every broken
case; one that found everything would fail the good ones.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.distribution_server import V50, Server, bad, rules

from pubproof.judge.distribution import DistributionJudge, judge_events
from pubproof.judge.distribution_events import C2S, S2C, Event, from_probe
from pubproof.judge.findings import MISSING, PASS, TOLERATED, VIOLATION, Finding


def tolerated(found: list[Finding]) -> set[str]:
    return {r for f in found if f.verdict == TOLERATED for r in f.rules}


# -- forwarding: which sessions, which QoS --------------------------------------------------


def _one_subscriber(published: int, granted: int, delivered: int | None) -> Server:
    server = Server()
    server.connect("sub")
    server.subscribe("sub", ("a/+", 2), granted=[granted])
    server.connect("pub")
    server.publish("pub", "a/b", b"m", published)
    if delivered is not None:
        server.deliver("sub", "a/b", b"m", delivered)
    return server


@pytest.mark.parametrize("published", [0, 1, 2])
@pytest.mark.parametrize("granted", [0, 1, 2])
def test_every_pair_of_published_and_granted_qos(published: int, granted: int) -> None:
    """[MQTT-3.8.4-6] "The QoS of Payload Messages sent in response to a Subscription MUST
    be the minimum of the QoS of the originally published message and the maximum QoS
    granted by the Server": the minimum passes, anything else is a violation, none is
    missing."""
    right = min(published, granted)
    assert _one_subscriber(published, granted, right).judge() == []
    for wrong in {0, 1, 2} - {right}:
        found = _one_subscriber(published, granted, wrong).judge()
        assert rules(found) == {(VIOLATION, "MQTT-3.8.4-6")}, (wrong, found)
    assert rules(_one_subscriber(published, granted, None).judge()) == {(MISSING, "MQTT-4.5.0-1")}


def test_a_client_that_never_subscribed_gets_nothing() -> None:
    server = _one_subscriber(1, 1, 1)
    server.connect("other")
    assert bad(server.judge()) == []
    server.deliver("other", "a/b", b"m", 1)
    found = server.judge()
    assert len(found) == 1 and found[0].verdict == VIOLATION
    assert "other" in found[0].message


@pytest.mark.parametrize(("first", "second"), [(0, 1), (1, 2), (2, 0), (1, 1)])
def test_overlapping_subscriptions_at_each_pair_of_granted_qos(first: int, second: int) -> None:
    """[MQTT-3.3.5-1] one copy at the highest granted QoS, or one copy per subscription
    (reading ``overlapping-copies``: the judge accepts both)."""
    highest = max(first, second)

    def run(*copies: int) -> list[Finding]:
        server = Server()
        server.connect("sub")
        server.subscribe("sub", ("a/#", first), ("a/b", second))
        server.connect("pub")
        server.publish("pub", "a/b", b"m", 2)
        for qos in copies:
            server.deliver("sub", "a/b", b"m", qos)
        return server.judge()

    assert bad(run(highest)) == []  # one copy at the highest QoS
    per_subscription = run(first, second)  # one per subscription: the MAY of 3.3.5
    assert bad(per_subscription) == []
    if first != second:
        assert tolerated(per_subscription) == {"MQTT-3.3.5-1"}
    if first != second:
        assert rules(run(min(first, second))) == {(VIOLATION, "MQTT-3.3.5-1")}


def test_the_publishers_duplicates_and_qos_2_exactly_once() -> None:
    server = _one_subscriber(2, 2, 2)
    server.deliver("sub", "a/b", b"m", 2)  # the same QoS 2 message twice
    assert rules(server.judge()) == {(VIOLATION, "MQTT-4.3.3-2")}
    server = _one_subscriber(1, 1, 1)
    server.deliver("sub", "a/b", b"m", 1)  # QoS 1: at least once
    assert bad(server.judge()) == []


def test_a_copy_sent_before_the_publishers_puback_is_owned_then() -> None:
    """A server may forward before it acknowledges: the copy shows it owned the message."""
    server = Server()
    server.connect("sub")
    server.subscribe("sub", ("t", 1))
    server.connect("pub")
    server._at("pub", C2S, {"type": "PUBLISH", "dup": False, "qos": 1, "retain": False,
                            "topic": "t", "packet_id": 7, "payload_hex": "6d"})  # fmt: skip
    server.deliver("sub", "t", b"m", 1)
    server._at("pub", S2C, {"type": "PUBACK", "packet_id": 7})
    assert bad(server.judge()) == []


# -- retained messages ------------------------------------------------------------------------


@pytest.mark.parametrize("qos", [0, 1, 2])
def test_a_retained_message_of_each_qos_goes_to_a_new_subscription(qos: int) -> None:
    """[MQTT-3.3.1-6] the retained message is sent when a subscription is made, with RETAIN
    1 [MQTT-3.3.1-8] at the minimum QoS; a QoS 0 retained message MAY be discarded
    [MQTT-3.3.1-7], so missing it is no finding."""

    def run(*, retain: bool = True, send: bool = True) -> list[Finding]:
        server = Server()
        server.connect("pub")
        server.publish("pub", "r", b"kept", qos, retain=True)
        server.connect("late")
        server.subscribe("late", ("r", 2))
        if send:
            server.deliver("late", "r", b"kept", qos, retain=retain)
        return server.judge()

    assert bad(run()) == []
    assert rules(run(retain=False)) == {(VIOLATION, "MQTT-3.3.1-8")}
    missed = run(send=False)
    if qos == 0:  # "MAY choose to discard it at any time"
        assert bad(missed) == [] and tolerated(missed) == {"MQTT-3.3.1-7"}
    else:
        assert rules(missed) == {(MISSING, "MQTT-3.3.1-6")}


def test_retain_is_cleared_on_live_copies() -> None:
    """[MQTT-3.3.1-9] a copy to an established subscription has RETAIN 0."""
    server = Server()
    server.connect("sub")
    server.subscribe("sub", ("r", 1))
    server.connect("pub")
    server.publish("pub", "r", b"v", 1, retain=True)
    server.deliver("sub", "r", b"v", 1, retain=True)
    found = server.judge()
    assert found and all(f.verdict == VIOLATION for f in found)


def test_a_replaced_or_deleted_retained_message_is_never_sent_again() -> None:
    """A QoS 0 retained message replaces the one before [MQTT-3.3.1-7]; a zero-byte one
    deletes it [MQTT-3.3.1-10]."""
    for second, rule in ((b"new", "MQTT-3.3.1-7"), (b"", "MQTT-3.3.1-10")):
        server = Server()
        server.connect("pub")
        server.publish("pub", "r", b"old", 1, retain=True)
        server.publish("pub", "r", second, 0, retain=True)
        server.connect("late")
        server.subscribe("late", ("r", 2))
        server.deliver("late", "r", b"old", 1, retain=True)
        assert (VIOLATION, rule) in rules(server.judge())


def test_with_passes_a_new_subscription_not_sent_a_deleted_retained_message_is_a_pass() -> None:
    """With ``passes``, a subscription made after a zero-byte retained message deleted the
    one before, and not sent it, gets a pass naming the store's rules [MQTT-3.3.1-10]
    [MQTT-3.3.1-11] (what exploration's coverage counts); sent it, a violation; a filter
    that does not match the topic, nothing."""

    def deleted(subscribed: str, sent: bool) -> list[Finding]:
        server = Server()
        server.connect("pub")
        server.publish("pub", "r", b"old", 1, retain=True)
        server.publish("pub", "r", b"", 0, retain=True)
        server.connect("late")
        server.subscribe("late", (subscribed, 1))
        if sent:
            server.deliver("late", "r", b"old", 1, retain=True)
        return judge_events(server.events, passes=True)

    said = [f for f in deleted("#", False) if "replaced or deleted, was not sent" in f.message]
    assert [(f.verdict, f.rules) for f in said] == [(PASS, ("MQTT-3.3.1-10", "MQTT-3.3.1-11"))]
    assert not [f for f in deleted("x", False) if "replaced or deleted" in f.message]
    assert not [f for f in deleted("#", True) if "was not sent" in f.message]


# -- sessions, 5.0 properties, expiry, order --------------------------------------------------


def test_a_persistent_session_gets_what_was_queued_while_it_was_away() -> None:
    server = Server()
    server.connect("sub", "s", clean=False)
    server.subscribe("sub", ("q", 1))
    server.close("sub")
    server.connect("pub")
    server.publish("pub", "q", b"queued", 1)
    server.connect("sub2", "s", clean=False)
    assert rules(server.judge()) == {(MISSING, "MQTT-4.5.0-1")}
    server.deliver("sub2", "q", b"queued", 1)
    assert bad(server.judge()) == []


def _five(**sent: Any) -> Server:
    server = Server(level=V50)
    server.connect("sub")
    server.subscribe("sub", ("p", 1))
    server.connect("pub")
    props = {"content_type": "text/plain", "user_properties": [["a", "1"], ["b", "2"]],
             "message_expiry_interval": 60}  # fmt: skip
    server.publish("pub", "p", b"x", 1, properties=props)
    server.wait(sent.pop("wait", 0.0))
    server.deliver("sub", "p", b"x", 1, properties={**props, **sent})
    return server


def test_5_0_properties_are_forwarded_unchanged_and_expiry_reduced() -> None:
    assert bad(_five().judge()) == []
    assert rules(_five(content_type="text/html").judge()) == {(VIOLATION, "MQTT-3.3.2-20")}
    reordered = _five(user_properties=[["b", "2"], ["a", "1"]]).judge()
    assert rules(reordered) == {(VIOLATION, "MQTT-3.3.2-18")}
    # waited 5 s: 60 is not reduced [MQTT-3.3.2-6]; 55 is right
    assert rules(_five(wait=5.0).judge()) == {(VIOLATION, "MQTT-3.3.2-6")}
    assert _five(wait=5.0, message_expiry_interval=55).judge() == []


def test_5_0_an_expired_message_is_not_sent() -> None:
    server = Server(level=V50)
    server.connect("sub", "s", clean=False, expiry=3600)
    server.subscribe("sub", ("e", 1))
    server.close("sub")
    server.connect("pub")
    server.publish("pub", "e", b"x", 1, properties={"message_expiry_interval": 2})
    server.wait(5.0)
    server.connect("sub2", "s", clean=False, expiry=3600)
    assert bad(server.judge()) == []  # expired while it was away: not owed
    server.deliver("sub2", "e", b"x", 1, properties={"message_expiry_interval": 0})
    assert rules(server.judge()) == {(VIOLATION, "MQTT-3.3.2-5")}


def test_5_0_no_local() -> None:
    server = Server(level=V50)
    server.connect("me")
    server.subscribe("me", ("n", 1), no_local=True)
    server.publish("me", "n", b"own", 1)
    assert bad(server.judge()) == []
    server.deliver("me", "n", b"own", 1)
    assert rules(server.judge()) == {(VIOLATION, "MQTT-3.8.3-3")}


def test_5_0_no_local_with_passes_says_why_the_publisher_got_nothing() -> None:
    """With ``passes``, the session a subscription's No Local excludes from its own message
    gets a pass naming the rule [MQTT-3.8.3-3]; without, nothing (the judge works it out
    only for the passes)."""
    server = Server(level=V50)
    server.connect("me")
    server.subscribe("me", ("n", 1), no_local=True)
    server.publish("me", "n", b"own", 1)
    assert server.judge() == []
    found = judge_events(server.events, passes=True)
    excluded = [f for f in found if "no copy of message 1, which its subscription" in f.message]
    assert [(f.verdict, f.rules) for f in excluded] == [(PASS, ("MQTT-3.8.3-3",))]


def test_5_0_a_copy_over_the_clients_maximum_packet_size_is_discarded() -> None:
    """[MQTT-3.1.2-25] "Where a Packet is too large to send, the Server MUST discard it
    without sending it and then behave as if it had completed sending that Application
    Message": not missing. A small one stays owed."""
    server = Server(level=V50)
    server.connect("sub", maximum_packet_size=64)
    server.subscribe("sub", ("m", 1))
    server.connect("pub")
    server.publish("pub", "m", b"L" * 100, 1)
    assert bad(server.judge()) == []
    server.publish("pub", "m", b"small", 1)
    assert rules(server.judge()) == {(MISSING, "MQTT-4.5.0-1")}


def test_the_order_of_one_publishers_messages_is_kept() -> None:
    """[MQTT-4.6.0-6] same topic, same QoS, from one client: in the order received."""
    server = Server()
    server.connect("sub")
    server.subscribe("sub", ("o", 1))
    server.connect("pub")
    server.publish("pub", "o", b"1", 1)
    server.publish("pub", "o", b"2", 1)
    server.deliver("sub", "o", b"2", 1)
    server.deliver("sub", "o", b"1", 1)
    assert rules(server.judge()) == {(VIOLATION, "MQTT-4.6.0-6")}


def test_a_subscription_in_flight_leaves_the_message_open() -> None:
    """A message received while the SUBSCRIBE is unanswered may or may not be forwarded."""
    server = Server()
    server.connect("pub")
    server.connect("sub")
    server._at("sub", C2S, {"type": "SUBSCRIBE", "packet_id": 1,
                            "subscriptions": [{"filter": "w", "qos": 1}]})  # fmt: skip
    server.publish("pub", "w", b"racing", 1)
    server._at("sub", S2C, {"type": "SUBACK", "packet_id": 1, "granted": [1]})
    assert bad(server.judge()) == []


def test_with_passes_the_judge_says_what_was_right() -> None:
    """With ``passes`` a server that does what the model says gets passes naming the rules
    that decided each copy; without, nothing."""
    server = _one_subscriber(2, 1, 1)
    assert server.judge() == []
    found = judge_events(server.events, passes=True)
    assert {f.verdict for f in found} == {PASS}
    assert "MQTT-3.8.4-6" in {r for f in found for r in f.rules}


def test_events_validate_themselves() -> None:
    with pytest.raises(ValueError, match="direction"):
        Event(t=0.0, conn="c", direction="up")
    with pytest.raises(ValueError, match="time"):
        Event(t=-1.0, conn="c")
    judge = DistributionJudge()
    judge.feed(Event(t=0.0, conn="c", direction=S2C, packet={"type": "PINGRESP"}))
    assert judge.finish() == []


# -- the committed evidence of real brokers ---------------------------------------------------


def _evidence(name: str, check: str) -> list[Event]:
    """A pinned conversation with a real broker (tests/conversations/README.md)."""
    pinned = Path(__file__).parent / "conversations" / f"{name.removesuffix('.json')}--{check}.json"
    return list(from_probe(json.loads(pinned.read_text("utf-8"))["evidence"]))


def test_real_brokers_faults_are_found_under_their_rules() -> None:
    """aedes delivers a QoS 2 message four times and sends a replaced retained message;
    amqtt upgrades QoS 0 to 2 and sends another topic's retained message to clients that
    never subscribed to it; mosquitto's overlapping subscriptions: one copy at QoS 1."""
    assert rules(judge_events(_evidence("aedes-3.1.1.json", "qos2.duplicates-before-pubrel"))) == {
        (VIOLATION, "MQTT-4.3.3-2")
    }
    replaced = judge_events(_evidence("aedes-3.1.1.json", "retain.qos0-replaces"))
    assert (VIOLATION, "MQTT-3.3.1-7") in rules(replaced)
    upgraded = judge_events(_evidence("amqtt-3.1.1.json", "flow.qos0"))
    assert rules(upgraded) == {(VIOLATION, "MQTT-3.8.4-6")}
    stranger = judge_events(_evidence("amqtt-3.1.1.json", "subscribe.qos2-to-qos0"))
    assert rules(stranger) == {(VIOLATION, "MQTT-3.3.2-3")}
    overlap = judge_events(_evidence("mosquitto-3.1.1.json", "subscribe.overlap-max-qos"))
    assert rules(overlap) == {(VIOLATION, "MQTT-3.3.5-1")}


def test_a_broker_that_does_what_the_model_says_is_judged_clean() -> None:
    for check in ("retain.new-subscription", "retain.zero-byte-deletes", "flow.qos2",
                  "session.resend-publish-qos2", "session.publisher-resends-publish"):  # fmt: skip
        assert bad(judge_events(_evidence("mosquitto-3.1.1.json", check))) == [], check
    for check in ("forward.user-properties", "forward.message-expiry-reduced",
                  "forward.subscription-identifiers-overlap", "retain.handling-1"):  # fmt: skip
        assert bad(judge_events(_evidence("mosquitto-5.0.json", check))) == [], check


def test_one_qos_2_copy_per_overlapping_subscription_is_no_duplicate_delivery() -> None:
    """5.0 lets a server send one copy per matching subscription [MQTT-3.3.4-5]; two
    subscriptions at QoS 2 with no Subscription Identifier send copies that look alike
    (mosquitto 2.0.11 does, met by exploration), which is not a QoS 2 message delivered
    twice [MQTT-4.3.3-10]; a third copy is."""

    def copies(count: int) -> list[Finding]:
        server = Server(level=V50)
        server.connect("s", "sub")
        server.subscribe("s", ("#", 2))
        server.subscribe("s", ("a", 2))
        server.connect("p", "pub")
        server.publish("p", "a", b"m", qos=2)
        for _ in range(count):
            server.deliver("s", "a", b"m", qos=2)
        return server.judge()

    assert bad(copies(2)) == []
    assert (VIOLATION, "MQTT-4.3.3-10") in rules(copies(3))
    assert bad(copies(1)) == []


def test_one_qos_1_copy_per_subscription_with_the_same_identifier_is_two_copies() -> None:
    """Two subscriptions with the same Subscription Identifier send copies that look alike:
    mosquitto 2.0.11 sends one per subscription, each with identifier 7 [MQTT-3.3.4-5]
    (met by exploration, which the judge had charged with a single copy missing an
    identifier, MQTT-3.3.4-4). One copy alone is judged as before (it needs both
    identifiers); more than the subscriptions give collapse to one (at least once)."""

    def copies(count: int, ids: tuple[int, ...] = (7,)) -> list[Finding]:
        server = Server(level=V50)
        server.connect("s", "sub")
        server.subscribe("s", ("a/+", 2), ident=7)
        server.subscribe("s", ("a/#", 1), ident=7)
        server.connect("p", "pub")
        server.publish("p", "a/b", b"m", qos=1)
        for _ in range(count):
            server.deliver("s", "a/b", b"m", qos=1,
                           properties={"subscription_identifiers": list(ids)})  # fmt: skip
        return server.judge()

    assert bad(copies(2)) == []
    assert tolerated(copies(2)) == {"MQTT-3.3.4-2"}  # one per subscription, as a reading
    assert bad(copies(3)) == []  # a third is the at-least-once of one of them
    assert rules(copies(1)) == {(VIOLATION, "MQTT-3.3.4-4")}
    assert bad(copies(1, (7, 7))) == []
