"""``pubproof serve``'s broker, sans-IO: the PUBLISH family through it both ways, sessions,
retained messages, subscriptions, 5.0 properties, aliases and limits, and what it reports
and does with a packet the standard forbids.

Every scenario ends with the distribution judge's verdict on the broker itself (its
findings, role ``server``, must be none); the mutants at the end break the broker in one
way each and hold the tests to noticing.
"""

from __future__ import annotations

import pytest
from support.serve_harness import Clients

from pubproof.judge import packets as P
from pubproof.model.editions import Edition
from pubproof.reference.properties import PublishProperties

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50


def server_findings(clients: Clients) -> list[tuple[str, str, tuple[str, ...]]]:
    return [f for f in clients.stop() if f[0] == "(server)"]


@pytest.mark.parametrize("edition", [V31, V311, V50])
@pytest.mark.parametrize("published", [0, 1, 2])
@pytest.mark.parametrize("granted", [0, 1, 2])
def test_every_qos_both_ways(edition: Edition, published: int, granted: int) -> None:
    clients = Clients()
    sub = clients.client("sub", edition)
    assert sub.subscribe(1, ("a/+", granted))["granted" if edition is not V50
                                               else "reason_codes"] == [granted]  # fmt: skip
    pub = clients.client("pub", edition)
    pub.publish("a/b", b"hi", published, packet_id=7 if published else None)
    answer = pub.read()
    expected = {0: [], 1: ["PUBACK"], 2: ["PUBREC"]}[published]
    assert [p["type"] for p in answer] == expected
    if published == 2:
        pub.ack("PUBREL", 7)
        assert pub.expect("PUBCOMP")["packet_id"] == 7
    (copy,) = sub.publishes()
    qos = min(published, granted)
    assert (copy["topic"], copy["payload_hex"], copy["qos"], copy["dup"], copy["retain"]) == (
        "a/b", b"hi".hex(), qos, False, False)
    if qos == 1:
        sub.ack("PUBACK", copy["packet_id"])
    elif qos == 2:
        sub.ack("PUBREC", copy["packet_id"])
        assert sub.expect("PUBREL")["packet_id"] == copy["packet_id"]
        sub.ack("PUBCOMP", copy["packet_id"])
    assert not sub.read()
    assert clients.findings() == []
    assert server_findings(clients) == []


@pytest.mark.parametrize("edition", [V311, V50])
def test_a_resumed_session_gets_its_re_sends_and_its_queue(edition: Edition) -> None:
    clients = Clients()
    keep = {"properties": {"session_expiry_interval": 60}} if edition is V50 else {}
    sub = clients.client("sub", edition, clean=False, **keep)
    sub.subscribe(1, ("t/#", 2))
    pub = clients.client("pub", edition)
    pub.publish("t/1", b"one", 1, packet_id=1)
    (first,) = sub.publishes()
    sub.lose()  # the PUBLISH never acknowledged
    pub.publish("t/2", b"two", 2, packet_id=2).ack("PUBREL", 2)
    again = clients.peer(edition)
    connack = again.connect("sub", clean=False, **keep)
    assert connack["session_present"] is True
    resent, queued = again.publishes()
    # [MQTT-4.4.0-1] re-sent with DUP 1 and its packet identifier; then what was queued
    assert (resent["dup"], resent["packet_id"], resent["payload_hex"]) == (
        True, first["packet_id"], b"one".hex())
    assert (queued["dup"], queued["qos"], queued["payload_hex"]) == (False, 2, b"two".hex())
    again.ack("PUBACK", resent["packet_id"])
    again.ack("PUBREC", queued["packet_id"])
    again.ack("PUBCOMP", again.expect("PUBREL")["packet_id"])
    assert clients.findings("violation") == []
    assert server_findings(clients) == []


def test_a_clean_session_forgets() -> None:
    clients = Clients()
    sub = clients.client("sub", clean=False)
    sub.subscribe(1, ("t", 1))
    sub.lose()
    clients.client("pub").publish("t", b"x", 1, packet_id=1)
    again = clients.peer()
    assert again.connect("sub", clean=True)["session_present"] is False
    assert again.read() == []
    assert server_findings(clients) == []


@pytest.mark.parametrize("edition", [V311, V50])
def test_retained_messages(edition: Edition) -> None:
    clients = Clients()
    pub = clients.client("pub", edition)
    pub.publish("r/a", b"kept", 1, packet_id=1, retain=True)
    pub.publish("r/b", b"gone", 0, retain=True)
    pub.publish("r/b", b"", 0, retain=True)  # [MQTT-3.3.1-10] an empty one deletes it
    sub = clients.client("sub", edition)
    sub.subscribe(1, ("r/#", 2))
    (copy,) = sub.publishes()
    # [MQTT-3.3.1-8] RETAIN 1 for a new subscription, at the lower of the two QoS
    assert (copy["topic"], copy["retain"], copy["qos"]) == ("r/a", True, 1)
    pub.publish("r/a", b"live", 0, retain=True)
    (live,) = [p for p in sub.read() if p["type"] == "PUBLISH"]
    assert live["retain"] is False  # [MQTT-3.3.1-9] a live copy has RETAIN 0
    assert server_findings(clients) == []


def test_wildcards_and_overlapping_subscriptions() -> None:
    clients = Clients()
    sub = clients.client("sub")
    sub.subscribe(1, ("a/#", 1), ("a/+/c", 2), ("+/x", 0))
    pub = clients.client("pub")
    pub.publish("a/b/c", b"1", 2, packet_id=1).ack("PUBREL", 1)
    pub.publish("b/x", b"2", 2, packet_id=2).ack("PUBREL", 2)
    pub.publish("c/y", b"3", 2, packet_id=3).ack("PUBREL", 3)
    copies = sub.publishes()
    # one copy per message, at the highest QoS of the matching subscriptions [MQTT-3.3.5-1]
    assert [(c["topic"], c["qos"]) for c in copies] == [("a/b/c", 2), ("b/x", 0)]
    assert server_findings(clients) == []


def test_5_0_properties_expiry_and_identifiers() -> None:
    clients = Clients()
    sub = clients.client("sub", V50)
    sub.subscribe(1, {"filter": "p/#", "qos": 1}, properties={"subscription_identifiers": [9]})
    pub = clients.client("pub", V50)
    props = PublishProperties(
        payload_format_indicator=1, message_expiry_interval=60, content_type="text/plain",
        response_topic="p/reply", correlation_data=b"id-1",
        user_properties=(("b", "2"), ("a", "1"), ("b", "3")),
    )  # fmt: skip
    clients.now = 0.0
    pub.publish("p/q", "ünï".encode(), 1, packet_id=1, properties=props)
    (copy,) = sub.publishes()
    properties = copy["properties"]
    assert properties["user_properties"] == [["b", "2"], ["a", "1"], ["b", "3"]]
    assert properties["subscription_identifiers"] == [9]
    assert properties["message_expiry_interval"] == 60
    assert (properties["content_type"], properties["correlation_data_hex"]) == (
        "text/plain", b"id-1".hex())
    sub.ack("PUBACK", copy["packet_id"])
    assert server_findings(clients) == []


def test_5_0_message_expiry_counts_the_wait_and_drops_the_expired() -> None:
    clients = Clients()
    sub = clients.client("sub", V50, clean=False, properties={"session_expiry_interval": 600})
    sub.subscribe(1, {"filter": "e", "qos": 1})
    sub.lose()
    pub = clients.client("pub", V50)
    pub.publish("e", b"short", 1, packet_id=1,
                properties=PublishProperties(message_expiry_interval=2))
    pub.publish("e", b"long", 1, packet_id=2,
                properties=PublishProperties(message_expiry_interval=100))
    clients.advance(5.0)
    again = clients.peer(V50)
    again.connect("sub", clean=False, properties={"session_expiry_interval": 600})
    (copy,) = again.publishes()
    # [MQTT-3.3.2-5] the expired one is not sent; [MQTT-3.3.2-6] the other's interval less
    # the wait
    assert copy["payload_hex"] == b"long".hex()
    assert copy["properties"]["message_expiry_interval"] == 95
    assert server_findings(clients) == []


def test_5_0_topic_alias_from_the_client() -> None:
    clients = Clients(topic_alias_maximum=2)
    sub = clients.client("sub", V50)
    sub.subscribe(1, {"filter": "long/topic/name", "qos": 0})
    pub = clients.client("pub", V50)
    assert pub.read() == []
    pub.publish("long/topic/name", b"1", properties=PublishProperties(topic_alias=1))
    pub.publish("", b"2", properties=PublishProperties(topic_alias=1))
    assert [c["topic"] for c in sub.publishes()] == ["long/topic/name"] * 2
    pub.publish("", b"3", properties=PublishProperties(topic_alias=2))  # never set: 0x82
    assert pub.expect("DISCONNECT")["reason_code"] == 0x82
    assert pub.closed
    assert clients.findings("violation")[0][0] == "pub"


def test_5_0_the_brokers_receive_maximum() -> None:
    clients = Clients(receive_maximum=1)
    pub = clients.client("pub", V50)
    pub.publish("q", b"1", 2, packet_id=1)
    assert pub.expect("PUBREC")["packet_id"] == 1
    pub.publish("q", b"2", 2, packet_id=2)  # two unacknowledged: over Receive Maximum 1
    assert pub.expect("DISCONNECT")["reason_code"] == 0x93
    (finding,) = clients.findings("violation")
    assert finding[0] == "pub" and "MQTT-3.3.4-7" in finding[2]


def test_5_0_the_clients_receive_maximum_holds_copies_back() -> None:
    clients = Clients()
    sub = clients.client("sub", V50, properties={"receive_maximum": 2})
    sub.subscribe(1, {"filter": "q", "qos": 1})
    pub = clients.client("pub", V50)
    for n in range(5):
        pub.publish("q", bytes([n]), 1, packet_id=n + 1)
    first = sub.publishes()
    assert len(first) == 2  # [MQTT-3.3.4-9] never more than its Receive Maximum under way
    for copy in first:
        sub.ack("PUBACK", copy["packet_id"])
    rest = sub.publishes()
    assert [c["payload_hex"] for c in first + rest][:4] == [bytes([n]).hex() for n in range(4)]
    assert server_findings(clients) == []


@pytest.mark.parametrize(
    ("edition", "data", "rule", "code"),
    [
        (V311, bytes.fromhex("36050003612f62"), "MQTT-3.3.1-4", None),  # QoS 3
        (V50, bytes.fromhex("3606000361 2f6200".replace(" ", "")), "MQTT-3.3.1-4", 0x81),
        (V311, bytes.fromhex("3004000261 2b".replace(" ", "")), "MQTT-3.3.2-2", None),
        (V311, bytes.fromhex("4203 000100".replace(" ", "")), "MQTT-2.2.2-1", None),
    ],
)
def test_a_packet_the_model_rejects_is_reported_and_closed(
    edition: Edition, data: bytes, rule: str, code: int | None
) -> None:
    clients = Clients()
    bad = clients.client("bad", edition)
    bad.send(data)
    (finding,) = clients.findings()
    assert finding[:2] == ("bad", "violation") and rule in finding[2]
    if code is not None:
        assert bad.expect("DISCONNECT")["reason_code"] == code
    assert bad.closed


def test_lenient_reads_on_under_a_named_reading() -> None:
    qos0_dup = bytes.fromhex("3806 0003 612f62 68".replace(" ", ""))  # DUP 1 on QoS 0
    strict = Clients()
    bad = strict.client("bad")
    bad.send(qos0_dup)
    assert bad.closed and strict.findings()[0][1] == "violation"
    lenient = Clients(lenient=True)
    sub = lenient.client("sub")
    sub.subscribe(1, ("a/b", 0))
    ok = lenient.client("ok")
    ok.send(qos0_dup)
    assert not ok.closed
    assert lenient.findings()[0][1] == "tolerated"
    assert [c["payload_hex"] for c in sub.publishes()] == [b"h".hex()]


def test_the_first_packet_is_connect() -> None:
    clients = Clients()
    peer = clients.peer()
    peer.send(bytes.fromhex("c000"))  # PINGREQ
    assert peer.closed and peer.read() == []
    assert clients.findings()[0][2] == ("MQTT-3.1.0-1",)


def test_a_second_connect_and_a_server_packet_close() -> None:
    clients = Clients()
    peer = clients.client("twice")
    peer.send(P.connect("twice", clean=True))
    assert peer.closed
    assert clients.findings()[0][2] == ("MQTT-3.1.0-2",)


def test_an_unsupported_level_is_refused_in_the_format_the_client_reads() -> None:
    clients = Clients(edition=V311)
    five = clients.peer(V50)
    assert five.connect("five")["reason_code"] == 0x84  # Unsupported Protocol Version
    assert five.closed
    three = clients.peer(V31)
    assert three.connect("three")["return_code"] == 0x01  # unacceptable protocol version
    assert three.closed
    assert clients.findings() == []  # the broker's choice, not the clients' fault


def test_takeover_closes_the_old_connection() -> None:
    clients = Clients()
    first = clients.client("same", V50)
    clients.client("same", V50)
    assert first.expect("DISCONNECT")["reason_code"] == 0x8E  # Session taken over
    assert first.closed


def test_a_will_on_a_lost_connection_not_after_disconnect() -> None:
    clients = Clients()
    sub = clients.client("sub")
    sub.subscribe(1, ("will/#", 0))
    will = clients.peer(V50)
    will.connect("w", will={"topic": "will/w", "payload_hex": b"bye".hex(), "qos": 0})
    will.lose()
    assert [c["payload_hex"] for c in sub.publishes()] == [b"bye".hex()]
    quiet = clients.peer(V50)
    quiet.connect("q", will={"topic": "will/q", "payload_hex": b"no".hex(), "qos": 0})
    quiet.send(bytes.fromhex("e000"))  # DISCONNECT: the will is discarded
    quiet.lose()
    assert sub.publishes() == []


def test_keep_alive() -> None:
    clients = Clients()
    peer = clients.peer()
    peer.send(bytes.fromhex("100f00044d51545404020002000361626300"[:-2]))  # Keep Alive 2
    assert peer.expect("CONNACK")
    clients.advance(2.9)
    assert not peer.closed
    clients.advance(0.2)  # more than 1.5 x 2 s without a packet
    assert peer.closed


def test_a_connection_without_connect_is_closed() -> None:
    clients = Clients(connect_timeout=5.0)
    peer = clients.peer()
    peer.send(bytes.fromhex("10"))  # the start of a CONNECT, and nothing more
    clients.advance(4.0)
    assert not peer.closed
    clients.advance(1.5)
    assert peer.closed


def test_a_qos2_copy_is_under_way_until_its_pubcomp() -> None:
    """The broker's window (3.x: --max-inflight) counts a QoS 2 copy until PUBCOMP, not
    until PUBREC: the flow is not complete before [MQTT-4.3.3-1]."""
    clients = Clients(max_inflight=1)
    sub = clients.client("sub")
    sub.subscribe(1, ("w", 2))
    pub = clients.client("pub")
    for n in (1, 2):
        pub.publish("w", bytes([n]), 2, packet_id=n).ack("PUBREL", n)
    (first,) = sub.publishes()
    sub.ack("PUBREC", first["packet_id"])
    assert [p["type"] for p in sub.read()] == ["PUBREL"]  # the second waits
    sub.ack("PUBCOMP", first["packet_id"])
    (second,) = sub.publishes()
    assert second["payload_hex"] == bytes([2]).hex()
