"""A broker's connections and sessions, as records: what each knows of its client, what it
has buffered each way, and the reference machinery it speaks through.

Rules / theory of operation
---------------------------
A :class:`Connection` is one network connection: it is ``AWAITING_CONNECT`` until its
first packet, a CONNECT, is accepted (then ``OPEN``), ``CLOSING`` once the broker decided
to close it (what it still has to write goes first), and ``CLOSED``. It owns the bytes
received and not yet cut into packets, the reference decoder of its PUBLISH family (made
at CONNECT: the edition, the readings and, in 5.0, the limits the broker declared), the
packets it is to write (:attr:`Connection.outbox`, written when the broker has taken in
everything a read brought and committed it: so an acknowledgement never reaches a
publisher before the message is stored) and its trace (:class:`pubproof.probe.serve.live.
Trace`).

A :class:`ClientSession` is what the broker keeps for one Client Identifier across its
connections: the reference session engine of its flows (:class:`pubproof.reference.
session.Session` in 3.x, :class:`~pubproof.reference.session50.Session50` in 5.0, both
Method B: a QoS 2 message is passed on at PUBREC, the identifier held until PUBREL), the
link judge that judges the client over all its connections (the client is the judged end,
as ``probe-client`` judges it), and which copy each packet identifier it sent carries.
The distribution engine keeps the rest (subscriptions, queued copies): the session record
never holds a message the engine does not own.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Protocol

from pubproof.judge.limits import DEFAULT as DEFAULT_NEGOTIATED
from pubproof.judge.limits import Declared
from pubproof.judge.link import LinkJudge
from pubproof.model.editions import Edition
from pubproof.model.subscriptions import SubscriptionOptions
from pubproof.probe.serve.connect import ConnectRequest, Will
from pubproof.probe.serve.engine import Copy
from pubproof.probe.serve.live import Trace
from pubproof.reference.codec import Decoder
from pubproof.reference.session import Session
from pubproof.reference.session50 import Session50

V50 = Edition.V50


class Wire(Protocol):
    """What the broker needs of a transport: write bytes, close, and say how many bytes it
    holds that the peer has not taken yet."""

    def write(self, data: bytes) -> None: ...

    def close(self) -> None: ...

    def backlog(self) -> int: ...


class State(enum.Enum):
    AWAITING_CONNECT = "awaiting CONNECT"
    OPEN = "open"
    CLOSING = "closing"
    CLOSED = "closed"


@dataclass(slots=True, eq=False)
class Connection:
    """One network connection to the broker."""

    name: str  # "c1", "c2", ... in the order accepted
    wire: Wire
    peer: str
    opened: float  # seconds on the broker's clock
    state: State = State.AWAITING_CONNECT
    edition: Edition | None = None
    readings: dict[str, str] = field(default_factory=dict)
    request: ConnectRequest | None = None
    session: ClientSession | None = None
    decoder: Decoder | None = None
    #: bytes received and not yet a whole packet
    buffer: bytearray = field(default_factory=bytearray)
    #: 5.0: what the client declared in CONNECT (binds what the broker sends it)
    client_declared: Declared = field(default_factory=Declared)
    keep_alive: int = 0  # seconds, as the broker enforces it (0: none)
    last_in: float = 0.0
    outbox: list[bytes] = field(default_factory=list)
    outbox_bytes: int = 0
    #: 5.0: the Session Expiry Interval the client's DISCONNECT gave (None: none)
    disconnect_expiry: int | None = None
    #: the will to publish if the connection ends without a DISCONNECT that discards it
    will: Will | None = None
    #: why the broker closes it (None: the client did, or has not)
    close_reason: str | None = None
    #: whether the broker ended it (a fault, a takeover, its stop), not the client
    closed_by_broker: bool = False
    trace: Trace = field(init=False)
    packets_in: int = 0
    packets_out: int = 0
    #: the bytes of the packet being handled (what a finding is about)
    current: bytes = b""
    #: set when the transport holds more than the broker lets it (the client reads slowly)
    paused: bool = False
    #: a misbehaviour sent its case: from then on the close judge judges the client
    case: bool = False
    #: misbehaviour state (:mod:`pubproof.probe.serve.misbehave`), by name
    tricks: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.trace = Trace(self.name)

    @property
    def open(self) -> bool:
        return self.state is State.OPEN

    @property
    def alive(self) -> bool:
        """Whether the broker still reads it and writes to it."""
        return self.state in (State.AWAITING_CONNECT, State.OPEN)

    @property
    def client_id(self) -> str:
        return self.request.client_id if self.request is not None else ""

    @property
    def v50(self) -> bool:
        return self.edition is V50


@dataclass(slots=True, eq=False)
class ClientSession:
    """What the broker keeps for one Client Identifier (see the module docstring)."""

    client_id: str
    edition: Edition
    flows: Session | Session50
    judge: LinkJudge
    #: the connection the session is attached to (None: the client is away)
    conn: Connection | None = None
    #: packet identifier -> the engine's copy, for each QoS 1 or 2 copy under way
    inflight: dict[int, Copy] = field(default_factory=dict)
    #: its subscriptions as asked (topic filter -> options, Subscription Identifier), as
    #: granted by the engine: what the store keeps
    subscriptions: dict[str, tuple[SubscriptionOptions, int | None]] = field(
        default_factory=dict
    )
    #: whether it outlives its connection (3.x CleanSession 0; 5.0 an expiry above 0)
    persistent: bool = False
    expiry: int = 0  # 5.0 Session Expiry Interval, seconds
    #: 5.0: a will waiting out its Will Delay Interval (due time on the broker's clock)
    will_due: tuple[float, Will] | None = None
    #: the negotiated limits the judges saw last (5.0), for describing packets
    negotiated: Any = DEFAULT_NEGOTIATED

    @property
    def v50(self) -> bool:
        return self.edition is V50
