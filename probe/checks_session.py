"""Sessions resumed after the connection drops mid-flow: the broker re-sends what is
unacknowledged (PUBLISH with DUP 1, or PUBREL) with the original packet identifiers, and
answers the client's own re-sends; no message is delivered twice at QoS 2.

[MQTT-4.4.0-1] "When a Client reconnects with CleanSession set to 0, both the Client and
Server MUST re-send any unacknowledged PUBLISH Packets (where QoS > 0) and PUBREL Packets
using their original Packet Identifiers."
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pubproof.judge.findings import Finding
from pubproof.model.editions import Edition
from pubproof.probe.check import Check, fixed, per_edition
from pubproof.probe.context import CheckContext
from pubproof.probe.expect import copies, delivered, label
from pubproof.probe.findings import passed
from pubproof.probe.steps import connected, end_session, subscriber
from pubproof.probe.view import View
from pubproof.reference.packets import Packet, PubComp, Publish, PubRec, PubRel

PUB, SUB = "pub", "sub"
RESUME_RULES = ("MQTT-4.4.0-1", "MQTT-3.1.2-4", "MQTT-3.2.2-2")
#: MQTT 5.0: a Session Expiry Interval long enough for a check's reconnection, in seconds
KEEP_SESSION = {"session_expiry_interval": 30}


def persistent(edition: Edition) -> dict[str, Any]:
    """How a client asks for a session that outlives its connection: CleanSession 0 (3.1,
    3.1.1); in MQTT 5.0 a Session Expiry Interval (30 s) [MQTT-3.1.2-23], the first
    connection with Clean Start 1 (a fresh session)."""
    if edition is Edition.V50:
        return {"properties": KEEP_SESSION}
    return {"clean": False}


def _subscriber_drops(
    qos: int, hold: Callable[[Packet], bool], what: str
) -> Callable[[CheckContext], None]:
    """The subscriber (persistent session) drops its connection holding ``what``, and
    reconnects."""

    def run(ctx: CheckContext) -> None:
        topic, payload = ctx.topic(), f"resume-{what.lower()}-qos{qos}".encode()
        sub = subscriber(ctx, SUB, (topic, qos), **persistent(ctx.edition))
        end_session(ctx, sub)
        sub.hold = hold
        pub = connected(ctx, PUB)
        pub.publish(topic, payload, qos=qos)
        ctx.wait_for(sub, what, lambda: bool(sub.held))
        sub.drop()
        sub.hold, sub.held = None, []
        before = sub.count(what)
        sub.reconnect(clean=False)
        ctx.wait_for(
            sub,
            f"the re-sent {what}, every flow complete",
            lambda: sub.count(what) > before and sub.settled and pub.settled,
        )
        ctx.quiet()

    return run


def _resent(view: View, client: str, kind: str) -> list[Finding]:
    """A pass finding for the first re-send after the client's second CONNECT."""
    connects = [
        i
        for i, e in enumerate(view.entries)
        if e.get("client") == client and e.get("type") == "CONNECT"
    ]
    if len(connects) < 2:
        return []
    first = {
        e["packet_id"]
        for e in view.entries[: connects[1]]
        if e.get("client") == client and e.get("type") == kind and e.get("dir") == "from-broker"
    }
    findings = []
    for entry in view.entries[connects[1] :]:
        if (
            entry.get("client") == client
            and entry.get("type") == kind
            and entry.get("dir") == "from-broker"
            and entry.get("packet_id") in first
        ):
            dup = " with DUP 1" if entry.get("dup") else ""
            findings.append(
                passed(
                    f"re-sent {kind} {entry['packet_id']}{dup} after the session resumed",
                    "MQTT-4.4.0-1",
                )
            )
            break
    return findings


def _judge_subscriber(qos: int, kind: str) -> Callable[[View], list[Finding]]:
    def judge(view: View) -> list[Finding]:
        published = view.published(PUB)
        if not published:
            return []
        message = published[0]
        findings = _resent(view, SUB, kind)
        if qos == 2:
            findings += delivered(view, SUB, message, 2, publisher=PUB)
        elif copies(view, SUB, message):
            findings.append(passed(f"{SUB} got {label(message)} at least once"))
        return findings

    return judge


#: the subscriber's re-sends, one check each in every edition (the 5.0 catalog takes them
#: too): the same scenario and judge, the edition's own persistent session and rule ids
RESEND_PUBLISH_QOS1 = Check(
    id="session.resend-publish-qos1",
    title="subscriber drops before PUBACK, resumes: PUBLISH re-sent with DUP 1",
    rules=per_edition(
        (*RESUME_RULES, "MQTT-3.3.1-1"),
        ("MQTT-4.4.0-1", "MQTT-3.3.1-1"),
    ),
    run=_subscriber_drops(1, lambda p: isinstance(p, Publish), "PUBLISH"),
    judge=_judge_subscriber(1, "PUBLISH"),
)
RESEND_PUBREL = Check(
    id="session.resend-pubrel",
    title="subscriber drops before PUBCOMP, resumes: PUBREL re-sent, not PUBLISH",
    rules=per_edition(
        (*RESUME_RULES, "MQTT-4.3.3-1"),
        ("MQTT-4.4.0-1", "MQTT-4.3.3-6"),
    ),
    run=_subscriber_drops(2, lambda p: isinstance(p, PubRel), "PUBREL"),
    judge=_judge_subscriber(2, "PUBREL"),
)


def _publisher_drops(hold: Callable[[Packet], bool], what: str) -> Callable[[CheckContext], None]:
    """The publisher (persistent session) drops its connection holding ``what``, reconnects
    and re-sends (the reference Session: PUBLISH with DUP 1, or PUBREL)."""

    def run(ctx: CheckContext) -> None:
        topic, payload = ctx.topic(), f"resume-publisher-{what.lower()}".encode()
        sub = subscriber(ctx, SUB, (topic, 2))
        pub = connected(ctx, PUB, clean=False)
        end_session(ctx, pub)
        pub.hold = hold
        pub.publish(topic, payload, qos=2)
        ctx.wait_for(pub, what, lambda: bool(pub.held))
        pub.drop()
        pub.hold, pub.held = None, []
        pub.reconnect(clean=False)
        ctx.wait_for(
            pub,
            "every flow complete",
            lambda: sub.delivered([payload]) and sub.settled and pub.settled,
        )
        ctx.quiet()

    return run


def _judge_publisher(view: View) -> list[Finding]:
    published = view.published(PUB)
    if not published:
        return []
    return delivered(view, SUB, published[0], 2, publisher=PUB)


CHECKS: tuple[Check, ...] = (
    RESEND_PUBLISH_QOS1,
    Check(
        id="session.resend-publish-qos2",
        title="subscriber drops before PUBREC, resumes: PUBLISH re-sent with DUP 1, one delivery",
        rules=fixed(*RESUME_RULES, "MQTT-3.3.1-1", "MQTT-4.3.3-2"),
        run=_subscriber_drops(2, lambda p: isinstance(p, Publish), "PUBLISH"),
        judge=_judge_subscriber(2, "PUBLISH"),
    ),
    RESEND_PUBREL,
    Check(
        id="session.publisher-resends-publish",
        title="publisher drops before reading PUBREC, resumes, re-sends PUBLISH (DUP 1): "
        "PUBREC again, one delivery",
        rules=fixed(*RESUME_RULES, "MQTT-4.3.3-2"),
        run=_publisher_drops(lambda p: isinstance(p, PubRec), "PUBREC"),
        judge=_judge_publisher,
    ),
    Check(
        id="session.publisher-resends-pubrel",
        title="publisher drops before reading PUBCOMP, resumes, re-sends PUBREL: PUBCOMP, "
        "one delivery",
        rules=fixed(*RESUME_RULES, "MQTT-4.3.3-2"),
        run=_publisher_drops(lambda p: isinstance(p, PubComp), "PUBCOMP"),
        judge=_judge_publisher,
    ),
)
