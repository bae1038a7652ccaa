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
connections spread evenly over the capture (:mod:`.injection`); their rule ids come from
the project's codec and model, not from this file. The options are a
:class:`~pubproof.pipeline.synth.config.SynthConfig` (:mod:`.command` is the command line).

Memory does not grow with the capture: connections are generators, at most
``--concurrent`` of them are open at a time, and frames go straight to a buffered file.
``--large-connection-packets N`` makes the first connection carry at least N MQTT
packets (for the memory benchmark).

``--mqtt5 P`` makes each connection MQTT 5.0 with probability P (1: all of them): the same
conversation with 5.0 packets, properties and Topic Aliases (:mod:`.mqtt5`). Faults are
injected on 3.1.1 connections only (a connection that carries one is 3.1.1 whatever P).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pubproof.judge import packets as control
from pubproof.judge.packets import type_name
from pubproof.model.editions import Edition
from pubproof.pipeline.synth.broker import Broker, Clock, Copy, DistFault, Member, Subscription
from pubproof.pipeline.synth.broker import Message as Taken
from pubproof.pipeline.synth.broker import matches as filter_matches
from pubproof.pipeline.synth.config import Expected, SynthConfig
from pubproof.pipeline.synth.faults import Fault, checked_wire_fault, flow_findings
from pubproof.pipeline.synth.injection import (
    dist_plan,
    fault_draws,
    fault_plan,
    publish_fault,
    record_fault,
    record_link_fault,
)
from pubproof.pipeline.synth.mqtt5 import CLIENT_DECLARES, Session5
from pubproof.pipeline.synth.pcapwrite import (
    C2S,
    S2C,
    CaptureWriter,
    Direction,
    Endpoint,
    Segment,
    TcpConnection,
)
from pubproof.reference import Publish, encode
from pubproof.reference.packets import ACK_CLASSES

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
#: the topic filters a connection subscribes to (one or two of them, each at a QoS drawn
#: from 0 to 2): wildcards of both kinds, exact names, and one that matches everything
FILTERS = (
    "#", "sensors/#", "sensors/+", "+/+/room-12", "fleet/+/gps", "home/#", "capteurs/#",
    "センサー/+/3", "emoji/+/launch", "a", "+/humidity/#", "deep/#", "传感器/+",
)  # fmt: skip
#: copies a connection sends at most in one turn (the rest in its next turns)
DELIVER_MOST = 256
START_NS = 1_700_000_000 * 1_000_000_000


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
        fault: Fault | None, messages: int, brokers: dict[bool, Broker],
        dist_fault: DistFault | None = None,
    ) -> None:  # fmt: skip
        self.index = index
        #: the distribution fault to inject on this connection's messages (or, for
        #: miss-retained, its subscription), until it is
        self.dist_fault = dist_fault
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
        #: the server's broker: one per server address (an IPv4 and an IPv6 one: two
        #: servers in one capture, which forward nothing to each other)
        self.broker = brokers[v6]
        self.ids = {C2S: _Ids(), S2C: _Ids()}
        #: MQTT 5.0 (None: 3.1.1); a connection that carries a fault is 3.1.1
        self.v5 = (
            Session5(rng)
            if fault is None and config.mqtt5 > 0 and rng.random() < config.mqtt5
            else None
        )
        self.member: Member = self.broker.join(
            index, self.v5 is not None, f"{client.address}:{client.port}"
        )
        #: segments (by id) that carry a fault's last byte, and the fault's record
        self.marks: dict[int, dict[str, Any]] = {}
        self.pending: tuple[bytes | None, dict[str, Any] | None] = (None, None)

    @property
    def _client(self) -> str:
        """The client's address and port, as a fault's record gives them."""
        return f"{self.tcp.client.address}:{self.tcp.client.port}"

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
                elif not config.split_headers and len(data) > config.mss:
                    sizes = self._mss_sizes(chunk)
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
            forbidden = _inside_lengths(chunk)
            cuts = sorted({cut + 3 if cut in forbidden else cut for cut in cuts})
            cuts = [min(cut, total) for cut in cuts]
        sizes, last = [], 0
        for cut in cuts:
            if cut > last:
                sizes.append(cut - last)
                last = cut
        return sizes

    def _mss_sizes(self, chunk: Sequence[bytes]) -> list[int]:
        """Segments of at most the MSS for the packets ``chunk`` sent together, none cut
        inside a Remaining Length (a cut that would be is made at its packet's start
        instead): what ``split_headers`` off asks of every cut, not only random ones."""
        mss = self.config.mss
        total = sum(len(p) for p in chunk)
        forbidden = _inside_lengths(chunk)
        starts: dict[int, int] = {}
        position = 0
        for packet in chunk:
            for at in range(position + 2, position + 6):
                starts[at] = position
            position += len(packet)
        sizes, last = [], 0
        while last < total:
            cut = min(last + mss, total)
            if cut in forbidden and starts[cut] > last:
                cut = starts[cut]
            sizes.append(cut - last)
            last = cut
        return sizes

    def _payload(self) -> bytes:
        sizes = self.config.payload_sizes
        top = self.rng.choices([s for s, _ in sizes], weights=[w for _, w in sizes])[0]
        return self.rng.randbytes(self.rng.randint(top // 2, top))

    def _burst(self, *, flow_fault: bool) -> list[Write]:
        """A turn of the connection: its outbox delivered (at most :data:`DELIVER_MOST`
        copies), or 1..burst messages published, with their acknowledgement phases (QoS 2
        in four); ``flow_fault``: one QoS 2 message either way, then the flow fault."""
        rng = self.rng
        if not flow_fault:
            if self.member.outbox and rng.random() < 0.5:
                copies = self.broker.due(self.member, DELIVER_MOST, self._receive_maximum)
                if copies:
                    return self._deliver(copies)
            if self.dist_fault is DistFault.MISS_RETAINED:
                topic = self.broker.retained_for(self.member)
                if topic is not None:  # a subscription made anew, its retained message missed
                    return self._subscribe([(topic, 2)], miss=True)
            return self._publish(C2S)
        direction = C2S if rng.random() < 0.5 else S2C
        return self._publish(direction, flow_fault=True)

    def _publish(self, direction: Direction, *, flow_fault: bool = False) -> list[Write]:
        """Messages ``direction`` sends: the client's (which the broker takes, and a
        distribution fault may follow), or (the flow fault's) the server's QoS 2 PUBLISH on
        a topic the client subscribed to, a copy of nothing any client published."""
        rng, config = self.rng, self.config
        fault, topics = publish_fault(
            self.dist_fault if direction is C2S and not flow_fault else None,
            self.broker, self.member, TOPICS, v5=self.v5 is not None,
        )  # fmt: skip
        count = 1 if flow_fault or fault is not None else rng.randint(1, config.burst)
        if fault is not None and fault.pair:
            count = 2
        publishes, first_acks, releases, completions = [], [], [], []
        taken: list[dict[int, Copy]] = []
        fault_qos, fault_topic = fault_draws(rng, fault, config.qos_mix, topics)
        for _ in range(count):
            qos = 2 if flow_fault else rng.choices((0, 1, 2), weights=config.qos_mix)[0]
            topic = rng.choice(TOPICS)
            if direction is S2C:
                topic = rng.choice(self._subscribed_topics())
            retain = rng.random() < 0.05
            dup = False
            payload = self._payload()
            expiry: int | None = None
            if fault is not None:
                topic, qos = fault_topic or topic, fault_qos
                dup = fault is DistFault.DUP
                # a payload of its own: two messages alike cannot be told apart
                payload = payload or rng.randbytes(8)
                retain = fault is DistFault.RETAIN or retain
                if fault is DistFault.EXPIRED:
                    expiry = 1
            packet_id = self.ids[direction].next() if qos else None
            v5 = self.v5
            if v5 is not None:
                publishes.append(v5.publish(
                    direction, topic=topic, qos=qos, packet_id=packet_id, payload=payload,
                    retain=retain, dup=dup, expiry=expiry,
                ))  # fmt: skip
            else:
                publishes.append(encode(Publish(
                    topic=topic, qos=qos, packet_id=packet_id, payload=payload, retain=retain,
                    dup=dup,
                )))  # fmt: skip
            if qos:
                assert packet_id is not None
                first_acks.append(self._ack("PUBACK" if qos == 1 else "PUBREC", packet_id))
            if qos == 2:
                assert packet_id is not None
                releases.append(self._ack("PUBREL", packet_id))
                completions.append(self._ack("PUBCOMP", packet_id))
            if direction is C2S:
                # the broker takes it now: its PUBACK or PUBREC (QoS 0: the PUBLISH) is
                # in this turn, before any copy of it goes out
                properties: dict[str, Any] = {}
                if v5 is not None:
                    properties = dict(v5.profile(C2S, topic))
                    if expiry is not None:
                        properties["message_expiry_interval"] = expiry
                message = Taken(
                    publisher=self.index, topic=topic, qos=qos, retain=retain,
                    payload=payload, v5=v5 is not None, time=self.broker.clock.now, dup=dup,
                    properties=properties,
                )  # fmt: skip
                taken.append(self.broker.publish(message))
        if fault is not None and self.broker.inject(fault, self.member, taken):
            self.dist_fault = None
        writes: list[Write] = [(direction, publishes)]
        if first_acks:
            writes.append((direction.reverse, first_acks))
        if flow_fault:
            # a QoS 1 PUBLISH on the identifier still held for the QoS 2 flow (PUBREC seen,
            # PUBCOMP not yet); the receiver answers nothing to it
            packet_id = self.ids[direction].last
            topic = rng.choice(TOPICS if direction is C2S else self._subscribed_topics())
            findings = flow_findings(topic, packet_id, sender=direction.value)
            bad = encode(Publish(topic=topic, qos=1, packet_id=packet_id, payload=self._payload()))
            record = record_fault(
                self.expected, Fault.QOS1_ON_HELD_ID, self.index, direction, self._client, findings
            )
            self.pending = (bad, record)
            writes.append((direction, [bad]))
        if releases:
            writes.append((direction, releases))
            writes.append((direction.reverse, completions))
        return writes

    def _ack(self, kind: str, packet_id: int) -> bytes:
        if self.v5 is not None:
            return self.v5.ack(kind, packet_id)
        return encode(ACK_CLASSES[kind](packet_id=packet_id))

    def _subscribed_topics(self) -> list[str]:
        """The topics this connection subscribes to (TOPICS when it has none)."""
        subs = self.member.subscriptions
        found = [t for t in TOPICS if any(filter_matches(s.topic_filter, t) for s in subs)]
        return found or list(TOPICS)

    @property
    def _receive_maximum(self) -> int | None:
        """The client's Receive Maximum (5.0), which bounds the copies under way."""
        return None if self.v5 is None else int(CLIENT_DECLARES["receive_maximum"])

    def _deliver(self, copies: Sequence[Copy]) -> list[Write]:
        """The broker's copies to this connection, each acknowledged (QoS 1 and 2)."""
        v5, broker = self.v5, self.broker
        publishes, first_acks, releases, completions = [], [], [], []
        for copy in copies:
            message = copy.message
            packet_id = self.ids[S2C].next() if copy.qos else None
            if v5 is not None:
                data = v5.forward(
                    topic=message.topic, qos=copy.qos, packet_id=packet_id,
                    payload=message.payload, retain=copy.retain, dup=copy.dup,
                    properties=message.properties, identifiers=copy.identifiers,
                    expiry=broker.expiry(copy) if message.v5 else None,
                    content_type=copy.content_type,
                )  # fmt: skip
            else:
                data = encode(Publish(
                    topic=message.topic, qos=copy.qos, packet_id=packet_id,
                    payload=message.payload, retain=copy.retain, dup=copy.dup,
                ))  # fmt: skip
            publishes.append(data)
            record = copy.record
            if record is not None and record["source"] == "link":
                # found by the link judge at this packet: a per-connection fault's record
                found = record_link_fault(self.expected, record, self.index, self._client)
                self.pending = (data, found)
            if packet_id is not None:
                first_acks.append(self._ack("PUBACK" if copy.qos == 1 else "PUBREC", packet_id))
            if copy.qos == 2:
                assert packet_id is not None
                releases.append(self._ack("PUBREL", packet_id))
                completions.append(self._ack("PUBCOMP", packet_id))
        writes: list[Write] = [(S2C, publishes)]
        if first_acks:
            writes.append((C2S, first_acks))
        if releases:
            writes.append((S2C, releases))
            writes.append((C2S, completions))
        return writes

    def _subscribe(self, filters: Sequence[tuple[str, int]], *, miss: bool = False) -> list[Write]:
        """SUBSCRIBE and SUBACK for each filter (5.0: each with an identifier of its own);
        the broker holds each subscription from its SUBACK (``miss``: a retained message
        it is owed is left out, the connection's miss-retained fault)."""
        writes: list[Write] = []
        member = self.member
        for topic_filter, qos in filters:
            packet_id = self.ids[C2S].next()
            identifier = len(member.subscriptions) + 1
            if self.v5 is None:
                writes += [(C2S, [subscribe(packet_id, topic_filter, qos)]),
                           (S2C, [suback(packet_id, qos)])]  # fmt: skip
            else:
                writes += [
                    (C2S, [self.v5.subscribe(packet_id, topic_filter, qos, identifier)]),
                    (S2C, [self.v5.suback(packet_id, qos)]),
                ]  # fmt: skip
            subscription = Subscription(
                topic_filter=topic_filter, qos=qos,
                identifier=identifier if self.v5 is not None else None,
            )  # fmt: skip
            if self.broker.subscribe(member, subscription, miss=miss):
                self.dist_fault, miss = None, False
        return writes

    def _burst_segments(self, *, flow_fault: bool) -> list[Segment]:
        return self._marked(self._burst(flow_fault=flow_fault))

    def _marked(self, writes: Sequence[Write]) -> list[Segment]:
        """The segments of ``writes``, with the fault packet among them marked."""
        mark, record = self.pending
        self.pending = (None, None)
        return self._segments(writes, mark=mark, record=record)

    def run(self) -> Iterator[list[Segment]]:
        """The connection's bursts of segments, in the order they reach the capture."""
        rng = self.rng
        self.expected.connections += 1
        self.expected.connections_by_edition["3.1.1" if self.v5 is None else "5.0"] += 1
        yield self.tcp.handshake()
        client_id = f"synth-{self.config.seed}-{self.index}"
        hello: list[Write]
        if self.v5 is None:
            hello = [(C2S, [connect(client_id)]), (S2C, [CONNACK])]
        else:
            hello = [(C2S, [self.v5.connect(client_id)]), (S2C, [self.v5.connack()])]
        chosen = rng.sample(FILTERS, rng.randint(1, 2))
        filters = [(f, rng.randint(0, 2)) for f in chosen]
        miss = self.dist_fault is DistFault.MISS_RETAINED
        yield self._segments([*hello, *self._subscribe(filters, miss=miss)])
        flow_at = rng.randrange(self.messages) if self.fault is Fault.QOS1_ON_HELD_ID else -1
        sent = 0
        while sent < self.messages and not self.stop and self.packets < self.packet_target:
            yield self._burst_segments(flow_fault=sent == flow_at)
            sent += 1
            if rng.random() < self.config.ping:
                yield self._segments([(C2S, [PINGREQ]), (S2C, [PINGRESP])])
        if flow_at >= 0 and sent <= flow_at:
            yield self._burst_segments(flow_fault=True)  # stopped early: inject now
        for _ in range(4):  # stopped early: a distribution fault still to inject, now
            if self.dist_fault is None or self.dist_fault is DistFault.MISS_RETAINED:
                break
            yield self._marked(self._publish(C2S))
        # everything the broker owes it goes out before its DISCONNECT
        while self.member.outbox:
            copies = self.broker.due(self.member, DELIVER_MOST, self._receive_maximum)
            if copies:
                yield self._marked(self._deliver(copies))
            else:  # a copy held back: time passes
                yield self._segments([(C2S, [PINGREQ]), (S2C, [PINGRESP])])
        self.broker.leave(self.member)
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
            record = record_fault(
                self.expected, self.fault, self.index, direction, self._client, [(rule,)]
            )
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


def _inside_lengths(chunk: Sequence[bytes]) -> set[int]:
    """The offsets in the packets ``chunk`` sent together where a cut would fall after the
    second byte of a fixed header and inside its Remaining Length."""
    forbidden: set[int] = set()
    start = 0
    for packet in chunk:
        header = 2
        while packet[header - 1] & 0x80:
            header += 1
        forbidden.update(range(start + 2, start + header))
        start += len(packet)
    return forbidden


def generate(config: SynthConfig, out: str | Path) -> dict[str, Any]:
    """Write the capture to ``out`` and ``out.expected.json``; return the expected JSON."""
    rng = random.Random(config.seed)
    expected = Expected()
    plan = fault_plan(config)
    spread = dist_plan(config)
    last_fault = max(plan, default=-1)
    clock = Clock(now=START_NS / 1e9)
    brokers = {v6: Broker(random.Random(rng.getrandbits(64)), clock) for v6 in (False, True)}
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
                    plan.get(started), messages, brokers, spread.get(started),
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
                clock.now = now / 1e9
                if marks:
                    record = marks.pop(id(segment), None)
                    if record is not None and record["frame"] is None:
                        record["frame"] = capture.frames
            if clock.pause:  # a fault's pause, after the turn that made it
                now += int(clock.pause * 1e9)
                clock.now, clock.pause = now / 1e9, 0.0
        expected.frames = capture.frames
        expected.distribution = [r for b in brokers.values() for r in b.injected]
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
