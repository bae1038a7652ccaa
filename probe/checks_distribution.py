"""Distribution checks: what the broker does with the messages it takes, across its
clients, each judged by the distribution judge alone (:mod:`pubproof.judge.distribution`,
through :func:`pubproof.probe.check.judge`), in every edition.

The checks exercise each forwarding rule across its cases rather than once: every pair of
published and granted QoS [MQTT-3.8.4-6], overlapping subscriptions with each pair of
granted QoS [MQTT-3.3.5-1], a client that never subscribed, retained messages of each
QoS for a new subscription [MQTT-3.3.1-6] [MQTT-3.3.1-8], the same filter subscribed again
[MQTT-3.8.4-3], a subscription deleted [MQTT-3.10.4-2], the order of one publisher's
messages [MQTT-4.6.0-6], and what follows a publication the broker must refuse. A check
runs its scenario and says nothing itself: the verdict is the distribution judge's (with
the wire, link and close judges every check has), which knows what each client is owed.
"""

from __future__ import annotations

import contextlib

from pubproof.judge import packets as control
from pubproof.judge.findings import Finding
from pubproof.model import distribution_rules as D
from pubproof.model import distribution_rules50 as D50
from pubproof.model.distribution_rules import cite
from pubproof.model.editions import Edition
from pubproof.model.rules import Rule
from pubproof.probe.check import Check, Rules, Run
from pubproof.probe.client import Client
from pubproof.probe.context import CheckContext
from pubproof.probe.steps import clear_retained, connected, observe, subscriber
from pubproof.probe.view import View

PUB, SUB, OTHER = "pub", "sub", "other"


def by_distribution(view: View) -> list[Finding]:
    """A check whose verdict is the distribution judge's: it adds nothing of its own."""
    return []


def _rules(*rules: Rule) -> Rules:
    """The ids of those of the model's rules that apply in each edition (3.1: its own id
    where it has one; an edition's own rule beside another's, as 5.0's replacing a
    subscription beside 3.1.1's)."""

    def ids(edition: Edition) -> tuple[str, ...]:
        found: list[str] = []
        for rule in rules:
            with contextlib.suppress(KeyError):
                found.append(cite(rule, edition))
        return tuple(dict.fromkeys(found))

    return ids


def _check(cid: str, title: str, rules: Rules, run: Run) -> Check:
    return Check(id=cid, title=title, rules=rules, run=run, judge=by_distribution,
                 distribution=True)  # fmt: skip


def _settle(ctx: CheckContext, *clients: Client) -> None:
    """Every flow of the clients complete, then listen for anything more."""
    ctx.wait_for(clients[0], "every flow complete", lambda: all(c.settled for c in clients))
    ctx.quiet()


# -- the QoS of a copy ----------------------------------------------------------------------


def _qos(published: int, requested: int) -> Run:
    def run(ctx: CheckContext) -> None:
        topic, payload = ctx.topic(), f"qos{published}-to-{requested}".encode()
        sub = subscriber(ctx, SUB, (topic, requested))
        pub = connected(ctx, PUB)
        pub.publish(topic, payload, qos=published)
        ctx.wait_for(sub, "the message", lambda: sub.delivered([payload]), closed_ok=True)
        _settle(ctx, sub, pub)

    return run


MIN_QOS = _rules(D.MIN_QOS, D.TO_MATCHING_SESSIONS)


# -- overlapping subscriptions --------------------------------------------------------------


def _overlap(first: int, second: int) -> Run:
    def run(ctx: CheckContext) -> None:
        base = ctx.topic("")
        topic, payload = base + "x", b"overlap"
        sub = subscriber(ctx, SUB, (base + "+", first), (base + "#", second))
        pub = connected(ctx, PUB)
        pub.publish(topic, payload, qos=2)
        ctx.wait_for(sub, "the message", lambda: sub.delivered([payload]))
        _settle(ctx, sub, pub)

    return run


OVERLAP = _rules(D.OVERLAP)


# -- who gets nothing ---------------------------------------------------------------------------


def _not_subscribed(ctx: CheckContext) -> None:
    topic, payload = ctx.topic(), b"only-for-sub"
    other = connected(ctx, OTHER)
    sub = subscriber(ctx, SUB, (topic, 1))
    pub = connected(ctx, PUB)
    pub.publish(topic, payload, qos=1)
    ctx.wait_for(sub, "the message", lambda: sub.delivered([payload]))
    _settle(ctx, sub, pub, other)


def _unsubscribed(ctx: CheckContext) -> None:
    topic = ctx.topic()
    sub = subscriber(ctx, SUB, (topic, 1))
    pub = connected(ctx, PUB)
    pub.publish(topic, b"before", qos=1)
    ctx.wait_for(sub, "the first message", lambda: sub.delivered([b"before"]))
    _settle(ctx, sub, pub)
    packet_id = 0x7F00
    edition = Edition.V50 if sub.v50 else Edition.V311
    sub.send_raw(control.unsubscribe(packet_id, [topic], edition=edition))
    ctx.wait_for(sub, "UNSUBACK", lambda: sub.count("UNSUBACK", packet_id=packet_id) > 0)
    pub.publish(topic, b"after", qos=1)
    _settle(ctx, sub, pub)


# -- retained messages ------------------------------------------------------------------------


def _retained(qos: int) -> Run:
    def run(ctx: CheckContext) -> None:
        topic, payload = ctx.topic(), f"retained-qos{qos}".encode()
        clear_retained(ctx, topic)
        pub = connected(ctx, PUB)
        pub.publish(topic, payload, qos=qos, retain=True)
        if qos:
            ctx.wait_for(pub, "the publisher's flow complete", lambda: pub.settled)
        else:
            pub.ping()  # the broker reads in order: PINGRESP means it has read the PUBLISH
        late = subscriber(ctx, SUB, (topic, 2))
        ctx.quiet()
        _settle(ctx, late, pub)

    return run


def _resubscribe(ctx: CheckContext) -> None:
    """The same filter again, at a lower QoS: the new subscription replaces the old one,
    the retained message is sent again, and a message after it comes at the new QoS."""
    topic = ctx.topic()
    clear_retained(ctx, topic)
    pub = connected(ctx, PUB)
    pub.publish(topic, b"kept", qos=1, retain=True)
    ctx.wait_for(pub, "the publisher's flow complete", lambda: pub.settled)
    sub = subscriber(ctx, SUB, (topic, 2))
    ctx.wait_for(sub, "the retained message", lambda: sub.delivered([b"kept"]))
    sub.subscribe((topic, 0))
    ctx.quiet()
    pub.publish(topic, b"after", qos=2)
    ctx.wait_for(sub, "the next message", lambda: sub.delivered([b"kept", b"after"]))
    _settle(ctx, sub, pub)


# -- order, and what follows a refused publication -------------------------------------------------

ORDERED = 8


def _order(ctx: CheckContext) -> None:
    topic = ctx.topic()
    payloads = [f"m{n}".encode() for n in range(ORDERED)]
    sub = subscriber(ctx, SUB, (topic, 1))
    pub = connected(ctx, PUB)
    for payload in payloads:
        pub.publish(topic, payload, qos=1)
    ctx.wait_for(sub, f"all {ORDERED} messages", lambda: sub.delivered(payloads))
    _settle(ctx, sub, pub)


def _after_refused(ctx: CheckContext) -> None:
    """A PUBLISH whose topic name holds a wildcard (which the broker must refuse by
    closing), then the same client again with a good message: only that one is
    delivered."""
    topic = ctx.topic()
    sub = subscriber(ctx, SUB, (ctx.topic("#"), 1))
    pub = connected(ctx, PUB)
    bad = topic.encode() + b"/+"
    payload = b"\x00refused" if pub.v50 else b"refused"  # 5.0: a Property Length of 0 first
    body = len(bad).to_bytes(2, "big") + bad + payload
    pub.send_raw(bytes((0x30, len(body))) + body, case=True)
    observe(ctx, pub)
    pub.reconnect(clean=True)
    pub.publish(topic, b"accepted", qos=1)
    ctx.wait_for(sub, "the accepted message", lambda: sub.delivered([b"accepted"]))
    _settle(ctx, sub, pub)


CHECKS: tuple[Check, ...] = (
    *(
        _check(
            f"dist.qos-{published}-granted-{requested}",
            f"a QoS {published} message to a subscription of QoS {requested}: delivered at the "
            "lower of the two",
            MIN_QOS, _qos(published, requested),
        )
        for published in (0, 1, 2)
        for requested in (0, 1, 2)
    ),
    *(
        _check(
            f"dist.overlap-{first}-{second}",
            f"overlapping subscriptions of QoS {first} and {second}: one copy at the higher, or "
            "one per subscription",
            OVERLAP, _overlap(first, second),
        )
        for first, second in ((0, 1), (0, 2), (1, 2))
    ),
    _check(
        "dist.not-subscribed",
        "a connected client that never subscribed gets nothing",
        _rules(D.TOPIC_MATCHES_FILTER, D.TO_MATCHING_SESSIONS),
        _not_subscribed,
    ),
    _check(
        "dist.unsubscribed",
        "after UNSUBACK no new message is delivered for the deleted subscription",
        _rules(D.UNSUBSCRIBE_STOP, D.TO_MATCHING_SESSIONS),
        _unsubscribed,
    ),
    *(
        _check(
            f"dist.retained-qos{qos}",
            f"a retained QoS {qos} message goes to a new subscription with RETAIN set",
            _rules(D.RETAIN_ON_SUBSCRIBE, D50.RETAIN_HANDLING_0, D.RETAIN_FLAG_NEW,
                   D50.RETAIN_FLAG_SUBSCRIBE, D.MIN_QOS),
            _retained(qos),
        )
        for qos in (0, 1, 2)
    ),
    _check(
        "dist.resubscribe",
        "the same filter subscribed again at a lower QoS replaces the subscription and sends "
        "the retained message again",
        _rules(D.REPLACE_311, D50.REPLACE, D.MIN_QOS),
        _resubscribe,
    ),
    _check(
        "dist.order",
        f"{ORDERED} QoS 1 messages from one client on one topic arrive in the order sent",
        _rules(D.ORDER_PER_PUBLISHER),
        _order,
    ),
    _check(
        "dist.after-refused",
        "after a PUBLISH the broker must refuse (a wildcard in its topic name), the next "
        "good message from the same client is delivered, the refused one never",
        _rules(D.TO_MATCHING_SESSIONS),
        _after_refused,
    ),
)
