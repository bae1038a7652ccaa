"""The retained store (pubproof.model.retained): its table per edition, with the rule each
entry cites, and as a property: after any sequence of messages the store holds, per topic
name, the last retained message with a payload, or none."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.distribution_checks import check_retained_store

from pubproof.model.distribution import DistributionModel
from pubproof.model.editions import Edition
from pubproof.model.messages import Message, Properties, Publication
from pubproof.model.retained import (
    RetainedAction,
    RetainedInput,
    RetainedState,
    RetainedStore,
    retained_table,
)
from pubproof.model.subscriptions import SubscriptionOptions

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50
_seq = iter(range(1, 10**9))


def message(topic: str, payload: bytes, *, qos: int = 1, retain: bool = True, at: int = 0,
            expiry: int | None = None) -> Message:  # fmt: skip
    publication = Publication(
        publisher="pub", topic=topic, payload=payload, qos=qos, retain=retain,
        properties=Properties(message_expiry_interval=expiry),
    )  # fmt: skip
    return Message(seq=next(_seq), received_at=at, publication=publication)


@pytest.mark.parametrize(
    ("edition", "store", "empty", "untouched", "ends"),
    [
        (V311, ("MQTT-3.3.1-5",), ("MQTT-3.3.1-10", "MQTT-3.3.1-11"), ("MQTT-3.3.1-12",),
         ("MQTT-3.1.2-7",)),
        (V50, ("MQTT-3.3.1-5",), ("MQTT-3.3.1-6", "MQTT-3.3.1-7"), ("MQTT-3.3.1-8",),
         ("PP50-4.1-retained-not-session-state",)),
        (V31, ("PP31-2.1-retain-hold",), ("PP31-2.1-retain-may-delete",), ("MQTT-3.3.1-12",),
         ("MQTT-3.1.2-7",)),
    ],
    ids=["3.1.1", "5.0", "3.1"],
)  # fmt: skip
def test_each_entry_cites_the_rule_of_its_edition(
    edition: Edition, store: tuple[str, ...], empty: tuple[str, ...],
    untouched: tuple[str, ...], ends: tuple[str, ...],
) -> None:  # fmt: skip
    retained = RetainedStore(edition)
    # [MQTT-3.3.1-5] "the Server MUST store the Application Message and its QoS"
    assert retained.apply(message("t", b"one")).rule_ids == store
    # [MQTT-3.3.1-12] "MUST NOT store the message and MUST NOT remove or replace"
    change = retained.apply(message("t", b"live", retain=False))
    assert change.rule_ids == untouched and change.after == change.before
    # [MQTT-3.3.1-10] "any existing retained message with the same topic name MUST be removed"
    change = retained.apply(message("t", b""))
    assert change.rule_ids == empty and change.after is None
    table = retained_table(edition)
    step = table[RetainedState.HELD, RetainedInput.SESSION_ENDS]
    assert step.action is RetainedAction.KEEP
    assert (
        tuple(r.id_for(edition) if edition in r.ids else r.id_for(V311) for r in step.rules) == ends
    )


def test_a_qos0_retained_message_replaces_and_may_be_discarded() -> None:
    # [MQTT-3.3.1-7] "MUST discard any message previously retained for that topic. It SHOULD
    # store the new QoS 0 message ..., but MAY choose to discard it at any time"
    store = RetainedStore(V311)
    store.apply(message("t", b"one", qos=2))
    assert not store.may_discard("t")
    with pytest.raises(ValueError, match="may not be discarded"):
        store.discard("t")
    change = store.apply(message("t", b"zero", qos=0))
    assert change.rule_ids == ("MQTT-3.3.1-5", "MQTT-3.3.1-7")
    assert store.may_discard("t") and store.discard("t").after is None
    # 5.0 says the same without a label; 3.1 only "should hold on" to any of them
    five = RetainedStore(V50)
    five.apply(message("t", b"zero", qos=0))
    assert five.discard("t").rule_ids == ("PP50-3.3.1-retained-qos0",)
    old = RetainedStore(V31)
    old.apply(message("t", b"two", qos=2))
    assert old.discard("t").rule_ids == ("PP31-2.1-retain-hold",)


def test_mqtt_3_1_may_keep_an_empty_retained_message() -> None:
    # 3.1: "A server may delete a retained message if it receives a message with a
    # zero-length payload" (reading retained-empty-31)
    table = retained_table(V31)
    step = table[RetainedState.HELD, RetainedInput.RETAIN_EMPTY]
    assert step.action is RetainedAction.DELETE
    assert step.alternatives == ((RetainedState.HELD, RetainedAction.STORE),)
    strict = retained_table(V31, {"retained-empty-31": "delete"})
    step = strict[RetainedState.HELD, RetainedInput.RETAIN_EMPTY]
    assert step.alternatives == () and step.rules[0].id_for(V311) == "MQTT-3.3.1-10"


def test_a_retained_message_expires_in_5_0() -> None:
    # 3.3.1.3: "If the current retained message for a Topic expires, it is discarded"
    store = RetainedStore(V50)
    store.apply(message("t", b"x", at=0, expiry=2))
    assert store.expire(1_999) == []
    (change,) = store.expire(2_000)
    assert change.rule_ids == ("PP50-3.3.1-retained-expires",) and store.get("t") is None
    assert RetainedStore(V311).expire(10**9) == []


@pytest.mark.parametrize("edition", list(Edition), ids=lambda e: e.value)
def test_the_model_keeps_the_store_through_its_publications(edition: Edition) -> None:
    check_retained_store(edition)


@pytest.mark.parametrize("edition", [V311, V50], ids=lambda e: e.value)
def test_the_end_of_a_session_leaves_the_retained_messages(edition: Edition) -> None:
    # [MQTT-3.1.2-7] "Retained messages do not form part of the Session state in the Server,
    # they MUST NOT be deleted when the Session ends"
    model = DistributionModel(edition)
    model.connect("pub", clean=True)
    model.publish(Publication(publisher="pub", topic="t", payload=b"x", qos=1, retain=True))
    ended = model.disconnect("pub")
    assert ended.session_ended and model.retained.get("t") is not None
    expected = "MQTT-3.1.2-7" if edition is V311 else "PP50-4.1-retained-not-session-state"
    assert expected in ended.rules


def test_a_retained_message_goes_at_the_lower_qos_and_may_be_missing_at_qos0() -> None:
    # [MQTT-3.8.4-6] the QoS "MUST be the minimum of the QoS of the originally published
    # message and the maximum QoS granted"; [MQTT-3.3.1-8] RETAIN 1
    model = DistributionModel(V311)
    model.publish(Publication(publisher="p", topic="a/two", payload=b"2", qos=2, retain=True))
    model.publish(Publication(publisher="p", topic="a/zero", payload=b"0", qos=0, retain=True))
    model.connect("sub", clean=True)
    (made,) = model.subscribe("sub", 1, [("a/+", SubscriptionOptions(qos=1))]).filters
    assert [(c.topic, c.qos, c.retain) for c in made.retained] == [
        ("a/two", 1, True),
        ("a/zero", 0, True),
    ]
    assert "MQTT-3.3.1-8" in made.rule_ids and "MQTT-3.3.1-6" in made.rule_ids
    assert made.may_miss == (made.retained[1].copy_id,)  # [MQTT-3.3.1-7] may be discarded
    # 3.1: the publication's QoS, under reading retained-qos-31=as-published
    for value, qos in (("granted", 1), ("as-published", 2)):
        old = DistributionModel(V31, {"retained-qos-31": value})
        old.publish(Publication(publisher="p", topic="t", payload=b"2", qos=2, retain=True))
        old.connect("sub", clean=True)
        (made,) = old.subscribe("sub", 1, [("t", SubscriptionOptions(qos=1))]).filters
        assert made.retained[0].qos == qos
        assert "PP31-2.1-retain-new-subscription" in made.rule_ids


EVENTS = st.lists(
    st.tuples(st.sampled_from(["a", "b", "a/b"]), st.booleans(), st.booleans(), st.integers(0, 2)),
    max_size=25,
)


@pytest.mark.parametrize("edition", list(Edition), ids=lambda e: e.value)
@given(events=EVENTS)
def test_the_store_holds_the_last_retained_message_with_a_payload(
    edition: Edition, events: list[tuple[str, bool, bool, int]]
) -> None:
    store = RetainedStore(edition)
    expected: dict[str, bytes] = {}
    for n, (topic, retain, empty, qos) in enumerate(events):
        payload = b"" if empty else str(n).encode()
        store.apply(message(topic, payload, qos=qos, retain=retain))
        if retain and empty:
            expected.pop(topic, None)
        elif retain:
            expected[topic] = payload
    assert {t: m.publication.payload for t, m in store.snapshot().items()} == expected
