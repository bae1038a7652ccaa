"""The reference 5.0 session engine and the model's 5.0 session, driven side by side.

Runs :class:`pubproof.testing.sessions50.Sessions50Agree` (as
``tests/test_session_stateful.py`` for 3.1.1: both ends of both implementations, with
small negotiated limits, compared after every step, the flow-control bound held), kills
the reference's mutants with it, and shows each rule in scripted runs.
"""

from __future__ import annotations

from typing import Any

from hypothesis import Phase, settings

from pubproof.reference.packets import PubAck, PubRec
from pubproof.reference.session50 import Session50
from pubproof.testing.sessions50 import EDITION, Sessions50Agree

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
