"""Both ends of one connection, judged by two link judges: what a capture needs.

A capture judges both implementations, so two link judges watch the connection, one per
end, each fed every packet (:meth:`~pubproof.judge.link.LinkJudge.peer_sent` of the
receiver's judge, :meth:`~pubproof.judge.link.LinkJudge.judged_sent` of the sender's):

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

In MQTT 5.0 (``edition=Edition.V50``) the two judges are
:class:`~pubproof.judge.link50.LinkJudge50`: QoS 0 PUBLISH is judged too (Topic Alias,
Maximum QoS and Retain Available bind it), [MQTT-3.3.1-3] is not judged, and after each
packet :attr:`BothEnds.topic` is its resolved topic name and :attr:`BothEnds.offence` what
its receiver must close for.

The capture pipeline runs a compiled twin of this class
(:class:`pubproof.pipeline.fast.ends.BothEnds`: the two judges share each direction's alias
map and skip the dispatch), held equal to it by ``tests/test_judge_twins.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pubproof.judge.cited import FORWARD_DUP, FlowOffence, about_client
from pubproof.judge.findings import Finding
from pubproof.judge.limits import DEFAULT, Negotiated
from pubproof.judge.link import LinkJudge
from pubproof.judge.link50 import LinkJudge50
from pubproof.model.editions import Edition, Limits

SERVER, CLIENT = "server", "client"
C2S, S2C = "c2s", "s2c"
#: the packets the link judges read (in 3.x a QoS 0 PUBLISH is judged by the codec alone)
JUDGED = frozenset({"PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP", "CONNECT", "CONNACK"})


class BothEnds:
    """Feed the packets of one connection in capture order; each call returns the findings
    about the packet's sender."""

    def __init__(self, *, v311: bool = True, edition: Edition | None = None) -> None:
        self.clean_session: bool | None = None  # from CONNECT; None until it is seen
        if edition is not None and edition is not Edition.V50:
            v311 = edition is Edition.V311
        self.of_server = LinkJudge(SERVER, SERVER, v311=v311)  # the client is its peer
        self.of_client = LinkJudge(CLIENT, CLIENT, v311=v311)  # the server is its peer
        #: MQTT 5.0, after each packet fed: its resolved topic name (a PUBLISH's; None
        #: otherwise, or when its alias cannot be resolved)
        self.topic: str | None = None
        #: MQTT 5.0, after each packet fed: what its receiver must close for (and the
        #: DISCONNECT Reason Code the model calls for), for the close judge
        self.offence: FlowOffence | None = None
        if edition is Edition.V50:
            self.edition = edition

    @property
    def edition(self) -> Edition:
        """The connection's edition. Set it (from the CONNECT) before feeding the CONNECT:
        setting 5.0 gives fresh 5.0 judges."""
        if isinstance(self.of_server, LinkJudge50):
            return Edition.V50
        return Edition.V311 if self.of_server.v311 else Edition.V31

    @edition.setter
    def edition(self, value: Edition) -> None:
        if value is Edition.V50:
            if not isinstance(self.of_server, LinkJudge50):
                self.of_server = LinkJudge50(SERVER, SERVER, server=True)
                self.of_client = LinkJudge50(CLIENT, CLIENT, server=False)
            return
        if isinstance(self.of_server, LinkJudge50):
            self.of_server = LinkJudge(SERVER, SERVER)
            self.of_client = LinkJudge(CLIENT, CLIENT)
        self.v311 = value is Edition.V311

    @property
    def negotiated(self) -> Negotiated:
        """MQTT 5.0: the limits the two ends declared so far (the defaults before 5.0)."""
        judge = self.of_server
        return judge.negotiated if isinstance(judge, LinkJudge50) else DEFAULT

    def limits_for(self, direction: str) -> Limits:
        """MQTT 5.0: the model's limits for the packets sent ``direction`` (what their
        receiver declared)."""
        return self.negotiated.limits_for(direction)

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

    def feed(self, direction: str, given: Mapping[str, Any]) -> list[Finding]:
        """Judge one packet (``given``: ``P`` or a control packet's fields) sent ``c2s``
        or ``s2c``; the findings are about its sender."""
        fields = dict(given)
        kind = fields.get("type")
        if isinstance(self.of_server, LinkJudge50):
            return self._feed50(direction, kind, fields)
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
        if self.clean_session is not True:
            # a resumed session re-sends with DUP 1 what an earlier connection sent
            return [f for f in found if FORWARD_DUP not in f.rules]
        return found

    def _feed50(self, direction: str, kind: Any, fields: dict[str, Any]) -> list[Finding]:
        """:meth:`feed` on a 5.0 connection: the topic and offence are the sender's judge's."""
        self.topic = self.offence = None
        if kind not in JUDGED:
            return []
        if kind == "CONNECT" and direction == C2S:
            self.clean_session = bool(fields.get("clean_start"))
        if direction == C2S:
            sender, receiver = self.of_client, self.of_server
        elif direction == S2C:
            sender, receiver = self.of_server, self.of_client
        else:
            raise KeyError(direction)
        assert isinstance(sender, LinkJudge50)
        found: list[Finding] = []
        receiver.peer_sent(kind, fields)
        sender.judged_sent(kind, fields, found)
        self.topic, self.offence = sender.topic, sender.offence
        return found


__all__ = ["C2S", "CLIENT", "JUDGED", "S2C", "SERVER", "BothEnds", "about_client"]
