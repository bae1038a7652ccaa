"""The compiled twin of the 3.x link judge (:mod:`pubproof.judge.link`), for the capture
pipeline's per-packet path.

The same judgement as the readable judge, finding for finding (``tests/test_judge_twins.py``
holds them equal on random and faulty streams): the judged end as receiver and as sender,
a model peer as receiver, the peer as sender, what is owed, paid and missing. What differs
is how, for speed (:mod:`pubproof.pipeline.fast.layout` says why each trick exists):

- the tables are read once, at import, into typed entries indexed by small integers (a
  state's position in its enum): judging a packet costs a few list and dict look-ups;
- what is owed is kept per (type, packet identifier), first owed first paid; a capture's
  judge (``keep=False``) keeps only a re-sent PUBLISH's message, a live peer's judge also
  why each answer is owed and in which order, for :meth:`LinkJudge.close`;
- the per-packet helpers are inlined where they ran once per packet, names the path reads
  are ``Final`` aliases, the flows plain slotted classes, owed answers named tuples made
  by ``tuple.__new__``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from pubproof.judge.cited import (
    FORWARD_DUP,
    ID_IN_USE_CLIENT,
    ID_IN_USE_SERVER,
    QOS2_RECEIVER,
    QOS2_SENDER,
    RESEND,
    RESENT_DUP,
    SESSION_LOST,
)
from pubproof.judge.describe import P_FIELDS, describe, same_message
from pubproof.judge.findings import TOLERATED, VIOLATION, Finding, Source
from pubproof.judge.packets import FLOW_TYPES
from pubproof.model.editions import Edition
from pubproof.model.flows import (
    RECEIVER_STATES,
    Method,
    ReceiverAction,
    ReceiverInput,
    ReceiverState,
    SenderAction,
    SenderInput,
    SenderState,
    Step,
    receiver_step,
    sender_step,
)
from pubproof.pipeline.fast.layout import as_dict, new_tuple

METHOD = Method.B

#: imported names the per-packet path reads, as this module's own Final names (layout)
_FLOW_TYPES: Final = FLOW_TYPES
_P_FIELDS: Final = P_FIELDS


# -- the tables, compiled once --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SenderEntry:
    """A sender's table entry for one (state, input): a step, or an undefined input."""

    defined: bool
    next: int  # the next state's position in SenderState (-1 when undefined)
    sends_pubrel: bool
    resends_publish: bool
    verdict: str  # of an undefined input
    rules: tuple[str, ...]
    note: str


@dataclass(frozen=True, slots=True)
class ReceiverEntry:
    """A receiver's table entry for one (state, input)."""

    defined: bool
    next: int  # the next state's position in ReceiverState (-1 when undefined)
    replies: tuple[str, ...]  # the acknowledgements it sends, in order
    delivers: bool
    verdict: str
    rules: tuple[str, ...]
    note: str


SENDER_STATES = tuple(SenderState)
_S_INDEX = {state: i for i, state in enumerate(SENDER_STATES)}
S_FREE: Final = _S_INDEX[SenderState.FREE]
S_AWAIT_PUBCOMP: Final = _S_INDEX[SenderState.AWAIT_PUBCOMP]
RECEIVER_STATES_ALL = tuple(ReceiverState)
_R_INDEX = {state: i for i, state in enumerate(RECEIVER_STATES_ALL)}
R_FREE: Final = _R_INDEX[ReceiverState.FREE]
_REPLY = {
    ReceiverAction.SEND_PUBACK: "PUBACK",
    ReceiverAction.SEND_PUBREC: "PUBREC",
    ReceiverAction.SEND_PUBCOMP: "PUBCOMP",
}


def _sender(state: SenderState, event: SenderInput) -> SenderEntry:
    step = sender_step(state, event)
    if isinstance(step, Step):
        assert isinstance(step.next, SenderState)
        return SenderEntry(
            True, _S_INDEX[step.next], SenderAction.SEND_PUBREL in step.actions,
            SenderAction.RESEND_PUBLISH in step.actions, "", step.rules, step.note,
        )  # fmt: skip
    return SenderEntry(False, -1, False, False, step.verdict, step.rules, step.note)


def _receiver(state: ReceiverState, event: ReceiverInput) -> ReceiverEntry | None:
    if state not in RECEIVER_STATES[METHOD]:
        return None
    step = receiver_step(METHOD, state, event)
    if isinstance(step, Step):
        assert isinstance(step.next, ReceiverState)
        replies = tuple(_REPLY[a] for a in step.actions if a in _REPLY)
        delivers = ReceiverAction.DELIVER in step.actions
        return ReceiverEntry(
            True, _R_INDEX[step.next], replies, delivers, "", step.rules, step.note
        )
    return ReceiverEntry(False, -1, (), False, step.verdict, step.rules, step.note)


SI, RI = SenderInput, ReceiverInput
#: SENDER[input][state]
SENDER: Mapping[SenderInput, tuple[SenderEntry, ...]] = {
    event: tuple(_sender(state, event) for state in SENDER_STATES)
    for event in (SI.PUBLISH_QOS1, SI.PUBLISH_QOS2, SI.PUBACK, SI.PUBREC, SI.PUBCOMP, SI.RESUME)
}
#: RECEIVER[input][state] (None for a state Method B does not use)
RECEIVER: Mapping[ReceiverInput, tuple[ReceiverEntry | None, ...]] = {
    event: tuple(_receiver(state, event) for state in RECEIVER_STATES_ALL)
    for event in (RI.PUBLISH_QOS0, RI.PUBLISH_QOS1, RI.PUBLISH_QOS2, RI.PUBREL)
}
_TX_PUBLISH: Final = {1: SENDER[SI.PUBLISH_QOS1], 2: SENDER[SI.PUBLISH_QOS2]}
_TX_ACK: Final = {
    "PUBACK": SENDER[SI.PUBACK],
    "PUBREC": SENDER[SI.PUBREC],
    "PUBCOMP": SENDER[SI.PUBCOMP],
}
_TX_RESUME: Final = SENDER[SI.RESUME]
_RX_PUBLISH: Final = {
    0: RECEIVER[RI.PUBLISH_QOS0], 1: RECEIVER[RI.PUBLISH_QOS1], 2: RECEIVER[RI.PUBLISH_QOS2],
}  # fmt: skip
_RX_PUBREL: Final = RECEIVER[RI.PUBREL]
_RESUMED = "the re-send the resumed session owes"
_ANSWER_TO: Final = {kind: f"the answer to {kind}" for kind in ("PUBACK", "PUBREC", "PUBCOMP")}


class Owed(NamedTuple):
    """An answer the judged end owes: its type and packet identifier, the packet (a
    re-sent PUBLISH's ``P``, else None), and, kept for a live peer only, the rules that
    make it owed, the index of the entry that did, and why (a string, or the packet it
    answers) and its place in the order things became owed."""

    packet: Mapping[str, Any] | None
    rules: tuple[str, ...] = ()
    since: int = 0
    why: str | Mapping[str, Any] = ""
    order: int = 0  # when it became owed, among all the judge's owed answers


_NOTHING: Final = Owed(None)  # an answer owed, on a capture: nothing more to keep
#: Owed(packet) made by new_tuple (layout) with Owed's own defaults (about 16,000 times
#: on 200,000 frames of 5.0)
_OWED_DEFAULTS: Final = tuple(Owed._field_defaults[name] for name in Owed._fields[1:])


class _Flow:
    """A flow the judged end sends on one packet identifier (a plain slotted class:
    layout)."""

    __slots__ = ("message", "state")

    def __init__(self, state: int, message: Mapping[str, Any]) -> None:
        self.state = state
        self.message = message


class LinkJudge:
    """Feed it the packets between two ends in order; it judges the ``judged`` end.

    ``label`` heads every message (the probe's client name; ``server`` or ``client`` for
    a capture); ``judged`` is the role a finding is about. ``keep`` keeps what a live
    peer's judge needs: the model peer's deliveries and why each answer is owed.
    ``edition`` (3.1 or 3.1.1) sets ``v311``; MQTT 5.0 has its own judge,
    :func:`pubproof.judge.link50.link_judge`."""

    __slots__ = (
        "connections",
        "deliveries",
        "judged",
        "judged_rx",
        "judged_tx",
        "keep",
        "label",
        "owed",
        "owes",
        "peer_rx",
        "peer_tx",
        "pending",
        "persistent",
        "v311",
    )  # fmt: skip

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
        self.judged_rx: dict[int, int] = {}  # packet id -> the judged end's receiver state
        self.peer_rx: dict[int, int] = {}  # packet id -> the model peer's receiver state
        self.judged_tx: dict[int, _Flow] = {}  # packet id -> the judged end's flow
        self.peer_tx: dict[int, int] = {}  # packet id -> the peer's sender state
        # (type, packet id) -> what is owed, first owed first; a list, not a deque: it
        # rarely holds more than one
        self.owed: dict[tuple[str, int | None], list[Owed]] = {}
        self.owes = 0  # answers owed so far (keep only): each one's order
        self.deliveries: list[Mapping[str, Any]] = []  # at the model peer (keep only)
        self.connections = 0
        self.persistent = False  # the last CONNECT asked to keep the session
        self.pending: str | None = None  # "resume" or "clean", applied at CONNACK

    # -- findings ----------------------------------------------------------------------------

    def _found(self, found: list[Finding], verdict: str, message: str, *rules: str) -> None:
        found.append(
            Finding(
                verdict=verdict, rules=rules, message=f"{self.label}: {message}",
                source=Source.LINK, role=self.judged,
            )
        )  # fmt: skip

    # -- owed answers ------------------------------------------------------------------------

    def _owed(
        self,
        packet: Mapping[str, Any] | None,
        rules: tuple[str, ...],
        since: int,
        why: str | Mapping[str, Any],
    ) -> Owed:
        """What is kept of an answer owed: the packet (a re-sent PUBLISH needs it to be
        compared), and for a live peer why, since when and in which order."""
        if not self.keep:
            return new_tuple(Owed, (packet, *_OWED_DEFAULTS)) if packet is not None else _NOTHING
        self.owes += 1
        return Owed(packet, rules, since, why, self.owes)

    def _owe(self, kind: str, packet_id: int | None, owed: Owed) -> None:
        queue = self.owed.get((kind, packet_id))
        if queue is None:
            self.owed[kind, packet_id] = [owed]
        else:
            queue.append(owed)

    def _pay(self, kind: str, packet_id: int | None) -> Owed | None:
        queue = self.owed.get((kind, packet_id))
        if not queue:
            return None
        owed = queue.pop(0)
        if not queue:
            del self.owed[kind, packet_id]
        return owed

    def owed_keys(self) -> list[tuple[str, int | None]]:
        """The answers owed now, as (type, packet identifier), once per answer owed."""
        return [key for key, queue in self.owed.items() for _ in queue]

    def close(self, last_wait: int) -> list[Finding]:
        """The connection ends: every answer owed is void, and those owed since before the
        entry ``last_wait`` (the probe's last wait) are *missing* findings."""
        owed = sorted(
            ((o.order, kind, packet_id, o) for (kind, packet_id), q in self.owed.items()
             for o in q),
            key=lambda item: item[0],
        )  # fmt: skip
        self.owed.clear()
        found: list[Finding] = []
        for _, kind, packet_id, o in owed:
            if o.since < last_wait:
                packet = o.packet or {"type": kind, "packet_id": packet_id}
                why = o.why if isinstance(o.why, str) else f"the answer to {describe(o.why)}"
                self._found(found, "missing", f"no {describe(packet)} ({why})", *o.rules)
        return found

    # -- what the peer sent ------------------------------------------------------------------

    def peer_sent(self, kind: str, given: Mapping[str, Any], index: int = 0) -> None:
        """A packet the peer sent the judged end (``given``: ``P`` or a control packet's
        fields; ``index``: its position in the evidence)."""
        fields = as_dict(given)
        if kind == "CONNECT":
            self.connections += 1
            clean = bool(fields.get("clean_session"))
            if self.connections > 1:
                self.pending = "resume" if self.persistent and not clean else "clean"
            self.persistent = not clean
            return
        if kind not in _FLOW_TYPES:
            return
        packet_id: Any = fields.get("packet_id")
        if kind == "PUBLISH":
            qos = fields.get("qos")
            table = _TX_PUBLISH.get(qos)  # type: ignore[arg-type]
            if (
                table is not None
                and packet_id is not None
                and not fields.get("dup")
                and self.peer_tx.get(packet_id, S_FREE) == S_FREE
            ):
                entry = table[S_FREE]
                assert entry.defined
                self.peer_tx[packet_id] = entry.next
            if table is not None:  # QoS 0 owes nothing and touches no identifier
                self._judged_receives(_RX_PUBLISH[qos], packet_id, fields, index)  # type: ignore[index]
        elif kind == "PUBREL":
            assert packet_id is not None
            self._judged_receives(_RX_PUBREL, packet_id, fields, index)
        else:
            self._peer_acks(kind, packet_id, index)

    def _judged_receives(
        self,
        table: tuple[ReceiverEntry | None, ...],
        packet_id: int,
        fields: Mapping[str, Any],
        index: int,
    ) -> None:
        entry = table[self.judged_rx.get(packet_id, R_FREE)]
        assert entry is not None
        if not entry.defined:
            return  # the judged end's own judgement of its peer: not this judge's
        for reply in entry.replies:
            owed = self._owed(None, entry.rules, index, fields) if self.keep else _NOTHING
            queue = self.owed.get((reply, packet_id))
            if queue is None:
                self.owed[reply, packet_id] = [owed]
            else:
                queue.append(owed)
        if entry.next == R_FREE:
            self.judged_rx.pop(packet_id, None)
        else:
            self.judged_rx[packet_id] = entry.next

    def _peer_acks(self, kind: str, packet_id: int, index: int) -> None:
        flow = self.judged_tx.get(packet_id)
        if flow is None:
            return  # whatever the table says, the judged end awaited nothing
        entry = _TX_ACK[kind][flow.state]
        if not entry.defined:
            return
        if entry.sends_pubrel:
            owed = self._owed(None, entry.rules, index, _ANSWER_TO[kind])
            self._owe("PUBREL", packet_id, owed)
        if entry.next == S_FREE:
            del self.judged_tx[packet_id]
        else:
            flow.state = entry.next

    # -- what the judged end sent ------------------------------------------------------------

    def judged_sent(
        self, kind: str, given: Mapping[str, Any], found: list[Finding], index: int = 0
    ) -> None:
        """A packet the judged end sent its peer; findings about it go to ``found``."""
        fields = as_dict(given)
        if kind == "CONNACK":
            self._connack(fields, found, index)
            return
        if kind not in _FLOW_TYPES:
            return
        packet_id: Any = fields.get("packet_id")
        if kind == "PUBLISH":
            qos = fields["qos"]
            if packet_id is not None:
                self._judged_publishes(fields, packet_id, found)
            self._peer_receives(_RX_PUBLISH[qos], fields, packet_id, found)
        elif kind == "PUBREL":
            self._judged_pubrel(packet_id, found)
            self._peer_receives(_RX_PUBREL, fields, packet_id, found)
        else:
            self._judged_acks(kind, packet_id, found)

    def _connack(self, fields: Mapping[str, Any], found: list[Finding], index: int) -> None:
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
        if not resume:
            # a clean session: both ends forget every packet identifier
            self.judged_rx.clear()
            self.peer_rx.clear()
            self.judged_tx.clear()
            self.peer_tx.clear()
            return
        for packet_id, flow in self.judged_tx.items():
            entry = _TX_RESUME[flow.state]
            assert entry.defined
            if entry.resends_publish:
                resent = {**flow.message, "dup": True}
                self._owe("PUBLISH", packet_id, self._owed(resent, entry.rules, index, _RESUMED))
            if entry.sends_pubrel:
                self._owe("PUBREL", packet_id, self._owed(None, entry.rules, index, _RESUMED))

    def _judged_publishes(
        self, fields: dict[str, Any], packet_id: int, found: list[Finding]
    ) -> None:
        resent = self._pay("PUBLISH", packet_id)
        if resent is not None:
            assert resent.packet is not None
            if not fields["dup"]:
                self._found(found, VIOLATION, f"{describe(fields)}: re-sent with DUP 0", RESENT_DUP)
            if not same_message(fields, resent.packet):
                what = f"{describe(fields)}: the re-send is not the original message"
                self._found(found, VIOLATION, what, RESEND)
            return
        flow = self.judged_tx.get(packet_id)
        if flow is None:
            entry = _TX_PUBLISH[fields["qos"]][S_FREE]
            assert entry.defined
            self.judged_tx[packet_id] = _Flow(entry.next, _p(fields))
            if fields["dup"]:
                what = f"{describe(fields)}: DUP 1 on a message the broker had not sent this client"
                self._found(found, VIOLATION, what, FORWARD_DUP)
            return
        what = describe(fields)
        if not same_message(fields, flow.message):
            self._found(
                found, VIOLATION, f"{what}: a new message on a packet identifier still in use",
                ID_IN_USE_SERVER, ID_IN_USE_CLIENT,
            )  # fmt: skip
            flow.message = _p(fields)
        elif flow.state == S_AWAIT_PUBCOMP:
            self._found(
                found, VIOLATION, f"{what}: the PUBLISH re-sent after its PUBREL", QOS2_SENDER
            )
        elif fields["dup"]:
            self._found(
                found, TOLERATED,
                f"{what}: re-sent on the same connection (3.1.1 requires re-sending only on "
                "reconnect and does not forbid it)",
                RESEND,
            )  # fmt: skip
        else:
            self._found(found, VIOLATION, f"{what}: re-sent with DUP 0", RESENT_DUP)

    def _judged_pubrel(self, packet_id: int, found: list[Finding]) -> None:
        if self._pay("PUBREL", packet_id) is not None:
            return
        flow = self.judged_tx.get(packet_id)
        what = f"PUBREL {packet_id}"
        if flow is None:
            note = "for a packet identifier with no flow in progress (the client answers PUBCOMP)"
            self._found(found, TOLERATED, f"{what} {note}", QOS2_RECEIVER)
        elif flow.state == S_AWAIT_PUBCOMP:
            note = "again: a re-send on the same connection"
            self._found(found, TOLERATED, f"{what} {note}", QOS2_SENDER)
        else:
            note = "before the client's PUBREC (PUBREL only after PUBREC)"
            self._found(found, VIOLATION, f"{what} {note}", QOS2_SENDER)

    def _judged_acks(self, kind: str, packet_id: int, found: list[Finding]) -> None:
        paid = self._pay(kind, packet_id) is not None
        entry = _TX_ACK[kind][self.peer_tx.get(packet_id, S_FREE)]
        if entry.defined:
            if entry.next == S_FREE:
                self.peer_tx.pop(packet_id, None)
            else:
                self.peer_tx[packet_id] = entry.next
        elif not paid:
            self._found(found, entry.verdict, f"{kind} {packet_id}: {entry.note}", *entry.rules)

    def _peer_receives(
        self,
        table: tuple[ReceiverEntry | None, ...],
        fields: Mapping[str, Any],
        packet_id: int | None,
        found: list[Finding],
    ) -> None:
        # QoS 0: no identifier's state
        state = R_FREE if packet_id is None else self.peer_rx.get(packet_id, R_FREE)
        entry = table[state]
        assert entry is not None
        if not entry.defined:
            self._found(found, entry.verdict, f"{describe(fields)}: {entry.note}", *entry.rules)
            return
        if entry.delivers and self.keep:
            self.deliveries.append(_p(fields))
        if packet_id is not None:
            if entry.next == R_FREE:
                self.peer_rx.pop(packet_id, None)
            else:
                self.peer_rx[packet_id] = entry.next


def _p(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``P``'s fields of ``fields``, in ``P``'s order."""
    if type(fields) is dict and tuple(fields) == _P_FIELDS:
        return dict(fields)  # the same copy made in C: every key of P, in P's order
    return {k: fields[k] for k in _P_FIELDS if k in fields}
