"""The codecs ``bench_codec.py`` times: pubproof's reference, and its peers (the Python ones
are in ``interop/peer_codecs.py``, shared with the conformance matrix; mqtt-packet, the
npm package, runs in node from ``benchmarks/peers``), each as a
:class:`peer_codecs.Codec`, with a comment on what it validates.

Imported by ``bench_codec.py``, which puts ``interop/`` (``peer_codecs``) on the path.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from codec_streams import LIMITS5, Stream, _pubproof_record
from peer_codecs import (
    AnyRecord,
    Codec,
    Record5,
    amqtt_codec,
    gmqtt_codec,
    mqtt_codec_codec,
    paho_codec,
    record_of_p,
    version_of,
)
from peer_codecs import Stream as AnyStream

from pubproof.model.editions import Edition
from pubproof.reference import Decoder, encode, to_p

PEERS_DIR = Path(__file__).resolve().parent / "peers"


def _own(stream: AnyStream) -> Stream:
    """A codec's stream as the benchmark's own (its chunks and expected records), where a
    codec needs them: the codecs are called with the benchmark's streams only."""
    assert isinstance(stream, Stream)
    return stream


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
