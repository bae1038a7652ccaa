"""MQTT 5.0 sessions: Session Expiry (a session resumed within its interval, after it, and
with none), and the re-sends a resumed session owes.

[MQTT-3.1.2-23] "The Client and Server MUST store the Session State after the Network
Connection is closed if the Session Expiry Interval is greater than 0." [MQTT-4.1.0-2]
"The Server MUST discard the Session State when the Network Connection is closed and the
Session Expiry Interval has passed." [MQTT-4.4.0-1] a resumed session re-sends what is
unacknowledged, with the original Packet Identifiers.
"""

from __future__ import annotations

from pubproof.judge.findings import Finding
from pubproof.probe.check import Check, Judge, Run, fixed
from pubproof.probe.checks_session import RESEND_PUBLISH_QOS1, RESEND_PUBREL
from pubproof.probe.context import CheckContext
from pubproof.probe.expect import copies, delivered, label
from pubproof.probe.findings import passed, violation
from pubproof.probe.steps import connected, end_session, subscriber
from pubproof.probe.view import View

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
    RESEND_PUBLISH_QOS1,
    RESEND_PUBREL,
)
