"""The close judge: did the receiver of a packet the model rejects close the connection?

[MQTT-4.8.0-1] "Unless stated otherwise, if either the Server or Client encounters a
protocol violation, it MUST close the Network Connection on which it received that Control
Packet which caused the protocol violation." MQTT 3.1.1 says so for malformed packets too
(e.g. [MQTT-3.3.1-4], [MQTT-2.2.2-2]); MQTT 3.1 names no receiver action.

:func:`expectation` is the model's verdict on a packet under the chosen readings and under
every other value of each reading (must the receiver close?); :func:`close_rules` the rules
a finding cites. The live probe asks the question directly, by sending PINGREQ after its
case (:func:`pubproof.probe.judge_wire.case_findings`); a capture has no such question, so
:class:`CloseJudge` finds the evidence in what the two ends happened to send:

- the *offence*: the first PUBLISH-family packet of a direction that the model rejects
  (:func:`expectation`, under the connection's readings);
- the receiver *kept the connection open* when it answered the offending packet itself or
  a request the offender sent after it: a PUBACK or PUBREC for a QoS 1 or 2 PUBLISH, a
  PUBCOMP for a PUBREL, a PINGRESP for a PINGREQ. Such an answer proves the receiver read
  the offending packet and went on.
  An answer the receiver already owed before the offence proves nothing, so those are
  set aside (the flow judge's owed answers and the PINGREQs not yet answered, taken when
  the offence is seen);
- a receiver that closes later (after the other end's FIN, say) has still read on: the
  close the rule asks for is the one that stops the reading, so a later FIN or RST does
  not excuse an answer.

The verdict comes when the connection ends: a violation of MQTT-4.8.0-1 (with the rule
the offence broke and the rule's own close obligations, as the probe cites them) for a
receiver that answered; tolerated when another value of a reading accepts the packet;
nothing when nothing shows that the receiver read on. MQTT 3.1
names no receiver action, so a 3.1 connection is not judged here. Nothing here runs
before an offence: the connection looks at :attr:`Connection.closing` only once it is set.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pubproof.judge.findings import TOLERATED, VIOLATION, Finding, Source
from pubproof.judge.packets import FrameError, PacketType, header_length, type_name
from pubproof.model import flow_rules
from pubproof.model import wire as model_wire
from pubproof.model.editions import READINGS, Edition, resolve_readings
from pubproof.model.rules import INCOMPLETE, RULES
from pubproof.model.wire import Failure

#: [MQTT-4.8.0-1] "Unless stated otherwise, if either the Server or Client encounters a
#: protocol violation, it MUST close the Network Connection on which it received that
#: Control Packet which caused the protocol violation." (a flow rule of the registry)
CLOSE_ON_VIOLATION = flow_rules.CLOSE_ON_VIOLATION.id_for(Edition.V311)

T = PacketType
PUBLISH, PUBREL, PINGREQ, PINGRESP = T.PUBLISH, T.PUBREL, T.PINGREQ, T.PINGRESP
#: the packet types that answer a request (a PUBLISH, a PUBREL, a PINGREQ)
_ANSWERS = frozenset({T.PUBACK, T.PUBREC, T.PUBCOMP, T.PINGRESP})
#: an acknowledgement is its fixed header (2 bytes) and a packet identifier (2 bytes)
ACK_LENGTH = 4
#: where the QoS sits in a PUBLISH's first byte (3.1.1 section 3.3.1.2)
QOS_SHIFT, QOS_MASK = 1, 0x03


@dataclass(frozen=True, slots=True)
class Expectation:
    """What the model makes of a case: must the receiver close the connection?"""

    close: bool
    failure: Failure | None
    alternatives: tuple[tuple[str, str, bool], ...]  # (reading, value, close) that differ


def _rejects(data: bytes, edition: Edition, readings: Mapping[str, str]) -> Failure | None:
    failure = model_wire.decode(data, edition, readings).failure
    return None if failure is None or failure.rule == INCOMPLETE else failure


def expectation(data: bytes, edition: Edition, readings: Mapping[str, str]) -> Expectation:
    """The model's verdict on ``data`` under the readings, and under every other value."""
    chosen = resolve_readings(edition, readings)
    failure = _rejects(data, edition, chosen)
    close = failure is not None
    alternatives: list[tuple[str, str, bool]] = []
    for reading in READINGS.values():
        if not reading.applies_to(edition):
            continue
        for value in reading.values:
            if value == chosen[reading.name]:
                continue
            other = _rejects(data, edition, {**chosen, reading.name: value}) is not None
            if other != close:
                alternatives.append((reading.name, value, other))
    return Expectation(close, failure, tuple(alternatives))


def close_rules(rule_id: str, edition: Edition) -> tuple[str, ...]:
    """The rule a case breaks and the rules that make the receiver close the connection."""
    if edition is not Edition.V311:
        return (rule_id,)
    try:
        also = RULES.by_id(rule_id).also
    except KeyError:
        also = ()
    return (rule_id, *also, CLOSE_ON_VIOLATION)


def _packet_id(data: bytes, at: int) -> int:
    return data[at] << 8 | data[at + 1]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Seen:
    """A packet the evidence shows: who sent it, where, and what it was (compared by
    identity: the same packet is one object)."""

    direction: str
    frame: int
    offset: int
    fields: Mapping[str, Any]


def request_of(data: bytes) -> tuple[str, int | None] | None:
    """(the answer's type, packet identifier) that a packet asks for: PUBACK or PUBREC for
    a QoS 1 or 2 PUBLISH, PUBCOMP for a PUBREL, PINGRESP for a PINGREQ; None for any other
    packet or one whose identifier cannot be read (the packet may be malformed)."""
    first = data[0]
    kind = first >> 4
    if kind == PINGREQ:
        return "PINGRESP", None
    if kind == PUBREL:
        return ("PUBCOMP", _packet_id(data, 2)) if len(data) == ACK_LENGTH else None
    qos = first >> QOS_SHIFT & QOS_MASK
    if kind != PUBLISH or qos not in (1, 2):
        return None
    try:
        header = header_length(data[:5])
    except FrameError:
        return None
    if header is None:
        return None
    at = header[0]
    if at + 2 > len(data):
        return None
    at += 2 + _packet_id(data, at)  # past the topic (its length is a Two Byte Integer too)
    if at + 2 > len(data):
        return None
    return ("PUBACK" if qos == 1 else "PUBREC"), _packet_id(data, at)


def shown(data: bytes) -> dict[str, Any]:
    """What the evidence shows of a packet after an offence: its type, and its packet
    identifier when it is a request or an answer that carries one."""
    fields: dict[str, Any] = {"type": type_name(data[0])}
    asked = request_of(data) or answer_of(data)
    if asked is not None and asked[1] is not None:
        fields["packet_id"] = asked[1]
    return fields


def answer_of(data: bytes) -> tuple[str, int | None] | None:
    """(type, packet identifier) of an answer (PUBACK, PUBREC, PUBCOMP, PINGRESP)."""
    kind = data[0] >> 4
    if kind == PINGRESP:
        return "PINGRESP", None
    if kind in _ANSWERS and len(data) == ACK_LENGTH:
        return type_name(data[0]), _packet_id(data, 2)
    return None


@dataclass(slots=True, kw_only=True)
class Offence:
    """One direction's first rejected packet and what its receiver did afterwards."""

    offender: str  # the direction whose packet the model rejects
    packet: Seen
    rule: str
    message: str
    close: bool  # the model says: close (under the connection's readings)
    readings_keep_open: tuple[str, ...]  # "reading=value" under which the packet is fine
    rules: tuple[str, ...]  # what a finding cites: 4.8.0-1 first
    owed_before: dict[tuple[str, int | None], int]  # answers owed at the offence
    asked: dict[tuple[str, int | None], Seen] = field(default_factory=dict)
    answered: tuple[Seen, Seen] | None = None  # (request, answer): the first shown


class CloseJudge:
    """The close obligation of the receivers of one connection's offences."""

    __slots__ = ("offences",)

    def __init__(self) -> None:
        self.offences: dict[str, Offence] = {}  # offender's direction -> its first offence

    def offence(
        self,
        packet: Seen,
        data: bytes,
        edition: Edition,
        readings: Mapping[str, str] | None,
        owed: Iterable[tuple[str, int | None]],
    ) -> None:
        """A packet the codec rejected, sent in ``packet.direction``; ``owed`` lists the
        answers its receiver owed just before it (one item per answer owed)."""
        if edition is not Edition.V311 or packet.direction in self.offences:
            return  # 3.1 names no receiver action; after the first, the receiver should
            # already have closed
        exp = expectation(data, edition, readings or {})
        if exp.failure is None:
            return  # nothing the model rejects (the codec's own judgement stands alone)
        cited = close_rules(exp.failure.rule, edition)
        owed_before: dict[tuple[str, int | None], int] = {}
        for key in owed:
            owed_before[key] = owed_before.get(key, 0) + 1
        offence = self.offences[packet.direction] = Offence(
            offender=packet.direction,
            packet=packet,
            rule=exp.failure.rule,
            message=exp.failure.message,
            close=exp.close,
            readings_keep_open=tuple(
                f"{name}={value}" for name, value, close in exp.alternatives if not close
            ),
            rules=(CLOSE_ON_VIOLATION, *(r for r in cited if r != CLOSE_ON_VIOLATION)),
            owed_before=owed_before,
        )
        asked = request_of(data)
        if asked is not None:  # an answer to the offending packet itself: read, not closed
            offence.asked[asked] = packet

    def packet(self, seen: Seen, data: bytes) -> None:
        """A packet after an offence (of either direction)."""
        offence = self.offences.get(seen.direction)
        if offence is not None and offence.answered is None:
            asked = request_of(data)
            if asked is not None:
                offence.asked.setdefault(asked, seen)
        for other in self.offences.values():
            if other.offender != seen.direction and other.answered is None:
                self._answer(other, seen, data)

    def _answer(self, offence: Offence, seen: Seen, data: bytes) -> None:
        answer = answer_of(data)
        if answer is None:
            return
        if offence.owed_before.get(answer, 0):
            offence.owed_before[answer] -= 1  # first owed, first paid: an older debt
            return
        request = offence.asked.get(answer)
        if request is not None:
            offence.answered = (request, seen)

    def findings(self) -> list[tuple[Offence, Finding]]:
        """At the end of the connection: each receiver that read on after an offence, with
        the finding about it."""
        found: list[tuple[Offence, Finding]] = []
        for offence in self.offences.values():
            if offence.answered is None or not offence.close:
                continue
            request = offence.answered[0]
            which = (
                "that packet itself"
                if request is offence.packet
                else f"the {request.fields['type']} of frame {request.frame}, sent after it"
            )
            what = (
                f"did not close the connection after the {offence.packet.fields['type']} of "
                f"frame {offence.packet.frame}, which the model rejects ({offence.message} "
                f"[{offence.rule}]): it answered {which}"
            )
            if offence.readings_keep_open:
                also = " or ".join(offence.readings_keep_open)
                verdict, message = TOLERATED, f"{what}: as under the reading {also}"
                rules: tuple[str, ...] = (CLOSE_ON_VIOLATION,)
            else:
                verdict, message, rules = VIOLATION, what, offence.rules
            receiver = "server" if offence.offender == "c2s" else "client"
            finding = Finding(
                verdict=verdict, rules=rules, message=message, source=Source.CLOSE, role=receiver
            )
            found.append((offence, finding))
        return found
