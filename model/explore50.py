"""The MQTT 5.0 flows explored: per-message moves read from the 5.0 tables, an explicit
breadth-first search over worlds of several messages, and the Topic Alias system.

Rules / theory of operation
---------------------------
A message's **local state** (:class:`Local`) is its sender state, receiver state, the
packets of that message in flight each way (in order), its deliveries and two flags for
the claims (the sender has taken an error acknowledgement; something was sent or delivered
after it). Every move of one message reads a table entry of :mod:`pubproof.model.flows50`
(with :class:`Mutations50` applied): a packet reaching the end it travels to, the
connection lost (every channel emptied), a reconnect (the RESUME or CLEAN entries). The
moves of different messages interact only through the send quota (each entry's
``TAKE_QUOTA`` / ``RELEASE_QUOTA``, the quota reset to Receive Maximum at each connection)
and the receiver's count of QoS 2 flows it holds (a new QoS 1 or 2 PUBLISH while it holds
Receive Maximum of them is ``PUBLISH_OVER_RECEIVE_MAXIMUM``: DISCONNECT 0x93).

:func:`local_closure` enumerates every local state one message can reach (finite: a
connection carries at most a few packets of a message, and a loss empties it); the Z3
counter abstraction of :mod:`pubproof.proofs.protocol50_z3` counts messages per local
state, for any number of messages and a symbolic Receive Maximum. :class:`Explorer50`
searches the concrete worlds of a few messages breadth-first, so a broken claim comes with
its shortest trace, which :func:`pubproof.model.replay.replay` judges with the 5.0
sessions.

Topic Alias (:class:`AliasExplorer`): a sender and a receiver of PUBLISH packets on topics
"t1", "t2", the alias tables of :mod:`pubproof.model.topic_alias` at both ends, an in-order
channel, any number of reconnects (each empties the channel).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pubproof.model.flows import Method, ReceiverState, SenderState
from pubproof.model.flows50 import (
    ACTION_CODE,
    UNSPECIFIED_ERROR,
    ReceiverAction50,
    ReceiverInput50,
    SenderAction50,
    SenderInput50,
    Step50,
    receiver_step50,
    sender_step50,
)
from pubproof.model.topic_alias import (
    RECEIVER_ALIAS,
    SENDER_ALIAS,
    AliasIn,
    AliasInAction,
    AliasInInput,
    AliasOut,
    AliasOutAction,
    AliasOutInput,
    AliasStep,
)

SA, SI, RA, RI = SenderAction50, SenderInput50, ReceiverAction50, ReceiverInput50
SS, RS = SenderState, ReceiverState

#: What a packet in flight is, by the input it is at the end it reaches.
TO_RECEIVER = {
    "PUBLISH": None,
    "PUBLISH-DUP": None,
    "PUBREL": RI.PUBREL_OK,
    "PUBREL92": RI.PUBREL_NOT_FOUND,
}
TO_SENDER = {
    "PUBACK": SI.PUBACK_OK, "PUBACK80": SI.PUBACK_ERROR, "PUBREC": SI.PUBREC_OK,
    "PUBREC80": SI.PUBREC_ERROR, "PUBCOMP": SI.PUBCOMP_OK, "PUBCOMP92": SI.PUBCOMP_NOT_FOUND,
}  # fmt: skip
_SENT_BY_RECEIVER = {
    RA.SEND_PUBACK: "PUBACK", RA.SEND_PUBACK_ERROR: "PUBACK80", RA.SEND_PUBREC: "PUBREC",
    RA.SEND_PUBREC_ERROR: "PUBREC80", RA.SEND_PUBCOMP: "PUBCOMP",
    RA.SEND_PUBCOMP_NOT_FOUND: "PUBCOMP92",
}  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class Mutations50:
    """Deliberate departures from the 5.0 tables (and the alias tables)."""

    sender: Mapping[tuple[SenderState, SenderInput50], Step50] = field(default_factory=dict)
    receiver: Mapping[tuple[ReceiverState, ReceiverInput50], Step50] = field(default_factory=dict)
    alias_sender: Mapping[tuple[AliasOut, AliasOutInput], AliasStep] = field(default_factory=dict)


class Local(NamedTuple):
    """One message's state in the joint system."""

    qos: int
    s: SenderState
    r: ReceiverState
    to_r: tuple[str, ...]
    to_s: tuple[str, ...]
    d: int  # deliveries, at most 2 counted
    stored: bool  # held by a Method A receiver
    err: bool  # the sender has processed a PUBACK / PUBREC of 0x80 or more
    late: bool  # a PUBLISH of the message sent after that
    d_after: bool  # the message delivered after that


class Move(NamedTuple):
    """One move of one message: what it is, where it leads, its effect on the quota."""

    label: str  # "publish", "to-receiver", "to-sender", "lost", "resume", "clean"
    packet: str  # the packet taken from a channel ("" for the others)
    refuse: bool  # the receiver refuses a new message
    new_publish: bool  # a new QoS 1 or 2 PUBLISH reaches the receiver (counts for 0x93)
    nxt: Local
    quota: int  # the change of the send quota
    takes_quota: int  # on resume: the units the flow takes again


@dataclass(frozen=True, slots=True)
class Flows50:
    """The 5.0 tables of one configuration, with mutations applied."""

    method: Method = Method.B
    refusals: bool = False  # may the receiving application refuse a message?
    mutations: Mutations50 = field(default_factory=Mutations50)

    def sender(self, state: SenderState, event: SenderInput50) -> Step50 | None:
        step = self.mutations.sender.get((state, event)) or sender_step50(state, event)
        return step if isinstance(step, Step50) else None

    def receiver(self, state: ReceiverState, event: ReceiverInput50) -> Step50 | None:
        step = self.mutations.receiver.get((state, event)) or receiver_step50(
            self.method, state, event
        )
        return step if isinstance(step, Step50) else None

    def alias_sender(self, state: AliasOut, event: AliasOutInput) -> AliasStep:
        return self.mutations.alias_sender.get((state, event)) or SENDER_ALIAS[state, event]

    # -- one message ----------------------------------------------------------------------

    def _sender_effects(self, m: Local, step: Step50) -> tuple[Local, int]:
        to_r, quota, late = m.to_r, 0, m.late
        for action in step.actions:
            if action is SA.TAKE_QUOTA:
                quota -= 1
            elif action is SA.RELEASE_QUOTA:
                quota += 1
            elif action in (SA.SEND_PUBLISH, SA.RESEND_PUBLISH):
                to_r += ("PUBLISH" if action is SA.SEND_PUBLISH else "PUBLISH-DUP",)
                late = late or m.err
            elif action is SA.SEND_PUBREL:
                to_r += ("PUBREL",)
            elif action is SA.SEND_PUBREL_NOT_FOUND:
                to_r += ("PUBREL92",)
        return m._replace(s=step.next, to_r=to_r, late=late), quota  # type: ignore[arg-type]

    def _receiver_effects(self, m: Local, step: Step50) -> Local:
        to_s, d, stored, d_after = m.to_s, m.d, m.stored, m.d_after
        for action in step.actions:
            if action is RA.DELIVER or (action is RA.DELIVER_STORED and stored):
                d, d_after = min(d + 1, 2), d_after or m.err
                stored = False if action is RA.DELIVER_STORED else stored
            elif action is RA.STORE:
                stored = True
            elif action in _SENT_BY_RECEIVER:
                to_s += (_SENT_BY_RECEIVER[action],)
        return m._replace(r=step.next, to_s=to_s, d=d, stored=stored, d_after=d_after)  # type: ignore[arg-type]

    def publish(self, qos: int) -> Move:
        event = SI.PUBLISH_QOS1 if qos == 1 else SI.PUBLISH_QOS2
        step = self.sender(SS.FREE, event)
        assert step is not None
        start = Local(qos, SS.FREE, RS.FREE, (), (), 0, False, False, False, False)
        nxt, quota = self._sender_effects(start, step)
        return Move("publish", "", False, False, nxt, quota, 0)

    def moves(self, m: Local) -> Iterator[Move]:
        """The moves of one message while the connection is up."""
        if m.to_r:
            packet, rest = m.to_r[0], m.to_r[1:]
            taken = m._replace(to_r=rest)
            if packet.startswith("PUBLISH"):
                new = m.r is RS.FREE
                choices = (False, True) if self.refusals else (False,)
                for refuse in choices:
                    accepted = RI.PUBLISH_QOS1 if m.qos == 1 else RI.PUBLISH_QOS2
                    refused = RI.PUBLISH_QOS1_REFUSED if m.qos == 1 else RI.PUBLISH_QOS2_REFUSED
                    step = self.receiver(m.r, refused if refuse else accepted)
                    nxt = taken if step is None else self._receiver_effects(taken, step)
                    yield Move("to-receiver", packet, refuse, new, nxt, 0, 0)
            else:
                step = self.receiver(m.r, TO_RECEIVER[packet])  # type: ignore[arg-type]
                nxt = taken if step is None else self._receiver_effects(taken, step)
                yield Move("to-receiver", packet, False, False, nxt, 0, 0)
        if m.to_s:
            packet, rest = m.to_s[0], m.to_s[1:]
            taken = m._replace(to_s=rest)
            event = TO_SENDER[packet]
            s_step = self.sender(m.s, event)
            if s_step is None:  # undefined: tolerated, ignored
                yield Move("to-sender", packet, False, False, taken, 0, 0)
            else:
                err = m.err or event in (SI.PUBACK_ERROR, SI.PUBREC_ERROR)
                nxt, quota = self._sender_effects(taken._replace(err=err), s_step)
                yield Move("to-sender", packet, False, False, nxt, quota, 0)

    def lost(self, m: Local) -> Local:
        return m._replace(to_r=(), to_s=())

    def reconnect(self, m: Local, *, resume: bool) -> Move:
        s_step = self.sender(m.s, SI.RESUME if resume else SI.CLEAN)
        r_step = self.receiver(m.r, RI.RESUME if resume else RI.CLEAN)
        assert s_step is not None and r_step is not None
        nxt, quota = self._sender_effects(m, s_step)
        nxt = nxt._replace(r=r_step.next, stored=nxt.stored and r_step.next is not RS.FREE)  # type: ignore[arg-type]
        return Move("resume" if resume else "clean", "", False, False, nxt, 0, -quota)


def local_closure(
    flows: Flows50, qos: tuple[int, ...] = (1, 2), *, clean: bool = True
) -> list[Local]:
    """Every local state one message can reach, over any number of connection losses and
    reconnects (resumed, or also clean when ``clean``)."""
    seen: dict[Local, None] = {}
    queue = deque(flows.publish(q).nxt for q in qos)
    while queue:
        m = queue.popleft()
        if m in seen:
            continue
        seen[m] = None
        nexts = [move.nxt for move in flows.moves(m)]
        lost = flows.lost(m)
        nexts += [lost, flows.reconnect(lost, resume=True).nxt]
        if clean:
            nexts.append(flows.reconnect(lost, resume=False).nxt)
        queue.extend(n for n in nexts if n not in seen)
    return list(seen)


# -- the explicit search over several messages ------------------------------------------


class World50(NamedTuple):
    msgs: tuple[Local, ...]  # message i has packet identifier i + 1; channels kept below
    unpublished: tuple[int, ...]  # the QoS of the messages still to publish, in order
    quota: int
    connected: bool
    losses: int
    connection: int
    over: bool  # the receiver had to send DISCONNECT 0x93
    to_r: tuple[tuple[int, str], ...] = ()  # one in-order channel each way: (message, packet)
    to_s: tuple[tuple[int, str], ...] = ()
    rm: int = 1  # the receiver's Receive Maximum
    delivered: tuple[int, ...] = ()  # packet identifiers in delivery order (when tracked)


def unacknowledged(w: World50) -> int:
    """QoS 1 and 2 PUBLISH the sender has not yet seen PUBACK, PUBCOMP or an error for."""
    return sum(m.s is not SS.FREE for m in w.msgs)


def held(w: World50) -> int:
    return sum(m.r is not RS.FREE for m in w.msgs)


_WIRE = {
    "PUBLISH": ("PUBLISH", 0), "PUBLISH-DUP": ("PUBLISH", 0), "PUBREL": ("PUBREL", 0),
    "PUBREL92": ("PUBREL", 0x92),
    "PUBACK": ("PUBACK", 0), "PUBACK80": ("PUBACK", UNSPECIFIED_ERROR),
    "PUBREC": ("PUBREC", 0), "PUBREC80": ("PUBREC", UNSPECIFIED_ERROR),
    "PUBCOMP": ("PUBCOMP", 0), "PUBCOMP92": ("PUBCOMP", ACTION_CODE[RA.SEND_PUBCOMP_NOT_FOUND]),
}  # fmt: skip


def wire_p(packet: str, packet_id: int, qos: int) -> dict[str, Any]:
    """The 5.0 ``P`` of a packet of message ``packet_id`` (topic "t", payload its number)."""
    kind, code = _WIRE[packet]
    if kind == "PUBLISH":
        return {
            "type": "PUBLISH", "dup": packet == "PUBLISH-DUP", "qos": qos, "retain": False,
            "topic": "t",
            "packet_id": packet_id, "payload_hex": f"{packet_id:02x}", "properties": {},
        }  # fmt: skip
    return {"type": kind, "packet_id": packet_id, "reason_code": code, "properties": {}}


@dataclass(frozen=True, slots=True)
class Explorer50:
    """Breadth-first search over the worlds of a few messages with a concrete Receive
    Maximum; each move is a trace entry."""

    flows: Flows50
    qos: tuple[int, ...]
    receive_maximum: int = 1
    disconnects: int = 1
    clean_reconnect: bool = False
    track_deliveries: bool = False  # record the order of deliveries in the worlds

    def initial(self) -> World50:
        return World50(
            (), self.qos, self.receive_maximum, True, 0, 1, False, rm=self.receive_maximum
        )

    def moves(self, w: World50) -> Iterator[tuple[dict[str, Any], World50]]:
        """The moves of a world: the application publishing, the packet at the head of
        either channel reaching its end, the connection lost, a reconnect."""
        if w.over:
            return
        conn = {"conn": w.connection}
        if w.connected and w.unpublished and w.quota > 0:
            move = self.flows.publish(w.unpublished[0])
            index = len(w.msgs)
            yield (
                {"event": "app-publish", "qos": move.nxt.qos, "packet_id": index + 1,
                 "topic": "t", "payload_hex": f"{index + 1:02x}"},
                _put(w._replace(msgs=(*w.msgs, move.nxt), unpublished=w.unpublished[1:],
                                quota=w.quota + move.quota), index),
            )  # fmt: skip
        if w.connected:
            for channel in ("to_r", "to_s"):
                queue: tuple[tuple[int, str], ...] = getattr(w, channel)
                if not queue:
                    continue
                (index, packet), rest = queue[0], queue[1:]
                m = w.msgs[index]
                at = m._replace(to_r=(packet,)) if channel == "to_r" else m._replace(to_s=(packet,))
                for move in self.flows.moves(at):
                    entry = wire_p(move.packet, index + 1, m.qos)
                    entry |= {"dir": move.label, **conn}
                    if move.refuse:
                        entry["refuse"] = UNSPECIFIED_ERROR
                    if move.new_publish and held(w) >= self.receive_maximum:
                        yield entry, w._replace(over=True)
                        continue
                    msgs = (*w.msgs[:index], move.nxt, *w.msgs[index + 1 :])
                    nxt = w._replace(msgs=msgs, quota=w.quota + move.quota)
                    nxt = nxt._replace(to_r=rest) if channel == "to_r" else nxt._replace(to_s=rest)
                    if self.track_deliveries and move.nxt.d > m.d:
                        nxt = nxt._replace(delivered=(*w.delivered, index + 1))
                    yield entry, _put(nxt, index)
            if w.losses < self.disconnects:
                yield (
                    {"event": "connection-lost", **conn},
                    w._replace(connected=False, losses=w.losses + 1, to_r=(), to_s=()),
                )
            return
        for resume in (True, False) if self.clean_reconnect else (True,):
            moves = [self.flows.reconnect(m, resume=resume) for m in w.msgs]
            quota = self.receive_maximum - sum(mv.takes_quota for mv in moves)
            nxt = w._replace(msgs=tuple(mv.nxt for mv in moves), connected=True, quota=quota,
                             connection=w.connection + 1)  # fmt: skip
            for index in range(len(w.msgs)):  # re-sent in the original order [MQTT-4.6.0-1]
                nxt = _put(nxt, index)
            yield {"event": "reconnect", "session": "resumed" if resume else "clean",
                   "conn": w.connection + 1}, nxt  # fmt: skip

    def search(
        self, props: Mapping[str, Callable[[World50], bool]], *, limit: int = 500_000
    ) -> tuple[int, dict[str, list[dict[str, Any]]]]:
        """Every reachable world; the shortest trace to a world breaking each property."""
        start = self.initial()
        parent: dict[World50, tuple[World50, dict[str, Any]] | None] = {start: None}
        queue = deque([start])
        found: dict[str, list[dict[str, Any]]] = {}
        while queue:
            world = queue.popleft()
            for name, holds in props.items():
                if name not in found and not holds(world):
                    found[name] = _trace(parent, world)
            for label, nxt in self.moves(world):
                if nxt not in parent:
                    parent[nxt] = (world, label)
                    if len(parent) > limit:
                        raise RuntimeError(f"more than {limit} worlds")
                    queue.append(nxt)
        return len(parent), found


def quiet_states(flows: Flows50, closure: list[Local]) -> list[Local]:
    """The local states in which a message is quiet on an open connection: reached by a
    move or a resumed reconnect, with nothing of it in flight either way."""
    reached = [move.nxt for m in closure for move in flows.moves(m)]
    reached += [flows.reconnect(flows.lost(m), resume=True).nxt for m in closure]
    return [m for m in reached if not m.to_r and not m.to_s]


def quiet_undelivered(w: World50) -> bool:
    """Every message published, the connection up, nothing in flight, one undelivered."""
    return (
        w.connected and not w.unpublished and not w.to_r and not w.to_s
        and any(m.d == 0 for m in w.msgs)
    )  # fmt: skip


def complete(w: World50) -> bool:
    """Every message published and completed, the connection up, nothing in flight."""
    return (
        w.connected and not w.unpublished and not w.to_r and not w.to_s
        and all(m.s is SS.FREE for m in w.msgs)
    )  # fmt: skip


def lockstep(
    a: Explorer50, b: Explorer50, *, limit: int = 500_000
) -> tuple[int, str, list[dict[str, Any]] | None]:
    """Method A (``a``) and Method B (``b``) receivers on the same run: every move of one
    must be a move of the other with the same packet or event (both answer alike); at
    every pair of worlds A's deliveries are a prefix of B's, neither delivers a message
    twice, and once every message is complete the two sequences are equal. (pairs seen,
    what broke or "", the shortest trace to it)."""
    start = (a.initial(), b.initial())
    parent: dict[tuple[World50, World50], tuple[tuple[World50, World50], dict[str, Any]] | None]
    parent = {start: None}
    queue = deque([start])
    while queue:
        pair = queue.popleft()
        wa, wb = pair
        broke = methods_judge(wa, wb)
        moves_b = list(b.moves(wb))
        for entry, na in a.moves(wa):
            match = [nb for e, nb in moves_b if e == entry]
            if not match:
                broke = broke or f"Method B cannot follow {entry}"
                continue
            for nb in match:
                if (na, nb) not in parent:
                    parent[na, nb] = (pair, entry)
                    queue.append((na, nb))
        if broke:
            return len(parent), broke, _trace(parent, pair)
        if len(parent) > limit:
            raise RuntimeError(f"more than {limit} pairs of worlds")
    return len(parent), "", None


def methods_judge(wa: World50, wb: World50) -> str:
    da, db = wa.delivered, wb.delivered
    if len(set(da)) < len(da) or len(set(db)) < len(db):
        return "a message delivered twice"
    if db[: len(da)] != da:
        return f"A delivered {list(da)}, not a prefix of B's {list(db)}"
    if complete(wa) and complete(wb) and da != db:
        return f"complete, but A delivered {list(da)} and B {list(db)}"
    return ""


def _put(w: World50, index: int) -> World50:
    """Move what message ``index`` just sent from its local state onto the channels."""
    m = w.msgs[index]
    if not m.to_r and not m.to_s:
        return w
    msgs = (*w.msgs[:index], m._replace(to_r=(), to_s=()), *w.msgs[index + 1 :])
    return w._replace(
        msgs=msgs,
        to_r=w.to_r + tuple((index, p) for p in m.to_r),
        to_s=w.to_s + tuple((index, p) for p in m.to_s),
    )


def _trace(
    parent: Mapping[Any, tuple[Any, dict[str, Any]] | None], world: Any
) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    link = parent[world]
    while link is not None:
        previous, label = link
        steps.append(label)
        link = parent[previous]
    return steps[::-1]


# -- Topic Alias -----------------------------------------------------------------------


class AliasWorld(NamedTuple):
    out: tuple[tuple[str, int], ...]  # the sender's map: topic -> alias
    inn: tuple[tuple[int, str], ...]  # the receiver's map: alias -> topic
    channel: tuple[tuple[str, str, int], ...]  # (meant topic, topic sent, alias or 0)
    connected: bool
    connection: int
    bad: str  # "" or what went wrong at the receiver


@dataclass(frozen=True, slots=True)
class AliasExplorer:
    """Sender and receiver of PUBLISH on two topics with the alias tables at both ends."""

    flows: Flows50
    topic_alias_maximum: int = 1
    topics: tuple[str, ...] = ("t1", "t2")
    channel_bound: int = 2
    disconnects: int = 2

    def initial(self) -> AliasWorld:
        return AliasWorld((), (), (), True, 1, "")

    def moves(self, w: AliasWorld) -> Iterator[tuple[dict[str, Any], AliasWorld]]:
        if w.bad:
            return
        conn = {"conn": w.connection}
        if w.connected and len(w.channel) < self.channel_bound:
            for topic in self.topics:
                out = dict(w.out)
                state = AliasOut.ALIASED if topic in out else AliasOut.NONE
                free = len(out) < self.topic_alias_maximum
                event = AliasOutInput.SEND_ALIAS_FREE if free else AliasOutInput.SEND_ALIASES_USED
                step = self.flows.alias_sender(state, event)
                sent, alias = topic, 0
                for action in step.actions:
                    if action is AliasOutAction.ASSIGN:
                        out[topic] = len(out) + 1
                    elif action is AliasOutAction.SEND_TOPIC_AND_ALIAS:
                        alias = out[topic]
                    elif action is AliasOutAction.SEND_ALIAS_ONLY:
                        sent, alias = "", out[topic]
                yield (
                    {"event": "app-publish", "qos": 0, "topic": topic, "payload_hex": ""},
                    w._replace(out=tuple(sorted(out.items())),
                               channel=(*w.channel, (topic, sent, alias))),
                )  # fmt: skip
        if w.connected and w.channel:
            (meant, sent, alias), rest = w.channel[0], w.channel[1:]
            inn = dict(w.inn)
            entry = {
                "type": "PUBLISH", "dup": False, "qos": 0, "retain": False, "topic": sent,
                "packet_id": None, "payload_hex": "",
                "properties": {"topic_alias": alias} if alias else {}, "dir": "to-receiver",
                **conn,
            }  # fmt: skip
            resolved, bad = sent, ""
            if alias:
                a_state = AliasIn.SET if alias in inn else AliasIn.UNSET
                a_event = AliasInInput.TOPIC_AND_ALIAS if sent else AliasInInput.ALIAS_ONLY
                if not 1 <= alias <= self.topic_alias_maximum:
                    a_event = AliasInInput.ALIAS_INVALID
                for action in RECEIVER_ALIAS[a_state, a_event].actions:
                    if action is AliasInAction.SET_MAPPING:
                        inn[alias] = sent
                    elif action is AliasInAction.RESOLVE:
                        resolved = inn[alias]
                    elif action is not AliasInAction.FORGET:
                        bad = "DISCONNECT " + action.name
            if not bad and resolved != meant:
                bad = f"resolved {resolved!r}, the sender meant {meant!r}"
            yield entry, w._replace(inn=tuple(sorted(inn.items())), channel=rest, bad=bad)
        if w.connected and w.connection <= self.disconnects:
            yield {"event": "connection-lost", **conn}, w._replace(connected=False, channel=())
        if not w.connected:
            out = {
                topic: alias
                for topic, alias in w.out
                if self.flows.alias_sender(AliasOut.ALIASED, AliasOutInput.NEW_CONNECTION).next
                is AliasOut.ALIASED
            }
            inn = {
                alias: topic
                for alias, topic in w.inn
                if RECEIVER_ALIAS[AliasIn.SET, AliasInInput.NEW_CONNECTION].next is AliasIn.SET
            }
            yield (
                {"event": "reconnect", "session": "resumed", "conn": w.connection + 1},
                replace_world(w, out, inn),
            )

    def search(self) -> tuple[int, list[dict[str, Any]] | None]:
        start = self.initial()
        parent: dict[AliasWorld, tuple[AliasWorld, dict[str, Any]] | None] = {start: None}
        queue = deque([start])
        while queue:
            world = queue.popleft()
            if world.bad:
                return len(parent), _trace(parent, world)
            for label, nxt in self.moves(world):
                if nxt not in parent:
                    parent[nxt] = (world, label)
                    queue.append(nxt)
        return len(parent), None


def replace_world(w: AliasWorld, out: dict[str, int], inn: dict[int, str]) -> AliasWorld:
    return w._replace(
        out=tuple(sorted(out.items())), inn=tuple(sorted(inn.items())), connected=True,
        connection=w.connection + 1,
    )  # fmt: skip
