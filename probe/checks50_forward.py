"""MQTT 5.0 forwarding checks: the PUBLISH properties a broker passes on unchanged
(Payload Format Indicator, Content Type, Response Topic, Correlation Data, User
Properties in order), Message Expiry (an expired message is not delivered, the forwarded
interval is reduced by the time waited), Subscription Identifiers, No Local, Retain As
Published and Retain Handling 0, 1 and 2.

Each check runs its scenario; its verdict is the distribution judge's
(:mod:`pubproof.judge.distribution`), which reads every client's links with the 5.0 model
of distribution.
"""

from __future__ import annotations

from typing import Any

from pubproof.probe.check import Check, Run, fixed
from pubproof.probe.checks_distribution import by_distribution
from pubproof.probe.checks_session import KEEP_SESSION
from pubproof.probe.client import Subscription
from pubproof.probe.context import CheckContext
from pubproof.probe.steps import clear_retained, connected, end_session, subscriber
from pubproof.reference.properties import PublishProperties

PUB, SUB = "pub", "sub"
#: how long the expiry checks wait (the broker's clock may count whole seconds)
EXPIRED_WAIT = 2.2
REDUCED_WAIT = 1.2
REDUCED_FROM = 60


def _check(cid: str, title: str, rules: tuple[str, ...], run: Run, extra: float = 0.0) -> Check:
    """A forwarding check: its verdict is the distribution judge's
    (:mod:`pubproof.judge.distribution`: the properties, the expiry, the identifiers, No
    Local, Retain As Published and Retain Handling, as the model forwards them)."""
    return Check(id=cid, title=title, rules=fixed(*rules), run=run, judge=by_distribution,
                 extra=extra, distribution=True)  # fmt: skip






# -- properties passed on unchanged ---------------------------------------------------------


def _properties(payload: bytes, properties: PublishProperties) -> Run:
    def run(ctx: CheckContext) -> None:
        topic = ctx.topic()
        sub = subscriber(ctx, SUB, (topic, 1))
        pub = connected(ctx, PUB)
        pub.publish(topic, payload, qos=1, properties=properties)
        ctx.wait_for(
            sub,
            "the message, every flow complete",
            lambda: sub.delivered([payload]) and sub.settled and pub.settled,
        )
        ctx.quiet()

    return run




# -- Message Expiry -------------------------------------------------------------------------


def _expiry(interval: int, wait: float) -> Run:
    """The subscriber (Session Expiry 30 s) disconnects; a message with Message Expiry
    Interval ``interval`` and one without are published; ``wait`` seconds later the
    subscriber resumes its session."""

    def run(ctx: CheckContext) -> None:
        topic = ctx.topic()
        sub = subscriber(ctx, SUB, (topic, 1), properties=KEEP_SESSION)
        end_session(ctx, sub)
        sub.disconnect()
        pub = connected(ctx, PUB)
        expiring = PublishProperties(message_expiry_interval=interval)
        pub.publish(topic, b"expiring", qos=1, properties=expiring)
        pub.publish(topic, b"lasting", qos=1)
        ctx.wait_for(pub, "the publisher's flows complete", lambda: pub.settled)
        ctx.quiet(wait)
        sub.reconnect(clean=False)
        ctx.wait_for(
            sub, "the lasting message", lambda: sub.delivered([b"lasting"]) and sub.settled
        )
        ctx.quiet()

    return run






# -- Subscription Identifiers ---------------------------------------------------------------


def _subscription_identifier(ctx: CheckContext) -> None:
    topic = ctx.topic()
    sub = subscriber(ctx, SUB, (topic, 1), identifier=7)
    pub = connected(ctx, PUB)
    pub.publish(topic, b"identified", qos=1)
    ctx.wait_for(
        sub, "the message", lambda: sub.delivered([b"identified"]) and sub.settled and pub.settled
    )
    ctx.quiet()




def _overlapping_identifiers(ctx: CheckContext) -> None:
    base = ctx.topic("")
    sub = subscriber(ctx, SUB, (base + "+", 1), identifier=3)
    sub.subscribe((base + "#", 1), identifier=4)
    pub = connected(ctx, PUB)
    pub.publish(base + "x", b"overlap", qos=1)
    ctx.wait_for(
        sub, "the message", lambda: sub.delivered([b"overlap"]) and sub.settled and pub.settled
    )
    ctx.quiet()




# -- No Local -------------------------------------------------------------------------------


def _no_local(ctx: CheckContext) -> None:
    topic = ctx.topic()
    own = subscriber(ctx, SUB, Subscription(filter=topic, qos=1, no_local=True))
    other = connected(ctx, PUB)
    own.publish(topic, b"own", qos=1)
    other.publish(topic, b"other", qos=1)
    ctx.wait_for(
        own, "the other client's message",
        lambda: own.delivered([b"other"]) and own.settled and other.settled,
    )  # fmt: skip
    ctx.quiet()




# -- Retain As Published --------------------------------------------------------------------


def _retain_as_published(flag: bool) -> Run:
    def run(ctx: CheckContext) -> None:
        topic = ctx.topic()
        clear_retained(ctx, topic)
        sub = subscriber(ctx, SUB, Subscription(filter=topic, qos=1, retain_as_published=flag))
        pub = connected(ctx, PUB)
        pub.publish(topic, b"retained", qos=1, retain=True)
        ctx.wait_for(
            sub, "the message",
            lambda: sub.delivered([b"retained"]) and sub.settled and pub.settled,
        )  # fmt: skip
        ctx.quiet()

    return run




# -- Retain Handling ------------------------------------------------------------------------


def _retain_handling(handling: int) -> Run:
    """A retained message, then the same subscription made twice with Retain Handling
    ``handling``."""

    def run(ctx: CheckContext) -> None:
        topic = ctx.topic()
        clear_retained(ctx, topic)
        pub = connected(ctx, PUB)
        pub.publish(topic, b"retained", qos=1, retain=True)
        ctx.wait_for(pub, "the publisher's flow complete", lambda: pub.settled)
        wanted = Subscription(filter=topic, qos=1, retain_handling=handling)
        sub = subscriber(ctx, SUB, wanted)
        ctx.quiet()
        sub.subscribe(wanted)
        ctx.quiet()

    return run




_HANDLING = {
    0: ("MQTT-3.3.1-9", (1, 1), "sent at every subscribe"),
    1: ("MQTT-3.3.1-10", (1, 0), "sent only when the subscription is new"),
    2: ("MQTT-3.3.1-11", (0, 0), "never sent at subscribe"),
}




def _props(**kwargs: Any) -> PublishProperties:
    return PublishProperties(**kwargs)


CHECKS: tuple[Check, ...] = (
    _check(
        "forward.payload-format-indicator",
        "Payload Format Indicator 1 passed on unchanged",
        ("MQTT-3.3.2-4",),
        _properties(b"pfi", _props(payload_format_indicator=1)),
    ),
    _check(
        "forward.content-type",
        "Content Type passed on unchanged",
        ("MQTT-3.3.2-20",),
        _properties(b"ct", _props(content_type="application/x-pubproof; v=5")),
    ),
    _check(
        "forward.response-topic",
        "Response Topic passed on unchanged",
        ("MQTT-3.3.2-15",),
        _properties(b"rt", _props(response_topic="pubproof/reply/\u00e9")),
    ),
    _check(
        "forward.correlation-data",
        "Correlation Data passed on unchanged",
        ("MQTT-3.3.2-16",),
        _properties(b"cd", _props(correlation_data=bytes(range(0, 256, 17)))),
    ),
    _check(
        "forward.user-properties",
        "User Properties passed on unchanged and in order (a name repeated)",
        ("MQTT-3.3.2-17", "MQTT-3.3.2-18"),
        _properties(b"up", _props(user_properties=(("z", "1"), ("a", "2"), ("z", "3"), ("m", "")))),
    ),
    _check(
        "forward.message-expired",
        "a message whose Message Expiry Interval (1 s) passed while the subscriber was away "
        "is not delivered",
        ("MQTT-3.3.2-5",),
        _expiry(1, EXPIRED_WAIT),
        extra=EXPIRED_WAIT,
    ),
    _check(
        "forward.message-expiry-reduced",
        "the forwarded Message Expiry Interval is the sent one less the time waited",
        ("MQTT-3.3.2-6",),
        _expiry(REDUCED_FROM, REDUCED_WAIT),
        extra=REDUCED_WAIT,
    ),
    _check(
        "forward.subscription-identifier",
        "the Subscription Identifier of the subscription is sent with the message",
        ("MQTT-3.3.4-3",),
        _subscription_identifier,
    ),
    _check(
        "forward.subscription-identifiers-overlap",
        "two overlapping subscriptions (identifiers 3 and 4): every identifier delivered",
        ("MQTT-3.3.4-3", "MQTT-3.3.4-4", "MQTT-3.3.4-5"),
        _overlapping_identifiers,
    ),
    _check(
        "forward.no-local",
        "No Local: the subscriber's own messages are not sent back to it",
        ("MQTT-3.8.3-3",),
        _no_local,
    ),
    _check(
        "retain.as-published-0",
        "Retain As Published 0: a retained message is forwarded with RETAIN clear",
        ("MQTT-3.3.1-12",),
        _retain_as_published(False),
    ),
    _check(
        "retain.as-published-1",
        "Retain As Published 1: a retained message is forwarded with RETAIN set",
        ("MQTT-3.3.1-13",),
        _retain_as_published(True),
    ),
    *(
        _check(
            f"retain.handling-{handling}",
            f"Retain Handling {handling}: the retained message {_HANDLING[handling][2]}",
            (_HANDLING[handling][0],),
            _retain_handling(handling),
        )
        for handling in (0, 1, 2)
    ),
)
