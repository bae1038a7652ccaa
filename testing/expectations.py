"""The model's verdict on a sequence of moves: what a server owes after each one.

Rules / theory of operation
---------------------------
:func:`expect` walks a sequence of moves (:class:`~pubproof.testing.moves.Move`) through
the model, without any server: the distribution model
(:class:`~pubproof.model.distribution.DistributionModel`) takes each CONNECT, DISCONNECT
(or lost connection), SUBSCRIBE, UNSUBSCRIBE and PUBLISH, as a server that follows the
texts would, and the wire model (:func:`pubproof.judge.close.expectation`) judges each
invalid move's packet. Each move gets an :class:`Expected`:

- CONNECT: Session Present, as the model says;
- PUBLISH: the answer the publisher is owed (PUBACK for QoS 1, PUBREC for QoS 2), and the
  copies the model owes each client: one copy at the highest QoS of its matching
  subscriptions, with the RETAIN the rules give (a server may instead send one copy per
  matching subscription, [MQTT-3.3.5-1]: the judges accept both);
- SUBSCRIBE: the retained messages the new subscription is owed, and the SUBACK;
- an invalid move: the rule its packet breaks, and whether the server must close the
  connection (MQTT 3.1.1 and 5.0 must; MQTT 3.1 names no receiver action);
- a PUBREL for an identifier nobody uses: PUBCOMP all the same [MQTT-4.3.3-2].

A QoS 2 message is the server's when it sends PUBREC (Method B); a client that withholds
its PUBREL leaves it there. The client ids are ``c0``, ``c1``, ... and the topic names
and filters the moves' leaves under ``t/``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pubproof.judge.close import expectation
from pubproof.model.distribution import DistributionError, DistributionModel
from pubproof.model.editions import Edition, Limits, resolve_readings
from pubproof.model.messages import Publication
from pubproof.model.subscriptions import SubscriptionOptions
from pubproof.testing.moves import Move, MoveKind
from pubproof.testing.world import invalid_packet

PREFIX = "t/"
_ANSWER = {1: ("PUBACK",), 2: ("PUBREC",)}


@dataclass(frozen=True, slots=True, kw_only=True)
class Expected:
    """What the model says a server owes after one move."""

    move: Move
    #: the packets the server answers the move's client with, in order
    answers: tuple[str, ...] = ()
    #: CONNECT: Session Present
    session_present: bool | None = None
    #: the copies owed: (client, QoS, RETAIN), one per client (its highest QoS)
    copies: tuple[tuple[int, int, bool], ...] = ()
    #: an invalid move: the rule its packet breaks, and whether the server must close
    breaks: str | None = None
    closes: bool = False

    def describe(self) -> str:
        """The verdict in a few words."""
        said = []
        if self.session_present is not None:
            said.append(f"Session Present {int(self.session_present)}")
        if self.answers:
            said.append("answered " + ", ".join(self.answers))
        said += [f"c{c} gets a copy at QoS {q}{' RETAIN' if r else ''}"
                 for c, q, r in self.copies]  # fmt: skip
        if self.breaks:
            said.append(f"breaks [{self.breaks}]" + (": the server closes" if self.closes else ""))
        return "; ".join(said) or "nothing owed"


def expect(
    moves: Sequence[Move], edition: Edition, readings: Mapping[str, str] | None = None
) -> tuple[Expected, ...]:
    """The model's verdict on each of ``moves``, in order."""
    resolved = resolve_readings(edition, readings)
    model = DistributionModel(edition, resolved)
    out: list[Expected] = []
    for number, move in enumerate(moves):
        out.append(_one(model, move, number, edition, resolved))
    return tuple(out)


def _client(move: Move) -> str:
    return f"c{move.client}"


def _copies(copies: Sequence[object]) -> tuple[tuple[int, int, bool], ...]:
    """(client, QoS, RETAIN) of each client's copy at its highest QoS."""
    best: dict[int, tuple[int, bool]] = {}
    for copy in copies:
        client = int(str(copy.client_id)[1:])  # type: ignore[attr-defined]
        qos, retain = copy.qos, copy.retain  # type: ignore[attr-defined]
        if client not in best or qos > best[client][0]:
            best[client] = (qos, retain)
    return tuple((c, q, r) for c, (q, r) in sorted(best.items()))


def _one(model: DistributionModel, move: Move, number: int, edition: Edition,
         readings: Mapping[str, str]) -> Expected:  # fmt: skip
    kind, client = move.kind, _client(move)
    try:
        if kind is MoveKind.CONNECT:
            expiry = move.session_expiry if edition is Edition.V50 else 0
            outcome = model.connect(client, clean=move.clean, session_expiry_interval=expiry)
            present = outcome.session_present if edition is not Edition.V31 else None
            return Expected(move=move, answers=("CONNACK",), session_present=present,
                            copies=_copies(outcome.owed))  # fmt: skip
        if kind in (MoveKind.DISCONNECT, MoveKind.DROP):
            model.disconnect(client)
            return Expected(move=move)
        if kind is MoveKind.SUBSCRIBE:
            options = SubscriptionOptions(qos=move.qos)
            subscribed = model.subscribe(client, 1, [(PREFIX + move.topic, options)])
            retained = [c for f in subscribed.filters for c in f.retained]
            return Expected(move=move, answers=("SUBACK",), copies=_copies(retained))
        if kind is MoveKind.UNSUBSCRIBE:
            model.unsubscribe(client, 1, [PREFIX + move.topic])
            return Expected(move=move, answers=("UNSUBACK",))
        if kind is MoveKind.PUBLISH:
            publication = Publication(
                publisher=client, topic=PREFIX + move.topic, payload=f"s{number}".encode(),
                qos=move.qos, retain=move.retain,
            )  # fmt: skip
            published = model.publish(publication)
            return Expected(move=move, answers=_ANSWER.get(move.qos, ()),
                            copies=_copies(published.copies))  # fmt: skip
        if kind is MoveKind.STRAY and move.what == "PUBREL":
            return Expected(move=move, answers=("PUBCOMP",))
        if kind is MoveKind.INVALID:
            limits = Limits(topic_alias_maximum=0) if edition is Edition.V50 else None
            data = invalid_packet(move.what, PREFIX + "a", edition, 0)
            verdict = expectation(data, edition, readings, limits)
            model.disconnect(client)
            return Expected(move=move, closes=verdict.close,
                            breaks=verdict.failure.rule if verdict.failure else None)  # fmt: skip
    except DistributionError:
        pass  # a move the distribution model has nothing to say about in this state
    return Expected(move=move)
