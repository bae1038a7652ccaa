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

The verdict comes when the connection ends: a violation of MQTT-4.8.0-1 (with the parts
of the offence's rules that bind a receiver; the parts that bind its sender are what the
offender broke, the finding's ``provoked``, never the receiver's: :func:`close_charges`)
for a receiver that answered; tolerated when another value of a reading accepts the packet;
nothing when nothing shows that the receiver read on. MQTT 3.1
names no receiver action, so a 3.1 connection is not judged here. Nothing here runs
before an offence: the connection looks at :attr:`Connection.closing` only once it is set.

MQTT 5.0
--------
[MQTT-4.13.1-1] "When a Server detects a Malformed Packet or Protocol Error, and a Reason
Code is given in the specification, it MUST close the Network Connection." The offences
are the model's wire failures judged with the receiver's declared limits
(:meth:`CloseJudge.offence` with ``limits``) and the link judge's
(:meth:`CloseJudge.flow_offence`: Receive Maximum exceeded, a Topic Alias it cannot
resolve, QoS above Maximum QoS, RETAIN without Retain Available). A Server that reads on is
a violation of MQTT-4.13.1-1; a Client that reads on is a *deviation* (a SHOULD not
followed, ``PP50-4.13.1-client-close``): "When a Client detects a Malformed Packet or
Protocol Error, and a Reason Code is given in the specification, it SHOULD close the
Network Connection." (4.13.1).

Before closing, the receiver may send DISCONNECT; its Reason Code is judged against *the
one the model calls for*: the ``reason_code`` of the model's
:class:`~pubproof.model.wire_core.Failure` (the rule's ``reason_code_in(V50)``: 0x81
Malformed Packet, 0x82 Protocol Error, or the more specific code the standard names for
that rule, e.g. 0x95 Packet too large, 0x94 Topic Alias invalid), or the code of the flow
table's DISCONNECT action (0x93 Receive Maximum exceeded; 0x82 for an unknown alias; 0x9B,
0x9A for Maximum QoS and Retain Available). Where the standard lets the receiver choose,
the model calls for the most specific code the text names for that fault; section 4.13's
general codes (0x80 Unspecified error, 0x81 Malformed Packet, 0x82 Protocol Error) in its
place are *tolerated*, any other code (a success code included) is a *deviation* from
4.13.1's "it SHOULD send a DISCONNECT packet containing the Reason Code"
(``PP50-4.13.1-disconnect-reason-code``: the statements that name a code say the receiver
"uses" it, with no MUST), and the same code passes (:func:`reason_code_verdict`). A
receiver that closes without DISCONNECT is not judged on a code here (the probe, which
waits for it, calls it a deviation from the same SHOULD).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pubproof.judge.cited import FlowOffence
from pubproof.judge.findings import DEVIATION, PASS, TOLERATED, VIOLATION, Finding, Source
from pubproof.judge.packets import FrameError, PacketType, header_length, type_name
from pubproof.model import flow_rules, flow_rules50
from pubproof.model import wire as model_wire
from pubproof.model.duties import Party, binds_receiver
from pubproof.model.editions import READINGS, Edition, Limits, resolve_readings
from pubproof.model.rules import INCOMPLETE, RULES
from pubproof.model.wire import Failure

#: [MQTT-4.8.0-1] "Unless stated otherwise, if either the Server or Client encounters a
#: protocol violation, it MUST close the Network Connection on which it received that
#: Control Packet which caused the protocol violation." (a flow rule of the registry)
CLOSE_ON_VIOLATION = flow_rules.CLOSE_ON_VIOLATION.id_for(Edition.V311)
#: [MQTT-4.13.1-1] "When a Server detects a Malformed Packet or Protocol Error, and a Reason
#: Code is given in the specification, it MUST close the Network Connection."
CLOSE_WITH_REASON = flow_rules50.CLOSE_WITH_REASON.id_for(Edition.V50)
#: 4.13.1 "When a Client detects a Malformed Packet or Protocol Error, and a Reason Code is
#: given in the specification, it SHOULD close the Network Connection."
CLIENT_SHOULD_CLOSE = flow_rules50.CLIENT_CLOSE.id_for(Edition.V50)
#: 4.13.1 "In the case of an error in any other packet it SHOULD send a DISCONNECT packet
#: containing the Reason Code before closing the Network Connection."
DISCONNECT_REASON = flow_rules50.DISCONNECT_REASON.id_for(Edition.V50)
#: section 4.13's general Reason Codes: Unspecified error, Malformed Packet, Protocol Error
GENERAL_CODES = frozenset({0x80, 0x81, 0x82})
DISCONNECT_TYPE = 14

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


def _rejects(
    data: bytes, edition: Edition, readings: Mapping[str, str], limits: Limits | None = None
) -> Failure | None:
    failure = model_wire.decode(data, edition, readings, limits).failure
    return None if failure is None or failure.rule == INCOMPLETE else failure


def expectation(
    data: bytes, edition: Edition, readings: Mapping[str, str], limits: Limits | None = None
) -> Expectation:
    """The model's verdict on ``data`` under the readings, and under every other value
    (5.0: with the receiver's ``limits``; the failure's ``reason_code`` is the DISCONNECT
    Reason Code the model calls for)."""
    chosen = resolve_readings(edition, readings)
    failure = _rejects(data, edition, chosen, limits)
    close = failure is not None
    alternatives: list[tuple[str, str, bool]] = []
    for reading in READINGS.values():
        if not reading.applies_to(edition):
            continue
        for value in reading.values:
            if value == chosen[reading.name]:
                continue
            other = _rejects(data, edition, {**chosen, reading.name: value}, limits) is not None
            if other != close:
                alternatives.append((reading.name, value, other))
    return Expectation(close, failure, tuple(alternatives))


def close_rules(rule_id: str, edition: Edition) -> tuple[str, ...]:
    """The rule a case breaks and the rules that make the receiver close the connection
    (3.1: the rule alone; 5.0: [MQTT-4.13.1-1], after the rule's ``also`` when the rule
    exists in 5.0 alone: a rule 3.1.1 shares carries 3.1.1 numbers there, which are other
    statements in 5.0)."""
    if edition is Edition.V50:
        try:
            found = RULES.by_id(rule_id, edition)
        except KeyError:
            return (rule_id, CLOSE_WITH_REASON)
        alone = all(e is Edition.V50 for e in found.ids)
        return (rule_id, *(found.also if alone else ()), CLOSE_WITH_REASON)
    if edition is not Edition.V311:
        return (rule_id,)
    try:
        also = RULES.by_id(rule_id).also
    except KeyError:
        also = ()
    return (rule_id, *also, CLOSE_ON_VIOLATION)


@dataclass(frozen=True, slots=True)
class Charges:
    """What a finding about the receiver of a rejected packet charges it with, and what
    its sender broke (:mod:`pubproof.model.duties`)."""

    #: the receiver's own duties: the parts of the offence's rules that bind a receiver,
    #: then the duty to close (3.1.1 [MQTT-4.8.0-1]; 5.0 a Server [MQTT-4.13.1-1], a
    #: Client the 4.13.1 SHOULD); 3.1 names no receiver action
    charged: tuple[str, ...]
    #: the rules the sender broke: the offence's rules that bind a sender
    provoked: tuple[str, ...]
    #: MQTT 5.0: the duty to close is a SHOULD (a Client's): not closing is a deviation
    should: bool = False

    @property
    def closer(self) -> str | None:
        """The duty to close, if the edition names one."""
        return self.charged[-1] if self.charged and self.charged[-1] in _CLOSERS else None


_CLOSERS = frozenset({CLOSE_ON_VIOLATION, CLOSE_WITH_REASON, CLIENT_SHOULD_CLOSE})
_ROLE = {"client": Party.CLIENT, "server": Party.SERVER}


def close_charges(rule_id: str, edition: Edition, receiver: str) -> Charges:
    """The charges against the ``receiver`` ("client" or "server") of a packet that
    breaks ``rule_id``: of the rules :func:`close_rules` cites, the receiver owes only
    those that bind a receiver in so many words ("If a Server or Client receives a PUBLISH
    Packet which has both QoS bits set to 1 it MUST close the Network Connection") and its
    duty to close; everything else the offence broke, or concerns, binds the end that made
    the packet (a statement of a role alone, "A Client MUST NOT send...", is broken by that
    role's sending) and is ``provoked``."""
    role = _ROLE[receiver]
    cited = close_rules(rule_id, edition)
    offence = tuple(r for r in cited if r not in _CLOSERS)
    own = tuple(r for r in offence if binds_receiver(r, edition, role=role))
    provoked = tuple(r for r in offence if r not in own)
    if edition is Edition.V50:
        closer = CLOSE_WITH_REASON if role is Party.SERVER else CLIENT_SHOULD_CLOSE
        return Charges((*own, closer), provoked, should=role is Party.CLIENT)
    if edition is Edition.V311:
        return Charges((*own, CLOSE_ON_VIOLATION), provoked)
    return Charges(own, provoked)


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


def _ack_length(data: bytes, edition: Edition | None) -> bool:
    """An acknowledgement's length: 4 bytes in 3.x; in 5.0 a Reason Code and properties
    may follow (a Remaining Length below 128 is enough to read the identifier at 2)."""
    if edition is Edition.V50:
        return len(data) >= ACK_LENGTH and data[1] < RL_ONE_BYTE
    return len(data) == ACK_LENGTH


RL_ONE_BYTE = 0x80


def request_of(data: bytes, edition: Edition | None = None) -> tuple[str, int | None] | None:
    """(the answer's type, packet identifier) that a packet asks for: PUBACK or PUBREC for
    a QoS 1 or 2 PUBLISH, PUBCOMP for a PUBREL, PINGRESP for a PINGREQ; None for any other
    packet or one whose identifier cannot be read (the packet may be malformed)."""
    first = data[0]
    kind = first >> 4
    if kind == PINGREQ:
        return "PINGRESP", None
    if kind == PUBREL:
        return ("PUBCOMP", _packet_id(data, 2)) if _ack_length(data, edition) else None
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


def shown(data: bytes, edition: Edition | None = None) -> dict[str, Any]:
    """What the evidence shows of a packet after an offence: its type, and its packet
    identifier when it is a request or an answer that carries one."""
    fields: dict[str, Any] = {"type": type_name(data[0], edition)}
    asked = request_of(data, edition) or answer_of(data, edition)
    if asked is not None and asked[1] is not None:
        fields["packet_id"] = asked[1]
    return fields


def answer_of(data: bytes, edition: Edition | None = None) -> tuple[str, int | None] | None:
    """(type, packet identifier) of an answer (PUBACK, PUBREC, PUBCOMP, PINGRESP)."""
    kind = data[0] >> 4
    if kind == PINGRESP:
        return "PINGRESP", None
    if kind in _ANSWERS and _ack_length(data, edition):
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
    rules: tuple[str, ...]  # what a finding charges the receiver with: its close duty first
    #: what the offender broke (:attr:`Charges.provoked`): never the receiver's
    provoked: tuple[str, ...] = ()
    #: MQTT 5.0, a Client receiving: the duty to close is a SHOULD (4.13.1)
    should_close: bool = False
    owed_before: dict[tuple[str, int | None], int]  # answers owed at the offence
    asked: dict[tuple[str, int | None], Seen] = field(default_factory=dict)
    answered: tuple[Seen, Seen] | None = None  # (request, answer): the first shown
    edition: Edition = Edition.V311
    #: MQTT 5.0: the DISCONNECT Reason Code the model calls for (None: none named)
    reason_code: int | None = None
    #: MQTT 5.0: the receiver's DISCONNECT after the offence, and its Reason Code
    disconnect: tuple[Seen, int] | None = None


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
        *,
        limits: Limits | None = None,
    ) -> None:
        """A packet the codec rejected, sent in ``packet.direction``; ``owed`` lists the
        answers its receiver owed just before it (one item per answer owed). MQTT 5.0:
        ``limits`` are the receiver's (:meth:`pubproof.judge.limits.Negotiated.limits_for`
        of ``packet.direction``)."""
        if edition is Edition.V31 or packet.direction in self.offences:
            return  # 3.1 names no receiver action; after the first, the receiver should
            # already have closed
        exp = expectation(data, edition, readings or {}, limits if edition is Edition.V50 else None)
        if exp.failure is None:
            return  # nothing the model rejects (the codec's own judgement stands alone)
        charges = close_charges(exp.failure.rule, edition, _receiver(packet.direction))
        offence = self.offences[packet.direction] = Offence(
            offender=packet.direction,
            packet=packet,
            rule=exp.failure.rule,
            message=exp.failure.message,
            close=exp.close,
            readings_keep_open=tuple(
                f"{name}={value}" for name, value, close in exp.alternatives if not close
            ),
            rules=_closer_first(charges),
            provoked=charges.provoked,
            should_close=charges.should,
            owed_before=_counted(owed),
            edition=edition,
            reason_code=exp.failure.reason_code,
        )
        asked = request_of(data, edition)
        if asked is not None:  # an answer to the offending packet itself: read, not closed
            offence.asked[asked] = packet

    def flow_offence(
        self,
        packet: Seen,
        offence: FlowOffence,
        owed: Iterable[tuple[str, int | None]],
        data: bytes | None = None,
    ) -> None:
        """MQTT 5.0: a packet the link judge says its receiver must close for
        (:attr:`pubproof.judge.ends.BothEnds.offence`); ``owed`` as for :meth:`offence`;
        ``data``, the packet's bytes: an answer to the packet itself (an acknowledgement
        of the PUBLISH beyond the Receive Maximum, with any Reason Code) shows that the
        receiver read it and went on, where the table owes only the DISCONNECT."""
        if packet.direction in self.offences:
            return
        charges = close_charges(offence.rule, Edition.V50, _receiver(packet.direction))
        found = self.offences[packet.direction] = Offence(
            offender=packet.direction,
            packet=packet,
            rule=offence.rule,
            message=offence.message,
            close=True,
            readings_keep_open=(),
            rules=_closer_first(charges),
            provoked=charges.provoked,
            should_close=charges.should,
            owed_before=_counted(owed),
            edition=Edition.V50,
            reason_code=offence.reason_code,
        )
        asked = None if data is None else request_of(data, Edition.V50)
        if asked is not None:
            found.asked[asked] = packet

    def packet(self, seen: Seen, data: bytes) -> None:
        """A packet after an offence (of either direction)."""
        offence = self.offences.get(seen.direction)
        if offence is not None and offence.answered is None:
            asked = request_of(data, offence.edition)
            if asked is not None:
                offence.asked.setdefault(asked, seen)
        for other in self.offences.values():
            if other.offender == seen.direction:
                continue
            if other.edition is Edition.V50 and data[0] >> 4 == DISCONNECT_TYPE:
                if other.disconnect is None:
                    other.disconnect = (seen, disconnect_code(data))
            elif other.answered is None:
                self._answer(other, seen, data)

    def _answer(self, offence: Offence, seen: Seen, data: bytes) -> None:
        answer = answer_of(data, offence.edition)
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
        the finding about it; in 5.0 also each receiver whose DISCONNECT Reason Code is not
        the one the model calls for (then ``offence.disconnect`` is set and
        ``offence.answered`` may be None: :meth:`evidence` gives the packets either
        finding rests on)."""
        found: list[tuple[Offence, Finding]] = []
        for offence in self.offences.values():
            code = self._code_finding(offence)
            if code is not None:
                found.append((offence, code))
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
            receiver = _receiver(offence.offender)
            closer = offence.rules[0]
            if offence.readings_keep_open:
                also = " or ".join(offence.readings_keep_open)
                verdict, message = TOLERATED, f"{what}: as under the reading {also}"
                rules: tuple[str, ...] = (closer,)
            elif offence.should_close:
                # [MQTT-4.13.1-1] binds the Server; "When a Client detects a Malformed
                # Packet or Protocol Error, and a Reason Code is given in the
                # specification, it SHOULD close the Network Connection." (4.13.1)
                verdict, rules = DEVIATION, offence.rules
                message = f"{what} (5.0: a Server MUST close, a Client SHOULD)"
            else:
                verdict, message, rules = VIOLATION, what, offence.rules
            finding = Finding(
                verdict=verdict, rules=rules, message=message, source=Source.CLOSE,
                role=receiver, provoked=offence.provoked,
            )  # fmt: skip
            found.append((offence, finding))
        return found

    def _code_finding(self, offence: Offence) -> Finding | None:
        """MQTT 5.0: the receiver's DISCONNECT Reason Code against the model's."""
        if offence.disconnect is None or offence.reason_code is None or not offence.close:
            return None
        seen, sent = offence.disconnect
        verdict = reason_code_verdict(offence.reason_code, sent)
        if verdict == PASS:
            return None
        receiver = _receiver(offence.offender)
        message = (
            f"answered the {offence.packet.fields['type']} of frame {offence.packet.frame} "
            f"({offence.message} [{offence.rule}]) with DISCONNECT 0x{sent:02X} (frame "
            f"{seen.frame}); the model calls for 0x{offence.reason_code:02X}"
        )
        if verdict == TOLERATED:
            message += " (a general code of section 4.13 in place of the specific one)"
        else:
            message += " (4.13.1: it SHOULD send the Reason Code)"
        return Finding(
            verdict=verdict, rules=(DISCONNECT_REASON,), message=message, source=Source.CLOSE,
            role=receiver, provoked=offence.provoked,
        )  # fmt: skip

    @staticmethod
    def evidence(offence: Offence, finding: Finding) -> tuple[Seen, ...]:
        """The packets a finding of :meth:`findings` rests on: the offending packet, then
        the request and the answer that show the receiver read on, or its DISCONNECT."""
        if finding.rules == (DISCONNECT_REASON,) and offence.disconnect is not None:
            return (offence.packet, offence.disconnect[0])
        assert offence.answered is not None
        return tuple(dict.fromkeys((offence.packet, *offence.answered)))


def _receiver(offender: str) -> str:
    """The role of the end that receives what ``offender`` (a direction) sends."""
    return "server" if offender == "c2s" else "client"


def _closer_first(charges: Charges) -> tuple[str, ...]:
    """The charges with the duty to close first (the rule a capture's row leads with)."""
    closer = charges.closer
    if closer is None:
        return charges.charged
    return (closer, *(r for r in charges.charged if r != closer))


def _counted(owed: Iterable[tuple[str, int | None]]) -> dict[tuple[str, int | None], int]:
    counted: dict[tuple[str, int | None], int] = {}
    for key in owed:
        counted[key] = counted.get(key, 0) + 1
    return counted


def disconnect_code(data: bytes) -> int:
    """The Reason Code of a 5.0 DISCONNECT (0x00 when the Remaining Length is 0: "If the
    Remaining Length is less than 1 the value of 0x00 (Normal disconnection) is used")."""
    try:
        header = header_length(data[:5])
    except FrameError:
        return 0x00
    if header is None or header[1] == 0 or header[0] >= len(data):
        return 0x00
    return data[header[0]]


def reason_code_verdict(expected: int, sent: int) -> str:
    """A receiver's DISCONNECT Reason Code against the one the model calls for: ``pass``
    when they are the same, ``tolerated`` for a general code of section 4.13 (0x80, 0x81,
    0x82) in place of another error code, ``deviation`` otherwise: 4.13.1 "it SHOULD send
    a DISCONNECT packet containing the Reason Code", and no statement of the PUBLISH
    family makes a receiver's code a MUST (each says the receiver "uses" it)."""
    if sent == expected:
        return PASS
    if sent in GENERAL_CODES and expected >= min(GENERAL_CODES):
        return TOLERATED
    return DEVIATION
