"""The compiled twin of :class:`pubproof.judge.ends.BothEnds`, for the capture pipeline:
both ends of one connection judged by two compiled link judges
(:mod:`pubproof.pipeline.fast.link`, :mod:`pubproof.pipeline.fast.link50`).

The same findings as the readable class, packet for packet, and after each 5.0 packet the
same resolved topic and offence (``tests/test_judge_twins.py``); the readable module's
docstring says what is judged. What this one adds, for speed
(:mod:`pubproof.pipeline.fast.layout`): in 5.0 the two judges share each direction's Topic
Alias map, so a PUBLISH is resolved once, by its sender's judge, and handed to both
(:meth:`BothEnds.feed50`); an acknowledgement or PUBREL goes to the judges' per-kind
methods without their dispatch; and :meth:`BothEnds.mapped0` names the QoS 0 PUBLISH the
pipeline need not feed at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pubproof.judge.cited import FORWARD_DUP, FlowOffence, about_client
from pubproof.judge.findings import Finding
from pubproof.judge.limits import DEFAULT, Negotiated
from pubproof.model.editions import Edition, Limits
from pubproof.pipeline.fast.layout import as_dict
from pubproof.pipeline.fast.link import LinkJudge
from pubproof.pipeline.fast.link50 import ACKS, LinkJudge50

SERVER, CLIENT = "server", "client"
C2S: Final = "c2s"
S2C: Final = "s2c"
#: the packets the link judges read (a QoS 0 PUBLISH is judged by the codec alone)
JUDGED: Final = frozenset(
    {"PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP", "CONNECT", "CONNACK"}
)


class BothEnds:
    """Feed the packets of one connection in capture order; each call returns the findings
    about the packet's sender."""

    __slots__ = ("clean_session", "client50", "of_client", "of_server", "offence", "server50",
                 "topic", "v50")  # fmt: skip

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
        self.v50 = False  # two LinkJudge50
        #: MQTT 5.0: the two judges as LinkJudge50 (the sender's judge is the client's for
        #: c2s, the server's for s2c; :meth:`sender50`)
        self.client50: LinkJudge50 | None = None
        self.server50: LinkJudge50 | None = None
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
                self.of_server = server = LinkJudge50(SERVER, SERVER, server=True)
                self.of_client = client = LinkJudge50(CLIENT, CLIENT, server=False)
                # one Topic Alias map per direction, as its receiver holds it, for both
                # judges: a PUBLISH is resolved once, by its sender's judge (feed50)
                client.judged_aliases = server.peer_aliases  # c2s
                client.peer_aliases = server.judged_aliases  # s2c
                self.client50, self.server50 = client, server
                self.v50 = True
            return
        if isinstance(self.of_server, LinkJudge50):
            self.of_server = LinkJudge(SERVER, SERVER)
            self.of_client = LinkJudge(CLIENT, CLIENT)
            self.client50 = self.server50 = None
            self.v50 = False
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
        fields = as_dict(given)
        kind = fields.get("type")
        if self.v50:
            return self.feed50(direction, kind, fields)
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

    def sender50(self, direction: str) -> LinkJudge50:
        """MQTT 5.0: the judge of the end that sends ``direction`` ("c2s" or "s2c")."""
        judge = self.client50 if direction == C2S else self.server50 if direction == S2C else None
        if judge is None:
            raise KeyError(direction)
        return judge

    def mapped0(self, direction: str, topic: str, alias: int, retain: bool) -> bool:
        """MQTT 5.0: whether a QoS 0 PUBLISH sent ``direction`` with the topic name
        ``topic`` (not empty) and the Topic Alias ``alias`` would change nothing in the
        judges and make them find nothing: its receiver's map holds ``alias`` for ``topic``
        already, within the Topic Alias Maximum the receiver declared, and its RETAIN is
        0 or allowed. :meth:`feed50` would map the alias to the same topic name again (the
        alias table's step for a topic name and a known alias) and, for QoS 0, owe and
        deliver nothing; so the capture pipeline need not feed it (its evidence is only
        ever its own, and a QoS 0 PUBLISH has no flow whose trail it would join)."""
        sender = self.sender50(direction)
        # what resolve50 reads for the judged end's PUBLISH (by_judged)
        return (
            1 <= alias <= sender.judged_alias_maximum
            and sender.judged_aliases.mapping.get(alias) == topic
            and (not retain or sender.server or sender.retain_available)
        )

    def feed50(self, direction: str, kind: Any, given: Mapping[str, Any]) -> list[Finding]:
        """:meth:`feed` on a 5.0 connection (``kind``: ``given.get("type")``), for a
        caller that knows the judges are 5.0 (the capture pipeline, once per packet)."""
        fields = as_dict(given)
        self.topic = None
        self.offence = None
        if kind not in JUDGED:
            return []
        if kind == "CONNECT" and direction == C2S:
            self.clean_session = bool(fields.get("clean_start"))
        found: list[Finding] = []
        if direction == C2S:
            sender, receiver = self.client50, self.server50
        elif direction == S2C:
            sender, receiver = self.server50, self.client50
        else:
            raise KeyError(direction)
        assert sender is not None and receiver is not None
        if kind == "PUBLISH":
            # peer_sent and judged_sent, the topic resolved once through the map the two
            # judges share (the receiver's judge would resolve it alike)
            resolution = sender.resolve50(fields, by_judged=True)
            receiver.offence, receiver.topic = None, sender.topic
            receiver.peer_publishes(fields, resolution, 0)
            sender.offence = None
            sender.judged_publishes(fields, resolution, found)
        elif kind in ACKS or kind == "PUBREL":
            # peer_sent and judged_sent without their dispatch (once per acknowledgement)
            receiver.offence = receiver.topic = sender.offence = sender.topic = None
            if kind == "PUBREL":
                receiver.peer_pubrel(fields, 0)
                sender.judged_pubrel(fields, found)
            else:
                receiver.peer_acks(kind, fields, 0)
                sender.judged_acks(kind, fields, found)
        else:
            receiver.peer_sent(kind, fields)
            sender.judged_sent(kind, fields, found)
        self.topic = sender.topic
        self.offence = sender.offence
        return found
