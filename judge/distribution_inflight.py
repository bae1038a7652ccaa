"""The distribution judge's bookkeeping of what is in flight: the server's send quota
towards each client (5.0 Receive Maximum) and the retained messages it took together.

Theory of operation
-------------------
Flow control [MQTT-3.3.4-9]: per session (:class:`.distribution_records.Flows`), the
packet identifiers of the QoS 1 and 2 PUBLISHes the server sent and the client has not
acknowledged; :func:`publish_out <.distribution_copies.publish_out>` adds one as the
server sends it, :func:`acknowledged` takes it back as the client acknowledges (a PUBACK,
a PUBCOMP, or a PUBREC with a Reason Code of 128 or more), and completes the copy in the
model. While the quota is used up at the end a QoS 1 or 2 copy waits legitimately
(:func:`.distribution_records.waiting_for_quota`).

Retained order: a server takes a QoS 1 or 2 message at a time the wire only bounds (after
its PUBLISH, no later than its PUBACK or PUBREC), so of two retained messages to one topic
in flight together it may have stored either last. :func:`stored` keeps, per topic, the
messages the store may hold; :func:`retained_rivals` notes, at a new subscription, each
such message the server may send in place of the model's retained copy (which then is
``unknown:retained-order``, never missing).
"""

from __future__ import annotations

import contextlib

from pubproof.judge.distribution_events import Event
from pubproof.judge.distribution_records import Flows, JudgeState, Link, MessageRecord
from pubproof.model.distribution import DistributionError
from pubproof.model.messages import Copy


def session_flows(judge: JudgeState, link: Link) -> Flows:
    """The flows of the session of ``link`` (connected: its key known)."""
    key = link.key
    assert key is not None
    return judge.flows.setdefault(key, Flows())


def acknowledged(judge: JudgeState, link: Link, event: Event) -> None:
    """The client acknowledges a copy (PUBACK, PUBCOMP; 5.0 a PUBREC with an error Reason
    Code ends the flow too)."""
    packet = event.packet or {}
    packet_id = int(packet.get("packet_id") or 0)
    if link.edition is None or link.client_id is None:
        return
    flows = session_flows(judge, link)
    awaiting = flows.awaiting.get(packet_id)
    if awaiting is not None and event.type != awaiting:
        # the client's wrong answer (a PUBACK to a QoS 2 copy, a PUBREC or PUBCOMP to a
        # QoS 1 one, a PUBCOMP before its PUBREC: the link judge charges it): it ends no
        # flow of the server's, which re-sends the copy on a resumed session [MQTT-4.4.0-1]
        return
    code = int(packet.get("reason_code", 0))
    if event.type != "PUBREC" or code >= 0x80:
        # [MQTT-3.3.4-9] a PUBACK, a PUBCOMP or a PUBREC of 128 or more gives the
        # server its quota back (a PUBREC below keeps it until the PUBCOMP)
        flows.unacknowledged.discard(packet_id)
    copy_id = flows.outbound.get(packet_id)
    if copy_id is None:
        return
    if event.type == "PUBREC" and code < 0x80:
        flows.awaiting[packet_id] = "PUBCOMP"
        return  # the QoS 2 flow goes on to PUBCOMP
    del flows.outbound[packet_id]
    flows.awaiting.pop(packet_id, None)
    with contextlib.suppress(DistributionError):
        judge._model(link.edition).complete(link.client_id, copy_id, code)


def stored(judge: JudgeState, record: MessageRecord) -> None:
    """A retained message (or a deletion) changed its topic's store: of the messages the
    store may have held, those received after this one was owned are gone for certain; the
    others were in flight together with it, so the server may have stored either last."""
    key = (record.edition, record.message.topic)
    held = judge.retained_open.get(key, [])
    judge.retained_open[key] = [*(r for r in held if record.received.order < r.owned.order), record]


def retained_rivals(judge: JudgeState, link: Link, copy: Copy) -> None:
    """A new subscription of ``link`` is owed the model's retained ``copy``: each other
    message its topic's store may hold instead, if sent, stands in for it
    (:func:`.distribution_copies.publish_out` reads ``retained_order``)."""
    assert link.edition is not None and link.client_id is not None
    for other in judge.retained_open.get((link.edition, copy.topic), ()):
        if other.message.seq != copy.message.seq:
            judge.retained_order[link.edition, link.client_id, other.message.seq] = copy
