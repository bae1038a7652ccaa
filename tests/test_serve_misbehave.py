"""``pubproof serve --misbehave``: each misbehaviour does what it says, and the client's
answer to it is judged as ``probe-client`` judges it (its link judge; after a case, its
close judge); an answer a client owed when its connection ended is missing."""

from __future__ import annotations

from typing import Any

import pytest
from support.serve_harness import Clients, Peer

from pubproof.model.editions import Edition
from pubproof.probe.serve.misbehave import MISBEHAVIOURS, OBSERVE

V311, V50 = Edition.V311, Edition.V50


def _subscribed(clients: Clients, edition: Edition, qos: int = 1, **connect: Any) -> Peer:
    sub = clients.client("sub", edition, **connect)
    sub.subscribe(1, ("m/#", qos))
    return sub


def test_every_wire_case_of_probe_client_is_a_name() -> None:
    from pubproof.probe.clients.catalog import BY_ID, BY_ID50

    wire = {cid for cid in (*BY_ID, *BY_ID50) if cid.startswith("wire.")}
    own = {"wire.receive-maximum-exceeded", "wire.topic-alias-across-connections"}
    assert wire - own <= set(MISBEHAVIOURS)


@pytest.mark.parametrize("edition", [V311, V50])
def test_a_client_that_closes_after_a_case_passes(edition: Edition) -> None:
    clients = Clients(misbehave=("wire.receive-publish-qos3",))
    sub = _subscribed(clients, edition)
    (case,) = sub.read()
    assert case["type"] == "PUBLISH" and "error" in case  # the case: QoS 3
    if edition is V50:
        sub.send(bytes.fromhex("e0018100"[:6]))  # DISCONNECT 0x81 Malformed Packet
    sub.lose()
    assert clients.findings() == []
    assert clients.reporter.total["pass"] >= 1 + (edition is V50)


def test_a_client_that_reads_on_after_a_case_is_charged() -> None:
    clients = Clients(misbehave=("wire.receive-publish-qos3",))
    sub = _subscribed(clients, V311)
    sub.read()
    sub.send(bytes.fromhex("c000"))  # PINGREQ: it read on
    clients.advance(OBSERVE + 0.1)
    (finding,) = clients.findings()
    assert finding[1] == "violation" and "MQTT-4.8.0-1" in finding[2]


def test_a_5_0_client_that_closes_without_the_reason_code_deviates() -> None:
    clients = Clients(misbehave=("wire.receive-publish-qos3",))
    sub = _subscribed(clients, V50)
    sub.read()
    sub.lose()  # no DISCONNECT
    (finding,) = clients.findings()
    assert finding[1] == "deviation" and finding[2] == ("PP50-4.13.1-disconnect-reason-code",)


def test_drop_before_ack_and_the_re_send_it_asks_for() -> None:
    clients = Clients(misbehave=("drop-before-ack",))
    pub = clients.client("pub", clean=False)
    pub.publish("m/1", b"first", 1, packet_id=5)
    assert pub.closed and pub.read() == []  # never answered
    good = clients.peer()
    assert good.connect("pub", clean=False)["session_present"] is True
    good.publish("m/1", b"first", 1, packet_id=5, dup=True)  # the re-send, as it must
    assert good.expect("PUBACK")["packet_id"] == 5
    assert clients.findings() == []
    bad = clients.peer()
    bad.connect("pub", clean=False)
    bad.publish("m/2", b"second", 1, packet_id=6)
    clients.now += 1
    again = clients.peer()
    again.connect("pub", clean=False)
    again.publish("m/2", b"second", 1, packet_id=6)  # a second copy, not re-sent (DUP 0)
    assert clients.findings() == []  # the broker had answered it: a new message


def test_refuse_publish_and_a_re_send_after_it() -> None:
    clients = Clients(misbehave=("refuse-publish",))
    pub = clients.client("pub", V50)
    pub.publish("m/1", b"no", 1, packet_id=1)
    assert pub.expect("PUBACK")["reason_code"] == 0x80
    pub.publish("m/1", b"no", 1, packet_id=1, dup=True)  # re-sent after 0x80: not allowed
    (finding,) = clients.findings()
    assert finding[:2] == ("pub", "violation") and "MQTT-4.4.0-2" in finding[2]


def test_forget_sessions() -> None:
    clients = Clients(misbehave=("forget-sessions",))
    clients.client("c", V50, clean=False, properties={"session_expiry_interval": 60}).lose()
    again = clients.peer(V50)
    assert again.connect("c", clean=False, properties={"session_expiry_interval": 60})[
        "session_present"] is False


def test_qos2_duplicate_before_pubrel() -> None:
    clients = Clients(misbehave=("qos2-duplicate",))
    sub = _subscribed(clients, V311, qos=2)
    clients.client("pub").publish("m/x", b"two", 2, packet_id=1).ack("PUBREL", 1)
    (copy,) = sub.publishes()
    sub.ack("PUBREC", copy["packet_id"])
    dup, pubrel = sub.read()
    assert (dup["type"], dup["dup"], dup["packet_id"]) == ("PUBLISH", True, copy["packet_id"])
    assert pubrel["type"] == "PUBREL"
    sub.ack("PUBREC", copy["packet_id"])  # its answer to the duplicate
    sub.ack("PUBCOMP", copy["packet_id"])
    assert clients.findings("violation") == []


def test_pubrel_unknown_and_a_missing_pubcomp() -> None:
    clients = Clients(misbehave=("pubrel-unknown",))
    ok = clients.client("ok", V50)
    assert ok.expect("PUBREL")["packet_id"] == 4242
    ok.ack("PUBCOMP", 4242, 0x92)
    silent = clients.client("silent", V50)
    silent.read()
    clients.advance(3.0)
    silent.lose()  # it never answered
    (finding,) = clients.findings()
    assert finding[:2] == ("silent", "missing")


def test_over_receive_maximum() -> None:
    clients = Clients(misbehave=("over-receive-maximum",))
    sub = clients.client("sub", V50, properties={"receive_maximum": 1})
    sub.subscribe(1, {"filter": "m/#", "qos": 1})
    clients.client("pub", V50).publish("m/x", b"1", 1, packet_id=1)
    copy, extra = sub.read()
    assert copy["type"] == extra["type"] == "PUBLISH"
    sub.send(bytes.fromhex("e0019300"[:6]))  # DISCONNECT 0x93 Receive Maximum exceeded
    sub.lose()
    assert clients.findings() == []
    assert clients.reporter.total["pass"] >= 2


def test_resend_dup0_is_the_brokers_fault_not_the_clients() -> None:
    clients = Clients(misbehave=("resend-dup0",))
    sub = _subscribed(clients, V311, clean=False)
    clients.client("pub").publish("m/x", b"one", 1, packet_id=1)
    sub.publishes()
    sub.lose()
    again = clients.peer()
    again.connect("sub", clean=False)
    (resent,) = again.publishes()
    assert resent["dup"] is False  # the broker broke MQTT-3.3.1-1 on purpose
    again.ack("PUBACK", resent["packet_id"])


def test_an_answer_owed_at_the_end_of_a_connection_is_missing() -> None:
    clients = Clients()
    sub = _subscribed(clients, V311)
    clients.client("pub").publish("m/x", b"one", 1, packet_id=1)
    assert len(sub.publishes()) == 1
    clients.advance(2.5)
    sub.lose()  # no PUBACK, ever
    (finding,) = clients.findings()
    assert finding[:2] == ("sub", "missing") and "MQTT-4.3.2-2" in finding[2]
