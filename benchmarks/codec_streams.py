"""The streams of ``bench_codec.py``: seeded workloads of MQTT 3.1.1 and 5.0 packets, each
stream's bytes (the 5.0 ones written three ways, which must agree), its chunks and the
records every codec's output is held against. The streams themselves are described in
``bench_codec.py``'s docstring.

Imported by ``bench_codec.py``, which puts ``interop/`` (``peer_codecs``) on the path.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from peer_codecs import AnyRecord, Record, record_of_p

from pubproof.model import wire as model_wire
from pubproof.model.editions import Edition, Limits
from pubproof.model.properties50 import ACK_ORDER, BY_IDENTIFIER, PUBLISH_ORDER, DataType
from pubproof.model.wire_rules import ACK_REASON_CODES
from pubproof.reference import (
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

SEED = 20_240_611
CHUNK = 4096
#: The receiver's Topic Alias Maximum for the 5.0 streams (aliases 1 to 16 are used).
TOPIC_ALIAS_MAXIMUM = 16
LIMITS5 = Limits(topic_alias_maximum=TOPIC_ALIAS_MAXIMUM)


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
