"""The vector corpus: test cases for any MQTT codec, generated from the model.

Each case is one JSON object (one line of ``vectors/corpus.jsonl``)::

    {"id": "3.1.1/decode/MQTT-3.3.1-4/reject/0003", "op": "decode", "edition": "3.1.1",
     "reading": {"rl-encoding": "lenient", ...}, "hex": "36...",
     "verdict": "ok" | "malformed" | "violation" | "incomplete",
     "rule": "MQTT-3.3.1-4" | null, "offset": 0 | null, "packets": [P, ...]}

``op`` is ``decode`` (feed ``hex``, expect ``packets`` then the verdict, with ``rule`` and
``offset`` of the error) or ``encode`` (encode ``packets[0]``; expect ``hex``, or a refusal
naming ``rule`` when ``hex`` is null). ``reading`` lists every reading of the edition with
the value the case uses. For an ``ok`` case, ``rule`` names the rule whose accepting side
the case shows (null for the random cases).

A 5.0 case has two more keys: ``limits`` (the receiver's ``topic_alias_maximum`` and
``maximum_packet_size``, the latter null for no limit; for an encode case, null when the
encoder's default applies: any Topic Alias up to 65,535) and ``reason_code`` (the
DISCONNECT Reason Code of a decode case's error, null otherwise).

Every case's verdict is computed by the model; the generator also states what it meant
each case to show and stops if the model disagrees. The output is deterministic.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition
from pubproof.model.trace import P, ack, publish
from pubproof.model.vector_cases import Corpus, Intent, accept, reject
from pubproof.model.vectors50 import generate50
from pubproof.model.wire import encode, encode_remaining_length

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50
EXAMPLE = publish(topic="a/b", qos=1, packet_id=10)  # the spec's worked example


def _raw_publish(
    flags: int, topic: bytes, packet_id: bytes = b"", payload: bytes = b"", rl: bytes | None = None
) -> bytes:
    body = len(topic).to_bytes(2, "big") + topic + packet_id + payload
    return (
        bytes([0x30 | flags])
        + (rl if rl is not None else encode_remaining_length(len(body)))
        + body
    )


def _valid_publishes() -> Iterator[P]:
    yield EXAMPLE
    yield publish(topic="a/b", qos=1, packet_id=10, payload=b"hi")
    yield publish(topic="sensors/room12/temp", payload=b"21.5")
    yield publish(topic="a", qos=2, packet_id=65535, payload=b"\x00\xff", retain=True)
    yield publish(topic="/", qos=1, packet_id=1, dup=True)
    yield publish(
        topic="über/温度/🌡", qos=2, packet_id=256, dup=True, retain=True, payload=b"x" * 200
    )
    yield publish(topic="\ufeffbom", payload=b"")
    yield publish(topic="$SYS/broker/load", qos=0, retain=True, payload=b"1" * 127)


def _generate(corpus: Corpus) -> None:
    for edition in (V31, V311):
        # -- accepting side -------------------------------------------------------------
        for packet in _valid_publishes():
            data = encode(packet, edition)
            corpus.decode_case(accept(R.PAYLOAD_REST), data, edition)
            corpus.encode_case(accept(R.PACKET_ID_PRESENCE), packet, edition)
        corpus.decode_case(accept(R.BIG_ENDIAN), encode(EXAMPLE, edition), edition)
        corpus.decode_case(
            accept(R.PACKET_ID_NONZERO),
            encode(publish(topic="t", qos=1, packet_id=1), edition),
            edition,
        )
        corpus.decode_case(
            accept(R.TOPIC_UTF8), encode(publish(topic="Ünïcödé/𝄞/∑"), edition), edition
        )
        corpus.decode_case(accept(R.TOPIC_NOT_EMPTY), encode(publish(topic="x"), edition), edition)
        corpus.decode_case(
            accept(R.TOPIC_NO_WILDCARDS), encode(publish(topic="a/b/c"), edition), edition
        )
        corpus.decode_case(accept(R.TOPIC_NUL), encode(publish(topic="a\u0001b"), edition), edition)
        corpus.decode_case(
            accept(R.QOS_RESERVED),
            encode(publish(topic="q", qos=2, packet_id=7), edition),
            edition,
        )
        corpus.decode_case(
            accept(R.DUP_QOS0),
            encode(publish(topic="d", qos=1, packet_id=3, dup=True), edition),
            edition,
        )
        corpus.decode_case(accept(R.RESERVED_TYPE), encode(ack("PUBACK", 1), edition), edition)
        corpus.decode_case(accept(R.OUT_OF_SCOPE_TYPE), encode(ack("PUBCOMP", 2), edition), edition)
        corpus.decode_case(accept(R.PUBLISH_RL_COVERS), _raw_publish(0, b"t"), edition)
        corpus.encode_case(accept(R.TOPIC_MAX_BYTES), publish(topic="é" * 32767), edition)
        for name in ("PUBACK", "PUBREC", "PUBREL", "PUBCOMP"):
            for packet_id in (0, 1, 10, 0x1234, 65535):
                data = encode(ack(name, packet_id), edition)
                corpus.decode_case(accept(R.ACK_FLAGS[name]), data, edition)
                corpus.decode_case(accept(R.ACK_RL[name]), data, edition)
        # Remaining Length: every length of encoding, and what lies past a packet's end.
        for size in (0, 1, 120, 121, 122, 123, 124, 16_375, 16_376, 16_377):
            packet = publish(topic="rl", payload=b"\xa5" * size)
            corpus.decode_case(accept(R.RL_MAX_BYTES), encode(packet, edition), edition)
        stream = b"".join(encode(p, edition) for p in _valid_publishes())
        stream += encode(ack("PUBREL", 10), edition) + encode(ack("PUBCOMP", 10), edition)
        corpus.decode_case(accept(R.RL_DELIMITS), stream, edition)
        corpus.decode_case(accept(R.RL_DELIMITS), b"", edition)
        for first in (0x40, 0x50, 0x62, 0x70):
            # two-, three- and four-byte encodings of 2: lenient by default
            for rl in (b"\x82\x00", b"\x82\x80\x00", b"\x82\x80\x80\x00"):
                corpus.decode_case(accept(R.RL_MINIMAL), bytes([first]) + rl + b"\x00\x01", edition)
                corpus.decode_case(
                    reject(R.RL_MINIMAL),
                    bytes([first]) + rl + b"\x00\x01",
                    edition,
                    {"rl-encoding": "strict"},
                )
        # -- rejecting side -------------------------------------------------------------
        for first in (0x00, 0x0F, 0xF0, 0xFF):
            corpus.decode_case(reject(R.RESERVED_TYPE), bytes([first, 0]), edition)
        for first in (0x10, 0x20, 0x82, 0x90, 0xA2, 0xB0, 0xC0, 0xD0, 0xE0):
            corpus.decode_case(reject(R.OUT_OF_SCOPE_TYPE), bytes([first, 0]), edition)
        for flags in (0b0110, 0b0111, 0b1110, 0b1111):
            data = _raw_publish(flags, b"a/b", b"\x00\x0a")
            corpus.decode_case(reject(R.QOS_RESERVED), data, edition)
            corpus.decode_case(reject(R.QOS_RESERVED), data[:1], edition)
        corpus.encode_case(reject(R.QOS_RESERVED), publish(topic="q", qos=3, packet_id=1), edition)
        for name, number in (("PUBACK", 4), ("PUBREC", 5), ("PUBREL", 6), ("PUBCOMP", 7)):
            expected = R.ACK_FLAGS_311[name]
            readings = {"ack-flags": "as-3.1.1"} if edition is V31 else None
            for flags in range(16):
                data = bytes([number << 4 | flags, 2, 0, 1])
                if flags == expected:
                    continue
                corpus.decode_case(reject(R.ACK_FLAGS[name]), data, edition, readings)
                if edition is V31:
                    corpus.decode_case(accept(R.ACK_FLAGS[name]), data, edition)
            for wrong in (0, 1, 3, 4, 127):
                data = bytes([number << 4 | expected, wrong]) + b"\x00\x01" * 2
                corpus.decode_case(reject(R.ACK_RL[name]), data, edition)
        for data in (
            b"\x30\xff\xff\xff\xff\x7f",
            b"\x40\x80\x80\x80\x80\x00",
            b"\x32\xff\xff\xff\x80",
        ):
            corpus.decode_case(reject(R.RL_MAX_BYTES), data, edition)
        corpus.decode_case(
            reject(R.RL_MINIMAL),
            _raw_publish(0, b"t", rl=b"\x83\x00"),
            edition,
            {"rl-encoding": "strict"},
        )
        # Variable header that does not fit in the Remaining Length.
        for data in (
            b"\x30\x00",
            b"\x30\x01\x00",
            b"\x30\x03\x00\x05abc",
            b"\x32\x05\x00\x03a/b",
            b"\x32\x06\x00\x03a/b\x00",
            b"\x34\x04\x00\x02ab",
        ):
            corpus.decode_case(reject(R.PUBLISH_RL_COVERS), data, edition)
        for raw in (
            b"\xff",
            b"a\xc0\x80",
            b"ab\xed\xa0\x80",
            b"\xf4\x90\x80\x80",
            b"x\x80",
            b"\xe2\x82",
            b"\xc3",
            b"ok/\xf8\x88\x80\x80\x80",
            b"\xe0\x80\xaf",
            b"+\xff",
        ):
            corpus.decode_case(reject(R.TOPIC_UTF8), _raw_publish(0, raw, payload=b"p"), edition)
        corpus.decode_case(
            reject(R.PACKET_ID_NONZERO), _raw_publish(2, b"a/b", b"\x00\x00", b"x"), edition
        )
        corpus.decode_case(
            reject(R.PACKET_ID_NONZERO), _raw_publish(4, b"a/b", b"\x00\x00"), edition
        )
        corpus.encode_case(
            reject(R.PACKET_ID_PRESENCE), publish(topic="t", qos=0, packet_id=5), edition
        )
        corpus.encode_case(reject(R.PACKET_ID_PRESENCE), publish(topic="t", qos=1), edition)
        corpus.encode_case(reject(R.TOPIC_MAX_BYTES), publish(topic="é" * 32768), edition)

        # Topic rules: fixed in 3.1.1, a reading in 3.1.
        topic_readings = {"topic-rules": "as-3.1.1"} if edition is V31 else None
        for raw, rule in (
            (b"", R.TOPIC_NOT_EMPTY),
            (b"a\x00b", R.TOPIC_NUL),
            (b"\x00", R.TOPIC_NUL),
            (b"a/+/b", R.TOPIC_NO_WILDCARDS),
            (b"#", R.TOPIC_NO_WILDCARDS),
            (b"sport/tennis/#", R.TOPIC_NO_WILDCARDS),
            ("温度/+".encode(), R.TOPIC_NO_WILDCARDS),
        ):
            for flags, identifier in ((0, b""), (2, b"\x00\x01")):
                data = _raw_publish(flags, raw, identifier, b"payload")
                corpus.decode_case(reject(rule), data, edition, topic_readings)
                if edition is V31:
                    corpus.decode_case(accept(rule), data, edition)
            corpus.encode_case(
                reject(rule), publish(topic=raw.decode(), qos=0), edition, topic_readings
            )
        dup0 = _raw_publish(0b1000, b"a/b", payload=b"x")
        if edition is V311:
            corpus.decode_case(reject(R.DUP_QOS0), dup0, edition)
            corpus.decode_case(reject(R.DUP_QOS0), dup0[:1], edition)
            corpus.decode_case(accept(R.DUP_QOS0), dup0, edition, {"dup-qos0": "ignore"})
            corpus.encode_case(reject(R.DUP_QOS0), publish(topic="a", dup=True), edition)
            for char in ("\u0001", "\u001f", "\u007f", "\u009f", "\ufdd0", "\uffff", "\U0010fffe"):
                data = _raw_publish(0, f"a{char}b".encode(), payload=b"x")
                corpus.decode_case(accept(R.TOPIC_DISCOURAGED), data, edition)
                corpus.decode_case(
                    reject(R.TOPIC_DISCOURAGED),
                    data,
                    edition,
                    {"discouraged-code-points": "reject"},
                )
        else:
            corpus.decode_case(accept(R.DUP_QOS0), dup0, edition)
            corpus.decode_case(reject(R.DUP_QOS0), dup0, edition, {"dup-qos0": "reject"})
            corpus.encode_case(
                reject(R.DUP_QOS0), publish(topic="a", dup=True), edition, {"dup-qos0": "reject"}
            )
            qos3 = _raw_publish(0b0110, b"a/b", b"\x00\x0a", b"x")
            corpus.decode_case(accept(R.QOS_RESERVED), qos3, edition, {"qos3": "accept"})
            long_topic = "t" * 32_768
            corpus.decode_case(
                reject(R.TOPIC_MAX_31), _raw_publish(0, long_topic.encode()), edition
            )
            corpus.decode_case(
                accept(R.TOPIC_MAX_31),
                _raw_publish(0, long_topic.encode()),
                edition,
                {"topic-length": "65535-bytes"},
            )
            corpus.decode_case(accept(R.TOPIC_MAX_31), _raw_publish(0, b"t" * 32_767), edition)
            corpus.encode_case(reject(R.TOPIC_MAX_31), publish(topic=long_topic), edition)

        # -- incomplete: every cut of a short stream ------------------------------------
        whole = encode(EXAMPLE, edition) + encode(ack("PUBACK", 10), edition)
        for cut in range(1, len(whole)):
            data = whole[:cut]
            if cut == len(encode(EXAMPLE, edition)):
                corpus.decode_case(accept(R.RL_DELIMITS), data, edition)
            else:
                corpus.decode_case(Intent(None, "incomplete"), data, edition)

    # -- random streams and their mutations (seeded: the corpus is deterministic) ------
    rng = random.Random(20261123)
    for index in range(160):
        edition = V311 if index % 2 else V31
        packets = [_random_packet(rng) for _ in range(rng.randint(1, 3))]
        mutant = bytearray(b"".join(encode(p, edition) for p in packets))
        if index % 4 >= 2:
            for _ in range(rng.randint(1, 2)):
                mutant[rng.randrange(len(mutant))] = rng.randrange(256)
        if index % 8 == 7:
            del mutant[rng.randrange(len(mutant)) :]
        corpus.decode_case(Intent(None, "random"), bytes(mutant), edition)


def _random_packet(rng: random.Random) -> P:
    if rng.random() < 0.3:
        kind = rng.choice(["PUBACK", "PUBREC", "PUBREL", "PUBCOMP"])
        return ack(kind, rng.randrange(1, 65536))  # type: ignore[arg-type]
    qos = rng.randrange(3)
    topic = "/".join(
        rng.choice(["a", "b", "sensors", "温度", "x1", "é"]) for _ in range(rng.randint(1, 4))
    )
    return publish(
        topic=topic,
        qos=qos,
        packet_id=rng.randrange(1, 65536) if qos else None,
        payload=bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40))),
        dup=bool(qos) and rng.random() < 0.2,
        retain=rng.random() < 0.2,
    )


def generate() -> list[dict[str, Any]]:
    """Every case of the corpus, in a fixed order."""
    corpus = Corpus()
    _generate(corpus)
    generate50(corpus)
    return corpus.cases


def dumps(cases: list[dict[str, Any]]) -> str:
    """The corpus as JSON Lines (sorted keys, so the file is byte-for-byte reproducible)."""
    return "".join(json.dumps(case, ensure_ascii=False, sort_keys=True) + "\n" for case in cases)
