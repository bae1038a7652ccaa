"""The reference session engine and the model's session, driven side by side (3.1.1).

A Hypothesis ``RuleBasedStateMachine`` in the DatabaseComparison pattern: a client and a
server, each made of the reference ``Session`` and the model's ``SessionModel``, joined by
two channels. Every rule applies the same input to both implementations and compares what
they do; the invariant compares their state after every step and counts itself in
:attr:`SessionsAgree.checks`. ``tests/test_session_stateful.py`` runs it and kills the
reference's mutants with it; ``benchmarks/bench_protocol.py`` times it (steps per second).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from pubproof.model.flows import Method as ModelMethod
from pubproof.model.session import Output as ModelOutput
from pubproof.model.session import SessionModel
from pubproof.model.trace import P
from pubproof.reference.jsonform import from_p, to_p
from pubproof.reference.session import Deliver, Judgement, Method, Send, Session
from pubproof.reference.session import Output as RefOutput

ENDS = ("client", "server")
topics = st.sampled_from(["a/b", "sensors/1", "温度"])
payloads = st.binary(max_size=6)


def model_view(outputs: list[ModelOutput]) -> list[tuple[Any, ...]]:
    view: list[tuple[Any, ...]] = []
    for out in outputs:
        if out.kind in ("send", "deliver"):
            view.append((out.kind, out.packet))
        else:
            view.append((out.kind, out.rules[0], out.packet))
    return view


def reference_view(outputs: list[RefOutput]) -> list[tuple[Any, ...]]:
    view: list[tuple[Any, ...]] = []
    for out in outputs:
        if isinstance(out, Send):
            view.append(("send", to_p(out.packet)))
        elif isinstance(out, Deliver):
            view.append(("deliver", to_p(out.message)))
        else:
            assert isinstance(out, Judgement)
            view.append((out.verdict, out.rule, to_p(out.packet)))
    return view


class SessionsAgree(RuleBasedStateMachine):
    """The 3.1.1 reference ``Session`` and the model's ``SessionModel``, at both ends,
    driven alike and compared after every step."""

    def __init__(self) -> None:
        super().__init__()
        self.model: dict[str, SessionModel] = {}
        self.reference: dict[str, Session] = {}
        self.channel: dict[str, list[P]] = {"client": [], "server": []}  # packets TO that end
        self.connected = True
        self.delivered: dict[str, list[P]] = {"client": [], "server": []}

    @initialize(
        client_method=st.sampled_from(["A", "B"]), server_method=st.sampled_from(["A", "B"])
    )
    def start(self, client_method: str, server_method: str) -> None:
        for end, method in (("client", client_method), ("server", server_method)):
            self.model[end] = SessionModel(method=ModelMethod(method))
            self.reference[end] = Session(method=Method(method))

    def _peer(self, end: str) -> str:
        return "server" if end == "client" else "client"

    def _apply(self, end: str, model_out: list[ModelOutput], ref_out: list[RefOutput]) -> None:
        assert reference_view(ref_out) == model_view(model_out)
        for out in model_out:
            if out.kind == "send" and self.connected:
                assert out.packet is not None
                self.channel[self._peer(end)].append(out.packet)
            elif out.kind == "deliver":
                assert out.packet is not None
                self.delivered[end].append(out.packet)

    @precondition(lambda self: self.connected)
    @rule(end=st.sampled_from(ENDS), qos=st.integers(0, 2), topic=topics, payload=payloads)
    def publish(self, end: str, qos: int, topic: str, payload: bytes) -> None:
        self._apply(
            end,
            self.model[end].publish(topic, payload, qos),
            self.reference[end].publish(topic, payload, qos),
        )

    @precondition(lambda self: self.connected and any(self.channel.values()))
    @rule(end=st.sampled_from(ENDS))
    def deliver_next(self, end: str) -> None:
        if not self.channel[end]:
            end = self._peer(end)
        packet = self.channel[end].pop(0)
        self._apply(
            end, self.model[end].receive(packet), self.reference[end].receive(from_p(packet))
        )

    @precondition(lambda self: self.connected and any(self.channel.values()))
    @rule(end=st.sampled_from(ENDS), data=st.data())
    def duplicate_in_flight(self, end: str, data: st.DataObject) -> None:
        """Questioning the channel: a packet arrives twice."""
        if not self.channel[end]:
            end = self._peer(end)
        self.channel[end].append(data.draw(st.sampled_from(self.channel[end])))

    @precondition(lambda self: self.connected)
    @rule(
        end=st.sampled_from(ENDS),
        kind=st.sampled_from(["PUBACK", "PUBREC", "PUBREL", "PUBCOMP"]),
        packet_id=st.integers(1, 4),
    )
    def unexpected_acknowledgement(self, end: str, kind: str, packet_id: int) -> None:
        self.channel[end].append({"type": kind, "packet_id": packet_id})  # type: ignore[typeddict-item]

    @precondition(lambda self: self.connected)
    @rule()
    def lose_connection(self) -> None:
        self.connected = False
        for queue in self.channel.values():
            queue.clear()

    @precondition(lambda self: not self.connected)
    @rule(resume=st.booleans())
    def reconnect(self, resume: bool) -> None:
        self.connected = True
        for end in ENDS:
            self._apply(
                end,
                self.model[end].reconnect(resume=resume),
                self.reference[end].reconnect(resume=resume),
            )

    @rule(end=st.sampled_from(ENDS))
    def restart_process(self, end: str) -> None:
        """The reference session survives a save and restore through JSON."""
        saved = json.loads(json.dumps(self.reference[end].to_json()))
        self.reference[end] = Session.from_json(saved)

    checks = 0  # invariant checks run (the benchmark reports the rate)

    @invariant()
    def same_state(self) -> None:
        SessionsAgree.checks += 1
        for end, model in self.model.items():
            ref = self.reference[end]
            snapshot = model.snapshot()
            assert [
                [i, a.name.replace("PUB", "AWAIT_PUB"), to_p(m)]
                for i, (a, m) in ref.in_flight.items()
            ] == snapshot["outgoing"]
            held = sorted(
                [i, "STORED" if m is not None else "ID_HELD", None if m is None else to_p(m)]
                for i, m in ref.held.items()
            )
            assert held == snapshot["incoming"]
