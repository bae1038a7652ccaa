"""The distribution judge on a capture (``capture=True``): what a capture proves is found,
what it cannot show is unknown with its reason, never a finding; and the ledger accounts
for every PUBLISH in and out.

Each scenario is the same exchange as a probe would judge it, cut the ways a capture cuts
it: a link first seen mid-connection, traffic lost, a capture that ends (or a link that
closes) soon after a copy is owed or long after, a subscription the server may have made
before or after it took a message, two messages alike, another edition's client.
"""

from __future__ import annotations

from typing import Any

import pytest
from support.distribution_server import V50, Server, bad, rules

from pubproof.judge.distribution import DistributionJudge
from pubproof.judge.distribution_events import C2S, S2C, Event
from pubproof.judge.findings import MISSING, VIOLATION, Finding


def capture(server: Server, **options: Any) -> tuple[DistributionJudge, list[Finding]]:
    judge = DistributionJudge(complete=False, capture=True, **options)
    return judge, judge.feed_all(server.events)


def outcomes(judge: DistributionJudge) -> tuple[list[str], list[str]]:
    """The outcome of each PUBLISH in, and of each copy out."""
    return [e.outcome for e in judge.ledger.ins], [e.outcome for e in judge.ledger.outs]


def _two_messages() -> Server:
    server = Server()
    server.connect("sub")
    server.subscribe("sub", ("a/+", 1))
    server.connect("pub")
    server.publish("pub", "a/b", b"1", 1)
    server.publish("pub", "a/b", b"2", 1)
    return server


def test_a_dropped_copy_is_missing_when_a_later_one_of_its_order_went_out() -> None:
    """[MQTT-4.6.0-6]: the server sent message 2, which the order puts after message 1,
    so it could no longer send message 1 in order: missing [MQTT-4.5.0-1]."""
    server = _two_messages()
    server.deliver("sub", "a/b", b"2", 1)
    judge, found = capture(server)
    assert rules(found) == {(MISSING, "MQTT-4.5.0-1")}
    assert "order of 4.6" in bad(found)[0].message
    assert outcomes(judge) == (["missing", "delivered"], ["copy"])
    server = _two_messages()
    server.deliver("sub", "a/b", b"1", 1)
    server.deliver("sub", "a/b", b"2", 1)
    judge, found = capture(server)
    assert found == [] and outcomes(judge)[0] == ["delivered", "delivered"]


def test_a_copy_owed_at_the_end_is_unknown_until_the_link_outlasts_the_patience() -> None:
    server = _two_messages()
    judge, found = capture(server)
    assert found == []  # the capture ended: the server may have sent them a moment later
    assert outcomes(judge)[0] == ["unknown:capture-ended"] * 2
    server.wait(12.0)
    server.connect("other")  # the capture goes on 12 s, the subscriber's link still open
    judge, found = capture(server)
    assert rules(found) == {(MISSING, "MQTT-4.5.0-1")} and len(bad(found)) == 2
    assert "patience 10 s" in bad(found)[0].message
    _, found = capture(server, patience=30.0)
    assert found == []


def test_a_copy_owed_when_a_clean_session_ends_is_missing_only_past_the_patience() -> None:
    server = _two_messages()
    server.close("sub")  # right after: the close may have cut it off
    judge, found = capture(server)
    assert found == [] and outcomes(judge)[0] == ["session-ended"] * 2
    server = _two_messages()
    server.wait(11.0)
    server.close("sub")
    judge, found = capture(server)
    assert rules(found) == {(MISSING, "MQTT-4.5.0-1")}
    # reported at the close of the subscriber's link, its evidence across both links
    evidence = bad(found)[0].evidence
    assert [e["conn"] for e in evidence] == ["pub", "pub", "sub"]
    assert evidence[-1]["event"] == "closed"


def test_a_link_first_seen_mid_connection_is_never_judged() -> None:
    """Its CONNECT before the capture: whose session it is, and what it subscribed to,
    are unknown; what it publishes and gets is counted, never found."""
    server = Server()
    server.connect("pub")
    server._at("sub", S2C, {"type": "PUBLISH", "dup": False, "qos": 0, "retain": False,
                            "topic": "x", "packet_id": None, "payload_hex": "00"})  # fmt: skip
    server._at("late", C2S, {"type": "PUBLISH", "dup": False, "qos": 0, "retain": False,
                             "topic": "y", "packet_id": None, "payload_hex": "01"})  # fmt: skip
    judge, found = capture(server)
    assert found == []
    assert outcomes(judge) == (
        ["unknown:session-before-capture"],
        ["unknown:session-before-capture"],
    )


def _stranger(**connack: Any) -> Server:
    server = Server()
    server._at("sub", C2S, {"type": "CONNECT", "client_id": "sub", "level": 4,
                            "clean_session": True})  # fmt: skip
    server._at("sub", S2C, {"type": "CONNACK", "return_code": 0, **connack})
    server.subscribe("sub", ("a/+", 1))
    return server


def test_a_copy_on_a_topic_no_subscription_matches_is_found_on_a_whole_link_only() -> None:
    """[MQTT-3.3.2-3]: the link's CONNECT was seen for a new session, nothing of it lost:
    every subscription of it is known. A resumed session (Session Present 1) may hold
    subscriptions from before the capture; after a gap, a SUBSCRIBE may have been lost."""
    server = _stranger(session_present=False)
    server.deliver("sub", "z", b"q", 0)
    judge, found = capture(server)
    assert rules(found) == {(VIOLATION, "MQTT-3.3.2-3")}
    assert outcomes(judge)[1] == ["unowed"]
    server = _stranger(session_present=True)
    server.deliver("sub", "z", b"q", 0)
    judge, found = capture(server)
    assert found == [] and outcomes(judge)[1] == ["unknown:publication-unseen"]
    server = _stranger(session_present=False)
    server.events.append(Event(t=server.t + 0.001, conn="sub", direction=S2C, lost=True))
    server.deliver("sub", "z", b"q", 0)
    judge, found = capture(server)
    assert found == [] and outcomes(judge)[1] == ["unknown:capture-lost"]
    # a topic its subscriptions match, of a message no link showed: unknown
    server = _stranger(session_present=False)
    server.deliver("sub", "a/b", b"q", 0)
    judge, found = capture(server)
    assert found == [] and outcomes(judge)[1] == ["unknown:publication-unseen"]


def test_traffic_lost_leaves_what_is_owed_unknown_whatever_the_wait() -> None:
    server = _two_messages()
    server.events.append(Event(t=server.t + 0.001, conn="sub", direction=S2C, lost=True))
    server.wait(20.0)
    server.connect("other")
    judge, found = capture(server)
    assert found == [] and outcomes(judge)[0] == ["unknown:capture-lost"] * 2


def test_a_subscription_made_after_the_message_is_open_on_a_capture() -> None:
    """Which the server took first, the SUBSCRIBE or the message, a capture of two links
    cannot tell: no finding (a probe, which orders them itself, finds it)."""
    server = Server()
    server.connect("pub")
    server.connect("sub")
    server.publish("pub", "t", b"m", 0)
    server.subscribe("sub", ("t", 0))
    server.deliver("sub", "t", b"m", 0)
    judge, found = capture(server)
    assert found == [] and outcomes(judge)[1] == ["unknown:subscription-changing"]
    assert rules(server.judge()) == {(VIOLATION, "MQTT-4.5.0-1")}


def test_two_messages_alike_are_told_apart_by_their_qos() -> None:
    """Two publishers, one payload, copies in the other order (allowed: the order binds
    one publisher's messages): each copy is matched to its own message."""
    server = Server()
    server.connect("sub")
    server.subscribe("sub", ("t", 2))
    server.connect("p1")
    server.connect("p2")
    server.publish("p1", "t", b"same", 1)
    server.publish("p2", "t", b"same", 2)
    server.deliver("sub", "t", b"same", 2)
    server.deliver("sub", "t", b"same", 1)
    judge, found = capture(server)
    assert found == [] and outcomes(judge) == (["delivered"] * 2, ["copy"] * 2)


def test_a_copy_alike_a_publish_not_followed_is_ambiguous() -> None:
    """The same topic and payload from a link whose session is unknown: a second copy may
    be of that one, so it is no QoS 2 duplicate."""
    server = Server()
    server.connect("sub")
    server.subscribe("sub", ("t", 2))
    server.connect("pub")
    server.publish("pub", "t", b"m", 2)
    alike = {"type": "PUBLISH", "dup": False, "qos": 0, "retain": False, "topic": "t",
             "packet_id": None, "payload_hex": b"m".hex()}  # fmt: skip
    server._at("old", C2S, alike)
    server.deliver("sub", "t", b"m", 2)
    server.deliver("sub", "t", b"m", 2)
    judge, found = capture(server)
    assert found == []
    assert outcomes(judge)[1] == ["unknown:ambiguous"] * 2
    assert rules(server.judge()) == {(VIOLATION, "MQTT-4.3.3-2")}  # all links known


def test_a_message_that_crosses_editions_is_not_judged() -> None:
    """The model is one per edition: a 5.0 client's message to a 3.1.1 subscriber is
    other-edition, both ways."""
    server = Server(level=V50)
    server.connect("pub")
    server.level = 4
    server.connect("sub")
    server.subscribe("sub", ("t", 1))
    server.level = V50
    server.publish("pub", "t", b"five", 1)
    server.level = 4
    server.deliver("sub", "t", b"five", 1)
    judge, found = capture(server)
    assert found == []
    assert outcomes(judge) == (["unknown:other-edition"], ["unknown:other-edition"])


def test_dup_on_a_first_copy_is_found_in_5_0_on_a_capture() -> None:
    """[MQTT-3.3.1-3] (the link judge finds it in 3.1.1, not in 5.0)."""
    server = Server(level=V50)
    server.connect("sub")
    server.subscribe("sub", ("t", 1))
    server.connect("pub")
    server.publish("pub", "t", b"m", 1)
    server.deliver("sub", "t", b"m", 1, dup=True)
    _, found = capture(server)
    assert rules(found) == {(VIOLATION, "MQTT-3.3.1-3")}
    assert bad(server.judge()) == []  # the probe's own judges have it


def test_the_ledger_accounts_for_every_publish() -> None:
    server = _two_messages()
    server.publish("pub", "nobody", b"x", 0)
    server.deliver("sub", "a/b", b"1", 1)
    server.deliver("sub", "a/b", b"1", 1)  # at least once: another copy
    judge, _ = capture(server)
    counts = judge.ledger.counts()
    assert counts["messages_in"] == 3
    assert sum(counts["messages_by_outcome"].values()) == 3
    assert counts["messages_by_outcome"] == {
        "no-subscriber": 1, "delivered": 1, "unknown:capture-ended": 1,
    }  # fmt: skip
    assert counts["copies_by_outcome"] == {"copy": 1, "again": 1}


def test_a_capture_is_never_complete() -> None:
    with pytest.raises(ValueError, match="capture"):
        DistributionJudge(capture=True)


def test_a_retained_message_of_a_topic_none_of_its_subscriptions_matches_is_found() -> None:
    """amqtt's fault: another topic's retained message sent for a new subscription."""
    server = Server()
    server.connect("pub")
    server.publish("pub", "other", b"kept", 1, retain=True)
    server.connect("sub")
    server.subscribe("sub", ("mine", 1))
    server.deliver("sub", "other", b"kept", 1, retain=True)
    _, found = capture(server)
    assert rules(found) == {(VIOLATION, "MQTT-3.3.2-3")}
    server = Server()
    server.connect("pub")
    server.publish("pub", "mine", b"kept", 1, retain=True)
    server.connect("sub")
    server.subscribe("sub", ("mine", 1))
    server.deliver("sub", "mine", b"kept", 1, retain=True)
    _, found = capture(server)
    assert found == []


TOPIC = "传感器/湿度"


def _retained_race(*, overlap: bool, sent: bytes = b"m0", both: bool = False) -> Server:
    """Client A publishes a QoS 2 retained message M2, client B a QoS 0 retained M0 on
    the same topic; the server's PUBREC for M2 goes out after M0 arrived (``overlap``:
    their ownership windows overlap) or before M0's PUBLISH; then a new subscriber is
    sent ``sent`` as the retained message (``both``: M2 first, then M0), and its link
    stays open past the patience."""
    server = Server()
    server.connect("a")
    server.connect("b")
    m2 = {"type": "PUBLISH", "dup": False, "qos": 2, "retain": True, "topic": TOPIC,
          "packet_id": 7, "payload_hex": b"m2".hex()}  # fmt: skip
    if not overlap:
        server.publish("b", TOPIC, b"m0", 0, retain=True)
    server._at("a", C2S, m2)  # received at t1
    if overlap:
        server.publish("b", TOPIC, b"m0", 0, retain=True)  # received at t2 > t1
    server._at("a", S2C, {"type": "PUBREC", "packet_id": 7})  # owned at t3
    server._at("a", C2S, {"type": "PUBREL", "packet_id": 7})
    server._at("a", S2C, {"type": "PUBCOMP", "packet_id": 7})
    server.connect("sub")
    server.subscribe("sub", (TOPIC, 2))
    if both:
        server.deliver("sub", TOPIC, b"m2", 2, retain=True)
    server.deliver("sub", TOPIC, sent, 0 if sent == b"m0" else 2, retain=True)
    server.wait(11)
    server.deliver("sub", TOPIC, b"later", 0)  # a copy of nothing: the link is open on
    return server


def test_two_retained_messages_in_flight_together_may_be_stored_in_either_order() -> None:
    """The server takes a QoS 2 message somewhere between its PUBLISH and its PUBREC: M0
    arrived in between, so either may be the retained message afterwards. A server that
    kept M0 is not found for sending it, nor for not sending M2 (both unknown, by a
    named reason); one that kept M2 is judged as the model says."""
    judge, found = capture(_retained_race(overlap=True))
    assert bad(found) == []
    assert outcomes(judge)[1][0] == "unknown:retained-order"
    assert "unknown:retained-order" in judge.copy_outcomes.values()
    assert judge.ledger.counts()["copies_by_outcome"]["unknown:retained-order"] == 1
    judge, found = capture(_retained_race(overlap=True, sent=b"m2"))
    assert bad(found) == [] and outcomes(judge)[1][0] == "copy"
    assert "unknown:retained-order" not in judge.copy_outcomes.values()
    # both sent for one subscription: whichever the server stored, the other is wrong
    judge, found = capture(_retained_race(overlap=True, both=True))
    assert rules(found) == {(VIOLATION, "MQTT-3.3.1-5")}
    assert outcomes(judge)[1][:2] == ["copy", "unowed"]


def test_a_retained_message_replaced_for_certain_is_still_found_when_sent() -> None:
    """M0 was taken before M2's PUBLISH arrived, so M2 replaced it for certain: sending
    M0 for a new subscription is a finding [MQTT-3.3.1-5], and M2's retained copy, never
    sent, is missing."""
    judge, found = capture(_retained_race(overlap=False))
    assert (VIOLATION, "MQTT-3.3.1-5") in rules(found)
    assert any(f.verdict == MISSING for f in bad(found))
    assert outcomes(judge)[1][0] == "unowed"
    assert "unknown:retained-order" not in judge.copy_outcomes.values()


def test_two_retained_messages_in_flight_together_on_a_probe() -> None:
    """The same on a probe's judge (every link from the start): no finding either way."""
    server = _retained_race(overlap=True)
    assert bad(server.judge()) == []
    server = _retained_race(overlap=False)
    assert (VIOLATION, "MQTT-3.3.1-5") in rules(server.judge())
