"""MQTT 5.0, the client as receiver: QoS 0, 1 and 2 at the application with the message's
properties as it was handed them (User Properties in their order, Content Type, Payload
Format Indicator, Response Topic, Correlation Data, Message Expiry Interval); Topic Aliases
the server sets and uses, resolved; PUBREL for an identifier the client does not hold
(PUBCOMP 0x92); a QoS 2 PUBLISH re-sent with DUP before PUBREL delivered once; a resumed
session's re-sends.

The flows are the 5.0 link judge's (the client's acknowledgements owed, with their Reason
Codes); what the application was handed is each check's own.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from pubproof.judge.findings import Finding
from pubproof.probe.clients import checks_receiver as v311
from pubproof.probe.clients.check import ClientCheck, Run, fixed
from pubproof.probe.clients.context import ClientContext
from pubproof.probe.clients.judge import (
    ClientJudge,
    ClientView,
    delivered,
    property_differences,
)
from pubproof.probe.findings import missing, passed, tolerated, violation
from pubproof.reference.properties import PublishProperties

#: [MQTT-4.3.2-4] the QoS 1 receiver "MUST respond with a PUBACK packet containing the
#: Packet Identifier from the incoming PUBLISH packet, having accepted ownership of the
#: Application Message" (paraphrased from the normative index)
QOS1_RECEIVER = "MQTT-4.3.2-4"
#: [MQTT-4.3.3-8] the QoS 2 receiver answers PUBREC once it takes ownership (paraphrased)
QOS2_PUBREC = "MQTT-4.3.3-8"
#: [MQTT-4.3.3-10] until PUBREL the QoS 2 receiver answers repeats with PUBREC and "MUST NOT
#: cause duplicate messages to be delivered to any onward recipients" (paraphrased)
QOS2_ONCE = "MQTT-4.3.3-10"
#: [MQTT-4.3.3-11] the QoS 2 receiver "MUST respond to a PUBREL packet by sending a PUBCOMP
#: packet containing the same Packet Identifier as the PUBREL" (paraphrased)
QOS2_PUBCOMP = "MQTT-4.3.3-11"
#: [MQTT-3.3.2-10] "A Client MUST accept all Topic Alias values greater than 0 and less than
#: or equal to the Topic Alias Maximum value that it sent in the CONNECT packet"
ALIAS_ACCEPT = "MQTT-3.3.2-10"
#: [MQTT-4.4.0-1] re-sends on a resumed session
RESEND = "MQTT-4.4.0-1"

#: every property a PUBLISH can carry (the P form): what the server sends in the receive
#: checks (as the reference session's PublishProperties below), and what the application
#: publishes in send.properties
PROPERTIES: Mapping[str, Any] = {
    "payload_format_indicator": 1,
    "message_expiry_interval": 3600,
    "response_topic": "pubproof/reply",
    "correlation_data_hex": b"req-42".hex(),
    "user_properties": [["b", "2"], ["a", "1"], ["b", "3"]],
    "content_type": "text/plain; charset=utf-8",
}
_REFERENCE = PublishProperties(
    payload_format_indicator=1,
    message_expiry_interval=3600,
    response_topic="pubproof/reply",
    correlation_data=b"req-42",
    user_properties=(("b", "2"), ("a", "1"), ("b", "3")),
    content_type="text/plain; charset=utf-8",
)
#: the Topic Alias Maximum the client declares for the alias checks
CLIENT_TOPIC_ALIAS_MAXIMUM = 4
QOS_RULES = {0: "MQTT-4.3.1-1", 1: QOS1_RECEIVER, 2: QOS2_ONCE}


def _receive(qos: int) -> Run:
    """A QoS ``qos`` message with every property, to the subscribed client."""

    def run(ctx: ClientContext) -> None:
        conn = ctx.start(subscribe=[(ctx.topic_filter(), 2)])
        conn.publish(ctx.topic(), f"rx{qos}".encode(), qos=qos, properties=_REFERENCE)
        ctx.wait_for(
            "the message at the application, every flow complete",
            lambda: bool(ctx.messages()) and not ctx.session.in_flight,
            2.0,
        )
        ctx.quiet(0.5)

    return run


def properties_at_application(view: ClientView, payload: bytes) -> list[Finding]:
    """The properties the application was handed with the message, against those the server
    sent (no MUST binds a client library to hand them over: a difference is tolerated, and
    named; a driver that reports none, when the server sent some, is named too)."""
    got = view.copies(payload)
    if not got:
        return []
    if "properties" not in got[0]:
        return [tolerated("the driver reports no properties of the messages it receives")]
    differ = property_differences(PROPERTIES, got[0]["properties"] or {})
    if not differ:
        return [
            passed(
                "the application was handed every property as the server sent it, the User "
                "Properties in their order"
            )
        ]
    return [tolerated(f"the application was not handed the properties the server sent ({differ})")]


def _judge_receive(qos: int) -> ClientJudge:
    def judge(view: ClientView) -> list[Finding]:
        payload = f"rx{qos}".encode()
        return [
            *delivered(view, payload, qos, QOS_RULES[qos]),
            *properties_at_application(view, payload),
        ]

    return judge


def _aliases(ctx: ClientContext) -> None:
    """The client declares Topic Alias Maximum 4; the server gives its two topics aliases
    1 and 2 (topic name and alias the first time, the alias alone after)."""
    ctx.use_aliases = True
    conn = ctx.start(
        subscribe=[(ctx.topic_filter(), 2)],
        limits={"topic_alias_maximum": CLIENT_TOPIC_ALIAS_MAXIMUM},
    )
    if conn.client_declared.topic_alias_maximum == 0:
        ctx.recorder.event(
            "not-applicable",
            None,
            message="the client declared no Topic Alias Maximum: the server may send no alias",
        )
        return
    for n, leaf in enumerate(("a", "b", "a", "b", "a")):
        conn.publish(ctx.topic(leaf), f"alias{n}".encode(), qos=1)
    ctx.wait_for("five messages at the application", lambda: len(ctx.messages()) >= 5)
    ctx.quiet(0.3)


def _judge_aliases(view: ClientView) -> list[Finding]:
    findings: list[Finding] = []
    for n in range(5):
        payload = f"alias{n}".encode()
        got = view.copies(payload)
        sent = [
            p for p in view.packets("PUBLISH", "to-client") if p.get("payload_hex") == payload.hex()
        ]
        if not got:
            # a client that closed the connection instead refused an alias it must accept
            closed = view.closed_by_client()
            verdict = violation if closed else missing
            how = "; the client closed the connection" if closed else ""
            findings.append(
                verdict(f"the application never got {payload.decode()!r}{how}", ALIAS_ACCEPT)
            )
            continue
        alias = (sent[0].get("properties") or {}).get("topic_alias") if sent else None
        wanted = str(sent[0].get("topic")) if sent and sent[0].get("topic") else None
        topic = got[0].get("topic")
        if wanted is None:  # the alias alone: the topic the alias was set to
            first = view.packets("PUBLISH", "to-client")
            wanted = next(
                (
                    str(p["topic"])
                    for p in first
                    if (p.get("properties") or {}).get("topic_alias") == alias and p.get("topic")
                ),
                None,
            )
        if topic == wanted:
            how = "alias alone" if sent and not sent[0].get("topic") else "topic and alias"
            findings.append(
                passed(
                    f"{payload.decode()!r} ({how} {alias}) at the application on {topic!r}",
                    ALIAS_ACCEPT,
                )
            )
        else:
            findings.append(
                violation(
                    f"{payload.decode()!r} (Topic Alias {alias}) handed to the "
                    f"application on {topic!r}, not {wanted!r}",
                    ALIAS_ACCEPT,
                )
            )
    return findings


CHECKS: tuple[ClientCheck, ...] = (
    ClientCheck(
        "receive.qos0",
        "a QoS 0 message with every property: at the application once, the properties as sent",
        fixed("MQTT-4.3.1-1"),
        _receive(0),
        _judge_receive(0),
    ),
    ClientCheck(
        "receive.qos1",
        "a QoS 1 message with every property: PUBACK, at the application at least once",
        fixed(QOS1_RECEIVER),
        _receive(1),
        _judge_receive(1),
    ),
    ClientCheck(
        "receive.qos2",
        "a QoS 2 message with every property: PUBREC, PUBCOMP, at the application exactly once",
        fixed(QOS2_PUBREC, QOS2_ONCE, QOS2_PUBCOMP),
        _receive(2),
        _judge_receive(2),
    ),
    ClientCheck(
        "receive.topic-alias",
        "the client's Topic Alias Maximum 4: aliases the server "
        "sets and uses alone resolved to their topics",
        fixed(ALIAS_ACCEPT),
        _aliases,
        _judge_aliases,
    ),
    ClientCheck(
        "receive.pubrel-unknown-id",
        "PUBREL for a packet identifier the client does "
        "not hold: PUBCOMP (0x92, Packet Identifier not found)",
        fixed(QOS2_PUBCOMP),
        v311._pubrel_unknown,
        partial(v311._judge_pubrel_unknown, rule=QOS2_PUBCOMP),
    ),
    ClientCheck(
        "receive.qos2-method",
        "QoS 2, PUBREL withheld for a while: delivered before or after PUBREL (Method A or B)",
        fixed(QOS2_ONCE),
        v311._qos2_duplicates(0, 0.6),
        partial(v311._judge_duplicates, rule=QOS2_ONCE),
    ),
    ClientCheck(
        "receive.qos2-duplicate-before-pubrel",
        "QoS 2 PUBLISH again (DUP 1) after PUBREC, before PUBREL: delivered once",
        fixed(QOS2_ONCE, "MQTT-3.3.1-1"),
        v311._qos2_duplicates(1),
        partial(v311._judge_duplicates, rule=QOS2_ONCE),
    ),
    ClientCheck(
        "receive.puback-order",
        "five QoS 1 messages at once: PUBACK in their order",
        fixed("MQTT-4.6.0-2", QOS1_RECEIVER),
        v311._order(1, 5),
        v311._judge_order(1, QOS1_RECEIVER),
    ),
    ClientCheck(
        "receive.qos1-resumed",
        "QoS 1 to the client, connection lost before pubproof "
        "took PUBACK, session resumed: re-sent, acknowledged, delivered",
        fixed(QOS1_RECEIVER, RESEND),
        v311._resumed("PUBACK"),
        v311._judge_resumed("PUBACK", (QOS1_RECEIVER, QOS2_ONCE)),
    ),
    ClientCheck(
        "receive.qos2-resumed-before-pubrel",
        "QoS 2 to the client, connection lost "
        "before pubproof took PUBREC, session resumed: delivered exactly once",
        fixed(QOS2_ONCE, RESEND),
        v311._resumed("PUBREC"),
        v311._judge_resumed("PUBREC", (QOS1_RECEIVER, QOS2_ONCE)),
    ),
)
