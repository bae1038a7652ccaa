"""Retained messages: stored and sent to new subscriptions with RETAIN set, forwarded to live
subscriptions with RETAIN clear, deleted by a zero-byte message, replaced by a QoS 0 one,
left alone by a message without RETAIN (MQTT 3.1.1 section 3.3.1.3).

Each check runs its scenario; the distribution judge (:mod:`pubproof.judge.distribution`)
judges it, with the retained store of the model (:mod:`pubproof.model.retained`)."""

from __future__ import annotations

from pubproof.probe.check import Check, Run, fixed
from pubproof.probe.checks_distribution import by_distribution
from pubproof.probe.client import Client
from pubproof.probe.context import CheckContext
from pubproof.probe.steps import clear_retained, connected, subscriber

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



# -- a new subscription gets the retained message, RETAIN set -------------------------------


def _new_subscription(ctx: CheckContext) -> None:
    topic = ctx.topic()
    clear_retained(ctx, topic)
    pub = connected(ctx, PUB)
    _retain(ctx, pub, topic, b"retained")
    _late_subscriber(ctx, topic)



# -- a live subscription gets it forwarded, RETAIN clear ------------------------------------


def _live_subscription(ctx: CheckContext) -> None:
    topic = ctx.topic()
    clear_retained(ctx, topic)
    live = subscriber(ctx, LIVE, (topic, 2))
    pub = connected(ctx, PUB)
    _retain(ctx, pub, topic, b"live")
    ctx.wait_for(live, "the message", lambda: live.delivered([b"live"]) and live.settled)
    ctx.quiet()



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



# -- a retained QoS 0 message replaces the retained one -------------------------------------


def _qos0_replaces(ctx: CheckContext) -> None:
    topic = ctx.topic()
    clear_retained(ctx, topic)
    pub = connected(ctx, PUB)
    _retain(ctx, pub, topic, b"old", qos=1)
    _retain(ctx, pub, topic, b"new", qos=0)
    _late_subscriber(ctx, topic)



# -- a message without RETAIN leaves the retained one alone ---------------------------------


def _not_retained(ctx: CheckContext) -> None:
    topic = ctx.topic()
    clear_retained(ctx, topic)
    pub = connected(ctx, PUB)
    _retain(ctx, pub, topic, b"kept")
    pub.publish(topic, b"not-kept", qos=1)
    ctx.wait_for(pub, "the publisher's flow complete", lambda: pub.settled)
    _late_subscriber(ctx, topic)



def _check(cid: str, title: str, rules: tuple[str, ...], run: Run) -> Check:
    """A retained-message check: its verdict is the distribution judge's
    (:mod:`pubproof.judge.distribution`), which knows what each client is owed."""
    return Check(id=cid, title=title, rules=fixed(*rules), run=run, judge=by_distribution,
                 distribution=True)  # fmt: skip


CHECKS: tuple[Check, ...] = (
    _check(
        "retain.new-subscription",
        "a retained message is sent to a new subscription with RETAIN set",
        ("MQTT-3.3.1-5", "MQTT-3.3.1-6", "MQTT-3.3.1-8"),
        _new_subscription,
    ),
    _check(
        "retain.live-subscription",
        "a retained message is forwarded to a live subscription with RETAIN clear",
        ("MQTT-3.3.1-9",),
        _live_subscription,
    ),
    _check(
        "retain.zero-byte-deletes",
        "a zero-byte retained message is forwarded and deletes the retained message",
        ("MQTT-3.3.1-10", "MQTT-3.3.1-11"),
        _zero_byte,
    ),
    _check(
        "retain.qos0-replaces",
        "a retained QoS 0 message replaces the retained message",
        ("MQTT-3.3.1-7",),
        _qos0_replaces,
    ),
    _check(
        "retain.unretained-leaves-it",
        "a message without RETAIN leaves the retained message alone",
        ("MQTT-3.3.1-12",),
        _not_retained,
    ),
)
