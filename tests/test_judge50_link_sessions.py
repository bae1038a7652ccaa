"""The MQTT 5.0 link judge silent on every session two 5.0 model ends (SessionModel50)
produce, packets delivered in order across reconnections, and the resolved topic of every
PUBLISH equal to what the model receiver delivers; and that test able to fail."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from support.link50_packets import V5, connack, connect

from pubproof.judge.ends import C2S, S2C, BothEnds
from pubproof.judge.findings import Finding
from pubproof.model.session50 import SessionModel50


@dataclass
class Net:
    """Two 5.0 model ends joined by one queue per direction, watched by BothEnds."""

    client: SessionModel50
    server: SessionModel50
    limits: tuple[int, int, int, int]
    judge: BothEnds = field(default_factory=lambda: BothEnds(edition=V5))
    queues: dict[str, deque[dict[str, Any]]] = field(
        default_factory=lambda: {C2S: deque(), S2C: deque()}
    )
    findings: list[Finding] = field(default_factory=list)
    resolved: int = 0

    def connect(self, resume: bool) -> None:
        crm, ctam, srm, stam = self.limits
        self.queues[C2S].clear()  # the connection drops what was in flight
        self.queues[S2C].clear()
        self.findings += self.judge.feed(
            C2S, connect(clean=not resume, receive_maximum=crm, topic_alias_maximum=ctam)
        )
        self.findings += self.judge.feed(
            S2C, connack(present=resume, receive_maximum=srm, topic_alias_maximum=stam)
        )

    def send(self, direction: str, outputs: list[Any]) -> None:
        for out in outputs:
            assert out.kind in ("send", "wait"), out  # a model peer never judges a model end
            if out.kind == "send":
                self.queues[direction].append(dict(out.packet))

    def deliver(self, direction: str, refuse: int) -> None:
        if not self.queues[direction]:
            return
        packet = self.queues[direction].popleft()
        self.findings += self.judge.feed(direction, packet)
        topic = self.judge.topic
        receiver = self.server if direction == C2S else self.client
        model_packet: Any = packet
        outputs = receiver.receive(
            model_packet, refuse=refuse if packet["type"] == "PUBLISH" else 0
        )
        back = S2C if direction == C2S else C2S
        for out in outputs:
            if out.kind == "deliver":
                delivered: Any = out.packet
                assert topic == delivered["topic"]  # the judge resolved the alias alike
                self.resolved += 1
        self.send(back, [o for o in outputs if o.kind != "deliver"])


ACTIONS = st.lists(
    st.one_of(
        st.tuples(st.just("publish"), st.sampled_from([C2S, S2C]), st.sampled_from("abcd"),
                  st.integers(0, 2)),
        st.tuples(st.just("deliver"), st.sampled_from([C2S, S2C]),
                  st.sampled_from([0, 0, 0, 0x80, 0x97])),
        st.tuples(st.just("deliver"), st.sampled_from([C2S, S2C]), st.just(0)),
        st.tuples(st.just("reconnect"), st.booleans()),
    ),
    max_size=60,
)  # fmt: skip
LIMITS = st.tuples(st.integers(1, 3), st.integers(0, 2), st.integers(1, 3), st.integers(0, 2))


@settings(max_examples=400, deadline=None)
@given(LIMITS, ACTIONS)
def test_a_valid_session_yields_no_finding_and_topics_resolve(
    limits: tuple[int, int, int, int], actions: list[tuple[Any, ...]]
) -> None:
    crm, ctam, srm, stam = limits
    net = Net(
        client=SessionModel50(receive_maximum=crm, topic_alias_maximum=ctam,
                              peer_receive_maximum=srm, peer_topic_alias_maximum=stam),
        server=SessionModel50(receive_maximum=srm, topic_alias_maximum=stam,
                              peer_receive_maximum=crm, peer_topic_alias_maximum=ctam),
        limits=limits,
    )  # fmt: skip
    net.connect(resume=False)
    for action in actions:
        if action[0] == "publish":
            _, direction, topic, qos = action
            end = net.client if direction == C2S else net.server
            net.send(direction, end.publish(f"{topic}/x", bytes([qos]), qos))
        elif action[0] == "deliver":
            net.deliver(action[1], action[2])
        else:
            resume = action[1]
            net.connect(resume)
            net.send(C2S, net.client.reconnect(resume=resume))
            net.send(S2C, net.server.reconnect(resume=resume))
        assert net.findings == [], action
    for _ in range(200):  # drain: every flow completes without a finding
        net.deliver(C2S, 0)
        net.deliver(S2C, 0)
    assert net.findings == []


def test_the_valid_session_test_can_fail() -> None:
    """The property above holds only because the judge is silent on valid traffic: the same
    driver with a wrong declaration (the client says Receive Maximum 1, the server
    believes 3) is found."""
    net = Net(
        client=SessionModel50(receive_maximum=3, peer_receive_maximum=1),
        server=SessionModel50(receive_maximum=1, peer_receive_maximum=3),
        limits=(1, 0, 1, 0),
    )
    net.connect(resume=False)
    for _ in range(2):
        net.send(S2C, net.server.publish("a", b"x", 1))
    net.deliver(S2C, 0)
    net.deliver(S2C, 0)
    assert [f.rules for f in net.findings] == [("MQTT-3.3.4-9", "MQTT-4.9.0-2")]
