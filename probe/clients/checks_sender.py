"""The client as sender: what it publishes, judged packet by packet by the model; its
packet identifiers while in flight; what it re-sends after a lost connection with the
session resumed (and not after a clean one); the order of its re-sends and releases."""

from __future__ import annotations

import contextlib

from pubproof.judge.findings import Finding
from pubproof.probe.clients.check import ClientCheck, Run, fixed
from pubproof.probe.clients.context import ClientContext
from pubproof.probe.clients.judge import ClientJudge, ClientView, sent_ids
from pubproof.probe.clients.server import Conn, Stalled
from pubproof.probe.findings import missing, passed, tolerated, violation
from pubproof.reference.packets import Publish, PubRel

#: [MQTT-2.3.1-2] "Each time a Client sends a new packet of one of these types it MUST
#: assign it a currently unused Packet Identifier"
ID_UNUSED = "MQTT-2.3.1-2"
#: [MQTT-4.4.0-1] on reconnect with CleanSession 0, re-send unacknowledged PUBLISH and PUBREL
RESEND = "MQTT-4.4.0-1"
#: [MQTT-3.1.2-6] CleanSession 1: "the Client and Server MUST discard any previous Session"
CLEAN = "MQTT-3.1.2-6"
#: [MQTT-4.6.0-1] re-sent PUBLISH packets in their original order
RESEND_ORDER = "MQTT-4.6.0-1"
#: [MQTT-4.6.0-4] PUBREL in the order the PUBRECs were received
PUBREL_ORDER = "MQTT-4.6.0-4"


def _payloads(count: int, tag: str) -> list[bytes]:
    return [f"{tag}{i}".encode() for i in range(count)]


def _publish(qos: int) -> Run:
    def run(ctx: ClientContext) -> None:
        payload = f"qos{qos}".encode()
        conn = ctx.start(publish=[(ctx.topic(), qos, payload, False)])
        done = {0: "PUBLISH", 1: "PUBLISH", 2: "PUBREL"}[qos]
        ctx.wait_for(done, lambda: conn.count(done) >= 1)
        ctx.quiet(0.5)

    return run


def _judge_publish(qos: int, first_dup: str = "MQTT-3.3.1-1") -> ClientJudge:
    """One PUBLISH at the QoS the application asked, DUP 0 (``first_dup``: the rule that
    wants DUP 0 on a first send, by edition)."""

    def judge(view: ClientView) -> list[Finding]:
        payload = f"qos{qos}".encode().hex()
        got = [p for p in view.packets("PUBLISH") if p.get("payload_hex") == payload]
        if not got:
            return [missing(f"no PUBLISH of the message the application published (QoS {qos})")]
        first = got[0]
        if first.get("qos") != qos:
            return [
                violation(
                    f"the application published at QoS {qos}, the client sent QoS "
                    f"{first.get('qos')}"
                )
            ]
        if first.get("dup"):
            return [violation("the first PUBLISH of a message carries DUP 1", first_dup)]
        return [passed(f"one PUBLISH at QoS {qos}, DUP 0, as the application asked")]

    return judge


def _in_flight(qos: int, count: int = 5) -> Run:
    """``count`` messages at once, none acknowledged until all are in (or 2 s passed)."""

    def run(ctx: ClientContext) -> None:
        publish = [(ctx.topic(), qos, p, False) for p in _payloads(count, "id")]
        conn = _started_holding(ctx, publish)
        with contextlib.suppress(Stalled):  # a client may cap its messages in flight
            ctx.wait_for(f"{count} PUBLISH", lambda: len(conn.held) >= count, 2.0)
        conn.release()
        ctx.wait_for(
            "every message, every flow complete",
            lambda: (
                len({p.get("payload_hex") for p in conn.received if p.get("type") == "PUBLISH"})
                >= count
                and not ctx.session.held
                and (qos == 1 or conn.count("PUBREL") >= count)
            ),
            4.0,
        )
        ctx.quiet(0.3)

    return run


def _started_holding(
    ctx: ClientContext, publish: list[tuple[str, int, bytes, bool]], *, clean: bool = True
) -> Conn:
    """Start the client; hold every PUBLISH from its first connection (no answer)."""
    conn = ctx.start(publish=publish, clean=clean)
    # set before the next read: a client sends PUBLISH only after the CONNACK just sent
    conn.hold = lambda p: isinstance(p, Publish)
    return conn


def _judge_in_flight(view: ClientView, id_unused: str = ID_UNUSED) -> list[Finding]:
    """The identifiers of the PUBLISH packets in flight together are distinct (``id_unused``:
    the rule, by edition)."""
    first_conn = view.conns()[0] if view.conns() else None
    publishes = [
        p for p in view.packets("PUBLISH", conn=first_conn) if not p.get("dup") and "error" not in p
    ]
    acked_before = {
        e["t"] for e in view.packets("PUBACK", "to-client") + view.packets("PUBREC", "to-client")
    }
    first_ack = min(acked_before, default=float("inf"))
    together = [p for p in publishes if p["t"] < first_ack]
    ids = [p.get("packet_id") for p in together]
    if len(together) < 2:
        return [
            tolerated(
                f"the client sent {len(together)} message(s) before the first was "
                "acknowledged: identifiers in flight together not seen",
                id_unused,
            )
        ]
    if len(set(ids)) == len(ids):
        return [
            passed(
                f"{len(ids)} messages in flight together on distinct identifiers {ids}", id_unused
            )
        ]
    return [violation(f"messages in flight together share identifiers: {ids}", id_unused)]


def _resend(qos: int, *, clean: bool) -> Run:
    """A QoS ``qos`` message never acknowledged; the connection lost; the client back."""

    def run(ctx: ClientContext) -> None:
        payload = f"resend{qos}".encode()
        conn = _started_holding(ctx, [(ctx.topic(), qos, payload, False)], clean=clean)
        ctx.wait_for("PUBLISH", lambda: bool(conn.held))
        conn.drop("a lost connection, the PUBLISH never acknowledged")
        try:
            again = ctx.reconnected()
        except Stalled:
            ctx.no_reconnect()
            return
        if clean:
            ctx.quiet(1.5)
            return
        ctx.wait_for("the PUBLISH re-sent", lambda: again.count("PUBLISH") >= 1, 3.0)
        ctx.wait_for(
            "the flow complete",
            lambda: not ctx.session.held and (qos == 1 or again.count("PUBREL") >= 1),
        )
        ctx.quiet(0.3)

    return run


def _judge_resend(view: ClientView) -> list[Finding]:
    conns = view.conns()
    if len(conns) < 2:
        return []
    first = [p for p in view.packets("PUBLISH", conn=conns[0]) if "error" not in p]
    again = [p for p in view.packets("PUBLISH", conn=conns[1]) if "error" not in p]
    if not first or not again:
        return []  # the link judge reports the re-send owed
    original, resent = first[0], again[0]
    same = resent.get("packet_id") == original.get("packet_id") and resent.get(
        "payload_hex"
    ) == original.get("payload_hex")
    if same and resent.get("dup"):
        return [
            passed(
                f"re-sent with DUP 1 and the same identifier {original.get('packet_id')}",
                RESEND,
                "MQTT-3.3.1-1",
            )
        ]
    return []  # the link judge names what is wrong


def _judge_clean(
    view: ClientView, clean: str = CLEAN, session: str = "a clean session"
) -> list[Finding]:
    """Nothing of the discarded session re-sent (``clean``: the rule that discards it;
    ``session``: how the new connection's session is named)."""
    conns = view.conns()
    if len(conns) < 2:
        return []
    first = [p for p in view.packets("PUBLISH", conn=conns[0]) if "error" not in p]
    if not first:
        return []
    original = first[0]
    again = [
        p
        for p in view.packets("PUBLISH", conn=conns[1])
        if p.get("payload_hex") == original.get("payload_hex")
    ]
    if not again:
        return [passed(f"nothing of the discarded session re-sent after {session}", clean)]
    if any(p.get("dup") for p in again):
        return [
            violation(
                f"the message of the discarded session re-sent with DUP 1 after {session}",
                clean,
            )
        ]
    return [
        tolerated(
            f"the message published again as a new message (DUP 0) after {session}: the "
            "session was discarded, the application's message not",
            clean,
        )
    ]


def _pubrel_resend(ctx: ClientContext) -> None:
    """QoS 2: PUBREC answered, the client's PUBREL never completed, the connection lost."""
    conn = ctx.start(publish=[(ctx.topic(), 2, b"pubrel", False)], clean=False)
    conn.hold = lambda p: isinstance(p, PubRel)
    ctx.wait_for("PUBREL", lambda: bool(conn.held))
    conn.drop("a lost connection, the PUBREL never completed")
    try:
        again = ctx.reconnected()
    except Stalled:
        ctx.no_reconnect()
        return
    ctx.wait_for("the PUBREL re-sent", lambda: again.count("PUBREL") >= 1, 3.0)
    ctx.quiet(0.5)


def _judge_pubrel_resend(view: ClientView, after_pubrel: str = "MQTT-4.3.3-1") -> list[Finding]:
    """PUBREL re-sent on the resumed session, and not the PUBLISH (``after_pubrel``: the
    rule against a PUBLISH after its PUBREL, by edition)."""
    conns = view.conns()
    if len(conns) < 2:
        return []
    held = [p.get("packet_id") for p in view.packets("PUBREL", conn=conns[0])]
    again = [p.get("packet_id") for p in view.packets("PUBREL", conn=conns[1])]
    findings: list[Finding] = []
    if held and again and again[0] == held[0]:
        findings.append(passed(f"PUBREL {held[0]} re-sent on the resumed session", RESEND))
    if view.packets("PUBLISH", conn=conns[1]):
        findings.append(violation("the PUBLISH re-sent after its PUBREL", after_pubrel))
    return findings


def _pubrel_order(ctx: ClientContext) -> None:
    """Three QoS 2 messages; pubproof answers PUBREC in the reverse order."""
    publish = [(ctx.topic(), 2, p, False) for p in _payloads(3, "order")]
    conn = _started_holding(ctx, publish)
    with contextlib.suppress(Stalled):  # a client may cap its messages in flight
        ctx.wait_for("3 PUBLISH", lambda: len(conn.held) >= 3, 2.0)
    held, conn.held = conn.held, []
    conn.hold = None
    for packet in reversed(held):
        conn.feed(packet)
    ctx.wait_for("every PUBREL", lambda: conn.count("PUBREL") >= 3, 3.0)
    ctx.quiet(0.3)


def _judge_pubrel_order(view: ClientView) -> list[Finding]:
    recs = sent_ids(view, "PUBREC", "to-client")
    rels = sent_ids(view, "PUBREL")
    if len(recs) < 2:
        return [
            tolerated(
                "fewer than two QoS 2 messages in flight together: the order cannot be seen",
                PUBREL_ORDER,
            )
        ]
    if rels[: len(recs)] == recs:
        return [passed(f"PUBREL in the order of the PUBRECs ({recs})", PUBREL_ORDER)]
    return [violation(f"PUBRECs came for {recs}, PUBRELs went for {rels}", PUBREL_ORDER)]


def _resend_order(ctx: ClientContext) -> None:
    """Three QoS 1 messages never acknowledged; the connection lost; re-sent in order?"""
    publish = [(ctx.topic(), 1, p, False) for p in _payloads(3, "again")]
    conn = _started_holding(ctx, publish, clean=False)
    with contextlib.suppress(Stalled):  # a client may cap its messages in flight
        ctx.wait_for("3 PUBLISH", lambda: len(conn.held) >= 3, 2.0)
    conn.drop("a lost connection, no PUBLISH acknowledged")
    try:
        again = ctx.reconnected()
    except Stalled:
        ctx.no_reconnect()
        return
    count = len(conn.held)
    ctx.wait_for("the PUBLISH packets re-sent", lambda: again.count("PUBLISH") >= count, 3.0)
    ctx.quiet(0.3)


def _judge_resend_order(view: ClientView) -> list[Finding]:
    conns = view.conns()
    if len(conns) < 2:
        return []
    first = [p.get("packet_id") for p in view.packets("PUBLISH", conn=conns[0]) if "error" not in p]
    again = [p.get("packet_id") for p in view.packets("PUBLISH", conn=conns[1]) if p.get("dup")]
    if len(first) < 2 or len(again) < 2:
        return []
    if again[: len(first)] == first:
        return [passed(f"re-sent in the original order ({first})", RESEND_ORDER)]
    return [violation(f"sent {first}, re-sent {again}", RESEND_ORDER)]


CHECKS: tuple[ClientCheck, ...] = (
    ClientCheck(
        "send.qos0",
        "the client publishes at QoS 0",
        fixed("MQTT-4.3.1-1"),
        _publish(0),
        _judge_publish(0),
    ),
    ClientCheck(
        "send.qos1",
        "the client publishes at QoS 1",
        fixed("MQTT-4.3.2-1", "MQTT-2.3.1-1"),
        _publish(1),
        _judge_publish(1),
    ),
    ClientCheck(
        "send.qos2",
        "the client publishes at QoS 2 and releases it",
        fixed("MQTT-4.3.3-1", "MQTT-2.3.1-1"),
        _publish(2),
        _judge_publish(2),
    ),
    ClientCheck(
        "send.qos1-ids-in-flight",
        "five QoS 1 messages in flight together: distinct identifiers",
        fixed(ID_UNUSED, "MQTT-4.3.2-1"),
        _in_flight(1),
        _judge_in_flight,
    ),
    ClientCheck(
        "send.qos2-ids-in-flight",
        "five QoS 2 messages in flight together: distinct identifiers",
        fixed(ID_UNUSED, "MQTT-4.3.3-1"),
        _in_flight(2),
        _judge_in_flight,
    ),
    ClientCheck(
        "send.qos1-resent-on-resume",
        "QoS 1 never acknowledged, connection lost, session resumed: re-sent with DUP 1, "
        "same identifier",
        fixed(RESEND, "MQTT-3.3.1-1"),
        _resend(1, clean=False),
        _judge_resend,
    ),
    ClientCheck(
        "send.qos2-resent-on-resume",
        "QoS 2 never acknowledged, connection lost, session resumed: re-sent with DUP 1, "
        "same identifier",
        fixed(RESEND, "MQTT-3.3.1-1"),
        _resend(2, clean=False),
        _judge_resend,
    ),
    ClientCheck(
        "send.pubrel-resent-on-resume",
        "PUBCOMP never came, connection lost, session resumed: PUBREL re-sent",
        fixed(RESEND, "MQTT-4.3.3-1"),
        _pubrel_resend,
        _judge_pubrel_resend,
    ),
    ClientCheck(
        "send.resend-order",
        "three QoS 1 messages re-sent on resume in their original order",
        fixed(RESEND_ORDER, RESEND),
        _resend_order,
        _judge_resend_order,
    ),
    ClientCheck(
        "send.qos1-not-resent-after-clean",
        "QoS 1 never acknowledged, connection lost, clean session: nothing re-sent",
        fixed(CLEAN),
        _resend(1, clean=True),
        _judge_clean,
    ),
    ClientCheck(
        "send.qos2-not-resent-after-clean",
        "QoS 2 never acknowledged, connection lost, clean session: nothing re-sent",
        fixed(CLEAN),
        _resend(2, clean=True),
        _judge_clean,
    ),
    ClientCheck(
        "send.pubrel-order",
        "PUBREC answered in reverse order: PUBREL in the order of the PUBRECs",
        fixed(PUBREL_ORDER),
        _pubrel_order,
        _judge_pubrel_order,
    ),
)
