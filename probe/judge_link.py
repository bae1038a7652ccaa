"""The link judge applied to one client's connections to the broker (MQTT 5.0: the 5.0
link judge, :class:`pubproof.judge.link50.LinkJudge50`, with what CONNECT and CONNACK
declared; its deliveries carry the resolved topic name and the properties).

A :class:`ClientLink` feeds the entries of a check's evidence that concern one client (across
its reconnections) to a :class:`pubproof.judge.link.LinkJudge` that judges the broker, with
the client as its peer; the model peer's deliveries are what a well-behaved client delivers
(:meth:`pubproof.probe.view.View.deliveries`).

The probe's own deliberate faults (packets marked ``case``, or that the reference rejects)
are not fed to the judge, nor is anything on that connection after a case (what the broker
makes of the case is the close judge's, :func:`pubproof.probe.judge_wire.case_findings`).
An answer still owed when the probe waited (a ``quiet`` or ``timeout`` event after it) is
*missing*; owed answers end with the connection. What the client sends after its
connection closed (the probe saw the close, or dropped it), until it connects again, went
nowhere: the broker never read it, and owes it nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pubproof.judge.describe import as_p
from pubproof.judge.findings import Finding
from pubproof.judge.link import LinkJudge
from pubproof.judge.link50 import LinkJudge50
from pubproof.model.editions import Edition
from pubproof.probe.evidence import TO_BROKER, Entry

WAIT_EVENTS = ("timeout", "quiet", "deadline")
#: the role the probe judges
BROKER = "broker"


class ClientLink:
    """Feed it the entries of a check in order; read its findings and deliveries."""

    __slots__ = (
        "after_case", "broke_at", "client", "findings", "gone", "judge", "last_wait", "v50",
    )  # fmt: skip

    def __init__(self, client: str, *, v311: bool = True, edition: Edition | None = None) -> None:
        self.client = client
        self.v50 = edition is Edition.V50
        self.judge: LinkJudge = (
            LinkJudge50(client, BROKER, server=True, keep=True)
            if self.v50
            else LinkJudge(client, BROKER, keep=True, v311=v311)
        )
        self.findings: list[Finding] = []
        self.last_wait = -1
        self.after_case = False  # the connection carries the probe's case: the case judge's
        #: the index of the first packet by which the client broke rules of its own on
        #: purpose on this connection (``breaks``: a wrong answer), if any
        self.broke_at: int | None = None
        #: the connection closed: until the client connects again, what it sends is
        #: written to a closed socket (the probe records it), and no broker reads it
        self.gone = False

    @property
    def deliveries(self) -> list[Mapping[str, Any]]:
        """What a well-behaved client delivers of what the broker sent this client."""
        return self.judge.deliveries

    def feed(self, index: int, entry: Entry) -> None:
        """Judge the next entry of the check (``index`` is its position)."""
        if "event" in entry:
            self._event(entry)
            if entry["event"] in WAIT_EVENTS:
                self.last_wait = index
            return
        if entry.get("client") != self.client:
            return
        if entry.get("case") or entry.get("type") == "CONNECT":
            # What the broker does after the probe's deliberate fault (accept it, close)
            # is the case's to judge, until the client connects again.
            self.after_case = bool(entry.get("case"))
        if entry.get("type") == "CONNECT":
            self.broke_at = None
            self.gone = False
        elif self.gone:
            return
        elif entry.get("breaks") and self.broke_at is None:
            self.broke_at = index
        if "error" in entry or self.after_case:
            return
        kind = entry["type"]
        fields: Mapping[str, Any]
        if self.v50:  # the 5.0 P (properties, Reason Codes) or description
            fields = {k: v for k, v in entry.items() if k not in _ENTRY_KEYS}
        else:
            fields = as_p(entry) if kind in _P_TYPES else entry
        if entry["dir"] == TO_BROKER:
            self.judge.peer_sent(kind, fields, index)
        else:
            self.judge.judged_sent(kind, fields, self.findings, index)

    def finish(self) -> None:
        """The evidence ends: whatever was owed before the last wait is missing."""
        self.findings += self.judge.close(self._cut())

    def _cut(self) -> int:
        """Answers owed since before this index are missing when the connection ends. After
        the client broke a rule of its own, the broker may close at any moment for the
        protocol violation [MQTT-4.8.0-1] [MQTT-4.13.1-1]: what it owed for the packets
        from that one on is void, not missing."""
        return self.last_wait if self.broke_at is None else min(self.last_wait, self.broke_at)

    def _event(self, entry: Entry) -> None:
        if entry["event"] in ("closed", "dropped") and entry.get("client") == self.client:
            self.findings += self.judge.close(self._cut())
            self.gone = True


_P_TYPES = frozenset({"PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP"})
#: the keys of an entry that are the probe's, not the packet's
_ENTRY_KEYS = frozenset({"dir", "client", "hex", "t", "case", "breaks"})
