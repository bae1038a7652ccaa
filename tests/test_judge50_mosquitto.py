"""pubproof.judge in MQTT 5.0 against a real broker: Debian's mosquitto on a free loopback
port, spoken to over raw sockets with the judge's own 5.0 encoders, every packet seen
described (control packets by pubproof.judge.packets, the PUBLISH family by the model with
the limits the receiver declared) and judged by BothEnds and the close judge, in the order
the client saw them."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from brokers import BROKERS, started

from pubproof.judge import packets as P
from pubproof.judge.close import CloseJudge, Seen, shown
from pubproof.judge.ends import C2S, S2C, BothEnds
from pubproof.judge.findings import Finding
from pubproof.model import wire
from pubproof.model.editions import Edition, Limits

V5 = Edition.V50
#: what the broker declares in CONNACK (mosquitto.conf)
RECEIVE_MAXIMUM, TOPIC_ALIAS_MAXIMUM = 3, 5

MISSING = BROKERS["mosquitto"].available()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    config = (f"max_inflight_messages {RECEIVE_MAXIMUM}", f"max_topic_alias {TOPIC_ALIAS_MAXIMUM}")
    with started("mosquitto", config) as broker:
        yield broker.port


class Client:
    """One raw 5.0 connection; everything sent and read goes through the judges."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.sock.settimeout(0.2)
        self.buffer = b""
        self.ends = BothEnds(edition=V5)
        self.closing = CloseJudge()
        self.findings: list[Finding] = []
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self.topics: list[str | None] = []
        self.frame = 0
        self.closed = False

    def _judge(self, direction: str, data: bytes) -> dict[str, Any]:
        self.frame += 1
        header = P.header_length(data)
        assert header is not None
        kind = data[0] >> 4
        if 3 <= kind <= 7:
            verdict = wire.decode(data, V5, limits=self.ends.limits_for(direction))
            if verdict.failure is not None:  # the model rejects it: a close offence
                fields: dict[str, Any] = {"type": P.type_name(data[0], V5), "error": True}
                at = Seen(direction=direction, frame=self.frame, offset=0, fields=shown(data, V5))
                self.closing.offence(
                    at, data, V5, None, self.ends.owed_by(S2C if direction == C2S else C2S),
                    limits=self.ends.limits_for(direction),
                )  # fmt: skip
                self.seen.append((direction, fields))
                return fields
            (packet,) = verdict.packets
            fields = dict(packet)
        else:
            fields = P.describe(data[0], data[header[0] :], V5)
            assert "error" not in fields, fields
        at = Seen(direction=direction, frame=self.frame, offset=0, fields=shown(data, V5))
        self.closing.packet(at, data)
        receiver = S2C if direction == C2S else C2S
        owed = self.ends.owed_by(receiver)
        self.findings += self.ends.feed(direction, fields)
        if fields["type"] == "PUBLISH":
            self.topics.append(self.ends.topic)
        if self.ends.offence is not None:
            self.closing.flow_offence(at, self.ends.offence, owed, data)
        self.seen.append((direction, fields))
        return fields

    def send(self, data: bytes) -> dict[str, Any]:
        fields = self._judge(C2S, data)
        self.sock.sendall(data)
        return fields

    def read(self, seconds: float = 0.6, until: int | None = None) -> list[dict[str, Any]]:
        got: list[dict[str, Any]] = []
        end = time.monotonic() + seconds
        while time.monotonic() < end and not self.closed:
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                chunk = None
            if chunk == b"":
                self.closed = True
            self.buffer += chunk or b""
            while (header := P.header_length(self.buffer)) and len(self.buffer) >= sum(header):
                data, self.buffer = self.buffer[: sum(header)], self.buffer[sum(header) :]
                got.append(self._judge(S2C, data))
            if until is not None and len(got) >= until:
                break
        return got

    def close(self) -> None:
        self.sock.close()


def publish(packet_id: int | None, qos: int, topic: str, **properties: Any) -> bytes:
    packet: Any = {
        "type": "PUBLISH", "dup": False, "qos": qos, "retain": False, "topic": topic,
        "packet_id": packet_id, "payload_hex": f"{packet_id or 0:02x}", "properties": properties,
    }  # fmt: skip
    return wire.encode(packet, V5)


def ack(kind: int, packet_id: int, code: int = 0) -> bytes:
    flags = 0x02 if kind == 6 else 0x00
    return bytes((kind << 4 | flags, 3)) + packet_id.to_bytes(2, "big") + bytes((code,))


def over_quota(seen: list[tuple[str, dict[str, Any]]], maximum: int) -> list[int]:
    """An oracle apart from the judge: the broker's new QoS 1 and 2 PUBLISH sent while
    ``maximum`` were unacknowledged (no PUBACK, PUBCOMP, or PUBREC of 0x80 or more)."""
    unacknowledged: set[int] = set()
    over = []
    for direction, fields in seen:
        kind, packet_id = fields["type"], int(fields.get("packet_id") or 0)
        if direction == S2C and kind == "PUBLISH" and fields["qos"] and not fields["dup"]:
            if len(unacknowledged) >= maximum:
                over.append(packet_id)
            unacknowledged.add(packet_id)
        elif direction == C2S and (
            kind in ("PUBACK", "PUBCOMP") or (kind == "PUBREC" and fields["reason_code"] >= 0x80)
        ):
            unacknowledged.discard(packet_id)
    return over


@pytest.mark.parametrize("receive_maximum", [10, 2])
def test_a_5_0_session_with_mosquitto(port: int, receive_maximum: int) -> None:
    """Properties, topic aliases, QoS 1 and 2, a subscription identifier: no finding but
    the ones an oracle apart from the judge finds too. mosquitto 2.0.11 keeps 3 messages
    (its own max_inflight_messages) unacknowledged at a subscriber that declared Receive
    Maximum 2: MQTT-3.3.4-9."""
    sub = Client(port)
    properties = {
        "receive_maximum": receive_maximum, "topic_alias_maximum": 4,
        "session_expiry_interval": 0, "user_properties": [["who", "sub"]],
    }  # fmt: skip
    assert (
        sub.send(P.connect("pp-sub", clean=True, edition=V5, properties=properties))["properties"]
        == properties
    )
    (connack,) = sub.read(until=1)
    assert connack["type"] == "CONNACK" and connack["reason_code"] == 0
    assert connack["properties"]["receive_maximum"] == RECEIVE_MAXIMUM
    assert connack["properties"]["topic_alias_maximum"] == TOPIC_ALIAS_MAXIMUM
    assert sub.ends.negotiated.server.receive_maximum == RECEIVE_MAXIMUM
    options = {"filter": "pp/#", "qos": 2, "no_local": False, "retain_as_published": True,
               "retain_handling": 0}  # fmt: skip
    sub.send(P.subscribe(1, [options], edition=V5, properties={"subscription_identifiers": [7]}))
    (suback,) = sub.read(until=1)
    assert suback == {"type": "SUBACK", "packet_id": 1, "properties": {}, "reason_codes": [2]}

    pub = Client(port)
    pub.send(P.connect("pp-pub", clean=True, edition=V5))
    pub.read(until=1)
    # five messages on one topic: the topic name once with alias 1, then the alias alone;
    # each acknowledged before the next (the broker's Receive Maximum is 3)
    for packet_id in range(1, 6):
        qos = 1 if packet_id % 2 else 2
        topic = "pp/a" if packet_id == 1 else ""
        pub.send(publish(packet_id, qos, topic, topic_alias=1,
                         user_properties=[["n", str(packet_id)]]))  # fmt: skip
        (answer,) = pub.read(until=1)
        if answer["type"] == "PUBREC":
            pub.send(ack(6, packet_id))
            assert pub.read(until=1)[0]["type"] == "PUBCOMP"
    assert pub.topics == ["pp/a"] * 5  # the judge resolved the aliases of the client's side

    received = sub.read(1.0)
    assert [p["type"] for p in received][:2] == ["PUBLISH", "PUBLISH"]
    while len([p for p in received if p["type"] == "PUBLISH"]) < 5:
        for packet in list(received):
            if packet["type"] == "PUBLISH" and packet["qos"] == 1:
                sub.send(ack(4, packet["packet_id"]))
            elif packet["type"] == "PUBLISH" and packet["qos"] == 2:
                sub.send(ack(5, packet["packet_id"]))
            elif packet["type"] == "PUBREL":
                sub.send(ack(7, packet["packet_id"]))
            received.remove(packet)
        more = sub.read(1.0)
        assert more, "the broker sent nothing more"
        received += more
        if len(sub.topics) >= 5:
            break
    publishes = [f for d, f in sub.seen if d == S2C and f["type"] == "PUBLISH"]
    assert len(publishes) == 5
    assert sub.topics == ["pp/a"] * 5
    # forwarded: each message's user properties, the subscription identifier (QoS 2
    # messages wait for their PUBREL at the broker, so the order across QoS may differ)
    assert sorted(p["properties"]["user_properties"][0][1] for p in publishes) == list("12345")
    assert all(p["properties"]["subscription_identifiers"] == [7] for p in publishes)
    sub.send(P.unsubscribe(2, ["pp/#"], edition=V5))
    assert sub.read(until=1)[-1]["type"] == "UNSUBACK"
    sub.send(P.disconnect())
    pub.send(P.disconnect())
    over = over_quota(sub.seen, receive_maximum)
    assert [(f.rules, f.role) for f in sub.findings] == [
        (("MQTT-3.3.4-9", "MQTT-4.9.0-2"), "server") for _ in over
    ]
    assert all(f"PUBLISH {i} " in f.message for i, f in zip(over, sub.findings, strict=True))
    if receive_maximum >= RECEIVE_MAXIMUM:
        assert over == []
    # after the broker's offence the model's subscriber closes with DISCONNECT 0x93: this
    # one read on and said 0x00, and the close judge says so, about the client alone
    assert {f.role for _, f in sub.closing.findings()} == ({"client"} if over else set())
    assert pub.findings == [] and pub.closing.findings() == []
    sub.close()
    pub.close()


def test_a_topic_alias_above_the_broker_s_maximum(port: int) -> None:
    client = Client(port)
    client.send(P.connect("pp-alias", clean=True, edition=V5))
    client.read(until=1)
    client.send(publish(1, 1, "pp/x", topic_alias=TOPIC_ALIAS_MAXIMUM + 1))
    answers = client.read(1.0)
    assert answers and answers[0]["type"] == "DISCONNECT"
    (offence,) = client.closing.offences.values()
    assert offence.rule == "PP50-3.3.4-topic-alias-maximum" and offence.reason_code == 0x94
    # mosquitto closes with the Reason Code the model calls for: nothing to find
    assert answers[0]["reason_code"] == 0x94 and client.closed
    assert client.closing.findings() == [] and client.findings == []
    client.close()


def test_beyond_the_broker_s_receive_maximum(port: int) -> None:
    """The client breaks MQTT-3.3.4-7 on purpose; the model's broker closes with
    DISCONNECT 0x93. mosquitto 2.0.11 refuses the message with PUBREC 0x97 (Quota
    exceeded) and reads on: the close judge reports it under MQTT-4.13.1-1, the client's
    MQTT-3.3.4-7 as what provoked it."""
    client = Client(port)
    client.send(P.connect("pp-quota", clean=True, edition=V5))
    client.read(until=1)
    for packet_id in range(1, RECEIVE_MAXIMUM + 2):
        client.send(publish(packet_id, 2, "pp/q"))
        client.read(0.3, until=1)
    (over,) = client.findings
    assert over.rules == ("MQTT-3.3.4-7", "MQTT-4.9.0-2") and over.role == "client"
    last = [f for d, f in client.seen if d == S2C][-1]
    found = client.closing.findings()
    if last["type"] == "DISCONNECT" and last["reason_code"] == 0x93:
        assert found == []  # a broker that does what the model calls for
    else:
        ((_, finding),) = found
        assert finding.verdict == "violation" and finding.role == "server"
        # the broker owes the close; the Receive Maximum is the client's (provoked)
        assert finding.rules == ("MQTT-4.13.1-1",) and finding.provoked == ("MQTT-3.3.4-7",)
    client.close()


def _serve_once(listener: socket.socket, answers: dict[str, bytes]) -> list[bytes]:
    """Accept one client, read its packets until it closes, answering each packet type
    in ``answers`` with those bytes; the packets read."""
    conn, _ = listener.accept()
    conn.settimeout(5)
    buffer, packets = b"", list[bytes]()
    with conn:
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                return packets
            buffer += chunk
            while (header := P.header_length(buffer)) and len(buffer) >= sum(header):
                data, buffer = buffer[: sum(header)], buffer[sum(header) :]
                packets.append(data)
                answer = answers.get(P.type_name(data[0], V5))
                if answer is not None:
                    conn.sendall(answer(data) if callable(answer) else answer)


def _packet_id(data: bytes) -> int:
    verdict = wire.decode(data, V5, limits=Limits(topic_alias_maximum=3))
    (packet,) = verdict.packets
    assert packet["packet_id"] is not None
    return packet["packet_id"]


def test_mosquitto_pub_5_0_packets_are_described_and_judged() -> None:
    """What the real mosquitto_pub -V mqttv5 sends (a CONNECT with properties, a QoS 2
    PUBLISH with properties, PUBREL, DISCONNECT) is described and judged without a
    finding; our CONNACK, PUBREC and PUBCOMP are what it accepts."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        number = listener.getsockname()[1]
        answers: dict[str, Any] = {
            "CONNECT": P.connack(session_present=False, return_code=0, edition=V5,
                                 properties={"topic_alias_maximum": 3, "receive_maximum": 5}),
            "PUBLISH": lambda data: ack(5, _packet_id(data)),
            "PUBREL": lambda data: ack(7, int.from_bytes(data[2:4], "big")),
        }  # fmt: skip
        got: list[bytes] = []
        server = threading.Thread(target=lambda: got.extend(_serve_once(listener, answers)))
        server.start()
        command = [
            "mosquitto_pub", "-V", "mqttv5", "-h", "127.0.0.1", "-p", str(number), "-i", "pp-real",
            "-q", "2", "-t", "pp/real", "-m", "hi", "-x", "30",
            "-D", "connect", "user-property", "k", "v", "-D", "connect", "receive-maximum", "9",
            "-D", "publish", "user-property", "a", "1", "-D", "publish", "user-property", "b", "2",
            "-D", "publish", "content-type", "text/plain",
            "-D", "publish", "message-expiry-interval", "60",
        ]  # fmt: skip
        subprocess.run(command, check=True, timeout=20, capture_output=True)
        server.join(20)
    ends = BothEnds(edition=V5)
    kinds = []
    for data in got:
        header = P.header_length(data)
        assert header is not None
        if 3 <= data[0] >> 4 <= 7:
            verdict = wire.decode(data, V5, limits=ends.limits_for(C2S))
            assert verdict.failure is None, verdict.failure
            fields: dict[str, Any] = dict(verdict.packets[0])
        else:
            fields = P.describe(data[0], data[header[0] :], V5)
        kinds.append(fields["type"])
        if fields["type"] == "CONNECT":
            assert fields["level"] == 5 and fields["client_id"] == "pp-real"
            assert fields["properties"]["user_properties"] == [["k", "v"]]
            assert fields["properties"]["receive_maximum"] == 9
            assert fields["properties"]["session_expiry_interval"] == 30
            ends.feed(C2S, fields)
            ends.feed(S2C, P.describe(0x20, answers["CONNECT"][2:], V5))
            continue
        if fields["type"] == "PUBLISH":
            assert fields["properties"]["user_properties"] == [["a", "1"], ["b", "2"]]
            assert fields["properties"]["content_type"] == "text/plain"
            assert fields["properties"]["message_expiry_interval"] == 60
            assert fields["topic"] == "pp/real" and fields["payload_hex"] == b"hi".hex()
        assert ends.feed(C2S, fields) == []
        if fields["type"] == "PUBLISH":
            assert ends.feed(S2C, {"type": "PUBREC", "packet_id": fields["packet_id"],
                                   "reason_code": 0, "properties": {}}) == []  # fmt: skip
        if fields["type"] == "PUBREL":
            assert ends.feed(S2C, {"type": "PUBCOMP", "packet_id": fields["packet_id"],
                                   "reason_code": 0, "properties": {}}) == []  # fmt: skip
    assert kinds == ["CONNECT", "PUBLISH", "PUBREL", "DISCONNECT"]
