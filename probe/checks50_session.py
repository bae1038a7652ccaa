"""MQTT 5.0 sessions: Session Expiry (a session resumed within its interval, after it, and
with none), and the re-sends a resumed session owes.

[MQTT-3.1.2-23] "The Client and Server MUST store the Session State after the Network
Connection is closed if the Session Expiry Interval is greater than 0." [MQTT-4.1.0-2]
"The Server MUST discard the Session State when the Network Connection is closed and the
Session Expiry Interval has passed." [MQTT-4.4.0-1] a resumed session re-sends what is
unacknowledged, with the original Packet Identifiers.
"""

from __future__ import annotations

from collections.abc import Callable

from pubproof.judge.findings import Finding
from pubproof.probe.check import Check, Judge, Run, fixed
from pubproof.probe.context import CheckContext
from pubproof.probe.expect import copies, delivered, label
from pubproof.probe.findings import passed, violation
from pubproof.probe.steps import connected, end_session, subscriber
from pubproof.probe.view import View
from pubproof.reference.packets import Packet, Publish, PubRel

PUB, SUB = "pub", "sub"
#: how long the check waits past a Session Expiry Interval of 1 s (whole-second clocks)
EXPIRY_WAIT = 2.2
STORE = "MQTT-3.1.2-23"
DISCARD = "MQTT-4.1.0-2"
#: Session Present 1 when the Server has Session State for a Clean Start 0 CONNECT
SESSION_PRESENT = "MQTT-3.2.2-3"


def _expiry(interval: int | None, wait: float) -> Run:
    """The subscriber connects with Session Expiry Interval ``interval`` (None: none),
    subscribes, disconnects; a message is published; ``wait`` seconds later the subscriber
    connects again with Clean Start 0."""

    def run(ctx: CheckContext) -> None:
        topic = ctx.topic()
        properties = {} if interval is None else {"session_expiry_interval": interval}
        sub = subscriber(ctx, SUB, (topic, 1), properties=properties)
        end_session(ctx, sub)
        sub.disconnect()
        pub = connected(ctx, PUB)
        pub.publish(topic, b"while-away", qos=1)
        ctx.wait_for(pub, "the publisher's flow complete", lambda: pub.settled)
        if wait:
            ctx.quiet(wait)
        sub.reconnect(clean=False)
        if sub.session_present:
            ctx.wait_for(
                sub, "the message kept for the session",
                lambda: sub.delivered([b"while-away"]) and sub.settled,
            )  # fmt: skip
        ctx.quiet()

    return run


def _resumed(view: View) -> bool | None:
    """Session Present of the subscriber's second CONNACK (None if there is none)."""
    connacks = view.packets(SUB, "CONNACK")
    return None if len(connacks) < 2 else bool(connacks[1].get("session_present"))


def _judge_kept(view: View) -> list[Finding]:
    resumed = _resumed(view)
    message = next(iter(view.published(PUB)), None)
    if resumed is None or message is None:
        return []
    if not resumed:
        what = "Session Present 0: the session (Session Expiry Interval 2 s) was not kept"
        return [violation(what, STORE, SESSION_PRESENT)]
    findings = [passed("Session Present 1: the session was kept", STORE, SESSION_PRESENT)]
    return findings + delivered(view, SUB, message, 1, publisher=PUB)


def _judge_discarded(why: str) -> Judge:
    def judge(view: View) -> list[Finding]:
        resumed = _resumed(view)
        message = next(iter(view.published(PUB)), None)
        if resumed is None or message is None:
            return []
        findings: list[Finding] = []
        if resumed:
            findings.append(violation(f"Session Present 1 {why}", DISCARD, SESSION_PRESENT))
        else:
            findings.append(passed(f"Session Present 0 {why}", DISCARD, SESSION_PRESENT))
        if copies(view, SUB, message):
            what = f"{SUB} got {label(message)} from a session that had ended"
            findings.append(violation(what, DISCARD))
        return findings

    return judge


# -- re-sends on a resumed session --------------------------------------------------------


def _subscriber_drops(qos: int, hold: Callable[[Packet], bool], what: str) -> Run:
    """The subscriber (Session Expiry 30 s) drops its connection holding ``what``, and
    resumes its session."""

    def run(ctx: CheckContext) -> None:
        topic, payload = ctx.topic(), f"resume-{what.lower()}".encode()
        sub = subscriber(ctx, SUB, (topic, qos), properties={"session_expiry_interval": 30})
        end_session(ctx, sub)
        sub.hold = hold
        pub = connected(ctx, PUB)
        pub.publish(topic, payload, qos=qos)
        ctx.wait_for(sub, what, lambda: bool(sub.held))
        sub.drop()
        sub.hold, sub.held = None, []
        before = sub.count(what)
        sub.reconnect(clean=False)
        ctx.wait_for(
            sub,
            f"the re-sent {what}, every flow complete",
            lambda: sub.count(what) > before and sub.settled and pub.settled,
        )
        ctx.quiet()

    return run


def _judge_resent(qos: int, kind: str) -> Judge:
    def judge(view: View) -> list[Finding]:
        published = view.published(PUB)
        connects = [
            i for i, e in enumerate(view.entries)
            if e.get("client") == SUB and e.get("type") == "CONNECT"
        ]  # fmt: skip
        if not published or len(connects) < 2:
            return []
        before = {
            e["packet_id"] for e in view.entries[: connects[1]]
            if e.get("client") == SUB and e.get("type") == kind and e.get("dir") == "from-broker"
        }  # fmt: skip
        findings: list[Finding] = []
        for entry in view.entries[connects[1] :]:
            if (
                entry.get("client") == SUB and entry.get("type") == kind
                and entry.get("dir") == "from-broker" and entry.get("packet_id") in before
            ):  # fmt: skip
                dup = " with DUP 1" if entry.get("dup") else ""
                note = f"re-sent {kind} {entry['packet_id']}{dup} after the session resumed"
                findings.append(passed(note, "MQTT-4.4.0-1"))
                break
        message = published[0]
        if qos == 2:
            return findings + delivered(view, SUB, message, 2, publisher=PUB)
        if copies(view, SUB, message):  # a held and a re-sent copy: at least once
            findings.append(passed(f"{SUB} got {label(message)} at least once"))
        return findings

    return judge


CHECKS: tuple[Check, ...] = (
    Check(
        id="session.expiry-within",
        title="Session Expiry Interval 2 s, resumed at once: the session and its message kept",
        rules=fixed(STORE, SESSION_PRESENT, "MQTT-4.4.0-1"),
        run=_expiry(2, 0.0),
        judge=_judge_kept,
    ),
    Check(
        id="session.expiry-passed",
        title="Session Expiry Interval 1 s, resumed 2.2 s later: the session is gone",
        rules=fixed(DISCARD, SESSION_PRESENT),
        run=_expiry(1, EXPIRY_WAIT),
        judge=_judge_discarded("after the Session Expiry Interval (1 s) passed"),
        extra=EXPIRY_WAIT,
    ),
    Check(
        id="session.expiry-absent",
        title="no Session Expiry Interval: the session ends with the connection",
        rules=fixed(DISCARD, SESSION_PRESENT),
        run=_expiry(None, 0.0),
        judge=_judge_discarded(
            "with no Session Expiry Interval (0: the session ends with the connection)"
        ),
    ),
    Check(
        id="session.resend-publish-qos1",
        title="subscriber drops before PUBACK, resumes: PUBLISH re-sent with DUP 1",
        rules=fixed("MQTT-4.4.0-1", "MQTT-3.3.1-1"),
        run=_subscriber_drops(1, lambda p: isinstance(p, Publish), "PUBLISH"),
        judge=_judge_resent(1, "PUBLISH"),
    ),
    Check(
        id="session.resend-pubrel",
        title="subscriber drops before PUBCOMP, resumes: PUBREL re-sent, not PUBLISH",
        rules=fixed("MQTT-4.4.0-1", "MQTT-4.3.3-6"),
        run=_subscriber_drops(2, lambda p: isinstance(p, PubRel), "PUBREL"),
        judge=_judge_resent(2, "PUBREL"),
    ),
)
