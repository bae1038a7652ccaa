"""The reference 5.0 session engine and the model's 5.0 session, driven side by side.

As ``tests/test_session_stateful.py`` for 3.1.1: a client and a server, each made of the
reference ``Session50`` and the model's ``SessionModel50`` with the negotiated limits
(Receive Maximum and Topic Alias Maximum each way, small so that they are reached), joined
by two in-order channels. Every rule applies the same input to both and compares what
they do; the invariant compares their state (flows, send quota, Topic Alias maps) after
every step and holds the flow-control bound: an end's send quota plus its unacknowledged
QoS 1 and 2 PUBLISH is its peer's Receive Maximum, so never more than that are in flight.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from pubproof.model.flows import Method as ModelMethod
from pubproof.model.session50 import Output50 as ModelOutput
from pubproof.model.session50 import SessionModel50
from pubproof.model.trace import P
from pubproof.reference.jsonform import from_p, to_p
from pubproof.reference.packets import PubAck, PubRec
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


Sessions50Agree.TestCase.settings = settings(
    max_examples=300, stateful_step_count=60, deadline=None
)
TestSessions50Agree = Sessions50Agree.TestCase


# -- mutants of the reference engine -----------------------------------------------------

ORIGINAL_RECEIVE = Session50.receive
ORIGINAL_RECONNECT = Session50.reconnect


def _mutant_pubrec_frees_quota(self: Session50, packet: Any, *, refuse: int = 0) -> Any:
    """PUBREC 0x00 counted as an acknowledgement: the quota slot comes back too early."""
    out = ORIGINAL_RECEIVE(self, packet, refuse=refuse)
    if isinstance(packet, PubRec) and packet.reason_code < 0x80 and out:
        self.quota += 1
    return out


def _mutant_alias_map_survives(self: Session50, *, resume: bool) -> Any:
    """The sender keeps its Topic Alias map across a reconnect."""
    kept = dict(self._alias_out)
    self._alias_out = {}
    out = ORIGINAL_RECONNECT(self, resume=resume)
    self._alias_out = {**kept, **self._alias_out}
    return out


def _mutant_resend_after_error(self: Session50, packet: Any, *, refuse: int = 0) -> Any:
    """A PUBACK with an error code leaves the message in flight, so it is re-sent."""
    if isinstance(packet, PubAck) and packet.reason_code >= 0x80:
        flow = self._outgoing.get(packet.packet_id)
        if flow is not None and flow[0] == "PUBACK":
            return []
    return ORIGINAL_RECEIVE(self, packet, refuse=refuse)


def _qos2_flow(machine: Sessions50Agree) -> None:
    """A QoS 2 message from the client; its PUBREC comes back."""
    machine.start(client_method="B", server_method="B", client_rm=2, server_rm=2)
    machine.publish(end="client", qos=2, topic="a/b", payload=b"x")
    machine.deliver_next(end="server")
    machine.deliver_next(end="client")  # the PUBREC: PUBREL goes out


def _alias_then_reconnect(machine: Sessions50Agree) -> None:
    """The server accepts aliases; the client sends a topic, reconnects, sends it again."""
    machine.start(client_method="A", server_method="A", server_tam=2)
    machine.publish(end="client", qos=0, topic="a/b", payload=b"x")
    machine.deliver_next(end="server")
    machine.lose_connection()
    machine.reconnect(clean_start=False, expired=False)
    machine.publish(end="client", qos=0, topic="a/b", payload=b"y")
    machine.deliver_next(end="server")


def _error_puback_then_resume(machine: Sessions50Agree) -> None:
    """The server refuses a QoS 1 message (PUBACK 0x80); the session is resumed."""
    machine.start(client_method="A", server_method="A")
    machine.publish(end="client", qos=1, topic="a/b", payload=b"x")
    machine.deliver_next(end="server", refuse=0x80)
    machine.deliver_next(end="client")  # PUBACK 0x80: the flow ends
    machine.lose_connection()
    machine.reconnect(clean_start=False, expired=False)


MUTANTS = {
    "pubrec-0x00-frees-quota": ("receive", _mutant_pubrec_frees_quota, _qos2_flow),
    "alias-map-survives-reconnect": ("reconnect", _mutant_alias_map_survives,
                                     _alias_then_reconnect),
    "publish-resent-after-error-puback": ("receive", _mutant_resend_after_error,
                                          _error_puback_then_resume),
}  # fmt: skip


def _found_by_search(attempts: int) -> bool:
    """Whether the random search finds a difference in one of ``attempts`` independent
    runs (each of up to 300 programs), as for the 3.1.1 mutants."""
    from hypothesis.stateful import run_state_machine_as_test

    for _ in range(attempts):
        try:
            run_state_machine_as_test(
                Sessions50Agree,
                settings=settings(
                    max_examples=300, stateful_step_count=60, deadline=None, database=None,
                    phases=(Phase.generate,),
                ),
            )  # fmt: skip
        except AssertionError:
            return True
    return False


def test_the_scripted_50_runs_agree_on_the_real_session() -> None:
    for _, _, script in MUTANTS.values():
        machine = Sessions50Agree()
        script(machine)
        machine.same_state()


def test_the_50_comparison_kills_mutants(monkeypatch: Any) -> None:
    import pytest

    for name, (method, broken, script) in MUTANTS.items():
        with monkeypatch.context() as patch:
            patch.setattr(Session50, method, broken)
            with pytest.raises(AssertionError):  # the comparison sees it when it happens
                machine = Sessions50Agree()
                script(machine)
                machine.same_state()
            assert _found_by_search(attempts=3), f"the random search missed {name}"


def test_scripted_50_runs_show_each_rule() -> None:
    """The 5.0 behaviour the comparison covers, on scripted runs of the real sessions."""
    m = Sessions50Agree()
    m.start(client_method="B", server_method="B", client_rm=1, server_rm=1)
    m.publish(end="client", qos=1, topic="a/b", payload=b"1")
    m.publish(end="client", qos=1, topic="a/b", payload=b"2")  # quota 0: waits
    assert m.model["client"].quota == 0 and len(m.channel["server"]) == 1
    m.deliver_next(end="server", refuse=0x97)  # refused: PUBACK 0x97, nothing delivered
    assert m.channel["client"][0]["reason_code"] == 0x97  # type: ignore[typeddict-item]
    m.deliver_next(end="client")
    assert m.model["client"].quota == 1 and not m.model["client"].outgoing
    m.lose_connection()
    m.reconnect(clean_start=False, expired=False)
    assert m.channel == {"client": [], "server": []}  # an error-ended flow is never re-sent
    # Receive Maximum exceeded: the server holds one QoS 2 flow, a second one is 0x93.
    m.publish(end="client", qos=2, topic="a/b", payload=b"3")
    m.deliver_next(end="server")
    m.misbehaving_peer_publishes(
        end="server", qos=2, packet_id=9, alias=None, alias_only=False, topic="x"
    )
    m.channel["server"].reverse()
    m.deliver_next(end="server")
    assert m.disconnects == [0x93] and not m.connected
    m.reconnect(clean_start=True, expired=False)
    assert not m.model["client"].outgoing and not m.model["server"].incoming
    # An unknown alias alone: 0x82; an alias above the maximum: 0x94.
    m.misbehaving_peer_publishes(end="server", qos=1, packet_id=1, alias=1, alias_only=True,
                                 topic="a")  # fmt: skip
    m.deliver_next(end="server")
    m.reconnect(clean_start=False, expired=True)
    m.misbehaving_peer_publishes(end="server", qos=1, packet_id=1, alias=3, alias_only=False,
                                 topic="a")  # fmt: skip
    m.deliver_next(end="server")
    assert m.disconnects == [0x93, 0x82, 0x94]
    # PUBREL for an identifier not held: PUBCOMP 0x92.
    m.reconnect(clean_start=True, expired=False)
    m.unexpected_acknowledgement(end="server", kind="PUBREL", packet_id=4, code=0)
    m.deliver_next(end="server")
    assert m.channel["client"][-1]["reason_code"] == 0x92  # type: ignore[typeddict-item]
    m.same_state()
    assert EDITION == "5.0"


def test_zero_quota_does_not_delay_other_packets() -> None:
    """[MQTT-4.9.0-3], [MQTT-3.3.4-8], [MQTT-3.3.4-10] (5.0): an end whose send quota is 0
    still answers its peer's PUBLISH and acknowledgements at once; only its own new QoS 1
    and 2 messages wait."""
    m = Sessions50Agree()
    m.start(client_method="A", server_method="A", client_rm=1, server_rm=1)
    m.publish(end="client", qos=2, topic="a/b", payload=b"1")
    assert m.model["client"].quota == 0
    m.publish(end="server", qos=1, topic="c", payload=b"2")  # the server's quota is its own
    m.deliver_next(end="client")  # the client, at quota 0, answers PUBACK at once
    assert [p["type"] for p in m.channel["server"]] == ["PUBLISH", "PUBACK"]
    m.deliver_next(end="server")
    m.deliver_next(end="server")
    m.deliver_next(end="client")  # PUBREC: PUBREL goes out at quota 0 too
    assert m.channel["server"][-1]["type"] == "PUBREL" and m.model["client"].quota == 0
    m.publish(end="client", qos=1, topic="a/b", payload=b"3")
    assert m.model["client"].outgoing.keys() == {1}  # that one waits
    m.same_state()
