"""What checks expect of deliveries, as findings.

The deliveries are those of a model client (:mod:`pubproof.judge.link`): what a
well-behaved client hands its application from the packets the broker sent, duplicates of
QoS 2 flows already set aside as the tables say.
"""

from __future__ import annotations

from pubproof.judge.findings import Finding
from pubproof.model.editions import Edition
from pubproof.model.trace import PublishP
from pubproof.probe.evidence import received, sent
from pubproof.probe.findings import missing, passed, tolerated, violation
from pubproof.probe.view import View

#: [MQTT-4.5.0-1] "When a Server takes ownership of an incoming Application Message it MUST
#: add it to the Session state of those clients that have matching Subscriptions."
FORWARD = "MQTT-4.5.0-1"
#: [MQTT-3.8.4-6] the QoS of a delivered message is the lower of the published QoS and the
#: granted maximum QoS.
EFFECTIVE_QOS = "MQTT-3.8.4-6"
#: MQTT 5.0: [MQTT-3.8.4-8] "The QoS of Payload Messages sent in response to a
#: Subscription MUST be the minimum of the QoS of the originally published message and the
#: Maximum QoS granted by the Server"
EFFECTIVE_QOS_50 = "MQTT-3.8.4-8"
#: MQTT 5.0: QoS 0 at most once [MQTT-4.3.1-1], the receiver's response [MQTT-3.3.4-1],
#: QoS 2 never delivered twice [MQTT-4.3.3-10]
ONCE_50 = {0: "MQTT-4.3.1-1", 1: "MQTT-3.3.4-1", 2: "MQTT-4.3.3-10"}


def copies(view: View, client: str, message: PublishP) -> list[PublishP]:
    """Deliveries at ``client`` of ``message`` (same topic and payload)."""
    return [
        d
        for d in view.deliveries(client, message["topic"])
        if d["payload_hex"] == message["payload_hex"]
    ]


def label(message: PublishP) -> str:
    """``'payload' (QoS n)``, for messages."""
    payload = bytes.fromhex(message["payload_hex"])
    text = payload.decode("utf-8", errors="replace") if payload else "(zero bytes)"
    return f"{text!r} (QoS {message['qos']})"


def effective_qos(view: View, client: str, published: int, index: int = 0) -> int:
    """min(published QoS, the QoS granted to the ``index``-th filter of ``client``)."""
    granted = view.granted(client)
    if index < len(granted) and granted[index] <= 2:
        return min(published, granted[index])
    return published


def taken(view: View, publisher: str, message: PublishP) -> bool:
    """Has the broker taken ``message`` from ``publisher`` (and so owes it to subscribers)?
    QoS 0: sent on a connection the broker did not then close; QoS 1: PUBACK came; QoS 2:
    PUBCOMP came (a Method A broker forwards only on PUBREL)."""
    start = next(
        (
            i
            for i, e in enumerate(view.entries)
            if sent(e)
            and e.get("client") == publisher
            and e.get("type") == "PUBLISH"
            and not e.get("dup")
            and (e.get("topic"), e.get("payload_hex")) == (message["topic"], message["payload_hex"])
        ),
        None,
    )
    if start is None:
        return False
    after = [e for e in view.entries[start + 1 :] if e.get("client") == publisher]
    if message["qos"] == 0:
        return not any(e.get("event") == "closed" for e in after)
    kind = "PUBACK" if message["qos"] == 1 else "PUBCOMP"
    return any(
        received(e) and e["type"] == kind and e.get("packet_id") == message["packet_id"]
        for e in after
    )


def delivered(
    view: View, client: str, message: PublishP, qos: int, *, publisher: str
) -> list[Finding]:
    """The message reached ``client`` as its QoS says: at most once (0), at least once (1),
    exactly once (2); at QoS ``qos``. Zero times is missing if the broker took it."""
    got = copies(view, client, message)
    what = f"{client} got {label(message)}"
    if not got:
        if not taken(view, publisher, message):
            return []  # the broker never took it: nothing owed (the flow's findings say why)
        return [missing(f"{client} never got {label(message)}", FORWARD)]
    v50 = view.edition is Edition.V50
    findings = [
        violation(
            f"{what} at QoS {d['qos']}: the subscription and the message make QoS {qos}",
            EFFECTIVE_QOS_50 if v50 else EFFECTIVE_QOS,
        )
        for d in got
        if d["qos"] != qos
    ]
    times = len(got)
    if times == 1:
        findings.append(passed(f"{what} once, at QoS {got[0]['qos']}"))
    elif v50:
        rule = ONCE_50[qos]
        if qos == 1:
            findings.append(tolerated(f"{what} {times} times: QoS 1 is at least once", rule))
        else:
            findings.append(violation(f"{what} {times} times: QoS {qos} is at most once", rule))
    elif qos == 0:
        findings.append(violation(f"{what} {times} times: QoS 0 is at most once", "MQTT-4.3.1-1"))
    elif qos == 1:
        findings.append(tolerated(f"{what} {times} times: QoS 1 is at least once", "MQTT-4.3.2-1"))
    else:
        findings.append(
            violation(
                f"{what} {times} times: QoS 2 is exactly once", "MQTT-4.3.3-1", "MQTT-4.3.3-2"
            )
        )
    return findings


def retain_flag(
    view: View, client: str, message: PublishP, expected: bool, rule: str
) -> list[Finding]:
    """Each delivery of ``message`` at ``client`` carries RETAIN = ``expected``."""
    findings = []
    for d in copies(view, client, message):
        if d["retain"] != expected:
            flag = "set" if d["retain"] else "clear"
            findings.append(violation(f"{client} got {label(message)} with RETAIN {flag}", rule))
    return findings
