"""The distribution judge's ledger: what became of every PUBLISH a client sent the server
and of every PUBLISH the server sent a client, findings or not.

Theory of operation
-------------------
The judge's findings say what is wrong; the ledger says what happened to everything, so
that nothing read is lost: each message in is ``delivered`` (a copy of it went to a
session), judged undeliverable (``no-subscriber``: no session was owed a copy;
``refused``: the server refused it, a 5.0 Reason Code of 0x80 or more; ``invalid``: its
topic name or properties are the wire judges' to reject; ``expired``, ``too-large``,
``session-ended``: every copy owed was excused), ``missing`` (a copy owed and not sent,
a finding), ``again`` (a re-send of a message already counted) or ``unknown:<why>``: what
the events cannot show. The reasons a capture gives (:data:`UNKNOWN`):

- ``session-before-capture``: the link's CONNECT was not seen (the capture started
  after it), so whose session it is, and what it subscribed to, is unknown;
- ``publication-unseen``: a copy of a message no link showed (its publisher's link is
  not in the capture, or started before it);
- ``subscription-changing``: a subscription or connection changed while the message was
  in flight (the judge leaves it open either way);
- ``not-acknowledged``: a QoS 1 or 2 PUBLISH whose PUBACK or PUBREC was never seen (the
  link closed, or the capture ended, first): whether the server took it is unknown;
- ``not-released``: a QoS 2 message whose PUBREL was never seen (a server of Method A
  owes nothing before it);
- ``capture-ended``: a copy still owed when the capture ended, the link still open (the
  server may have sent it later);
- ``capture-lost``: the capture lost part of the link's traffic (a gap): the copy may
  have been in it;
- ``topic-unknown``: a 5.0 PUBLISH whose Topic Alias no mapping seen stands for;
- ``other-edition``: a message owed to (or a copy that may be of a message of) sessions
  of another edition of the protocol on the same server: the distribution model is one
  per edition, so a message that crosses editions is not judged;
- ``retained-order``: a retained message sent for a new subscription that the model's
  store no longer held, replaced (or deleted) by a message whose ownership window
  overlaps its own (each received before the other was owned: a server takes a QoS 1 or
  2 message somewhere between its PUBLISH and its PUBACK or PUBREC), so either may have
  been stored last; and the model's retained copy that the server then owed no more;
- ``quota-full``: a 5.0 session owed a QoS 1 or 2 copy of the message while the
  server's send quota towards it was used up at the end (Receive Maximum QoS 1 and 2
  PUBLISH unacknowledged, [MQTT-3.3.4-9]): the copy waits, legitimately, and the copies
  of the message the session got so far are not judged as all it gets;
- ``ambiguous``: a copy whose topic name and payload are also those of a PUBLISH the
  judge could not take as a message (from a session it does not know, refused, never
  acknowledged): which of them it copies is unknown.

Each copy out is a ``copy`` of a message (the first), ``again`` (a further copy of a
message the session had: the judge counts them), ``resend`` (a re-send of a copy under
way), ``unowed`` (a copy nobody was owed: a finding) or ``unknown:<why>``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pubproof.judge.distribution_events import Event
from pubproof.model.editions import Edition

#: why a message or a copy is unknown (see the module's docstring)
UNKNOWN = (
    "session-before-capture", "publication-unseen", "subscription-changing",
    "not-acknowledged", "not-released", "capture-ended", "capture-lost", "topic-unknown",
    "other-edition", "ambiguous", "retained-order", "quota-full",
)  # fmt: skip
#: the outcomes of a message that say it could not be delivered, and why
UNDELIVERABLE = ("no-subscriber", "refused", "invalid", "expired", "too-large", "session-ended")
#: the outcome of a copy owed to one session, by precedence: a message's outcome is the
#: first of its copies' ("delivered" if any was sent)
PRECEDENCE = ("delivered", "missing", *(f"unknown:{u}" for u in UNKNOWN), *UNDELIVERABLE)


def unknown(why: str) -> str:
    """The outcome ``unknown:<why>`` (``why`` one of :data:`UNKNOWN`)."""
    if why not in UNKNOWN:
        raise ValueError(f"no reason {why!r} (known: {', '.join(UNKNOWN)})")
    return f"unknown:{why}"


@dataclass(slots=True)
class InEntry:
    """A PUBLISH a client sent the server."""

    event: Event
    outcome: str = "unknown:not-acknowledged"  # until the server is seen to take it
    message: tuple[Edition, int] | None = None  # the model's message, once taken
    #: the outcome of each session's copy (client identifier -> outcome), once judged
    sessions: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class OutEntry:
    """A PUBLISH the server sent a client."""

    event: Event
    outcome: str
    message: tuple[Edition, int] | None = None  # the message it is a copy of
    #: 5.0: whether the properties a message's copy carries are not the message's
    changed: bool | None = None


class Ledger:
    """Every PUBLISH in and out, in the order fed, with its outcome."""

    def __init__(self) -> None:
        self.ins: list[InEntry] = []
        self.outs: list[OutEntry] = []
        #: the entry of each message taken: (edition, seq) -> its PUBLISH's entry
        self.messages: dict[tuple[Edition, int], InEntry] = {}
        self._by_order: dict[int, InEntry] = {}

    def received(self, event: Event, outcome: str | None = None) -> InEntry:
        """A PUBLISH from a client; its outcome now, if already known."""
        entry = InEntry(event=event) if outcome is None else InEntry(event, outcome)
        self.ins.append(entry)
        self._by_order[event.order] = entry
        return entry

    def entry(self, event: Event) -> InEntry | None:
        """The entry of the PUBLISH ``event`` (None: not one the ledger holds)."""
        return self._by_order.get(event.order)

    def decided(self, event: Event, outcome: str) -> None:
        """The outcome of the PUBLISH ``event`` (refused, say)."""
        entry = self._by_order.get(event.order)
        if entry is not None:
            entry.outcome = outcome

    def taken(self, event: Event, message: tuple[Edition, int]) -> None:
        """The server took the PUBLISH ``event`` as ``message``."""
        entry = self._by_order.get(event.order)
        if entry is not None:
            entry.message = message
            entry.outcome = "no-subscriber"  # until copies are owed or seen
            self.messages[message] = entry

    def sent(
        self,
        event: Event,
        outcome: str,
        message: tuple[Edition, int] | None = None,
        changed: bool | None = None,
    ) -> None:
        """A PUBLISH to a client, and what it is."""
        self.outs.append(OutEntry(event, outcome, message, changed))

    def counts(self) -> dict[str, Any]:
        """The figures of the reconciliation: messages in and copies out by outcome, and
        the copies owed to sessions by outcome."""
        copies: Counter[str] = Counter()
        for entry in self.ins:
            copies.update(entry.sessions.values())
        return {
            "messages_in": len(self.ins),
            "messages_by_outcome": dict(sorted(Counter(e.outcome for e in self.ins).items())),
            "copies_owed_by_outcome": dict(sorted(copies.items())),
            "copies_out": len(self.outs),
            "copies_by_outcome": dict(sorted(Counter(e.outcome for e in self.outs).items())),
        }


def outcome_of(sessions: dict[str, str], fallback: str) -> str:
    """A message's outcome from its sessions' (the first by :data:`PRECEDENCE`), or
    ``fallback`` when no session was owed a copy."""
    if not sessions:
        return fallback
    return min(sessions.values(), key=lambda o: PRECEDENCE.index(o) if o in PRECEDENCE else 99)
