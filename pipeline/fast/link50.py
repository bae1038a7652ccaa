"""The compiled twin of the 5.0 link judge (:mod:`pubproof.judge.link50`), for the capture
pipeline's per-packet path.

The same judgement as the readable judge, finding for finding, topic for topic, offence
for offence (``tests/test_judge_twins.py``): Reason Codes, flow control, Topic Aliases,
what the Server declared, re-sending only on a resumed session. The readable module's
docstring says what each of those judges; this one says only how it is made fast
(:mod:`pubproof.pipeline.fast.layout` says why each trick exists):

- the 5.0 tables are read once, at import, into typed entries indexed by a state's
  position in its enum (:mod:`pubproof.pipeline.fast.link50_tables`: ``SENDER50``,
  ``RECEIVER50``, and per input the tables the per-packet path reads), bound again here
  as this module's own ``Final`` names;
- what the two ends declared is read once per CONNECT and CONNACK (:meth:`_negotiate`),
  not once per PUBLISH;
- a PUBLISH is resolved once by :meth:`LinkJudge50.resolve50` and handed to both judges
  of a connection (:class:`~pubproof.pipeline.fast.ends.BothEnds` shares each direction's
  alias map between them), and an acknowledgement or PUBREL goes to the per-kind methods
  without the dispatch of :meth:`peer_sent` and :meth:`judged_sent`;
- the helpers run once per packet are inlined (``_code``, ``topic_alias``, ``_move_rx``,
  ``_pay``, ``_answer``), each copy marked with the helper's name; a received PUBLISH and
  PUBREL share one copy (:meth:`LinkJudge50._answers_owed`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

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
    RESUMED,
    RETAIN_AVAILABLE,
    RETAIN_NOT_SUPPORTED,
    FlowOffence,
    reason_code,
)
from pubproof.judge.describe import P_FIELDS, describe, same_message
from pubproof.judge.findings import TOLERATED, VIOLATION, Finding
from pubproof.judge.limits import DEFAULT, Declared, Negotiated
from pubproof.model.editions import Edition
from pubproof.model.flows50 import SenderInput50 as SI
from pubproof.model.flows50 import is_error
from pubproof.model.topic_alias import ALIAS_ABOVE_MAXIMUM
from pubproof.pipeline.fast import link50_tables as tables
from pubproof.pipeline.fast.aliases import TopicAliases
from pubproof.pipeline.fast.layout import as_dict
from pubproof.pipeline.fast.link import (
    _NOTHING,
    R_FREE,
    S_AWAIT_PUBCOMP,
    S_FREE,
    LinkJudge,
    Owed,
    _Flow,
)
from pubproof.pipeline.fast.link50_tables import ReceiverEntry50

V50 = Edition.V50


#: a PUBLISH with its topic resolved, or (None) the offence its receiver must close for
Resolution = tuple[dict[str, Any] | None, FlowOffence | None]


# -- the 5.0 tables (pipeline.fast.link50_tables), as this module's own Final names (layout)

SENDER50: Final = tables.SENDER50
RECEIVER50: Final = tables.RECEIVER50
_P_FIELDS: Final = P_FIELDS
_TX_PUBLISH: Final = tables.TX_PUBLISH
_TX_ACK: Final = tables.TX_ACK
_RX_PUBLISH: Final = tables.RX_PUBLISH
_RX_REFUSED: Final = tables.RX_REFUSED
_RX_OVER: Final = tables.RX_OVER
_RX_PUBREL: Final = tables.RX_PUBREL
ACKS: Final = tables.ACKS


@dataclass(slots=True)
class _Ended:
    """A flow of the judged end that an error acknowledgement ended."""

    kind: str
    code: int
    message: Mapping[str, Any]


class LinkJudge50(LinkJudge):
    """Feed it the packets of a 5.0 connection in order; it judges the ``judged`` end
    (``server``: whether that end is the server). The interface is
    :class:`~pubproof.judge.link.LinkJudge`'s, plus :attr:`topic`, :attr:`offence` and
    :attr:`negotiated`."""

    __slots__ = (
        "ended",
        "judged_alias_maximum",
        "judged_aliases",
        "judged_quota",
        "judged_receive_maximum",
        "maximum_qos",
        "negotiated",
        "offence",
        "peer_alias_maximum",
        "peer_aliases",
        "peer_quota",
        "peer_receive_maximum",
        "peer_refusable",
        "refusable",
        "retain_available",
        "server",
        "topic",
    )  # fmt: skip

    def __init__(self, label: str, judged: str, *, server: bool, keep: bool = False) -> None:
        super().__init__(label, judged, keep=keep)
        self.server = server
        self.negotiated: Negotiated = DEFAULT
        # what negotiated says, read once per CONNECT and CONNACK (_negotiate) and not
        # once per PUBLISH: Negotiated and Declared are interpreted classes
        self.judged_alias_maximum = self.peer_alias_maximum = 0
        self.judged_receive_maximum = self.peer_receive_maximum = 0
        self.maximum_qos = 2
        self.retain_available = True
        self._negotiate(DEFAULT)
        self.judged_aliases = TopicAliases()  # what the judged end sends, as its peer maps it
        self.peer_aliases = TopicAliases()  # what the peer sends, as the judged end maps it
        self.judged_quota: set[int] = set()  # identifiers holding a unit of the judged end's
        self.peer_quota: set[int] = set()  # ... and of the peer's send quota
        self.ended: dict[int, _Ended] = {}  # the judged end's flows an error ack ended
        self.refusable: dict[int, int] = {}  # packet id -> the judged receiver's prior state
        self.peer_refusable: dict[int, int] = {}  # ... and the model peer's
        #: the resolved topic name of the last PUBLISH fed (None: none, or unresolvable)
        self.topic: str | None = None
        #: set by the last packet fed when its receiver must close (with a Reason Code)
        self.offence: FlowOffence | None = None

    # -- what each end declared ----------------------------------------------------------

    @property
    def judged_receives(self) -> Declared:
        """What the judged end declared about what it receives."""
        return self.negotiated.server if self.server else self.negotiated.client

    @property
    def peer_receives(self) -> Declared:
        """What the peer declared about what it receives."""
        return self.negotiated.client if self.server else self.negotiated.server

    def _negotiate(self, negotiated: Negotiated) -> None:
        """What the two ends declared is now ``negotiated``."""
        self.negotiated = negotiated
        judged, peer = self.judged_receives, self.peer_receives
        # the Topic Alias Maximum that binds what the judged end sends (its peer's), and
        # the one that binds what the peer sends
        self.judged_alias_maximum = peer.topic_alias_maximum
        self.peer_alias_maximum = judged.topic_alias_maximum
        self.judged_receive_maximum = judged.receive_maximum
        self.peer_receive_maximum = peer.receive_maximum
        self.maximum_qos = negotiated.maximum_qos
        self.retain_available = negotiated.retain_available

    # -- connections ---------------------------------------------------------------------

    def _connect50(self, fields: Mapping[str, Any]) -> None:
        self.connections += 1
        self._negotiate(self.negotiated.with_connect(fields))
        if not self.keep:
            # what was owed on the last connection is owed no more (a live peer's judge
            # reports it missing when the probe says the connection closed)
            self.owed.clear()
        self.pending = "clean" if fields.get("clean_start") else "resume"
        # a new Network Connection: the alias maps go [MQTT-3.3.2-7], the send quota
        # starts afresh [MQTT-4.9.0-1]
        self.judged_aliases.reset()
        self.peer_aliases.reset()
        self.judged_quota.clear()
        self.peer_quota.clear()

    def _connack50(self, fields: Mapping[str, Any], found: list[Finding], index: int) -> None:
        self._negotiate(self.negotiated.with_connack(fields))
        pending, self.pending = self.pending, None
        if pending is None or is_error(reason_code(fields)):
            return
        # the table's RESUME only for Clean Start 0 and a session present [MQTT-4.4.0-1]
        resume = pending == "resume" and bool(fields.get("session_present"))
        event = SI.RESUME if resume else SI.CLEAN
        for packet_id, flow in list(self.judged_tx.items()):
            entry = SENDER50[event][flow.state]
            assert entry.defined
            if entry.resends_publish:
                resent = {**flow.message, "dup": True}
                self._owe("PUBLISH", packet_id, self._owed(resent, entry.rules, index, RESUMED))
            if entry.pubrel_code is not None:
                packet = {"type": "PUBREL", "packet_id": packet_id, "reason_code": 0}
                self._owe("PUBREL", packet_id, self._owed(packet, entry.rules, index, RESUMED))
            if entry.takes_quota:
                self.judged_quota.add(packet_id)
            if entry.next == S_FREE:
                del self.judged_tx[packet_id]
            else:
                flow.state = entry.next
        for packet_id, state in list(self.peer_tx.items()):
            entry = SENDER50[event][state]
            if entry.takes_quota:
                self.peer_quota.add(packet_id)
            if entry.next == S_FREE:
                del self.peer_tx[packet_id]
            else:
                self.peer_tx[packet_id] = entry.next
        if not resume:
            # the receivers' CLEAN entries: every identifier free
            self.judged_rx.clear()
            self.peer_rx.clear()
            self.ended.clear()
            self.refusable.clear()
            self.peer_refusable.clear()

    # -- the checks a PUBLISH meets before any flow ----------------------------------------

    def resolve50(self, fields: dict[str, Any], by_judged: bool) -> Resolution:
        """The PUBLISH with its topic resolved, or the offence that makes its receiver
        close (the alias, then what the Server declared); :attr:`topic` is set. Two judges
        of one connection that share the direction's alias map (:class:`~pubproof.judge.
        ends.BothEnds`) resolve a PUBLISH once: the sender's judge (``by_judged``), for
        both."""
        topic = fields.get("topic") or ""
        # topic_alias, inlined: once per PUBLISH
        properties: Any = fields.get("properties")
        alias = as_dict(properties).get("topic_alias") if properties else None
        if alias is None:
            alias = fields.get("topic_alias")
        if type(alias) is not int:
            alias = None
        resolved = topic
        if alias is not None or not topic:
            # the receiver's map and what it declared (peer_receives or judged_receives)
            if by_judged:
                aliases, maximum = self.judged_aliases, self.judged_alias_maximum
            else:
                aliases, maximum = self.peer_aliases, self.peer_alias_maximum
            found, step = aliases.resolve(topic, alias, maximum)
            if found is None:
                self.topic = None
                result = aliases.refusal(topic, alias, maximum, step)
                assert result.reason_code is not None
                return None, FlowOffence(result.rules[0], result.note, result.reason_code)
            resolved = found
        self.topic = resolved
        if by_judged != self.server:  # the client sends: what the Server declared binds it
            qos = fields.get("qos", 0)
            if isinstance(qos, int) and qos > self.maximum_qos:
                note = f"QoS {qos} is above the Server's Maximum QoS {self.maximum_qos}"
                return None, FlowOffence(MAXIMUM_QOS, note, QOS_NOT_SUPPORTED)
            if fields.get("retain") and not self.retain_available:
                note = "RETAIN 1, and the Server declared Retain Available 0"
                return None, FlowOffence(RETAIN_AVAILABLE, note, RETAIN_NOT_SUPPORTED)
        if resolved == topic:
            return fields, None
        return {**fields, "topic": resolved}, None

    def _unanswered(self, fields: dict[str, Any], by_judged: bool) -> None:
        """A QoS 1 or 2 PUBLISH its receiver must close for is still a flow its sender
        started (the table's entry from FREE, with its quota unit): a receiver that answers
        it anyway is then judged by the close judge alone, not also as answering nothing."""
        qos, packet_id = fields.get("qos"), fields.get("packet_id")
        if qos not in (1, 2) or not isinstance(packet_id, int):
            return
        entry = _TX_PUBLISH[qos][S_FREE]
        quota = self.judged_quota if by_judged else self.peer_quota
        if by_judged and packet_id not in self.judged_tx:
            self.judged_tx[packet_id] = _Flow(entry.next, _p(fields))
        elif not by_judged and packet_id not in self.peer_tx:
            self.peer_tx[packet_id] = entry.next
        else:
            return
        if entry.takes_quota:
            quota.add(packet_id)

    def _offence_rules(self, offence: FlowOffence) -> tuple[str, ...]:
        if offence.rule == ALIAS_ABOVE_MAXIMUM:
            # the receiver's bound, and the sender's own MUST NOT
            return (offence.rule, ALIAS_MAX_SERVER if self.server else ALIAS_MAX_CLIENT)
        return (offence.rule,)

    # -- what the peer sent ----------------------------------------------------------------

    def peer_sent(self, kind: str, given: Mapping[str, Any], index: int = 0) -> None:
        """A packet the peer sent the judged end (``given``: the 5.0 ``P`` or a control
        packet's 5.0 description; ``index``: its position in the evidence)."""
        fields = as_dict(given)
        self.offence = None
        if kind == "PUBLISH":
            self.peer_publishes(fields, self.resolve50(fields, by_judged=False), index)
            return
        self.topic = None
        if kind in _TX_ACK:
            self.peer_acks(kind, fields, index)
        elif kind == "PUBREL":
            self.peer_pubrel(fields, index)
        elif kind == "CONNECT":
            self._connect50(fields)
        elif kind == "CONNACK":
            self._connack50(fields, [], index)

    def peer_publishes(self, fields: dict[str, Any], resolution: Resolution, index: int) -> None:
        """The peer sent a PUBLISH: :meth:`peer_sent` with the PUBLISH's ``resolution``
        (:meth:`resolve50`, this judge's or its sharing twin's); sets :attr:`offence`."""
        resolved, offence = resolution
        if resolved is None:
            self.offence = offence
            self._unanswered(fields, by_judged=False)
            return
        qos, packet_id = resolved.get("qos"), resolved.get("packet_id")
        if qos not in (1, 2) or not isinstance(packet_id, int):
            return  # QoS 0 owes nothing and touches no identifier
        judged_rx = self.judged_rx
        state = judged_rx.get(packet_id, R_FREE)
        if state == R_FREE and packet_id not in self.peer_tx:  # a new message
            maximum = self.judged_receive_maximum
            over = len(self.peer_quota) >= maximum
            entry = _TX_PUBLISH[qos][S_FREE]
            self.peer_tx[packet_id] = entry.next
            if entry.takes_quota:
                self.peer_quota.add(packet_id)
            if over:
                # the receiver's table: DISCONNECT 0x93, no acknowledgement
                disconnect = _RX_OVER[state]
                assert disconnect is not None and disconnect.disconnect is not None
                rule = QUOTA_CLIENT if self.server else QUOTA_SERVER
                self.offence = FlowOffence(rule, self._over(maximum), disconnect.disconnect)
                return
        received = _RX_PUBLISH[qos][state]
        assert received is not None
        if not received.defined:
            return  # the judged end's own judgement of its peer: not this judge's
        if qos == 2:
            self.refusable[packet_id] = state
        self._answers_owed(received, packet_id, index, resolved)

    def _answers_owed(
        self, entry: ReceiverEntry50, packet_id: int, index: int, fields: Mapping[str, Any]
    ) -> None:
        """The judged end received a PUBLISH or PUBREL (``fields``) that its receiver's
        table ``entry`` takes: the answers it owes, and its receiver's next state."""
        owed_now = self.owed
        for reply, code in entry.replies:
            # _answer's _NOTHING and _owe, inlined: once per QoS 1 and 2 PUBLISH and PUBREL
            owed = (
                self._answer(reply, packet_id, code, entry, index, fields)
                if self.keep or code
                else _NOTHING
            )
            queue = owed_now.get((reply, packet_id))
            if queue is None:
                owed_now[reply, packet_id] = [owed]
            else:
                queue.append(owed)
        if entry.next == R_FREE:  # _move_rx, inlined
            self.judged_rx.pop(packet_id, None)
        else:
            self.judged_rx[packet_id] = entry.next

    def _answer(
        self,
        reply: str,
        packet_id: int,
        code: int | None,
        entry: ReceiverEntry50,
        index: int,
        why: Mapping[str, Any],
    ) -> Owed:
        """What is kept of an answer owed: its expected Reason Code only when it is one
        to compare (0x92), everything for a live peer."""
        if not self.keep and not code:
            return _NOTHING
        packet = {"type": reply, "packet_id": packet_id, "reason_code": code}
        return self._owed(packet, entry.rules, index, why)

    @staticmethod
    def _over(maximum: int) -> str:
        return (
            f"a new QoS 1 or 2 PUBLISH while {maximum} are unacknowledged, the receiver's "
            "Receive Maximum"
        )

    @staticmethod
    def _move_rx(states: dict[int, int], packet_id: int, nxt: int) -> None:
        if nxt == R_FREE:
            states.pop(packet_id, None)
        else:
            states[packet_id] = nxt

    def peer_pubrel(self, fields: dict[str, Any], index: int) -> None:
        """The peer sent a PUBREL (:meth:`peer_sent`, its dispatch done)."""
        packet_id = fields.get("packet_id")
        assert isinstance(packet_id, int)
        code = fields.get("reason_code")  # _code, inlined
        if not isinstance(code, int):
            code = 0
        # `code != 0 and`: success, most acknowledgements, is no error, and the model's
        # is_error (interpreted, and replaced by a mutation test) is not called for it
        entry = _RX_PUBREL[code != 0 and is_error(code)][self.judged_rx.get(packet_id, R_FREE)]
        assert entry is not None and entry.defined
        self._answers_owed(entry, packet_id, index, fields)

    def peer_acks(self, kind: str, fields: dict[str, Any], index: int) -> None:
        """The peer sent a PUBACK, PUBREC or PUBCOMP (:meth:`peer_sent`, its dispatch
        done)."""
        packet_id = fields.get("packet_id")
        assert isinstance(packet_id, int)
        code = fields.get("reason_code")  # _code, inlined: once per acknowledgement
        if not isinstance(code, int):
            code = 0
        error = code != 0 and is_error(code)  # success is no error (see peer_pubrel)
        flow = self.judged_tx.get(packet_id)
        entry = _TX_ACK[kind][error][S_FREE if flow is None else flow.state]
        if error and kind != "PUBCOMP":
            self._refused50(kind, packet_id, self.peer_rx, self.peer_refusable)
        if not entry.defined:
            return
        if entry.pubrel_code is not None:
            # PUBREL 0x00 after a PUBREC below 0x80; 0x92 to a PUBREC for no flow
            packet = {"type": "PUBREL", "packet_id": packet_id, "reason_code": entry.pubrel_code}
            # why it is owed: kept for a live peer only (_owed)
            why = f"the answer to {kind} 0x{code:02X}" if self.keep else ""
            self._owe("PUBREL", packet_id, self._owed(packet, entry.rules, index, why))
        if entry.releases_quota:
            self.judged_quota.discard(packet_id)
        if flow is None:
            return
        if entry.next == S_FREE:
            del self.judged_tx[packet_id]
            if error and kind != "PUBCOMP":
                # [MQTT-4.4.0-2] "treated as acknowledged, and MUST NOT be retransmitted"
                self.ended[packet_id] = _Ended(kind, code, flow.message)
        else:
            flow.state = entry.next

    # -- what the judged end sent ------------------------------------------------------------

    def judged_sent(
        self, kind: str, given: Mapping[str, Any], found: list[Finding], index: int = 0
    ) -> None:
        """A packet the judged end sent its peer; findings about it go to ``found``."""
        fields = as_dict(given)
        self.offence = None
        if kind == "PUBLISH":
            self.judged_publishes(fields, self.resolve50(fields, by_judged=True), found)
            return
        self.topic = None
        if kind in _TX_ACK:
            self.judged_acks(kind, fields, found)
        elif kind == "PUBREL":
            self.judged_pubrel(fields, found)
        elif kind == "CONNECT":
            self._connect50(fields)
        elif kind == "CONNACK":
            self._connack50(fields, found, index)

    def judged_publishes(
        self, fields: dict[str, Any], resolution: Resolution, found: list[Finding]
    ) -> None:
        """The judged end sent a PUBLISH: :meth:`judged_sent` with its ``resolution``
        (:meth:`resolve50`); sets :attr:`offence`."""
        resolved, offence = resolution
        if resolved is None:
            assert offence is not None
            self.offence = offence
            what = describe({**fields, "topic": self.topic or fields.get("topic") or "(no topic)"})
            rules = self._offence_rules(offence)
            self._found(found, VIOLATION, f"{what}: {offence.message}", *rules)
            self._unanswered(fields, by_judged=True)
            return
        qos, packet_id = resolved["qos"], resolved.get("packet_id")
        over = False
        if qos in (1, 2) and isinstance(packet_id, int):
            over = self._judged_flow50(resolved, packet_id, found)
        self._peer_receives50(resolved, packet_id, over, found)

    def _about(
        self, found: list[Finding], verdict: str, fields: Mapping[str, Any], note: str, *rules: str
    ) -> None:
        """A finding about the PUBLISH ``fields``, described only now (a finding is rare)."""
        self._found(found, verdict, f"{describe(fields)}: {note}", *rules)

    def _judged_flow50(self, fields: dict[str, Any], packet_id: int, found: list[Finding]) -> bool:
        """The judged end's flow on ``packet_id``; True when this PUBLISH is beyond the
        peer's Receive Maximum."""
        # _pay, its look-up first: a re-send owed is rare
        resent = self._pay("PUBLISH", packet_id) if ("PUBLISH", packet_id) in self.owed else None
        if resent is not None:
            assert resent.packet is not None
            if not fields["dup"]:
                self._about(found, VIOLATION, fields, "re-sent with DUP 0", RESENT_DUP50)
            if not same_message(fields, resent.packet):
                self._about(found, VIOLATION, fields, "the re-send is not the original", RESEND50)
            return False
        flow = self.judged_tx.get(packet_id)
        if flow is not None:
            if not same_message(fields, flow.message):
                entry = _TX_PUBLISH[fields["qos"]][flow.state]
                note = entry.note or "a new message on a packet identifier still in use"
                self._about(found, entry.verdict or VIOLATION, fields, note, *entry.rules)
                flow.message = _p(fields)
            elif flow.state == S_AWAIT_PUBCOMP:
                note = "the PUBLISH re-sent after its PUBREL"
                self._about(found, VIOLATION, fields, note, NO_PUBLISH_AFTER_PUBREL)
            else:
                # [MQTT-4.4.0-1] "Clients and Servers MUST NOT resend messages at any other
                # time" than on a resumed session
                note = "re-sent on the same connection" + ("" if fields["dup"] else ", DUP 0")
                rules = (RESEND50,) if fields["dup"] else (RESEND50, RESENT_DUP50)
                self._about(found, VIOLATION, fields, note, *rules)
            return False
        ended = self.ended.pop(packet_id, None) if self.ended else None
        if ended is not None and fields["dup"] and same_message(fields, ended.message):
            note = (
                f"re-sent after {ended.kind} 0x{ended.code:02X}, which acknowledged it "
                "(an error acknowledgement ends the flow)"
            )
            self._about(found, VIOLATION, fields, note, NOT_AFTER_ERROR)
        entry = _TX_PUBLISH[fields["qos"]][S_FREE]
        assert entry.defined
        over = False
        if entry.takes_quota:
            maximum = self.peer_receive_maximum
            if len(self.judged_quota) >= maximum:
                over = True
                rule = QUOTA_SERVER if self.server else QUOTA_CLIENT
                self._about(found, VIOLATION, fields, self._over(maximum), rule, QUOTA_ZERO)
                disconnect = _RX_OVER[R_FREE]
                assert disconnect is not None and disconnect.disconnect is not None
                self.offence = FlowOffence(rule, self._over(maximum), disconnect.disconnect)
            self.judged_quota.add(packet_id)
        self.judged_tx[packet_id] = _Flow(entry.next, _p(fields))
        return over

    def _peer_receives50(
        self, fields: dict[str, Any], packet_id: int | None, over: bool, found: list[Finding]
    ) -> None:
        """The model peer receives what the judged end sent (deliveries, its verdicts)."""
        qos = fields["qos"]
        state = R_FREE if qos == 0 or packet_id is None else self.peer_rx.get(packet_id, R_FREE)
        if over and state == R_FREE:
            return  # the peer answers DISCONNECT 0x93: nothing delivered, no state
        entry = _RX_PUBLISH[qos][state]
        assert entry is not None
        if not entry.defined:
            self._found(found, entry.verdict, f"{describe(fields)}: {entry.note}", *entry.rules)
            return
        if entry.delivers and self.keep:
            delivered = _p(fields)
            properties = dict(fields.get("properties") or {})
            properties.pop("topic_alias", None)
            delivered["properties"] = properties
            self.deliveries.append(delivered)
        if packet_id is not None and qos:
            if qos == 2:
                self.peer_refusable[packet_id] = state
            if entry.next == R_FREE:  # _move_rx, inlined
                self.peer_rx.pop(packet_id, None)
            else:
                self.peer_rx[packet_id] = entry.next

    def judged_pubrel(self, fields: dict[str, Any], found: list[Finding]) -> None:
        """The judged end sent a PUBREL (:meth:`judged_sent`, its dispatch done)."""
        packet_id = fields.get("packet_id")
        assert isinstance(packet_id, int)
        code = fields.get("reason_code")  # _code, inlined
        if not isinstance(code, int):
            code = 0
        if self._pay("PUBREL", packet_id) is None:
            flow = self.judged_tx.get(packet_id)
            what = f"PUBREL {packet_id}"
            ended = self.ended.get(packet_id)
            if flow is None and ended is not None and ended.kind == "PUBREC":
                note = (
                    f"after PUBREC 0x{ended.code:02X}, which ended the flow (PUBREL only "
                    "after a PUBREC below 0x80)"
                )
                self._found(found, VIOLATION, f"{what} {note}", PUBREL_ON_PUBREC, NOT_AFTER_ERROR)
            elif flow is None:
                note = "for a packet identifier with no flow in progress (answered PUBCOMP 0x92)"
                self._found(found, TOLERATED, f"{what} {note}", PUBCOMP_FOR_PUBREL)
            elif flow.state == S_AWAIT_PUBCOMP:
                note = "again: a re-send on the same connection"
                self._found(found, VIOLATION, f"{what} {note}", RESEND50)
            else:
                note = "before the PUBREC (PUBREL only after a PUBREC below 0x80)"
                self._found(found, VIOLATION, f"{what} {note}", PUBREL_ON_PUBREC)
        state = self.peer_rx.get(packet_id, R_FREE)
        entry = _RX_PUBREL[code != 0 and is_error(code)][state]  # see peer_pubrel
        assert entry is not None and entry.defined
        self._move_rx(self.peer_rx, packet_id, entry.next)

    def judged_acks(self, kind: str, fields: dict[str, Any], found: list[Finding]) -> None:
        """The judged end sent a PUBACK, PUBREC or PUBCOMP (:meth:`judged_sent`, its
        dispatch done)."""
        packet_id = fields.get("packet_id")
        assert isinstance(packet_id, int)
        code = fields.get("reason_code")  # _code, inlined: once per acknowledgement
        if not isinstance(code, int):
            code = 0
        error = code != 0 and is_error(code)  # success is no error (see peer_pubrel)
        # _pay, inlined: once per acknowledgement
        owed: Owed | None = None
        queue = self.owed.get((kind, packet_id))
        if queue:
            owed = queue.pop(0)
            if not queue:
                del self.owed[kind, packet_id]
        if owed is not None:
            expected = owed.packet.get("reason_code") if owed.packet is not None else None
            if kind == "PUBCOMP" and expected is not None and is_error(expected) and not error:
                note = (
                    f"0x{code:02X} for a PUBREL whose identifier it did not hold (the model "
                    f"answers 0x{expected:02X}, Packet Identifier not found)"
                )
                self._found(
                    found, TOLERATED, f"PUBCOMP {packet_id}: {note}", PUBCOMP_FOR_PUBREL,
                    PUBCOMP_REASON,
                )  # fmt: skip
            if error and kind in ("PUBACK", "PUBREC"):
                self._refused50(kind, packet_id, self.judged_rx, self.refusable)
        peer_tx = self.peer_tx
        entry = _TX_ACK[kind][error][peer_tx.get(packet_id, S_FREE)]
        if entry.defined:
            if entry.releases_quota:
                self.peer_quota.discard(packet_id)
            if entry.next == S_FREE:
                peer_tx.pop(packet_id, None)
            else:
                peer_tx[packet_id] = entry.next
        elif owed is None:
            self._found(
                found, entry.verdict, f"{kind} {packet_id} 0x{code:02X}: {entry.note}",
                *entry.rules,
            )  # fmt: skip

    def _refused50(
        self, kind: str, packet_id: int, states: dict[int, int], before: dict[int, int]
    ) -> None:
        """A receiver refused a new message (an error PUBACK or PUBREC): the table's
        REFUSED entry from the state before it (``states``: that receiver's, ``before``:
        its state when the PUBLISH came)."""
        qos = 1 if kind == "PUBACK" else 2
        entry = _RX_REFUSED[qos][before.pop(packet_id, R_FREE)]
        if entry is not None and entry.defined:
            self._move_rx(states, packet_id, entry.next)


def _p(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``P``'s fields of ``fields``, in ``P``'s order (a 5.0 PUBLISH's
    ``properties`` left out)."""
    if type(fields) is dict and tuple(fields) == _P50_ORDER:
        # the capture pipeline's 5.0 P: every key of P, in P's order, with its properties
        # between the packet identifier and the payload; the same copy made in C
        copy = dict(fields)
        del copy["properties"]
        return copy
    return {k: fields[k] for k in _P_FIELDS if k in fields}


#: the keys of a 5.0 PUBLISH's ``P`` as the capture pipeline builds it
_P50_ORDER: Final = (*P_FIELDS[:-1], "properties", P_FIELDS[-1])


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
