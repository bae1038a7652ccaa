"""A deterministic generator of large synthetic MQTT captures whose right answer is known.

``python -m pubproof.pipeline.synth OUT.pcap --frames 1000000 --seed 7`` writes a capture
of many interleaved MQTT 3.1.1 connections to port 1883 and, beside it,
``OUT.pcap.expected.json``: the number of frames, TCP connections and MQTT packets per
type, and the number of violations per rule id the injected faults must produce. The same
seed and options give the same bytes.

Each connection is a TCP handshake, CONNECT/CONNACK, SUBSCRIBE/SUBACK, then a stream of
application messages in both directions (the client publishes; the server forwards) at a
configurable QoS mix, with complete acknowledgement flows (PUBACK; PUBREC, PUBREL,
PUBCOMP), PINGREQ/PINGRESP now and then, and DISCONNECT and a FIN or RST close. What a
capture of real TCP shows is there too, at configurable rates: packets cut at arbitrary
points (inside a fixed header too), several packets in one segment, payloads spanning many
segments, retransmissions (whole and overlapping), adjacent segments swapped, pure ACKs,
IPv6 connections. Nothing is lost from the capture (no gaps), so every count is exact.

Faults (:mod:`pubproof.pipeline.synth.faults`) are injected on a fixed number of
connections spread evenly over the capture; their rule ids come from the project's codec
and model, not from this file.

Memory does not grow with the capture: connections are generators, at most
``--concurrent`` of them are open at a time, and frames go straight to a buffered file.
``--large-connection-packets N`` makes the first connection carry at least N MQTT
packets (for the memory benchmark).

``--mqtt5 P`` makes each connection MQTT 5.0 with probability P (1: all of them): the same
conversation with 5.0 packets, properties and Topic Aliases (:mod:`.mqtt5`). Faults are
injected on 3.1.1 connections only (a connection that carries one is 3.1.1 whatever P).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from pubproof.judge import packets as control
from pubproof.judge.packets import type_name
from pubproof.model.editions import Edition
from pubproof.pipeline.synth.faults import Fault, checked_wire_fault, flow_findings
from pubproof.pipeline.synth.mqtt5 import Session5
from pubproof.pipeline.synth.pcapwrite import (
    C2S,
    LINKTYPE_ETHERNET,
    S2C,
    CaptureWriter,
    Direction,
    Endpoint,
    Segment,
    TcpConnection,
)
from pubproof.reference import PubAck, PubComp, Publish, PubRec, PubRel, encode

#: topic names: ASCII, deep, long and multi-byte UTF-8 (2-, 3- and 4-byte sequences)
TOPICS = (
    "sensors/temperature",
    "sensors/humidity/room-12",
    "fleet/truck-0042/gps",
    "home/living/lamp/state",
    "capteurs/été/température",
    "センサー/温度/3",
    "传感器/湿度",
    "emoji/\U0001f680/launch",
    "a",
    "deep/" + "/".join(f"level{n}" for n in range(20)),
)
START_NS = 1_700_000_000 * 1_000_000_000


def _parse_mix(text: str) -> tuple[float, float, float]:
    parts = [float(p) for p in text.split(",")]
    if len(parts) != 3 or any(p < 0 for p in parts) or sum(parts) <= 0:
        raise argparse.ArgumentTypeError("the QoS mix is three weights, e.g. 5,3,2")
    return parts[0], parts[1], parts[2]


def _parse_sizes(text: str) -> tuple[tuple[int, float], ...]:
    sizes = []
    for part in text.split(","):
        size, _, weight = part.partition(":")
        sizes.append((int(size), float(weight or 1)))
    if not sizes or any(s < 0 or w < 0 for s, w in sizes):
        raise argparse.ArgumentTypeError("payload sizes are SIZE:WEIGHT,...")
    return tuple(sizes)


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
    inject: tuple[tuple[str, int], ...] = tuple((f.value, 10) for f in Fault)
    large_connection_packets: int = 0
    mqtt5: float = 0.0  # the share of connections in MQTT 5.0
    fmt: Literal["pcap", "pcapng"] = "pcap"
    linktype: int = LINKTYPE_ETHERNET

    def __post_init__(self) -> None:
        known = {f.value for f in Fault}
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
        }


# -- control packets (pubproof's codec covers the PUBLISH family only) -------------------


def connect(client_id: str) -> bytes:
    """CONNECT, MQTT 3.1.1 (protocol "MQTT", level 4), clean session, keep alive 60 s."""
    return control.connect(client_id, clean=True, keep_alive=60, edition=Edition.V311)


CONNACK = control.connack(session_present=False, return_code=0)  # accepted
PINGREQ, PINGRESP, DISCONNECT = control.PINGREQ, control.PINGRESP, control.DISCONNECT


def subscribe(packet_id: int, topic_filter: str, qos: int) -> bytes:
    """SUBSCRIBE to one topic filter."""
    return control.subscribe(packet_id, [(topic_filter, qos)])


def suback(packet_id: int, qos: int) -> bytes:
    """SUBACK granting one QoS."""
    return control.suback(packet_id, [qos])


# -- one connection ------------------------------------------------------------------------

Write = tuple[Direction, list[bytes]]  # one direction's packets, sent together


@dataclass(slots=True)
class _Ids:
    """Packet identifiers of one sender: the next after the last, skipping 0 (every flow
    completes before its identifier comes round again)."""

    last: int = 0

    def next(self) -> int:
        self.last = self.last % 0xFFFF + 1
        return self.last


class _Connection:
    """One TCP connection's MQTT conversation, as bursts of segments."""

    def __init__(
        self, index: int, config: SynthConfig, rng: random.Random, expected: Expected,
        fault: Fault | None, messages: int,
    ) -> None:  # fmt: skip
        self.index = index
        self.config = config
        self.rng = rng
        self.expected = expected
        self.fault = fault
        self.messages = messages
        self.packets = 0
        self.packet_target = 1 << 62  # the large connection stops once it has this many
        self.stop = False  # set when the capture has enough frames: wrap up
        v6 = rng.random() < config.ipv6
        host = index + 1
        if v6:
            client = Endpoint(f"fd00::{host >> 16:x}:{host & 0xFFFF:x}", 1024 + index % 64000)
            server = Endpoint("fd00::1883", config.port)
        else:
            client = Endpoint(
                f"10.{host >> 16 & 255}.{host >> 8 & 255}.{host & 255}", 1024 + index % 64000
            )
            server = Endpoint("192.168.0.1", config.port)
        self.tcp = TcpConnection(
            client, server, client_isn=rng.getrandbits(32), server_isn=rng.getrandbits(32),
            mss=config.mss,
        )  # fmt: skip
        self.ids = {C2S: _Ids(), S2C: _Ids()}
        #: MQTT 5.0 (None: 3.1.1); a connection that carries a fault is 3.1.1
        self.v5 = (
            Session5(rng)
            if fault is None and config.mqtt5 > 0 and rng.random() < config.mqtt5
            else None
        )
        #: segments (by id) that carry a fault's last byte, and the fault's record
        self.marks: dict[int, dict[str, Any]] = {}
        self.pending: tuple[bytes | None, dict[str, Any] | None] = (None, None)

    # packets are counted when their write is made into segments
    def _count(self, direction: Direction, data: bytes) -> None:
        kind = type_name(data[0])
        self.expected.packets[kind] += 1
        self.expected.packets_by_direction[direction.value] += 1
        self.expected.mqtt_bytes += len(data)
        if kind == "PUBLISH":
            self.expected.publish_by_qos[str(data[0] >> 1 & 3)] += 1
        self.packets += 1

    def _segments(
        self,
        writes: Sequence[Write],
        *,
        mark: bytes | None = None,
        record: dict[str, Any] | None = None,
    ) -> list[Segment]:
        """TCP segments for ``writes``, with the capture effects the configuration asks for.

        ``mark`` is a faulty packet among the writes (the same object): the segment that
        carries its last byte is remembered with ``record``, which gets that segment's frame
        number when it is written. Its chunk is not reordered, so that frame is also where
        a reader completes the packet. A wire fault is written alone and is shorter than
        the MSS: one segment carries all of it.
        """
        config, rng = self.config, self.rng
        out: list[Segment] = []
        for direction, packets in writes:
            for data in packets:
                self._count(direction, data)
            chunks = [packets] if rng.random() < config.coalesce else [[p] for p in packets]
            for chunk in chunks:
                data = b"".join(chunk)
                marked = any(packet is mark for packet in chunk)
                sizes = None
                # a faulty packet is not cut at random: a reader may report a broken header
                # where the header is, before the last byte, and the frame must be certain
                if rng.random() < config.split and not marked:
                    sizes = self._split_sizes(chunk)
                start_seq = self.tcp.next_seq(direction)
                segments = self.tcp.send(direction, data, sizes=sizes)
                if marked:
                    assert record is not None
                    end = 0
                    for packet in chunk:
                        end += len(packet)
                        if packet is mark:
                            break
                    last = (start_seq + end - 1) & 0xFFFFFFFF
                    for segment in segments:
                        if (last - segment.seq) & 0xFFFFFFFF < len(segment.payload):
                            self.marks[id(segment)] = record
                else:
                    for i in range(len(segments) - 1):
                        if rng.random() < config.reorder:
                            segments[i], segments[i + 1] = segments[i + 1], segments[i]
                for segment in segments:
                    out.append(segment)
                    if rng.random() < config.retransmit:
                        if len(segment.payload) > 1 and rng.random() < 0.5:
                            out.append(segment.slice(len(segment.payload) // 2))  # overlapping tail
                        else:
                            out.append(segment)
            if rng.random() < config.pure_ack:
                out.append(self.tcp.ack(direction.reverse))
        return out

    def _injected(
        self, fault: Fault, direction: Direction, findings: Sequence[Sequence[str]]
    ) -> dict[str, Any]:
        """Count an injected fault; the record (completed with its frame) for the JSON."""
        for finding in findings:  # each finding is one row of the violations table
            for rule in set(finding):
                self.expected.violations[rule] += 1
        self.expected.faults[fault.value] += 1
        record: dict[str, Any] = {
            "fault": fault.value, "connection": self.index, "direction": direction.value,
            "client": f"{self.tcp.client.address}:{self.tcp.client.port}",
            "findings": [list(f) for f in findings], "frame": None,
        }  # fmt: skip
        self.expected.injected.append(record)
        return record

    def _split_sizes(self, chunk: Sequence[bytes]) -> list[int]:
        """Random segment sizes (1..MSS) for the packets ``chunk`` sent together.

        Unless ``split_headers``, no cut falls after the second byte of a fixed header and
        inside its Remaining Length: tshark 4.0's MQTT dissector cannot reassemble such a
        packet (it reports it malformed), and the tests compare with tshark.
        """
        config, rng = self.config, self.rng
        total = sum(len(p) for p in chunk)
        cuts, position = [], 0
        while position < total:
            position += rng.randint(1, config.mss)
            cuts.append(min(position, total))
        if not config.split_headers:
            forbidden: set[int] = set()
            start = 0
            for packet in chunk:
                header = 2
                while packet[header - 1] & 0x80:
                    header += 1
                forbidden.update(range(start + 2, start + header))
                start += len(packet)
            cuts = sorted({cut + 3 if cut in forbidden else cut for cut in cuts})
            cuts = [min(cut, total) for cut in cuts]
        sizes, last = [], 0
        for cut in cuts:
            if cut > last:
                sizes.append(cut - last)
                last = cut
        return sizes

    def _payload(self) -> bytes:
        sizes = self.config.payload_sizes
        top = self.rng.choices([s for s, _ in sizes], weights=[w for _, w in sizes])[0]
        return self.rng.randbytes(self.rng.randint(top // 2, top))

    def _burst(self, *, flow_fault: bool) -> list[Write]:
        """1..burst messages one way, then their acknowledgement phases (QoS 2 in four)."""
        rng, config = self.rng, self.config
        direction = C2S if rng.random() < 0.5 else S2C
        count = 1 if flow_fault else rng.randint(1, config.burst)
        publishes, first_acks, releases, completions = [], [], [], []
        for _ in range(count):
            qos = 2 if flow_fault else rng.choices((0, 1, 2), weights=config.qos_mix)[0]
            topic = rng.choice(TOPICS)
            packet_id = self.ids[direction].next() if qos else None
            retain = rng.random() < 0.05
            v5 = self.v5
            if v5 is not None:
                publishes.append(
                    v5.publish(
                        direction, topic=topic, qos=qos, packet_id=packet_id,
                        payload=self._payload(), retain=retain,
                    )
                )  # fmt: skip
                if qos:
                    assert packet_id is not None
                    first_acks.append(v5.ack("PUBACK" if qos == 1 else "PUBREC", packet_id))
                if qos == 2:
                    assert packet_id is not None
                    releases.append(v5.ack("PUBREL", packet_id))
                    completions.append(v5.ack("PUBCOMP", packet_id))
                continue
            publishes.append(
                encode(
                    Publish(
                        topic=topic,
                        qos=qos,
                        packet_id=packet_id,
                        payload=self._payload(),
                        retain=retain,
                    )
                )
            )
            if qos == 1:
                assert packet_id is not None
                first_acks.append(encode(PubAck(packet_id=packet_id)))
            elif qos == 2:
                assert packet_id is not None
                first_acks.append(encode(PubRec(packet_id=packet_id)))
                releases.append(encode(PubRel(packet_id=packet_id)))
                completions.append(encode(PubComp(packet_id=packet_id)))
        writes: list[Write] = [(direction, publishes)]
        if first_acks:
            writes.append((direction.reverse, first_acks))
        if flow_fault:
            # a QoS 1 PUBLISH on the identifier still held for the QoS 2 flow (PUBREC seen,
            # PUBCOMP not yet); the receiver answers nothing to it
            packet_id = self.ids[direction].last
            topic = rng.choice(TOPICS)
            findings = flow_findings(topic, packet_id, sender=direction.value)
            bad = encode(Publish(topic=topic, qos=1, packet_id=packet_id, payload=self._payload()))
            self.pending = (bad, self._injected(Fault.QOS1_ON_HELD_ID, direction, findings))
            writes.append((direction, [bad]))
        if releases:
            writes.append((direction, releases))
            writes.append((direction.reverse, completions))
        return writes

    def _burst_segments(self, *, flow_fault: bool) -> list[Segment]:
        writes = self._burst(flow_fault=flow_fault)
        mark, record = self.pending
        self.pending = (None, None)
        return self._segments(writes, mark=mark, record=record)

    def run(self) -> Iterator[list[Segment]]:
        """The connection's bursts of segments, in the order they reach the capture."""
        rng = self.rng
        self.expected.connections += 1
        self.expected.connections_by_edition["3.1.1" if self.v5 is None else "5.0"] += 1
        yield self.tcp.handshake()
        sub_id = self.ids[C2S].next()
        client_id = f"synth-{self.config.seed}-{self.index}"
        if self.v5 is None:
            yield self._segments([
                (C2S, [connect(client_id)]), (S2C, [CONNACK]),
                (C2S, [subscribe(sub_id, "#", 2)]), (S2C, [suback(sub_id, 2)]),
            ])  # fmt: skip
        else:
            v5 = self.v5
            yield self._segments([
                (C2S, [v5.connect(client_id)]), (S2C, [v5.connack()]),
                (C2S, [v5.subscribe(sub_id, "#", 2)]), (S2C, [v5.suback(sub_id, 2)]),
            ])  # fmt: skip
        flow_at = rng.randrange(self.messages) if self.fault is Fault.QOS1_ON_HELD_ID else -1
        sent = 0
        while sent < self.messages and not self.stop and self.packets < self.packet_target:
            yield self._burst_segments(flow_fault=sent == flow_at)
            sent += 1
            if rng.random() < self.config.ping:
                yield self._segments([(C2S, [PINGREQ]), (S2C, [PINGRESP])])
        if flow_at >= 0 and sent <= flow_at:
            yield self._burst_segments(flow_fault=True)  # stopped early: inject now
        yield self._close()
        self.expected.largest_connection_packets = max(
            self.expected.largest_connection_packets, self.packets
        )

    def _close(self) -> list[Segment]:
        rng, tcp = self.rng, self.tcp
        if self.fault is not None and self.fault.is_wire:
            # the faulty packet is the last its direction sends; the receiver closes
            direction = C2S if rng.random() < 0.5 else S2C
            data, rule = checked_wire_fault(
                self.fault, topic=rng.choice(TOPICS), packet_id=self.ids[direction].next(),
                payload=self._payload()[:64],
            )  # fmt: skip
            record = self._injected(self.fault, direction, [(rule,)])
            segments = self._segments([(direction, [data])], mark=data, record=record)
            if rng.random() < 0.5:
                return [*segments, tcp.rst(direction.reverse)]
            return [*segments, *tcp.close(direction.reverse)]
        goodbye = DISCONNECT if self.v5 is None else self.v5.disconnect()
        segments = self._segments([(C2S, [goodbye])])
        if rng.random() < self.config.rst:
            return [*segments, tcp.rst(C2S)]
        return [*segments, *tcp.close(C2S)]


# -- the capture -----------------------------------------------------------------------------


def _fault_plan(config: SynthConfig) -> dict[int, Fault]:
    """Which connection (by index) carries which fault: spread evenly, deterministic."""
    faults = [Fault(name) for name, count in config.inject for _ in range(count)]
    if not faults:
        return {}
    total = max(config.connections, len(faults))
    stride = total / len(faults)
    return {int(n * stride): fault for n, fault in enumerate(faults)}


def generate(config: SynthConfig, out: str | Path) -> dict[str, Any]:
    """Write the capture to ``out`` and ``out.expected.json``; return the expected JSON."""
    rng = random.Random(config.seed)
    expected = Expected()
    plan = _fault_plan(config)
    last_fault = max(plan, default=-1)
    # messages per connection, so that ``connections`` connections make about ``frames``
    # frames (about 4.5 frames per message at the default rates; corrected as it runs)
    mean_messages = max(1, round(config.frames / config.connections / 4.5))
    open_: list[tuple[_Connection, Iterator[list[Segment]]]] = []
    started = 0
    now = START_NS
    with CaptureWriter(str(out), fmt=config.fmt, linktype=config.linktype) as capture:
        while True:
            enough = capture.frames >= config.frames
            # open connections until the frames are there and every fault is placed
            while (not enough or started <= last_fault) and len(open_) < config.concurrent:
                messages = rng.randint(1, 2 * mean_messages - 1)
                large = started == 0 and config.large_connection_packets > 0
                if large:
                    messages = config.large_connection_packets  # >= 1 packet per message
                conn = _Connection(
                    started, config, random.Random(rng.getrandbits(64)), expected,
                    plan.get(started), messages,
                )  # fmt: skip
                if large:
                    # its messages stop once it has the packets asked for (a few more: the
                    # last flow completes, and DISCONNECT follows)
                    conn.packet_target = config.large_connection_packets
                open_.append((conn, conn.run()))
                started += 1
            if not open_:
                break
            if enough:
                for conn, _ in open_:
                    if not (config.large_connection_packets and conn.index == 0):
                        conn.stop = True
            pick = rng.randrange(len(open_))
            burst = next(open_[pick][1], None)
            if burst is None:
                open_.pop(pick)
                continue
            marks = open_[pick][0].marks
            for segment in burst:
                now += rng.randint(1_000, 200_000)
                capture.write(segment, now)
                if marks:
                    record = marks.pop(id(segment), None)
                    if record is not None and record["frame"] is None:
                        record["frame"] = capture.frames
        expected.frames = capture.frames
        expected.tcp_payload_bytes = capture.tcp_payload_bytes
    result = {
        "generator": "pubproof.pipeline.synth",
        "config": asdict(config),
        **expected.as_json(),
    }
    Path(f"{out}.expected.json").write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    return result


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _parse_inject(values: Sequence[str]) -> tuple[tuple[str, int], ...]:
    counts = {f.value: 0 for f in Fault}
    for value in values:
        name, _, count = value.partition("=")
        if name == "all":
            counts = {f.value: int(count) for f in Fault}
            continue
        if name not in counts:
            raise SystemExit(f"--inject: unknown fault {name!r} (known: all, {', '.join(counts)})")
        counts[name] = int(count)
    return tuple(counts.items())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pubproof.pipeline.synth",
        description="Write a deterministic synthetic MQTT capture and FILE.expected.json.",
    )
    defaults = SynthConfig()
    parser.add_argument("out", help="the capture to write (.pcap or .pcapng)")
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument(
        "--frames", type=int, default=defaults.frames, help="at least this many frames"
    )
    parser.add_argument("--connections", type=int, default=defaults.connections)
    parser.add_argument("--concurrent", type=int, default=defaults.concurrent)
    parser.add_argument(
        "--qos-mix", type=_parse_mix, default=defaults.qos_mix, help="weights of QoS 0,1,2"
    )
    parser.add_argument(
        "--payload-sizes",
        type=_parse_sizes,
        default=defaults.payload_sizes,
        metavar="SIZE:WEIGHT,...",
    )
    parser.add_argument("--mss", type=int, default=defaults.mss)
    parser.add_argument("--burst", type=int, default=defaults.burst)
    for name in ("split", "coalesce", "retransmit", "reorder", "pure_ack", "ping", "rst", "ipv6"):
        parser.add_argument(
            f"--{name.replace('_', '-')}", type=float, default=getattr(defaults, name), metavar="P"
        )
    parser.add_argument(
        "--no-split-headers", dest="split_headers", action="store_false",
        help="never cut inside a Remaining Length (tshark 4.0 cannot reassemble those)",
    )  # fmt: skip
    parser.add_argument("--port", type=int, default=defaults.port)
    parser.add_argument(
        "--inject", action="append", default=[], metavar="FAULT=COUNT",
        help="faults to inject (default: 10 of each); FAULT is one of "
        + ", ".join(f.value for f in Fault) + ", or all",
    )  # fmt: skip
    parser.add_argument("--large-connection-packets", type=int, default=0, metavar="N")
    parser.add_argument(
        "--mqtt5", type=float, default=0.0, metavar="P",
        help="the share of connections in MQTT 5.0, with properties and Topic Aliases "
        "(default 0; 1: all)",
    )  # fmt: skip
    parser.add_argument(
        "--format", choices=("pcap", "pcapng"), default=None, help="default: from the file name"
    )
    parser.add_argument("--json", action="store_true", help="print the expected counts")
    args = parser.parse_args(argv)
    fmt: Literal["pcap", "pcapng"] = args.format or (
        "pcapng" if args.out.endswith(".pcapng") else "pcap"
    )
    config = SynthConfig(
        seed=args.seed, frames=args.frames, connections=args.connections,
        concurrent=args.concurrent,
        qos_mix=args.qos_mix, payload_sizes=args.payload_sizes, mss=args.mss, burst=args.burst,
        split=args.split, split_headers=args.split_headers, coalesce=args.coalesce,
        retransmit=args.retransmit, reorder=args.reorder,
        pure_ack=args.pure_ack, ping=args.ping, rst=args.rst, ipv6=args.ipv6, port=args.port,
        inject=_parse_inject(args.inject) if args.inject else SynthConfig().inject,
        large_connection_packets=args.large_connection_packets, mqtt5=args.mqtt5, fmt=fmt,
    )  # fmt: skip
    result = generate(config, args.out)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(
            f"{args.out}: {result['frames']} frames, {result['connections']} connections, "
            f"{result['packets_total']} MQTT packets, violations {result['violations']}",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":  # pragma: no cover - python -m pubproof.pipeline.synth.generate
    raise SystemExit(main())
