"""The distribution judge and a 5.0 client's Receive Maximum: [MQTT-3.3.4-9] "The Server
MUST NOT send more than Receive Maximum QoS 1 and QoS 2 PUBLISH packets for which it has
not received PUBACK, PUBCOMP, or PUBREC with a Reason Code of 128 or greater from the
Client". While that quota is used up, a QoS 1 or 2 copy owed waits: not missing, and the
copies of its message sent so far (a QoS 0 copy of an overlapping subscription) are not
judged as all the session gets (``unknown:quota-full``). 3.x has no Receive Maximum."""

from __future__ import annotations

import json
from pathlib import Path

from support.distribution_server import V50, V311, Server, bad, rules

from pubproof.judge.distribution import DistributionJudge
from pubproof.judge.distribution_events import from_probe
from pubproof.judge.findings import MISSING, TOLERATED, VIOLATION, Finding
from pubproof.model.editions import Edition
from pubproof.testing.reproducer import evidence

QUOTA_CASE = Path(__file__).parent / "support" / "quota-case.json"
OVERLAP = {V50: "MQTT-3.3.4-2", V311: "MQTT-3.3.5-1"}


def _judged(server: Server, **options: object) -> tuple[DistributionJudge, list[Finding]]:
    judge = DistributionJudge(**options)  # type: ignore[arg-type]
    return judge, judge.feed_all(server.events)


def _outcomes(judge: DistributionJudge) -> list[str]:
    return [entry.outcome for entry in judge.ledger.ins]


def _quota_used(level: int, receive_maximum: int | None, *, acknowledged: bool) -> Server:
    """``sub`` (Receive Maximum ``receive_maximum``) is sent two QoS 1 copies, acknowledged
    or not, then subscribes twice to ``a/x`` (QoS 1 and QoS 0) and gets only the QoS 0 copy
    of a QoS 1 message."""
    server = Server(level=level)
    server.connect("sub", receive_maximum=receive_maximum)
    server.subscribe("sub", ("q/#", 1))
    server.connect("pub")
    for n in (b"1", b"2"):
        server.publish("pub", "q/t", n, 1)
        server.deliver("sub", "q/t", n, 1, acknowledged=acknowledged)
    server.subscribe("sub", ("a/+", 1), ("a/#", 0))
    server.publish("pub", "a/x", b"m", 1)
    server.deliver("sub", "a/x", b"m", 0)
    return server


def test_the_quota_case_of_mosquitto_gives_no_finding() -> None:
    """The reproducer of /work/notes/quota-case (mosquitto 2.0.11, 5.0): c1 connects with
    Receive Maximum 2, withholds its acknowledgements, subscribes ``+`` QoS 2 and ``#`` QoS
    0; its own QoS 1 message comes back at QoS 0 only, the QoS 1 copy behind the quota."""
    data = json.loads(QUOTA_CASE.read_text("utf-8"))
    entries = evidence(data["trace"], Edition.V50, data["readings"])
    judge = DistributionJudge(data["readings"])
    found = judge.feed_all(from_probe(entries))
    assert bad(found) == [], found
    assert _outcomes(judge).count("unknown:quota-full") == 1
    assert judge.ledger.counts()["copies_owed_by_outcome"]["unknown:quota-full"] == 1


def test_overlapping_copies_behind_a_used_up_quota_are_not_judged() -> None:
    judge, found = _judged(_quota_used(V50, 2, acknowledged=False))
    assert bad(found) == []
    assert _outcomes(judge) == ["delivered", "delivered", "unknown:quota-full"]


def test_overlapping_copies_with_quota_to_spare_are_judged() -> None:
    """The same QoS 0 copy alone, the quota not used up (the client acknowledged, or its
    Receive Maximum leaves room, or 3.x, which has none): one copy at QoS 0, not 1."""
    for level, maximum, acknowledged in (
        (V50, 2, True), (V50, 3, False), (V50, None, False), (V311, None, False),
    ):  # fmt: skip
        judge, found = _judged(_quota_used(level, maximum, acknowledged=acknowledged))
        assert rules(found) == {(VIOLATION, OVERLAP[level])}, (level, maximum, acknowledged)
        assert "unknown:quota-full" not in _outcomes(judge)


def test_the_copy_at_the_highest_qos_behind_the_quota_is_judged_when_it_came() -> None:
    """Sent the QoS 1 copy after all: the copies are judged (one per subscription, the MAY
    of 3.3.4), quota or not."""
    server = _quota_used(V50, 3, acknowledged=False)
    server.deliver("sub", "a/x", b"m", 1, acknowledged=False)  # the quota used up now
    judge, found = _judged(server, passes=True)
    assert bad(found) == []
    assert any("a/x" in f.message and f.verdict == TOLERATED for f in found)
    assert "unknown:quota-full" not in _outcomes(judge)


def _waiting(qos: int) -> tuple[Server, int]:
    """``sub`` (Receive Maximum 1) is sent one copy at ``qos``, unacknowledged, and owed a
    second it is not sent; the first copy's packet identifier."""
    server = Server(level=V50)
    server.connect("sub", receive_maximum=1)
    server.subscribe("sub", ("q/#", qos))
    server.connect("pub")
    server.publish("pub", "q/t", b"1", qos)
    first = server.deliver("sub", "q/t", b"1", qos, acknowledged=False)
    assert first is not None
    server.publish("pub", "q/t", b"2", qos)
    return server, first


MISSED = {(MISSING, "MQTT-4.5.0-1")}


def test_a_copy_waiting_for_the_quota_is_not_missing_until_the_quota_frees() -> None:
    server, first = _waiting(1)
    judge, found = _judged(server)
    assert bad(found) == []
    assert _outcomes(judge) == ["delivered", "unknown:quota-full"]
    server.acknowledge("sub", first, "PUBACK")  # the quota frees; the copy never comes
    judge, found = _judged(server)
    assert rules(found) == MISSED
    assert _outcomes(judge) == ["delivered", "missing"]


def test_a_pubrec_keeps_the_quota_until_its_pubcomp_unless_it_refuses() -> None:
    """A PUBREC below 0x80 leaves the QoS 2 flow unacknowledged until its PUBCOMP; one of
    0x80 or more ends it, as a PUBCOMP does."""
    server, first = _waiting(2)
    server.acknowledge("sub", first, "PUBREC", 0)
    assert bad(_judged(server)[1]) == []
    for kind, code in (("PUBCOMP", 0), ("PUBREC", 0x80)):
        freed, _ = _waiting(2)
        if kind == "PUBCOMP":
            freed.acknowledge("sub", first, "PUBREC", 0)
        freed.acknowledge("sub", first, kind, code)
        assert rules(_judged(freed)[1]) == MISSED, (kind, code)


def test_a_qos_0_copy_never_waits_for_the_quota() -> None:
    server = Server(level=V50)
    server.connect("sub", receive_maximum=1)
    server.subscribe("sub", ("q/#", 1), ("z/#", 0))
    server.connect("pub")
    server.publish("pub", "q/t", b"1", 1)
    server.deliver("sub", "q/t", b"1", 1, acknowledged=False)
    server.publish("pub", "z/t", b"2", 0)  # owed at QoS 0, never sent
    judge, found = _judged(server)
    assert rules(found) == MISSED
    assert _outcomes(judge) == ["delivered", "missing"]


def test_a_capture_waits_for_the_quota_past_its_patience() -> None:
    """On a capture, a copy owed past the patience is missing, unless it waits for the
    quota."""
    for acknowledged, expected in ((False, "unknown:quota-full"), (True, "missing")):
        server = Server(level=V50)
        server.connect("sub", receive_maximum=1)
        server.subscribe("sub", ("q/#", 1))
        server.connect("pub")
        server.publish("pub", "q/t", b"1", 1)
        server.deliver("sub", "q/t", b"1", 1, acknowledged=acknowledged)
        server.publish("pub", "q/t", b"2", 1)
        server.wait(5)
        server.subscribe("pub", ("x", 0))  # an event 5 s later: past the patience of 1 s
        judge, found = _judged(server, complete=False, capture=True, patience=1.0)
        assert (expected == "missing") == bool(rules(found) & MISSED), (acknowledged, found)
        assert _outcomes(judge)[1] == expected, acknowledged
        assert list(judge.copy_outcomes.values()) == [expected], acknowledged


def test_overlapping_copies_behind_the_quota_of_a_session_that_ended_are_not_judged() -> None:
    """The quota used up, the session ends with its copy at the highest QoS still waiting
    (its link closes with a Session Expiry Interval of 0, or the client starts clean on a
    new link): the QoS 0 copy it got is not all the server would have sent it, and what
    waited ends with the session. Found by exploring mosquitto 2.0.11 (5.0): MQTT-3.3.4-2
    "one copy at QoS 0, not the highest QoS 1" after the example's clean start."""
    for again in (False, True):
        server = _quota_used(V50, 2, acknowledged=False)
        if again:
            server.connect("sub2", "sub", clean=True)
        else:
            server.close("sub")
        _, found = _judged(server)
        assert rules(found) == set(), (again, found)
