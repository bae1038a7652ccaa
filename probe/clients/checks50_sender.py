"""MQTT 5.0, the client as sender: its PUBLISH and acknowledgements judged against every
5.0 wire rule with the limits pubproof's server declared in CONNACK, and what those limits
bind: the server's Receive Maximum (acknowledgements withheld, the client's unacknowledged
QoS 1 and 2 PUBLISH counted), Topic Alias Maximum, Maximum Packet Size, Maximum QoS and
Retain Available; an error PUBACK or PUBREC ends the flow; re-sends only on a resumed
session (Clean Start 0 answered by Session Present 1).

The flows (:class:`pubproof.judge.link50.LinkJudge50`) and the wire format
(:func:`pubproof.probe.judge50.frame_findings50`) judge every packet of every check; each
check adds what its own question needs. The runs the 3.1.1 catalog has are reused
(:mod:`pubproof.probe.clients.checks_sender`) with the 5.0 rule ids.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from functools import partial
from typing import Any

from pubproof.judge.findings import Finding
from pubproof.judge.link50 import topic_alias
from pubproof.model.editions import Edition, Limits
from pubproof.probe.clients import checks_sender as v311
from pubproof.probe.clients.check import ClientCheck, Run, fixed
from pubproof.probe.clients.checks50_receiver import PROPERTIES
from pubproof.probe.clients.context import ClientContext
from pubproof.probe.clients.driver import Message
from pubproof.probe.clients.judge import ClientJudge, ClientView, property_differences
from pubproof.probe.clients.server import FROM_CLIENT, TO_CLIENT, Stalled
from pubproof.probe.findings import missing, passed, tolerated, violation
from pubproof.probe.frames import describe_bytes
from pubproof.reference.packets import Publish

V50 = Edition.V50
#: [MQTT-2.2.1-3] "Each time a Client sends a new SUBSCRIBE, UNSUBSCRIBE, or PUBLISH (where
#: QoS > 0) MQTT Control Packet it MUST assign it a non-zero Packet Identifier that is
#: currently unused" (5.0 2.2.1; paraphrased from the normative index)
ID_UNUSED = "MQTT-2.2.1-3"
#: [MQTT-4.4.0-1] "Clients and Servers MUST NOT resend messages at any other time" than on
#: a reconnection with Clean Start 0 and a session present
RESEND = "MQTT-4.4.0-1"
#: [MQTT-3.3.1-1] "The DUP flag MUST be set to 1 by the Client or Server when it attempts to
#: re-deliver a PUBLISH packet"
DUP = "MQTT-3.3.1-1"
#: [MQTT-3.1.2-4] Clean Start 1: "the Client and Server MUST discard any existing Session
#: and start a new Session" (paraphrased from the normative index)
CLEAN = "MQTT-3.1.2-4"
#: [MQTT-4.4.0-2] "If PUBACK or PUBREC is received containing a Reason Code of 0x80 or
#: greater the corresponding PUBLISH packet is treated as acknowledged, and MUST NOT be
#: retransmitted"
NOT_AFTER_ERROR = "MQTT-4.4.0-2"
#: [MQTT-4.3.3-4] the QoS 2 sender sends PUBREL "when it receives a PUBREC packet from the
#: receiver with a Reason Code value less than 0x80" (paraphrased)
PUBREL_ON_PUBREC = "MQTT-4.3.3-4"
#: [MQTT-3.3.4-7] "The Client MUST NOT send more than Receive Maximum QoS 1 and QoS 2 PUBLISH
#: packets for which it has not received PUBACK, PUBCOMP, or PUBREC with a Reason Code of
#: 128 or greater from the Server"
RECEIVE_MAXIMUM = "MQTT-3.3.4-7"
#: [MQTT-4.9.0-2] at send quota 0 the sender sends no further QoS > 0 PUBLISH (paraphrased)
QUOTA_ZERO = "MQTT-4.9.0-2"
#: [MQTT-3.2.2-18] "If Topic Alias Maximum is absent or 0, the Client MUST NOT send any
#: Topic Aliases on to the Server" (paraphrased from the normative index)
NO_ALIASES = "MQTT-3.2.2-18"
#: [MQTT-3.2.2-17] "The Client MUST NOT send a Topic Alias in a PUBLISH packet to the Server
#: greater than this value" (the Server's Topic Alias Maximum; paraphrased)
ALIAS_MAXIMUM = "MQTT-3.2.2-17"
#: [MQTT-3.3.2-9] "A Client MUST NOT send a PUBLISH packet with a Topic Alias greater than
#: the Topic Alias Maximum value returned by the Server in the CONNACK packet"
ALIAS_MAXIMUM_PUBLISH = "MQTT-3.3.2-9"
#: [MQTT-3.2.2-15] "The Client MUST NOT send packets exceeding Maximum Packet Size to the
#: Server"
PACKET_SIZE = "MQTT-3.2.2-15"
#: [MQTT-3.2.2-11] "If a Client receives a Maximum QoS from a Server, it MUST NOT send
#: PUBLISH packets at a QoS level exceeding the Maximum QoS level specified"
MAXIMUM_QOS = "MQTT-3.2.2-11"
#: [MQTT-3.2.2-14] "A Client receiving Retain Available set to 0 from the Server MUST NOT
#: send a PUBLISH packet with the RETAIN flag set to 1"
RETAIN_AVAILABLE = "MQTT-3.2.2-14"

#: what pubproof's server declares for the checks of its limits
SERVER_RECEIVE_MAXIMUM = 2
SERVER_TOPIC_ALIAS_MAXIMUM = 2
SERVER_MAXIMUM_PACKET_SIZE = 256
#: the payloads the sender checks of Receive Maximum publish
MESSAGES = 5
#: a refusal's Reason Code: 0x80, Unspecified error (3.4.2.1, 3.5.2.1)
REFUSED = 0x80


def _publishes(view: ClientView, conn: str | None = None) -> list[dict[str, Any]]:
    """Every PUBLISH the client sent (on ``conn``), decoded without limits (a PUBLISH the
    server's limits reject is described as an error in the evidence: its fields are read
    here again, so that a check can name what it carried)."""
    wide = Limits(topic_alias_maximum=0xFFFF)
    out: list[dict[str, Any]] = []
    for entry in view.packets("PUBLISH", FROM_CLIENT, conn):
        if "error" not in entry:
            out.append(entry)
            continue
        fields, _ = describe_bytes(bytes.fromhex(entry["hex"]), V50, view.readings, wide)
        if "error" not in fields:
            out.append({**fields, "t": entry["t"], "client": entry["client"], "over": True})
    return out


def _refused(view: ClientView) -> list[dict[str, Any]]:
    """The driver's ``publish-refused`` lines: the library would not publish a message."""
    return [
        e for e in view.entries if e.get("event") == "app" and e.get("what") == "publish-refused"
    ]


def _payload(message: Mapping[str, Any]) -> str:
    return str(message.get("payload_hex"))


# -- QoS 0, 1, 2 and the properties ---------------------------------------------------------


def _with_properties(ctx: ClientContext) -> None:
    payload = "ünïcode".encode()
    conn = ctx.start(publish=[Message(ctx.topic(), 1, payload, False, PROPERTIES)])
    ctx.wait_for("PUBLISH", lambda: conn.count("PUBLISH") >= 1)
    ctx.quiet(0.5)


def _judge_properties(view: ClientView) -> list[Finding]:
    """The properties the application gave are on the wire as it gave them (no MUST binds a
    library to that: a difference is tolerated and named)."""
    sent = [p for p in _publishes(view) if _payload(p) == "ünïcode".encode().hex()]
    if not sent:
        return [missing("no PUBLISH of the message the application published")]
    differ = property_differences(PROPERTIES, sent[0].get("properties") or {})
    if not differ:
        return [
            passed(
                "the PUBLISH carries every property as the application gave it, the User "
                "Properties in their order"
            )
        ]
    return [tolerated(f"the PUBLISH's properties are not the application's (asked {differ})")]


# -- the server's Receive Maximum -----------------------------------------------------------


def in_flight(view: ClientView, conn: str) -> list[int]:
    """How many QoS 1 and 2 PUBLISH the client had unacknowledged on ``conn`` after each
    packet: a new PUBLISH takes a unit until the server's PUBACK, PUBCOMP, or PUBREC of 0x80
    or more [MQTT-3.3.4-7]."""
    outstanding: set[int] = set()
    counts: list[int] = []
    for entry in view.entries:
        if entry.get("client") != conn or "dir" not in entry:
            continue
        kind = entry.get("type")
        if entry["dir"] == FROM_CLIENT and kind == "PUBLISH" and "error" not in entry:
            if entry.get("qos", 0) > 0:
                outstanding.add(entry["packet_id"])
        elif (
            entry["dir"] == TO_CLIENT
            and "error" not in entry
            and (
                kind in ("PUBACK", "PUBCOMP")
                or (kind == "PUBREC" and entry.get("reason_code", 0) >= 0x80)
            )
        ):
            outstanding.discard(entry["packet_id"])
        counts.append(len(outstanding))
    return counts


def _receive_maximum(qos: int) -> Run:
    """The server declares Receive Maximum 2 and withholds every acknowledgement for a
    second while the application publishes five messages; then it answers what it holds,
    and everything that comes after."""

    def run(ctx: ClientContext) -> None:
        ctx.declare = {"receive_maximum": SERVER_RECEIVE_MAXIMUM}
        publish = [(ctx.topic(), qos, f"rm{n}".encode(), False) for n in range(MESSAGES)]
        conn = ctx.start(publish=publish)
        conn.hold = lambda p: isinstance(p, Publish)
        with contextlib.suppress(Stalled):  # a conforming client stops at 2
            ctx.wait_for(f"{MESSAGES} PUBLISH", lambda: len(conn.held) >= MESSAGES, 1.5)
        conn.release()
        ctx.wait_for(
            "every message, every flow complete",
            lambda: (
                len({p.get("payload_hex") for p in conn.received if p.get("type") == "PUBLISH"})
                >= MESSAGES
                and not ctx.session.held
            ),
            5.0,
        )
        ctx.quiet(0.3)

    return run


def _judge_receive_maximum(view: ClientView) -> list[Finding]:
    conns = view.conns()
    if not conns:
        return []
    most = max(in_flight(view, conns[0]), default=0)
    if most > SERVER_RECEIVE_MAXIMUM:
        return [
            violation(
                f"{most} QoS > 0 PUBLISH unacknowledged at once; the server's Receive Maximum "
                f"is {SERVER_RECEIVE_MAXIMUM}",
                RECEIVE_MAXIMUM,
                QUOTA_ZERO,
            )
        ]
    sent = {_payload(p) for p in _publishes(view)}
    lost = [n for n in range(MESSAGES) if f"rm{n}".encode().hex() not in sent]
    refused = {e.get("index") for e in _refused(view)}
    if lost and set(lost) <= refused:
        # the quota kept: the library refused what did not fit (its application was told)
        return [
            passed(
                f"at most {most} QoS > 0 PUBLISH unacknowledged (Receive Maximum "
                f"{SERVER_RECEIVE_MAXIMUM})",
                RECEIVE_MAXIMUM,
            ),
            tolerated(
                f"the library refused messages {lost} at the send quota instead of "
                "sending them once acknowledged (the application was told)",
                QUOTA_ZERO,
            ),
        ]
    if lost:
        return [missing(f"messages {lost} never published after the server acknowledged")]
    return [
        passed(
            f"at most {most} QoS > 0 PUBLISH unacknowledged (Receive Maximum "
            f"{SERVER_RECEIVE_MAXIMUM}), all {MESSAGES} published once acknowledged",
            RECEIVE_MAXIMUM,
        )
    ]


# -- the server's Topic Alias Maximum --------------------------------------------------------


def _aliases(maximum: int) -> Run:
    """The server declares Topic Alias Maximum ``maximum`` (0: absent); the application asks
    for Topic Aliases 1, 2, 3 on three topics, then for alias 1 again."""

    def run(ctx: ClientContext) -> None:
        if maximum:
            ctx.declare = {"topic_alias_maximum": maximum}
        publish = [
            Message(ctx.topic(f"t{n}"), 1, f"alias{n}".encode(), False, {"topic_alias": n})
            for n in (1, 2, 3)
        ]
        publish.append(Message(ctx.topic("t1"), 1, b"alias1again", False, {"topic_alias": 1}))
        conn = ctx.start(publish=publish)
        with contextlib.suppress(Stalled):  # a client may refuse some
            ctx.wait_for("4 PUBLISH", lambda: conn.count("PUBLISH") + len(_refused_now(ctx)) >= 4)
        ctx.quiet(0.5)

    return run


def _refused_now(ctx: ClientContext) -> list[dict[str, Any]]:
    return [e for e in ctx.recorder.entries if e.get("what") == "publish-refused"]


def _judge_aliases(maximum: int) -> ClientJudge:
    rules = (NO_ALIASES,) if maximum == 0 else (ALIAS_MAXIMUM, ALIAS_MAXIMUM_PUBLISH)

    def judge(view: ClientView) -> list[Finding]:
        sent = _publishes(view)
        if not sent and not _refused(view):
            # no alias sent; the messages lost without a word to the application (no MUST)
            return [
                tolerated("the library neither sent the messages nor told the application", *rules)
            ]
        used = [a for p in sent if (a := topic_alias(p)) is not None]
        over = [a for a in used if not 1 <= a <= maximum]
        if over:
            what = f"Topic Alias {over}" + (
                " and the server declared no Topic Alias Maximum (0)"
                if maximum == 0
                else f" above the server's Topic Alias Maximum {maximum}"
            )
            return [violation(f"the client sent {what}", *rules)]
        if not used:
            return [
                passed(
                    f"no Topic Alias sent ({len(sent)} PUBLISH, "
                    f"{len(_refused(view))} refused by the library)",
                    *rules,
                )
            ]
        return [passed(f"Topic Aliases {sorted(set(used))} within 1..{maximum}", *rules)]

    return judge


# -- Maximum Packet Size, Maximum QoS, Retain Available ---------------------------------------


def _packet_size(ctx: ClientContext) -> None:
    """The server declares Maximum Packet Size 256; the application publishes 400 bytes, then
    a small message (which must go)."""
    ctx.declare = {"maximum_packet_size": SERVER_MAXIMUM_PACKET_SIZE}
    publish = [(ctx.topic(), 1, b"L" * 400, False), (ctx.topic(), 1, b"small", False)]
    conn = ctx.start(publish=publish)
    ctx.wait_for("the small PUBLISH", lambda: conn.count("PUBLISH", payload_hex=b"small".hex()) > 0)
    ctx.quiet(0.5)


def _judge_packet_size(view: ClientView) -> list[Finding]:
    big = [e for e in view.packets("PUBLISH") if len(e["hex"]) // 2 > SERVER_MAXIMUM_PACKET_SIZE]
    if big:
        size = len(big[0]["hex"]) // 2
        return [
            violation(
                f"a PUBLISH of {size} bytes; the server's Maximum Packet Size is "
                f"{SERVER_MAXIMUM_PACKET_SIZE}",
                PACKET_SIZE,
            )
        ]
    refused = " (the library refused it)" if _refused(view) else ""
    return [passed(f"the 400-byte message was not sent{refused}", PACKET_SIZE)]


def _maximum_qos(maximum: int) -> Run:
    def run(ctx: ClientContext) -> None:
        ctx.declare = {"maximum_qos": maximum}
        qos = maximum + 1
        conn = ctx.start(
            publish=[(ctx.topic(), qos, b"maxqos", False), (ctx.topic(), 0, b"after", False)]
        )
        ctx.wait_for("a PUBLISH", lambda: conn.count("PUBLISH") >= 1)
        ctx.quiet(1.0)

    return run


def _judge_maximum_qos(maximum: int) -> ClientJudge:
    def judge(view: ClientView) -> list[Finding]:
        sent = [p for p in _publishes(view) if _payload(p) == b"maxqos".hex()]
        above = [p for p in sent if p.get("qos", 0) > maximum]
        if above:
            return [
                violation(
                    f"a PUBLISH at QoS {above[0].get('qos')}; the server's Maximum QoS is "
                    f"{maximum}",
                    MAXIMUM_QOS,
                )
            ]
        how = f"sent at QoS {sent[0].get('qos')}" if sent else "not sent"
        return [passed(f"the QoS {maximum + 1} message {how} (Maximum QoS {maximum})", MAXIMUM_QOS)]

    return judge


def _retain(ctx: ClientContext) -> None:
    ctx.declare = {"retain_available": 0}
    conn = ctx.start(
        publish=[(ctx.topic(), 0, b"retained", True), (ctx.topic(), 0, b"after", False)]
    )
    ctx.wait_for("a PUBLISH", lambda: conn.count("PUBLISH") >= 1)
    ctx.quiet(1.0)


def _judge_retain(view: ClientView) -> list[Finding]:
    retained = [p for p in _publishes(view) if p.get("retain")]
    if retained:
        return [
            violation(
                "a PUBLISH with RETAIN 1; the server declared Retain Available 0", RETAIN_AVAILABLE
            )
        ]
    sent = [p for p in _publishes(view) if _payload(p) == b"retained".hex()]
    how = "sent with RETAIN 0" if sent else "not sent"
    return [passed(f"the retained message {how} (Retain Available 0)", RETAIN_AVAILABLE)]


# -- an error acknowledgement ends the flow ------------------------------------------------


def _error_ack(qos: int) -> Run:
    """The server refuses the client's QoS ``qos`` message (PUBACK or PUBREC 0x80), waits
    (no PUBREL may come), drops the connection; the session resumed, nothing may be
    re-sent."""

    def run(ctx: ClientContext) -> None:
        conn = ctx.start(publish=[(ctx.topic(), qos, b"refused", False)], clean=False)
        conn.hold = lambda p: isinstance(p, Publish)
        ctx.wait_for("PUBLISH", lambda: bool(conn.held))
        conn.hold = None
        held, conn.held = conn.held, []
        for packet in held:
            conn.feed(packet, refuse=REFUSED)
        ctx.quiet(1.0)
        conn.drop("a lost connection after the refusal")
        try:
            again = ctx.reconnected()
        except Stalled:
            ctx.no_reconnect()
            return
        ctx.quiet(1.5)
        del again

    return run


def _judge_error_ack(qos: int) -> ClientJudge:
    kind = "PUBACK" if qos == 1 else "PUBREC"

    def judge(view: ClientView) -> list[Finding]:
        conns = view.conns()
        refusals = [e for e in view.packets(kind, TO_CLIENT) if e.get("reason_code", 0) >= 0x80]
        if not refusals:
            return []
        findings: list[Finding] = []
        refused_id = refusals[0].get("packet_id")
        if qos == 2:
            rel = [e for e in view.packets("PUBREL") if e.get("packet_id") == refused_id]
            if not rel:
                findings.append(passed(f"no PUBREL after PUBREC 0x{REFUSED:02X}", PUBREL_ON_PUBREC))
        if len(conns) < 2:
            return findings
        again = [p for p in _publishes(view, conns[1]) if _payload(p) == b"refused".hex()]
        if not again:
            findings.append(
                passed(
                    f"not re-sent on the resumed session after {kind} 0x{REFUSED:02X}",
                    NOT_AFTER_ERROR,
                )
            )
        elif not any(p.get("dup") for p in again):
            findings.append(
                tolerated(
                    f"published again as a new message (DUP 0) after {kind} 0x{REFUSED:02X}",
                    NOT_AFTER_ERROR,
                )
            )
        return findings  # a re-send with DUP 1: the link judge's violation

    return judge


# -- re-sending: a resumed session, Session Present 0, Clean Start 1 ------------------------


def _session_lost(ctx: ClientContext) -> None:
    """A QoS 1 message never acknowledged, the connection lost; the client comes back with
    Clean Start 0, the server answers Session Present 0 (it lost the session)."""
    ctx.forget_sessions = True
    conn = ctx.start(publish=[(ctx.topic(), 1, b"resend1", False)], clean=False)
    conn.hold = lambda p: isinstance(p, Publish)
    ctx.wait_for("PUBLISH", lambda: bool(conn.held))
    conn.drop("a lost connection, the PUBLISH never acknowledged")
    try:
        ctx.reconnected()
    except Stalled:
        ctx.no_reconnect()
        return
    ctx.quiet(1.5)


CHECKS: tuple[ClientCheck, ...] = (
    ClientCheck(
        "send.qos0",
        "the client publishes at QoS 0",
        fixed("MQTT-4.3.1-1"),
        v311._publish(0),
        v311._judge_publish(0, "MQTT-4.3.1-1"),
    ),
    ClientCheck(
        "send.qos1",
        "the client publishes at QoS 1",
        fixed("MQTT-4.3.2-1", "MQTT-4.3.2-2", ID_UNUSED),
        v311._publish(1),
        v311._judge_publish(1, "MQTT-4.3.2-2"),
    ),
    ClientCheck(
        "send.qos2",
        "the client publishes at QoS 2 and releases it",
        fixed("MQTT-4.3.3-1", "MQTT-4.3.3-2", PUBREL_ON_PUBREC),
        v311._publish(2),
        v311._judge_publish(2, "MQTT-4.3.3-2"),
    ),
    ClientCheck(
        "send.properties",
        "QoS 1 with every property (User Properties in order, Content Type, Payload "
        "Format Indicator, Response Topic, Correlation Data, Message Expiry)",
        fixed("MQTT-3.3.2-13", "MQTT-3.3.2-19", "MQTT-1.5.7-1"),
        _with_properties,
        _judge_properties,
    ),
    ClientCheck(
        "send.qos1-ids-in-flight",
        "five QoS 1 messages in flight together: distinct identifiers",
        fixed(ID_UNUSED, "MQTT-4.3.2-1"),
        v311._in_flight(1),
        partial(v311._judge_in_flight, id_unused=ID_UNUSED),
    ),
    ClientCheck(
        "send.qos2-ids-in-flight",
        "five QoS 2 messages in flight together: distinct identifiers",
        fixed(ID_UNUSED, "MQTT-4.3.3-1"),
        v311._in_flight(2),
        partial(v311._judge_in_flight, id_unused=ID_UNUSED),
    ),
    ClientCheck(
        "send.receive-maximum-qos1",
        "the server's Receive Maximum 2, acknowledgements withheld: at most 2 QoS 1 "
        "PUBLISH unacknowledged",
        fixed(RECEIVE_MAXIMUM, QUOTA_ZERO),
        _receive_maximum(1),
        _judge_receive_maximum,
    ),
    ClientCheck(
        "send.receive-maximum-qos2",
        "the server's Receive Maximum 2, acknowledgements withheld: at most 2 QoS 2 "
        "PUBLISH unacknowledged",
        fixed(RECEIVE_MAXIMUM, QUOTA_ZERO),
        _receive_maximum(2),
        _judge_receive_maximum,
    ),
    ClientCheck(
        "send.topic-alias-none",
        "no Topic Alias Maximum from the server, the application asks for aliases: none sent",
        fixed(NO_ALIASES, ALIAS_MAXIMUM_PUBLISH),
        _aliases(0),
        _judge_aliases(0),
    ),
    ClientCheck(
        "send.topic-alias-maximum",
        "the server's Topic Alias Maximum 2, the application asks for aliases 1 to 3: none above 2",
        fixed(ALIAS_MAXIMUM, ALIAS_MAXIMUM_PUBLISH),
        _aliases(SERVER_TOPIC_ALIAS_MAXIMUM),
        _judge_aliases(SERVER_TOPIC_ALIAS_MAXIMUM),
    ),
    ClientCheck(
        "send.maximum-packet-size",
        "the server's Maximum Packet Size 256, a 400-byte message: not sent",
        fixed(PACKET_SIZE, "PP50-3.1.2-packet-too-large"),
        _packet_size,
        _judge_packet_size,
    ),
    ClientCheck(
        "send.maximum-qos-1",
        "the server's Maximum QoS 1, a QoS 2 message: not sent at QoS 2",
        fixed(MAXIMUM_QOS),
        _maximum_qos(1),
        _judge_maximum_qos(1),
    ),
    ClientCheck(
        "send.maximum-qos-0",
        "the server's Maximum QoS 0, a QoS 1 message: not sent at QoS 1",
        fixed(MAXIMUM_QOS),
        _maximum_qos(0),
        _judge_maximum_qos(0),
    ),
    ClientCheck(
        "send.retain-not-available",
        "the server's Retain Available 0, a retained message: no RETAIN 1",
        fixed(RETAIN_AVAILABLE),
        _retain,
        _judge_retain,
    ),
    ClientCheck(
        "send.puback-error-ends-flow",
        "PUBACK 0x80, connection lost, session resumed: the message not re-sent",
        fixed(NOT_AFTER_ERROR),
        _error_ack(1),
        _judge_error_ack(1),
    ),
    ClientCheck(
        "send.pubrec-error-ends-flow",
        "PUBREC 0x80: no PUBREL; connection lost, session resumed: not re-sent",
        fixed(NOT_AFTER_ERROR, PUBREL_ON_PUBREC),
        _error_ack(2),
        _judge_error_ack(2),
    ),
    ClientCheck(
        "send.qos1-resent-on-resume",
        "QoS 1 never acknowledged, connection lost, session resumed (Clean Start 0, "
        "Session Present 1): re-sent with DUP 1, same identifier",
        fixed(RESEND, DUP),
        v311._resend(1, clean=False),
        v311._judge_resend,
    ),
    ClientCheck(
        "send.qos2-resent-on-resume",
        "QoS 2 never acknowledged, connection lost, session resumed: re-sent with "
        "DUP 1, same identifier",
        fixed(RESEND, DUP),
        v311._resend(2, clean=False),
        v311._judge_resend,
    ),
    ClientCheck(
        "send.pubrel-resent-on-resume",
        "PUBCOMP never came, connection lost, session resumed: PUBREL re-sent",
        fixed(RESEND, "MQTT-4.3.3-6"),
        v311._pubrel_resend,
        partial(v311._judge_pubrel_resend, after_pubrel="MQTT-4.3.3-6"),
    ),
    ClientCheck(
        "send.resend-order",
        "three QoS 1 messages re-sent on resume in their original order",
        fixed("MQTT-4.6.0-1", RESEND),
        v311._resend_order,
        v311._judge_resend_order,
    ),
    ClientCheck(
        "send.qos1-not-resent-session-absent",
        "QoS 1 never acknowledged, connection lost, Clean Start 0 answered Session "
        "Present 0: not re-sent",
        fixed(RESEND),
        _session_lost,
        partial(
            v311._judge_clean, clean=RESEND, session="Clean Start 0 answered Session Present 0"
        ),
    ),
    ClientCheck(
        "send.qos1-not-resent-after-clean",
        "QoS 1 never acknowledged, connection lost, Clean Start 1: not re-sent",
        fixed(CLEAN),
        v311._resend(1, clean=True),
        partial(v311._judge_clean, clean=CLEAN),
    ),
    ClientCheck(
        "send.pubrel-order",
        "PUBREC answered in reverse order: PUBREL in the order of the PUBRECs",
        fixed("MQTT-4.6.0-4"),
        v311._pubrel_order,
        v311._judge_pubrel_order,
    ),
)
