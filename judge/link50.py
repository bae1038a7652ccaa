"""The link judge in MQTT 5.0: the 5.0 flow tables' judgement of one end of a connection.

Rules / theory of operation
---------------------------
:class:`LinkJudge50` extends :class:`~pubproof.judge.link.LinkJudge`: the same four
table-driven parts (the judged end as receiver and as sender, a model peer as receiver and
the peer as sender), what is owed, paid and missing, the same judgement of a PUBLISH on an
identifier (a re-send owed, a new flow, a flow in progress), read from the 5.0 tables
(:mod:`pubproof.model.flows50`, Method B for the QoS 2 receivers, as in 3.x). What 5.0
adds, here:

- **Reason Codes.** An acknowledgement is its table input by its code (below 0x80 or
  not). A PUBACK or PUBREC of 0x80 or more ends the flow: a re-send of that PUBLISH
  afterwards breaks [MQTT-4.4.0-2], a PUBREL after such a PUBREC [MQTT-4.3.3-4]; it is
  also the receiver's refusal of the message (the table's ``PUBLISH_QOS*_REFUSED``, from
  the receiver's state before the PUBLISH). A PUBREL for an identifier the receiver does
  not hold is owed a PUBCOMP 0x92 (the table's ``SEND_PUBCOMP_NOT_FOUND``); answering it
  0x00 is tolerated (no MUST names the code).
- **Flow control.** Each end's send quota is the table's ``TAKE_QUOTA`` and
  ``RELEASE_QUOTA``, kept as the set of identifiers holding a unit, and starts afresh at
  each connection [MQTT-4.9.0-1]. A new QoS 1 or 2 PUBLISH while the sender already holds
  the receiver's Receive Maximum breaks [MQTT-3.3.4-9] (a Server) or [MQTT-3.3.4-7] (a
  Client) and [MQTT-4.9.0-2]; its receiver owes the table's DISCONNECT 0x93, not an
  acknowledgement.
- **Topic Alias**, per direction (:class:`~pubproof.judge.aliases.TopicAliases`): alias 0,
  above the receiver's Topic Alias Maximum, or an alias with an empty topic name and no
  mapping; the receiver owes DISCONNECT 0x94 or 0x82. Every PUBLISH's topic is resolved
  through its direction's map: :attr:`LinkJudge50.topic`.
- **What the Server declared** binds the Client's PUBLISH: QoS above Maximum QoS
  [MQTT-3.2.2-11] (the Server's DISCONNECT 0x9B), RETAIN 1 when Retain Available is 0
  [MQTT-3.2.2-14] (0x9A). What each end declared is :mod:`pubproof.judge.limits`'s.
- **Re-sending** only on a resumed session: Clean Start 0 answered by Session Present 1
  (the table's RESUME); anything else is CLEAN (a 5.0 session may have expired, so
  Session Present 0 is not a finding). A re-send on the same connection breaks
  [MQTT-4.4.0-1] ("MUST NOT resend messages at any other time").

A packet after which its receiver must close sets :attr:`LinkJudge50.offence` (a
:class:`FlowOffence` with the DISCONNECT Reason Code the table calls for), whichever end
sent it; the findings are only ever about the judged end. A packet that calls for a
DISCONNECT changes no flow state: its receiver is to close instead of processing it.

The Maximum Packet Size is the wire's (the model decoder with
:meth:`~pubproof.judge.limits.Negotiated.limits_for`, and
:func:`~pubproof.judge.limits.too_large` for the other packets), not this judge's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from pubproof.judge.aliases import TopicAliases

# the rules the judge cites besides the tables' own, the offence, how a Reason Code is
# read (:mod:`pubproof.judge.cited`)
from pubproof.judge.cited import (
    ALIAS_MAX_CLIENT,
    ALIAS_MAX_SERVER,
    MAXIMUM_QOS,
    NO_PUBLISH_AFTER_PUBREL,
    NOT_AFTER_ERROR,
    PUBCOMP_FOR_PUBREL,
    PUBCOMP_REASON,
    PUBREL_ON_PUBREC,
    QOS_NOT_SUPPORTED,
    QUOTA_CLIENT,
    QUOTA_SERVER,
    QUOTA_ZERO,
    RESEND50,
    RESENT_DUP50,
    RETAIN_AVAILABLE,
    RETAIN_NOT_SUPPORTED,
    FlowOffence,
    reason_code,
)
from pubproof.judge.describe import describe, same_message
from pubproof.judge.findings import TOLERATED, VIOLATION, Finding
from pubproof.judge.limits import DEFAULT, Declared, Negotiated
from pubproof.judge.link import ACKS, METHOD, LinkJudge, Owed, p_of
from pubproof.model.editions import Edition
from pubproof.model.flows import ReceiverState, SenderState, Undefined
from pubproof.model.flows50 import (
    ACTION_CODE,
    ReceiverAction50,
    ReceiverInput50,
    SenderAction50,
    SenderInput50,
    Step50,
    is_error,
    receiver_step50,
    sender_step50,
)
from pubproof.model.topic_alias import ALIAS_ABOVE_MAXIMUM

V50 = Edition.V50
SA, SI, RA, RI = SenderAction50, SenderInput50, ReceiverAction50, ReceiverInput50


#: an acknowledgement received, by its type and whether its code is an error: the input
ACK_RECEIVED = {
    ("PUBACK", False): SI.PUBACK_OK, ("PUBACK", True): SI.PUBACK_ERROR,
    ("PUBREC", False): SI.PUBREC_OK, ("PUBREC", True): SI.PUBREC_ERROR,
    ("PUBCOMP", False): SI.PUBCOMP_OK, ("PUBCOMP", True): SI.PUBCOMP_NOT_FOUND,
}  # fmt: skip
#: a receiver's refusal of a new message (an error PUBACK or PUBREC), by the QoS
REFUSED = {"PUBACK": RI.PUBLISH_QOS1_REFUSED, "PUBREC": RI.PUBLISH_QOS2_REFUSED}


@dataclass(frozen=True, slots=True)
class Ended:
    """A flow of the judged end that an error acknowledgement ended."""

    kind: str
    code: int
    message: Mapping[str, Any]


def topic_alias(fields: Mapping[str, Any]) -> int | None:
    """A PUBLISH's Topic Alias: in its ``properties`` (``P``) or at the top level."""
    properties = fields.get("properties") or {}
    alias = properties.get("topic_alias")
    if alias is None:
        alias = fields.get("topic_alias")
    return alias if type(alias) is int else None


class LinkJudge50(LinkJudge):
    """Feed it the packets of a 5.0 connection in order; it judges the ``judged`` end
    (``server``: whether that end is the server). The interface is
    :class:`~pubproof.judge.link.LinkJudge`'s, plus :attr:`topic`, :attr:`offence` and
    :attr:`negotiated`."""

    # -- the edition's tables ------------------------------------------------------------
    PUBLISH_SENT: ClassVar[Mapping[int, Any]] = {1: SI.PUBLISH_QOS1, 2: SI.PUBLISH_QOS2}
    PUBLISH_RECEIVED: ClassVar[Mapping[int, Any]] = {
        0: RI.PUBLISH_QOS0,
        1: RI.PUBLISH_QOS1,
        2: RI.PUBLISH_QOS2,
    }
    SENDER_RECONNECT: ClassVar[Mapping[bool, Any]] = {True: SI.RESUME, False: SI.CLEAN}
    RECEIVER_RECONNECT: ClassVar[Mapping[bool, Any]] = {True: RI.RESUME, False: RI.CLEAN}
    SENDS: ClassVar[Mapping[Any, str]] = {
        SA.SEND_PUBREL: "PUBREL", SA.SEND_PUBREL_NOT_FOUND: "PUBREL",
        RA.SEND_PUBACK: "PUBACK", RA.SEND_PUBACK_ERROR: "PUBACK",
        RA.SEND_PUBREC: "PUBREC", RA.SEND_PUBREC_ERROR: "PUBREC",
        RA.SEND_PUBCOMP: "PUBCOMP", RA.SEND_PUBCOMP_NOT_FOUND: "PUBCOMP",
    }  # fmt: skip
    RESEND_PUBLISH: ClassVar[Any] = SA.RESEND_PUBLISH
    DELIVER: ClassVar[Any] = RA.DELIVER

    def __init__(self, label: str, judged: str, *, server: bool, keep: bool = False) -> None:
        super().__init__(label, judged, keep=keep)
        self.server = server
        #: what the two ends declared in CONNECT and CONNACK
        self.negotiated: Negotiated = DEFAULT
        self.judged_aliases = TopicAliases()  # what the judged end sends, as its peer maps it
        self.peer_aliases = TopicAliases()  # what the peer sends, as the judged end maps it
        self.judged_quota: set[int] = set()  # identifiers holding a unit of the judged end's
        self.peer_quota: set[int] = set()  # ... and of the peer's send quota
        self.ended: dict[int, Ended] = {}  # the judged end's flows an error ack ended
        #: packet identifier -> the judged end's receiver state before the last QoS 2
        #: PUBLISH on it (what a refusal of that PUBLISH steps from)
        self.refusable: dict[int, ReceiverState] = {}
        self.peer_refusable: dict[int, ReceiverState] = {}  # ... and the model peer's
        #: the resolved topic name of the last PUBLISH fed (None: none, or unresolvable)
        self.topic: str | None = None
        #: set by the last packet fed when its receiver must close (with a Reason Code)
        self.offence: FlowOffence | None = None

    def sender_step(self, state: SenderState, event: Any) -> Step50 | Undefined:
        return sender_step50(state, event)

    def receiver_step(self, state: ReceiverState, event: Any) -> Step50 | Undefined:
        return receiver_step50(METHOD, state, event)

    def ack_received(self, kind: str, fields: Mapping[str, Any]) -> Any:
        return ACK_RECEIVED[kind, is_error(reason_code(fields))]

    def pubrel_received(self, fields: Mapping[str, Any]) -> Any:
        return RI.PUBREL_NOT_FOUND if is_error(reason_code(fields)) else RI.PUBREL_OK

    def acknowledgement(self, kind: str, packet_id: Any, action: Any) -> dict[str, Any]:
        # the code the action sends (an error action's: the refusal's own, not known here)
        return {"type": kind, "packet_id": packet_id, "reason_code": ACTION_CODE.get(action)}

    def shown_code(self, fields: Mapping[str, Any]) -> str:
        return f" 0x{reason_code(fields):02X}"

    def delivered(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """What the model peer delivers: the ``P`` with its properties, the topic name
        resolved and the Topic Alias gone (it is the connection's, not the message's)."""
        properties = dict(fields.get("properties") or {})
        properties.pop("topic_alias", None)
        return {**p_of(fields), "properties": properties}

    # -- what each end declared ----------------------------------------------------------

    @property
    def judged_receives(self) -> Declared:
        """What the judged end declared about what it receives."""
        return self.negotiated.server if self.server else self.negotiated.client

    @property
    def peer_receives(self) -> Declared:
        """What the peer declared about what it receives."""
        return self.negotiated.client if self.server else self.negotiated.server

    # -- flow control: a sender's step moves its send quota too --------------------------

    @staticmethod
    def _quota(quota: set[int], packet_id: int, step: Step50) -> None:
        if SA.TAKE_QUOTA in step.actions:
            quota.add(packet_id)
        if SA.RELEASE_QUOTA in step.actions:
            quota.discard(packet_id)

    def judged_steps(self, packet_id: Any, step: Any) -> None:
        """As in 3.x, and the step moves the judged end's send quota."""
        self._quota(self.judged_quota, packet_id, step)
        super().judged_steps(packet_id, step)

    def peer_steps(self, packet_id: Any, step: Any) -> None:
        """As in 3.x, and the step moves the peer's send quota."""
        self._quota(self.peer_quota, packet_id, step)
        super().peer_steps(packet_id, step)

    @staticmethod
    def _over(maximum: int) -> str:
        return (
            f"a new QoS 1 or 2 PUBLISH while {maximum} are unacknowledged, the receiver's "
            "Receive Maximum"
        )

    def _over_offence(self, rule: str, maximum: int) -> FlowOffence:
        """The receiver's table for a PUBLISH beyond its Receive Maximum: DISCONNECT 0x93."""
        step = self.receiver_step(ReceiverState.FREE, RI.PUBLISH_OVER_RECEIVE_MAXIMUM)
        assert isinstance(step, Step50)
        code = next(ACTION_CODE[a] for a in step.actions if a is RA.DISCONNECT_RECEIVE_MAXIMUM)
        return FlowOffence(rule, self._over(maximum), code)

    # -- the packets -----------------------------------------------------------------------

    def peer_sent(self, kind: str, given: Mapping[str, Any], index: int = 0) -> None:
        """A packet the peer sent the judged end (``given``: the 5.0 ``P`` or a control
        packet's 5.0 description; ``index``: its position in the evidence)."""
        self.offence = self.topic = None
        if kind == "CONNACK":  # either end's connection is this judge's
            self._connack(dict(given), [], index)
        else:
            super().peer_sent(kind, given, index)

    def judged_sent(
        self, kind: str, given: Mapping[str, Any], found: list[Finding], index: int = 0
    ) -> None:
        """A packet the judged end sent its peer; findings about it go to ``found``."""
        self.offence = self.topic = None
        if kind == "CONNECT":
            self._connect(dict(given))
        else:
            super().judged_sent(kind, given, found, index)

    # -- connections -----------------------------------------------------------------------

    def _connect(self, fields: Mapping[str, Any]) -> None:
        """A CONNECT: a new Network Connection, with what the Client declared; it resumes the
        session at the CONNACK if it asks to (Clean Start 0) and the Server has one."""
        self.connections += 1
        self.negotiated = self.negotiated.with_connect(fields)
        if not self.keep:
            # what was owed on the last connection is owed no more (a live peer's judge
            # reports it missing when the probe says the connection closed)
            self.owed.clear()
        self.pending = "clean" if fields.get("clean_start") else "resume"
        # the alias maps go with the connection [MQTT-3.3.2-7], the send quota starts
        # afresh [MQTT-4.9.0-1]
        self.judged_aliases.reset()
        self.peer_aliases.reset()
        self.judged_quota.clear()
        self.peer_quota.clear()

    def _connack(self, fields: Mapping[str, Any], found: list[Finding], index: int) -> None:
        self.negotiated = self.negotiated.with_connack(fields)
        pending, self.pending = self.pending, None
        if pending is None or is_error(reason_code(fields)):
            return
        # the table's RESUME only for Clean Start 0 and a session present [MQTT-4.4.0-1]
        self._reconnect(pending == "resume" and bool(fields.get("session_present")), index)

    def _reconnect(self, resume: bool, index: int) -> None:
        super()._reconnect(resume, index)
        if not resume:
            self.ended.clear()
            self.refusable.clear()
            self.peer_refusable.clear()

    # -- a PUBLISH, before any flow: its topic, and what the Server declared ----------------

    def _resolve(self, fields: dict[str, Any], *, by_judged: bool) -> dict[str, Any] | None:
        """The PUBLISH with its topic name resolved through its receiver's alias map, or
        None and :attr:`offence` set (the alias; then, for a Client's PUBLISH, what the
        Server declared); :attr:`topic` is set."""
        if by_judged:
            aliases, maximum = self.judged_aliases, self.peer_receives.topic_alias_maximum
        else:
            aliases, maximum = self.peer_aliases, self.judged_receives.topic_alias_maximum
        topic = fields.get("topic") or ""
        alias = topic_alias(fields)
        result = aliases.receive(topic, alias, maximum)
        self.topic = result.topic
        if result.topic is None:
            assert result.reason_code is not None
            self.offence = FlowOffence(result.rules[0], result.note, result.reason_code)
            return None
        if by_judged != self.server:  # the client sends: what the Server declared binds it
            qos, maximum_qos = fields.get("qos", 0), self.negotiated.maximum_qos
            if isinstance(qos, int) and qos > maximum_qos:
                note = f"QoS {qos} is above the Server's Maximum QoS {maximum_qos}"
                self.offence = FlowOffence(MAXIMUM_QOS, note, QOS_NOT_SUPPORTED)
                return None
            if fields.get("retain") and not self.negotiated.retain_available:
                note = "RETAIN 1, and the Server declared Retain Available 0"
                self.offence = FlowOffence(RETAIN_AVAILABLE, note, RETAIN_NOT_SUPPORTED)
                return None
        return fields if result.topic == topic else {**fields, "topic": result.topic}

    def _unanswered(self, fields: Mapping[str, Any], *, by_judged: bool) -> None:
        """A QoS 1 or 2 PUBLISH its receiver must close for is still a flow its sender
        started (the table's entry from FREE, with its quota unit): a receiver that answers
        it anyway is then judged by the close judge alone, not also as answering nothing."""
        qos: Any = fields.get("qos")
        packet_id = fields.get("packet_id")
        if qos not in self.PUBLISH_SENT or not isinstance(packet_id, int):
            return
        step = self.sender_step(SenderState.FREE, self.PUBLISH_SENT[qos])
        assert isinstance(step, Step50)
        if by_judged and packet_id not in self.judged_tx:
            self._start_flow(fields, step)
        elif not by_judged and packet_id not in self.peer_tx:
            self.peer_steps(packet_id, step)

    def _offence_rules(self, offence: FlowOffence) -> tuple[str, ...]:
        if offence.rule == ALIAS_ABOVE_MAXIMUM:
            # the receiver's bound, and the sender's own MUST NOT
            return (offence.rule, ALIAS_MAX_SERVER if self.server else ALIAS_MAX_CLIENT)
        return (offence.rule,)

    # -- what the peer sent ------------------------------------------------------------------

    def _peer_publishes(self, fields: dict[str, Any], index: int) -> None:
        """As in 3.x, after the topic is resolved; a new message starts the peer's flow
        when the judged end holds the identifier free and the peer has no flow on it, and
        one beyond the judged end's Receive Maximum owes DISCONNECT 0x93, not an answer."""
        resolved = self._resolve(fields, by_judged=False)
        if resolved is None:
            self._unanswered(fields, by_judged=False)
            return
        qos: Any = resolved.get("qos")
        packet_id = resolved.get("packet_id")
        if qos not in self.PUBLISH_SENT or not isinstance(packet_id, int):
            return  # QoS 0 owes nothing and touches no identifier
        state = self.judged_rx.get(packet_id, ReceiverState.FREE)
        if state is ReceiverState.FREE and packet_id not in self.peer_tx:  # a new message
            maximum = self.judged_receives.receive_maximum
            over = len(self.peer_quota) >= maximum
            self.peer_steps(packet_id, self.sender_step(SenderState.FREE, self.PUBLISH_SENT[qos]))
            if over:
                rule = QUOTA_CLIENT if self.server else QUOTA_SERVER
                self.offence = self._over_offence(rule, maximum)
                return
        if qos == 2:
            self.refusable[packet_id] = state
        self._judged_receives(self.PUBLISH_RECEIVED[qos], resolved, index)

    def _peer_acks(self, kind: str, fields: Mapping[str, Any], index: int) -> None:
        """As in 3.x (a PUBREC for no flow makes the judged end owe PUBREL 0x92); an error
        PUBACK or PUBREC is also the model peer's refusal of the message, and ends the
        judged end's flow for good [MQTT-4.4.0-2]."""
        packet_id = fields.get("packet_id")
        assert isinstance(packet_id, int)
        code = reason_code(fields)
        refusal = is_error(code) and kind in REFUSED
        if refusal:
            self._refused(kind, packet_id, self.peer_rx, self.peer_refusable)
        flow = self.judged_tx.get(packet_id)
        super()._peer_acks(kind, fields, index)
        if refusal and flow is not None and packet_id not in self.judged_tx:
            # [MQTT-4.4.0-2] "treated as acknowledged, and MUST NOT be retransmitted"
            self.ended[packet_id] = Ended(kind, code, flow.message)

    def _refused(
        self,
        kind: str,
        packet_id: int,
        states: dict[int, ReceiverState],
        before: dict[int, ReceiverState],
    ) -> None:
        """A receiver refused a new message (an error PUBACK or PUBREC): the table's REFUSED
        entry from its state when the PUBLISH came (``states``: that receiver's,
        ``before``: its states then)."""
        step = self.receiver_step(before.pop(packet_id, ReceiverState.FREE), REFUSED[kind])
        if isinstance(step, Step50):
            self._move(states, packet_id, step.next)

    # -- what the judged end sent ------------------------------------------------------------

    def _judged_publishes(self, fields: dict[str, Any], found: list[Finding]) -> None:
        """As in 3.x, after the topic is resolved: the judged end's flow, then the model
        peer receives the PUBLISH (unless it is beyond the peer's Receive Maximum)."""
        resolved = self._resolve(fields, by_judged=True)
        if resolved is None:
            assert self.offence is not None
            what = describe({**fields, "topic": self.topic or fields.get("topic") or "(no topic)"})
            rules = self._offence_rules(self.offence)
            self._found(found, VIOLATION, f"{what}: {self.offence.message}", *rules)
            self._unanswered(fields, by_judged=True)
            return
        if resolved["qos"] in self.PUBLISH_SENT and isinstance(resolved.get("packet_id"), int):
            self._judged_flow(resolved, found)
        self._peer_receives(self.PUBLISH_RECEIVED[resolved["qos"]], resolved, found)

    def _resent(self, fields: dict[str, Any], resent: Owed, found: list[Finding]) -> None:
        if not fields["dup"]:
            self._about(found, VIOLATION, fields, "re-sent with DUP 0", RESENT_DUP50)
        if not same_message(fields, resent.packet):
            self._about(found, VIOLATION, fields, "the re-send is not the original", RESEND50)

    def _new_flow(self, fields: dict[str, Any], found: list[Finding]) -> None:
        """A new message on a free identifier: a re-send of a message an error
        acknowledgement ended [MQTT-4.4.0-2], one beyond the peer's Receive Maximum; the
        sender table's entry from FREE."""
        packet_id = fields["packet_id"]
        ended = self.ended.pop(packet_id, None)
        if ended is not None and fields["dup"] and same_message(fields, ended.message):
            note = (
                f"re-sent after {ended.kind} 0x{ended.code:02X}, which acknowledged it "
                "(an error acknowledgement ends the flow)"
            )
            self._about(found, VIOLATION, fields, note, NOT_AFTER_ERROR)
        step = self.sender_step(SenderState.FREE, self.PUBLISH_SENT[fields["qos"]])
        assert isinstance(step, Step50)
        maximum = self.peer_receives.receive_maximum
        if SA.TAKE_QUOTA in step.actions and len(self.judged_quota) >= maximum:
            rule = QUOTA_SERVER if self.server else QUOTA_CLIENT
            self._about(found, VIOLATION, fields, self._over(maximum), rule, QUOTA_ZERO)
            self.offence = self._over_offence(rule, maximum)
        self._start_flow(fields, step)

    def _on_flow(self, fields: dict[str, Any], flow: Any, found: list[Finding]) -> None:
        if not same_message(fields, flow.message):
            step = self.sender_step(flow.state, self.PUBLISH_SENT[fields["qos"]])
            assert isinstance(step, Undefined)
            note = step.note or "a new message on a packet identifier still in use"
            self._about(found, step.verdict or VIOLATION, fields, note, *step.rules)
            flow.message = p_of(fields)
        elif flow.state is SenderState.AWAIT_PUBCOMP:
            note = "the PUBLISH re-sent after its PUBREL"
            self._about(found, VIOLATION, fields, note, NO_PUBLISH_AFTER_PUBREL)
        else:
            # [MQTT-4.4.0-1] "Clients and Servers MUST NOT resend messages at any other
            # time" than on a resumed session
            note = "re-sent on the same connection" + ("" if fields["dup"] else ", DUP 0")
            rules = (RESEND50,) if fields["dup"] else (RESEND50, RESENT_DUP50)
            self._about(found, VIOLATION, fields, note, *rules)

    def _peer_receives(self, event: Any, fields: dict[str, Any], found: list[Finding]) -> None:
        """As in 3.x; a PUBLISH beyond its Receive Maximum (the offence of
        :meth:`_new_flow`) the peer does not receive: it answers DISCONNECT 0x93."""
        packet_id: Any = fields.get("packet_id")
        state = ReceiverState.FREE
        if packet_id is not None:
            state = self.peer_rx.get(packet_id, ReceiverState.FREE)
        if self.offence is not None and state is ReceiverState.FREE:
            return
        if event is RI.PUBLISH_QOS2:
            self.peer_refusable[packet_id] = state
        super()._peer_receives(event, fields, found)

    def _judged_pubrel(self, fields: dict[str, Any], found: list[Finding]) -> None:
        """The judged end sends a PUBREL: one it owes, or the 5.0 QoS 2 sender's rules."""
        packet_id = fields["packet_id"]
        if self._pay("PUBREL", packet_id) is not None:
            return
        flow = self.judged_tx.get(packet_id)
        ended = self.ended.get(packet_id)
        what = f"PUBREL {packet_id}"
        if flow is None and ended is not None and ended.kind == "PUBREC":
            note = (
                f"after PUBREC 0x{ended.code:02X}, which ended the flow (PUBREL only after a "
                "PUBREC below 0x80)"
            )
            self._found(found, VIOLATION, f"{what} {note}", PUBREL_ON_PUBREC, NOT_AFTER_ERROR)
        elif flow is None:
            note = "for a packet identifier with no flow in progress (answered PUBCOMP 0x92)"
            self._found(found, TOLERATED, f"{what} {note}", PUBCOMP_FOR_PUBREL)
        elif flow.state is SenderState.AWAIT_PUBCOMP:
            self._found(
                found, VIOLATION, f"{what} again: a re-send on the same connection", RESEND50
            )
        else:
            note = "before the PUBREC (PUBREL only after a PUBREC below 0x80)"
            self._found(found, VIOLATION, f"{what} {note}", PUBREL_ON_PUBREC)

    def _paid(self, kind: str, fields: dict[str, Any], owed: Owed, found: list[Finding]) -> None:
        """The judged end sent an answer it owed: with the code the model answers (PUBCOMP
        0x00 where it owes 0x92 is tolerated); an error PUBACK or PUBREC refuses the
        message."""
        code, expected = reason_code(fields), owed.packet.get("reason_code")
        if kind == "PUBCOMP" and expected is not None and is_error(expected) and not is_error(code):
            note = (
                f"0x{code:02X} for a PUBREL whose identifier it did not hold (the model "
                f"answers 0x{expected:02X}, Packet Identifier not found)"
            )
            self._found(found, TOLERATED, f"PUBCOMP {fields['packet_id']}: {note}",
                        PUBCOMP_FOR_PUBREL, PUBCOMP_REASON)  # fmt: skip
        if is_error(code) and kind in REFUSED:
            self._refused(kind, fields["packet_id"], self.judged_rx, self.refusable)


def link_judge(
    label: str,
    judged: str,
    *,
    edition: Edition,
    keep: bool = False,
    server: bool | None = None,
) -> LinkJudge:
    """The link judge of an edition: :class:`LinkJudge` for 3.1 and 3.1.1,
    :class:`LinkJudge50` for 5.0 (``server``, whether the judged end is the server,
    defaults to ``judged != "client"``)."""
    if edition is V50:
        return LinkJudge50(
            label, judged, server=judged != "client" if server is None else server, keep=keep
        )
    return LinkJudge(label, judged, keep=keep, v311=edition is not Edition.V31)


__all__ = [
    "ACKS",
    "ALIAS_MAX_CLIENT",
    "ALIAS_MAX_SERVER",
    "MAXIMUM_QOS",
    "NOT_AFTER_ERROR",
    "QUOTA_CLIENT",
    "QUOTA_SERVER",
    "QUOTA_ZERO",
    "RETAIN_AVAILABLE",
    "Ended",
    "FlowOffence",
    "LinkJudge",
    "LinkJudge50",
    "link_judge",
    "reason_code",
    "topic_alias",
]
