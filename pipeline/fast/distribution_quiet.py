"""The fast twin's quiet points: where, in a topic the twin gives up on, the readable judge
can take the topic over with the twin's state carried over as rows.

Rules / theory of operation
---------------------------
Where the twin (:mod:`.distribution`) gives up on a topic, it reads the topic again,
recording before each PUBLISH in that no other PUBLISH in waits to be taken whether all
the topic's state can be carried over to a judge starting there, and what must be
(:func:`carried`). The stage cuts the topic at the last such point before the twin gave up
(:mod:`pubproof.pipeline.handback`, whose rules these are): the twin's ledger before the
cut, the readable judge's from it, fed the rows of the messages carried over.

What is carried over is rows, so only state a message's rows make again can be: the
retained message, and each message with a copy owed or a flow open (a copy not
acknowledged, a QoS 2 message before its PUBREL). A flow open of no message followed (a
copy of a message no PUBLISH showed, a wrong answer's) is not, nor a flow left open by a
session that ended (the twin checks those itself: its ``lingering`` and ``orphans``): no
quiet point then. A copy owed after a later message of the same order was sent (the order
of 4.6 proves it missing) is carried over with the latest such message, whose copy proves
it (the hand-back's rule 5).
"""

from __future__ import annotations

from pubproof.pipeline.fast.distribution_state import Message, Session


def carried(
    sessions: dict[str, Session],
    retained: Message | None,
    latest: dict[tuple[str, str, int, int], int],
    messages: list[Message],
) -> list[int] | None:
    """The messages a judge starting now must be given (their PUBLISH in's rows, in
    order), or None where some state could not be carried over. ``latest``: the latest
    message (its place in ``messages``, from 1) sent of each order (client, publisher,
    QoS of the message, QoS of the copy)."""
    rows: set[int] = set()
    if retained is not None:
        rows.add(retained.row)
    for session in sessions.values():
        if session.inbound:
            return None
        outbound = session.outbound
        for packet_id in session.unacknowledged:
            if packet_id not in outbound:
                return None
        for packet_id in session.awaiting:
            if packet_id not in outbound:
                return None
        for owed in outbound.values():
            rows.add(owed.message.row)
        for message in session.unreleased.values():
            rows.add(message.row)
        for owed in session.pending:
            message = owed.message
            key = (session.client, message.publisher, message.qos, owed.qos)
            last = latest.get(key, 0) if owed.live else 0
            if last > message.seq:
                # a copy the order of 4.6 proves missing: carried over with the latest
                # message of its order sent, whose copy proves it (rule 5)
                rows.add(messages[last - 1].row)
            rows.add(message.row)
    return sorted(rows)
