"""Both ends of a captured connection (:class:`pubproof.judge.ends.BothEnds`, two link
judges): each kind of flow fault found about its sender, the Client's rule ids for a
client, the edition set after construction, [MQTT-3.3.1-3] only on a clean session.
(The compiled twin is held equal to it on random packet sequences by
``tests/test_judge_twins.py``.)"""

from __future__ import annotations

from typing import Any

import pytest

from pubproof.judge.ends import BothEnds
from pubproof.judge.findings import Finding


def _key(findings: list[Finding]) -> list[tuple[str, tuple[str, ...], str]]:
    return [(f.verdict, f.rules, f.message) for f in findings]


def _session(*packets: tuple[str, dict[str, Any]]) -> list[list[tuple[str, tuple[str, ...], str]]]:
    judge = BothEnds()
    return [_key(judge.feed(d, f)) for d, f in packets]


def _pub(packet_id: int, *, dup: bool = False, qos: int = 1, topic: str = "a") -> dict[str, Any]:
    return {
        "type": "PUBLISH", "dup": dup, "qos": qos, "retain": False, "topic": topic,
        "packet_id": packet_id, "payload_hex": "00",
    }  # fmt: skip


CONNECT = {"type": "CONNECT", "clean_session": True}
CONNACK = {"type": "CONNACK", "session_present": False, "return_code": 0}


def test_finds_each_kind_of_flow_fault() -> None:
    """The differential tests cannot pass on judges that find nothing: these do find."""
    results = _session(
        ("c2s", CONNECT),
        ("s2c", CONNACK),
        ("s2c", {"type": "PUBACK", "packet_id": 9}),  # nobody awaits it: tolerated
        ("s2c", _pub(1, qos=2)),
        ("s2c", _pub(1, qos=2, topic="b")),  # a new message on an identifier in use
        ("s2c", {"type": "PUBREL", "packet_id": 1}),  # before the client's PUBREC
        ("c2s", _pub(2, dup=True)),  # DUP 1 from a client: [MQTT-3.3.1-3] is a server's
        ("c2s", _pub(2, topic="b")),  # the client's new message on an identifier in use
    )
    assert results[2] == [
        ("tolerated", ("MQTT-3.3.4-1",), "server: PUBACK 9: PUBACK for an identifier not "
         "awaiting one (unknown, or a QoS 2 flow): ignored"),
    ]  # fmt: skip
    assert [r[1] for r in results[4]] == [("MQTT-2.3.1-4", "MQTT-2.3.1-2")]
    assert results[5][0][:2] == ("violation", ("MQTT-4.3.3-1",))
    assert results[6] == []
    # the same fault by the client is judged by the Client's rule, not the Server's
    assert [r[1] for r in results[7]] == [("MQTT-2.3.1-2",)]
    assert "client: PUBLISH" in results[7][0][2]


def test_the_edition_reaches_the_judge_after_construction() -> None:
    """3.1 has no Session Present: a resumed session answered with 0 is no finding there."""
    packets = (
        ("c2s", {"type": "CONNECT", "clean_session": False}),
        ("s2c", CONNACK),
        ("c2s", {"type": "CONNECT", "clean_session": False}),
        ("s2c", CONNACK),
    )
    for v311, rules in ((True, [("MQTT-3.2.2-2", "MQTT-3.1.2-4")]), (False, [])):
        judge = BothEnds()
        judge.v311 = v311  # as the connection learns its level from CONNECT
        found = [f.rules for d, p in packets for f in judge.feed(d, p)]
        assert found == rules


@pytest.mark.parametrize("clean", [True, False])
def test_forwarded_dup_only_on_a_clean_session(clean: bool) -> None:
    judge = BothEnds()
    judge.feed("c2s", {"type": "CONNECT", "clean_session": clean})
    found = judge.feed("s2c", _pub(3, dup=True))
    assert [f.rules for f in found] == ([("MQTT-3.3.1-3",)] if clean else [])
