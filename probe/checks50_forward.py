"""MQTT 5.0 forwarding checks: the PUBLISH properties a broker passes on unchanged
(Payload Format Indicator, Content Type, Response Topic, Correlation Data, User
Properties in order), Message Expiry (an expired message is not delivered, the forwarded
interval is reduced by the time waited), Subscription Identifiers, No Local, Retain As
Published and Retain Handling 0, 1 and 2.

The deliveries read here are the 5.0 link judge's (:mod:`pubproof.judge.link50`): the
resolved topic name and the properties as forwarded.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pubproof.judge.findings import Finding
from pubproof.probe.check import Check, Judge, Run, fixed
from pubproof.probe.client import Subscription
from pubproof.probe.context import CheckContext
from pubproof.probe.evidence import Entry, received, sent
from pubproof.probe.expect import copies, delivered, label
from pubproof.probe.findings import passed, violation
from pubproof.probe.steps import clear_retained, connected, end_session, subscriber
from pubproof.probe.view import View
from pubproof.reference.properties import PublishProperties

PUB, SUB = "pub", "sub"
KEEP_SESSION = {"session_expiry_interval": 30}
#: how long the expiry checks wait (the broker's clock may count whole seconds)
EXPIRED_WAIT = 2.2
REDUCED_WAIT = 1.2
REDUCED_FROM = 60


def _check(
    cid: str, title: str, rules: tuple[str, ...], run: Run, judge: Judge, extra: float = 0.0
) -> Check:
    return Check(id=cid, title=title, rules=fixed(*rules), run=run, judge=judge, extra=extra)


def sent_publish(view: View, client: str, payload: bytes) -> Entry | None:
    """The first PUBLISH ``client`` sent with ``payload``."""
    for entry in view.packets(client, "PUBLISH", "to-broker"):
        if entry.get("payload_hex") == payload.hex() and "error" not in entry:
            return entry
    return None


def got(view: View, client: str, payload: bytes) -> list[Mapping[str, Any]]:
    """The deliveries at ``client`` with ``payload``."""
    return [d for d in view.deliveries(client) if d["payload_hex"] == payload.hex()]


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


def _unchanged(key: str, name: str, payload: bytes, *rules: str) -> Judge:
    def judge(view: View) -> list[Finding]:
        message = sent_publish(view, PUB, payload)
        if message is None:
            return []
        findings = delivered(view, SUB, message, 1, publisher=PUB)  # type: ignore[arg-type]
        want = message.get("properties", {}).get(key)
        for delivery in got(view, SUB, payload):
            have = delivery.get("properties", {}).get(key)
            if have == want:
                findings.append(passed(f"{name} forwarded unchanged: {have!r}", *rules))
            else:
                what = f"{name} forwarded as {have!r}; {PUB} sent {want!r}"
                findings.append(violation(what, *rules))
        return findings

    return judge


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


def _judge_expired(view: View) -> list[Finding]:
    lasting = sent_publish(view, PUB, b"lasting")
    expiring = sent_publish(view, PUB, b"expiring")
    if lasting is None or expiring is None:
        return []
    findings = delivered(view, SUB, lasting, 1, publisher=PUB)  # type: ignore[arg-type]
    rule = "MQTT-3.3.2-5"
    if copies(view, SUB, expiring):  # type: ignore[arg-type]
        findings.append(violation(f"{SUB} got {label(expiring)} after it expired", rule))  # type: ignore[arg-type]
    elif copies(view, SUB, lasting):  # type: ignore[arg-type]
        findings.append(passed(f"{label(expiring)} expired before {SUB} resumed: not sent", rule))  # type: ignore[arg-type]
    return findings


def _judge_reduced(view: View) -> list[Finding]:
    expiring = sent_publish(view, PUB, b"expiring")
    if expiring is None:
        return []
    findings = delivered(view, SUB, expiring, 1, publisher=PUB)  # type: ignore[arg-type]
    forwarded = [
        e for e in view.packets(SUB, "PUBLISH") if e.get("payload_hex") == b"expiring".hex()
    ]
    rule = "MQTT-3.3.2-6"
    for entry in forwarded:
        waited = entry["t"] - expiring["t"]
        have = entry.get("properties", {}).get("message_expiry_interval")
        expected = REDUCED_FROM - waited
        # the interval is in whole seconds: the broker may round either way
        if have is not None and math.floor(expected) - 1 <= have <= math.ceil(expected):
            note = f"forwarded with Message Expiry Interval {have} after {waited:.1f} s"
            findings.append(passed(f"{note} (sent {REDUCED_FROM})", rule))
        else:
            note = f"forwarded with Message Expiry Interval {have} after {waited:.1f} s"
            findings.append(
                violation(f"{note}: the model says {REDUCED_FROM} - {waited:.1f}", rule)
            )
    return findings


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


def _judge_subscription_identifier(view: View) -> list[Finding]:
    message = sent_publish(view, PUB, b"identified")
    if message is None:
        return []
    findings = delivered(view, SUB, message, 1, publisher=PUB)  # type: ignore[arg-type]
    for delivery in got(view, SUB, b"identified"):
        ids = delivery.get("properties", {}).get("subscription_identifiers", [])
        if ids == [7]:
            findings.append(passed("forwarded with Subscription Identifier 7", "MQTT-3.3.4-3"))
        else:
            what = f"forwarded with Subscription Identifier(s) {ids}; the subscription has 7"
            findings.append(violation(what, "MQTT-3.3.4-3"))
    return findings


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


def _judge_overlapping(view: View) -> list[Finding]:
    message = sent_publish(view, PUB, b"overlap")
    if message is None:
        return []
    deliveries = got(view, SUB, b"overlap")
    if not deliveries:
        return delivered(view, SUB, message, 1, publisher=PUB)  # type: ignore[arg-type]
    ids = [sorted(d.get("properties", {}).get("subscription_identifiers", [])) for d in deliveries]
    if len(deliveries) == 1:
        if ids[0] == [3, 4]:
            return [passed("one copy with Subscription Identifiers 3 and 4", "MQTT-3.3.4-4")]
        return [violation(f"one copy with Subscription Identifier(s) {ids[0]}; the "
                          "subscriptions have 3 and 4", "MQTT-3.3.4-4")]  # fmt: skip
    if sorted(ids) == [[3], [4]]:
        return [passed("one copy per subscription, each with its identifier", "MQTT-3.3.4-5")]
    return [violation(f"{len(deliveries)} copies with Subscription Identifiers {ids}",
                      "MQTT-3.3.4-5")]  # fmt: skip


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


def _judge_no_local(view: View) -> list[Finding]:
    mine, theirs = sent_publish(view, SUB, b"own"), sent_publish(view, PUB, b"other")
    if mine is None or theirs is None:
        return []
    findings = delivered(view, SUB, theirs, 1, publisher=PUB)  # type: ignore[arg-type]
    if got(view, SUB, b"own"):
        findings.append(violation(f"{SUB} got its own message back (No Local 1)", "MQTT-3.8.3-3"))
    elif got(view, SUB, b"other"):
        findings.append(passed(f"{SUB} did not get its own message (No Local 1)", "MQTT-3.8.3-3"))
    return findings


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


def _judge_retain_as_published(flag: bool) -> Judge:
    rule = "MQTT-3.3.1-13" if flag else "MQTT-3.3.1-12"

    def judge(view: View) -> list[Finding]:
        message = sent_publish(view, PUB, b"retained")
        if message is None:
            return []
        findings = delivered(view, SUB, message, 1, publisher=PUB)  # type: ignore[arg-type]
        for delivery in got(view, SUB, b"retained"):
            state = "set" if delivery["retain"] else "clear"
            what = f"forwarded with RETAIN {state} (Retain As Published {int(flag)})"
            if delivery["retain"] == flag:
                findings.append(passed(what, rule))
            else:
                findings.append(violation(what, rule))
        return findings

    return judge


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


def sent_after_subscribe(view: View) -> list[int]:
    """For each SUBSCRIBE of the subscriber, how many retained copies came after it
    (until the next SUBSCRIBE)."""
    counts: list[int] = []
    for entry in view.entries:
        if entry.get("client") != SUB:
            continue
        if sent(entry) and entry.get("type") == "SUBSCRIBE":
            counts.append(0)
        elif (
            received(entry) and entry.get("type") == "PUBLISH"
            and entry.get("payload_hex") == b"retained".hex() and counts
        ):  # fmt: skip
            counts[-1] += 1
    return counts


_HANDLING = {
    0: ("MQTT-3.3.1-9", (1, 1), "sent at every subscribe"),
    1: ("MQTT-3.3.1-10", (1, 0), "sent only when the subscription is new"),
    2: ("MQTT-3.3.1-11", (0, 0), "never sent at subscribe"),
}


def _judge_retain_handling(handling: int) -> Judge:
    rule, expected, meaning = _HANDLING[handling]

    def judge(view: View) -> list[Finding]:
        counts = sent_after_subscribe(view)
        if len(counts) < 2 or len(view.packets(SUB, "SUBACK")) < 2:
            return []
        shown = f"retained message sent {counts[0]} then {counts[1]} time(s)"
        if tuple(min(c, 1) for c in counts[:2]) == expected:
            return [passed(f"Retain Handling {handling}: {shown}, {meaning}", rule)]
        return [violation(f"Retain Handling {handling}: {shown}; it is {meaning}", rule)]

    return judge


def _props(**kwargs: Any) -> PublishProperties:
    return PublishProperties(**kwargs)


CHECKS: tuple[Check, ...] = (
    _check(
        "forward.payload-format-indicator",
        "Payload Format Indicator 1 passed on unchanged",
        ("MQTT-3.3.2-4",),
        _properties(b"pfi", _props(payload_format_indicator=1)),
        _unchanged("payload_format_indicator", "Payload Format Indicator", b"pfi", "MQTT-3.3.2-4"),
    ),
    _check(
        "forward.content-type",
        "Content Type passed on unchanged",
        ("MQTT-3.3.2-20",),
        _properties(b"ct", _props(content_type="application/x-pubproof; v=5")),
        _unchanged("content_type", "Content Type", b"ct", "MQTT-3.3.2-20"),
    ),
    _check(
        "forward.response-topic",
        "Response Topic passed on unchanged",
        ("MQTT-3.3.2-15",),
        _properties(b"rt", _props(response_topic="pubproof/reply/\u00e9")),
        _unchanged("response_topic", "Response Topic", b"rt", "MQTT-3.3.2-15"),
    ),
    _check(
        "forward.correlation-data",
        "Correlation Data passed on unchanged",
        ("MQTT-3.3.2-16",),
        _properties(b"cd", _props(correlation_data=bytes(range(0, 256, 17)))),
        _unchanged("correlation_data_hex", "Correlation Data", b"cd", "MQTT-3.3.2-16"),
    ),
    _check(
        "forward.user-properties",
        "User Properties passed on unchanged and in order (a name repeated)",
        ("MQTT-3.3.2-17", "MQTT-3.3.2-18"),
        _properties(b"up", _props(user_properties=(("z", "1"), ("a", "2"), ("z", "3"), ("m", "")))),
        _unchanged("user_properties", "User Properties", b"up", "MQTT-3.3.2-17", "MQTT-3.3.2-18"),
    ),
    _check(
        "forward.message-expired",
        "a message whose Message Expiry Interval (1 s) passed while the subscriber was away "
        "is not delivered",
        ("MQTT-3.3.2-5",),
        _expiry(1, EXPIRED_WAIT),
        _judge_expired,
        extra=EXPIRED_WAIT,
    ),
    _check(
        "forward.message-expiry-reduced",
        "the forwarded Message Expiry Interval is the sent one less the time waited",
        ("MQTT-3.3.2-6",),
        _expiry(REDUCED_FROM, REDUCED_WAIT),
        _judge_reduced,
        extra=REDUCED_WAIT,
    ),
    _check(
        "forward.subscription-identifier",
        "the Subscription Identifier of the subscription is sent with the message",
        ("MQTT-3.3.4-3",),
        _subscription_identifier,
        _judge_subscription_identifier,
    ),
    _check(
        "forward.subscription-identifiers-overlap",
        "two overlapping subscriptions (identifiers 3 and 4): every identifier delivered",
        ("MQTT-3.3.4-3", "MQTT-3.3.4-4", "MQTT-3.3.4-5"),
        _overlapping_identifiers,
        _judge_overlapping,
    ),
    _check(
        "forward.no-local",
        "No Local: the subscriber's own messages are not sent back to it",
        ("MQTT-3.8.3-3",),
        _no_local,
        _judge_no_local,
    ),
    _check(
        "retain.as-published-0",
        "Retain As Published 0: a retained message is forwarded with RETAIN clear",
        ("MQTT-3.3.1-12",),
        _retain_as_published(False),
        _judge_retain_as_published(False),
    ),
    _check(
        "retain.as-published-1",
        "Retain As Published 1: a retained message is forwarded with RETAIN set",
        ("MQTT-3.3.1-13",),
        _retain_as_published(True),
        _judge_retain_as_published(True),
    ),
    *(
        _check(
            f"retain.handling-{handling}",
            f"Retain Handling {handling}: the retained message {_HANDLING[handling][2]}",
            (_HANDLING[handling][0],),
            _retain_handling(handling),
            _judge_retain_handling(handling),
        )
        for handling in (0, 1, 2)
    ),
)
