#!/usr/bin/env python
"""Throughput of pubproof's reference codec, against MQTT codecs from PyPI on the same bytes.

    python benchmarks/bench_codec.py [--packets N] [--json] [--peers NAME,...]

Two streams are built from a seeded random generator, so every run decodes the same bytes:

``mix``
    A realistic MQTT 3.1.1 session: ~85% small PUBLISH (QoS 0/1/2, topics such as
    ``sensors/room12/temp``, payloads of 2-64 bytes), ~2% PUBLISH with a large payload
    (4-64 KiB), the rest PUBACK/PUBREC/PUBREL/PUBCOMP.
``small``
    Small PUBLISH packets only: the target of the performance issue (pubproof decodes at
    least 500,000 of them per second on one core with full validation, and at least 3x as
    many as the fastest Python peer).

Operations: ``decode`` (the whole stream is available, then every packet is taken out),
``decode/4KiB`` (pubproof only: the stream arrives in 4 KiB chunks, each drained before the
next, as from a socket) and ``encode`` (packet objects to the bytes of the stream).

Every figure is packets per second of the best of several timed passes over the whole
stream (``time.perf_counter``; the garbage collector is off while timing, as ``timeit``
does). The ratio column is pubproof's rate divided by the row's rate for the same stream
and operation (so a peer's row reads "pubproof is N times faster"). Before any timing, each
peer's output is compared field by field (type, topic, payload, QoS, packet id, DUP,
RETAIN) with pubproof's on the whole stream: a peer that decodes something else is not
timed.

Peers are used through their own packet-reading path, in the most favourable honest way
(all bytes already in memory, no sockets, no logging); see the comment on each for what it
validates. A peer that is not installed is skipped with a note; the pinned versions are in
the ``bench`` extra of pyproject.toml (``pip install -e '.[bench]'``), except mqtt-codec,
whose 2019 sdist needs ``PIP_CONSTRAINT`` with ``setuptools<58`` to build (see
``benchmarks/README.md``).

Progress goes to stderr; the table (or, with ``--json``, a JSON document) to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import io
import json
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib import metadata
from typing import Any

from pubproof.reference import Decoder, Packet, PubAck, PubComp, Publish, PubRec, PubRel, encode

SEED = 20_240_611
CHUNK = 4096
#: The issue's targets for the small-PUBLISH stream.
TARGET_RATE = 500_000
TARGET_RATIO = 3.0

Record = tuple[str, str | None, bytes | None, int | None, int | None, bool | None, bool | None]
"""A packet as every codec must agree on it: (type, topic, payload, qos, packet id, dup,
retain); the PUBLISH-only fields are None for an acknowledgement."""


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --- the workload ------------------------------------------------------------------------

_AREAS = ("sensors", "home", "plant", "fleet", "devices", "lab")
_UNITS = ("room", "line", "truck", "node", "floor", "zone")
_METRICS = ("temp", "humidity", "co2", "pressure", "state", "battery", "rssi", "lux", "power")


class _Workload:
    """A seeded generator of packets; packet identifiers count up as a client's would."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.next_id = 0

    def packet_id(self) -> int:
        self.next_id = self.next_id % 0xFFFF + 1
        return self.next_id

    def topic(self) -> str:
        rng = self.rng
        return (
            f"{rng.choice(_AREAS)}/{rng.choice(_UNITS)}{rng.randint(1, 64)}/{rng.choice(_METRICS)}"
        )

    def publish(self, payload_size: int) -> Publish:
        rng = self.rng
        qos = rng.choices((0, 1, 2), weights=(50, 35, 15))[0]
        return Publish(
            topic=self.topic(),
            payload=rng.randbytes(payload_size),
            qos=qos,
            packet_id=self.packet_id() if qos else None,
            dup=qos > 0 and rng.random() < 0.03,  # DUP on QoS 0 is forbidden in 3.1.1
            retain=rng.random() < 0.05,
        )

    def small_publish(self) -> Publish:
        return self.publish(self.rng.randint(2, 64))

    def ack(self) -> Packet:
        rng = self.rng
        cls = rng.choices((PubAck, PubRec, PubRel, PubComp), weights=(40, 20, 20, 20))[0]
        return cls(packet_id=rng.randint(1, 0xFFFF))

    def mix(self, count: int) -> list[Packet]:
        packets: list[Packet] = []
        for _ in range(count):
            draw = self.rng.random()
            if draw < 0.85:
                packets.append(self.small_publish())
            elif draw < 0.87:
                packets.append(self.publish(self.rng.randint(4096, 65536)))
            else:
                packets.append(self.ack())
        return packets


@dataclass
class Stream:
    name: str
    packets: list[Packet]
    data: bytes = b""
    chunks: list[bytes] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.data = b"".join(encode(p) for p in self.packets)
        self.chunks = [self.data[i : i + CHUNK] for i in range(0, len(self.data), CHUNK)]
        self.records = [_pubproof_record(p) for p in self.packets]


def build_streams(count: int) -> list[Stream]:
    small = _Workload(SEED + 1)
    return [
        Stream("mix", _Workload(SEED).mix(count)),
        Stream("small", [small.small_publish() for _ in range(count)]),
    ]


def _pubproof_record(packet: Packet) -> Record:
    if isinstance(packet, Publish):
        return (
            "PUBLISH",
            packet.topic,
            packet.payload,
            packet.qos,
            packet.packet_id,
            packet.dup,
            packet.retain,
        )
    return (packet.type_name, None, None, None, packet.packet_id, None, None)


# --- codecs ------------------------------------------------------------------------------
# Each codec is a set of callables on one stream: ``decode(stream)`` returns the list of
# the codec's own packet objects (what is timed); ``records(stream)`` decodes it again into
# Records, for the check only; ``encode(objects)`` returns the bytes of the stream.
#
# The peers are optional (the ``bench`` extra) and, except paho-mqtt, ship no type
# information: an import of one is "not found" where it is not installed and "untyped"
# where it is, so those imports ignore both codes, and unused-ignore because only one of
# them (or, for paho-mqtt, none) fires in a given environment.


@dataclass
class Codec:
    name: str
    version: str
    how: str
    decode: Callable[[Stream], list[Any]]
    record: Callable[[Any], Record] | None  # one decoded object -> Record, if it can say
    decode_chunked: Callable[[Stream], list[Any]] | None = None
    encode: Callable[[list[Any]], bytes] | None = None
    records_of: Callable[[Stream], list[Record]] | None = None  # when record cannot

    def records(self, stream: Stream) -> list[Record]:
        if self.records_of is not None:
            return self.records_of(stream)
        assert self.record is not None
        return [self.record(p) for p in self.decode(stream)]


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "?"


def pubproof_codec() -> Codec:
    # Full validation, every rule of the 3.1.1 edition with its default readings: first
    # byte (reserved and out-of-scope types, QoS 3, DUP on QoS 0, acknowledgement flags),
    # Remaining Length (at most 4 bytes; exactly 2 for acknowledgements), topic (fits in
    # the packet, not empty, well-formed UTF-8, no U+0000, no wildcards), packet
    # identifier (room for it, not 0), and the packet objects are fully typed.
    def decode(stream: Stream) -> list[Any]:
        decoder = Decoder()
        decoder.feed(stream.data)
        packets = list(decoder)
        decoder.close()
        return packets

    def decode_chunked(stream: Stream) -> list[Any]:
        decoder = Decoder()
        packets: list[Any] = []
        feed, take = decoder.feed, packets.extend
        for chunk in stream.chunks:
            feed(chunk)
            take(decoder)
        decoder.close()
        return packets

    def encode_all(packets: list[Any]) -> bytes:
        return b"".join([encode(p) for p in packets])

    return Codec(
        "pubproof",
        _version("pubproof"),
        "reference.Decoder: feed the stream, iterate; reference.encode per packet",
        decode,
        _pubproof_record,
        decode_chunked,
        encode_all,
    )


def mqtt_codec_codec() -> Codec:
    # mqtt-codec 1.0.2 (module mqtt_codec). Its reading path is MqttFixedHeader.decode
    # then the packet class's decode_body on a file-like object, checking that the body
    # used exactly the Remaining Length (what MqttPacketBody.decode does); io.BytesIO over
    # the whole stream is the fastest file it accepts.
    # Validates: reserved types, the fixed-header flags of every type (ack flags, DUP on
    # QoS 0), Remaining Length at most 4 bytes, well-formed UTF-8 topic, body length (acks
    # exactly 2 bytes). QoS 3 only through an assert (gone under python -O).
    # Does not: empty topic, U+0000 or wildcards in the topic, packet identifier 0.
    # Its packet constructors encode the body again (to know the packet size): part of its
    # decoding cost.
    from mqtt_codec.io import DecodeError  # type: ignore[import-not-found, import-untyped, unused-ignore]
    from mqtt_codec.packet import (  # type: ignore[import-not-found, import-untyped, unused-ignore]
        MqttControlPacketType,
        MqttFixedHeader,
        MqttPuback,
        MqttPubcomp,
        MqttPublish,
        MqttPubrec,
        MqttPubrel,
    )

    body_decoders = {
        MqttControlPacketType.publish: MqttPublish.decode_body,
        MqttControlPacketType.puback: MqttPuback.decode_body,
        MqttControlPacketType.pubrec: MqttPubrec.decode_body,
        MqttControlPacketType.pubrel: MqttPubrel.decode_body,
        MqttControlPacketType.pubcomp: MqttPubcomp.decode_body,
    }
    names = {
        MqttPuback: "PUBACK",
        MqttPubrec: "PUBREC",
        MqttPubrel: "PUBREL",
        MqttPubcomp: "PUBCOMP",
    }

    def decode(stream: Stream) -> list[Any]:
        data = stream.data
        end = len(data)
        f = io.BytesIO(data)
        header_decode = MqttFixedHeader.decode
        packets: list[Any] = []
        append = packets.append
        while f.tell() < end:
            _, header = header_decode(f)
            used, packet = body_decoders[header.packet_type](header, f)
            if used != header.remaining_len:
                raise DecodeError("Remaining Length not equal to the body bytes consumed")
            append(packet)
        return packets

    def record(p: Any) -> Record:
        if isinstance(p, MqttPublish):
            return (
                "PUBLISH",
                p.topic,
                p.payload,
                p.qos,
                p.packet_id if p.qos else None,
                p.dupe,
                p.retain,
            )
        return (names[type(p)], None, None, None, p.packet_id, None, None)

    def encode_all(packets: list[Any]) -> bytes:
        f = io.BytesIO()
        for p in packets:
            p.encode(f)
        return f.getvalue()

    return Codec(
        "mqtt-codec",
        _version("mqtt-codec"),
        "MqttFixedHeader.decode + <Packet>.decode_body on io.BytesIO; <Packet>.encode(BytesIO)",
        decode,
        record,
        None,
        encode_all,
    )


def amqtt_codec() -> Codec:
    # amqtt 0.12.1, the asyncio broker/client (successor of hbmqtt, which no longer runs
    # on Python 3.11). Its reading path is that of ProtocolHandler._reader_loop:
    # MQTTFixedHeader.from_stream(reader), the reserved-type check, packet_class(header),
    # then <Packet>.from_stream(reader, fixed_header=header), minus the asyncio.wait_for
    # keep-alive timeout around the header read. The reader is amqtt's own BufferReader
    # over the whole stream and the coroutines are driven to completion by hand: the reads
    # never suspend, and this is faster than an event loop (and than StreamReaderAdapter
    # over an asyncio.StreamReader, which its broker uses).
    # Validates: reserved and unknown types, Remaining Length at most 4 bytes, wildcards in
    # the topic. Does not: any fixed-header flags (QoS 3, DUP on QoS 0, ack flags), the
    # acks' Remaining Length, empty topic, U+0000, packet identifier 0; an ill-formed
    # UTF-8 topic becomes str(bytes), whose length then throws the framing off.
    # Each packet gets a datetime.now() timestamp.
    from amqtt.adapters import BufferReader  # type: ignore[import-not-found, import-untyped, unused-ignore]
    from amqtt.errors import AMQTTError  # type: ignore[import-not-found, import-untyped, unused-ignore]
    from amqtt.mqtt import packet_class  # type: ignore[import-not-found, import-untyped, unused-ignore]
    from amqtt.mqtt.packet import RESERVED_0, RESERVED_15, MQTTFixedHeader  # type: ignore[import-not-found, import-untyped, unused-ignore]
    from amqtt.mqtt.publish import PublishPacket  # type: ignore[import-not-found, import-untyped, unused-ignore]

    names = {4: "PUBACK", 5: "PUBREC", 6: "PUBREL", 7: "PUBCOMP"}
    header_from_stream = MQTTFixedHeader.from_stream

    async def read_all(data: bytes) -> list[Any]:
        reader = BufferReader(data)
        packets: list[Any] = []
        append = packets.append
        while True:
            header = await header_from_stream(reader)
            if header is None:  # end of the stream
                return packets
            if header.packet_type in (RESERVED_0, RESERVED_15):
                raise AMQTTError(f"received reserved packet type {header.packet_type}")
            cls = packet_class(header)
            append(await cls.from_stream(reader, fixed_header=header))

    def decode(stream: Stream) -> list[Any]:
        coroutine = read_all(stream.data)
        try:
            coroutine.send(None)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        coroutine.close()
        raise RuntimeError("amqtt's reader suspended: the stream is not all in memory")

    def record(p: Any) -> Record:
        if isinstance(p, PublishPacket):
            vh = p.variable_header
            return (
                "PUBLISH",
                vh.topic_name,
                p.payload.data,
                p.qos,
                vh.packet_id,
                p.dup_flag,
                p.retain_flag,
            )
        return (names[p.fixed_header.packet_type], None, None, None, p.packet_id, None, None)

    def encode_all(packets: list[Any]) -> bytes:
        return b"".join([p.to_bytes() for p in packets])

    return Codec(
        "amqtt",
        _version("amqtt"),
        "MQTTFixedHeader.from_stream + packet_class(h).from_stream on BufferReader; to_bytes()",
        decode,
        record,
        None,
        encode_all,
    )


def paho_codec() -> Codec:
    # paho-mqtt 2.x has no public codec. Its reading path is Client._packet_read (framing
    # through the socket: recv(1) for the first byte, one per Remaining Length byte, then
    # the body) and, for the fields, the decoders of its internal module paho.mqtt._packet,
    # which Client._packet_handle calls. Here a Client reads from an in-memory socket and
    # its _packet_handle is cut down to those decoders plus the QoS 3 check of
    # _handle_publish, leaving out what the client then does (callbacks, acks to send,
    # in-flight bookkeeping).
    # Validates: Remaining Length at most 4 bytes, known types, QoS 3, non-empty topic,
    # body length (acks exactly 2 bytes). Does not: other fixed-header flags (DUP on QoS
    # 0, ack flags), UTF-8 (the topic stays bytes until the application reads it), U+0000,
    # wildcards, packet identifier 0.
    # paho.mqtt._packet is private: this may break with a later paho release.
    from paho.mqtt import _packet  # type: ignore[import-untyped, unused-ignore]
    from paho.mqtt.client import Client, MQTTv311  # type: ignore[import-untyped, unused-ignore]
    from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode  # type: ignore[import-untyped, unused-ignore]

    decoders = {
        0x30: _packet.decode_publish,
        0x40: _packet.decode_puback,
        0x50: _packet.decode_pubrec,
        0x60: _packet.decode_pubrel,
        0x70: _packet.decode_pubcomp,
    }
    publish_packet = _packet.PublishPacket  # what decode_publish (0x30) returns
    names = {0x40: "PUBACK", 0x50: "PUBREC", 0x60: "PUBREL", 0x70: "PUBCOMP"}
    success, protocol_error = MQTTErrorCode.MQTT_ERR_SUCCESS, MQTTErrorCode.MQTT_ERR_PROTOCOL

    class _Socket:
        def __init__(self, data: bytes) -> None:
            self.recv = io.BytesIO(data).read

        def close(self) -> None:
            pass

    class _DecodingClient(Client):  # type: ignore[misc, unused-ignore]  # Client is Any without paho
        def __init__(self) -> None:
            super().__init__(CallbackAPIVersion.VERSION2, protocol=MQTTv311)
            self.decoded: list[Any] = []

        def _packet_handle(self) -> MQTTErrorCode:
            command = self._in_packet["command"]
            decoder = decoders.get(command & 0xF0)
            if decoder is None:
                return protocol_error
            packet = decoder(command, self._in_packet["packet"], self._protocol)
            if isinstance(packet, publish_packet) and packet.qos == 3:
                return protocol_error
            self.decoded.append((command & 0xF0, packet))
            return success

    def decode(stream: Stream) -> list[Any]:
        client = _DecodingClient()
        socket = _Socket(stream.data)
        client._sock = socket  # type: ignore[assignment, unused-ignore]  # a stand-in socket
        read = client._packet_read
        while (rc := read()) == success:
            pass
        if rc != MQTTErrorCode.MQTT_ERR_CONN_LOST or socket.recv(1):  # EOF is "connection lost"
            raise RuntimeError(f"paho stopped with {rc!r}")
        return client.decoded

    def record(item: Any) -> Record:
        kind, p = item
        if kind == 0x30:
            return (
                "PUBLISH",
                p.topic.decode("utf-8"),
                bytes(p.payload),
                p.qos,
                p.mid if p.qos else None,
                p.dup,
                p.retain,
            )
        return (names[kind], None, None, None, p.mid, None, None)

    return Codec(
        "paho-mqtt",
        _version("paho-mqtt"),
        "Client._packet_read over an in-memory socket; _packet_handle = paho.mqtt._packet decoders",
        decode,
        record,
    )


def gmqtt_codec() -> Codec:
    # gmqtt 0.8 has no codec apart from its client. Its reading path is
    # MQTTProtocol._read_packet (framing of a received buffer into Package(cmd, body)),
    # then, per package, the MqttPackageHandler method for its type, which unpacks the
    # fields (struct) and reacts. Here a real MqttPackageHandler (MQTT 3.1.1) gets every
    # package through its own type-to-method cache (__get_handler__, as _handle_packet
    # does, without that method's debug log and clock read); what would leave the client
    # (acks to send, stored messages) goes to no-op callbacks and on_message appends to a
    # list. So this is the client's receive path, a little more than decoding: PUBREC
    # also builds the PUBREL the client stores, acks free packet identifiers.
    # Validates: Remaining Length at most 4 bytes, known types, body length (acks at least
    # 2 bytes). Drops with a log line: an empty topic; silently: QoS 3. Does not: other
    # fixed-header flags, the acks' Remaining Length, UTF-8 (the topic stays bytes),
    # U+0000, wildcards, packet identifier 0.
    from gmqtt.mqtt.constants import MQTTv311  # type: ignore[import-not-found, import-untyped, unused-ignore]
    from gmqtt.mqtt.handler import MqttPackageHandler  # type: ignore[import-not-found, import-untyped, unused-ignore]
    from gmqtt.mqtt.protocol import MQTTProtocol  # type: ignore[import-not-found, import-untyped, unused-ignore]
    from gmqtt.mqtt.utils import ConnectionState  # type: ignore[import-not-found, import-untyped, unused-ignore]

    read_packet = MQTTProtocol._read_packet
    names = {0x40: "PUBACK", 0x50: "PUBREC", 0x60: "PUBREL", 0x70: "PUBCOMP"}

    def nothing(*args: Any, **kwargs: Any) -> None:
        return None

    def make_handler(
        on_message: Callable[..., None], sent: Callable[..., None], removed: Callable[..., None]
    ) -> Any:
        handler = MqttPackageHandler(
            connack_event=asyncio.Event(),
            connection_lost_event=asyncio.Event(),
            connection_state=ConnectionState(protocol_version=MQTTv311),
            reconnect_callback=nothing,
            disconnect_callback=nothing,
            resend_qos_callback=nothing,
            clear_qos_callback=nothing,
            connect_properties={},
            subscriptions_getter=list,
            remove_message_callback=removed,
            store_message_callback=nothing,
            send_command_with_mid_callback=sent,
        )
        handler.on_message = on_message
        return handler

    class _Framer:  # what _read_packet needs of the protocol object
        def __init__(self) -> None:
            self.packages: list[Any] = []
            self._connection = self
            self.put_package = self.packages.append

    def frame(data: bytes) -> list[Any]:
        framer = _Framer()
        if read_packet(framer, data) != len(data):
            raise RuntimeError("gmqtt did not frame the whole stream")
        return framer.packages

    def decode(stream: Stream) -> list[Any]:
        messages: list[Any] = []
        handler = make_handler(lambda *message: messages.append(message), nothing, nothing)
        by_type = handler.__get_handler__
        packages = frame(stream.data)
        for package in packages:
            by_type(package.cmd)(package.cmd, package.data)
        return packages  # the count of packets; messages hold what on_message got

    def decode_records(stream: Stream) -> list[Record]:
        # For the check only: tie each package to what the handler made of it.
        events: list[tuple[str, Any]] = []
        handler = make_handler(
            lambda *message: events.append(("message", message)),
            lambda cmd, mid, dup, reason_code=0: events.append(("sent", mid)),
            lambda mid: events.append(("removed", mid)),
        )
        records: list[Record] = []
        for package in frame(stream.data):
            events.clear()
            handler._handle_packet(package.cmd, package.data)
            kind = package.cmd & 0xF0
            mids = [value for what, value in events if what in ("sent", "removed")]
            if kind == 0x30:
                messages = [value for what, value in events if what == "message"]
                ((topic, payload, qos, properties),) = messages
                mid = mids[0] if qos else None
                records.append(
                    (
                        "PUBLISH",
                        topic,
                        payload,
                        qos,
                        mid,
                        bool(properties["dup"]),
                        bool(properties["retain"]),
                    )
                )
            else:
                records.append((names[kind], None, None, None, mids[0], None, None))
        return records

    return Codec(
        "gmqtt",
        _version("gmqtt"),
        "MQTTProtocol._read_packet + MqttPackageHandler per-type methods (sends stubbed)",
        decode,
        None,
        records_of=decode_records,
    )


PEERS: dict[str, Callable[[], Codec]] = {
    "mqtt-codec": mqtt_codec_codec,
    "amqtt": amqtt_codec,
    "paho-mqtt": paho_codec,
    "gmqtt": gmqtt_codec,
}


# --- measuring ---------------------------------------------------------------------------


@dataclass
class Result:
    codec: str
    stream: str
    operation: str
    packets: int
    best_s: float
    median_s: float
    repeats: int
    ratio: float | None = None  # pubproof's rate / this rate

    @property
    def rate(self) -> float:
        return self.packets / self.best_s


def measure(
    run: Callable[[], Any],
    check: Callable[[Any], bool],
    budget: float,
    min_repeats: int,
    max_repeats: int,
) -> tuple[float, float, int]:
    """Best and median seconds of repeated ``run()``; at least ``min_repeats`` passes, then
    more while the time budget lasts. Every pass's result must pass ``check`` (outside the
    timing, as is the freeing of the result)."""
    times: list[float] = []
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        started = time.perf_counter()
        while len(times) < max_repeats and (
            len(times) < min_repeats or time.perf_counter() - started < budget
        ):
            t0 = time.perf_counter()
            out = run()
            t1 = time.perf_counter()
            times.append(t1 - t0)
            if not check(out):
                raise RuntimeError("a timed pass gave a wrong result")
            del out
            gc.collect()
    finally:
        if enabled:
            gc.enable()
    return min(times), statistics.median(times), len(times)


def verify_decode(codec: Codec, stream: Stream) -> str | None:
    """None if the codec decodes the stream to the same packets as pubproof, else why not."""
    try:
        records = codec.records(stream)
    except Exception as error:  # a peer may fail in its own way
        return f"decoding raised {type(error).__name__}: {error}"
    if len(records) != len(stream.records):
        return f"{len(records)} packets decoded, {len(stream.records)} expected"
    for index, (got, want) in enumerate(zip(records, stream.records, strict=True)):
        if got != want:
            return f"packet {index} differs: {got!r} != {want!r}"
    return None


def run(args: argparse.Namespace) -> dict[str, Any]:
    log(f"building streams of {args.packets:,} packets (seed {SEED})")
    streams = build_streams(args.packets)
    for s in streams:
        log(f"  {s.name}: {len(s.packets):,} packets, {len(s.data):,} bytes")

    codecs = [pubproof_codec()]
    peers: dict[str, dict[str, Any]] = {}
    for name in args.peers:
        try:
            codec = PEERS[name]()
        except ImportError as error:
            log(f"{name}: not installed ({error}); skipped")
            peers[name] = {"status": f"skipped: not installed ({error})"}
            continue
        peers[name] = {"version": codec.version, "how": codec.how, "status": "ok", "verified": {}}
        codecs.append(codec)

    # Check before timing: pubproof against the packets it encoded, peers against pubproof.
    for codec in list(codecs):
        for s in streams:
            problem = verify_decode(codec, s)
            if problem is None and codec.decode_chunked is not None:
                chunked = [_pubproof_record(p) for p in codec.decode_chunked(s)]
                problem = None if chunked == s.records else "chunked decoding differs"
            if problem is None and codec.encode is not None:
                encoded = codec.encode(codec.decode(s))
                problem = None if encoded == s.data else "encoding does not give back the stream"
            log(f"check {codec.name} on {s.name}: {'ok' if problem is None else problem}")
            if codec.name != "pubproof":
                peers[codec.name]["verified"][s.name] = problem or "ok"
            if problem is not None:
                if codec.name == "pubproof":
                    raise SystemExit(f"pubproof fails its own check: {problem}")
                peers[codec.name]["status"] = f"excluded: {problem}"
                codecs.remove(codec)
                break

    results: list[Result] = []
    for s in streams:
        for codec in codecs:
            count = len(s.packets)

            def decoded_all(out: list[Any], count: int = count) -> bool:
                return len(out) == count

            operations: list[tuple[str, Callable[[], Any], Callable[[Any], bool]]] = [
                ("decode", partial(codec.decode, s), decoded_all)
            ]
            if codec.decode_chunked is not None:
                operations.append(("decode/4KiB", partial(codec.decode_chunked, s), decoded_all))
            if codec.encode is not None:
                objects = codec.decode(s)
                operations.append(("encode", partial(codec.encode, objects), s.data.__eq__))
            for operation, fn, check in operations:
                log(f"timing {codec.name} {operation} on {s.name} ...")
                best, median, repeats = measure(
                    fn, check, args.budget, args.min_repeats, args.max_repeats
                )
                result = Result(codec.name, s.name, operation, count, best, median, repeats)
                results.append(result)
                log(
                    f"  {result.rate:,.0f} packets/s "
                    f"(best of {repeats}; median {count / median:,.0f})"
                )

    reference = {(r.stream, r.operation): r.rate for r in results if r.codec == "pubproof"}
    for r in results:
        ours = reference.get((r.stream, r.operation))
        r.ratio = ours / r.rate if ours else None

    small_ours = reference.get(("small", "decode"), 0.0)
    peer_small = [
        r
        for r in results
        if r.codec != "pubproof" and r.stream == "small" and r.operation == "decode"
    ]
    fastest = max(peer_small, key=lambda r: r.rate, default=None)
    targets = {
        "small_publish_decode_rate": small_ours,
        "rate_target": TARGET_RATE,
        "rate_met": small_ours >= TARGET_RATE,
        "fastest_peer": fastest.codec if fastest else None,
        "fastest_peer_rate": fastest.rate if fastest else None,
        "ratio_to_fastest_peer": small_ours / fastest.rate if fastest else None,
        "ratio_target": TARGET_RATIO,
        "ratio_met": (small_ours / fastest.rate >= TARGET_RATIO) if fastest else None,
    }
    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
        "seed": SEED,
        "chunk_bytes": CHUNK,
        "streams": {s.name: {"packets": len(s.packets), "bytes": len(s.data)} for s in streams},
        "peers": peers,
        "results": [
            {
                "codec": r.codec,
                "stream": r.stream,
                "operation": r.operation,
                "packets_per_s": round(r.rate),
                "best_s": r.best_s,
                "median_s": r.median_s,
                "repeats": r.repeats,
                "pubproof_ratio": None if r.ratio is None else round(r.ratio, 2),
            }
            for r in results
        ],
        "targets": targets,
    }


def table(report: dict[str, Any]) -> str:
    rows = [("codec", "stream", "operation", "packets/s", "pubproof/this")]
    for r in report["results"]:
        ratio = r["pubproof_ratio"]
        rows.append(
            (
                r["codec"],
                r["stream"],
                r["operation"],
                f"{r['packets_per_s']:,}",
                "-" if ratio is None else f"{ratio:.2f}x",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for index, row in enumerate(rows):
        lines.append(
            "  ".join(
                cell.ljust(w) if i < 3 else cell.rjust(w)
                for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            )
        )
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    t = report["targets"]
    lines.append("")
    lines.append(
        f"small PUBLISH decode: {t['small_publish_decode_rate']:,.0f} packets/s "
        f"(target {t['rate_target']:,}: {'met' if t['rate_met'] else 'NOT met'})"
    )
    if t["fastest_peer"]:
        met = "met" if t["ratio_met"] else "NOT met"
        lines.append(
            f"vs fastest peer ({t['fastest_peer']}, {t['fastest_peer_rate']:,.0f}/s): "
            f"{t['ratio_to_fastest_peer']:.2f}x (target {t['ratio_target']}x: {met})"
        )
    for name, peer in report["peers"].items():
        if peer["status"] != "ok":
            lines.append(f"{name}: {peer['status']}")
    lines.append(
        f"Python {report['python']} ({report['implementation']}, {report['machine']}); streams: "
        + ", ".join(
            f"{k} {v['packets']:,} packets / {v['bytes']:,} bytes"
            for k, v in report["streams"].items()
        )
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--packets", type=int, default=40_000, help="packets per stream (default 40,000)"
    )
    parser.add_argument(
        "--json", action="store_true", help="print a JSON document instead of the table"
    )
    parser.add_argument(
        "--peers",
        default=",".join(PEERS),
        help=f"comma-separated peers (default: all of {', '.join(PEERS)}; '' for none)",
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=1.5,
        help="seconds of timed passes per measurement (default 1.5)",
    )
    parser.add_argument(
        "--min-repeats", type=int, default=3, help="timed passes at least (default 3)"
    )
    parser.add_argument(
        "--max-repeats", type=int, default=25, help="timed passes at most (default 25)"
    )
    args = parser.parse_args(argv)
    args.peers = [p for p in args.peers.split(",") if p]
    unknown = [p for p in args.peers if p not in PEERS]
    if unknown:
        parser.error(f"unknown peer(s) {', '.join(unknown)}; known: {', '.join(PEERS)}")
    if args.packets < 1:
        parser.error("--packets must be at least 1")

    started = time.perf_counter()
    report = run(args)
    report["wall_s"] = round(time.perf_counter() - started, 1)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(table(report))
    log(f"done in {report['wall_s']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
