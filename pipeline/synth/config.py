"""What the synthetic capture generator is asked for, and what it counts as it writes.

:class:`SynthConfig` holds every option the output depends on (the seed, the sizes, the
rates of what real TCP shows, the faults to inject, the share of MQTT 5.0 connections); it
validates itself and is written, whole, into ``OUT.expected.json``, so the same config gives
the same bytes. :class:`Expected` is the right answer, counted packet by packet as the
capture is written (frames, connections, MQTT packets by type and direction, PUBLISH by
QoS, the findings each injected fault must give, by rule id) and written beside it; the
checks of :mod:`pubproof.pipeline.synth.check` compare a run of ``pubproof check`` with it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from pubproof.pipeline.synth.broker import DistFault
from pubproof.pipeline.synth.faults import Fault
from pubproof.pipeline.synth.pcapwrite import LINKTYPE_ETHERNET


@dataclass(frozen=True, slots=True, kw_only=True)
class SynthConfig:
    """Everything the generator's output depends on (written into the expected JSON)."""

    seed: int = 1
    frames: int = 1_000_000  # at least this many frames
    connections: int = 2000  # about this many connections (more if the frames need them)
    concurrent: int = 50  # connections open at the same time, interleaved
    qos_mix: tuple[float, float, float] = (5.0, 3.0, 2.0)
    #: payload sizes (SIZE, WEIGHT): a size is drawn by weight, then uniformly in SIZE/2..SIZE
    payload_sizes: tuple[tuple[int, float], ...] = (
        (0, 0.5), (16, 3.0), (200, 4.0), (1500, 1.5), (20000, 0.2), (200_000, 0.01),
    )  # fmt: skip
    mss: int = 1460
    burst: int = 3  # up to this many messages sent back to back before their acknowledgements
    split: float = 0.1  # a write cut at random points (1..MSS bytes) instead of at the MSS
    split_headers: bool = True  # such a cut may fall inside a Remaining Length
    coalesce: float = 0.5  # packets of one burst in one write (they share segments)
    retransmit: float = 0.01  # a data segment captured twice (half of them overlapping)
    reorder: float = 0.005  # a data segment swapped with the next one of its write
    pure_ack: float = 0.3  # the receiver of a write answers with a pure ACK
    ping: float = 0.01  # PINGREQ/PINGRESP between messages
    rst: float = 0.05  # a connection ends with RST instead of FIN
    ipv6: float = 0.2
    port: int = 1883
    inject: tuple[tuple[str, int], ...] = (
        *((f.value, 10) for f in Fault), *((f.value, 2) for f in DistFault),
    )  # fmt: skip
    large_connection_packets: int = 0
    mqtt5: float = 0.0  # the share of connections in MQTT 5.0
    fmt: Literal["pcap", "pcapng"] = "pcap"
    linktype: int = LINKTYPE_ETHERNET

    def __post_init__(self) -> None:
        known = {f.value for f in Fault} | {f.value for f in DistFault}
        for name, count in self.inject:
            if name not in known:
                raise ValueError(f"unknown fault {name!r}; known: {sorted(known)}")
            if count < 0:
                raise ValueError(f"fault {name}: a negative count")
        if self.frames < 0 or self.connections < 1 or self.concurrent < 1 or self.mss < 1:
            raise ValueError("frames >= 0, connections >= 1, concurrent >= 1, mss >= 1")
        if not 0.0 <= self.mqtt5 <= 1.0:
            raise ValueError("mqtt5 is a probability (0 to 1)")


@dataclass(slots=True)
class Expected:
    """What the capture contains, counted as it is written."""

    frames: int = 0
    connections: int = 0
    tcp_payload_bytes: int = 0  # every captured payload byte, retransmissions included
    mqtt_bytes: int = 0  # bytes of MQTT packets (each stream byte once)
    packets: Counter[str] = field(default_factory=Counter)
    packets_by_direction: Counter[str] = field(default_factory=Counter)
    publish_by_qos: Counter[str] = field(default_factory=Counter)
    #: rule id -> the number of findings (rows of a violations table) that name it
    violations: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)  # fault name -> count
    largest_connection_packets: int = 0
    connections_by_edition: Counter[str] = field(default_factory=Counter)
    #: each injected fault: its name, connection, direction, client address, the rule ids
    #: of each finding the model makes on it, and the frame that carries its last byte
    injected: list[dict[str, Any]] = field(default_factory=list)
    #: each injected distribution fault (:mod:`.broker`): its name, edition, subscriber,
    #: the rule and kind of the finding it must give, and the judge that gives it
    distribution: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "frames": self.frames,
            "connections": self.connections,
            "tcp_payload_bytes": self.tcp_payload_bytes,
            "mqtt_bytes": self.mqtt_bytes,
            "packets": dict(sorted(self.packets.items())),
            "packets_total": sum(self.packets.values()),
            "packets_by_direction": dict(sorted(self.packets_by_direction.items())),
            "publish_by_qos": dict(sorted(self.publish_by_qos.items())),
            "violations": dict(sorted(self.violations.items())),
            "faults": dict(sorted(self.faults.items())),
            "largest_connection_packets": self.largest_connection_packets,
            "connections_by_edition": dict(sorted(self.connections_by_edition.items())),
            "injected": self.injected,
            "distribution": self.distribution,
            "distribution_faults": dict(
                sorted(Counter(r["fault"] for r in self.distribution).items())
            ),
        }
