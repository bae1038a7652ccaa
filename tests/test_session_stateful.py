"""The reference session engine and the model's session, driven side by side.

Runs :class:`pubproof.testing.sessions.SessionsAgree` (a ``RuleBasedStateMachine`` in the
DatabaseComparison pattern: a client and a server, each made of the reference ``Session``
and the model's ``SessionModel``, joined by two channels; every rule applies the same
input to both and compares what they do, the invariant compares their state after every
step), and kills the reference's mutants with it.
"""

from __future__ import annotations

from typing import Any

from hypothesis import Phase, settings

from pubproof.reference.jsonform import from_p, to_p
from pubproof.reference.session import Deliver, Method, Send, Session
from pubproof.reference.session import Output as RefOutput
from pubproof.testing.sessions import SessionsAgree

SessionsAgree.TestCase.settings = settings(max_examples=300, stateful_step_count=60, deadline=None)
TestSessionsAgree = SessionsAgree.TestCase


def _mutant_duplicate_delivery(self: Session, packet: Any) -> list[RefOutput]:
    """A Method B receiver that delivers a duplicate QoS 2 PUBLISH again."""
    out = ORIGINAL_ON_PUBLISH(self, packet)
    if packet.qos == 2 and not any(isinstance(o, Deliver) for o in out) and self.method is Method.B:
        out.insert(0, Deliver(message=packet))
    return out


def _mutant_no_dup_flag(self: Session, *, resume: bool) -> list[RefOutput]:
    """Re-sends without DUP=1."""
    out = ORIGINAL_RECONNECT(self, resume=resume)
    fixed: list[RefOutput] = []
    for o in out:
        if isinstance(o, Send) and hasattr(o.packet, "dup"):
            p = to_p(o.packet)
            fixed.append(Send(packet=from_p({**p, "dup": False})))
        else:
            fixed.append(o)
    return fixed


ORIGINAL_ON_PUBLISH = Session._on_publish
ORIGINAL_RECONNECT = Session.reconnect


def _duplicate_a_qos2_publish(machine: SessionsAgree) -> None:
    """Method B server; the client's QoS 2 PUBLISH arrives twice."""
    machine.start(client_method="B", server_method="B")
    machine.publish(end="client", qos=2, topic="a/b", payload=b"x")
    machine.channel["server"].append(machine.channel["server"][0])  # duplicate_in_flight
    machine.deliver_next(end="server")
    machine.deliver_next(end="server")


def _resend_after_a_lost_connection(machine: SessionsAgree) -> None:
    """A QoS 1 PUBLISH in flight when the connection is lost, re-sent on resuming."""
    machine.start(client_method="A", server_method="A")
    machine.publish(end="client", qos=1, topic="a/b", payload=b"x")
    machine.lose_connection()
    machine.reconnect(resume=True)


MUTANTS = {
    "duplicate-delivery": ("_on_publish", _mutant_duplicate_delivery, _duplicate_a_qos2_publish),
    "no-dup-flag": ("reconnect", _mutant_no_dup_flag, _resend_after_a_lost_connection),
}


def _found_by_search(attempts: int) -> bool:
    """Whether the random search finds a difference in one of ``attempts`` independent
    runs. One run of 300 programs missed the duplicate-delivery mutant about one time in
    ten (measured on 40 runs), so a single run would make a flaky test."""
    from hypothesis.stateful import run_state_machine_as_test

    for _ in range(attempts):
        try:
            run_state_machine_as_test(
                SessionsAgree,
                settings=settings(
                    max_examples=300,
                    stateful_step_count=60,
                    deadline=None,
                    database=None,
                    phases=(Phase.generate,),
                ),
            )
        except AssertionError:
            return True
    return False


def test_the_scripted_runs_agree_on_the_real_session() -> None:
    """The scripts below reach their mutants' cases and, unbroken, the two sides agree."""
    for _, _, script in MUTANTS.values():
        machine = SessionsAgree()
        script(machine)
        machine.same_state()


def test_the_comparison_kills_mutants(monkeypatch: Any) -> None:
    import pytest

    for name, (method, broken, script) in MUTANTS.items():
        with monkeypatch.context() as patch:
            patch.setattr(Session, method, broken)
            with pytest.raises(AssertionError):  # the comparison sees it when it happens
                script(SessionsAgree())
            assert _found_by_search(attempts=3), f"the random search missed {name}"
