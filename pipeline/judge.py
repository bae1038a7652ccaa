"""The flow tables' judgement of one captured connection, both ends at once.

A capture judges both implementations, so two :class:`pubproof.probe.judge_link.LinkJudge`
watch the connection, each driven by the model's tables (:mod:`pubproof.model.flows`,
:mod:`pubproof.model.session`):

- one sees the client as the probe's client and the server as the broker: it judges what
  the **server** sends (acknowledgements nobody awaits, PUBREL before PUBREC, re-sends
  without DUP, a new message on an identifier in use, what a receiving client's table
  calls a violation or tolerates);
- the other sees the roles swapped, so it judges what the **client** sends by the same
  tables (the rules of section 4.3 bind sender and receiver alike, in both directions).

Every finding arises while the judge takes in one packet, and it is a finding about that
packet's sender; so it gets that packet's frame and offset. An answer still owed when the
connection ends is not a finding (the connection may have been cut): the link judges only
report what is owed after a *wait*, and a capture has none.

One rule of ``LinkJudge`` is about a broker that forwards: DUP 1 on a message it had not
sent to this client [MQTT-3.3.1-3]. On a capture that holds for the server only, and only
on a clean session seen from its CONNECT (a resumed session re-sends with DUP 1 what an
earlier connection sent); so findings on that rule are kept only then.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pubproof.pipeline.flow_judge import about_client
from pubproof.probe.findings import Finding
from pubproof.probe.judge_link import LinkJudge

_FORWARD_DUP = "MQTT-3.3.1-3"
_JUDGED = frozenset({"PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP", "CONNECT", "CONNACK"})
SERVER, CLIENT = "server", "client"


@dataclass(slots=True)
class ConnectionJudge:
    """Feed the packets of one connection in capture order; each call returns the findings
    about the packet's sender."""

    v311: bool = True
    clean_session: bool | None = None  # from CONNECT; None until (or unless) it is seen
    of_server: LinkJudge = field(default_factory=lambda: LinkJudge(client=SERVER))
    of_client: LinkJudge = field(default_factory=lambda: LinkJudge(client=CLIENT))
    index: int = 0

    def __post_init__(self) -> None:
        self.of_server.v311 = self.v311
        self.of_client.v311 = self.v311

    def feed(self, direction: str, fields: Mapping[str, Any]) -> list[Finding]:
        """Judge one packet (``fields``: ``P`` or a control packet's fields) sent ``c2s``
        or ``s2c``; the findings are about its sender."""
        kind = fields.get("type")
        if kind == "CONNECT" and direction == "c2s":
            self.clean_session = bool(fields.get("clean_session"))
        if kind not in _JUDGED or (kind == "PUBLISH" and fields.get("qos") not in (1, 2)):
            # LinkJudge ignores other types; a QoS 0 PUBLISH changes no state and cannot be
            # judged by the tables (DUP on QoS 0 is the codec's), and QoS 3 (accepted only
            # under 3.1's qos3=accept reading) has no flow: skip them
            return []
        c2s = direction == "c2s"
        self.index += 1
        found: list[Finding] = []
        for judge, name, to_broker in (
            (self.of_server, SERVER, c2s),
            (self.of_client, CLIENT, not c2s),
        ):
            before = len(judge.findings)
            entry = {**fields, "dir": "to-broker" if to_broker else "from-broker", "client": name}
            judge.feed(self.index, entry)
            judge.deliveries.clear()  # kept by LinkJudge for the probe; unbounded here
            for finding in judge.findings[before:]:
                if _FORWARD_DUP in finding.rules and (
                    name == CLIENT or self.clean_session is not True
                ):
                    continue
                found.append(about_client(finding) if name == CLIENT else finding)
        return found
