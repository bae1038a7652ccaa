"""Packet identifiers reused after their flow completed: a new message, delivered anew.

[MQTT-4.3.2-2] "After it has sent a PUBACK Packet the Receiver MUST treat any incoming
PUBLISH packet that contains the same Packet Identifier as being a new publication,
irrespective of the setting of its DUP flag." [MQTT-4.3.3-2] likewise after PUBCOMP.
"""

from __future__ import annotations

from pubproof.judge.findings import Finding
from pubproof.probe.check import Check, fixed
from pubproof.probe.context import CheckContext
from pubproof.probe.expect import delivered, effective_qos
from pubproof.probe.findings import passed
from pubproof.probe.steps import connected, subscriber
from pubproof.probe.view import View
from pubproof.reference.session import Session

PUB, SUB = "pub", "sub"


def _reuse(qos: int) -> Check:
    def run(ctx: CheckContext) -> None:
        topic = ctx.topic()
        sub = subscriber(ctx, SUB, (topic, 2))
        pub = connected(ctx, PUB)
        first = pub.publish(topic, b"first", qos=qos)
        ctx.wait_for(pub, "the first flow complete", lambda: pub.settled)
        assert first.packet_id is not None
        # The session allocates the next identifier after the last used: start it over, so
        # the identifier just freed is the one used again (Session's own JSON form).
        pub.session = Session.from_json({**pub.session.to_json(), "last_id": first.packet_id - 1})
        pub.publish(topic, b"second", qos=qos)
        ctx.wait_for(
            sub,
            "both messages, every flow complete",
            lambda: sub.delivered([b"first", b"second"]) and sub.settled and pub.settled,
        )
        ctx.quiet()

    def judge(view: View) -> list[Finding]:
        published = view.published(PUB)
        findings: list[Finding] = []
        for message in published:
            findings += delivered(
                view, SUB, message, effective_qos(view, SUB, message["qos"]), publisher=PUB
            )
        if len(published) == 2 and published[0]["packet_id"] == published[1]["packet_id"]:
            findings.append(passed(f"packet identifier {published[0]['packet_id']} reused"))
        return findings

    rule = "MQTT-4.3.2-2" if qos == 1 else "MQTT-4.3.3-2"
    return Check(
        id=f"packet-id.reuse-qos{qos}",
        title=f"a QoS {qos} packet identifier reused after its flow completed",
        rules=fixed(rule, "MQTT-2.3.1-3"),
        run=run,
        judge=judge,
    )


CHECKS: tuple[Check, ...] = (_reuse(1), _reuse(2))
