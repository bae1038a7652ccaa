"""An explicit-state explorer of one sender, one receiver and the network between them.

It composes the transition tables of :mod:`pubproof.model.flows` with an environment whose
assumptions are parameters (how many messages at which QoS, how many packet identifiers,
how often the connection may be lost, whether reconnects resume the session, whether the
channel may reorder or duplicate), and searches every reachable world breadth-first. A
property that fails comes back with the shortest trace that breaks it, as packets and
events (the trace format of ``pubproof decode`` with ``dir``, ``conn`` and ``event``).

This is the second engine beside Z3: bounded (it proves nothing beyond its bounds), but
independent of the Z3 encoding, and it reads the same tables.

Environment rules: packets travel in per-direction channels. With ``reorder=False`` a
channel is first-in first-out (TCP). Losing the connection loses every packet in flight
in both directions; the next connection resumes the session or starts a clean one. The
sender re-sends on a resumed session as its table says; the receiver sends nothing
unprompted.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, cast

from pubproof.model.flows import (
    SA,
    SI,
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

RA = ReceiverAction
RI = ReceiverInput

# A packet in flight: (kind, packet identifier, message number, dup)
Packet = tuple[str, int, int, bool]


@dataclass(frozen=True, slots=True, kw_only=True)
class Environment:
    """The assumptions under which the flows are explored."""

    qos: tuple[int, ...] = (2,)  # one entry per application message, in publish order
    packet_ids: int = 2  # how many identifiers the sender may use (1 forces reuse)
    # how often the connection may be lost; None: any number of times (the worlds then do
    # not count losses or number connections, so that a finite system stays finite)
    disconnects: int | None = 1
    clean_reconnect: bool = False  # may a reconnect start a clean session?
    reorder: bool = False  # may a channel deliver out of order?
    duplicate: bool = False  # may a channel deliver a packet twice?
    method: Method = Method.B


@dataclass(frozen=True, slots=True, kw_only=True)
class Mutations:
    """Deliberate departures from the tables, to show that a property depends on them."""

    sender: Mapping[tuple[SenderState, SenderInput], Step] = field(default_factory=dict)
    receiver: Mapping[tuple[ReceiverState, ReceiverInput], Step] = field(default_factory=dict)
    reuse_ids_early: bool = False  # allocate identifiers still awaiting PUBCOMP
    resend_reversed: bool = False  # on resume, re-send newest first (breaks [MQTT-4.6.0-1])


@dataclass(frozen=True, slots=True)
class World:
    published: int  # how many application messages have been handed to the sender
    sender: tuple[tuple[int, SenderState, int, bool], ...]  # (id, state, msg, pubrec seen)
    receiver: tuple[tuple[int, ReceiverState, int], ...]  # (id, state, stored msg or 0)
    to_receiver: tuple[Packet, ...]
    to_sender: tuple[Packet, ...]
    connected: bool
    connection: int
    losses: int
    delivered: tuple[int, ...]
    completed: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Finding:
    """A property that failed, with the shortest trace to it."""

    prop: str
    trace: list[dict[str, Any]]
    world: World


def _entry_order(entry: tuple[int, SenderState, int, bool]) -> tuple[int, int]:
    # sending order (message number), which is also the re-send order [MQTT-4.6.0-1]
    return entry[2], entry[0]


def initial() -> World:
    return World(0, (), (), (), (), True, 1, 0, (), ())


def _message(msg: int) -> dict[str, str]:
    """Message ``msg`` of a world: topic "t", its number as the payload."""
    return {"topic": "t", "payload_hex": f"{msg:02x}"}


def _p(kind: str, packet_id: int, msg: int, dup: bool, qos: int) -> dict[str, Any]:
    if kind == "PUBLISH":
        message = _message(msg)
        return {
            "type": "PUBLISH",
            "dup": dup,
            "qos": qos,
            "retain": False,
            "topic": message["topic"],
            "packet_id": packet_id,
            "payload_hex": message["payload_hex"],
        }
    return {"type": kind, "packet_id": packet_id}


class Explorer:
    """Breadth-first search over the worlds an environment allows."""

    def __init__(self, env: Environment, mutations: Mutations | None = None) -> None:
        self.env = env
        self.mut = mutations or Mutations()

    # -- the two ends, read from the tables ------------------------------------------

    def sender_rule(self, state: SenderState, event: SenderInput) -> Step | None:
        step = self.mut.sender.get((state, event))
        if step is None:
            found = sender_step(state, event)
            return found if isinstance(found, Step) else None
        return step

    def holds_identifier(self, state: SenderState) -> bool:
        """Whether a message in this sender state keeps its packet identifier in use, so
        that the allocator must not hand it out [MQTT-2.3.1-2] (freed only on PUBACK or
        PUBCOMP [MQTT-2.3.1-3])."""
        if self.mut.reuse_ids_early:
            return state in (SenderState.AWAIT_PUBACK, SenderState.AWAIT_PUBREC)
        return state is not SenderState.FREE

    def receiver_rule(self, state: ReceiverState, event: ReceiverInput) -> Step | None:
        step = self.mut.receiver.get((state, event))
        if step is None:
            found = receiver_step(self.env.method, state, event)
            return found if isinstance(found, Step) else None
        return step

    # -- moves ------------------------------------------------------------------------

    def moves(self, w: World) -> Iterator[tuple[dict[str, Any], World]]:
        env = self.env
        # the application publishes its next message
        if w.published < len(env.qos) and w.connected:
            yield from self._publish(w)
        # a packet arrives at the receiver / at the sender
        for index in self._deliverable(w.to_receiver):
            yield from self._at_receiver(w, index)
        for index in self._deliverable(w.to_sender):
            yield from self._at_sender(w, index)
        # the connection is lost; and the client reconnects
        unbounded = env.disconnects is None
        if w.connected and (unbounded or w.losses < env.disconnects):  # type: ignore[operator]
            losses = w.losses if unbounded else w.losses + 1
            lost = replace(w, to_receiver=(), to_sender=(), connected=False, losses=losses)
            yield {"event": "connection-lost", "conn": w.connection}, lost
            if env.reorder:
                # A network that reorders may also deliver a packet of the old connection
                # after packets of the new one.
                late = replace(w, connected=False, losses=losses)
                yield (
                    {"event": "connection-lost", "conn": w.connection, "in-flight": "delayed"},
                    late,
                )
        if not w.connected:
            yield from self._reconnect(w, resume=True)
            if env.clean_reconnect:
                yield from self._reconnect(w, resume=False)

    def _deliverable(self, channel: tuple[Packet, ...]) -> range:
        if not channel:
            return range(0)
        return range(len(channel)) if self.env.reorder else range(1)

    def _take(self, channel: tuple[Packet, ...], index: int) -> tuple[Packet, ...]:
        if self.env.duplicate:
            return channel  # the packet may arrive again later
        return channel[:index] + channel[index + 1 :]

    def _publish(self, w: World) -> Iterator[tuple[dict[str, Any], World]]:
        msg = w.published + 1
        qos = self.env.qos[msg - 1]
        if qos == 0:
            packet: Packet = ("PUBLISH", 0, msg, False)
            yield (
                {"event": "app-publish", "msg": msg, "qos": 0, **_message(msg)},
                replace(w, published=msg, to_receiver=(*w.to_receiver, packet)),
            )
            return
        in_use = {entry[0] for entry in w.sender if self.holds_identifier(entry[1])}
        free = [i for i in range(1, self.env.packet_ids + 1) if i not in in_use]
        if not free:
            return  # the application waits for an identifier
        packet_id = free[0]
        event = SI.PUBLISH_QOS1 if qos == 1 else SI.PUBLISH_QOS2
        step = self.sender_rule(SenderState.FREE, event)
        assert step is not None
        # The new entry goes beside any old one, so that a faulty allocation shows up as
        # two in-flight messages with one identifier rather than being hidden.
        sender = (*w.sender, (packet_id, cast(SenderState, step.next), msg, False))
        sent = self._sends(step.actions, packet_id, msg)  # type: ignore[arg-type]
        yield (
            {
                "event": "app-publish",
                "msg": msg,
                "qos": qos,
                "packet_id": packet_id,
                **_message(msg),
            },
            replace(
                w,
                published=msg,
                sender=tuple(sorted(sender, key=_entry_order)),
                to_receiver=w.to_receiver + sent,
            ),
        )

    def _sends(
        self, actions: tuple[SenderAction, ...], packet_id: int, msg: int
    ) -> tuple[Packet, ...]:
        out: list[Packet] = []
        for action in actions:
            if action is SA.SEND_PUBLISH:
                out.append(("PUBLISH", packet_id, msg, False))
            elif action is SA.RESEND_PUBLISH:
                out.append(("PUBLISH", packet_id, msg, True))
            elif action is SA.SEND_PUBREL:
                out.append(("PUBREL", packet_id, msg, False))
        return tuple(out)

    def _qos_of(self, msg: int) -> int:
        return self.env.qos[msg - 1]

    def _at_receiver(self, w: World, index: int) -> Iterator[tuple[dict[str, Any], World]]:
        kind, packet_id, msg, dup = w.to_receiver[index]
        seen = {
            "dir": "to-receiver",
            "conn": w.connection,
            **_p(kind, packet_id, msg, dup, self._qos_of(msg)),
        }
        rest = self._take(w.to_receiver, index)
        if kind == "PUBLISH":
            event = (RI.PUBLISH_QOS0, RI.PUBLISH_QOS1, RI.PUBLISH_QOS2)[self._qos_of(msg)]
        else:
            event = RI.PUBREL
        states = {e[0]: e for e in w.receiver}
        current = states.get(packet_id, (packet_id, ReceiverState.FREE, 0))
        if event is RI.PUBLISH_QOS0:
            current = (0, ReceiverState.FREE, 0)
        step = self.receiver_rule(current[1], event)
        if step is None:
            yield seen, replace(w, to_receiver=rest)  # judged a violation; nothing else happens
            return
        delivered, stored = w.delivered, current[2]
        replies: list[Packet] = []
        for action in step.actions:
            if action is RA.DELIVER:
                delivered = (*delivered, msg)
            elif action is RA.STORE:
                stored = msg
            elif action is RA.DELIVER_STORED:
                delivered = (*delivered, stored)
                stored = 0
            elif action is RA.SEND_PUBACK:
                replies.append(("PUBACK", packet_id, msg, False))
            elif action is RA.SEND_PUBREC:
                replies.append(("PUBREC", packet_id, msg, False))
            elif action is RA.SEND_PUBCOMP:
                replies.append(("PUBCOMP", packet_id, msg, False))
        receiver = {k: v for k, v in states.items() if k != packet_id}
        if event is not RI.PUBLISH_QOS0 and step.next is not ReceiverState.FREE:
            receiver[packet_id] = (packet_id, step.next, stored)  # type: ignore[assignment]
        elif event is RI.PUBLISH_QOS0 and packet_id in states:
            receiver[packet_id] = states[packet_id]
        yield (
            seen,
            replace(
                w,
                to_receiver=rest,
                receiver=tuple(sorted(receiver.values())),
                to_sender=w.to_sender + tuple(replies),
                delivered=delivered,
            ),
        )

    def _at_sender(self, w: World, index: int) -> Iterator[tuple[dict[str, Any], World]]:
        kind, packet_id, msg, _ = w.to_sender[index]
        seen = {"dir": "to-sender", "conn": w.connection, **_p(kind, packet_id, msg, False, 0)}
        rest = self._take(w.to_sender, index)
        event = {"PUBACK": SI.PUBACK, "PUBREC": SI.PUBREC, "PUBCOMP": SI.PUBCOMP}[kind]
        states = {e[0]: e for e in w.sender}
        current = states.get(packet_id, (packet_id, SenderState.FREE, 0, False))
        step = self.sender_rule(current[1], event)
        if step is None:
            yield seen, replace(w, to_sender=rest)  # tolerated: ignored
            return
        completed = w.completed
        if SA.COMPLETE in step.actions:
            completed = (*completed, current[2])
        sent = self._sends(step.actions, packet_id, current[2])  # type: ignore[arg-type]
        sender = {k: v for k, v in states.items() if k != packet_id}
        if step.next is not SenderState.FREE:
            pubrec_seen = current[3] or event is SI.PUBREC
            sender[packet_id] = (packet_id, step.next, current[2], pubrec_seen)  # type: ignore[assignment]
        yield (
            seen,
            replace(
                w,
                to_sender=rest,
                sender=tuple(sorted(sender.values(), key=_entry_order)),
                to_receiver=w.to_receiver + sent,
                completed=completed,
            ),
        )

    def _reconnect(self, w: World, *, resume: bool) -> Iterator[tuple[dict[str, Any], World]]:
        event = SI.RESUME if resume else SI.CLEAN
        sent: tuple[Packet, ...] = ()
        sender = []
        # original sending order [MQTT-4.6.0-1]
        in_order = reversed(w.sender) if self.mut.resend_reversed else w.sender
        for packet_id, state, msg, pubrec_seen in in_order:
            step = self.sender_rule(state, event)
            assert step is not None
            sent += self._sends(step.actions, packet_id, msg)  # type: ignore[arg-type]
            if step.next is not SenderState.FREE:
                sender.append((packet_id, cast(SenderState, step.next), msg, pubrec_seen))
        sender.sort(key=_entry_order)
        receiver = w.receiver if resume else ()
        delayed = w.to_receiver if self.env.reorder else ()
        yield (
            {
                "event": "reconnect",
                "conn": w.connection + 1,
                "session": "resumed" if resume else "clean",
            },
            replace(
                w,
                connected=True,
                connection=w.connection if self.env.disconnects is None else w.connection + 1,
                sender=tuple(sender),
                receiver=receiver,
                to_receiver=delayed + sent,
                to_sender=w.to_sender if self.env.reorder else (),
            ),
        )

    # -- search -----------------------------------------------------------------------

    def search(
        self,
        props: Mapping[str, Callable[[World], bool]],
        *,
        max_depth: int | None = 40,
        limit: int = 2_000_000,
    ) -> tuple[int, list[Finding], set[World]]:
        """Every world reachable in ``max_depth`` steps; the first (so shortest) trace to a
        world breaking each property."""
        start = initial()
        parent: dict[World, tuple[World, dict[str, Any]] | None] = {start: None}
        queue = deque([(start, 0)])
        findings: dict[str, Finding] = {}
        while queue:
            world, depth = queue.popleft()
            for name, holds in props.items():
                if name not in findings and not holds(world):
                    findings[name] = Finding(name, self._trace(parent, world), world)
            if max_depth is not None and depth >= max_depth:
                continue
            for label, nxt in self.moves(world):
                if nxt not in parent:
                    parent[nxt] = (world, label)
                    if len(parent) > limit:
                        raise RuntimeError(f"more than {limit} worlds: tighten the environment")
                    queue.append((nxt, depth + 1))
        return len(parent), list(findings.values()), set(parent)

    @staticmethod
    def _trace(
        parent: Mapping[World, tuple[World, dict[str, Any]] | None], world: World
    ) -> list[dict[str, Any]]:
        steps: list[dict[str, Any]] = []
        link = parent[world]
        while link is not None:
            previous, label = link
            steps.append(label)
            link = parent[previous]
        return steps[::-1]


# -- properties ---------------------------------------------------------------------


def at_most_once(w: World) -> bool:
    """No message reaches the application twice."""
    return len(set(w.delivered)) == len(w.delivered)


def at_least_once(w: World) -> bool:
    """A message the sender has completed (and so discarded) was delivered."""
    return all(msg in w.delivered for msg in w.completed)


def delivered_when_quiet(qos: tuple[int, ...]) -> Callable[[World], bool]:
    """Once the connection is up and nothing is in flight, every published QoS 1 or 2
    message has reached the application (at least once, as a state property)."""

    def holds(w: World) -> bool:
        if not w.connected or w.to_receiver or w.to_sender:
            return True
        return all(msg in w.delivered for msg in range(1, w.published + 1) if qos[msg - 1] > 0)

    return holds


def exactly_once(w: World) -> bool:
    return at_most_once(w) and at_least_once(w)


def pubrel_after_pubrec(w: World) -> bool:
    """A PUBREL is in flight only for a message whose PUBREC the sender has seen."""
    awaiting_comp = {(e[0], e[2]) for e in w.sender if e[1] is SenderState.AWAIT_PUBCOMP and e[3]}
    for kind, packet_id, msg, _ in w.to_receiver:
        if kind == "PUBREL" and (packet_id, msg) not in awaiting_comp and msg not in w.completed:
            return False
    return True


def unique_ids(w: World) -> bool:
    """Never two in-flight messages with one packet identifier."""
    ids = [e[0] for e in w.sender]
    return len(ids) == len(set(ids))


def quiescent_deliveries(explorer: Explorer, worlds: set[World]) -> set[tuple[int, ...]]:
    """What the application has seen in every world where all messages are complete."""
    total = len(explorer.env.qos)
    return {w.delivered for w in worlds if len(w.completed) == total and not w.sender}
