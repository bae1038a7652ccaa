"""Flow checks: QoS 0, 1 and 2 end to end, counted at the subscriber; duplicates of a QoS 2
PUBLISH before PUBREL; PUBREL for an identifier the broker does not hold; DUP as forwarded.

The publisher and the subscriber are the reference Session; what the broker owes each of
them is judged by the flow tables (:mod:`pubproof.judge.link`), the deliveries by
:mod:`pubproof.probe.expect`.
"""

from __future__ import annotations

import dataclasses

from pubproof.judge.findings import Finding
from pubproof.probe.check import Check, Judge, Run, fixed, per_edition
from pubproof.probe.context import CheckContext
from pubproof.probe.expect import delivered, effective_qos
from pubproof.probe.findings import passed
from pubproof.probe.steps import connected, subscriber
from pubproof.probe.view import View
from pubproof.reference.packets import PubRec, PubRel

PUB, SUB = "pub", "sub"


def _flow(qos: int) -> Run:
    def run(ctx: CheckContext) -> None:
        topic, payload = ctx.topic(), f"qos{qos}".encode()
        sub = subscriber(ctx, SUB, (topic, 2))
        pub = connected(ctx, PUB)
        pub.publish(topic, payload, qos=qos)
        ctx.wait_for(
            sub,
            "the message, every flow complete",
            lambda: sub.delivered([payload]) and sub.settled and pub.settled,
        )
        ctx.quiet()

    return run


def each_once(view: View) -> list[Finding]:
    """Every message the publisher published reached the subscriber as its QoS says."""
    findings: list[Finding] = []
    for message in view.published(PUB):
        qos = effective_qos(view, SUB, message["qos"])
        findings += delivered(view, SUB, message, qos, publisher=PUB)
    return findings


def _method(ctx: CheckContext) -> None:
    """QoS 2, the publisher withholding PUBREL for a while: does the broker forward first?"""
    topic, payload = ctx.topic(), b"method"
    sub = subscriber(ctx, SUB, (topic, 2))
    pub = connected(ctx, PUB)
    pub.hold = lambda p: isinstance(p, PubRec)
    pub.publish(topic, payload, qos=2)
    ctx.wait_for(pub, "PUBREC", lambda: bool(pub.held))
    ctx.quiet()
    pub.release()
    ctx.wait_for(
        sub,
        "the message, every flow complete",
        lambda: sub.delivered([payload]) and sub.settled and pub.settled,
    )
    ctx.quiet()


def _judge_method(view: View) -> list[Finding]:
    findings = each_once(view)
    forwarded = [
        i
        for i, e in enumerate(view.entries)
        if e.get("client") == SUB and e.get("type") == "PUBLISH"
    ]
    released = [
        i
        for i, e in enumerate(view.entries)
        if e.get("client") == PUB and e.get("type") == "PUBREL" and e.get("dir") == "to-broker"
    ]
    if forwarded and released:
        if forwarded[0] < released[0]:
            method = "the broker forwards on PUBLISH, before PUBREL (Method B)"
        else:
            method = "the broker forwards on PUBREL (Method A)"
        findings.append(passed(method, "MQTT-4.3.3-2"))
    return findings


def _duplicates(copies: int) -> Run:
    """QoS 2 PUBLISH and ``copies`` duplicates (DUP 1, same identifier) before PUBREL."""

    def run(ctx: CheckContext) -> None:
        topic, payload = ctx.topic(), f"dup{copies}".encode()
        sub = subscriber(ctx, SUB, (topic, 2))
        pub = connected(ctx, PUB)
        pub.hold = lambda p: isinstance(p, PubRec)
        message = pub.publish(topic, payload, qos=2)
        if copies == 1:  # after the broker's PUBREC
            ctx.wait_for(pub, "PUBREC", lambda: bool(pub.held))
        for _ in range(copies):
            pub.send(dataclasses.replace(message, dup=True))
        ctx.wait_for(pub, f"{copies + 1} PUBREC", lambda: len(pub.held) > copies)
        pub.release()
        ctx.wait_for(
            sub,
            "the message, every flow complete",
            lambda: sub.delivered([payload]) and sub.settled and pub.settled,
        )
        ctx.quiet()

    return run


UNKNOWN_ID = 4242


def _pubrel_unknown(ctx: CheckContext) -> None:
    pub = connected(ctx, PUB)
    pub.send(PubRel(packet_id=UNKNOWN_ID))
    ctx.wait_for(
        pub, f"PUBCOMP {UNKNOWN_ID}", lambda: pub.count("PUBCOMP", packet_id=UNKNOWN_ID) > 0
    )
    ctx.quiet()


def _judge_pubrel_unknown(view: View) -> list[Finding]:
    if view.packets(PUB, "PUBCOMP"):
        return [
            passed(f"PUBCOMP {UNKNOWN_ID} for a PUBREL of an identifier not held", "MQTT-4.3.3-2")
        ]
    return []  # the flow judge reports the missing PUBCOMP


def _dup_resent(ctx: CheckContext) -> None:
    """A QoS 1 PUBLISH sent again with DUP 1 before its PUBACK (a re-delivery attempt)."""
    topic, payload = ctx.topic(), b"dup-resent"
    sub = subscriber(ctx, SUB, (topic, 2))
    pub = connected(ctx, PUB)
    message = pub.publish(topic, payload, qos=1)
    pub.send(dataclasses.replace(message, dup=True))
    ctx.wait_for(
        sub,
        "the message, every flow complete",
        lambda: sub.delivered([payload]) and pub.settled and pub.count("PUBACK") >= 2,
    )
    ctx.quiet()


def _judge_dup(view: View) -> list[Finding]:
    findings = each_once(view)
    forwarded = view.packets(SUB, "PUBLISH")
    if forwarded and not any(e["dup"] for e in forwarded):
        findings.append(
            passed("forwarded with DUP 0: the publisher's DUP is not propagated", "MQTT-3.3.1-3")
        )
    return findings


def _check(cid: str, title: str, rules: tuple[str, ...], run: Run, judge: Judge) -> Check:
    return Check(id=cid, title=title, rules=fixed(*rules), run=run, judge=judge)


FLOW_RULES = ("MQTT-3.3.4-1", "MQTT-4.5.0-1", "MQTT-2.3.1-6")


def _end_to_end(qos: int, title: str, v311: tuple[str, ...], v50: tuple[str, ...]) -> Check:
    return Check(id=f"flow.qos{qos}", title=title, rules=per_edition(v311, v50),
                 run=_flow(qos), judge=each_once)  # fmt: skip


#: QoS 0, 1 and 2 end to end: one check each in every edition (the 5.0 catalog takes them
#: too), the same scenario and judge, the edition's own rule ids
END_TO_END: tuple[Check, ...] = (
    _end_to_end(
        0, "QoS 0 end to end",
        ("MQTT-4.3.1-1", "MQTT-3.3.4-1", "MQTT-4.5.0-1", "MQTT-3.8.4-6"),
        ("MQTT-4.3.1-1", "MQTT-3.3.4-1", "MQTT-4.5.0-1", "MQTT-3.8.4-8"),
    ),
    _end_to_end(
        1, "QoS 1 end to end",
        ("MQTT-4.3.2-1", "MQTT-4.3.2-2", *FLOW_RULES),
        ("MQTT-4.3.2-2", "MQTT-4.3.2-4", "MQTT-3.3.4-1", "MQTT-4.5.0-1"),
    ),
    _end_to_end(
        2, "QoS 2 end to end: exactly one delivery",
        ("MQTT-4.3.3-1", "MQTT-4.3.3-2", *FLOW_RULES),
        ("MQTT-4.3.3-2", "MQTT-4.3.3-8", "MQTT-4.3.3-11", "MQTT-4.3.3-10", "MQTT-4.5.0-1"),
    ),
)  # fmt: skip

CHECKS: tuple[Check, ...] = (
    *END_TO_END,
    _check(
        "flow.qos2-method",
        "QoS 2: forwarded before or after PUBREL (Method A or B)",
        ("MQTT-4.3.3-2",),
        _method,
        _judge_method,
    ),
    _check(
        "qos2.duplicate-before-pubrel",
        "QoS 2 PUBLISH again (DUP 1) after PUBREC, before PUBREL",
        ("MQTT-4.3.3-2", "MQTT-3.3.4-1"),
        _duplicates(1),
        each_once,
    ),
    _check(
        "qos2.duplicates-before-pubrel",
        "QoS 2 PUBLISH and three duplicates (DUP 1) at once, before PUBREL",
        ("MQTT-4.3.3-2", "MQTT-3.3.4-1"),
        _duplicates(3),
        each_once,
    ),
    _check(
        "qos2.pubrel-unknown-id",
        "PUBREL for a packet identifier the broker does not hold",
        ("MQTT-4.3.3-2",),
        _pubrel_unknown,
        _judge_pubrel_unknown,
    ),
    _check(
        "forward.dup-not-propagated",
        "a QoS 1 PUBLISH re-sent with DUP 1: DUP as forwarded",
        ("MQTT-3.3.1-3", "MQTT-4.3.2-2"),
        _dup_resent,
        _judge_dup,
    ),
)
