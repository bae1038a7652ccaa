"""The judges a broker runs on its own traffic, besides the wire and link judgement of each
packet a client sends (:mod:`pubproof.probe.serve.flows`): the distribution judge over
every link, which judges the broker itself.

Rules / theory of operation
---------------------------
The link judge (:func:`pubproof.judge.link50.link_judge`) judges the client: it is fed
every packet of the client's connections (``judged_sent`` for what the client sends,
``peer_sent`` for what the broker sends, CONNECT and CONNACK as ``probe-client``'s
:class:`~pubproof.probe.clients.judge.ClientView` feeds them), and its findings name the
Client's rules (:func:`pubproof.judge.ends.about_client`); [MQTT-3.3.1-3] binds a server
that forwards and is never a finding about a client.

The distribution judge (:class:`pubproof.judge.distribution.DistributionJudge`) is fed
every packet of every link as an :class:`~pubproof.judge.distribution_events.Event` and
judges what the broker did with the messages it took: its findings are about serve, role
``server``. It keeps every message it judged, so :class:`SelfJudge` feeds it the first
``limit`` messages only; then it closes every link in the judge's view (the sessions that
outlive them keep their queues), takes its findings, and lets it go. Under ``--edition
any`` the broker's distribution is 5.0's (:mod:`pubproof.probe.serve.engine`), and the
events of a 3.x link are given to the judge as the 5.0 packets they are to it: CONNECT at
level 5 with the Session Expiry Interval CleanSession means, SUBACK with ``reason_codes``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pubproof.judge.distribution import DistributionJudge
from pubproof.judge.distribution_events import C2S, S2C, Event
from pubproof.judge.ends import about_client
from pubproof.judge.findings import Finding
from pubproof.judge.link import FORWARD_DUP, LinkJudge
from pubproof.judge.link50 import link_judge
from pubproof.model.editions import Edition
from pubproof.model.subscriptions import ServerConfig

V50 = Edition.V50
NEVER = 0xFFFF_FFFF
LEVELS = {Edition.V31: 3, Edition.V311: 4, Edition.V50: 5}


#: an answer a client owed for this long when its connection ended is missing (as
#: probe-client's answer timeout: it had the time)
ANSWER_SECONDS = 2.0


def client_findings(found: list[Finding]) -> list[Finding]:
    """The link judge's findings about a client, as they cite the Client's rules."""
    return [about_client(f) for f in found if FORWARD_DUP not in f.rules]


def client_judge(client_id: str, edition: Edition) -> LinkJudge:
    """The link judge of one client, over all its connections: the client judged, what it
    owes kept with when it became owed (an answer still owed when a connection ends is
    missing; the model peer's deliveries are let go after each packet, see :func:`at`)."""
    return link_judge(client_id, "client", edition=edition, keep=True, server=False)


def at(now: float) -> int:
    """The index the judges file a packet under: the broker's clock in milliseconds (what
    ``probe-client`` numbers by the entries of its evidence)."""
    return int(now * 1000)


def owed_at_close(judge: LinkJudge, now: float) -> list[Finding]:
    """The client's connection ended: what it owed for :data:`ANSWER_SECONDS` is missing."""
    judge.deliveries.clear()
    return client_findings(judge.close(at(now - ANSWER_SECONDS)))


class SelfJudge:
    """The distribution judge over the broker's own links (see the module docstring)."""

    def __init__(
        self,
        engine_edition: Edition,
        readings: Mapping[str, str],
        config: ServerConfig,
        *,
        limit: int,
        complete: bool = True,
        mixed: bool = False,
    ) -> None:
        self.edition = engine_edition
        self.limit = limit
        #: whether links of other editions are mapped onto the engine's (``--edition any``)
        self.mixed = mixed
        self.judge: DistributionJudge | None = (
            DistributionJudge(readings, config=config, complete=complete) if limit else None
        )
        self.messages = 0
        self.taken = 0  # findings already handed on
        self.open: set[str] = set()
        self.t = 0.0
        self.stopped_at: float | None = None

    @property
    def active(self) -> bool:
        return self.judge is not None

    def feed(
        self, t: float, conn: str, direction: str, packet: Mapping[str, Any] | None,
        edition: Edition | None,
    ) -> list[Finding]:  # fmt: skip
        """One packet (None: the link closed); the findings it brought."""
        judge = self.judge
        if judge is None:
            return []
        self.t = max(self.t, t)
        if packet is None:
            self.open.discard(conn)
        else:
            self.open.add(conn)
            kind = packet.get("type")
            if kind == "PUBLISH" and direction == C2S:
                self.messages += 1
            if self.mixed and edition is not V50:
                packet = as_50(packet)
        judge.feed(Event(t=self.t, conn=conn, direction=direction, packet=packet))
        found = judge.report.findings
        if len(found) == self.taken:
            return []
        new = found[self.taken :]
        self.taken = len(found)
        return list(new)

    @property
    def full(self) -> bool:
        """Whether the judge has had its ``limit`` of messages."""
        return self.judge is not None and self.messages >= self.limit

    def finish(self, t: float, *, close_links: bool = True) -> list[Finding]:
        """Judge what is left, and let the judge go. ``close_links``: first close every
        link in the judge's view (when it stops at its limit, mid-stream, copies are
        still owed that the broker has yet to send); without it (the broker stops), a copy
        still owed a connected session is *missing*."""
        judge = self.judge
        if judge is None:
            return []
        self.t = max(self.t, t)
        for conn in sorted(self.open) if close_links else ():
            judge.feed(Event(t=self.t, conn=conn, direction=S2C, packet=None))
        self.open.clear()
        found = judge.finish()[self.taken :]
        self.judge = None
        self.stopped_at = t
        return list(found)


def as_50(packet: Mapping[str, Any]) -> Mapping[str, Any]:
    """A 3.x packet as the 5.0 judge reads it (the broker's distribution is 5.0's)."""
    kind = packet.get("type")
    if kind == "CONNECT":
        clean = bool(packet.get("clean_session"))
        return {
            **packet,
            "level": 5,
            "clean_start": clean,
            "properties": {"session_expiry_interval": 0 if clean else NEVER},
        }
    if kind == "SUBACK":
        return {**packet, "reason_codes": list(packet.get("granted", []))}
    if kind == "CONNACK":
        return {**packet, "reason_code": packet.get("return_code", 0)}
    return packet
