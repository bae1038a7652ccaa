"""MQTT 5.0 packets in the ``P`` form for the tests of the 5.0 link judge
(``tests/test_judge50_link*.py``), and :func:`run`, which feeds them to
:class:`~pubproof.judge.ends.BothEnds` and gives the findings of each packet (checking
that every finding is the link judge's, names the sending end and registered 5.0 rules)."""

from __future__ import annotations

from typing import Any

from pubproof.judge.ends import C2S, S2C, BothEnds
from pubproof.judge.findings import Source
from pubproof.model.editions import Edition
from pubproof.model.rules import RULES

V5 = Edition.V50
Key = tuple[str, tuple[str, ...], str | None]


def pub(
    packet_id: int | None = 1, *, qos: int = 1, topic: str = "t", dup: bool = False,
    retain: bool = False, alias: int | None = None, payload: str = "00",
) -> dict[str, Any]:  # fmt: skip
    properties = {} if alias is None else {"topic_alias": alias}
    return {
        "type": "PUBLISH", "dup": dup, "qos": qos, "retain": retain, "topic": topic,
        "packet_id": packet_id if qos else None, "payload_hex": payload,
        "properties": properties,
    }  # fmt: skip


def ack(kind: str, packet_id: int, code: int = 0) -> dict[str, Any]:
    return {"type": kind, "packet_id": packet_id, "reason_code": code, "properties": {}}


def connect(*, clean: bool = True, **properties: int) -> dict[str, Any]:
    return {"type": "CONNECT", "clean_start": clean, "properties": properties}


def connack(*, present: bool = False, code: int = 0, **properties: int) -> dict[str, Any]:
    return {
        "type": "CONNACK", "session_present": present, "reason_code": code,
        "properties": properties,
    }  # fmt: skip


def run(*packets: tuple[str, dict[str, Any]]) -> tuple[BothEnds, list[list[Key]]]:
    ends = BothEnds(edition=V5)
    found: list[list[Key]] = []
    for direction, fields in packets:
        findings = ends.feed(direction, fields)
        for f in findings:
            assert f.source == Source.LINK
            assert f.role == ("client" if direction == C2S else "server")
            for rule_id in f.rules:
                RULES.by_id(rule_id, V5)  # every id a registered 5.0 rule
        found.append([(f.verdict, f.rules, None) for f in findings])
    return ends, found


OPEN = ((C2S, connect()), (S2C, connack()))
