"""Findings: what a judge says about one end of a connection, and which judge said it.

A finding has a verdict (``pass``, ``tolerated``, ``deviation`` for a SHOULD not followed,
``violation`` for a MUST broken, ``missing`` for an answer owed and never seen, ``error``
when the judging could not be done; the capture pipeline also writes ``malformed``), the
ids of the rules it charges the judged end with (:attr:`Finding.cited` gives the
registered rule objects), the ids of the rules the *other* end broke to bring it about
(``provoked``: a probe's deliberate case, a peer's fault; never the judged end's, see
:mod:`pubproof.model.duties`), a message, and its ``source``: the judge that produced it.
Every application (the capture pipeline, the live probe) writes the source beside the
finding, so a reader never has to guess it from the rule id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pubproof.model.editions import Edition
from pubproof.model.rules import RULES, Rule

PASS = "pass"
TOLERATED = "tolerated"
#: a SHOULD (or SHOULD NOT) of the judged end not followed: the text recommends against
#: what it did but allows it (RFC 2119); never a violation
DEVIATION = "deviation"
VIOLATION = "violation"
MALFORMED = "malformed"
MISSING = "missing"
ERROR = "error"


class Source:
    """The judges, by the name a finding's ``source`` carries."""

    #: the framer: the stream cannot be cut into packets (pipeline)
    FRAMING = "framing"
    #: the reference codec: a PUBLISH-family packet it rejects, or a control packet that
    #: cannot be read (pipeline)
    CODEC = "codec"
    #: the model's wire format (:func:`pubproof.model.wire.decode`) on a packet a peer sent
    WIRE = "wire"
    #: the link judge (:mod:`pubproof.judge.link`): the flow tables
    LINK = "link"
    #: the close judge (:mod:`pubproof.judge.close`): [MQTT-4.8.0-1]
    CLOSE = "close"
    #: the probe itself: a wait that ran out, a refused connection, an error of the probe
    PROBE = "probe"
    #: a probe check's own judge (what it expects of deliveries, retained messages...)
    CHECK = "check"
    #: the distribution judge (:mod:`pubproof.judge.distribution`): a server's forwarding,
    #: retained messages and sessions, across its links
    DISTRIBUTION = "distribution"

    ALL = (FRAMING, CODEC, WIRE, LINK, CLOSE, PROBE, CHECK, DISTRIBUTION)


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One thing a judge found, with the rule ids it rests on and the judge (``source``).

    ``role`` names the end judged where the judge knows it ("client", "server", a probe's
    client name); ``evidence`` is the trace the finding rests on, where the judge keeps one
    (the applications attach their own evidence otherwise); ``provoked``, the rules the
    other end broke to bring the finding about (reported as what was sent, never charged
    to the judged end)."""

    verdict: str
    rules: tuple[str, ...]
    message: str
    source: str
    role: str | None = None
    evidence: tuple[dict[str, Any], ...] = ()
    provoked: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.source not in Source.ALL:
            raise ValueError(f"unknown judge {self.source!r}")

    def cited(self, edition: Edition | None = None) -> tuple[Rule, ...]:
        """The registered rules the finding cites (ids the registry does not hold, such as
        the reference codec's ``incomplete``, are left out)."""
        found: list[Rule] = []
        for rule_id in self.rules:
            try:
                found.append(RULES.by_id(rule_id, edition))
            except KeyError:
                continue
        return tuple(found)

    def with_rules(self, rules: tuple[str, ...]) -> Finding:
        """The same finding citing ``rules`` instead."""
        return Finding(
            verdict=self.verdict, rules=rules, message=self.message, source=self.source,
            role=self.role, evidence=self.evidence, provoked=self.provoked,
        )  # fmt: skip


def finding(verdict: str, message: str, *rules: str, source: str) -> Finding:
    """A finding of ``source`` with the verdict and the rules given."""
    return Finding(verdict=verdict, rules=rules, message=message, source=source)
