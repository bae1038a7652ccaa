"""The link judge: the flow tables' judgement of one end of a connection (MQTT 3.1, 3.1.1).

Rules / theory of operation
---------------------------
One :class:`LinkJudge` watches the packets between two ends, in order, and judges one of
them, the *judged* end (the broker, for the live probe; either end, for a capture),
against the model's tables (:mod:`pubproof.model.flows`, read through
:func:`~pubproof.model.flows.sender_step` and :func:`~pubproof.model.flows.receiver_step`
at every packet). Four table-driven parts watch at once, each a state per packet
identifier:

- the judged end as *receiver* of what its peer publishes (:attr:`LinkJudge.judged_rx`):
  each PUBLISH and PUBREL the peer sends makes the judged end owe the answers its receiver
  table sends (PUBACK, PUBREC, PUBCOMP);
- the judged end as *sender* (:attr:`LinkJudge.judged_tx`, per identifier it chose): a
  PUBREC from the peer makes it owe PUBREL, a resumed session the re-sends
  [MQTT-4.4.0-1]; what it sends on an identifier is judged against its flow there;
- a model peer as *receiver* of what the judged end sends (:attr:`LinkJudge.peer_rx`):
  what a well-behaved peer delivers, and what its table calls a violation or tolerates;
- the peer as *sender* (:attr:`LinkJudge.peer_tx`): which acknowledgements it awaits, so
  an acknowledgement nobody awaits is judged as the sender table says.

What the judged end owes is one list, first owed first paid (:class:`Owed`): an answer it
sends pays the first one owed of its type and identifier. A live peer's judge
(``keep=True``) also keeps the model peer's deliveries, and :meth:`LinkJudge.close` makes
every answer still owed from before the probe's last wait a *missing* finding; a capture
has no waits, and nothing owed is a finding there.

The QoS 2 receivers are judged as Method B (deliver on PUBLISH, hold the identifier until
PUBREL): both methods answer every packet alike (``proto.methods-a-and-b-deliver-the-same-
sequence``), and Method B needs no stored message to deliver.

MQTT 5.0 extends this judge (:class:`pubproof.judge.link50.LinkJudge50`): the edition's
tables are read through the methods and class attributes under "the edition's tables"
below, which it overrides, and it adds Reason Codes, flow control and Topic Aliases. The
capture pipeline runs a compiled, inlined twin of both judges
(:mod:`pubproof.pipeline.fast`), held equal to these by differential tests
(``tests/test_judge_twins.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

# the rules the judge cites besides the tables' own (:mod:`pubproof.judge.cited`)
from pubproof.judge.cited import (
    FORWARD_DUP,
    ID_IN_USE_CLIENT,
    ID_IN_USE_SERVER,
    QOS2_RECEIVER,
    QOS2_SENDER,
    RESEND,
    RESENT_DUP,
    RESUMED,
    SESSION_LOST,
)
from pubproof.judge.describe import P_FIELDS, describe, same_message
from pubproof.judge.findings import MISSING, TOLERATED, VIOLATION, Finding, Source
from pubproof.model.editions import Edition
from pubproof.model.flows import (
    Method,
    ReceiverAction,
    ReceiverInput,
    ReceiverState,
    SenderAction,
    SenderInput,
    SenderState,
    Step,
    Undefined,
    receiver_step,
    sender_step,
)
from pubproof.model.flows50 import Step50

METHOD = Method.B
#: a table's step, in either edition
AnyStep = Step | Step50

#: the acknowledgements a sender receives
ACKS = ("PUBACK", "PUBREC", "PUBCOMP")


@dataclass(frozen=True, slots=True)
class Owed:
    """An answer the judged end owes: the packet (an acknowledgement, or a PUBLISH to
    re-send), the rules that make it owed, the index of the packet that did, and why (a
    phrase, or the packet it answers)."""

    packet: Mapping[str, Any]
    rules: tuple[str, ...]
    since: int
    why: str | Mapping[str, Any]

    @property
    def key(self) -> tuple[str, int | None]:
        """(type, packet identifier) of what is owed."""
        return self.packet["type"], self.packet.get("packet_id")


@dataclass(slots=True)
class Flow:
    """A flow the judged end sends on one packet identifier: its sender state, and the
    message (``P``), to compare what it sends next on the identifier with."""

    state: SenderState
    message: dict[str, Any]


class LinkJudge:
    """Feed it the packets between two ends in order; it judges the ``judged`` end.

    ``label`` heads every message (the probe's client name; ``server`` or ``client`` for
    a capture); ``judged`` is the role a finding is about. ``keep`` keeps what a live
    peer's judge needs: the model peer's deliveries, and (in 5.0) every answer owed until
    :meth:`close`. ``edition`` (3.1 or 3.1.1) sets ``v311``; MQTT 5.0 has its own judge,
    :func:`pubproof.judge.link50.link_judge`."""

    # -- the edition's tables (MQTT 5.0: LinkJudge50 names its own) --------------------------
    #: a PUBLISH sent, by its QoS: its sender's input (QoS 0 has no flow)
    PUBLISH_SENT: ClassVar[Mapping[int, Any]] = {
        1: SenderInput.PUBLISH_QOS1,
        2: SenderInput.PUBLISH_QOS2,
    }
    #: a PUBLISH received, by its QoS: its receiver's input
    PUBLISH_RECEIVED: ClassVar[Mapping[int, Any]] = {
        0: ReceiverInput.PUBLISH_QOS0,
        1: ReceiverInput.PUBLISH_QOS1,
        2: ReceiverInput.PUBLISH_QOS2,
    }
    #: a reconnection: the sender's and the receiver's input, by whether the session resumes
    SENDER_RECONNECT: ClassVar[Mapping[bool, Any]] = {
        True: SenderInput.RESUME,
        False: SenderInput.CLEAN,
    }
    RECEIVER_RECONNECT: ClassVar[Mapping[bool, Any]] = {
        True: ReceiverInput.RESUME,
        False: ReceiverInput.CLEAN,
    }
    #: the actions that send an acknowledgement, and its type
    SENDS: ClassVar[Mapping[Any, str]] = {
        SenderAction.SEND_PUBREL: "PUBREL",
        ReceiverAction.SEND_PUBACK: "PUBACK",
        ReceiverAction.SEND_PUBREC: "PUBREC",
        ReceiverAction.SEND_PUBCOMP: "PUBCOMP",
    }
    RESEND_PUBLISH: ClassVar[Any] = SenderAction.RESEND_PUBLISH
    DELIVER: ClassVar[Any] = ReceiverAction.DELIVER

    def __init__(
        self,
        label: str,
        judged: str,
        *,
        keep: bool = False,
        v311: bool = True,
        edition: Edition | None = None,
    ) -> None:
        if edition is Edition.V50 and type(self) is LinkJudge:
            raise TypeError("an MQTT 5.0 link is judged by pubproof.judge.link50.link_judge")
        if edition is not None and edition is not Edition.V50:
            v311 = edition is Edition.V311
        self.label = label
        self.judged = judged
        self.keep = keep
        self.v311 = v311  # MQTT 3.1 has no Session Present
        #: packet identifier -> the judged end's receiver state (FREE: no entry)
        self.judged_rx: dict[int, ReceiverState] = {}
        #: packet identifier -> the model peer's receiver state
        self.peer_rx: dict[int, ReceiverState] = {}
        #: packet identifier -> the judged end's flow as sender
        self.judged_tx: dict[int, Flow] = {}
        #: packet identifier -> the peer's sender state
        self.peer_tx: dict[int, SenderState] = {}
        #: what the judged end owes, first owed first
        self.owed: list[Owed] = []
        #: what a well-behaved peer delivers of what the judged end sent (keep only)
        self.deliveries: list[Mapping[str, Any]] = []
        self.connections = 0
        self.persistent = False  # the last CONNECT asked to keep the session
        self.pending: str | None = None  # "resume" or "clean", applied at CONNACK

    def sender_step(self, state: SenderState, event: Any) -> AnyStep | Undefined:
        """The sender table's entry for ``state`` and ``event``."""
        return sender_step(state, event)

    def receiver_step(self, state: ReceiverState, event: Any) -> AnyStep | Undefined:
        """The receiver table's entry (Method B) for ``state`` and ``event``."""
        return receiver_step(METHOD, state, event)

    def ack_received(self, kind: str, fields: Mapping[str, Any]) -> Any:
        """A PUBACK, PUBREC or PUBCOMP received: its sender's input."""
        return SenderInput[kind]

    def pubrel_received(self, fields: Mapping[str, Any]) -> Any:
        """A PUBREL received: its receiver's input."""
        return ReceiverInput.PUBREL

    def acknowledgement(self, kind: str, packet_id: Any, action: Any) -> dict[str, Any]:
        """The acknowledgement an action sends, as its ``P``."""
        return {"type": kind, "packet_id": packet_id}

    def shown_code(self, fields: Mapping[str, Any]) -> str:
        """How a message shows an acknowledgement's Reason Code (3.x: it has none)."""
        return ""

    def delivered(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """What the model peer delivers of a PUBLISH: its ``P``."""
        return p_of(fields)

    # -- findings ----------------------------------------------------------------------------

    def _found(self, found: list[Finding], verdict: str, message: str, *rules: str) -> None:
        found.append(
            Finding(
                verdict=verdict, rules=rules, message=f"{self.label}: {message}",
                source=Source.LINK, role=self.judged,
            )
        )  # fmt: skip

    def _about(
        self, found: list[Finding], verdict: str, packet: Mapping[str, Any], note: str, *rules: str
    ) -> None:
        """A finding about a PUBLISH the judged end sent."""
        self._found(found, verdict, f"{describe(packet)}: {note}", *rules)

    # -- what the judged end owes ------------------------------------------------------------

    def _owe(self, packet: Mapping[str, Any], rules: tuple[str, ...], since: int, why: Any) -> None:
        self.owed.append(Owed(packet, rules, since, why))

    def _owe_sent(self, step: AnyStep, packet_id: Any, index: int, why: Any) -> None:
        """The judged end owes the acknowledgements the table's ``step`` sends."""
        for action in step.actions:
            if action in self.SENDS:
                self._owe(self.acknowledgement(self.SENDS[action], packet_id, action), step.rules,
                          index, why)  # fmt: skip

    def _pay(self, kind: str, packet_id: int | None) -> Owed | None:
        """The first answer owed of this type and identifier, now paid (None: none)."""
        for owed in self.owed:
            if owed.key == (kind, packet_id):
                self.owed.remove(owed)
                return owed
        return None

    def owed_keys(self) -> list[tuple[str, int | None]]:
        """The answers owed now, as (type, packet identifier), once per answer owed."""
        return [owed.key for owed in self.owed]

    def close(self, last_wait: int) -> list[Finding]:
        """The connection ends (a live peer's judge, ``keep``): every answer owed is void,
        and those owed since before the entry ``last_wait`` (the probe's last wait) are
        *missing* findings."""
        found: list[Finding] = []
        for owed in self.owed:
            if owed.since < last_wait:
                why = owed.why
                if not isinstance(why, str):
                    why = f"the answer to {describe(why)}"
                self._found(found, MISSING, f"no {describe(owed.packet)} ({why})", *owed.rules)
        self.owed.clear()
        return found

    # -- the states the tables move ----------------------------------------------------------

    @staticmethod
    def _move(states: dict[Any, Any], packet_id: Any, state: SenderState | ReceiverState) -> None:
        """An identifier's state is now ``state`` (FREE: no entry)."""
        if state in (SenderState.FREE, ReceiverState.FREE):
            states.pop(packet_id, None)
        else:
            states[packet_id] = state

    def judged_steps(self, packet_id: Any, step: AnyStep) -> None:
        """The judged end's flow on ``packet_id`` (if any) takes the sender table's step (to
        FREE: it ends)."""
        flow = self.judged_tx.get(packet_id)
        if flow is None:
            return
        if step.next is SenderState.FREE:
            del self.judged_tx[packet_id]
        else:
            flow.state = step.next  # type: ignore[assignment]

    def peer_steps(self, packet_id: Any, step: AnyStep) -> None:
        """The peer's flow on ``packet_id`` takes the sender table's step."""
        self._move(self.peer_tx, packet_id, step.next)

    def _start_flow(self, fields: Mapping[str, Any], step: AnyStep) -> None:
        """The judged end starts a flow with the PUBLISH ``fields``: from FREE, the sender
        table's ``step``."""
        self.judged_tx[fields["packet_id"]] = Flow(SenderState.FREE, p_of(fields))
        self.judged_steps(fields["packet_id"], step)

    # -- what the peer sent ------------------------------------------------------------------

    def peer_sent(self, kind: str, given: Mapping[str, Any], index: int = 0) -> None:
        """A packet the peer sent the judged end (``given``: ``P`` or a control packet's
        fields; ``index``: its position in the evidence)."""
        fields = dict(given)
        if kind == "CONNECT":
            self._connect(fields)
        elif kind == "PUBLISH":
            self._peer_publishes(fields, index)
        elif kind == "PUBREL":
            self._judged_receives(self.pubrel_received(fields), fields, index)
        elif kind in ACKS:
            self._peer_acks(kind, fields, index)

    def _connect(self, fields: Mapping[str, Any]) -> None:
        """The peer's CONNECT: a reconnection resumes the session when this CONNECT and the
        last one asked to keep it (settled by the CONNACK)."""
        self.connections += 1
        clean = bool(fields.get("clean_session"))
        if self.connections > 1:
            self.pending = "resume" if self.persistent and not clean else "clean"
        self.persistent = not clean

    def _peer_publishes(self, fields: dict[str, Any], index: int) -> None:
        qos: Any = fields.get("qos")
        packet_id: Any = fields.get("packet_id")
        if qos not in self.PUBLISH_SENT:
            return  # QoS 0 owes nothing and touches no identifier (QoS 3 has no flow)
        if (
            packet_id is not None
            and not fields.get("dup")
            and self.peer_tx.get(packet_id, SenderState.FREE) is SenderState.FREE
        ):
            # a new message: the peer, as sender, now awaits its acknowledgement
            step = self.sender_step(SenderState.FREE, self.PUBLISH_SENT[qos])
            assert not isinstance(step, Undefined)
            self.peer_steps(packet_id, step)
        self._judged_receives(self.PUBLISH_RECEIVED[qos], fields, index)

    def _judged_receives(self, event: Any, fields: Mapping[str, Any], index: int) -> None:
        """The judged end receives a PUBLISH or PUBREL: it owes what its receiver table
        sends."""
        packet_id = fields.get("packet_id")
        step = self.receiver_step(self.judged_rx.get(packet_id, ReceiverState.FREE), event)  # type: ignore[arg-type]
        if isinstance(step, Undefined):
            return  # the judged end's own judgement of its peer: not this judge's
        self._owe_sent(step, packet_id, index, fields)
        self._move(self.judged_rx, packet_id, step.next)

    def _peer_acks(self, kind: str, fields: Mapping[str, Any], index: int) -> None:
        """The peer acknowledges: the judged end's flow takes the sender table's step (a
        PUBREC makes it owe PUBREL)."""
        packet_id = fields.get("packet_id")
        flow = self.judged_tx.get(packet_id)  # type: ignore[arg-type]
        state = SenderState.FREE if flow is None else flow.state
        step = self.sender_step(state, self.ack_received(kind, fields))
        if isinstance(step, Undefined):
            return  # the judged end's own judgement of its peer: not this judge's
        self._owe_sent(step, packet_id, index, f"the answer to {kind}{self.shown_code(fields)}")
        self.judged_steps(packet_id, step)

    # -- what the judged end sent ------------------------------------------------------------

    def judged_sent(
        self, kind: str, given: Mapping[str, Any], found: list[Finding], index: int = 0
    ) -> None:
        """A packet the judged end sent its peer; findings about it go to ``found``."""
        fields = dict(given)
        if kind == "CONNACK":
            self._connack(fields, found, index)
        elif kind == "PUBLISH":
            self._judged_publishes(fields, found)
        elif kind == "PUBREL":
            self._judged_pubrel(fields, found)
            self._peer_receives(self.pubrel_received(fields), fields, found)
        elif kind in ACKS:
            self._judged_acks(kind, fields, found)

    def _connack(self, fields: Mapping[str, Any], found: list[Finding], index: int) -> None:
        """The judged end accepts a connection: the session resumes or starts clean."""
        pending, self.pending = self.pending, None
        if pending is None or fields.get("return_code") != 0:
            return
        resume = pending == "resume"
        if resume and self.v311 and not fields.get("session_present"):
            self._found(
                found, VIOLATION,
                "reconnected without a clean session, the broker answered Session Present 0 "
                "(it lost the session)",
                *SESSION_LOST,
            )  # fmt: skip
            resume = False
        self._reconnect(resume, index)

    def _reconnect(self, resume: bool, index: int) -> None:
        """The tables' entries for a resumed or a clean session, for every identifier of the
        four parts: the judged end owes what its sender's entries send again."""
        for packet_id, flow in list(self.judged_tx.items()):
            step = self.sender_step(flow.state, self.SENDER_RECONNECT[resume])
            assert not isinstance(step, Undefined)
            if self.RESEND_PUBLISH in step.actions:
                self._owe({**flow.message, "dup": True}, step.rules, index, RESUMED)
            self._owe_sent(step, packet_id, index, RESUMED)
            self.judged_steps(packet_id, step)
        for packet_id, state in list(self.peer_tx.items()):
            step = self.sender_step(state, self.SENDER_RECONNECT[resume])
            assert not isinstance(step, Undefined)
            self.peer_steps(packet_id, step)
        for states in (self.judged_rx, self.peer_rx):
            for packet_id, rx_state in list(states.items()):
                rx_step = self.receiver_step(rx_state, self.RECEIVER_RECONNECT[resume])
                assert not isinstance(rx_step, Undefined)
                self._move(states, packet_id, rx_step.next)

    def _judged_publishes(self, fields: dict[str, Any], found: list[Finding]) -> None:
        """The judged end sends a PUBLISH: its flow (a QoS 1 or 2 one), then the model
        peer receives it."""
        if fields.get("packet_id") is not None:
            self._judged_flow(fields, found)
        self._peer_receives(self.PUBLISH_RECEIVED[fields["qos"]], fields, found)

    def _judged_flow(self, fields: dict[str, Any], found: list[Finding]) -> None:
        """A PUBLISH on the judged end's identifier: a re-send it owes, a new flow, or a
        PUBLISH on a flow in progress."""
        packet_id = fields["packet_id"]
        resent = self._pay("PUBLISH", packet_id)
        flow = self.judged_tx.get(packet_id)
        if resent is not None:
            self._resent(fields, resent, found)
        elif flow is None:
            self._new_flow(fields, found)
        else:
            self._on_flow(fields, flow, found)

    def _resent(self, fields: dict[str, Any], resent: Owed, found: list[Finding]) -> None:
        """The re-send a resumed session owed: DUP 1 [MQTT-3.3.1-1], the same message
        [MQTT-4.4.0-1]."""
        if not fields["dup"]:
            self._about(found, VIOLATION, fields, "re-sent with DUP 0", RESENT_DUP)
        if not same_message(fields, resent.packet):
            self._about(found, VIOLATION, fields, "the re-send is not the original message", RESEND)

    def _new_flow(self, fields: dict[str, Any], found: list[Finding]) -> None:
        """A new message on a free identifier: the sender table's entry from FREE; DUP 1 on
        it is a forwarding server's fault [MQTT-3.3.1-3]."""
        step = self.sender_step(SenderState.FREE, self.PUBLISH_SENT[fields["qos"]])
        assert not isinstance(step, Undefined)
        self._start_flow(fields, step)
        if fields["dup"]:
            note = "DUP 1 on a message the broker had not sent this client"
            self._about(found, VIOLATION, fields, note, FORWARD_DUP)

    def _on_flow(self, fields: dict[str, Any], flow: Flow, found: list[Finding]) -> None:
        """A PUBLISH on an identifier whose flow is in progress, and no re-send owed."""
        if not same_message(fields, flow.message):
            note = "a new message on a packet identifier still in use"
            self._about(found, VIOLATION, fields, note, ID_IN_USE_SERVER, ID_IN_USE_CLIENT)
            flow.message = p_of(fields)
        elif flow.state is SenderState.AWAIT_PUBCOMP:
            note = "the PUBLISH re-sent after its PUBREL"
            self._about(found, VIOLATION, fields, note, QOS2_SENDER)
        elif fields["dup"]:
            note = (
                "re-sent on the same connection (3.1.1 requires re-sending only on reconnect "
                "and does not forbid it)"
            )
            self._about(found, TOLERATED, fields, note, RESEND)
        else:
            self._about(found, VIOLATION, fields, "re-sent with DUP 0", RESENT_DUP)

    def _judged_pubrel(self, fields: dict[str, Any], found: list[Finding]) -> None:
        """The judged end sends a PUBREL: one it owes, or the QoS 2 sender's rules."""
        packet_id = fields["packet_id"]
        if self._pay("PUBREL", packet_id) is not None:
            return
        flow = self.judged_tx.get(packet_id)
        what = f"PUBREL {packet_id}"
        if flow is None:
            note = "for a packet identifier with no flow in progress (the client answers PUBCOMP)"
            self._found(found, TOLERATED, f"{what} {note}", QOS2_RECEIVER)
        elif flow.state is SenderState.AWAIT_PUBCOMP:
            note = "again: a re-send on the same connection"
            self._found(found, TOLERATED, f"{what} {note}", QOS2_SENDER)
        else:
            note = "before the client's PUBREC (PUBREL only after PUBREC)"
            self._found(found, VIOLATION, f"{what} {note}", QOS2_SENDER)

    def _judged_acks(self, kind: str, fields: dict[str, Any], found: list[Finding]) -> None:
        """The judged end sends a PUBACK, PUBREC or PUBCOMP: an answer it owes, or an
        acknowledgement the peer's sender table judges."""
        packet_id = fields["packet_id"]
        paid = self._pay(kind, packet_id)
        if paid is not None:
            self._paid(kind, fields, paid, found)
        step = self.sender_step(
            self.peer_tx.get(packet_id, SenderState.FREE), self.ack_received(kind, fields)
        )
        if not isinstance(step, Undefined):
            self.peer_steps(packet_id, step)
        elif paid is None:
            what = f"{kind} {packet_id}{self.shown_code(fields)}"
            self._found(found, step.verdict, f"{what}: {step.note}", *step.rules)

    def _paid(self, kind: str, fields: dict[str, Any], owed: Owed, found: list[Finding]) -> None:
        """The judged end sent an answer it owed (3.x: nothing more to judge)."""

    def _peer_receives(self, event: Any, fields: dict[str, Any], found: list[Finding]) -> None:
        """The model peer receives what the judged end sent: it delivers, or its table
        judges the packet."""
        packet_id = fields.get("packet_id")
        state = ReceiverState.FREE
        if packet_id is not None:  # QoS 0: no identifier's state
            state = self.peer_rx.get(packet_id, ReceiverState.FREE)
        step = self.receiver_step(state, event)
        if isinstance(step, Undefined):
            self._about(found, step.verdict, fields, step.note, *step.rules)
            return
        if self.DELIVER in step.actions and self.keep:
            self.deliveries.append(self.delivered(fields))
        if packet_id is not None:
            self._move(self.peer_rx, packet_id, step.next)


def p_of(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``P``'s fields of ``fields``, in ``P``'s order."""
    return {k: fields[k] for k in P_FIELDS if k in fields}


__all__ = [
    "ACKS",
    "FORWARD_DUP",
    "ID_IN_USE_CLIENT",
    "ID_IN_USE_SERVER",
    "METHOD",
    "QOS2_RECEIVER",
    "QOS2_SENDER",
    "RESEND",
    "RESENT_DUP",
    "RESUMED",
    "SESSION_LOST",
    "Flow",
    "LinkJudge",
    "Owed",
    "p_of",
]
