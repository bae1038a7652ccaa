"""Subscriptions: overlapping filters and the maximum QoS; the QoS of a delivery is the
lower of the published QoS and the granted one."""

from __future__ import annotations

from pubproof.judge.findings import Finding
from pubproof.probe.check import Check, fixed
from pubproof.probe.context import CheckContext
from pubproof.probe.expect import EFFECTIVE_QOS, copies, delivered, label
from pubproof.probe.findings import missing, passed, tolerated, violation
from pubproof.probe.steps import connected, subscriber
from pubproof.probe.view import View

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


def _judge_overlap(view: View) -> list[Finding]:
    published = view.published(PUB)
    granted = [g for g in view.granted(SUB) if g <= 2]
    if not published or len(granted) < 2:
        return []
    message = published[0]
    highest = min(message["qos"], max(granted))
    got = copies(view, SUB, message)
    if not got:
        return [missing(f"{SUB} never got {label(message)}", OVERLAP)]
    at_highest = [d for d in got if d["qos"] == highest]
    if not at_highest:
        qos = ", ".join(str(d["qos"]) for d in got)
        return [violation(f"{SUB} got it at QoS {qos}, not at the highest, {highest}", OVERLAP)]
    allowed = {min(message["qos"], g) for g in granted}
    findings: list[Finding] = []
    for d in got:
        if d["qos"] not in allowed:
            findings.append(violation(f"a copy at QoS {d['qos']}, no subscription's", OVERLAP))
    if len(at_highest) > 1 and highest == 2:
        findings.append(violation(f"{len(at_highest)} copies at QoS 2", OVERLAP, "MQTT-4.3.3-2"))
    if len(got) > len(granted):
        findings.append(violation(f"{len(got)} copies for {len(granted)} subscriptions", OVERLAP))
    elif len(got) > 1:
        findings.append(tolerated(f"{len(got)} copies, one per matching subscription at its QoS "
                                  "(the broker MAY send them)", OVERLAP))  # fmt: skip
    else:
        findings.append(passed(f"one copy, at the highest QoS of the subscriptions ({highest})"))
    return findings


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

    def judge(view: View) -> list[Finding]:
        published = view.published(PUB)
        granted = view.granted(SUB)
        if not published or not granted:
            return []
        qos = min(published[0]["qos"], granted[0]) if granted[0] <= 2 else published[0]["qos"]
        return delivered(view, SUB, published[0], qos, publisher=PUB)

    return Check(
        id=f"subscribe.qos2-to-qos{requested}",
        title=f"a QoS 2 message to a subscription of maximum QoS {requested}",
        rules=fixed(EFFECTIVE_QOS),
        run=run,
        judge=judge,
    )


CHECKS: tuple[Check, ...] = (
    Check(
        id="subscribe.overlap-max-qos",
        title="overlapping subscriptions (QoS 1 and 2): delivered at the maximum QoS",
        rules=fixed(OVERLAP),
        run=_overlap,
        judge=_judge_overlap,
    ),
    _downgraded(0),
    _downgraded(1),
)
