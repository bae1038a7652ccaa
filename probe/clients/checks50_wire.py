"""MQTT 5.0 wire checks for a client: each PUBLISH and acknowledgement the model rejects (or
judges only under a reading), sent by pubproof's server on a connection whose CONNECT
declared the client's own limits (Topic Alias Maximum 4, Maximum Packet Size 1024, and for
its own check Receive Maximum 2). The client must close the connection exactly when the
model says, with the DISCONNECT Reason Code it calls for, and its application must never
be handed a PUBLISH the model rejects
(:func:`pubproof.probe.clients.judge.case_findings`).

The PUBLISH cases are the broker probe's 5.0 ones (:data:`pubproof.probe.checks50_wire.
BUILDS`), built with the client's declarations instead of the broker's; the
acknowledgements (:data:`pubproof.probe.checks50_wire.ACK_BUILDS`) come where the client's
own flow calls for them. Three cases are the client's own: more QoS 2 PUBLISH than its
Receive Maximum, and a Topic Alias carried over from the connection before.
"""

from __future__ import annotations

import contextlib

from pubproof.judge.close import close_rules
from pubproof.model.editions import Edition
from pubproof.probe.catalog import BY_ID50
from pubproof.probe.checks50_wire import ACK_BUILDS, BUILDS, Build, alias, publish50_bytes
from pubproof.probe.clients.check import ClientCheck, fixed
from pubproof.probe.clients.checks_wire import (
    Case,
    ack_case,
    nothing_more,
    observe,
    receive_checks,
)
from pubproof.probe.clients.context import ClientContext
from pubproof.probe.clients.server import Stalled
from pubproof.reference.codec import encode
from pubproof.reference.packets import Publish, PubRec
from pubproof.reference.properties import PublishProperties

#: what the client declares for the wire checks (its own limits, judged by the model)
LIMITS = {"topic_alias_maximum": 4, "maximum_packet_size": 1024}
CLIENT_RECEIVE_MAXIMUM = 2


def _declared_case(build: Build) -> Case:
    """The broker probe's case, built with what the client declared."""
    return lambda ctx, conn: build(ctx.topic(), conn.client_declared)


def _over_receive_maximum(ctx: ClientContext) -> None:
    """The client declares Receive Maximum 2; the server sends two QoS 2 messages, holds
    their PUBRECs (no PUBREL: both stay unacknowledged), then a third: the case. The client
    must close with DISCONNECT 0x93 (Receive Maximum exceeded)."""
    limits = {**LIMITS, "receive_maximum": CLIENT_RECEIVE_MAXIMUM}
    conn = ctx.start(subscribe=[(ctx.topic_filter(), 2)], limits=limits)
    if conn.client_declared.receive_maximum > CLIENT_RECEIVE_MAXIMUM:
        ctx.recorder.event(
            "not-applicable", None,
            message="the client declared no Receive Maximum of 2: a third message is within it",
        )  # fmt: skip
        return
    conn.hold = lambda p: isinstance(p, PubRec)
    for n in range(CLIENT_RECEIVE_MAXIMUM):
        conn.publish(ctx.topic(), f"rm{n}".encode(), qos=2)
    with contextlib.suppress(Stalled):  # the model judges the third whatever came back
        ctx.wait_for("2 PUBREC", lambda: len(conn.held) >= CLIENT_RECEIVE_MAXIMUM)
    ids = {p.packet_id for p in conn.held if p.packet_id} | set(ctx.session.in_flight)
    extra = Publish(
        topic=ctx.topic(), payload=b"one too many", qos=2, packet_id=max(ids, default=0) + 1,
        properties=PublishProperties(),
    )  # fmt: skip
    conn.send_raw(encode(extra, edition=Edition.V50), case=True)
    observe(ctx, conn)


def _alias_across(ctx: ClientContext) -> None:
    """The server sets Topic Alias 1 on the first connection, drops it; on the client's next
    connection it sends the alias alone: [MQTT-3.3.2-7] "A receiver MUST NOT carry forward
    any Topic Alias mappings from one Network Connection to another", so the client holds
    no mapping for it (DISCONNECT 0x82)."""
    conn = ctx.start(subscribe=[(ctx.topic_filter(), 2)], limits=LIMITS, clean=False)
    if conn.client_declared.topic_alias_maximum == 0:
        ctx.recorder.event(
            "not-applicable", None,
            message="the client declared no Topic Alias Maximum: the server may send no alias",
        )  # fmt: skip
        return
    topic = ctx.topic()
    conn.send_raw(publish50_bytes(0x30, topic.encode(), properties=alias(1), payload=b"set"))
    with contextlib.suppress(Stalled):
        ctx.wait_for("the message at the application", lambda: bool(ctx.messages()), 1.5)
    conn.drop("a lost connection after Topic Alias 1 was set")
    try:
        again = ctx.reconnected()
    except Stalled:
        ctx.no_reconnect()
        return
    again.send_raw(publish50_bytes(0x30, b"", properties=alias(1), payload=b"carried"), case=True)
    observe(ctx, again)


#: the cases as data, by check id (what ``pubproof serve --misbehave`` sends too): a PUBLISH
#: to a subscribed client, built from a topic name and what the client declared
RECEIVE_CASES: dict[str, Build] = {
    "wire.receive-" + cid.removeprefix("wire."): build for cid, build in BUILDS.items()
}


def _checks() -> list[ClientCheck]:
    checks = receive_checks(BUILDS, BY_ID50, _declared_case, LIMITS)
    for cid, (kind, ack) in ACK_BUILDS.items():
        broker = BY_ID50[cid]
        checks.append(
            ClientCheck(cid, broker.title + ", to the client", broker.rules,
                        ack_case(kind, ack, LIMITS), nothing_more)
        )  # fmt: skip
    checks.append(
        ClientCheck(
            "wire.receive-maximum-exceeded",
            "a third QoS 2 PUBLISH while two are unacknowledged, the client's Receive Maximum "
            "2 (0x93)",
            fixed(*close_rules("MQTT-3.3.4-9", Edition.V50), "MQTT-4.9.0-2"),
            _over_receive_maximum, nothing_more,
        )
    )  # fmt: skip
    checks.append(
        ClientCheck(
            "wire.topic-alias-across-connections",
            "an alias set on one connection, used alone on the next (0x82)",
            fixed("PP50-3.3.2-topic-alias-unknown", "MQTT-3.3.2-7", "MQTT-4.13.1-1"),
            _alias_across, nothing_more,
        )
    )  # fmt: skip
    return checks


CHECKS: tuple[ClientCheck, ...] = tuple(_checks())
