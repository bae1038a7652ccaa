"""A check: the actions that make the evidence, and the judge that reads it.

The verdict of a check is a pure function of its evidence (:func:`judge`): another tool, or
a test, can take the evidence of a report and judge it again with the model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from pubproof.judge.describe import describe
from pubproof.judge.distribution import judge_events
from pubproof.judge.distribution_events import from_probe
from pubproof.judge.findings import Finding, Source
from pubproof.model.editions import Edition
from pubproof.probe.context import CheckContext
from pubproof.probe.evidence import LIVENESS_CLIENT, Entry, connack_code
from pubproof.probe.findings import Judgement, conclude, error, missing, tolerated, violation
from pubproof.probe.judge50 import frame_findings50
from pubproof.probe.judge_wire import frame_findings
from pubproof.probe.view import View

Run = Callable[[CheckContext], None]
Judge = Callable[[View], list[Finding]]
Rules = Callable[[Edition], tuple[str, ...]]


def fixed(*rule_ids: str) -> Rules:
    """The same rule ids in every edition (the flow rules, as :mod:`pubproof.model.flows`)."""
    return lambda edition: rule_ids


def per_edition(v3: tuple[str, ...], v50: tuple[str, ...]) -> Rules:
    """The rules of a check that runs in every edition: ``v3`` in MQTT 3.1 and 3.1.1,
    ``v50`` in 5.0 (which numbers its statements afresh)."""
    return lambda edition: v50 if edition is Edition.V50 else v3


@dataclass(frozen=True, slots=True)
class Check:
    """One entry of the catalog."""

    id: str
    title: str
    rules: Rules
    run: Run
    judge: Judge
    #: seconds added to the check's deadline (a check that must wait out an expiry)
    extra: float = 0.0
    #: a check of the broker's distribution: the distribution judge also says what it did
    #: right (its passes name the rules that decided each copy)
    distribution: bool = False

    def rules_for(self, edition: Edition) -> tuple[str, ...]:
        """The rule ids the check rests on in ``edition``."""
        return self.rules(edition)


def judge(
    check: Check, entries: Sequence[Entry], edition: Edition, readings: Mapping[str, str]
) -> Judgement:
    """The verdict of ``check`` on this evidence."""
    view = View(entries, edition, readings)
    findings = all_findings(check, view)
    if not findings and edition is Edition.V50:
        # every 5.0 check says what it saw when it passes: none means it stopped short
        findings.append(error("the check stopped before the broker was put to its question"))
    waited = any(e.get("event") == "timeout" for e in view.entries)
    silence = "the broker went silent" if waited else ""
    return conclude(
        findings, check.rules_for(edition), broker_alive=view.broker_alive, silence=silence,
        role="server", edition=edition,
    )  # fmt: skip


def all_findings(check: Check, view: View) -> list[Finding]:
    """Every judge's findings on a check's evidence: the probe's own (no connection, a
    wait that ran out), the wire format, the flow tables on each client's links, the
    closes, the distribution across the links, and the check's own judge. The one list
    :func:`judge` concludes from, and what ``pubproof explore`` reads after each move."""
    return [
        *probe_findings(view),
        *(frame_findings50(view) if view.edition is Edition.V50 else frame_findings(view)),
        *(f for link in view.links.values() for f in link.findings),
        *close_findings(view),
        *distribution_findings(view, passes=check.distribution),
        *check.judge(view),
    ]


def distribution_findings(view: View, *, passes: bool = False) -> list[Finding]:
    """The distribution judge's findings on every client's links: what the broker did with
    the messages it took (the probe sees all its clients from their start, so a copy of
    nothing published is a finding too)."""
    events = from_probe(view.entries)
    return judge_events(events, view.readings, complete=True, passes=passes)


def probe_findings(view: View, start: int = 0) -> list[Finding]:
    """What kept the probe from running the check: no connection, a refusal, an error; and
    every wait that ran out (missing: no-answer if the broker showed no sign of life after
    it, a violation if it did). From entry ``start`` on: each entry's finding is its own."""
    findings: list[Finding] = []
    for entry in view.entries[start:]:
        event = entry.get("event")
        if event == "connect-failed" and entry.get("client") in view.clients:
            findings.append(error(f"{entry['client']}: no connection: {entry.get('message')}"))
        elif event == "error":
            findings.append(error(f"the probe failed: {entry.get('message')}"))
        elif event == "timeout":
            waited = f"waited {entry.get('seconds')} s for {entry.get('waiting_for')}"
            findings.append(missing(f"{entry['client']}: {waited}", source=Source.PROBE))
        elif event == "deadline":
            message = entry.get("message") or "the check reached its hard deadline"
            findings.append(missing(message, source=Source.PROBE))
        elif entry.get("type") == "CONNACK" and connack_code(entry) != 0:
            code = connack_code(entry)
            findings.append(error(f"{entry['client']}: the broker refused CONNECT (code {code})"))
    return findings


def close_findings(view: View) -> list[Finding]:
    """Connections the broker closed: before CONNACK (the probe could not run the check),
    or after CONNACK with no case on that connection (a violation: nothing called for it).

    A packet by which the client broke rules of its own on purpose (``breaks``: a wrong
    acknowledgement) is a protocol violation the broker may close for ([MQTT-4.8.0-1],
    [MQTT-4.13.1-1]) or pass over (the model's sender table ignores it): a close is
    tolerated until the broker shows it read on past that packet and kept the connection
    (it answered a PINGREQ, SUBSCRIBE or UNSUBSCRIBE the client sent after it)."""
    closes = Closes(view.edition)
    closes.feed(view.entries)
    return closes.findings


class Closes:
    """The close judge (:func:`close_findings`) on evidence that grows: each close's finding
    rests on it and the entries before it, so :meth:`feed` reads only the entries not read
    yet and :attr:`findings` are those of the whole evidence read so far."""

    __slots__ = ("edition", "fed", "findings", "last_sent", "state")

    def __init__(self, edition: Edition) -> None:
        self.edition = edition
        self.fed = 0  # the entries read so far
        self.findings: list[Finding] = []
        self.state: dict[str, str] = {}  # client -> connecting, connected, cased, refused,
        # disconnected, faulted (the client broke a rule of its own), faulted, read on
        self.last_sent: dict[str, str] = {}

    def feed(self, entries: Sequence[Entry]) -> None:
        """Read the entries of ``entries`` not read yet."""
        if self.fed > len(entries):
            raise ValueError(f"the evidence shrank: {len(entries)} entries, {self.fed} read")
        state, last_sent = self.state, self.last_sent
        for entry in entries[self.fed :]:
            name = entry.get("client")
            client = str(name)
            kind = entry.get("type")
            if entry.get("dir") == "to-broker":
                last_sent[client] = describe(entry)
                if entry.get("breaks") and state.get(client, "").startswith(_OPEN):
                    state[client] = "faulted"
                elif state.get(client) == "faulted":
                    state[client] = "faulted, read on"
                if kind == "CONNECT":
                    state[client] = "connecting"
                elif kind == "DISCONNECT":
                    # 3.14.4: on receipt of DISCONNECT the Server "SHOULD close the Network
                    # Connection if the Client has not already done so" (3.1.1 and 5.0 alike;
                    # the client MUST close it [MQTT-3.14.4-1]): whoever closes first, no finding
                    state[client] = "disconnected"
            if entry.get("case"):
                state[client] = "cased"
            elif kind == "CONNACK":
                state[client] = "connected" if connack_code(entry) == 0 else "refused"
            elif kind in READ_ON and state.get(client) == "faulted, read on":
                state[client] = "connected"  # it read past the client's fault and went on
            elif entry.get("event") == "closed" and _a_client(name):
                after = last_sent.get(client, "nothing")
                if state.get(client) == "connecting":
                    edition = self.edition.value
                    message = f"{client}: the broker closed the connection instead of CONNACK "
                    self.findings.append(error(message + f"(does it speak MQTT {edition}?)"))
                elif state.get(client) == "connected":
                    message = f"{client}: the broker closed the connection after {after}"
                    message += ", which the model accepts"
                    self.findings.append(violation(message, source=Source.CLOSE))
                elif state.get(client, "").startswith("faulted"):
                    message = f"{client}: the broker closed the connection after the client "
                    message += "broke a rule of its own on purpose (a protocol violation)"
                    self.findings.append(tolerated(message, source=Source.CLOSE))
        self.fed = len(entries)


_OPEN = ("connected", "faulted")
#: the broker's answers that show it read every packet the client sent before the one
#: answered (each answers a packet the explorer awaits the answer of before going on)
READ_ON = frozenset({"PINGRESP", "SUBACK", "UNSUBACK"})


def _a_client(name: object) -> bool:
    """Whether ``name`` is one of a check's clients (:attr:`View.clients`: a name, not the
    liveness probe's); the entry that names it is in the evidence, so it is one."""
    return isinstance(name, str) and name != LIVENESS_CLIENT
