"""MQTT 5.0 flow checks: QoS 0, 1 and 2 end to end (the 3.x checks, with 5.0's rule ids:
:data:`pubproof.probe.checks_flows.END_TO_END`); flow control both ways (the broker's
own Receive Maximum, the client's Receive Maximum); the client's Topic Alias Maximum and
Maximum Packet Size; aliases the broker must accept; PUBREL for an identifier the broker
does not hold; acknowledgements with an error Reason Code that end a flow.

The clients are the reference 5.0 session; what the broker sent is decoded with the limits
each client declared (:func:`pubproof.probe.judge50.frame_findings50`), its deliveries are
those of the 5.0 link judge's model client (:class:`pubproof.judge.link50.LinkJudge50`),
and each check adds what its own question needs.
"""

from __future__ import annotations

from dataclasses import replace

from pubproof.judge.close import CLOSE_WITH_REASON
from pubproof.judge.findings import Finding
from pubproof.judge.limits import declared as declared_by
from pubproof.probe.check import Check, Judge, Run, fixed
from pubproof.probe.checks_flows import END_TO_END, each_once
from pubproof.probe.checks_session import KEEP_SESSION
from pubproof.probe.client import Client
from pubproof.probe.context import CheckContext
from pubproof.probe.evidence import Entry, received, sent
from pubproof.probe.expect import copies, delivered, label
from pubproof.probe.findings import missing, passed, violation
from pubproof.probe.judge50 import case_findings50
from pubproof.probe.link import ProbeError
from pubproof.probe.steps import connected, end_session, observe, subscriber
from pubproof.probe.view import View
from pubproof.reference.codec import encode
from pubproof.reference.packets import Publish, PubRec
from pubproof.reference.properties import PublishProperties

PUB, SUB = "pub", "sub"
#: the most QoS 2 messages the broker-side Receive Maximum check sends
MOST_IN_FLIGHT = 100
#: what a client declares for the checks of its own limits
CLIENT_RECEIVE_MAXIMUM = 2
CLIENT_TOPIC_ALIAS_MAXIMUM = 2
CLIENT_MAXIMUM_PACKET_SIZE = 128


def _check(
    cid: str, title: str, rules: tuple[str, ...], run: Run, judge: Judge, extra: float = 0.0
) -> Check:
    return Check(id=cid, title=title, rules=fixed(*rules), run=run, judge=judge, extra=extra)



# -- the broker's Receive Maximum ---------------------------------------------------------


def _broker_receive_maximum(ctx: CheckContext) -> None:
    """The broker's Receive Maximum of QoS 2 messages, none released, then one more (the
    case): the broker must close with DISCONNECT 0x93."""
    pub = connected(ctx, PUB)
    assert pub.connack is not None
    most = declared_by(pub.connack.get("properties", {})).receive_maximum
    if most > MOST_IN_FLIGHT:
        # the probe cannot run the check (recorded: an error verdict, not a silent pass)
        note = f"the broker's Receive Maximum is {most}: the check sends at most {MOST_IN_FLIGHT}"
        ctx.recorder.event("error", None, message=note)
        raise ProbeError(note)
    pub.hold = lambda p: isinstance(p, PubRec)  # no PUBREL: every message stays in flight
    topic = ctx.topic()
    for number in range(most):
        pub.publish(topic, f"m{number}".encode(), qos=2)
    ctx.wait_for(pub, f"{most} PUBREC", lambda: len(pub.held) >= most)
    extra = Publish(topic=topic, payload=b"one too many", qos=2, packet_id=most + 1)
    pub.send_raw(_encoded(ctx, extra), case=True)
    observe(ctx, pub)


def _encoded(ctx: CheckContext, packet: Publish) -> bytes:
    return encode(replace(packet, properties=PublishProperties()), edition=ctx.edition)


# -- the client's Receive Maximum -----------------------------------------------------------


def _client_receive_maximum(qos: int) -> Run:
    """The subscriber declares Receive Maximum 2 and holds what comes; five messages are
    published. After a quiet window the subscriber acknowledges what it holds and goes on
    holding what comes next for another window (the broker may now send two more, not
    three); then it acknowledges everything."""

    def run(ctx: CheckContext) -> None:
        topic = ctx.topic()
        properties = {"receive_maximum": CLIENT_RECEIVE_MAXIMUM}
        sub = subscriber(ctx, SUB, (topic, qos), properties=properties)
        sub.hold = lambda p: isinstance(p, Publish)
        pub = connected(ctx, PUB)
        payloads = [f"rm{n}".encode() for n in range(5)]
        for payload in payloads:
            pub.publish(topic, payload, qos=qos)
        ctx.wait_for(pub, "the publisher's flows complete", lambda: pub.settled)
        ctx.wait_for(sub, "a PUBLISH", lambda: bool(sub.held))
        ctx.quiet()
        answered = len(sub.held)
        _answer_held(sub)  # and hold on
        ctx.wait_for(sub, "the acknowledged flows complete", lambda: not sub.session.held)
        more = min(CLIENT_RECEIVE_MAXIMUM, len(payloads) - answered)
        ctx.wait_for(sub, f"{more} more PUBLISH", lambda: len(sub.held) >= more)
        ctx.quiet()
        _release_all(sub)
        ctx.wait_for(
            sub,
            "every message, every flow complete",
            lambda: _drain(sub) and sub.delivered(payloads) and sub.settled,
        )
        ctx.quiet()

    return run


def _answer_held(client: Client) -> None:
    """Hand what the client holds to its session (it answers), and go on holding."""
    held, client.held = client.held, []
    for packet in held:
        client.feed(packet)


def _release_all(client: Client) -> None:
    """Stop holding and hand every held packet to the session, in order."""
    client.hold = None
    _answer_held(client)


def _drain(client: Client) -> bool:
    """Hand anything still held to the session (always true: a wait's condition)."""
    _release_all(client)
    return True


def in_flight(view: View, client: str) -> list[int]:
    """How many QoS 1 and 2 PUBLISH the broker had unacknowledged on ``client``'s
    connection after each packet: a PUBLISH (QoS > 0) from the broker takes a slot until
    the client's PUBACK, PUBCOMP, or PUBREC of 0x80 or more [MQTT-3.3.4-9]."""
    outstanding: set[int] = set()
    counts: list[int] = []
    for entry in view.entries:
        if entry.get("client") != client or "error" in entry:
            continue
        if entry.get("type") == "CONNECT" or entry.get("event") in ("closed", "dropped"):
            outstanding.clear()  # the quota starts afresh with the connection
            continue
        kind = entry.get("type")
        if received(entry) and kind == "PUBLISH" and entry["qos"] > 0:
            outstanding.add(entry["packet_id"])
        elif sent(entry) and (
            kind in ("PUBACK", "PUBCOMP")
            or (kind == "PUBREC" and entry.get("reason_code", 0) >= 0x80)
        ):
            outstanding.discard(entry["packet_id"])
        counts.append(len(outstanding))
    return counts


def _judge_client_receive_maximum(view: View) -> list[Finding]:
    """At most Receive Maximum in flight (the link judge names the PUBLISH beyond it; the
    count here says how many); then every message delivered as its QoS says (unless the
    broker went beyond, when the model client closes the connection instead)."""
    most = max(in_flight(view, SUB), default=0)
    rule = "MQTT-3.3.4-9"
    if most > CLIENT_RECEIVE_MAXIMUM:
        message = f"{most} QoS > 0 PUBLISH in flight to {SUB}, whose Receive Maximum is 2"
        return [violation(message, rule, "MQTT-4.9.0-2")]
    findings = each_once(view)
    if most:
        message = f"at most {most} QoS > 0 PUBLISH in flight to {SUB} (Receive Maximum 2)"
        findings.append(passed(message, rule))
    return findings


# -- the client's Topic Alias Maximum -------------------------------------------------------


def _aliases(declared: int) -> Run:
    """The subscriber declares Topic Alias Maximum ``declared``; three topics, each
    published twice."""

    def run(ctx: CheckContext) -> None:
        base = ctx.topic("")
        properties = {"topic_alias_maximum": declared} if declared else {}
        sub = subscriber(ctx, SUB, (base + "#", 1), properties=properties)
        pub = connected(ctx, PUB)
        payloads = []
        for round_ in range(2):
            for leaf in ("a", "b", "c"):
                payload = f"{leaf}{round_}".encode()
                payloads.append(payload)
                pub.publish(base + leaf, payload, qos=1)
        ctx.wait_for(
            sub,
            "every message, every flow complete",
            lambda: sub.delivered(payloads) and sub.settled and pub.settled,
        )
        ctx.quiet()

    return run


def _judge_aliases(declared: int) -> Judge:
    def judge(view: View) -> list[Finding]:
        findings = each_once(view)
        used = sorted(
            {
                e["properties"]["topic_alias"]
                for e in view.packets(SUB, "PUBLISH")
                if "topic_alias" in e.get("properties", {})
            }
        )
        if not view.packets(SUB, "PUBLISH"):
            return findings
        if used:
            note = f"the broker used Topic Alias(es) {used}, within the declared {declared}"
        else:
            note = "the broker sent every topic name in full, no Topic Alias"
        rule = "MQTT-3.1.2-27" if not declared else "MQTT-3.3.2-11"
        findings.append(passed(note, rule))
        return findings

    return judge


def _broker_accepts_aliases(ctx: CheckContext) -> None:
    """The publisher gives its topic names aliases up to the broker's Topic Alias Maximum
    (the first PUBLISH of a topic with its name and alias, later ones the alias alone)."""
    base = ctx.topic("")
    sub = subscriber(ctx, SUB, (base + "#", 1))
    pub = ctx.client(PUB)
    pub.use_aliases = True
    pub.connect()
    payloads = []
    for round_ in range(2):
        for leaf in ("a", "b"):
            payload = f"{leaf}{round_}".encode()
            payloads.append(payload)
            pub.publish(base + leaf, payload, qos=1)
    ctx.wait_for(
        sub,
        "every message, every flow complete",
        lambda: sub.delivered(payloads) and sub.settled and pub.settled,
    )
    ctx.quiet()


def _judge_broker_accepts(view: View) -> list[Finding]:
    findings: list[Finding] = []
    names: dict[int, str] = {}
    for entry in view.packets(PUB, "PUBLISH", "to-broker"):
        alias = entry.get("properties", {}).get("topic_alias")
        topic = entry["topic"] or names.get(alias, "") if alias is not None else entry["topic"]
        if alias is not None and entry["topic"]:
            names[alias] = entry["topic"]
        message = {**entry, "topic": topic}
        findings += delivered(view, SUB, message, 1, publisher=PUB)  # type: ignore[arg-type]
    if any(not e["topic"] for e in view.packets(PUB, "PUBLISH", "to-broker")):
        findings.append(passed("the broker resolved the publisher's aliases", "MQTT-3.3.2-12"))
    return findings


# -- the client's Maximum Packet Size -------------------------------------------------------


def _maximum_packet_size(ctx: CheckContext) -> None:
    """The subscriber declares Maximum Packet Size 128; a 300-byte message, then a small one."""
    topic = ctx.topic()
    properties = {"maximum_packet_size": CLIENT_MAXIMUM_PACKET_SIZE}
    sub = subscriber(ctx, SUB, (topic, 1), properties=properties)
    pub = connected(ctx, PUB)
    pub.publish(topic, b"L" * 300, qos=1)
    pub.publish(topic, b"small", qos=1)
    ctx.wait_for(
        sub,
        "the small message, every flow complete",
        lambda: sub.delivered([b"small"]) and sub.settled and pub.settled,
    )
    ctx.quiet()


def _judge_maximum_packet_size(view: View) -> list[Finding]:
    published = {m["payload_hex"]: m for m in view.published(PUB)}
    small, large = published.get(b"small".hex()), published.get((b"L" * 300).hex())
    if small is None or large is None:
        return []
    findings = delivered(view, SUB, small, 1, publisher=PUB)
    too_large = [e for e in view.packets(SUB, "PUBLISH") if len(e["hex"]) // 2 > 128]
    if not too_large and not copies(view, SUB, large):
        message = f"the 300-byte message (over {SUB}'s Maximum Packet Size 128) was not sent"
        findings.append(passed(message, "MQTT-3.1.2-24", "MQTT-3.1.2-25"))
    return findings


# -- PUBREL for an identifier the broker does not hold --------------------------------------

UNKNOWN_ID = 4242


def _pubrel_unknown(ctx: CheckContext) -> None:
    pub = connected(ctx, PUB)
    pub.send_raw(bytes.fromhex("6202") + UNKNOWN_ID.to_bytes(2, "big"))
    ctx.wait_for(
        pub, f"PUBCOMP {UNKNOWN_ID}", lambda: pub.count("PUBCOMP", packet_id=UNKNOWN_ID) > 0
    )
    ctx.quiet()


def _judge_pubrel_unknown(view: View) -> list[Finding]:
    """PUBCOMP 0x92 passes; the link judge reports another code (tolerated) or none."""
    answers = [e for e in view.packets(PUB, "PUBCOMP") if e.get("packet_id") == UNKNOWN_ID]
    if answers and answers[0].get("reason_code") == 0x92:
        message = f"PUBCOMP {UNKNOWN_ID} 0x92 (Packet Identifier not found)"
        return [passed(message, "MQTT-4.3.3-11", "MQTT-3.7.2-1")]
    return []


# -- error acknowledgements end a flow ------------------------------------------------------


def _error_ack(kind: str) -> Run:
    """The subscriber (Session Expiry 30 s) gets two messages and holds them; it answers the
    first with ``kind`` 0x80 and the second not at all, drops the connection and resumes:
    the broker must re-send the second [MQTT-4.4.0-1] and never the first [MQTT-4.4.0-2]."""
    qos = 1 if kind == "PUBACK" else 2

    def run(ctx: CheckContext) -> None:
        topic = ctx.topic()
        sub = subscriber(ctx, SUB, (topic, qos), properties=KEEP_SESSION)
        end_session(ctx, sub)
        sub.hold = lambda p: isinstance(p, Publish)
        pub = connected(ctx, PUB)
        pub.publish(topic, b"refused", qos=qos)
        pub.publish(topic, b"kept", qos=qos)
        ctx.wait_for(sub, "two PUBLISH", lambda: len(sub.held) >= 2)
        first = sub.held[0]
        assert first.packet_id is not None
        code = 0x40 if kind == "PUBACK" else 0x50
        sub.send_raw(bytes((code, 3)) + first.packet_id.to_bytes(2, "big") + b"\x80")
        sub.ping()
        ctx.quiet()
        sub.drop()
        sub.hold, sub.held = None, []
        sub.reconnect(clean=False)
        ctx.wait_for(
            sub,
            "the second message re-sent, every flow complete",
            lambda: sub.delivered([b"kept"]) and sub.settled,
        )
        ctx.quiet()

    return run


def _refused(view: View) -> Entry | None:
    """The subscriber's acknowledgement with Reason Code 0x80."""
    for entry in view.packets(SUB, "PUBACK", "to-broker") + view.packets(
        SUB, "PUBREC", "to-broker"
    ):
        if entry.get("reason_code") == 0x80:
            return entry
    return None


def _judge_error_ack(kind: str) -> Judge:
    def judge(view: View) -> list[Finding]:
        refusal = _refused(view)
        if refusal is None:
            return []
        at = view.entries.index(refusal)
        packet_id = refusal["packet_id"]
        findings: list[Finding] = []
        after = [e for e in view.entries[at + 1 :] if e.get("client") == SUB and received(e)]
        refused_hex = b"refused".hex()
        again = [
            e for e in after
            if e["type"] == "PUBLISH" and e.get("payload_hex") == refused_hex
        ]  # fmt: skip
        if again:
            what = f"{SUB} got {label(again[0])} again after {kind} {packet_id} 0x80"  # type: ignore[arg-type]
            findings.append(violation(what, "MQTT-4.4.0-2"))
        pubrel = [e for e in after if e["type"] == "PUBREL" and e["packet_id"] == packet_id]
        if kind == "PUBREC" and pubrel:
            what = f"PUBREL {packet_id} after PUBREC {packet_id} 0x80"
            findings.append(violation(what, "MQTT-4.3.3-4", "MQTT-4.4.0-2"))
        resent = [e for e in after if e["type"] == "PUBLISH" and e.get("dup")]
        if not again and not pubrel:
            note = f"{kind} 0x80 ended the flow: nothing of it re-sent"
            if resent:
                note += " (the unacknowledged one was)"
            findings.append(passed(note, "MQTT-4.4.0-2"))
        kept = [m for m in view.published(PUB) if m["payload_hex"] == b"kept".hex()]
        if kept and not copies(view, SUB, kept[0]):
            findings.append(missing(f"{SUB} never got {label(kept[0])}", "MQTT-4.4.0-1"))
        return findings

    return judge


CHECKS: tuple[Check, ...] = (
    *END_TO_END,
    Check(
        id="flow.broker-receive-maximum",
        title="one QoS 2 PUBLISH more than the broker's Receive Maximum, none released "
        "(DISCONNECT 0x93)",
        rules=fixed("MQTT-3.3.4-7", CLOSE_WITH_REASON),
        run=_broker_receive_maximum,
        judge=case_findings50,
    ),
    _check(
        "flow.client-receive-maximum-qos1",
        "the client declares Receive Maximum 2: at most 2 QoS 1 PUBLISH unacknowledged",
        ("MQTT-3.3.4-9", "MQTT-4.9.0-2"),
        _client_receive_maximum(1),
        _judge_client_receive_maximum,
    ),
    _check(
        "flow.client-receive-maximum-qos2",
        "the client declares Receive Maximum 2: at most 2 QoS 2 PUBLISH uncompleted",
        ("MQTT-3.3.4-9", "MQTT-4.9.0-2"),
        _client_receive_maximum(2),
        _judge_client_receive_maximum,
    ),
    _check(
        "flow.client-topic-alias-none",
        "the client declares no Topic Alias Maximum: the broker sends no alias",
        ("MQTT-3.1.2-27", "PP50-3.3.4-topic-alias-maximum"),
        _aliases(0),
        _judge_aliases(0),
    ),
    _check(
        "flow.client-topic-alias-maximum",
        "the client declares Topic Alias Maximum 2: the broker's aliases stay within it",
        ("MQTT-3.3.2-11", "MQTT-3.1.2-26", "PP50-3.3.4-topic-alias-maximum"),
        _aliases(CLIENT_TOPIC_ALIAS_MAXIMUM),
        _judge_aliases(CLIENT_TOPIC_ALIAS_MAXIMUM),
    ),
    _check(
        "flow.broker-accepts-aliases",
        "the publisher uses aliases within the broker's Topic Alias Maximum: accepted, resolved",
        ("MQTT-3.3.2-12", "MQTT-3.3.2-10"),
        _broker_accepts_aliases,
        _judge_broker_accepts,
    ),
    _check(
        "flow.client-maximum-packet-size",
        "the client declares Maximum Packet Size 128: a larger message is not sent to it",
        ("MQTT-3.1.2-24", "MQTT-3.1.2-25", "PP50-3.1.2-packet-too-large"),
        _maximum_packet_size,
        _judge_maximum_packet_size,
    ),
    _check(
        "flow.pubrel-unknown-id",
        "PUBREL for a packet identifier the broker does not hold: PUBCOMP 0x92",
        ("MQTT-4.3.3-11", "MQTT-3.7.2-1"),
        _pubrel_unknown,
        _judge_pubrel_unknown,
    ),
    _check(
        "flow.puback-error-ends-flow",
        "PUBACK 0x80 ends the flow: not re-sent on the resumed session (the other one is)",
        ("MQTT-4.4.0-2", "MQTT-4.4.0-1"),
        _error_ack("PUBACK"),
        _judge_error_ack("PUBACK"),
    ),
    _check(
        "flow.pubrec-error-ends-flow",
        "PUBREC 0x80 ends the flow: no PUBREL, not re-sent on the resumed session",
        ("MQTT-4.4.0-2", "MQTT-4.3.3-4", "MQTT-4.4.0-1"),
        _error_ack("PUBREC"),
        _judge_error_ack("PUBREC"),
    ),
)
