"""Session Present judged by the distribution judge (:mod:`pubproof.judge.distribution_session`)
against the sessions the server can hold.

MQTT 3.1.1 [MQTT-3.2.2-1] (CleanSession 1: 0), [MQTT-3.2.2-2] (stored Session state: 1),
[MQTT-3.2.2-3] (none: 0); MQTT 5.0 [MQTT-3.2.2-2] (Clean Start 1: 0), [MQTT-3.2.2-3] (Clean
Start 0: 1 if the Server has Session State for the ClientID, otherwise 0). Each case is a
scripted server (``support.distribution_server``) that answers as the standard says, then
the same with the other flag: the judge must pass the one and name the rule for the other.
A 5.0 session at or past its Session Expiry Interval may be held or not: either answer.
"""

from __future__ import annotations

import dataclasses

import pytest
from support.distribution_server import V50, V311, Server, bad, rules

from pubproof.judge.distribution import DistributionJudge, judge_events
from pubproof.judge.distribution_events import C2S, Event
from pubproof.judge.distribution_session import EXPIRY_MARGIN_MS
from pubproof.judge.findings import VIOLATION, Finding, Source

CLEAN_311, KEPT_311, NONE_311 = "MQTT-3.2.2-1", "MQTT-3.2.2-2", "MQTT-3.2.2-3"
CLEAN_50, STATE_50 = "MQTT-3.2.2-2", "MQTT-3.2.2-3"  # 5.0 numbers them afresh
V31 = 3


def _last_connect(server: Server, flip: bool) -> Server:
    """A copy of ``server`` with its last CONNACK's Session Present flipped when ``flip``."""
    copy = dataclasses.replace(server, events=list(server.events))
    if flip:
        connack = copy.events[-1]
        assert connack.packet is not None and connack.packet["type"] == "CONNACK"
        packet = {**connack.packet, "session_present": not connack.packet["session_present"]}
        copy.events[-1] = dataclasses.replace(connack, packet=packet)
    return copy


def _judged(server: Server, rule: str, owed: bool, *, complete: bool = True) -> None:
    """The server as scripted owes Session Present ``owed`` and passes; flipped, it breaks
    ``rule``: one finding, of the server, with the CONNECT and the CONNACK as evidence."""
    assert server.events[-1].packet is not None
    assert server.events[-1].packet["session_present"] is owed
    assert bad(judge_events(server.events, complete=complete)) == []
    found = bad(judge_events(_last_connect(server, True).events, complete=complete))
    assert rules(found) == {(VIOLATION, rule)}, found
    (finding,) = found
    assert finding.role == "server" and finding.source == Source.DISTRIBUTION
    assert [e["dir"] + ":" + e["type"] for e in finding.evidence] == [
        "c2s:CONNECT", "s2c:CONNACK"
    ]  # fmt: skip
    assert f"Session Present {int(not owed)}" in finding.message


def _either(server: Server) -> None:
    """Either Session Present passes."""
    assert bad(judge_events(server.events)) == []
    assert bad(judge_events(_last_connect(server, True).events)) == []


# -- MQTT 3.1.1 --------------------------------------------------------------------------------


def test_3_1_1_a_fresh_client_identifier_has_no_session() -> None:
    """[MQTT-3.2.2-3]: CleanSession 0, nothing ever stored: Session Present 0."""
    server = Server()
    server.connect("a", "fresh", clean=False)
    _judged(server, NONE_311, False)


def test_3_1_1_after_a_clean_session_ended_there_is_none() -> None:
    """amqtt 0.12.1's fault: a CleanSession 1 session ended with its connection, then
    CleanSession 0 finds no session [MQTT-3.2.2-3]."""
    server = Server()
    server.connect("a", "c", clean=True)
    server.close("a")
    server.connect("b", "c", clean=False)
    _judged(server, NONE_311, False)


def test_3_1_1_a_kept_session_is_resumed() -> None:
    """[MQTT-3.2.2-2]: CleanSession 0 after a CleanSession 0 session: Session Present 1,
    from another link after the close, and taking over a link still connected. Session
    Present 0 there is the link judge's finding (``judge.cited.SESSION_LOST``, the same
    rule), not repeated here."""
    for taken_over in (False, True):
        server = Server()
        server.connect("a", "k", clean=False)
        if not taken_over:
            server.close("a")
        server.connect("b", "k", clean=False)  # [MQTT-3.1.4-2] takes the first link over
        assert server.events[-1].packet is not None
        assert server.events[-1].packet["session_present"] is True
        assert bad(judge_events(server.events)) == []
        assert bad(judge_events(_last_connect(server, True).events)) == []
    assert KEPT_311 == "MQTT-3.2.2-2"


def test_3_1_1_a_clean_session_never_has_one() -> None:
    """[MQTT-3.2.2-1]: CleanSession 1: Session Present 0, a kept session discarded."""
    server = Server()
    server.connect("a", "k", clean=False)
    server.close("a")
    server.connect("b", "k", clean=True)
    _judged(server, CLEAN_311, False)


def test_3_1_has_no_session_present() -> None:
    """MQTT 3.1's CONNACK has no Session Present: nothing is judged, whatever the byte."""
    for clean in (True, False):
        server = Server(level=V31)
        server.connect("a", "x", clean=clean)
        assert judge_events(_last_connect(server, True).events, passes=True) == []


# -- MQTT 5.0 ---------------------------------------------------------------------------------


def test_5_0_clean_start() -> None:
    """5.0 [MQTT-3.2.2-2]: Clean Start 1: Session Present 0, whatever was kept."""
    server = Server(level=V50)
    server.connect("a", "k", clean=False, expiry=60)
    server.close("a")
    server.connect("b", "k", clean=True, expiry=60)
    _judged(server, CLEAN_50, False)


def test_5_0_session_state_or_none() -> None:
    """5.0 [MQTT-3.2.2-3]: Clean Start 0: 1 for a session kept (Session Expiry Interval
    not passed), 0 for a fresh ClientID and for one whose session ended with its
    connection (Session Expiry Interval 0)."""
    server = Server(level=V50)
    server.connect("a", "fresh", clean=False, expiry=60)
    _judged(server, STATE_50, False)
    server = Server(level=V50)
    server.connect("a", "k", clean=False, expiry=60)
    server.close("a")
    server.wait(30.0)
    server.connect("b", "k", clean=False, expiry=60)
    _judged(server, STATE_50, True)
    server = Server(level=V50)
    server.connect("a", "z", clean=False, expiry=0)
    server.close("a")
    server.connect("b", "z", clean=False)
    _judged(server, STATE_50, False)


@pytest.mark.parametrize("waited", [10.0, 5.0, 5.0 - EXPIRY_MARGIN_MS / 1000 + 0.1])
def test_5_0_a_session_at_or_past_its_expiry_may_be_held_or_not(waited: float) -> None:
    """The Session Expiry Interval (5 s) passed by the events' clock, or within the margin
    of passing: the server may have discarded the state or not yet [MQTT-4.1.0-2]."""
    server = Server(level=V50)
    server.connect("a", "e", clean=False, expiry=5)
    server.close("a")
    server.wait(waited)
    server.connect("b", "e", clean=False, expiry=5)
    _either(server)


def test_5_0_a_session_short_of_the_margin_is_held() -> None:
    server = Server(level=V50)
    server.connect("a", "e", clean=False, expiry=5)
    server.close("a")
    server.wait(5.0 - EXPIRY_MARGIN_MS / 1000 - 0.2)
    server.connect("b", "e", clean=False, expiry=5)
    _judged(server, STATE_50, True)


def test_5_0_after_an_expired_session_a_new_one_is_known_again() -> None:
    """Once a CONNECT follows the expiry, the session is the model's again: a new session
    with Session Expiry Interval 0 ends with its link, so the next owes 0."""
    server = Server(level=V50)
    server.connect("a", "e", clean=False, expiry=5)
    server.close("a")
    server.wait(10.0)
    server.connect("b", "e", clean=False, expiry=0, session_present=False)
    server.close("b")
    server.connect("c", "e", clean=False)
    _judged(server, STATE_50, False)


# -- what the judge can know ------------------------------------------------------------------


def test_without_every_link_only_a_clean_connect_is_judged() -> None:
    """``complete`` False: a session may exist the judge never saw, so only CleanSession
    (Clean Start) 1 is judged; a capture judges none (its compiled twin does not)."""
    for level, clean_rule in ((V311, CLEAN_311), (V50, CLEAN_50)):
        fresh = Server(level=level)
        fresh.connect("a", "x", clean=False)
        assert bad(judge_events(_last_connect(fresh, True).events, complete=False)) == []
        clean = Server(level=level)
        clean.connect("a", "x", clean=True)
        _judged(clean, clean_rule, False, complete=False)
        judge = DistributionJudge(complete=False, capture=True)
        found: list[Finding] = judge.feed_all(_last_connect(clean, True).events)
        assert bad(found) == []


def test_5_0_a_disconnect_that_ends_the_session() -> None:
    """5.0 [MQTT-3.2.2-3]: a DISCONNECT with Session Expiry Interval 0 ends a session the
    CONNECT asked to keep for 60 s, so the next Clean Start 0 finds none; with 60 it is
    kept, and Session Present 1 is owed."""

    def run(given: int, sent: bool) -> list[Finding]:
        server = Server(level=V50)
        server.connect("a", "d", clean=False, expiry=60)
        server.t += 0.01
        disconnect = {"type": "DISCONNECT", "properties": {"session_expiry_interval": given}}
        server.events.append(Event(t=server.t, conn="a", direction=C2S, packet=disconnect))
        server.close("a")
        server.connect("b", "d", clean=False, session_present=sent)
        return bad(judge_events(server.events))

    assert run(0, False) == [] and run(60, True) == []
    assert rules(run(0, True)) == {(VIOLATION, STATE_50)}
    assert rules(run(60, False)) == {(VIOLATION, STATE_50)}
