"""The server's distribution model (pubproof.model.distribution): sessions, SUBSCRIBE and
UNSUBSCRIBE, Shared Subscriptions, ordering and time, by the rules of each edition; its
readings; and the distribution rules in the registry, each named by a test here or beside
(tests/test_topic_filters.py, test_retained_store.py, test_forwarding.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from support.distribution_checks import (
    check_order,
    check_queue_offline,
    check_resubscribe_retained,
    check_session_expiry,
    check_shared_one_member,
    check_suback,
)

from pubproof.model.distribution import DistributionError, DistributionModel
from pubproof.model.distribution_readings import (
    DISTRIBUTION_READINGS,
    resolve_distribution_readings,
)
from pubproof.model.distribution_rules import distribution_rules
from pubproof.model.editions import READINGS, Edition, ReadingError
from pubproof.model.flows import Method
from pubproof.model.messages import Properties, Publication, ownership_point
from pubproof.model.ordering import ordering_problems, ordering_rules
from pubproof.model.rules import RULES, Kind
from pubproof.model.subscriptions import (
    OptionsProblem,
    RetainHandling,
    ServerConfig,
    SubscriptionOptions,
    options_from_byte,
)

from conftest import ROOT

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50
ALL = list(Edition)
Q1 = SubscriptionOptions(qos=1)


def pub(topic: str = "t", qos: int = 1, **kw: object) -> Publication:
    return Publication(publisher="p", topic=topic, qos=qos, **kw)  # type: ignore[arg-type]


# -- sessions ----------------------------------------------------------------------------


def test_a_3_1_1_clean_session_ends_with_its_connection() -> None:
    # [MQTT-3.1.2-6] "MUST discard any previous Session and start a new one"
    model = DistributionModel(V311)
    assert model.connect("c", clean=True).rules == ("MQTT-3.1.2-6",)
    model.subscribe("c", 1, [("t", Q1)])
    ended = model.disconnect("c")
    assert ended.session_ended and "c" not in model.sessions
    assert model.connect("c", clean=False).session_present is False


def test_a_3_1_1_persistent_session_resumes_with_what_it_kept() -> None:
    # [MQTT-3.1.2-4] "resume communications ... MUST store the Session after the Client and
    # Server are disconnected"; [MQTT-3.1.2-5] QoS 1 and 2 messages kept; [MQTT-4.4.0-1]
    model = DistributionModel(V311)
    assert model.connect("c", clean=False).rules == ("MQTT-3.1.2-4",)
    model.subscribe("c", 1, [("t", SubscriptionOptions(qos=2))])
    model.publish(pub(qos=2))
    copy, _ = model.send("c")
    assert model.disconnect("c").rules == ("MQTT-3.1.2-5",)
    back = model.connect("c", clean=False)
    assert back.session_present and back.resend == (copy,)
    assert back.rules == ("MQTT-3.1.2-4", "MQTT-3.1.2-5", "MQTT-4.4.0-1")
    # a clean connect discards it, and what it held
    again = model.connect("c", clean=True)
    assert again.dropped == (copy,) and again.session_present is False


@pytest.mark.parametrize("edition", ALL, ids=lambda e: e.value)
def test_a_persistent_session_keeps_qos_1_and_2_for_its_return(edition: Edition) -> None:
    # [MQTT-3.1.2-5] / 3.1 "continuing to store QoS 1 and QoS 2 messages"; 3.1 "QoS 0
    # messages are never stored" (PP31-3.1-qos0-not-stored); 5.0 "OPTIONALLY QoS 0"
    # (PP50-4.1-pending-messages)
    check_queue_offline(edition)
    model = DistributionModel(edition)
    model.connect("c", clean=False, session_expiry_interval=9 if edition is V50 else 0)
    model.subscribe("c", 1, [("t", Q1)])
    model.disconnect("c")
    out = model.publish(pub(qos=0))
    rules = {
        V31: "PP31-3.1-qos0-not-stored",
        V311: "MQTT-3.1.2-5",
        V50: "PP50-4.1-pending-messages",
    }
    cited = out.optional[0].rules if out.optional else ()
    assert edition is V31 or rules[edition] in cited


def test_qos0_is_kept_for_an_absent_session_under_reading_queue_qos0() -> None:
    model = DistributionModel(V311, {"queue-qos0": "queue"})
    model.connect("c", clean=False)
    model.subscribe("c", 1, [("t", Q1)])
    model.disconnect("c")
    assert len(model.publish(pub(qos=0)).copies) == 1


def test_mqtt_3_1_clean_session_flag() -> None:
    # 3.1 "If set (1), then the server must discard any previously maintained information
    # about the client" (PP31-3.1-clean-session-1); "If not set (0), then the server must
    # store the subscriptions of the client after it disconnects" (PP31-3.1-clean-session-0)
    model = DistributionModel(V31)
    assert model.connect("c", clean=True).rules == ("PP31-3.1-clean-session-1",)
    model.disconnect("c")
    model.connect("d", clean=False)
    assert model.disconnect("d").rules == ("PP31-3.1-clean-session-0",)


def test_5_0_clean_start_and_session_expiry() -> None:
    # [MQTT-3.1.2-6] create; [MQTT-3.1.2-5] resume; [MQTT-3.1.2-4] discard; [MQTT-3.1.2-23]
    model = DistributionModel(V50)
    assert model.connect("c", clean=False, session_expiry_interval=30).rules == ("MQTT-3.1.2-6",)
    model.subscribe("c", 1, [("t", Q1)])
    assert model.disconnect("c").rules == ("MQTT-3.1.2-23",)
    back = model.connect("c", clean=False, session_expiry_interval=30)
    assert back.session_present and back.rules[0] == "MQTT-3.1.2-5"
    model.disconnect("c")
    fresh = model.connect("c", clean=True)
    assert fresh.rules == ("MQTT-3.1.2-4",) and not fresh.session_present
    # Session Expiry Interval 0 (or absent): the session ends with the connection
    assert model.disconnect("c").session_ended
    # DISCONNECT may shorten it, but not lengthen a 0 from CONNECT (a Protocol Error)
    model.connect("d", clean=True, session_expiry_interval=0)
    assert model.disconnect("d", session_expiry_interval=50).session_ended
    model.connect("e", clean=True, session_expiry_interval=50)
    assert model.disconnect("e", session_expiry_interval=0).session_ended
    check_session_expiry()  # [MQTT-4.1.0-2]
    with pytest.raises(DistributionError, match="no Session Expiry Interval"):
        DistributionModel(V311).connect("c", clean=True, session_expiry_interval=5)


def test_a_second_connection_for_a_client_takes_its_session_over() -> None:
    model = DistributionModel(V311)
    model.connect("c", clean=False)
    model.subscribe("c", 1, [("t", Q1)])
    assert model.connect("c", clean=False).session_present
    assert model.sessions["c"].subscriptions.keys() == {"t"}


def test_events_the_model_cannot_take_are_refused() -> None:
    model = DistributionModel(V311)
    with pytest.raises(DistributionError, match="no session"):
        model.subscribe("nobody", 1, [("t", Q1)])
    model.connect("c", clean=False)
    model.disconnect("c")
    for call in (lambda: model.disconnect("c"), lambda: model.subscribe("c", 1, [("t", Q1)]),
                 lambda: model.unsubscribe("c", 1, ["t"]), lambda: model.send("c")):  # fmt: skip
        with pytest.raises(DistributionError, match="not connected"):
            call()
    with pytest.raises(DistributionError, match="whole milliseconds"):
        model.advance(-1)
    with pytest.raises(DistributionError, match=r"MQTT-3\.3\.2-2"):
        model.publish(pub(topic="a/#"))
    with pytest.raises(ValueError, match=r"3\.1 server has wildcards"):
        DistributionModel(V31, config=ServerConfig(wildcard_subscriptions=False))


# -- SUBSCRIBE, SUBACK, UNSUBSCRIBE, UNSUBACK ----------------------------------------------


@pytest.mark.parametrize("edition", ALL, ids=lambda e: e.value)
def test_suback_codes(edition: Edition) -> None:
    # [MQTT-3.8.4-5] "MUST either show the maximum QoS that was granted for that Subscription
    # or indicate that the subscription failed"; [MQTT-3.8.3-2] no wildcard support: reject
    check_suback(edition)
    model = DistributionModel(edition)
    model.connect("c", clean=True)
    out = model.subscribe("c", 3, [("a", Q1)])
    # [MQTT-3.8.4-1] [MQTT-3.8.4-2] [MQTT-3.9.3-1] [MQTT-3.9.3-2]; 5.0 [MQTT-3.8.4-7]
    expected = {"MQTT-3.8.4-1", "MQTT-3.8.4-2", "MQTT-3.9.3-1", "MQTT-3.9.3-2"}
    assert expected <= set(out.rules)
    assert ("MQTT-3.8.4-7" in out.rules) is (edition is V50)
    # [MQTT-3.8.4-4] (5.0 -5) one filter after another, one code each [MQTT-3.8.4-5] (5.0 -6)
    sequence = (
        ("MQTT-3.8.4-4", "MQTT-3.8.4-5") if edition is not V50 else ("MQTT-3.8.4-5", "MQTT-3.8.4-6")
    )
    assert out.filters[0].rule_ids[:2] == sequence


def test_why_5_0_refuses_a_topic_filter() -> None:
    config = ServerConfig(shared_subscriptions=False, subscription_identifiers=False,
                          wildcard_subscriptions=False)  # fmt: skip
    model = DistributionModel(V50, config=config)
    model.connect("c", clean=True)
    out = model.subscribe("c", 1, [("a/+", Q1), ("$share/g/a", Q1), ("a", Q1)])
    assert out.codes == (0xA2, 0x9E, 1)
    assert out.filters[0].rule_ids[-1] == "PP50-3.9.3-wildcards-not-supported"
    assert out.filters[1].rule_ids[-1] == "PP50-3.9.3-shared-not-supported"
    out = model.subscribe("c", 2, [("a", Q1)], subscription_identifier=4)
    assert (
        out.codes == (0xA1,)
        and out.filters[0].rule_ids[-1] == "PP50-3.9.3-identifiers-not-supported"
    )
    assert model.subscribe("c", 3, [("a", Q1)], subscription_identifier=0).closed == (
        "PP50-3.8.2.1.2-identifier-range"
    )


def test_a_subscribe_the_server_must_close_on() -> None:
    model = DistributionModel(V311)
    model.connect("c", clean=True)
    # [MQTT-3.8.3-3] "A SUBSCRIBE packet with no payload is a protocol violation"
    assert model.subscribe("c", 1, []).closed == "MQTT-3.8.3-3"
    # reading invalid-filter=close (the default): the filter's rule
    out = model.subscribe("c", 1, [("a", Q1), ("a/#/b", Q1)])
    assert (
        out.closed == "MQTT-4.7.1-2" and out.codes == () and model.sessions["c"].subscriptions == {}
    )
    refusing = DistributionModel(V311, {"invalid-filter": "refuse"})
    refusing.connect("c", clean=True)
    out = refusing.subscribe("c", 1, [("a", Q1), ("a/#/b", Q1)])
    assert out.codes == (1, 0x80) and out.filters[1].rule_ids[-1] == "MQTT-4.7.1-2"
    five = DistributionModel(V50)
    five.connect("c", clean=True)
    assert five.subscribe("c", 1, []).closed == "MQTT-3.8.3-2"
    # [MQTT-3.8.3-4] "It is a Protocol Error to set the No Local bit to 1 on a Shared Subscription"
    no_local = SubscriptionOptions(qos=0, no_local=True)
    assert five.subscribe("c", 1, [("$share/g/t", no_local)]).closed == "MQTT-3.8.3-4"
    with pytest.raises(DistributionError, match="no such options"):
        model.subscribe("c", 1, [("t", no_local)])


def test_options_bytes() -> None:
    # [MQTT-3-8.3-4] (3.1.1): reserved bits, or QoS not 0, 1 or 2: malformed
    assert options_from_byte(0x02, V311) == SubscriptionOptions(qos=2)
    for byte in (0x03, 0x04, 0x80):
        problem = options_from_byte(byte, V311)
        assert isinstance(problem, OptionsProblem) and problem.rule_id == "MQTT-3.8.3-4"
    # [MQTT-3.8.3-5] (5.0): bits 6 and 7 reserved; Maximum QoS 3 and Retain Handling 3 are
    # Protocol Errors (PP50-3.8.3.1-options-value)
    assert options_from_byte(0x2D, V50) == SubscriptionOptions(
        qos=1, no_local=True, retain_as_published=True, retain_handling=RetainHandling.DONT_SEND
    )
    assert options_from_byte(0x40, V50).rule_id == "MQTT-3.8.3-5"  # type: ignore[union-attr]
    for byte in (0x03, 0x30):
        problem = options_from_byte(byte, V50)
        assert isinstance(problem, OptionsProblem) and not problem.malformed
        assert problem.rule_id == "PP50-3.8.3.1-options-value"


@pytest.mark.parametrize("edition", ALL, ids=lambda e: e.value)
def test_subscribing_again_replaces_and_resends_the_retained_messages(edition: Edition) -> None:
    # 3.1.1 [MQTT-3.8.4-3]; 5.0 [MQTT-3.8.4-3] [MQTT-3.8.4-4] with Retain Handling
    # [MQTT-3.3.1-9] [MQTT-3.3.1-10] [MQTT-3.3.1-11]
    check_resubscribe_retained(edition)
    model = DistributionModel(edition)
    model.connect("c", clean=True)
    model.subscribe("c", 1, [("t", SubscriptionOptions(qos=0))])
    out = model.subscribe("c", 2, [("t", SubscriptionOptions(qos=2))])
    assert out.filters[0].replaced and model.sessions["c"].subscriptions["t"].granted_qos == 2
    replace = {V31: "MQTT-3.8.4-3", V311: "MQTT-3.8.4-3", V50: "MQTT-3.8.4-3"}[edition]
    assert replace in out.filters[0].rule_ids
    if edition is V50:
        assert "MQTT-3.8.4-4" in out.filters[0].rule_ids


def test_a_subscription_identifier_is_stored_and_replaced() -> None:
    # 3.8.2.1.2 (PP50-3.8.2.1.2-identifier-stored): "the absence of a Subscription
    # Identifier is stored with the subscription"
    model = DistributionModel(V50)
    model.connect("c", clean=True)
    out = model.subscribe("c", 1, [("t", Q1)], subscription_identifier=5)
    assert "PP50-3.8.2.1.2-identifier-stored" in out.filters[0].rule_ids
    assert model.sessions["c"].subscriptions["t"].subscription_identifier == 5
    model.subscribe("c", 2, [("t", Q1)])
    assert model.sessions["c"].subscriptions["t"].subscription_identifier is None


@pytest.mark.parametrize("edition", ALL, ids=lambda e: e.value)
def test_unsubscribe(edition: Edition) -> None:
    model = DistributionModel(edition)
    model.connect("c", clean=True)
    model.subscribe("c", 1, [("a/#", SubscriptionOptions(qos=2)), ("b", Q1)])
    model.publish(pub(topic="a/x", qos=2))
    started, _ = model.send("c")
    model.publish(pub(topic="a/y", qos=2))
    # [MQTT-3.10.4-1] "compared character-by-character": a/+ is not a/#, so nothing goes
    out = model.unsubscribe("c", 9, ["a/+", "a/#"])
    assert out.packet_id == 9 and out.deleted == ("a/#",)
    # [MQTT-3.11.3-1] [MQTT-3.11.3-2] 5.0 Reason Codes in order: 0x11, then 0x00
    assert out.codes == ((0x11, 0x00) if edition is V50 else ())
    for rule in ("MQTT-3.10.4-1", "MQTT-3.10.4-2", "MQTT-3.10.4-3", "MQTT-3.10.4-4",
                 "MQTT-3.10.4-5", "MQTT-3.10.4-6"):  # fmt: skip
        assert rule in out.rules
    assert ("MQTT-3.11.3-1" in out.rules) is (edition is V50)
    assert ("MQTT-3.11.3-2" in out.rules) is (edition is V50)
    # [MQTT-3.10.4-3] the copy under way stays; "It MAY continue to deliver any existing
    # messages buffered": the one owed is listed as such
    assert started.copy_id in model.sessions["c"].under_way
    assert [c.topic for c in out.buffered] == ["a/y"]
    # [MQTT-3.10.4-2] nothing new for the deleted subscription
    assert model.publish(pub(topic="a/z")).copies == ()
    # [MQTT-3.10.4-5] an UNSUBACK even when nothing was deleted
    assert model.unsubscribe("c", 10, ["zz"]).deleted == ()
    # [MQTT-3.10.3-2] no filter; [MQTT-3.10.3-1] not a UTF-8 string
    assert model.unsubscribe("c", 11, []).closed == "MQTT-3.10.3-2"
    assert model.unsubscribe("c", 12, ["\udc00"]).closed == "MQTT-3.10.3-1"


# -- Shared Subscriptions (5.0) ------------------------------------------------------------


def test_shared_subscriptions() -> None:
    # PP50-4.8.2-one-member; [MQTT-4.8.2-3] each member at its own grant
    check_shared_one_member()
    model = DistributionModel(V50)
    for name in ("a", "b"):
        model.connect(name, clean=False, session_expiry_interval=5)
        out = model.subscribe(name, 1, [("$share/g/t", SubscriptionOptions(qos=2))])
        # PP50-3.8.4-shared-no-retained
        assert "PP50-3.8.4-shared-no-retained" in out.filters[0].rule_ids
    (copy,) = model.publish(pub(qos=2)).copies
    assert copy.client_id == "a" and "PP50-4.8.2-one-member" in copy.rules
    model.send("a")
    model.disconnect("a")
    # [MQTT-4.8.2-4] completed to the same Client when it reconnects
    back = model.connect("a", clean=False, session_expiry_interval=5)
    assert back.resend == (copy,) and "MQTT-4.8.2-4" in back.rules
    # [MQTT-4.8.2-6] an error Reason Code: discarded, offered to no other member
    done = model.complete("a", copy.copy_id, reason_code=0x80)
    assert done.rules == ("MQTT-4.4.0-2", "MQTT-4.8.2-6")
    # [MQTT-4.8.2-5] its Session ends first: the QoS 2 message goes to no other member
    (second,) = model.publish(pub(qos=2)).copies
    model.send("a")
    model.disconnect("a")
    clock = model.advance(5_000)
    assert clock.ended == ("a",) and second in clock.dropped and "MQTT-4.8.2-5" in clock.rules
    assert model.sessions["b"].pending == [] and list(model.shared["$share/g/t"]) == ["b"]
    # the last member out deletes it (the model does not cite the rule in the outcome)
    gone = model.unsubscribe("b", 2, ["$share/g/t"])
    assert gone.deleted == ("$share/g/t",) and "$share/g/t" not in model.shared, (
        "PP50-3.10.4-shared-detach"
    )


# -- ordering, ownership, time -------------------------------------------------------------


@pytest.mark.parametrize("edition", ALL, ids=lambda e: e.value)
def test_the_publishers_order_is_kept_towards_each_subscriber(edition: Edition) -> None:
    # [MQTT-4.6.0-5] ordered by default; [MQTT-4.6.0-6] in the order received (5.0 swaps them)
    check_order(edition)
    expected = {V31: ("MQTT-4.6.0-5", "MQTT-4.6.0-6"), V311: ("MQTT-4.6.0-5", "MQTT-4.6.0-6"),
                V50: ("MQTT-4.6.0-6", "MQTT-4.6.0-5")}[edition]  # fmt: skip
    assert ordering_rules(edition) == expected


def test_what_is_not_ordered() -> None:
    model = DistributionModel(V311)
    model.connect("c", clean=True)
    model.subscribe("c", 1, [("#", SubscriptionOptions(qos=1))])
    for topic, qos, publisher in (("a", 1, "p"), ("b", 1, "p"), ("a", 2, "p"), ("a", 1, "q")):
        model.publish(Publication(publisher=publisher, topic=topic, qos=qos))
    owed = list(model.owed("c"))
    assert ordering_problems(list(reversed(owed)), V311) == []  # other topic, QoS, publisher
    model.publish(pub(topic="a", qos=1))
    owed = list(model.owed("c"))
    late_first = [owed[-1], *owed[:-1]]
    assert ordering_problems(late_first, V311)
    # reading ordering-qos=outgoing: both went out at QoS 1 (granted 1)
    assert ordering_problems([owed[2], owed[0]], V311) == []
    assert ordering_problems([owed[2], owed[0]], V311, {"ordering-qos": "outgoing"})
    # reading unordered-topics=configured
    config = ServerConfig(unordered_topics=("a",))
    assert ordering_problems(late_first, V311, {"unordered-topics": "configured"}, config) == []


def test_when_the_server_takes_ownership() -> None:
    assert ownership_point(0) == "on receipt of the PUBLISH"
    assert ownership_point(1) == "when the PUBACK is sent"
    assert ownership_point(2, Method.B) == "when the PUBREC is sent (Method B)"
    assert ownership_point(2, Method.A) == "when the PUBREL is received (Method A)"
    with pytest.raises(ValueError, match="Method"):
        ownership_point(2)


def test_acknowledgements_echo_the_packet_identifier() -> None:
    # [MQTT-2.3.1-7] (5.0 [MQTT-2.2.1-6]) "SUBACK and UNSUBACK MUST contain the Packet
    # Identifier that was used in the corresponding SUBSCRIBE and UNSUBSCRIBE Packet"
    for edition, rule in ((V311, "MQTT-2.3.1-7"), (V50, "MQTT-2.2.1-6")):
        model = DistributionModel(edition)
        model.connect("c", clean=True)
        out = model.subscribe("c", 4242, [("t", Q1)])
        gone = model.unsubscribe("c", 77, ["t"])
        assert (out.packet_id, gone.packet_id) == (4242, 77)
        assert rule in out.rules and rule in gone.rules


def test_a_qos2_copy_once_sent_does_not_expire() -> None:
    # [MQTT-4.3.3-7] "MUST NOT apply Message expiry if a PUBLISH packet has been sent"
    model = DistributionModel(V50)
    model.connect("c", clean=True)
    model.subscribe("c", 1, [("t", SubscriptionOptions(qos=2))])
    (copy,) = model.publish(pub(qos=2, properties=Properties(message_expiry_interval=1))).copies
    assert "MQTT-4.3.3-7" in copy.rules
    model.send("c")
    assert model.advance(60_000).expired == ()
    assert model.complete("c", copy.copy_id).copy is copy


def test_the_clock_is_explicit() -> None:
    model = DistributionModel(V50)
    model.connect("c", clean=True)
    model.subscribe("c", 1, [("t", Q1)])
    model.publish(pub(properties=Properties(message_expiry_interval=1)))
    assert model.now == 0 and model.advance(999).expired == () and model.now == 999


# -- readings and the registry -------------------------------------------------------------


def test_distribution_readings() -> None:
    assert set(DISTRIBUTION_READINGS).isdisjoint(READINGS)
    assert resolve_distribution_readings(V31)["retained-qos-31"] == "granted"
    assert "queue-qos0" not in resolve_distribution_readings(V31)  # 3.1: "never stored"
    assert resolve_distribution_readings(V50)["overlapping-copies"] == "one-copy"
    with pytest.raises(ReadingError, match="unknown"):
        resolve_distribution_readings(V311, {"nope": "x"})
    with pytest.raises(ReadingError, match="applies to edition"):
        resolve_distribution_readings(V311, {"retained-qos-31": "granted"})
    with pytest.raises(ReadingError, match="has no value"):
        resolve_distribution_readings(V311, {"queue-qos0": "sometimes"})
    for found in DISTRIBUTION_READINGS.values():
        assert found.passages and found.why_default and found.question


def test_the_distribution_rules_are_in_the_registry_apart() -> None:
    every = distribution_rules()
    assert len(every) == len(RULES.distributions()) >= 90
    # the wire rules (the mapping) and the flow rules hold none of them
    assert all(r.kind is not Kind.DISTRIBUTION for r in (*RULES.values(), *RULES.flows()))
    for found in every:
        assert found.kind is Kind.DISTRIBUTION and found.quotes and found.title
        assert found.key not in RULES and found not in RULES.flows()
        assert RULES.distribution(found.key) is found
        for edition, rule_id in found.ids.items():
            assert RULES.by_id(rule_id, edition) is found
        assert found.reading is None or found.reading in DISTRIBUTION_READINGS


_TESTS = ("test_topic_filters.py", "test_retained_store.py", "test_forwarding.py",
          "test_distribution_model.py", "support/distribution_checks.py")  # fmt: skip


def _strings() -> str:
    texts = []
    for name in _TESTS:
        tree = ast.parse((ROOT / "tests" / name).read_text("utf-8"))
        texts += [
            n.value
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
        ]
    comments = [(ROOT / "tests" / name).read_text("utf-8") for name in _TESTS]
    return "\n".join(texts + comments)


def test_every_distribution_rule_is_named_by_an_example() -> None:
    text = _strings()
    missing = [f"{r.key} {rule_id}" for r in distribution_rules() for rule_id in r.ids.values()
               if rule_id not in text]  # fmt: skip
    assert missing == []


def test_the_model_cites_registered_rules_only() -> None:
    from pubproof.model import distribution, subscriptions

    cited = set()
    for module in (distribution, subscriptions):
        for node in ast.walk(ast.parse(Path(str(module.__file__)).read_text("utf-8"))):
            text = node.value if isinstance(node, ast.Constant) else None
            if (
                isinstance(text, str)
                and text.startswith(("MQTT-", "PP5", "PP31-"))
                and " " not in text
            ):
                cited.add(text)
    for rule_id in cited:
        assert any(rule_id in r.ids.values() for r in RULES.distributions()), rule_id


def test_a_session_no_subscription_makes_a_copy_for_is_owed_nothing_as_its_graph_says() -> None:
    """``session_delivery`` answers None without walking ``SESSION_GRAPH`` where no
    subscription made a copy: the graph's first question, "any-copy", so answered, ends
    at "nothing" in every edition (the shortcut is the graph's own answer)."""
    from pubproof.model.decisions import walk
    from pubproof.model.forwarding import SESSION_GRAPH, session_delivery

    ask = {"any-copy": lambda cs: bool(cs), "overlap": lambda cs: len(cs) > 1}
    for edition in Edition:
        end, _, trail = walk(SESSION_GRAPH, (), edition, ask, {})
        assert end == "nothing" and [p.key for p in trail] == ["any-copy", "nothing"], edition
    message = DistributionModel(Edition.V311, {}).publish(
        Publication(topic="a/b", qos=1, payload=b"m", publisher="p")
    ).message
    assert session_delivery(message, "s", [], Edition.V311, {}) is None


def test_a_session_is_owed_a_topic_from_the_subscribe_that_matches_it_on() -> None:
    """The model keeps, per session and topic name, whether a subscription matches (the
    walks of a session none of whose subscriptions matches are skipped): a SUBSCRIBE
    made after messages on the topic makes the next one owed; an UNSUBSCRIBE, a new
    session of the same ClientID, make it owed nothing, as before."""
    model = DistributionModel(V311)
    model.connect("s", clean=True)
    model.connect("p", clean=True)
    model.subscribe("s", 1, [("other/#", Q1)])

    def owed(topic: str) -> list[str]:
        out = model.publish(Publication(topic=topic, qos=1, payload=b"m", publisher="p"))
        return [c.client_id for c in out.copies]

    assert owed("a/b") == [] and owed("other/x") == ["s"]
    model.subscribe("s", 2, [("a/+", Q1)])
    assert owed("a/b") == ["s"] and owed("other/x") == ["s"]
    model.unsubscribe("s", 3, ["a/+"])
    assert owed("a/b") == [] and owed("other/x") == ["s"]
    model.disconnect("s")
    model.connect("s", clean=True)
    assert owed("other/x") == []
    model.subscribe("s", 4, [("a/b", Q1)])
    assert owed("a/b") == ["s"] and owed("other/x") == []
