"""The sessions as the distribution judge follows them: a CONNACK that accepts a CONNECT
starts or resumes one (:func:`connack`), a link's end or DISCONNECT ends it
(:func:`ended`); and Session Present, what such a CONNACK says of the session the server
holds, judged against the sessions of the distribution model.

Rules
-----
MQTT 3.1.1, 3.2.2.2: [MQTT-3.2.2-1] "If the Server accepts a connection with CleanSession
set to 1, the Server MUST set Session Present to 0"; [MQTT-3.2.2-2] "If the Server has
stored Session state, it MUST set Session Present to 1"; [MQTT-3.2.2-3] "If the Server does
not have stored Session state, it MUST set Session Present to 0". MQTT 5.0, 3.2.2.1.1:
[MQTT-3.2.2-2] "If the Server accepts a connection with Clean Start set to 1, the Server
MUST set Session Present to 0"; [MQTT-3.2.2-3] "If the Server accepts a connection with
Clean Start set to 0 and the Server has Session State for the ClientID, it MUST set Session
Present to 1 in the CONNACK packet, otherwise it MUST set Session Present to 0". MQTT 3.1
has no Session Present: nothing is judged on a 3.1 link.

Theory of operation
-------------------
A clean CONNECT owes Session Present 0 whatever the server holds: it is judged on every
link the judge follows but a capture's (a capture is judged as its compiled twin,
``pipeline/fast/distribution.py``, judges it). Whether a CONNECT with CleanSession (Clean
Start) 0 finds a session is knowable only where the judge sees every link of the server
from its start (``complete``): then the model's sessions are the server's, and the model's
answer (:attr:`pubproof.model.distribution.ConnectOutcome.session_present`) is owed, with
one exception. A 5.0 session whose Session Expiry Interval has passed by the events' clock,
or is within :data:`EXPIRY_MARGIN_MS` of passing, may or may not still be held (the
server's clock is not the events', and it may discard the state after the interval at its
own pace): there either answer is allowed. A session that cannot exist (never created, or
ended with its connection: CleanSession 1, a Session Expiry Interval of 0) makes Session
Present 1 a violation; a session kept and not near its expiry makes Session Present 0 one.
"""

from __future__ import annotations

from dataclasses import dataclass

from pubproof.judge.distribution_capture import judge_owed
from pubproof.judge.distribution_events import Event
from pubproof.judge.distribution_inflight import session_flows
from pubproof.judge.distribution_records import JudgeState, Link, Report, waiting_for_quota
from pubproof.judge.findings import VIOLATION
from pubproof.model import flow_rules as FR
from pubproof.model import flow_rules50 as FR50
from pubproof.model.distribution import DistributionError, DistributionModel
from pubproof.model.distribution_state import NEVER
from pubproof.model.editions import Edition
from pubproof.model.rules import Rule

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50

#: milliseconds before a 5.0 session's expiry from which the server may already have
#: discarded it: a server that counts the interval in whole seconds from its own view of the
#: close may end it up to a second before the events' clock says
EXPIRY_MARGIN_MS = 1000

#: the rules, by edition: (clean, kept, none); 5.0 words the kept and the none cases as one
#: statement [MQTT-3.2.2-3]
_RULES: dict[Edition, tuple[Rule, Rule, Rule]] = {
    V311: (FR.SESSION_PRESENT_CLEAN, FR.SESSION_PRESENT, FR.SESSION_PRESENT_NONE),
    V50: (FR50.SESSION_PRESENT_CLEAN, FR50.SESSION_PRESENT, FR50.SESSION_PRESENT),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Expectation:
    """What a CONNECT's Session Present may be, read before the model connects it:
    ``uncertain`` when either answer is allowed (a 5.0 session at or near its expiry)."""

    edition: Edition
    client_id: str
    clean: bool
    uncertain: bool


def expect(
    model: DistributionModel, client_id: str, *, clean: bool, lapsed: bool
) -> Expectation | None:
    """The expectation for a CONNECT the server accepted, before ``model`` connects it;
    None on a 3.1 link or with no client identifier (one the server assigns). ``lapsed``:
    the model ended the client's session at its expiry and no CONNECT has come since."""
    if model.edition is V31 or not client_id:
        return None
    uncertain = False
    if not clean and model.edition is V50:
        session = model.sessions.get(client_id)
        if session is None:
            uncertain = lapsed
        elif not session.connected and session.expiry_interval != NEVER:
            assert session.disconnected_at is not None
            deadline = session.disconnected_at + session.expiry_interval * 1000
            uncertain = model.now >= deadline - EXPIRY_MARGIN_MS
    return Expectation(edition=model.edition, client_id=client_id, clean=clean, uncertain=uncertain)


def judge_session_present(
    report: Report,
    expectation: Expectation,
    owed: bool,
    sent: bool,
    events: tuple[Event, ...],
    *,
    complete: bool,
) -> None:
    """Judge the CONNACK's Session Present ``sent`` against ``owed`` (the model's answer);
    ``complete``: the judge sees every link from the server's start, so the model's
    sessions are the server's (else only a clean CONNECT is judged). A right answer is no
    pass: the pinned verdicts name the rules that decided the copies, and stay as they were."""
    edition = expectation.edition
    clean_rule, kept_rule, none_rule = _RULES[edition]
    who = expectation.client_id
    if expectation.clean:
        rule = clean_rule
        flag = "CleanSession" if edition is V311 else "Clean Start"
        why = f"a clean connection ({flag} 1)"
    elif not complete:
        return
    elif expectation.uncertain:
        return  # the server may or may not still hold it [MQTT-4.1.0-2]
    elif owed:
        rule, why = kept_rule, "a session the server holds (kept since its last connection)"
    else:
        rule, why = none_rule, "no session the server can hold (never made, or ended)"
    if sent == owed:
        return
    if edition is V311 and owed:
        # the link judge names this one on the link itself (judge.cited.SESSION_LOST: the
        # same [MQTT-3.2.2-2]); a second finding of the same fault would only repeat it
        return
    report.found(
        VIOLATION,
        rule,
        edition,
        f"{who}: the server answered Session Present {int(sent)} for {why}; "
        f"it owes Session Present {int(owed)}",
        events,
    )


def connack(judge: JudgeState, link: Link, event: Event) -> None:
    """A CONNACK: one that accepts a CONNECT starts or resumes the session of its link's
    client in the model (Session Present judged against it: :func:`judge_session_present`)
    and ends the session's link to any other connection of that client."""
    packet = event.packet or {}
    code = int(packet.get("reason_code", packet.get("return_code", 0)))
    judge._settle(link.client_id, event.order)
    if code != 0 or link.client_id is None or link.edition is None or link.connected:
        return
    model = judge._model(link.edition)
    key = (link.edition, link.client_id)
    expectation = expect(model, link.client_id, clean=link.clean, lapsed=key in judge.lapsed)
    # the copies a session starting clean drops may have waited for its send quota
    spared = waiting_for_quota(judge.flows, judge.models, judge.messages, key) if link.clean else ()
    try:
        resumed = model.connect(
            link.client_id, clean=link.clean,
            session_expiry_interval=link.session_expiry if link.edition is V50 else 0,
        )  # fmt: skip
    except DistributionError:
        return
    judge.lapsed.discard(key)
    judge.quota_spared.update(spared)
    connect = judge.connects.get(link.conn)
    if expectation is not None and not judge.capture:
        judge_session_present(
            judge.report, expectation, resumed.session_present,
            bool(packet.get("session_present")),
            (event,) if connect is None else (connect, event), complete=judge.complete,
        )  # fmt: skip
    for copy in (*resumed.owed, *resumed.optional):
        judge.owed_at[link.edition, copy.copy_id] = event
    link.connected = True
    link.whole = judge.capture and not link.lossy and not packet.get("session_present")
    if link.clean:  # a new session: nothing of the old one is under way
        judge.flows.pop((link.edition, link.client_id), None)
    if link.edition is V50:  # the send quota towards this link's client
        session_flows(judge, link).receive_maximum = link.receive_maximum
    # another link of the same client was taken over [MQTT-3.1.4-2]
    for other in judge.links.values():
        if other is not link and other.client_id == link.client_id and other.connected:
            other.connected = False


def ended(judge: JudgeState, link: Link, event: Event, expiry: int | None) -> None:
    """The link's session disconnects (``expiry``: 5.0 DISCONNECT's Session Expiry
    Interval); on a capture, what a session that ends with it was still owed is
    judged (:func:`.distribution_capture.judge_owed`)."""
    assert link.edition is not None and link.client_id is not None
    model = judge._model(link.edition)
    session = model.sessions.get(link.client_id)
    pending = () if session is None else tuple(session.pending)
    optional = () if session is None else tuple(session.optional)
    key = (link.edition, link.client_id)
    spared = waiting_for_quota(judge.flows, judge.models, judge.messages, key)
    try:
        model.disconnect(link.client_id, session_expiry_interval=expiry)
    except DistributionError:
        return
    if link.client_id not in model.sessions:  # what waited for the quota ends with it
        judge.quota_spared.update(spared)
    if judge.capture and link.client_id not in model.sessions:
        judge_owed(judge, link, link.edition, link.client_id, event, pending, optional)
