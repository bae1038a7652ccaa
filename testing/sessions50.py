"""The reference 5.0 session engine and the model's 5.0 session, driven side by side.

As :mod:`pubproof.testing.sessions` for 3.1.1: a client and a server, each made of the
reference ``Session50`` and the model's ``SessionModel50`` with the negotiated limits
(Receive Maximum and Topic Alias Maximum each way, small so that they are reached), joined
by two in-order channels. Every rule applies the same input to both and compares what
they do; the invariant compares their state (flows, send quota, Topic Alias maps) after
every step, counts itself in :attr:`Sessions50Agree.checks`, and holds the flow-control
bound: an end's send quota plus its unacknowledged QoS 1 and 2 PUBLISH is its peer's
Receive Maximum, so never more than that are in flight. ``tests/test_session50_stateful.py``
runs it and kills the reference's mutants with it; ``benchmarks/bench_protocol.py`` times it.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from pubproof.model.flows import Method as ModelMethod
from pubproof.model.session50 import Output50 as ModelOutput
from pubproof.model.session50 import SessionModel50
from pubproof.model.trace import P
from pubproof.reference.jsonform import from_p, to_p
from pubproof.reference.session import Deliver, Judgement, Method, Send
from pubproof.reference.session50 import Disconnect, Output50, Session50, Wait

ENDS = ("client", "server")
EDITION = "5.0"
topics = st.sampled_from(["a/b", "sensors/1", "温度"])
payloads = st.binary(max_size=4)
#: The application's verdict on a new message: mostly accepted, sometimes refused.
refusals = st.sampled_from([0, 0, 0, 0x80, 0x87, 0x97])


def model_view(outputs: list[ModelOutput]) -> list[tuple[Any, ...]]:
    view: list[tuple[Any, ...]] = []
    for out in outputs:
        if out.kind in ("send", "deliver"):
            view.append((out.kind, out.packet))
        elif out.kind == "wait":
            view.append(("wait",))
        elif out.kind == "disconnect":
            view.append(("disconnect", out.reason_code, out.rules[0], out.packet))
        else:
            view.append((out.kind, out.rules[0], out.packet))
    return view


def reference_view(outputs: list[Output50]) -> list[tuple[Any, ...]]:
    view: list[tuple[Any, ...]] = []
    for out in outputs:
        if isinstance(out, Send):
            view.append(("send", to_p(out.packet)))
        elif isinstance(out, Deliver):
            view.append(("deliver", to_p(out.message)))
        elif isinstance(out, Wait):
            view.append(("wait",))
        elif isinstance(out, Disconnect):
            view.append(("disconnect", out.reason_code, out.rule, to_p(out.packet)))
        else:
            assert isinstance(out, Judgement)
            view.append((out.verdict, out.rule, to_p(out.packet)))
    return view


class Sessions50Agree(RuleBasedStateMachine):
    """The 5.0 reference ``Session50`` and the model's ``SessionModel50``, at both ends,
    driven alike and compared after every step."""

    def __init__(self) -> None:
        super().__init__()
        self.model: dict[str, SessionModel50] = {}
        self.reference: dict[str, Session50] = {}
        self.channel: dict[str, list[P]] = {"client": [], "server": []}  # packets TO that end
        self.connected = True
        self.disconnects: list[int] = []

    @initialize(
        client_method=st.sampled_from(["A", "B"]),
        server_method=st.sampled_from(["A", "B"]),
        client_rm=st.integers(1, 3),
        server_rm=st.integers(1, 3),
        client_tam=st.integers(0, 2),
        server_tam=st.integers(0, 2),
    )
    def start(
        self,
        client_method: str,
        server_method: str,
        client_rm: int = 2,
        server_rm: int = 2,
        client_tam: int = 2,
        server_tam: int = 2,
    ) -> None:
        own = {"client": (client_rm, client_tam), "server": (server_rm, server_tam)}
        for end, method in (("client", client_method), ("server", server_method)):
            (rm, tam), (peer_rm, peer_tam) = own[end], own[self._peer(end)]
            self.model[end] = SessionModel50(
                method=ModelMethod(method), receive_maximum=rm, topic_alias_maximum=tam,
                peer_receive_maximum=peer_rm, peer_topic_alias_maximum=peer_tam,
            )  # fmt: skip
            self.reference[end] = Session50(
                method=Method(method), receive_maximum=rm, topic_alias_maximum=tam,
                peer_receive_maximum=peer_rm, peer_topic_alias_maximum=peer_tam,
            )  # fmt: skip

    def _peer(self, end: str) -> str:
        return "server" if end == "client" else "client"

    def _apply(self, end: str, model_out: list[ModelOutput], ref_out: list[Output50]) -> None:
        assert reference_view(ref_out) == model_view(model_out)
        for out in model_out:
            if out.kind == "send" and self.connected:
                assert out.packet is not None
                self.channel[self._peer(end)].append(out.packet)
            elif out.kind == "disconnect":
                assert out.reason_code is not None
                self.disconnects.append(out.reason_code)
                self._close()

    def _close(self) -> None:
        self.connected = False
        for queue in self.channel.values():
            queue.clear()

    @precondition(lambda self: self.connected)
    @rule(end=st.sampled_from(ENDS), qos=st.integers(0, 2), topic=topics, payload=payloads)
    def publish(self, end: str, qos: int, topic: str, payload: bytes) -> None:
        self._apply(
            end,
            self.model[end].publish(topic, payload, qos),
            self.reference[end].publish(topic, payload, qos),
        )

    @precondition(lambda self: self.connected and any(self.channel.values()))
    @rule(end=st.sampled_from(ENDS), refuse=refusals)
    def deliver_next(self, end: str, refuse: int = 0) -> None:
        if not self.channel[end]:
            end = self._peer(end)
        packet = self.channel[end].pop(0)
        self._apply(
            end,
            self.model[end].receive(packet, refuse=refuse),
            self.reference[end].receive(from_p(packet), refuse=refuse),
        )

    @precondition(lambda self: self.connected and any(self.channel.values()))
    @rule(end=st.sampled_from(ENDS), data=st.data())
    def duplicate_in_flight(self, end: str, data: st.DataObject) -> None:
        if not self.channel[end]:
            end = self._peer(end)
        self.channel[end].append(data.draw(st.sampled_from(self.channel[end])))

    @precondition(lambda self: self.connected)
    @rule(
        end=st.sampled_from(ENDS),
        kind=st.sampled_from(["PUBACK", "PUBREC", "PUBREL", "PUBCOMP"]),
        packet_id=st.integers(1, 4),
        code=st.sampled_from([0x00, 0x10, 0x80, 0x92]),
    )
    def unexpected_acknowledgement(self, end: str, kind: str, packet_id: int, code: int) -> None:
        """An acknowledgement out of turn, with a success or an error code (each kind with a
        code its Reason Code table has: PUBREL and PUBCOMP know only 0x00 and 0x92)."""
        if kind in ("PUBREL", "PUBCOMP") and code not in (0x00, 0x92):
            code = 0x92
        if kind in ("PUBACK", "PUBREC") and code == 0x92:
            code = 0x80
        packet = {"type": kind, "packet_id": packet_id, "reason_code": code, "properties": {}}
        self.channel[end].append(packet)  # type: ignore[arg-type]

    @precondition(lambda self: self.connected)
    @rule(
        end=st.sampled_from(ENDS),
        qos=st.integers(1, 2),
        packet_id=st.integers(1, 6),
        alias=st.sampled_from([None, None, 0, 1, 2, 3]),
        alias_only=st.booleans(),
        topic=topics,
    )
    def misbehaving_peer_publishes(
        self, end: str, qos: int, packet_id: int, alias: int | None, alias_only: bool, topic: str
    ) -> None:
        """A PUBLISH the peer's session did not make: beyond the Receive Maximum, an alias
        out of bounds, an alias alone that was never set on this connection."""
        props = {} if alias is None else {"topic_alias": alias}
        packet = {
            "type": "PUBLISH", "dup": False, "qos": qos, "retain": False,
            "topic": "" if alias is not None and alias_only else topic,
            "packet_id": packet_id, "payload_hex": "", "properties": props,
        }  # fmt: skip
        self.channel[end].append(packet)  # type: ignore[arg-type]

    @precondition(lambda self: self.connected)
    @rule()
    def lose_connection(self) -> None:
        self._close()

    @precondition(lambda self: not self.connected)
    @rule(clean_start=st.booleans(), expired=st.booleans())
    def reconnect(self, clean_start: bool, expired: bool) -> None:
        """Clean Start 0 with the session present resumes it; Clean Start 1, or a session
        whose Session Expiry Interval has passed (Session Present 0), starts afresh."""
        resume = not clean_start and not expired
        self.connected = True
        for end in ENDS:
            self._apply(
                end,
                self.model[end].reconnect(resume=resume),
                self.reference[end].reconnect(resume=resume),
            )

    @rule(end=st.sampled_from(ENDS))
    def restart_process(self, end: str) -> None:
        saved = json.loads(json.dumps(self.reference[end].to_json()))
        self.reference[end] = Session50.from_json(saved)

    checks = 0

    @invariant()
    def same_state(self) -> None:
        Sessions50Agree.checks += 1
        for end, model in self.model.items():
            ref = self.reference[end]
            snapshot = model.snapshot()
            assert [[i, "AWAIT_" + a, to_p(m)] for i, (a, m) in ref.in_flight.items()] == snapshot[
                "outgoing"
            ]
            held = sorted(
                [i, "STORED" if m is not None else "ID_HELD", None if m is None else to_p(m)]
                for i, m in ref.held.items()
            )
            assert held == snapshot["incoming"]
            alias_in, alias_out = ref.aliases
            assert sorted(alias_in.items()) == snapshot["alias_in"]
            assert sorted(alias_out.items()) == snapshot["alias_out"]
            assert ref.quota == snapshot["quota"]
            # [MQTT-3.3.4-7] / [MQTT-3.3.4-9]: the quota accounts for every unacknowledged
            # QoS 1 and 2 PUBLISH, so there are never more than the peer's Receive Maximum.
            assert model.quota + len(model.outgoing) == model.peer_receive_maximum
            assert len(model.outgoing) <= model.peer_receive_maximum
