"""Retained messages: stored and sent to new subscriptions with RETAIN set, forwarded to live
subscriptions with RETAIN clear, deleted by a zero-byte message, replaced by a QoS 0 one,
left alone by a message without RETAIN (MQTT 3.1.1 section 3.3.1.3)."""

from __future__ import annotations

from pubproof.judge.findings import Finding
from pubproof.model.trace import PublishP
from pubproof.probe.check import Check, Judge, Run, fixed
from pubproof.probe.client import Client
from pubproof.probe.context import CheckContext
from pubproof.probe.expect import copies, delivered, effective_qos, label, retain_flag
from pubproof.probe.findings import passed, tolerated, violation
from pubproof.probe.steps import clear_retained, connected, subscriber
from pubproof.probe.view import View

PUB, LIVE, LATE = "pub", "live-sub", "late-sub"


def _retain(ctx: CheckContext, pub: Client, topic: str, payload: bytes, qos: int = 1) -> None:
    """Publish a retained message and wait until the broker has it."""
    pub.publish(topic, payload, qos=qos, retain=True)
    if qos:
        ctx.wait_for(pub, "the publisher's flow complete", lambda: pub.settled)
    else:
        pub.ping()  # the broker reads in order: PINGRESP means it has read the PUBLISH


def _late_subscriber(ctx: CheckContext, topic: str) -> None:
    """Subscribe anew, then listen."""
    subscriber(ctx, LATE, (topic, 2))
    ctx.quiet()


def _published(view: View, payload: bytes) -> PublishP | None:
    for message in view.published(PUB):
        if message["payload_hex"] == payload.hex():
            return message
    return None


# -- a new subscription gets the retained message, RETAIN set -------------------------------


def _new_subscription(ctx: CheckContext) -> None:
    topic = ctx.topic()
    clear_retained(ctx, topic)
    pub = connected(ctx, PUB)
    _retain(ctx, pub, topic, b"retained")
    _late_subscriber(ctx, topic)


def _judge_new_subscription(view: View) -> list[Finding]:
    message = _published(view, b"retained")
    if message is None or not view.packets(LATE, "SUBACK"):
        return []
    return [
        *delivered(view, LATE, message, effective_qos(view, LATE, message["qos"]), publisher=PUB),
        *retain_flag(view, LATE, message, True, "MQTT-3.3.1-8"),
    ]


# -- a live subscription gets it forwarded, RETAIN clear ------------------------------------


def _live_subscription(ctx: CheckContext) -> None:
    topic = ctx.topic()
    clear_retained(ctx, topic)
    live = subscriber(ctx, LIVE, (topic, 2))
    pub = connected(ctx, PUB)
    _retain(ctx, pub, topic, b"live")
    ctx.wait_for(live, "the message", lambda: live.delivered([b"live"]) and live.settled)
    ctx.quiet()


def _judge_live_subscription(view: View) -> list[Finding]:
    message = _published(view, b"live")
    if message is None:
        return []
    return [
        *delivered(view, LIVE, message, effective_qos(view, LIVE, message["qos"]), publisher=PUB),
        *retain_flag(view, LIVE, message, False, "MQTT-3.3.1-9"),
    ]


# -- a zero-byte retained message is forwarded and deletes the retained one -----------------


def _zero_byte(ctx: CheckContext) -> None:
    topic = ctx.topic()
    clear_retained(ctx, topic)
    live = subscriber(ctx, LIVE, (topic, 2))
    pub = connected(ctx, PUB)
    _retain(ctx, pub, topic, b"to-delete")
    _retain(ctx, pub, topic, b"")
    ctx.wait_for(
        live, "both messages", lambda: live.delivered([b"to-delete", b""]) and live.settled
    )
    _late_subscriber(ctx, topic)


def _judge_zero_byte(view: View) -> list[Finding]:
    deleting = _published(view, b"")
    if deleting is None:
        return []
    findings = delivered(
        view, LIVE, deleting, effective_qos(view, LIVE, deleting["qos"]), publisher=PUB
    )
    if not view.packets(LATE, "SUBACK"):
        return findings
    for got in view.deliveries(LATE, deleting["topic"]):
        if got["payload_hex"]:  # [MQTT-3.3.1-10] "... any existing retained message ... removed"
            findings.append(
                violation(f"{LATE} got {label(got)}, which was deleted", "MQTT-3.3.1-10")
            )
        else:  # [MQTT-3.3.1-11] "A zero byte retained message MUST NOT be stored"
            findings.append(violation(f"{LATE} got the zero-byte message", "MQTT-3.3.1-11"))
    if not view.deliveries(LATE, deleting["topic"]):
        findings.append(passed(f"{LATE} got nothing: the retained message was deleted"))
    return findings


# -- a retained QoS 0 message replaces the retained one -------------------------------------


def _qos0_replaces(ctx: CheckContext) -> None:
    topic = ctx.topic()
    clear_retained(ctx, topic)
    pub = connected(ctx, PUB)
    _retain(ctx, pub, topic, b"old", qos=1)
    _retain(ctx, pub, topic, b"new", qos=0)
    _late_subscriber(ctx, topic)


def _judge_qos0_replaces(view: View) -> list[Finding]:
    old, new = _published(view, b"old"), _published(view, b"new")
    if old is None or new is None or not view.packets(LATE, "SUBACK"):
        return []
    rule = "MQTT-3.3.1-7"
    if copies(view, LATE, old):
        return [violation(f"{LATE} got {label(old)}: a QoS 0 retained message replaces it", rule)]
    if not copies(view, LATE, new):
        return [tolerated(f"{LATE} got no retained message: the old one is gone; the broker "
                          "SHOULD keep the QoS 0 one but MAY discard it", rule)]  # fmt: skip
    return [
        *delivered(view, LATE, new, effective_qos(view, LATE, 0), publisher=PUB),
        *retain_flag(view, LATE, new, True, "MQTT-3.3.1-8"),
        passed(f"{LATE} got {label(new)}, which replaced {label(old)}", rule),
    ]


# -- a message without RETAIN leaves the retained one alone ---------------------------------


def _not_retained(ctx: CheckContext) -> None:
    topic = ctx.topic()
    clear_retained(ctx, topic)
    pub = connected(ctx, PUB)
    _retain(ctx, pub, topic, b"kept")
    pub.publish(topic, b"not-kept", qos=1)
    ctx.wait_for(pub, "the publisher's flow complete", lambda: pub.settled)
    _late_subscriber(ctx, topic)


def _judge_not_retained(view: View) -> list[Finding]:
    kept, other = _published(view, b"kept"), _published(view, b"not-kept")
    if kept is None or other is None or not view.packets(LATE, "SUBACK"):
        return []
    rule = "MQTT-3.3.1-12"
    findings = delivered(view, LATE, kept, effective_qos(view, LATE, kept["qos"]), publisher=PUB)
    if copies(view, LATE, other):
        findings.append(
            violation(f"{LATE} got {label(other)}, which was published without RETAIN", rule)
        )
    return findings


def _check(cid: str, title: str, rules: tuple[str, ...], run: Run, judge: Judge) -> Check:
    return Check(id=cid, title=title, rules=fixed(*rules), run=run, judge=judge)


CHECKS: tuple[Check, ...] = (
    _check(
        "retain.new-subscription",
        "a retained message is sent to a new subscription with RETAIN set",
        ("MQTT-3.3.1-5", "MQTT-3.3.1-6", "MQTT-3.3.1-8"),
        _new_subscription,
        _judge_new_subscription,
    ),
    _check(
        "retain.live-subscription",
        "a retained message is forwarded to a live subscription with RETAIN clear",
        ("MQTT-3.3.1-9",),
        _live_subscription,
        _judge_live_subscription,
    ),
    _check(
        "retain.zero-byte-deletes",
        "a zero-byte retained message is forwarded and deletes the retained message",
        ("MQTT-3.3.1-10", "MQTT-3.3.1-11"),
        _zero_byte,
        _judge_zero_byte,
    ),
    _check(
        "retain.qos0-replaces",
        "a retained QoS 0 message replaces the retained message",
        ("MQTT-3.3.1-7",),
        _qos0_replaces,
        _judge_qos0_replaces,
    ),
    _check(
        "retain.unretained-leaves-it",
        "a message without RETAIN leaves the retained message alone",
        ("MQTT-3.3.1-12",),
        _not_retained,
        _judge_not_retained,
    ),
)
