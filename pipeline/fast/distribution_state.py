"""The state the fast twin of the distribution judge (:mod:`.distribution`) keeps of one
topic: the messages the server took, the copies it owes, each session and each link.

Rules / theory of operation
---------------------------
Plain slotted classes (compiled by mypyc with the twin), no logic but keeping a session's
copies owed in order and by payload alike: the twin's rules are
in :mod:`.distribution`. A session is the twin's only while its link is connected (it
keeps clean sessions alone); a message's ``owed`` says, per client, what became of its
copy (until the capture ends); a copy owed (:class:`Owed`) is a message's to one session,
live or a retained message's for a new subscription.
"""

from __future__ import annotations

from pubproof.model.editions import Edition


class Owed:
    """A copy owed to one session."""

    __slots__ = ("digest", "ids", "live", "may_miss", "message", "qos", "retain", "since")

    def __init__(
        self,
        message: Message,
        qos: int,
        retain: bool,
        ids: tuple[int, ...],
        live: bool,
        since: float,
        may_miss: bool,
    ) -> None:
        self.message = message
        self.digest = message.digest
        self.qos = qos
        self.retain = retain
        self.ids = ids
        self.live = live  # forwarded live (not a retained message for a new subscription)
        self.since = since  # when it became owed
        self.may_miss = may_miss  # a QoS 0 retained message the server MAY discard


class Message:
    """A message the server took."""

    __slots__ = (
        "copies", "digest", "owed", "publisher", "qos", "released", "row", "seq", "uncertain",
    )  # fmt: skip

    def __init__(self, row: int, seq: int, publisher: str, qos: int, digest: str) -> None:
        self.row = row
        self.seq = seq
        self.publisher = publisher
        self.qos = qos
        self.digest = digest
        self.released = True  # QoS 2: False until its PUBREL
        self.owed: dict[str, str] = {}  # client -> what became of its copy
        self.copies = 0
        self.uncertain: set[str] = set()  # clients that changed while it was in flight


class Session:
    __slots__ = (
        "alike", "awaiting", "client", "conn", "filters", "inbound", "maximum", "outbound",
        "owing", "pending", "receive", "unacknowledged", "unreleased",
    )  # fmt: skip

    def __init__(self, client: str, conn: str, maximum: bool, receive: int | None) -> None:
        self.client = client
        self.conn = conn
        self.maximum = maximum  # 5.0: the client declared a Maximum Packet Size
        self.receive = receive  # 5.0: the client's Receive Maximum (None: 3.x)
        #: the packet ids of the QoS 1 and 2 PUBLISHes sent it and not yet acknowledged
        self.unacknowledged: set[int] = set()
        #: what each of those awaits: PUBACK (QoS 1), PUBREC then PUBCOMP (QoS 2)
        self.awaiting: dict[int, str] = {}
        #: its subscriptions that match the topic: filter -> (QoS granted, identifier)
        self.filters: dict[str, tuple[int, int]] = {}
        #: what a message is owed it by those: the highest QoS granted and the Subscription
        #: Identifiers (None: to be made again, the filters changed)
        self.owing: tuple[int, tuple[int, ...]] | None = None
        #: the copies owed it, in the order they became owed (a dict: a copy sent is taken
        #: out at once, where a list's remove walked every copy owed a subscriber behind)
        self.pending: dict[Owed, None] = {}
        #: the same by payload digest, each in that order (a copy is matched by payload)
        self.alike: dict[str, list[Owed]] = {}
        self.inbound: dict[int, int] = {}  # packet id -> its PUBLISH's row (not yet taken)
        self.outbound: dict[int, Owed] = {}  # packet id -> a copy under way
        #: QoS 2 messages taken, their PUBREL not yet received: packet id -> message
        self.unreleased: dict[int, Message] = {}

    def owe(self, owed: Owed) -> None:
        """A copy becomes owed."""
        self.pending[owed] = None
        found = self.alike.get(owed.digest)
        if found is None:
            self.alike[owed.digest] = [owed]
        else:
            found.append(owed)

    def paid(self, owed: Owed) -> None:
        """A copy owed was sent."""
        del self.pending[owed]
        found = self.alike[owed.digest]
        if len(found) == 1:
            del self.alike[owed.digest]
        else:
            found.remove(owed)


class Link:
    __slots__ = (
        "client", "connected", "edition", "maximum", "receive", "session", "subscribing",
    )  # fmt: skip

    def __init__(self) -> None:
        self.client = ""
        self.edition: Edition | None = None
        self.connected = False
        self.maximum = False
        self.receive: int | None = None
        self.session: Session | None = None
        self.subscribing: dict[int, str] = {}  # packet id -> the SUBSCRIBE's detail
