"""Subscriptions: overlapping filters and the maximum QoS; the QoS of a delivery is the
lower of the published QoS and the granted one. The verdicts are the distribution judge's
(:mod:`pubproof.judge.distribution`); :mod:`.checks_distribution` has every pair of QoS."""

from __future__ import annotations

from pubproof.probe.check import Check, fixed
from pubproof.probe.checks_distribution import by_distribution
from pubproof.probe.context import CheckContext
from pubproof.probe.expect import EFFECTIVE_QOS
from pubproof.probe.steps import connected, subscriber

PUB, SUB = "pub", "sub"

#: [MQTT-3.3.5-1] "... the Server MUST deliver the message to the Client respecting the
#: maximum QoS of all the matching subscriptions. In addition, the Server MAY deliver
#: further copies of the message, one for each additional matching subscription and
#: respecting the subscription's QoS in each case."
OVERLAP = "MQTT-3.3.5-1"


def _overlap(ctx: CheckContext) -> None:
    base = ctx.topic("")
    topic, payload = base + "x", b"overlap"
    sub = subscriber(ctx, SUB, (base + "+", 1), (base + "#", 2))
    pub = connected(ctx, PUB)
    pub.publish(topic, payload, qos=2)
    ctx.wait_for(
        sub, "the message, every flow complete",
        lambda: sub.delivered([payload]) and sub.settled and pub.settled,
    )  # fmt: skip
    ctx.quiet()


def _downgraded(requested: int) -> Check:
    def run(ctx: CheckContext) -> None:
        topic, payload = ctx.topic(), f"to-qos{requested}".encode()
        sub = subscriber(ctx, SUB, (topic, requested))
        pub = connected(ctx, PUB)
        pub.publish(topic, payload, qos=2)
        ctx.wait_for(
            sub, "the message, every flow complete",
            lambda: sub.delivered([payload]) and sub.settled and pub.settled,
        )  # fmt: skip
        ctx.quiet()

    return Check(
        id=f"subscribe.qos2-to-qos{requested}",
        title=f"a QoS 2 message to a subscription of maximum QoS {requested}",
        rules=fixed(EFFECTIVE_QOS),
        run=run,
        judge=by_distribution,
        distribution=True,
    )


CHECKS: tuple[Check, ...] = (
    Check(
        id="subscribe.overlap-max-qos",
        title="overlapping subscriptions (QoS 1 and 2): delivered at the maximum QoS",
        rules=fixed(OVERLAP),
        run=_overlap,
        judge=by_distribution,
        distribution=True,
    ),
    _downgraded(0),
    _downgraded(1),
)
