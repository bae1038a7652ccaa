"""What the judges make of an example's evidence, and which of it is a failure.

Rules / theory of operation
---------------------------
An example's evidence is the probe's (:mod:`pubproof.probe.evidence`), so the probe's own
list of judges reads it: :func:`pubproof.probe.check.all_findings` with the exploration's
:data:`EXPLORE` check (the probe's findings, the wire format, the flow tables on every
client's links, the closes, the distribution judge with its passes, and the close judge
on the example's invalid move, if it made one). Each judge already accepts every answer
the model allows, and reports a MAY or a SHOULD as ``tolerated`` or ``deviation``.

A *failure* is a ``violation``, or a ``missing`` answer when the broker showed a sign of
life after the wait that ran out (the probe's :func:`~pubproof.probe.findings.conclude`
makes it a violation then, a ``no-answer`` otherwise). While an example runs
(``final=False``) only violations count: an answer or a copy may still be on its way.
``error`` findings (the probe could not do a move) are kept apart: they are the
explorer's trouble, not the broker's.

The distribution judge reads a QoS 2 message as owned when the server sends PUBREC
(Method B); a Method A server owns it when the PUBREL arrives, and the texts allow both.
A distribution violation stands only if the judge also finds it on the evidence read as a
Method A server's (:func:`as_method_a`): a subscriber that got the old retained message
while the new one still awaited its PUBREL is not failed.

A failure's *key* is the rule it charges (its rule ids, joined), or, for a finding that
cites none (a close nothing called for, a malformed control packet), its judge: the key is
what the shrinker holds fixed (:mod:`.machine`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from pubproof.judge.findings import ERROR, MISSING, TOLERATED, VIOLATION, Finding, Source
from pubproof.model.editions import Edition
from pubproof.probe.check import Check, all_findings, distribution_findings, fixed
from pubproof.probe.context import CheckContext
from pubproof.probe.evidence import Entry
from pubproof.probe.judge50 import case_findings50
from pubproof.probe.judge_wire import case_findings
from pubproof.probe.view import View


def _no_run(ctx: CheckContext) -> None:
    raise RuntimeError("an exploration's moves are the state machine's, not a check's")


def _case(view: View) -> list[Finding]:
    """The close judge on the example's invalid move (if any)."""
    return case_findings50(view) if view.edition is Edition.V50 else case_findings(view)


#: the exploration as the probe's judges see it: no rules of its own, the distribution
#: judge's passes kept (they name the distribution rules an example exercised)
EXPLORE = Check(
    id="explore", title="model-chosen moves", rules=fixed(), run=_no_run, judge=_case,
    distribution=True,
)  # fmt: skip


def _tolerated_as_method_a(finding: Finding) -> Finding:
    """A distribution violation that a Method A broker's ownership explains."""
    return Finding(
        verdict=TOLERATED, rules=finding.rules, source=finding.source, role=finding.role,
        message=f"{finding.message} (as a Method A server does: it owns a QoS 2 message "
        "on PUBREL)", evidence=finding.evidence, provoked=finding.provoked,
    )  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
    """A finding the broker fails on: its key, rules, judge and message."""

    key: str
    rules: tuple[str, ...]
    verdict: str  # violation, or missing (the broker alive)
    source: str
    message: str
    #: the rules the probe's deliberate fault broke, that the broker's answer to it is
    #: judged by (an invalid move's: a topic name with a wildcard, a packet identifier 0)
    provoked: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.key or self.verdict not in (VIOLATION, MISSING):
            raise ValueError(f"a failure has a key and is a violation or missing: {self!r}")

    @property
    def id(self) -> str:
        """What tells this failure apart from others of the same key: the key and the
        rules of the fault it answered (the broker that keeps the connection open after a
        topic name with a wildcard and after packet identifier 0 fails MQTT-4.8.0-1 twice,
        two faults the exploration reports each)."""
        return f"{self.key} after {' '.join(self.provoked)}" if self.provoked else self.key

    def to_json(self) -> dict[str, object]:
        """The failure as JSON."""
        out: dict[str, object] = {
            "key": self.key, "rules": list(self.rules), "verdict": self.verdict,
            "source": self.source, "message": self.message,
        }  # fmt: skip
        if self.provoked:
            out["provoked"] = list(self.provoked)
        return out


def key_of(finding: Finding) -> str:
    """The rule a finding charges (its rule ids joined), or its judge when it cites none."""
    return " ".join(finding.rules) if finding.rules else f"{finding.source}: no rule named"


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """The judges' findings on an example, and what of them fails the broker."""

    findings: tuple[Finding, ...]
    failures: tuple[Failure, ...]
    errors: tuple[str, ...]
    broker_alive: bool

    @property
    def keys(self) -> tuple[str, ...]:
        """The keys of the failures, each once, in the order found."""
        return tuple(dict.fromkeys(f.key for f in self.failures))

    def first(self, skip: Sequence[str] = ()) -> Failure | None:
        """The first failure whose :attr:`~Failure.id` is not in ``skip``, one that names a
        rule before one that does not (a wait that ran out is the probe's word for an
        answer the link judge names the rule of)."""
        left = [f for f in self.failures if f.id not in skip]
        return next((f for f in left if f.rules), left[0] if left else None)


def as_method_a(entries: Sequence[Entry]) -> list[Entry]:
    """The evidence as the distribution judge would read a Method A broker's: the server
    takes ownership of a QoS 2 message when the PUBREL arrives (Method A, "store the
    message, deliver on PUBREL"), not when it sends the PUBREC (Method B, what the judge
    reads). Each PUBREC the broker sent a publisher before the publisher's PUBREL of that
    identifier moves to just before the PUBREL; one no PUBREL follows is left out (the
    message was never owned)."""
    reading = MethodA()
    reading.feed(entries)
    return reading.entries


class MethodA:
    """:func:`as_method_a` on evidence that grows: a PUBREC is held until its PUBREL, so
    the reading only grows (the reading of a part of the evidence is the start of the
    reading of the whole); :meth:`feed` reads only the entries not read yet."""

    __slots__ = ("entries", "fed", "waiting")

    def __init__(self) -> None:
        self.entries: list[Entry] = []  # the reading so far
        self.fed = 0  # the entries of the evidence read so far
        self.waiting: dict[tuple[str, int], list[Entry]] = {}  # PUBRECs before their PUBREL

    def feed(self, entries: Sequence[Entry]) -> None:
        """Read the entries of ``entries`` not read yet."""
        out, waiting = self.entries, self.waiting
        for entry in entries[self.fed :]:
            client, kind = str(entry.get("client")), entry.get("type")
            packet_id = entry.get("packet_id")
            if kind == "PUBREC" and entry.get("dir") == "from-broker" and "error" not in entry:
                waiting.setdefault((client, int(packet_id or 0)), []).append(entry)
                continue
            if kind == "PUBREL" and entry.get("dir") == "to-broker" and "error" not in entry:
                key = (client, int(packet_id or 0))
                out += [{**e, "t": entry["t"]} for e in waiting.pop(key, [])]
            out.append(entry)
        self.fed = max(self.fed, len(entries))


def _method_a_keys(entries: Sequence[Entry], edition: Edition,
                   readings: Mapping[str, str]) -> set[str]:  # fmt: skip
    """The keys of the distribution judge's violations on the Method A reading."""
    view = View(as_method_a(entries), edition, readings)
    return {key_of(f) for f in distribution_findings(view) if f.verdict == VIOLATION}


def _client_of(finding: Finding) -> str:
    """The client a finding's message opens with (the judges' messages start ``c0: ...``)."""
    return finding.message.partition(":")[0]


def judge_example(
    entries: Sequence[Entry],
    edition: Edition,
    readings: Mapping[str, str],
    *,
    final: bool = True,
) -> Verdict:
    """The judges on an example's evidence (``final``: it has ended with a quiet window,
    so an answer still owed is missing)."""
    view = View(entries, edition, readings)
    return concluded(all_findings(EXPLORE, view), view, final=final)


def concluded(
    found: Sequence[Finding],
    view: View,
    *,
    final: bool,
    method_a: Callable[[], set[str]] | None = None,
    alive: bool | None = None,
) -> Verdict:
    """The verdict of the judges' findings ``found`` on ``view``'s evidence: a
    distribution violation stands only on both readings (Methods A and B), and the
    failures are the violations (and, ``final``, the missing answers of a live broker).
    ``method_a`` and ``alive``, when given, are what the evidence says of them, kept by a
    judging that reads it as it grows (:mod:`.judging`): the keys of the distribution
    violations on the Method A reading, and :attr:`View.broker_alive`."""
    entries, edition, readings = view.entries, view.edition, view.readings
    alive = view.broker_alive if alive is None else alive
    if any(f.source == Source.DISTRIBUTION and f.verdict == VIOLATION for f in found):
        # a broker may be Method A or B: a distribution violation stands only if the
        # judge finds it on both readings of the evidence
        both = _method_a_keys(entries, edition, readings) if method_a is None else method_a()
        found = [
            f if f.source != Source.DISTRIBUTION or f.verdict != VIOLATION
            or key_of(f) in both else _tolerated_as_method_a(f)
            for f in found
        ]  # fmt: skip
    # a wait that ran out is the probe's word for a silence; where a judge names the rule
    # of an answer missing on the same client, that is the failure (else one silence would
    # be found twice, the second time as "probe: no rule named")
    named = {_client_of(f) for f in found if f.verdict == MISSING and f.rules}
    failures = [
        Failure(key=key_of(f), rules=f.rules, verdict=f.verdict, source=f.source,
                message=f.message, provoked=f.provoked)
        for f in found
        if f.verdict == VIOLATION or (final and alive and f.verdict == MISSING and not (
            f.source == Source.PROBE and not f.rules and _client_of(f) in named))
    ]  # fmt: skip
    errors = tuple(f.message for f in found if f.verdict == ERROR)
    return Verdict(
        findings=tuple(found), failures=tuple(failures), errors=errors, broker_alive=alive
    )
