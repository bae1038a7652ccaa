"""The close judge in MQTT 5.0 (pubproof.judge.close): offences the model's 5.0 wire format
rejects under the receiver's declared limits, offences of the 5.0 link judge, the receiver
that reads on, and its DISCONNECT Reason Code against the one the model calls for."""

from __future__ import annotations

from typing import Any

import pytest

from pubproof.judge import close
from pubproof.judge import packets as P
from pubproof.judge.close import (
    CLIENT_SHOULD_CLOSE,
    CLOSE_ON_VIOLATION,
    CLOSE_WITH_REASON,
    DISCONNECT_REASON,
    CloseJudge,
    Seen,
    answer_of,
    close_rules,
    disconnect_code,
    expectation,
    reason_code_verdict,
    request_of,
)
from pubproof.judge.ends import C2S, S2C, BothEnds
from pubproof.judge.link50 import FlowOffence
from pubproof.model import wire as model_wire
from pubproof.model.editions import Edition, Limits
from pubproof.model.rules import RULES

V5, V311 = Edition.V50, Edition.V311


def publish50(packet_id: int = 1, *, alias: int | None = None, payload: bytes = b"\x00",
              topic: str = "t", qos: int = 1) -> bytes:  # fmt: skip
    properties: dict[str, Any] = {} if alias is None else {"topic_alias": alias}
    packet: Any = {
        "type": "PUBLISH", "dup": False, "qos": qos, "retain": False, "topic": topic,
        "packet_id": packet_id if qos else None, "payload_hex": payload.hex(),
        "properties": properties,
    }  # fmt: skip
    return model_wire.encode(packet, V5)


def ack50(kind: int, packet_id: int, code: int | None = None) -> bytes:
    body = packet_id.to_bytes(2, "big") + (b"" if code is None else bytes((code, 0)))
    return bytes((kind << 4 | (0x02 if kind == 6 else 0), len(body))) + body


def seen(direction: str, frame: int, data: bytes) -> Seen:
    return Seen(direction=direction, frame=frame, offset=0, fields=close.shown(data, V5))


def test_expectation_uses_the_receiver_s_limits() -> None:
    data = publish50(alias=3)
    # the defaults: Topic Alias Maximum 0, so any alias is above it
    assert expectation(data, V5, {}).failure is not None
    assert expectation(data, V5, {}, Limits(topic_alias_maximum=3)).failure is None
    exp = expectation(data, V5, {}, Limits(topic_alias_maximum=2))
    assert exp.close and exp.failure is not None
    assert exp.failure.rule == "PP50-3.3.4-topic-alias-maximum" and exp.failure.reason_code == 0x94
    big = publish50(payload=bytes(100))
    exp = expectation(big, V5, {}, Limits(maximum_packet_size=50))
    assert exp.failure is not None and exp.failure.reason_code == 0x95
    assert exp.failure.rule == "PP50-3.1.2-packet-too-large"
    # 3.1.1: no limits, as before
    assert expectation(bytes.fromhex("36050001610001"), V311, {}).failure is not None


def test_close_rules_per_edition() -> None:
    assert close_rules("MQTT-3.3.1-4", Edition.V31) == ("MQTT-3.3.1-4",)
    assert close_rules("MQTT-3.3.1-4", V311)[-1] == CLOSE_ON_VIOLATION
    rules = close_rules("PP50-3.1.2-packet-too-large", V5)
    assert rules[0] == "PP50-3.1.2-packet-too-large" and rules[-1] == CLOSE_WITH_REASON
    assert "MQTT-3.1.2-24" in rules  # the rule's also
    assert RULES.by_id(CLOSE_WITH_REASON, V5).key == "flow50.close.with-reason-code"


@pytest.mark.parametrize(
    ("expected", "sent", "verdict"),
    [
        (0x94, 0x94, "pass"), (0x94, 0x82, "tolerated"), (0x94, 0x80, "tolerated"),
        (0x94, 0x81, "tolerated"), (0x94, 0x00, "deviation"), (0x94, 0x93, "deviation"),
        (0x81, 0x82, "tolerated"), (0x93, 0x8E, "deviation"), (0x95, 0x04, "deviation"),
    ],
)  # fmt: skip
def test_reason_code_verdict(expected: int, sent: int, verdict: str) -> None:
    assert reason_code_verdict(expected, sent) == verdict


def test_disconnect_code() -> None:
    assert disconnect_code(P.disconnect()) == 0
    assert disconnect_code(P.disconnect(0x93)) == 0x93
    assert disconnect_code(P.disconnect(0x94, {"reason_string": "x"})) == 0x94
    assert disconnect_code(b"\xe0") == 0


def test_5_0_acks_are_answers_and_requests() -> None:
    assert answer_of(ack50(4, 7, 0x10), V5) == ("PUBACK", 7)
    assert answer_of(ack50(4, 7, 0x10)) is None  # 3.x: 4 bytes or not an answer
    assert answer_of(ack50(4, 7), V5) == ("PUBACK", 7)
    assert request_of(ack50(6, 3, 0x92), V5) == ("PUBCOMP", 3)
    assert request_of(publish50(5), V5) == ("PUBACK", 5)


def _judge_wire_offence(
    direction: str, answers: list[bytes], *, limits: Limits
) -> tuple[CloseJudge, list[Any]]:
    judge = CloseJudge()
    data = publish50(9, alias=3)
    offending = seen(direction, 5, data)
    judge.offence(offending, data, V5, None, [], limits=limits)
    back = S2C if direction == C2S else C2S
    for frame, answer in enumerate(answers, start=6):
        judge.packet(seen(back, frame, answer), answer)
    return judge, judge.findings()


def test_a_server_that_reads_on_after_a_5_0_offence() -> None:
    limits = Limits(topic_alias_maximum=2)
    judge, found = _judge_wire_offence(C2S, [ack50(4, 9)], limits=limits)
    ((offence, finding),) = found
    assert offence.reason_code == 0x94 and offence.edition is V5
    assert finding.verdict == "violation" and finding.role == "server"
    # the Server owes the close; the alias above the maximum is the Client's fault
    assert finding.rules == (CLOSE_WITH_REASON,)
    assert "PP50-3.3.4-topic-alias-maximum" in finding.provoked
    assert [s.frame for s in judge.evidence(offence, finding)] == [5, 6]
    # a client that reads on: 5.0 binds the Server only; a Client SHOULD close
    _, found = _judge_wire_offence(S2C, [ack50(4, 9)], limits=limits)
    ((_, finding),) = found
    assert finding.verdict == "deviation" and finding.role == "client"
    assert finding.rules == (CLIENT_SHOULD_CLOSE,) == ("PP50-4.13.1-client-close",)
    # within the limits there is no offence at all
    _, found = _judge_wire_offence(C2S, [ack50(4, 9)], limits=Limits(topic_alias_maximum=3))
    assert found == []


@pytest.mark.parametrize(
    ("code", "verdict"), [(0x94, None), (0x82, "tolerated"), (0x00, "deviation")]
)
def test_the_disconnect_reason_code_is_judged(code: int, verdict: str | None) -> None:
    judge, found = _judge_wire_offence(
        C2S, [P.disconnect(code)], limits=Limits(topic_alias_maximum=2)
    )
    if verdict is None:
        assert found == []
        return
    ((offence, finding),) = found
    # 4.13.1 "it SHOULD send a DISCONNECT packet containing the Reason Code"
    assert finding.verdict == verdict and finding.rules == (DISCONNECT_REASON,)
    assert finding.provoked[0] == "PP50-3.3.4-topic-alias-maximum"
    assert finding.source == "close" and finding.role == "server"
    assert f"DISCONNECT 0x{code:02X}" in finding.message and "0x94" in finding.message
    assert offence.answered is None
    assert [s.frame for s in judge.evidence(offence, finding)] == [5, 6]


def test_a_flow_offence_and_its_disconnect() -> None:
    ends = BothEnds(edition=V5)
    ends.feed(C2S, {"type": "CONNECT", "clean_start": True, "properties": {}})
    ends.feed(S2C, {"type": "CONNACK", "session_present": False, "reason_code": 0,
                    "properties": {"receive_maximum": 1}})  # fmt: skip
    first = {"type": "PUBLISH", "dup": False, "qos": 1, "retain": False, "topic": "t",
             "packet_id": 1, "payload_hex": "", "properties": {}}  # fmt: skip
    assert ends.feed(C2S, first) == []
    owed = ends.owed_by(S2C)
    assert ends.feed(C2S, {**first, "packet_id": 2}) and ends.offence is not None
    for sent, verdict in ((0x93, None), (0x80, "tolerated"), (0x8E, "deviation")):
        judge = CloseJudge()
        offending = seen(C2S, 3, publish50(2))
        judge.flow_offence(offending, ends.offence, owed)
        judge.packet(seen(S2C, 4, ack50(4, 1)), ack50(4, 1))  # owed before: proves nothing
        judge.packet(seen(S2C, 5, P.disconnect(sent)), P.disconnect(sent))
        found = judge.findings()
        if verdict is None:
            assert found == []
        else:
            ((_, finding),) = found
            assert finding.verdict == verdict and finding.rules == (DISCONNECT_REASON,)
            assert finding.provoked == ("MQTT-3.3.4-7",)  # the Client's Receive Maximum


def test_a_flow_offence_read_on() -> None:
    judge = CloseJudge()
    offence = FlowOffence("PP50-3.3.2-topic-alias-unknown", "unknown alias", 0x82)
    judge.flow_offence(seen(S2C, 3, publish50(4)), offence, [])
    later = publish50(5)  # the server asks again; the client answers: it read on
    judge.packet(seen(S2C, 4, later), later)
    judge.packet(seen(C2S, 5, ack50(4, 5)), ack50(4, 5))
    ((_, finding),) = judge.findings()
    assert finding.role == "client" and finding.verdict == "deviation"
    ping = P.PINGREQ
    judge = CloseJudge()
    judge.flow_offence(seen(C2S, 3, publish50(4)), offence, [])
    judge.packet(seen(C2S, 4, ping), ping)
    judge.packet(seen(S2C, 5, P.PINGRESP), P.PINGRESP)
    ((_, finding),) = judge.findings()
    assert finding.role == "server" and finding.verdict == "violation"
    assert finding.rules == (CLOSE_WITH_REASON,)
    assert finding.provoked == ("PP50-3.3.2-topic-alias-unknown",)


def test_3_1_1_offences_are_judged_as_before() -> None:
    judge = CloseJudge()
    data = bytes.fromhex("36050001610001")  # QoS 3 [MQTT-3.3.1-4]
    exp = expectation(data, V311, {})
    assert exp.failure is not None
    judge.offence(Seen(direction=C2S, frame=1, offset=0, fields={"type": "PUBLISH"}), data,
                  V311, None, [])  # fmt: skip
    answer = bytes.fromhex("40020001")
    judge.packet(Seen(direction=S2C, frame=2, offset=0, fields={"type": "PUBACK"}), answer)
    judge.packet(Seen(direction=S2C, frame=3, offset=0, fields={"type": "DISCONNECT"}),
                 P.DISCONNECT)  # fmt: skip
    for offence, finding in judge.findings():
        assert offence.disconnect is None  # 3.x DISCONNECTs carry no Reason Code
        assert finding.rules[0] == CLOSE_ON_VIOLATION


def test_close_rules_in_5_0_carry_no_3_1_1_numbers() -> None:
    # MQTT-3.3.1-4 is a rule of 3.1.1 and 5.0 alike: its also is 3.1.1's
    shared = RULES.by_id("MQTT-3.3.1-4", V5)
    assert Edition.V311 in shared.ids
    assert close_rules("MQTT-3.3.1-4", V5) == ("MQTT-3.3.1-4", CLOSE_WITH_REASON)
    # a rule of 5.0 alone keeps its also (5.0 numbers)
    alone = RULES.by_id("PP50-3.1.2-packet-too-large", V5)
    assert set(alone.ids) == {V5}
    assert close_rules("PP50-3.1.2-packet-too-large", V5) == (
        "PP50-3.1.2-packet-too-large", *alone.also, CLOSE_WITH_REASON,
    )  # fmt: skip
    assert close_rules("not-a-rule", V5) == ("not-a-rule", CLOSE_WITH_REASON)
