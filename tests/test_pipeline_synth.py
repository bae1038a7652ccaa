"""The capture writer and the synthetic capture generator, checked against tshark.

tshark is the independent reader: it must read every file the writer makes without a
checksum error or a malformed packet, and its MQTT decoding of a generated capture must
give exactly the counts the generator wrote into ``FILE.expected.json`` (frames,
connections, TCP payload bytes, MQTT bytes, packets per type, PUBLISH per QoS, and each
injected fault, recognised from tshark's fields without the generator's help).
"""

from __future__ import annotations

import hashlib
import io
import json
import struct
import subprocess
import sys
import tracemalloc
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.tshark_decode import PI_ERROR, Pdu, fields, mqtt_pdus, preferences, split

from pubproof.model.editions import Edition
from pubproof.model.flows import (
    UNDEFINED_RECEIVER,
    UNDEFINED_SENDER,
    ReceiverInput,
    SenderInput,
)
from pubproof.model.rules import RULES
from pubproof.model.wire import encode_remaining_length
from pubproof.pipeline.synth import SynthConfig, file_sha256, generate
from pubproof.pipeline.synth import faults as synth_faults
from pubproof.pipeline.synth.check import (
    compare_packets,
    compare_reconciliation,
    compare_violations,
)
from pubproof.pipeline.synth.faults import Fault, FaultError, checked_wire_fault, wire_rule
from pubproof.pipeline.synth.pcapwrite import (
    ACK,
    C2S,
    FIN,
    LINKTYPE_ETHERNET,
    LINKTYPE_LINUX_SLL,
    LINKTYPE_LINUX_SLL2,
    LINKTYPE_NULL,
    LINKTYPE_RAW,
    PSH,
    S2C,
    SYN,
    CaptureWriter,
    Endpoint,
    PcapngWriter,
    PcapWriter,
    TcpConnection,
    checksum,
)
from pubproof.reference import PubAck, Publish, encode

# -- the Internet checksum ---------------------------------------------------------------


def _naive_checksum(data: bytes) -> int:
    """RFC 1071 as written: add 16-bit words with end-around carry, then complement."""
    if len(data) % 2:
        data += b"\x00"
    total = 0
    for (word,) in struct.iter_unpack("!H", data):
        total += word
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def test_checksum_rfc1071_example() -> None:
    # RFC 1071 section 3: the words 0001 f203 f4f5 f6f7 sum to ddf2
    assert checksum(bytes.fromhex("0001f203f4f5f6f7")) == ~0xDDF2 & 0xFFFF


@given(st.binary(max_size=3000))
def test_checksum_equals_word_by_word_sum(data: bytes) -> None:
    assert checksum(data) == _naive_checksum(data)


def test_checksum_zero_and_all_ones() -> None:
    assert checksum(b"") == 0xFFFF == _naive_checksum(b"")
    assert checksum(b"\xff\xff" * 3) == 0 == _naive_checksum(b"\xff\xff" * 3)


# -- file formats, read back by hand -----------------------------------------------------


def test_pcap_records_cut_to_snaplen_keep_original_length() -> None:
    out = io.BytesIO()
    writer = PcapWriter(out, snaplen=10, nanosecond=True, byteorder="big")
    writer.write(bytes(range(25)), ts_ns=1_500_000_000_123_456_789)
    data = out.getvalue()
    magic, major, minor, _, _, snaplen, linktype = struct.unpack(">IHHiIII", data[:24])
    assert (magic, major, minor, snaplen, linktype) == (0xA1B23C4D, 2, 4, 10, LINKTYPE_ETHERNET)
    assert struct.unpack(">IIII", data[24:40]) == (1_500_000_000, 123_456_789, 10, 25)
    assert data[40:] == bytes(range(10))


def test_pcap_microseconds_little_endian() -> None:
    out = io.BytesIO()
    PcapWriter(out, linktype=LINKTYPE_RAW).write(b"abc", ts_ns=2_000_000_999_999)
    data = out.getvalue()
    assert struct.unpack("<I", data[:4]) == (0xA1B2C3D4,)
    assert struct.unpack("<IIII", data[24:40]) == (2000, 999, 3, 3)


def _pcapng_blocks(data: bytes, order: str) -> list[tuple[int, bytes]]:
    blocks, position = [], 0
    while position < len(data):
        kind, length = struct.unpack(order + "II", data[position : position + 8])
        assert length % 4 == 0
        (trailer,) = struct.unpack(order + "I", data[position + length - 4 : position + length])
        assert trailer == length
        blocks.append((kind, data[position + 8 : position + length - 4]))
        position += length
    assert position == len(data)
    return blocks


@pytest.mark.parametrize("order", ["little", "big"])
def test_pcapng_blocks_are_well_formed(order: Any) -> None:
    out = io.BytesIO()
    writer = PcapngWriter(out, byteorder=order, linktype=LINKTYPE_LINUX_SLL2)
    second = writer.add_interface(LINKTYPE_NULL, snaplen=4)
    writer.write(b"12345", ts_ns=(1 << 33) + 7)
    writer.write(b"abcdef", ts_ns=9, interface=second)
    fmt = "<" if order == "little" else ">"
    blocks = _pcapng_blocks(out.getvalue(), fmt)
    assert [kind for kind, _ in blocks] == [0x0A0D0D0A, 1, 1, 6, 6]
    assert struct.unpack(fmt + "I", blocks[0][1][:4]) == (0x1A2B3C4D,)
    assert struct.unpack(fmt + "HH", blocks[1][1][:4]) == (LINKTYPE_LINUX_SLL2, 0)
    iface, high, low, captured, original = struct.unpack(fmt + "IIIII", blocks[3][1][:20])
    assert (iface, (high << 32) | low, captured, original) == (0, (1 << 33) + 7, 5, 5)
    assert blocks[3][1][20:25] == b"12345"
    assert struct.unpack(fmt + "IIIII", blocks[4][1][:20])[3:] == (4, 6)  # cut to snaplen 4


def test_tcp_connection_numbers_wrap_and_count_syn_fin() -> None:
    client, server = Endpoint("10.0.0.1", 50000), Endpoint("10.0.0.2", 1883)
    conn = TcpConnection(client, server, client_isn=0xFFFFFFFE, server_isn=7, mss=4)
    syn, syn_ack, ack = conn.handshake()
    assert (syn.seq, syn.flags, syn_ack.seq, syn_ack.ack, ack.seq, ack.ack) == (
        0xFFFFFFFE, SYN, 7, 0xFFFFFFFF, 0xFFFFFFFF, 8,
    )  # fmt: skip
    data = conn.send(C2S, b"0123456789")
    assert [s.payload for s in data] == [b"0123", b"4567", b"89"]
    assert [s.seq for s in data] == [0xFFFFFFFF, 3, 7]
    assert [s.flags for s in data] == [ACK, ACK, ACK | PSH]
    reply = conn.send(S2C, b"x", sizes=[1])[0]
    assert (reply.seq, reply.ack) == (8, 9)
    fin = conn.close(S2C)
    assert [s.flags for s in fin] == [FIN | ACK, ACK, FIN | ACK, ACK]
    assert fin[1].ack == 10 and fin[3].ack == 10  # FIN counts one
    assert data[2].slice(1).seq == 8 and data[2].slice(1).payload == b"9"


# -- tshark reads what the writer writes -------------------------------------------------

LINK_CASES = [
    ("pcap", LINKTYPE_ETHERNET, "little"),
    ("pcap", LINKTYPE_NULL, "big"),
    ("pcap", LINKTYPE_LINUX_SLL, "little"),
    ("pcapng", LINKTYPE_LINUX_SLL2, "big"),
    ("pcapng", LINKTYPE_RAW, "little"),
    ("pcapng", LINKTYPE_ETHERNET, "little"),
]


@pytest.mark.parametrize(("fmt", "linktype", "order"), LINK_CASES)
def test_tshark_reads_every_format_and_link_type(
    tmp_path: Path, fmt: Any, linktype: int, order: Any
) -> None:
    path = tmp_path / f"capture.{fmt}"
    message = encode(Publish(topic="a/é", qos=1, packet_id=9, payload=bytes(3000)))
    with CaptureWriter(str(path), fmt=fmt, linktype=linktype, byteorder=order) as capture:
        now = 1_700_000_000_000_000_000
        for number, (client, server) in enumerate(
            [("10.1.1.1", "10.2.2.2"), ("fd00::5", "fd00::6")]
        ):
            conn = TcpConnection(Endpoint(client, 40000 + number), Endpoint(server, 1883))
            segments = conn.handshake() + conn.send(C2S, message, sizes=[1, 1000])
            segments += [segments[-1]]  # a retransmission: tshark must not decode it twice
            segments += conn.send(S2C, encode(PubAck(packet_id=9))) + conn.close(C2S)
            now = capture.write_all(segments, now)
    names = ["ip.version", "ipv6.version", "tcp.checksum.status", "ip.checksum.status",
             "mqtt.msgtype", "_ws.malformed", "tcp.analysis.retransmission", "frame.len",
             "frame.cap_len"]  # fmt: skip
    options = ["-o", "tcp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE"]
    rows = fields(path, names, options=options)
    assert len(rows) == 2 * 14
    assert [r[0] or r[1] for r in rows] == ["4"] * 14 + ["6"] * 14
    assert all(r[2] == "1" for r in rows)  # 1: good
    assert all(r[3] == "1" for r in rows[:14])
    assert [t for r in rows for t in split(r[4])] == ["3", "4"] * 2
    assert not any(r[5] for r in rows)
    assert sum(bool(r[6]) for r in rows) == 2
    assert all(r[7] == r[8] for r in rows)


# -- the faults the generator injects ------------------------------------------------------


@pytest.mark.parametrize("fault", [f for f in Fault if f.is_wire])
def test_wire_faults_break_a_registered_rule(fault: Fault) -> None:
    rules = {
        checked_wire_fault(fault, topic=topic, packet_id=packet_id, payload=b"p")[1]
        for topic in ("a", "x/y/z", "センサー/温度")
        for packet_id in (1, 2, 3, 4, 0xFFFF)
    }
    assert len(rules) == 1  # one fault, one rule, whatever the fields
    assert rules <= set(RULES.ids(Edition.V311))


def test_wire_rule_refuses_a_valid_packet() -> None:
    with pytest.raises(FaultError):
        wire_rule(encode(Publish(topic="a/b", qos=1, packet_id=1)))


def test_flow_fault_rules_are_the_models() -> None:
    expected = UNDEFINED_RECEIVER[ReceiverInput.PUBLISH_QOS1].rules
    assert synth_faults.flow_rules("t", 3) == expected
    assert synth_faults.flow_rules("t", 3, sender="s2c") == expected


def test_flow_fault_check_fails_when_the_model_finds_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pubproof.model.replay import Replay

    monkeypatch.setattr(synth_faults, "replay", lambda trace: Replay())
    with pytest.raises(FaultError):
        synth_faults.flow_rules("t", 3)


# -- the generator ----------------------------------------------------------------------------

SMALL = SynthConfig(
    seed=11, frames=12_000, connections=40, concurrent=12, split=0.25, split_headers=False,
    retransmit=0.03, reorder=0.02, ipv6=0.3, rst=0.3,
    inject=tuple((f.value, 3) for f in Fault),
    payload_sizes=((0, 1.0), (30, 4.0), (400, 3.0), (3000, 1.0), (40_000, 0.1)),
)  # fmt: skip


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    path = tmp_path_factory.mktemp("synth") / "small.pcap"
    expected = generate(SMALL, path)
    return path, expected


def test_expected_file_is_written_beside_the_capture(small: tuple[Path, dict[str, Any]]) -> None:
    path, expected = small
    assert json.loads(Path(f"{path}.expected.json").read_text()) == json.loads(json.dumps(expected))
    assert expected["frames"] >= SMALL.frames
    assert expected["faults"] == {f.value: 3 for f in Fault}


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    config = SynthConfig(seed=5, frames=2000, connections=10)
    digests = []
    for name in ("a.pcap", "b.pcap"):
        generate(config, tmp_path / name)
        digests.append(
            (
                file_sha256(tmp_path / name),
                hashlib.sha256(Path(f"{tmp_path / name}.expected.json").read_bytes()).hexdigest(),
            )
        )
    assert digests[0] == digests[1]
    generate(SynthConfig(seed=6, frames=2000, connections=10), tmp_path / "c.pcap")
    assert file_sha256(tmp_path / "c.pcap") != digests[0][0]


def _mqtt_bytes(pdus: list[Pdu]) -> int:
    return sum(
        1 + len(encode_remaining_length(int(p.fields["mqtt.len"]))) + int(p.fields["mqtt.len"])
        for p in pdus
    )


def test_tshark_agrees_with_the_expected_counts(small: tuple[Path, dict[str, Any]]) -> None:
    path, expected = small
    rows = fields(
        path,
        ["tcp.stream", "tcp.len", "mqtt.msgtype", "_ws.malformed", "_ws.expert.severity"],
        options=preferences(),
    )
    assert len(rows) == expected["frames"]
    assert len({r[0] for r in rows}) == expected["connections"]
    assert sum(int(r[1]) for r in rows) == expected["tcp_payload_bytes"]
    assert not [r for r in rows if r[3]], "tshark finds malformed packets"
    assert not [r for r in rows if any(int(s) >= PI_ERROR for s in split(r[4]))]
    pdus = mqtt_pdus(path, ["mqtt.len", "mqtt.qos"], options=preferences())
    assert Counter(p.type_name for p in pdus) == expected["packets"]
    assert len(pdus) == expected["packets_total"]
    qos = Counter(p.fields["mqtt.qos"] for p in pdus if p.msgtype == 3)
    assert qos == expected["publish_by_qos"]
    assert _mqtt_bytes(pdus) == expected["mqtt_bytes"]
    by_direction = Counter("s2c" if p.src_port == SMALL.port else "c2s" for p in pdus)
    assert by_direction == expected["packets_by_direction"]


def _faults_seen_by_tshark(
    pdus: list[Pdu], port: int
) -> tuple[Counter[str], list[str], set[tuple[str, str, int]]]:
    """Each injected fault recognised from tshark's fields alone, and every place where a
    wire fault is not the last packet of its direction or not alone in its connection."""
    found: Counter[str] = Counter()
    points: set[tuple[str, str, int]] = set()  # (fault, direction, frame)
    problems: list[str] = []
    last_fault: dict[tuple[int, str], int] = {}
    faults_per_stream: Counter[int] = Counter()
    held: dict[tuple[int, str], set[str]] = defaultdict(set)  # QoS 2 identifiers in flight
    for index, pdu in enumerate(pdus):
        direction = "s2c" if pdu.src_port == port else "c2s"
        key = (pdu.stream, direction)
        if key in last_fault:
            problems.append(f"frame {pdu.frame}: a packet after the fault of {key}")
        flags = int(pdu.fields["mqtt.hdrflags"], 16) & 0x0F
        name = None
        if pdu.msgtype == 3:
            topic, qos = pdu.fields.get("mqtt.topic", ""), int(pdu.fields["mqtt.qos"])
            packet_id = pdu.fields.get("mqtt.msgid")
            if qos == 3:
                name = Fault.QOS3
            elif "+" in topic or "#" in topic:
                name = Fault.WILDCARD
            elif qos == 0 and flags & 0x08:
                name = Fault.DUP_QOS0
            elif qos and packet_id == "0":
                name = Fault.PACKET_ID_0
            elif qos == 1 and packet_id in held[key]:
                found[Fault.QOS1_ON_HELD_ID.value] += 1
                points.add((Fault.QOS1_ON_HELD_ID.value, direction, pdu.frame))
            elif qos == 2 and packet_id is not None:
                held[key].add(packet_id)
        elif pdu.msgtype == 6 and flags != 0b0010:
            name = Fault.PUBREL_FLAGS
        elif pdu.msgtype == 7:  # PUBCOMP travels back: it frees the sender's identifier
            sender = "c2s" if direction == "s2c" else "s2c"
            held[(pdu.stream, sender)].discard(pdu.fields.get("mqtt.msgid", ""))
        if name is not None:
            found[name.value] += 1
            points.add((name.value, direction, pdu.frame))
            last_fault[key] = index
            faults_per_stream[pdu.stream] += 1
    problems += [f"stream {s}: {n} wire faults" for s, n in faults_per_stream.items() if n > 1]
    return found, problems, points


def test_tshark_sees_each_injected_fault_where_it_should_be(
    small: tuple[Path, dict[str, Any]],
) -> None:
    path, expected = small
    extra = ["mqtt.hdrflags", "mqtt.qos", "mqtt.topic", "mqtt.msgid"]
    pdus = mqtt_pdus(path, extra, options=preferences())
    found, problems, points = _faults_seen_by_tshark(pdus, SMALL.port)
    assert not problems
    assert dict(found) == expected["faults"]
    # the frame the generator names for each fault is where tshark completes the packet
    assert points == {(r["fault"], r["direction"], r["frame"]) for r in expected["injected"]}


def test_expected_violations_are_the_models_findings(
    small: tuple[Path, dict[str, Any]],
) -> None:
    _, expected = small
    wire = {
        f.value: checked_wire_fault(f, topic="a", packet_id=1, payload=b"")[1]
        for f in Fault
        if f.is_wire
    }
    flow = synth_faults.flow_findings("a", 1)
    assert flow == (
        UNDEFINED_RECEIVER[ReceiverInput.PUBLISH_QOS1].rules,
        UNDEFINED_SENDER[SenderInput.PUBLISH_QOS1].rules,
    )
    counts: Counter[str] = Counter()
    for name, count in expected["faults"].items():
        findings = ((wire[name],),) if name in wire else flow
        for finding in findings:
            for rule in finding:
                counts[rule] += count
    assert expected["violations"] == dict(counts)
    assert len(expected["injected"]) == sum(expected["faults"].values())
    for record in expected["injected"]:
        wanted = [[wire[record["fault"]]]] if record["fault"] in wire else [list(f) for f in flow]
        assert record["findings"] == wanted
        assert isinstance(record["frame"], int)


def test_no_faults_no_violations(tmp_path: Path) -> None:
    expected = generate(SynthConfig(seed=3, frames=500, connections=5, inject=()), tmp_path / "x")
    assert expected["violations"] == {} and expected["faults"] == {}


def test_one_connection_as_large_as_asked(tmp_path: Path) -> None:
    config = SynthConfig(seed=2, frames=100, connections=3, large_connection_packets=3000,
                         payload_sizes=((10, 1.0),))  # fmt: skip
    expected = generate(config, tmp_path / "large.pcap")
    assert 3000 <= expected["largest_connection_packets"] < 3000 + 20
    streams = Counter(
        r[0]
        for r in fields(tmp_path / "large.pcap", ["tcp.stream", "mqtt.msgtype"])
        for _ in split(r[1])
    )
    assert max(streams.values()) == expected["largest_connection_packets"]


def _peak_memory(tmp_path: Path, frames: int) -> int:
    config = SynthConfig(seed=4, frames=frames, connections=frames // 100, concurrent=20,
                         payload_sizes=((100, 1.0),))  # fmt: skip
    tracemalloc.start()
    try:
        generate(config, tmp_path / f"m{frames}.pcap")
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_generator_memory_does_not_grow_with_the_capture(tmp_path: Path) -> None:
    small_peak = _peak_memory(tmp_path, 1500)
    large_peak = _peak_memory(tmp_path, 12_000)  # eight times the frames
    assert large_peak < 1.5 * small_peak + 256 * 1024, (small_peak, large_peak)


def test_command_line(tmp_path: Path) -> None:
    out = tmp_path / "cli.pcapng"
    result = subprocess.run(
        [sys.executable, "-m", "pubproof.pipeline.synth", str(out), "--frames", "300",
         "--connections", "3", "--inject", "qos3=2", "--inject", "pubrel-flags=1", "--json"],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    printed = json.loads(result.stdout)
    assert printed == json.loads(Path(f"{out}.expected.json").read_text())
    assert printed["faults"] == {"qos3": 2, "pubrel-flags": 1}
    assert out.read_bytes()[:4] == b"\x0a\x0d\x0d\x0a"  # pcapng, from the name
    assert printed["frames"] == len(fields(out, ["frame.number"]))


# -- the comparison the benchmark and the live test use ----------------------------------------


def _rows_for(expected: dict[str, Any]) -> list[dict[str, Any]]:
    """The violations table a perfect pipeline would write for ``expected``."""
    return [
        {"direction": r["direction"], "frame": r["frame"], "rule": finding[0],
         "rules": ",".join(finding), "kind": "violation", "message": ""}
        for r in expected["injected"]
        for finding in r["findings"]
    ]  # fmt: skip


def test_compare_violations_accepts_the_perfect_answer(
    small: tuple[Path, dict[str, Any]],
) -> None:
    _, expected = small
    rows = _rows_for(expected)
    rows.append({**rows[0], "kind": "tolerated", "frame": 1})  # tolerated: not compared
    assert compare_violations(expected, rows).ok


@pytest.mark.parametrize("mutation", ["drop", "extra", "wrong-rule", "wrong-frame", "twice"])
def test_compare_violations_rejects_every_mutant(
    small: tuple[Path, dict[str, Any]], mutation: str
) -> None:
    _, expected = small
    rows = _rows_for(expected)
    if mutation == "drop":
        rows.pop(3)
    elif mutation == "extra":
        rows.append({**rows[0], "frame": 1})
    elif mutation == "wrong-rule":
        rows[0] = {**rows[0], "rule": "MQTT-9.9.9-9", "rules": "MQTT-9.9.9-9"}
    elif mutation == "wrong-frame":
        rows[0] = {**rows[0], "frame": rows[0]["frame"] + 1}
    else:
        rows.append(rows[0])
    assert not compare_violations(expected, rows).ok


def test_compare_packets_and_reconciliation(small: tuple[Path, dict[str, Any]]) -> None:
    _, expected = small
    types = [kind for kind, count in expected["packets"].items() for _ in range(count)]
    assert compare_packets(expected, types) == []
    assert compare_packets(expected, types[1:]) != []
    good = {
        "frames_in": expected["frames"], "frames_used": expected["frames"],
        "connections": expected["connections"], "bytes_framed": expected["mqtt_bytes"],
        "tcp_payload_bytes": expected["tcp_payload_bytes"],
    }  # fmt: skip
    assert compare_reconciliation(expected, good) == []
    assert compare_reconciliation(expected, {**good, "frames_used": 0}) != []
