"""What one TCP connection of a capture holds, and what its CONNECT tells of it.

:class:`ConnectionState` is the bottom of :class:`pubproof.pipeline.connection.Connection`'s
stack of classes, one concern a module (a compiled class has one base, so the concerns are
stacked, not mixed in)::

    ConnectionState     connection_state     its state; the edition, from CONNECT or the job
    ConnectionJudging   connection_judging   the judges fed, their findings written
    ConnectionPackets   connection_packets   each whole packet: described, written, judged
    Connection          connection           segments in: roles, reassembly, framing; its row

Every attribute of a connection is set here, in :class:`ConnectionState`'s constructor, so
that each is set in the class that declares it, whichever class above reads it.

The edition: a connection is MQTT 3.1.1 until its CONNECT names a level (3.1, 3.1.1 or 5.0;
another level: ``unsupported-level``, no edition), unless the job forces one
(:attr:`Config.edition`). From its CONNECT (or the job) naming 5.0 on, it is judged by the
5.0 judges with what each end declared (:class:`.Receivers`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pubproof.judge.close import CloseJudge
from pubproof.judge.packets import LEVELS
from pubproof.model.editions import Edition
from pubproof.pipeline import detect
from pubproof.pipeline.describe import Described, readings_for
from pubproof.pipeline.dissect import Segment
from pubproof.pipeline.family import PublishFamilyDecoder
from pubproof.pipeline.fast.ends import C2S, S2C, BothEnds
from pubproof.pipeline.framing import Framer
from pubproof.pipeline.reassembly import WINDOW_BYTES, WINDOW_SEGMENTS, Stream
from pubproof.pipeline.receivers import Receivers
from pubproof.pipeline.rows import Sink
from pubproof.pipeline.tap import NullTap, Tap
from pubproof.pipeline.trail import Trail

_JUDGED = ("CONNECT", "CONNACK")  # judged even without a packet identifier
#: 5.0: also every PUBLISH (QoS 0 too) and DISCONNECT (its Reason Code)
_JUDGED50: Final = frozenset({"CONNECT", "CONNACK", "PUBLISH", "DISCONNECT"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """What the job was asked: MQTT ports, TLS ports, a forced edition, readings, the
    cross-connection stage's patience."""

    ports: frozenset[int] = frozenset({1883})
    tls_ports: frozenset[int] = frozenset({8883})
    edition: Edition | None = None
    readings: tuple[tuple[str, str], ...] = ()
    window_bytes: int = WINDOW_BYTES
    window_segments: int = WINDOW_SEGMENTS
    #: the cross-connection stage's patience: seconds a link stays open after a copy is
    #: owed, past which a copy not sent is missing (:mod:`pubproof.judge.distribution_capture`,
    #: whose ``PATIENCE`` this is: the per-connection stage does not import the judge)
    patience: float = 10.0
    #: run the cross-connection stage (off: the connections are judged each alone, as
    #: ``pubproof check --no-distribution`` asks)
    distribution: bool = True


class ConnectionState:
    """One TCP connection's state (the ``number``-th of its 4-tuple in ``capture``, whose
    first segment is ``first``), and the two steps that set its edition."""

    def __init__(
        self, capture: str, config: Config, sink: Sink, first: Segment, number: int
    ) -> None:
        self.capture, self.config, self.sink = capture, config, sink
        self.client, self.server = detect.roles(first, config.ports, config.tls_ports)
        self.id = (
            f"{self.capture}:{self.client[0]}:{self.client[1]}-"
            f"{self.server[0]}:{self.server[1]}#{number}"
        )
        self.mode = detect.mode(self.server[1], config.ports, config.tls_ports)
        self.client_isn: int | None = None
        self.held: list[tuple[int, Segment]] | None = []  # until the decision; then None
        self.first_frame = self.last_frame = 0
        self.frames = 0
        self.streams = {
            d: Stream(window_bytes=config.window_bytes, window_segments=config.window_segments)
            for d in (C2S, S2C)
        }
        self.framers = {C2S: Framer(), S2C: Framer()}
        self.edition: Edition | None = config.edition or Edition.V311
        self.edition_value: str | None = self.edition.value  # as the rows write it
        self.readings = readings_for(self.edition, config.readings)
        self.decoder: PublishFamilyDecoder | None = PublishFamilyDecoder(
            self.edition, self.readings
        )
        self.level: int | None = None
        self.protocol: str | None = None
        self.client_id: str | None = None
        self.clean_session: bool | None = None
        self.judge: BothEnds | None = BothEnds()
        #: the control packets judged without a packet identifier
        self.judged: tuple[str, ...] | frozenset[str] = _JUDGED
        self.declared: Receivers | None = None  # MQTT 5.0: what the two ends declared
        # per packet identifier, its last packets, as what their evidence is built from
        self.trail = Trail(self.id)
        self.closed: str | None = None
        self.fins: set[str] = set()  # the directions that sent a FIN
        self.fin_seq: dict[str, int] = {}  # direction -> its FIN's sequence number
        # [MQTT-4.8.0-1]: set at the first packet the model rejects (None until then)
        self.closing: CloseJudge | None = None
        self.pings = {C2S: 0, S2C: 0}  # PINGREQs sent c2s, PINGRESPs sent s2c, and so on
        self.flags: set[str] = set()
        self.packets = self.violations = self.tolerated = self.deviations = 0
        self.payload = {C2S: 0, S2C: 0}
        self.quarantined = 0  # payload bytes of a connection that is not MQTT
        # the cross-connection stage's events (:mod:`.tap`), stamped with the frame being
        # processed and its capture time
        server = f"{self.server[0]}:{self.server[1]}"
        kind = Tap if config.distribution else NullTap
        self.tap: Tap = kind(capture, server, self.id, sink.events)
        self.at, self.now = 0, 0.0
        if self.edition is Edition.V50:
            self._become5()

    def _become5(self) -> None:
        """The connection is MQTT 5.0 (its CONNECT names level 5, or the job forces 5.0)."""
        self.judged = _JUDGED50
        self.declared = Receivers(self.readings)
        if self.judge is not None:
            self.judge.edition = Edition.V50  # two 5.0 link judges
        self.decoder = None  # the 3.x fast path's
        for framer in self.framers.values():
            framer.v5 = True  # type 15 is AUTH

    def _connect(self, described: Described) -> None:
        fields = described.fields
        if "error" in fields:
            return
        self.level = fields.get("level")
        self.protocol = fields.get("protocol")
        self.client_id = fields.get("client_id")
        # 5.0 names the flag Clean Start (3.1.2.4); the column keeps the 3.x name
        self.clean_session = fields.get("clean_session", fields.get("clean_start"))
        if self.config.edition is None and self.declared is None:
            self.edition = LEVELS.get(self.level) if self.level is not None else None
            self.edition_value = None if self.edition is None else self.edition.value
            if self.edition is None:
                self.flags.add("unsupported-level")
                self.decoder = None
            else:
                self.readings = readings_for(self.edition, self.config.readings)
                self.decoder = PublishFamilyDecoder(self.edition, self.readings)
        if self.declared is not None:
            # the client's limits bind what the server sends
            self.declared.connect(fields)
        if self.judge is not None:
            self.judge.v311 = self.edition is not Edition.V31
