"""Both ends of one connection, judged by two link judges: what a capture needs.

A capture judges both implementations, so two :class:`~pubproof.judge.link.LinkJudge`
watch the connection, one per end:

- one takes the server for the judged end: it judges what the **server** sends
  (acknowledgements nobody awaits, PUBREL before PUBREC, re-sends without DUP, a new message
  on an identifier in use, what a receiving client's table calls a violation or tolerates);
- the other takes the client for the judged end, by the same tables (the rules of section
  4.3 bind sender and receiver alike, in both directions), with the Server's rule ids
  replaced by the Client's where the standard words the obligation twice.

Every finding arises while the judges take in one packet, and it is a finding about that
packet's sender. An answer still owed when the connection ends is not a finding (the
connection may have been cut): only a wait makes an owed answer missing, and a capture has
none. One rule is about a server that forwards: DUP 1 on a message it had not sent to this
client [MQTT-3.3.1-3]. On a capture that holds for the server only, and only on a clean
session seen from its CONNECT (a resumed session re-sends with DUP 1 what an earlier
connection sent); so findings on that rule are kept only then.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pubproof.judge.findings import Finding
from pubproof.judge.link import FORWARD_DUP, ID_IN_USE_CLIENT, ID_IN_USE_SERVER, LinkJudge

SERVER, CLIENT = "server", "client"
C2S, S2C = "c2s", "s2c"
#: the packets the link judges read (a QoS 0 PUBLISH is judged by the codec alone)
JUDGED = frozenset({"PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP", "CONNECT", "CONNACK"})
#: a rule of the judged end that binds a Server, and the same rule for a Client
_SERVER_TO_CLIENT_RULE = {ID_IN_USE_SERVER: ID_IN_USE_CLIENT}


def about_client(finding: Finding) -> Finding:
    """A finding of the judge that takes the client for the judged end, with the Server's
    rule ids replaced by the Client's (each id once)."""
    if not any(rule in _SERVER_TO_CLIENT_RULE for rule in finding.rules):
        return finding
    return finding.with_rules(
        tuple(dict.fromkeys(_SERVER_TO_CLIENT_RULE.get(r, r) for r in finding.rules))
    )


class BothEnds:
    """Feed the packets of one connection in capture order; each call returns the findings
    about the packet's sender."""

    __slots__ = ("clean_session", "of_client", "of_server")

    def __init__(self, *, v311: bool = True) -> None:
        self.clean_session: bool | None = None  # from CONNECT; None until it is seen
        self.of_server = LinkJudge(SERVER, SERVER, v311=v311)  # the client is its peer
        self.of_client = LinkJudge(CLIENT, CLIENT, v311=v311)  # the server is its peer

    @property
    def v311(self) -> bool:
        """Whether the connection is MQTT 3.1.1 (3.1 has no Session Present)."""
        return self.of_server.v311

    @v311.setter
    def v311(self, value: bool) -> None:
        self.of_server.v311 = self.of_client.v311 = value

    def owed_by(self, direction: str) -> list[tuple[str, int | None]]:
        """The answers the end that sends ``direction`` owes now, as (type, packet
        identifier), once per answer owed."""
        judge = self.of_server if direction == S2C else self.of_client
        return judge.owed_keys()

    def feed(self, direction: str, fields: Mapping[str, Any]) -> list[Finding]:
        """Judge one packet (``fields``: ``P`` or a control packet's fields) sent ``c2s``
        or ``s2c``; the findings are about its sender."""
        kind = fields.get("type")
        if kind == "CONNECT" and direction == C2S:
            self.clean_session = bool(fields.get("clean_session"))
        if kind not in JUDGED or (kind == "PUBLISH" and fields.get("qos") not in (1, 2)):
            # a QoS 0 PUBLISH changes no state and cannot be judged by the tables (DUP on
            # QoS 0 is the codec's), and QoS 3 (accepted only under 3.1's qos3=accept
            # reading) has no flow
            return []
        assert isinstance(kind, str)
        found: list[Finding] = []
        if direction == C2S:
            self.of_server.peer_sent(kind, fields)
            self.of_client.judged_sent(kind, fields, found)
            # [MQTT-3.3.1-3] binds a forwarding server only: never a finding about a client
            return [about_client(f) for f in found if FORWARD_DUP not in f.rules]
        self.of_server.judged_sent(kind, fields, found)
        self.of_client.peer_sent(kind, fields)
        if found and self.clean_session is not True:
            # a resumed session re-sends with DUP 1 what an earlier connection sent
            return [f for f in found if FORWARD_DUP not in f.rules]
        return found
