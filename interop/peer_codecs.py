"""The MQTT codecs pubproof is compared with, read through their own packet-reading paths:
the parsers inside paho-mqtt, gmqtt, amqtt and mqtt-codec (Python, in this process), each a
:class:`Codec` (``paho_codec()``, ...) that decodes a :class:`Stream` of bytes into the
codec's own packet objects and, for the comparison, into :data:`Record` tuples every codec
must agree on.

Two users, one copy: the benchmark (``benchmarks/bench_codec.py``, which times them against
pubproof's reference codec and adds mqtt-packet in node) and the conformance matrix's run of
the vector corpus (``interop/codec_corpus.py``, which asks each what it makes of every
decode vector). Both import this file from ``interop/`` by its path (``interop/`` is not a
package: these are adapters of other projects' code, not part of pubproof). The comment on
each codec says what its path validates and what it does not.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Protocol

from pubproof.model.editions import Edition

Record = tuple[str, str | None, bytes | None, int | None, int | None, bool | None, bool | None]
"""A packet as every codec must agree on it: (type, topic, payload, qos, packet id, dup,
retain); the PUBLISH-only fields are None for an acknowledgement."""
Props = tuple[tuple[str, Any], ...]
Record5 = tuple[
    str,
    str | None,
    bytes | None,
    int | None,
    int | None,
    bool | None,
    bool | None,
    int | None,
    Props,
]
"""An MQTT 5.0 packet: a ``Record`` and the Reason Code (None for a PUBLISH) and the
properties in the canonical form of ``canonical_properties``."""
AnyRecord = Record | Record5


def canonical_properties(properties: Mapping[str, Any] | None) -> Props:
    """Properties as every codec can give them: sorted by key; the User Properties grouped
    by name, each name's values in the order sent (mqtt-packet keeps no order across
    names), the Subscription Identifiers as a tuple."""
    items: list[tuple[str, Any]] = []
    for key, value in sorted((properties or {}).items()):
        if key == "user_properties":
            grouped: dict[str, list[str]] = {}
            for name, text in value:
                grouped.setdefault(name, []).append(text)
            value = tuple((name, tuple(texts)) for name, texts in sorted(grouped.items()))
        elif key == "subscription_identifiers":
            value = tuple(value)
        items.append((key, value))
    return tuple(items)


def record_of_p(packet: Mapping[str, Any], v5: bool) -> AnyRecord:
    """The record of a packet in the P form (5.0 when ``v5``)."""
    if packet["type"] == "PUBLISH":
        record: Record = (
            "PUBLISH",
            packet["topic"],
            bytes.fromhex(packet["payload_hex"]),
            packet["qos"],
            packet["packet_id"],
            packet["dup"],
            packet["retain"],
        )
        if v5:
            return (*record, None, canonical_properties(packet.get("properties")))
        return record
    record = (packet["type"], None, None, None, packet["packet_id"], None, None)
    if v5:
        code = packet.get("reason_code", 0)
        return (*record, code, canonical_properties(packet.get("properties")))
    return record


class Stream(Protocol):
    """What a codec decodes: the bytes of whole packets, in one edition (the benchmark's
    streams, a corpus vector)."""

    @property
    def name(self) -> str: ...

    @property
    def data(self) -> bytes: ...

    @property
    def v5(self) -> bool: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Bytes:
    """A :class:`Stream` of given bytes (one corpus vector)."""

    name: str
    data: bytes
    v5: bool


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
    """A codec: the callables that decode (and encode) a stream its own way."""

    name: str
    version: str
    how: str
    decode: Callable[[Stream], list[Any]] | None  # None: timed outside Python (``timer``)
    record: Callable[[Any], Record] | None  # one decoded object -> Record, if it can say
    decode_chunked: Callable[[Stream], list[Any]] | None = None
    encode: Callable[[list[Any], Edition], bytes] | None = None
    records_of: Callable[[Stream], list[AnyRecord]] | None = None  # when record cannot
    editions: frozenset[Edition] = frozenset({Edition.V311})
    record5: Callable[[Any], Record5] | None = None  # one decoded 5.0 object -> Record5
    #: (stream, budget, min repeats, max repeats) -> (best s, median s, repeats), for a
    #: codec that times itself (in another runtime)
    timer: Callable[[Stream, float, int, int], tuple[float, float, int]] | None = None
    runtime: str = "Python"

    def records(self, stream: Stream) -> list[AnyRecord]:
        if self.records_of is not None:
            return self.records_of(stream)
        assert self.decode is not None
        to_record = self.record5 if stream.v5 else self.record
        assert to_record is not None
        return [to_record(p) for p in self.decode(stream)]


def version_of(dist: str) -> str:
    """The installed version of a distribution ("?" when it is not installed)."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "?"


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

    def encode_all(packets: list[Any], edition: Edition) -> bytes:
        f = io.BytesIO()
        for p in packets:
            p.encode(f)
        return f.getvalue()

    return Codec(
        "mqtt-codec",
        version_of("mqtt-codec"),
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

    def encode_all(packets: list[Any], edition: Edition) -> bytes:
        return b"".join([p.to_bytes() for p in packets])

    return Codec(
        "amqtt",
        version_of("amqtt"),
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
    # MQTT 5.0 (a Client with protocol MQTTv5): properties through paho.mqtt.properties
    # (identifier valid for the packet type, duplicates of once-only properties, Topic
    # Alias not 0, strings decoded as UTF-8), acknowledgements' Reason Codes as ReasonCode
    # objects (a code outside the packet's table is an error). Not: the Topic Alias
    # Maximum, the empty topic without an alias, shortest Variable Byte Integers, the
    # payload's UTF-8.
    # paho.mqtt._packet is private: this may break with a later paho release.
    from paho.mqtt import _packet  # type: ignore[import-untyped, unused-ignore]
    from paho.mqtt.client import Client, MQTTv5, MQTTv311  # type: ignore[import-untyped, unused-ignore]
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
        def __init__(self, protocol: Any) -> None:
            super().__init__(CallbackAPIVersion.VERSION2, protocol=protocol)
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
        client = _DecodingClient(MQTTv5 if stream.v5 else MQTTv311)
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

    scalars = (
        ("PayloadFormatIndicator", "payload_format_indicator"),
        ("MessageExpiryInterval", "message_expiry_interval"),
        ("TopicAlias", "topic_alias"),
        ("ResponseTopic", "response_topic"),
        ("ContentType", "content_type"),
        ("ReasonString", "reason_string"),
    )

    def properties_of(properties: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if properties is None:
            return out
        for attribute, key in scalars:
            if hasattr(properties, attribute):
                out[key] = getattr(properties, attribute)
        if hasattr(properties, "CorrelationData"):
            out["correlation_data_hex"] = bytes(properties.CorrelationData).hex()
        if hasattr(properties, "UserProperty"):
            out["user_properties"] = [list(pair) for pair in properties.UserProperty]
        if hasattr(properties, "SubscriptionIdentifier"):
            out["subscription_identifiers"] = list(properties.SubscriptionIdentifier)
        return out

    def record5(item: Any) -> Record5:
        kind, p = item
        props = canonical_properties(properties_of(p.properties))
        if kind == 0x30:
            return (*record(item), None, props)
        return (*record(item), p.reason.value, props)

    return Codec(
        "paho-mqtt",
        version_of("paho-mqtt"),
        "Client._packet_read over an in-memory socket; _packet_handle = paho.mqtt._packet decoders",
        decode,
        record,
        editions=frozenset({Edition.V311, Edition.V50}),
        record5=record5,
    )


def gmqtt_codec() -> Codec:
    # gmqtt 0.8 has no codec apart from its client. Its reading path is
    # MQTTProtocol._read_packet (framing of a received buffer into Package(cmd, body)),
    # then, per package, the MqttPackageHandler method for its type, which unpacks the
    # fields (struct) and reacts. Here a real MqttPackageHandler (MQTT 3.1.1 or 5.0) gets
    # every package through its own type-to-method cache (__get_handler__, as
    # _handle_packet does, without that method's debug log and clock read); what would
    # leave the client (acks to send, stored messages) goes to no-op callbacks and
    # on_message appends to a list. So this is the client's receive path, a little more
    # than decoding: PUBREC also builds the PUBREL the client stores, acks free packet
    # identifiers.
    # Validates: Remaining Length at most 4 bytes, known types, body length (acks at least
    # 2 bytes). Drops with a log line: an empty topic; silently: QoS 3. Does not: other
    # fixed-header flags, the acks' Remaining Length, UTF-8 (the topic stays bytes),
    # U+0000, wildcards, packet identifier 0.
    # MQTT 5.0: parses the PUBLISH properties (unknown identifiers drop the packet; no
    # check that a property belongs to PUBLISH, of duplicates or of values) and resolves
    # Topic Aliases; reads no Reason Code or property of PUBACK, PUBREL and PUBCOMP, and
    # only the Reason Code of PUBREC, so it cannot be checked (nor timed) on mix5.
    from gmqtt.mqtt.constants import MQTTv50, MQTTv311  # type: ignore[import-not-found, import-untyped, unused-ignore]
    from gmqtt.mqtt.handler import MqttPackageHandler  # type: ignore[import-not-found, import-untyped, unused-ignore]
    from gmqtt.mqtt.protocol import MQTTProtocol  # type: ignore[import-not-found, import-untyped, unused-ignore]
    from gmqtt.mqtt.utils import ConnectionState  # type: ignore[import-not-found, import-untyped, unused-ignore]

    read_packet = MQTTProtocol._read_packet
    names = {0x40: "PUBACK", 0x50: "PUBREC", 0x60: "PUBREL", 0x70: "PUBCOMP"}
    # gmqtt's property names -> the P form's
    property_keys = {
        "payload_format_id": "payload_format_indicator",
        "message_expiry_interval": "message_expiry_interval",
        "topic_alias": "topic_alias",
        "response_topic": "response_topic",
        "content_type": "content_type",
    }

    def nothing(*args: Any, **kwargs: Any) -> None:
        return None

    def make_handler(
        protocol_version: int,
        on_message: Callable[..., None],
        sent: Callable[..., None],
        removed: Callable[..., None],
    ) -> Any:
        handler = MqttPackageHandler(
            connack_event=asyncio.Event(),
            connection_lost_event=asyncio.Event(),
            connection_state=ConnectionState(protocol_version=protocol_version),
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
        handler = make_handler(
            MQTTv50 if stream.v5 else MQTTv311,
            lambda *message: messages.append(message),
            nothing,
            nothing,
        )
        by_type = handler.__get_handler__
        packages = frame(stream.data)
        for package in packages:
            by_type(package.cmd)(package.cmd, package.data)
        return packages  # the count of packets; messages hold what on_message got

    def properties_of(properties: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, values in properties.items():
            if name in property_keys:
                (out[property_keys[name]],) = values  # a repeated one fails the check
            elif name == "correlation_data":
                (data,) = values
                out["correlation_data_hex"] = bytes(data).hex()
            elif name == "user_property":
                out["user_properties"] = [list(pair) for pair in values]
            elif name == "subscription_identifier":
                out["subscription_identifiers"] = list(values)
            elif name not in ("dup", "retain"):
                raise RuntimeError(f"gmqtt gave a property {name!r}")
        return out

    def decode_records(stream: Stream) -> list[AnyRecord]:
        # For the check only: tie each package to what the handler made of it.
        events: list[tuple[str, Any]] = []
        handler = make_handler(
            MQTTv50 if stream.v5 else MQTTv311,
            lambda *message: events.append(("message", message)),
            lambda cmd, mid, dup, reason_code=0: events.append(("sent", mid)),
            lambda mid: events.append(("removed", mid)),
        )
        records: list[AnyRecord] = []
        for package in frame(stream.data):
            events.clear()
            handler._handle_packet(package.cmd, package.data)
            kind = package.cmd & 0xF0
            mids = [value for what, value in events if what in ("sent", "removed")]
            if kind == 0x30:
                messages = [value for what, value in events if what == "message"]
                ((topic, payload, qos, properties),) = messages
                mid = mids[0] if qos else None
                publish: Record = (
                    "PUBLISH",
                    topic,
                    payload,
                    qos,
                    mid,
                    bool(properties["dup"]),
                    bool(properties["retain"]),
                )
                if stream.v5:
                    props = canonical_properties(properties_of(properties))
                    records.append((*publish, None, props))
                else:
                    records.append(publish)
            elif stream.v5:
                raise RuntimeError(
                    f"gmqtt does not decode the Reason Code and properties of {names[kind]}"
                )
            else:
                records.append((names[kind], None, None, None, mids[0], None, None))
        return records

    return Codec(
        "gmqtt",
        version_of("gmqtt"),
        "MQTTProtocol._read_packet + MqttPackageHandler per-type methods (sends stubbed)",
        decode,
        None,
        records_of=decode_records,
        editions=frozenset({Edition.V311, Edition.V50}),
    )
