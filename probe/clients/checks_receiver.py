"""The client as receiver: what pubproof's server publishes to it, and what its application
is handed; duplicates of a QoS 2 PUBLISH before PUBREL (Method A or B, named); a PUBREL for
an unknown identifier; the order of its acknowledgements; a resumed session's re-sends."""

from __future__ import annotations

import dataclasses

from pubproof.judge.findings import Finding
from pubproof.probe.clients.check import ClientCheck, Run, fixed
from pubproof.probe.clients.context import ClientContext
from pubproof.probe.clients.judge import (
    ClientJudge,
    ClientView,
    delivered,
    sent_ids,
)
from pubproof.probe.clients.server import Conn, Stalled
from pubproof.probe.findings import passed, violation
from pubproof.reference.packets import PubAck, PubComp, PubRec, PubRel

#: [MQTT-4.3.2-2] the QoS 1 receiver answers PUBACK
QOS1_RECEIVER = "MQTT-4.3.2-2"
#: [MQTT-4.3.3-2] the QoS 2 receiver: PUBREC, PUBCOMP for every PUBREL, no onward duplicate
QOS2_RECEIVER = "MQTT-4.3.3-2"
#: [MQTT-4.6.0-2] PUBACK in the order the QoS 1 PUBLISH packets were received
PUBACK_ORDER = "MQTT-4.6.0-2"
#: [MQTT-4.6.0-3] PUBREC in the order the QoS 2 PUBLISH packets were received
PUBREC_ORDER = "MQTT-4.6.0-3"
UNKNOWN_ID = 4242


def _subscribed(ctx: ClientContext) -> Conn:
    return ctx.start(subscribe=[(ctx.topic_filter(), 2)])


def _receive(qos: int) -> Run:
    def run(ctx: ClientContext) -> None:
        conn = _subscribed(ctx)
        payload = f"rx{qos}".encode()
        conn.publish(ctx.topic(), payload, qos=qos)
        ctx.wait_for(
            "the message at the application, every flow complete",
            lambda: bool(ctx.messages()) and not ctx.session.in_flight, 2.0,
        )  # fmt: skip
        ctx.quiet(0.5)

    return run


def _judge_receive(qos: int, rule: str) -> ClientJudge:
    def judge(view: ClientView) -> list[Finding]:
        return delivered(view, f"rx{qos}".encode(), qos, rule)

    return judge


def _method(view: ClientView, payload: bytes, rule: str = QOS2_RECEIVER) -> list[Finding]:
    """Did the application get the message before pubproof sent PUBREL (Method B) or
    after (Method A)?"""
    got = view.copies(payload)
    released = view.packets("PUBREL", "to-client")
    if not got or not released:
        return []
    if got[0]["t"] < released[0]["t"]:
        method = "the client delivers on PUBLISH, before PUBREL (Method B)"
    else:
        method = "the client delivers on PUBREL (Method A)"
    return [passed(method, rule)]


def _qos2_duplicates(copies: int, hold_seconds: float = 0.0) -> Run:
    """QoS 2 to the client, ``copies`` duplicates (DUP 1, same identifier) before PUBREL."""

    def run(ctx: ClientContext) -> None:
        conn = _subscribed(ctx)
        conn.hold = lambda p: isinstance(p, PubRec)
        message = conn.publish(ctx.topic(), b"dup2", qos=2)
        ctx.wait_for("PUBREC", lambda: bool(conn.held))
        for _ in range(copies):
            conn.send(dataclasses.replace(message, dup=True))
        if copies:
            ctx.wait_for(f"{copies + 1} PUBREC", lambda: len(conn.held) > copies)
        ctx.quiet(hold_seconds)
        _release_first(conn)
        ctx.wait_for("PUBCOMP", lambda: conn.count("PUBCOMP") >= 1)
        ctx.quiet(0.5)

    return run


def _release_first(conn: Conn) -> None:
    held, conn.held = conn.held[:1], []
    conn.hold = None
    for packet in held:
        conn.feed(packet)


def _judge_duplicates(view: ClientView, rule: str = QOS2_RECEIVER) -> list[Finding]:
    return [*delivered(view, b"dup2", 2, rule), *_method(view, b"dup2", rule)]


def _pubrel_unknown(ctx: ClientContext) -> None:
    conn = _subscribed(ctx)
    conn.send(PubRel(packet_id=UNKNOWN_ID))
    ctx.wait_for(f"PUBCOMP {UNKNOWN_ID}", lambda: conn.count("PUBCOMP", packet_id=UNKNOWN_ID) > 0)
    ctx.quiet(0.3)


def _judge_pubrel_unknown(view: ClientView, rule: str = QOS2_RECEIVER) -> list[Finding]:
    if view.packets("PUBCOMP"):
        return [passed(f"PUBCOMP {UNKNOWN_ID} for a PUBREL of an identifier not held", rule)]
    return []  # the flow judge reports the missing PUBCOMP


def _qos1_duplicate(ctx: ClientContext) -> None:
    conn = _subscribed(ctx)
    message = conn.publish(ctx.topic(), b"dup1", qos=1)
    conn.hold = lambda p: isinstance(p, PubAck)
    conn.send(dataclasses.replace(message, dup=True))
    ctx.wait_for("2 PUBACK", lambda: conn.count("PUBACK") >= 2)
    conn.hold = None
    conn.held = []
    ctx.quiet(0.5)


def _judge_qos1_duplicate(view: ClientView) -> list[Finding]:
    return delivered(view, b"dup1", 1, QOS1_RECEIVER)


def _order(qos: int, count: int) -> Run:
    def run(ctx: ClientContext) -> None:
        conn = _subscribed(ctx)
        answer = "PUBACK" if qos == 1 else "PUBREC"
        for i in range(count):
            conn.publish(ctx.topic(), f"order{i}".encode(), qos=qos)
        ctx.wait_for(f"{count} {answer}", lambda: conn.count(answer) >= count, 2.0)
        ctx.wait_for("every flow complete", lambda: not ctx.session.in_flight)
        ctx.quiet(0.3)

    return run


def _judge_order(qos: int, delivered_rule: str | None = None) -> ClientJudge:
    """Each message delivered (``delivered_rule``: the receiver's rule, by edition), the
    acknowledgements in the order of the PUBLISH packets."""
    answer, rule = ("PUBACK", PUBACK_ORDER) if qos == 1 else ("PUBREC", PUBREC_ORDER)
    receiver = delivered_rule or ("MQTT-4.3.2-2" if qos == 1 else QOS2_RECEIVER)

    def judge(view: ClientView) -> list[Finding]:
        sent = [i for i in sent_ids(view, "PUBLISH", "to-client")]
        got = sent_ids(view, answer)
        findings: list[Finding] = []
        for i in range(len(sent)):
            findings += delivered(view, f"order{i}".encode(), qos, receiver)
        if got[: len(sent)] == sent:
            findings.append(passed(f"{answer} in the order of the PUBLISH packets ({sent})", rule))
        elif len(got) >= len(sent):
            findings.append(violation(f"PUBLISH {sent}, {answer} {got}", rule))
        return findings

    return judge


def _resumed(kind: str) -> Run:
    """pubproof's QoS 1 or 2 flow to the client interrupted: ``kind`` (PUBACK, PUBREC or
    PUBCOMP) held, the connection lost; the session resumed, pubproof re-sends."""

    def run(ctx: ClientContext) -> None:
        conn = ctx.start(subscribe=[(ctx.topic_filter(), 2)], clean=False)
        qos = 1 if kind == "PUBACK" else 2
        held = {"PUBACK": PubAck, "PUBREC": PubRec, "PUBCOMP": PubComp}[kind]
        conn.hold = lambda p: isinstance(p, held)
        conn.publish(ctx.topic(), b"resumed", qos=qos)
        ctx.wait_for(kind, lambda: bool(conn.held))
        conn.drop(f"a lost connection, the client's {kind} not taken")
        try:
            again = ctx.reconnected()
        except Stalled:
            ctx.no_reconnect()
            return
        ctx.wait_for("every flow complete", lambda: not ctx.session.in_flight, 3.0)
        ctx.quiet(0.5)
        del again

    return run


def _judge_resumed(
    kind: str, rules: tuple[str, str] = (QOS1_RECEIVER, QOS2_RECEIVER)
) -> ClientJudge:
    """The resumed session's re-send delivered as its QoS says (``rules``: the QoS 1 and
    QoS 2 receiver's, by edition)."""
    qos = 1 if kind == "PUBACK" else 2

    def judge(view: ClientView) -> list[Finding]:
        if len(view.conns()) < 2:
            return []
        rule = rules[0] if qos == 1 else rules[1]
        # the answers the resumed session owes (PUBACK, PUBREC, PUBCOMP) are the link judge's
        return delivered(view, b"resumed", qos, rule)

    return judge


CHECKS: tuple[ClientCheck, ...] = (
    ClientCheck(
        "receive.qos0",
        "a QoS 0 message reaches the application once",
        fixed("MQTT-4.3.1-1"),
        _receive(0),
        _judge_receive(0, "MQTT-4.3.1-1"),
    ),
    ClientCheck(
        "receive.qos1",
        "a QoS 1 message: PUBACK, at the application at least once",
        fixed(QOS1_RECEIVER),
        _receive(1),
        _judge_receive(1, QOS1_RECEIVER),
    ),
    ClientCheck(
        "receive.qos2",
        "a QoS 2 message: PUBREC, PUBCOMP, at the application exactly once",
        fixed(QOS2_RECEIVER),
        _receive(2),
        _judge_receive(2, QOS2_RECEIVER),
    ),
    ClientCheck(
        "receive.qos2-method",
        "QoS 2, PUBREL withheld for a while: delivered before or after PUBREL (Method A or B)",
        fixed(QOS2_RECEIVER),
        _qos2_duplicates(0, 0.6),
        _judge_duplicates,
    ),
    ClientCheck(
        "receive.qos2-duplicate-before-pubrel",
        "QoS 2 PUBLISH again (DUP 1) after PUBREC, before PUBREL: delivered once",
        fixed(QOS2_RECEIVER, "MQTT-3.3.1-1"),
        _qos2_duplicates(1),
        _judge_duplicates,
    ),
    ClientCheck(
        "receive.qos2-duplicates-before-pubrel",
        "QoS 2 PUBLISH and three duplicates (DUP 1) before PUBREL: delivered once",
        fixed(QOS2_RECEIVER),
        _qos2_duplicates(3),
        _judge_duplicates,
    ),
    ClientCheck(
        "receive.pubrel-unknown-id",
        "PUBREL for a packet identifier the client does not hold: PUBCOMP",
        fixed(QOS2_RECEIVER),
        _pubrel_unknown,
        _judge_pubrel_unknown,
    ),
    ClientCheck(
        "receive.qos1-duplicate",
        "QoS 1 PUBLISH again (DUP 1) before pubproof took its PUBACK: each acknowledged",
        fixed(QOS1_RECEIVER),
        _qos1_duplicate,
        _judge_qos1_duplicate,
    ),
    ClientCheck(
        "receive.puback-order",
        "five QoS 1 messages at once: PUBACK in their order",
        fixed(PUBACK_ORDER, QOS1_RECEIVER),
        _order(1, 5),
        _judge_order(1),
    ),
    ClientCheck(
        "receive.pubrec-order",
        "three QoS 2 messages at once: PUBREC in their order",
        fixed(PUBREC_ORDER, QOS2_RECEIVER),
        _order(2, 3),
        _judge_order(2),
    ),
    ClientCheck(
        "receive.qos1-resumed",
        "QoS 1 to the client, connection lost before pubproof took PUBACK, session resumed: "
        "re-sent, acknowledged, delivered",
        fixed(QOS1_RECEIVER, "MQTT-4.4.0-1"),
        _resumed("PUBACK"),
        _judge_resumed("PUBACK"),
    ),
    ClientCheck(
        "receive.qos2-resumed-before-pubrel",
        "QoS 2 to the client, connection lost before pubproof took PUBREC, session resumed: "
        "delivered exactly once",
        fixed(QOS2_RECEIVER, "MQTT-4.4.0-1"),
        _resumed("PUBREC"),
        _judge_resumed("PUBREC"),
    ),
    ClientCheck(
        "receive.qos2-resumed-after-pubrel",
        "QoS 2 to the client, connection lost before pubproof took PUBCOMP, session resumed: "
        "PUBREL re-sent, PUBCOMP, delivered exactly once",
        fixed(QOS2_RECEIVER, "MQTT-4.4.0-1"),
        _resumed("PUBCOMP"),
        _judge_resumed("PUBCOMP"),
    ),
)
