#!/usr/bin/env python
"""Throughput of pubproof's reference codec, against MQTT codecs (PyPI, npm) on the same bytes.

    python benchmarks/bench_codec.py [--packets N] [--json] [--peers NAME,...] [--streams NAME,...]

Four streams are built from a seeded random generator, so every run decodes the same bytes:

``mix``
    A realistic MQTT 3.1.1 session: ~85% small PUBLISH (QoS 0/1/2, topics such as
    ``sensors/room12/temp``, payloads of 2-64 bytes), ~2% PUBLISH with a large payload
    (4-64 KiB), the rest PUBACK/PUBREC/PUBREL/PUBCOMP.
``small``
    Small PUBLISH packets only: the target of the performance issue (pubproof decodes at
    least 500,000 of them per second on one core with full validation, and at least 3x as
    many as the fastest Python peer).
``small5``
    MQTT 5.0 small PUBLISH packets with two or three properties each: a Topic Alias (sent
    with its topic name, which sets the mapping) or a Message Expiry Interval, a User
    Property, and half the time a Content Type. The target of "MQTT 5.0, part 1": at least
    mqtt-packet's rate, and 3x the fastest Python peer, with full validation.
``small5u``
    ``small5`` with one more property on every packet, a Correlation Data holding the
    packet's sequence number (as a requester numbers its requests), so that no two property
    sections are alike: the reference decoder remembers the property sections it has judged
    (a sender repeats them), and this stream shows its rate when nothing repeats.
``mix5``
    MQTT 5.0 like ``mix``: the PUBLISH packets of ``small5`` (and 2% large ones), the
    acknowledgements with Reason Codes (70% success, mostly in the two-byte short form),
    about a third of the failures with a Reason String, a few with a User Property.

The 5.0 streams are written by a small builder in this file (``encode5``, property order
as the wire contract gives it), by the model's encoder and by the reference's: the three
must give the same bytes, or the run stops. They are decoded with a Topic Alias
Maximum of 16 (the receiver's limit; the default, 0, accepts no alias).

Operations: ``decode`` (the whole stream is available, then every packet is taken out),
``decode/4KiB`` (pubproof only: the stream arrives in 4 KiB chunks, each drained before the
next, as from a socket) and ``encode`` (packet objects to the bytes of the stream).

Every figure is packets per second of the best of several timed passes over the whole
stream (``time.perf_counter``; the garbage collector is off while timing, as ``timeit``
does). The ratio column is pubproof's rate divided by the row's rate for the same stream
and operation (so a peer's row reads "pubproof is N times faster"). Before any timing, each
peer's output is compared field by field (type, topic, payload, QoS, packet id, DUP,
RETAIN; in 5.0 also each acknowledgement's Reason Code and every packet's properties) with
pubproof's on the whole stream: a peer that decodes something else is not timed.

Peers are used through their own packet-reading path, in the most favourable honest way
(all bytes already in memory, no sockets, no logging); see the comment on each for what it
validates (the Python peers are in ``interop/peer_codecs.py``, which the conformance
matrix's corpus run shares; mqtt-packet's is ``mqtt_packet_codec`` here). A peer that is
not installed is skipped with a note; the pinned versions are in the ``bench`` extra of
pyproject.toml (``pip install -e '.[bench]'``), except mqtt-codec, whose 2019 sdist needs
``setuptools<58`` to build, and mqtt-packet, the npm package, which runs in node from
``benchmarks/peers`` (``npm ci`` there; see ``benchmarks/README.md``).
mqtt-packet is timed inside node (after untimed warm-up passes, best of the same number of
passes, each a fresh parser fed the whole stream), and its packets come back to Python as
JSON for the check.
Only paho-mqtt, gmqtt and mqtt-packet parse 5.0 properties; amqtt and mqtt-codec decode
3.1.1 only.

Progress goes to stderr; the table (or, with ``--json``, a JSON document) to stdout.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from pubproof.model import wire as model_wire
from pubproof.model.editions import Edition, Limits
from pubproof.model.properties50 import ACK_ORDER, BY_IDENTIFIER, PUBLISH_ORDER, DataType
from pubproof.model.wire_rules import ACK_REASON_CODES
from pubproof.reference import (
    Decoder,
    Packet,
    PubAck,
    PubComp,
    Publish,
    PubRec,
    PubRel,
    encode,
    from_p,
    to_p,
)

# the codecs pubproof is compared with live in interop/ (the conformance matrix runs the
# vector corpus against them too); interop/ is not a package, so it is imported by its path
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
from peer_codecs import (
    AnyRecord,
    Codec,
    Record,
    Record5,
    amqtt_codec,
    gmqtt_codec,
    mqtt_codec_codec,
    paho_codec,
    record_of_p,
    version_of,
)
from peer_codecs import Stream as AnyStream

SEED = 20_240_611
CHUNK = 4096
#: The issue's targets for the small-PUBLISH stream.
TARGET_RATE = 500_000
TARGET_RATIO = 3.0
#: "MQTT 5.0, part 1": small 5.0 PUBLISH at least at mqtt-packet's rate, and 3x the
#: fastest Python peer.
TARGET_RATIO5_NODE = 1.0
TARGET_RATIO5_PYTHON = 3.0
#: The receiver's Topic Alias Maximum for the 5.0 streams (aliases 1 to 16 are used).
TOPIC_ALIAS_MAXIMUM = 16
LIMITS5 = Limits(topic_alias_maximum=TOPIC_ALIAS_MAXIMUM)
PEERS_DIR = Path(__file__).resolve().parent / "peers"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --- the workload ------------------------------------------------------------------------

_AREAS = ("sensors", "home", "plant", "fleet", "devices", "lab")
_UNITS = ("room", "line", "truck", "node", "floor", "zone")
_METRICS = ("temp", "humidity", "co2", "pressure", "state", "battery", "rssi", "lux", "power")
_MEASURES = ("celsius", "percent", "ppm", "hPa", "dBm", "lx", "W")
_CONTENT_TYPES = ("application/json", "application/cbor", "application/octet-stream")


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

    # MQTT 5.0: packets in the P form of pubproof.model.trace (what ``pubproof decode
    # --edition 5.0`` prints), which both encoders can take.

    def publish5(self, payload_size: int) -> dict[str, Any]:
        rng = self.rng
        packet = to_p(self.publish(payload_size))
        properties: dict[str, Any] = {}
        if rng.random() < 0.5:
            # A Topic Alias with its topic name sets the mapping: every packet carries its
            # topic, so a peer that resolves aliases (gmqtt) reports what the others do.
            properties["topic_alias"] = rng.randint(1, TOPIC_ALIAS_MAXIMUM)
        else:
            properties["message_expiry_interval"] = rng.choice((30, 60, 300, 3600, 86_400))
        properties["user_properties"] = [["unit", rng.choice(_MEASURES)]]
        if rng.random() < 0.5:
            properties["content_type"] = rng.choice(_CONTENT_TYPES)
        return {**packet, "properties": properties}

    def small_publish5(self) -> dict[str, Any]:
        return self.publish5(self.rng.randint(2, 64))

    def ack5(self) -> dict[str, Any]:
        rng = self.rng
        kind = rng.choices(("PUBACK", "PUBREC", "PUBREL", "PUBCOMP"), weights=(40, 20, 20, 20))[0]
        codes = ACK_REASON_CODES[kind]
        code = 0 if rng.random() < 0.7 else rng.choice([c for c in codes if c])
        properties: dict[str, Any] = {}
        if code and rng.random() < 0.35:
            properties["reason_string"] = codes[code]
        if rng.random() < 0.03:
            properties["user_properties"] = [["trace", f"{rng.getrandbits(32):08x}"]]
        packet_id = rng.randint(1, 0xFFFF)
        return {"type": kind, "packet_id": packet_id, "reason_code": code, "properties": properties}

    def mix5(self, count: int) -> list[dict[str, Any]]:
        packets: list[dict[str, Any]] = []
        for _ in range(count):
            draw = self.rng.random()
            if draw < 0.85:
                packets.append(self.small_publish5())
            elif draw < 0.87:
                packets.append(self.publish5(self.rng.randint(4096, 65536)))
            else:
                packets.append(self.ack5())
        return packets


# --- a small MQTT 5.0 stream builder -----------------------------------------------------
# Independent of pubproof's encoders (written from the wire contract, docs/guides/mqtt5-wire.md,
# before they existed), so that they check each other on every run; the properties'
# identifiers, data types and order are read from Table 2-4 (pubproof.model.properties50).

_ACK_FIRST_BYTE = {"PUBACK": 0x40, "PUBREC": 0x50, "PUBREL": 0x62, "PUBCOMP": 0x70}


def _vbi(value: int) -> bytes:
    out = bytearray()
    while True:
        value, digit = divmod(value, 128)
        out.append(digit | 0x80 if value else digit)
        if not value:
            return bytes(out)


def _string(text: str) -> bytes:
    raw = text.encode("utf-8")
    return len(raw).to_bytes(2, "big") + raw


def _value5(data_type: DataType, value: Any) -> bytes:
    """A property's value (in P's form) in its data type (section 1.5)."""
    if data_type.size is not None:  # Byte, Two and Four Byte Integers: big-endian
        return int.to_bytes(value, data_type.size, "big")
    if data_type is DataType.VARIABLE_BYTE_INTEGER:
        return _vbi(value)
    if data_type is DataType.BINARY_DATA:  # P writes it as hex
        data = bytes.fromhex(value)
        return len(data).to_bytes(2, "big") + data
    if data_type is DataType.UTF8_STRING_PAIR:
        name, text = value
        return _string(name) + _string(text)
    return _string(value)


def _properties5(properties: Mapping[str, Any], packet: str, order: Sequence[int]) -> bytes:
    """The property section of ``packet`` (Property Length first), in the encoders' order
    ``order``; the identifiers and data types are Table 2-4's (model.properties50)."""
    rows = [BY_IDENTIFIER[identifier] for identifier in order]
    unknown = set(properties) - {row.key for row in rows}
    if unknown:
        raise ValueError(f"{packet} has no propert(ies) {sorted(unknown)}")
    out = bytearray()
    for row in rows:
        if row.key in properties:
            value = properties[row.key]
            for one in value if packet in row.repeatable_in else (value,):
                out.append(row.identifier)
                out += _value5(row.type, one)
    return _vbi(len(out)) + bytes(out)


def encode5(packet: Mapping[str, Any]) -> bytes:
    """The shortest MQTT 5.0 encoding of a packet given in the P form."""
    properties = packet.get("properties", {})
    if packet["type"] == "PUBLISH":
        qos = packet["qos"]
        first = 0x30 | qos << 1 | (8 if packet["dup"] else 0) | (1 if packet["retain"] else 0)
        body = _string(packet["topic"])
        if qos:
            body += packet["packet_id"].to_bytes(2, "big")
        body += _properties5(properties, "PUBLISH", PUBLISH_ORDER)
        body += bytes.fromhex(packet["payload_hex"])
    else:
        first = _ACK_FIRST_BYTE[packet["type"]]
        body = packet["packet_id"].to_bytes(2, "big")
        code = packet.get("reason_code", 0)
        if code or properties:
            body += bytes((code,))
        if properties:
            body += _properties5(properties, packet["type"], ACK_ORDER)
    return bytes((first,)) + _vbi(len(body)) + body


@dataclass
class Stream:
    name: str
    packets: list[Any]  # reference packets (3.1.1) or P dicts (5.0)
    edition: Edition = Edition.V311
    data: bytes = b""
    chunks: list[bytes] = field(default_factory=list)
    records: list[AnyRecord] = field(default_factory=list)
    encoded_by: str = "pubproof"

    @property
    def v5(self) -> bool:
        return self.edition is Edition.V50

    def __post_init__(self) -> None:
        if self.v5:
            self.data = b"".join(encode5(p) for p in self.packets)
            # The model (the executable specification) must write the same bytes.
            if b"".join(model_wire.encode(p, Edition.V50) for p in self.packets) != self.data:
                raise SystemExit(f"{self.name}: pubproof's model and encode5 differ")
            self.encoded_by = "encode5 (= the model's encoder)"
            try:
                ours = b"".join(encode(from_p(p), edition=Edition.V50) for p in self.packets)
            except Exception as error:  # a reference without 5.0 yet
                log(f"  {self.name}: pubproof has no 5.0 encoder yet ({error}); encode5 only")
            else:
                if ours != self.data:
                    raise SystemExit(f"{self.name}: pubproof's 5.0 encoder and encode5 differ")
                self.encoded_by = "pubproof (= encode5 = the model's encoder)"
            self.records = [record_of_p(p, True) for p in self.packets]
        else:
            self.data = b"".join(encode(p) for p in self.packets)
            self.records = [_pubproof_record(p) for p in self.packets]
        self.chunks = [self.data[i : i + CHUNK] for i in range(0, len(self.data), CHUNK)]


STREAMS = ("mix", "small", "mix5", "small5", "small5u")


def _own(stream: AnyStream) -> Stream:
    """A codec's stream as the benchmark's own (its chunks and expected records), where a
    codec needs them: the codecs are called with the benchmark's streams only."""
    assert isinstance(stream, Stream)
    return stream


def build_streams(count: int, names: Sequence[str] = STREAMS) -> list[Stream]:
    makers: dict[str, Callable[[], Stream]] = {
        "mix": lambda: Stream("mix", _Workload(SEED).mix(count)),
        "small": lambda: Stream("small", _small(_Workload(SEED + 1), count)),
        "mix5": lambda: Stream("mix5", _Workload(SEED + 2).mix5(count), Edition.V50),
        "small5": lambda: Stream("small5", _small5(_Workload(SEED + 3), count), Edition.V50),
        "small5u": lambda: Stream(
            "small5u", _small5_unique(_Workload(SEED + 3), count), Edition.V50
        ),
    }
    return [makers[name]() for name in names]


def _small(workload: _Workload, count: int) -> list[Packet]:
    return [workload.small_publish() for _ in range(count)]


def _small5(workload: _Workload, count: int) -> list[dict[str, Any]]:
    return [workload.small_publish5() for _ in range(count)]


def _small5_unique(workload: _Workload, count: int) -> list[dict[str, Any]]:
    packets = _small5(workload, count)
    for number, packet in enumerate(packets):
        packet["properties"]["correlation_data_hex"] = number.to_bytes(8, "big").hex()
    return packets


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


def pubproof_codec() -> Codec:
    # Full validation, every rule of the edition with its default readings. 3.1.1: first
    # byte (reserved and out-of-scope types, QoS 3, DUP on QoS 0, acknowledgement flags),
    # Remaining Length (at most 4 bytes; exactly 2 for acknowledgements), topic (fits in
    # the packet, not empty, well-formed UTF-8, no U+0000, no wildcards), packet
    # identifier (room for it, not 0), and the packet objects are fully typed. 5.0 adds
    # the shortest Variable Byte Integers, the acknowledgements' Reason Codes against
    # their tables, and every property: identifier valid for the packet type, bounds,
    # strings (UTF-8, U+0000, Response Topic wildcards), once-only properties, values
    # (Topic Alias 1 to the Topic Alias Maximum, Payload Format Indicator, Subscription
    # Identifier not 0), the empty topic without an alias, the payload's UTF-8 when the
    # Payload Format Indicator says so (docs/guides/mqtt5-wire.md).
    def decoder_for(stream: AnyStream) -> Decoder:
        if stream.v5:
            return Decoder(edition=Edition.V50, limits=LIMITS5)  # type: ignore[call-arg, unused-ignore]
        return Decoder()

    def decode(stream: AnyStream) -> list[Any]:
        decoder = decoder_for(stream)
        decoder.feed(stream.data)
        packets = list(decoder)
        decoder.close()
        return packets

    def decode_chunked(stream: AnyStream) -> list[Any]:
        decoder = decoder_for(stream)
        packets: list[Any] = []
        feed, take = decoder.feed, packets.extend
        for chunk in _own(stream).chunks:
            feed(chunk)
            take(decoder)
        decoder.close()
        return packets

    def encode_all(packets: list[Any], edition: Edition) -> bytes:
        if edition is Edition.V50:
            return b"".join([encode(p, edition=edition) for p in packets])
        return b"".join([encode(p) for p in packets])

    def record5(packet: Any) -> Record5:
        return record_of_p(to_p(packet), True)  # type: ignore[return-value]

    return Codec(
        "pubproof",
        version_of("pubproof"),
        "reference.Decoder: feed the stream, iterate; reference.encode per packet",
        decode,
        _pubproof_record,
        decode_chunked,
        encode_all,
        editions=frozenset({Edition.V311, Edition.V50}),
        record5=record5,
    )


def mqtt_packet_codec() -> Codec:
    # mqtt-packet (npm), the codec of MQTT.js and Aedes, in node: its streaming Parser
    # (mqtt.parser({protocolVersion}), 4 for 3.1.1, 5 for 5.0) fed the whole stream at
    # once, a 'packet' listener keeping every packet. Run by benchmarks/peers/
    # mqtt_packet_bench.js, which reads the stream from a file, times the passes itself
    # (process.hrtime; node's GC stays on) and gives the packets back as JSON for the
    # check.
    # Validates: fixed-header flags of the acks (and PUBREL's), QoS 3, Remaining Length
    # at most 4 bytes, the topic's length prefix within the packet. 5.0: a property
    # identifier it does not know (not: whether it belongs to the packet type), the
    # acknowledgements' Reason Codes against their tables. Does not: DUP on QoS 0, empty
    # topic, UTF-8 (decoded with replacement characters), U+0000, wildcards, packet
    # identifier 0, the acks' Remaining Length (2 or more, the rest ignored in 3.1.1),
    # duplicate or out-of-range properties, property values running past the section.
    node = shutil.which("node")
    script = PEERS_DIR / "mqtt_packet_bench.js"
    manifest = PEERS_DIR / "node_modules" / "mqtt-packet" / "package.json"
    if node is None:
        raise ImportError("no node on PATH")
    if not manifest.exists():
        raise ImportError(f"no mqtt-packet in {PEERS_DIR} (run npm ci there)")
    version = json.loads(manifest.read_text())["version"]
    node_version = subprocess.run(
        [node, "--version"], capture_output=True, text=True, check=False
    ).stdout.strip()
    files: dict[str, Path] = {}
    # the closures below keep it alive; it is removed when they go
    workdir = tempfile.TemporaryDirectory(prefix="bench-mqtt-packet-")

    def file_of(stream: AnyStream) -> Path:
        path = files.get(stream.name)
        if path is None:
            path = files[stream.name] = Path(workdir.name) / f"{stream.name}.bin"
            path.write_bytes(stream.data)
        return path

    def run_node(*args: object) -> Any:
        done = subprocess.run(
            [node, str(script), *map(str, args)],
            capture_output=True,
            check=False,
            env={**os.environ, "DEBUG": ""},  # mqtt-packet's debug logging off
        )
        if done.returncode:
            raise RuntimeError(f"node failed: {done.stderr.decode(errors='replace')[-500:]}")
        return json.loads(done.stdout)

    def records_of(stream: AnyStream) -> list[AnyRecord]:
        out = run_node("records", file_of(stream), 5 if stream.v5 else 4)
        records: list[AnyRecord] = []
        for p in out["packets"]:
            if stream.v5:
                # back from mqtt-packet's grouping by name to [name, value] pairs
                props = dict(p["properties"])
                if "user_properties" in props:
                    props["user_properties"] = [
                        [name, value]
                        for name, values in props["user_properties"]
                        for value in values
                    ]
                p["properties"] = props
            records.append(record_of_p(p, stream.v5))
        return records

    def timer(
        stream: AnyStream, budget: float, min_repeats: int, max_repeats: int
    ) -> tuple[float, float, int]:
        out = run_node(
            "time",
            file_of(stream),
            5 if stream.v5 else 4,
            len(_own(stream).records),
            budget,
            min_repeats,
            max_repeats,
        )
        return out["best_s"], out["median_s"], out["repeats"]

    return Codec(
        "mqtt-packet",
        version,
        "node: mqtt.parser({protocolVersion}).parse(whole stream), 'packet' events kept",
        None,
        None,
        records_of=records_of,
        editions=frozenset({Edition.V311, Edition.V50}),
        timer=timer,
        runtime=f"node {node_version}",
    )


PEERS: dict[str, Callable[[], Codec]] = {
    "mqtt-codec": mqtt_codec_codec,
    "amqtt": amqtt_codec,
    "paho-mqtt": paho_codec,
    "gmqtt": gmqtt_codec,
    "mqtt-packet": mqtt_packet_codec,
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
    runtime: str = "Python"
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


def check(codec: Codec, stream: Stream) -> str | None:
    """``verify_decode``, then pubproof's chunked decoding and every encoder's round trip."""
    problem = verify_decode(codec, stream)
    if problem is None and codec.decode_chunked is not None:
        to_record = codec.record5 if stream.v5 else codec.record
        assert to_record is not None
        chunked = [to_record(p) for p in codec.decode_chunked(stream)]
        problem = None if chunked == stream.records else "chunked decoding differs"
    if problem is None and codec.encode is not None and codec.decode is not None:
        encoded = codec.encode(codec.decode(stream), stream.edition)
        problem = None if encoded == stream.data else "encoding does not give back the stream"
    return problem


def _targets5(
    results: list[Any], reference: dict[tuple[str, str], float], stream: str
) -> dict[str, Any]:
    """The 5.0 goals measured on one small-PUBLISH stream."""
    ours = reference.get((stream, "decode"), 0.0)
    node = next((r for r in results if r.codec == "mqtt-packet" and r.stream == stream), None)
    fastest = _fastest(results, stream, "Python")
    return {
        "stream": stream,
        "small5_publish_decode_rate": ours,
        "mqtt_packet_rate": node.rate if node else None,
        "ratio_to_mqtt_packet": ours / node.rate if node else None,
        "ratio_to_mqtt_packet_target": TARGET_RATIO5_NODE,
        "ratio_to_mqtt_packet_met": ours / node.rate >= TARGET_RATIO5_NODE if node else None,
        "fastest_python_peer": fastest.codec if fastest else None,
        "fastest_python_peer_rate": fastest.rate if fastest else None,
        "ratio_to_fastest_python_peer": ours / fastest.rate if fastest else None,
        "ratio_to_fastest_python_peer_target": TARGET_RATIO5_PYTHON,
        "ratio_to_fastest_python_peer_met": (
            ours / fastest.rate >= TARGET_RATIO5_PYTHON if fastest else None
        ),
    }


def _fastest(results: list[Result], stream: str, runtime: str | None) -> Result | None:
    peers = [
        r
        for r in results
        if r.codec != "pubproof"
        and r.stream == stream
        and r.operation == "decode"
        and (runtime is None or r.runtime == runtime)
    ]
    return max(peers, key=lambda r: r.rate, default=None)


def run(args: argparse.Namespace) -> dict[str, Any]:
    log(f"building streams of {args.packets:,} packets (seed {SEED})")
    streams = build_streams(args.packets, args.streams)
    for s in streams:
        log(f"  {s.name}: {len(s.packets):,} packets, {len(s.data):,} bytes ({s.encoded_by})")

    codecs = [pubproof_codec()]
    peers: dict[str, dict[str, Any]] = {}
    for name in args.peers:
        try:
            codec = PEERS[name]()
        except ImportError as error:
            log(f"{name}: not installed ({error}); skipped")
            peers[name] = {"status": f"skipped: not installed ({error})"}
            continue
        peers[name] = {
            "version": codec.version,
            "runtime": codec.runtime,
            "how": codec.how,
            "status": "ok",
            "verified": {},
        }
        codecs.append(codec)

    # Check before timing: pubproof against the packets it encoded, peers against pubproof,
    # stream by stream (a peer is timed on the streams it decodes right).
    usable: dict[str, list[Stream]] = {}
    for codec in codecs:
        usable[codec.name] = []
        for s in streams:
            if s.edition not in codec.editions:
                problem: str | None = f"not run: no MQTT {s.edition.value} decoding"
            else:
                problem = check(codec, s)
            log(f"check {codec.name} on {s.name}: {'ok' if problem is None else problem}")
            if codec.name == "pubproof":
                if problem is not None:
                    raise SystemExit(f"pubproof fails its own check on {s.name}: {problem}")
            else:
                peers[codec.name]["verified"][s.name] = problem or "ok"
            if problem is None:
                usable[codec.name].append(s)
        if codec.name != "pubproof":
            left_out = {
                k: v
                for k, v in peers[codec.name]["verified"].items()
                if v != "ok" and not v.startswith("not run")
            }
            if left_out:
                peers[codec.name]["status"] = "; ".join(
                    f"excluded from {k}: {v}" for k, v in left_out.items()
                )

    results: list[Result] = []
    for s in streams:
        for codec in codecs:
            if s not in usable[codec.name]:
                continue
            count = len(s.packets)
            if codec.timer is not None:
                log(f"timing {codec.name} decode on {s.name} ({codec.runtime}) ...")
                best, median, repeats = codec.timer(
                    s, args.budget, args.min_repeats, args.max_repeats
                )
                result = Result(
                    codec.name, s.name, "decode", count, best, median, repeats, codec.runtime
                )
                results.append(result)
                log(
                    f"  {result.rate:,.0f} packets/s "
                    f"(best of {repeats}; median {count / median:,.0f})"
                )
                continue
            assert codec.decode is not None

            def decoded_all(out: list[Any], count: int = count) -> bool:
                return len(out) == count

            operations: list[tuple[str, Callable[[], Any], Callable[[Any], bool]]] = [
                ("decode", partial(codec.decode, s), decoded_all)
            ]
            if codec.decode_chunked is not None:
                operations.append(("decode/4KiB", partial(codec.decode_chunked, s), decoded_all))
            if codec.encode is not None:
                objects = codec.decode(s)
                operations.append(
                    ("encode", partial(codec.encode, objects, s.edition), s.data.__eq__)
                )
            for operation, fn, is_right in operations:
                log(f"timing {codec.name} {operation} on {s.name} ...")
                best, median, repeats = measure(
                    fn, is_right, args.budget, args.min_repeats, args.max_repeats
                )
                result = Result(
                    codec.name, s.name, operation, count, best, median, repeats, codec.runtime
                )
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
    fastest = _fastest(results, "small", "Python")
    targets: dict[str, Any] = {
        "small_publish_decode_rate": small_ours,
        "rate_target": TARGET_RATE,
        "rate_met": small_ours >= TARGET_RATE,
        "fastest_peer": fastest.codec if fastest else None,
        "fastest_peer_rate": fastest.rate if fastest else None,
        "ratio_to_fastest_peer": small_ours / fastest.rate if fastest else None,
        "ratio_target": TARGET_RATIO,
        "ratio_met": (small_ours / fastest.rate >= TARGET_RATIO) if fastest else None,
    }
    targets5 = _targets5(results, reference, "small5")
    targets5u = _targets5(results, reference, "small5u")
    return {
        "targets5_unique_sections": targets5u,
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
        "seed": SEED,
        "chunk_bytes": CHUNK,
        "streams": {
            s.name: {
                "edition": s.edition.value,
                "packets": len(s.packets),
                "bytes": len(s.data),
                "encoded_by": s.encoded_by,
            }
            for s in streams
        },
        "peers": peers,
        "results": [
            {
                "codec": r.codec,
                "runtime": r.runtime,
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
        "targets5": targets5,
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
    if t["small_publish_decode_rate"]:
        lines.append(
            f"small PUBLISH decode: {t['small_publish_decode_rate']:,.0f} packets/s "
            f"(target {t['rate_target']:,}: {'met' if t['rate_met'] else 'NOT met'})"
        )
    if t["fastest_peer"]:
        met = "met" if t["ratio_met"] else "NOT met"
        lines.append(
            f"  vs fastest Python peer ({t['fastest_peer']}, {t['fastest_peer_rate']:,.0f}/s): "
            f"{t['ratio_to_fastest_peer']:.2f}x (target {t['ratio_target']}x: {met})"
        )
    for t5, label in (
        (report["targets5"], "MQTT 5.0 small PUBLISH decode"),
        (report["targets5_unique_sections"], "  the same, no property section repeated (small5u)"),
    ):
        if t5["small5_publish_decode_rate"]:
            lines.append(f"{label}: {t5['small5_publish_decode_rate']:,.0f} packets/s")
        if t5["mqtt_packet_rate"]:
            met = "met" if t5["ratio_to_mqtt_packet_met"] else "NOT met"
            lines.append(
                f"  vs mqtt-packet ({t5['mqtt_packet_rate']:,.0f}/s): "
                f"{t5['ratio_to_mqtt_packet']:.2f}x (target "
                f"{t5['ratio_to_mqtt_packet_target']}x: {met})"
            )
        if t5["fastest_python_peer"]:
            met = "met" if t5["ratio_to_fastest_python_peer_met"] else "NOT met"
            lines.append(
                f"  vs fastest Python peer ({t5['fastest_python_peer']}, "
                f"{t5['fastest_python_peer_rate']:,.0f}/s): "
                f"{t5['ratio_to_fastest_python_peer']:.2f}x "
                f"(target {t5['ratio_to_fastest_python_peer_target']}x: {met})"
            )
    for name, peer in report["peers"].items():
        if peer["status"] != "ok":
            lines.append(f"{name}: {peer['status']}")
        if "runtime" in peer and peer["runtime"] != "Python":
            lines.append(f"{name} {peer['version']} runs in {peer['runtime']}")
    lines.append(
        f"Python {report['python']} ({report['implementation']}, {report['machine']}); streams: "
        + ", ".join(
            f"{k} ({v['edition']}) {v['packets']:,} packets / {v['bytes']:,} bytes"
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
        "--streams",
        default=",".join(STREAMS),
        help=f"comma-separated streams (default: all of {', '.join(STREAMS)})",
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
    args.streams = [s for s in args.streams.split(",") if s]
    unknown = [s for s in args.streams if s not in STREAMS]
    if unknown or not args.streams:
        parser.error(f"unknown stream(s) {', '.join(unknown)}; known: {', '.join(STREAMS)}")
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
