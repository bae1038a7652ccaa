"""TCP and link layers through the whole pipeline (python engine): every situation lands
in the right table with the right reason, and frames and bytes always reconcile."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.pipeline_builder import (
    ACK,
    CONNACK,
    FIN,
    PSH,
    RST,
    SYN,
    Conn,
    Outcome,
    ack,
    connect,
    ether,
    ipv4,
    ipv6,
    null,
    pcap,
    pcapng,
    publish,
    run_check,
    sll,
    sll2,
    tcp,
)

from pubproof.pipeline.dissect import Segment, dissect
from pubproof.pipeline.reassembly import HISTORY, Data, Gap, Stream


def _session(conn: Conn, *packets: tuple[str, bytes]) -> list[bytes]:
    frames = conn.handshake()
    frames += [conn.segment(d, p) for d, p in packets]
    return frames + conn.close()


def _basic(conn: Conn | None = None) -> list[bytes]:
    conn = conn or Conn()
    return _session(
        conn,
        ("c2s", connect("c1")),
        ("s2c", CONNACK),
        ("c2s", publish("a/b", b"hi", qos=1, packet_id=7)),
        ("s2c", ack("PUBACK", 7)),
    )


def _reconciled(outcome: Outcome) -> dict[str, object]:
    rec = outcome.reconciliation
    assert rec["ok"] is True
    count = outcome.count
    assert count("frames_in") == count("frames_used") + count("frames_quarantined")
    assert count("tcp_payload_bytes") == count("bytes_framed") + count("bytes_unparsed")
    return rec


def _unparsed(outcome: Outcome) -> dict[str, int]:
    total: dict[str, int] = {}
    for row in outcome.tables["connections"]:
        for reason, count in json.loads(str(row["unparsed"])).items():
            total[reason] = total.get(reason, 0) + count
    return total


def test_a_clean_session(tmp_path: Path) -> None:
    outcome = run_check(tmp_path, {"a.pcap": pcap([ether(f) for f in _basic()])})
    rec = _reconciled(outcome)
    assert rec["frames_in"] == 9 and rec["frames_quarantined"] == 0
    types = [(r["direction"], r["type"], r["frame"]) for r in outcome.tables["packets"]]
    assert types == [
        ("c2s", "CONNECT", 4),
        ("s2c", "CONNACK", 5),
        ("c2s", "PUBLISH", 6),
        ("s2c", "PUBACK", 7),
    ]
    (row,) = outcome.tables["connections"]
    assert row["connection"] == "a.pcap:10.0.0.1:50000-10.0.0.2:1883#0"
    assert (row["client_id"], row["edition"], row["status"]) == ("c1", "3.1.1", "complete")
    assert outcome.tables["violations"] == []


@pytest.mark.parametrize(
    "link", ["ether", "vlan", "sll", "sll2", "null-le", "null-be", "raw", "loop"]
)
def test_link_types(tmp_path: Path, link: str) -> None:
    wrap: tuple[int, Callable[[bytes], bytes]] = {
        "ether": (1, ether),
        "vlan": (1, lambda ip: ether(ip, vlan=True)),
        "sll": (113, sll),
        "sll2": (276, sll2),
        "null-le": (0, null),
        "null-be": (0, lambda ip: null(ip, order=">")),
        "raw": (101, lambda ip: ip),
        "loop": (108, lambda ip: null(ip, order=">")),
    }[link]
    outcome = run_check(
        tmp_path, {"l.pcap": pcap([wrap[1](f) for f in _basic()], linktype=wrap[0])}
    )
    _reconciled(outcome)
    assert len(outcome.tables["packets"]) == 4


def test_ipv6_with_extension_headers(tmp_path: Path) -> None:
    conn = Conn(client=("2001:db8::1", 40000), server=("2001:db8::2", 1883))
    frames = [ether(f) for f in _basic(conn)]
    # a hop-by-hop header in front of one more segment's TCP (sent before the FIN, seen after)
    hop = bytes((6, 0)) + b"\x00" * 6
    more = ipv6(
        "2001:db8::1",
        "2001:db8::2",
        tcp(40000, 1883, conn.seq["c2s"] - 1, 0, PSH | ACK, bytes((0xC0, 0))),
        ext=hop,
        first=0,
    )
    outcome = run_check(tmp_path, {"v6.pcap": pcap([*frames, ether(more)])})
    _reconciled(outcome)
    connection = outcome.tables["connections"][0]["connection"]
    assert isinstance(connection, str)
    assert connection.endswith("[2001:db8::1]:40000-[2001:db8::2]:1883#0")
    assert outcome.tables["packets"][-1]["type"] == "PINGREQ"


def test_non_tcp_and_fragments_are_quarantined(tmp_path: Path) -> None:
    udp = ether(ipv4("10.0.0.1", "10.0.0.2", b"\x00" * 12, proto=17))
    fragment = ether(ipv4("10.0.0.1", "10.0.0.2", tcp(1, 1883, 0, 0, ACK), frag=0x2000))
    arp = b"\xff" * 12 + b"\x08\x06" + b"\x00" * 28
    v6_fragment = ether(
        ipv6("::1", "::2", tcp(1, 1883, 0, 0, ACK), ext=bytes((6, 0)) + b"\x00" * 6, first=44)
    )
    frames = [ether(f) for f in _basic()] + [udp, fragment, arp, v6_fragment, b"\x01\x02"]
    outcome = run_check(tmp_path, {"q.pcap": pcap(frames)})
    rec = _reconciled(outcome)
    assert rec["frames_quarantined_by_reason"] == {
        "ip-fragment": 2,
        "not-ip": 1,
        "not-tcp": 1,
        "truncated-header": 1,
    }
    assert [r["frame"] for r in outcome.tables["quarantine"]] == [10, 11, 12, 13, 14]


def test_unsupported_link_type(tmp_path: Path) -> None:
    outcome = run_check(tmp_path, {"u.pcap": pcap([b"\x00" * 40], linktype=147)})
    rec = _reconciled(outcome)
    assert rec["frames_quarantined_by_reason"] == {"unsupported-link-type": 1}


@pytest.mark.parametrize("damage", ["truncated-file", "bad-magic", "garbage", "truncated-record"])
def test_corrupted_files_never_crash(tmp_path: Path, damage: str) -> None:
    good = pcap([ether(f) for f in _basic()])
    body = {
        "truncated-file": good[:10],
        "bad-magic": b"\x00\x01" + good[2:],
        "garbage": good + b"\x13" * 100,
        "truncated-record": good[:-5],
    }[damage]
    outcome = run_check(tmp_path, {"d.pcap": body, "fine.pcap": good})
    rec = _reconciled(outcome)
    reasons = {r["reason"] for r in outcome.rows("quarantine", capture="d.pcap")}
    expected = {
        "truncated-file": "truncated-header",
        "bad-magic": "bad-magic",
        "garbage": "garbage",
        "truncated-record": "truncated-record",
    }[damage]
    assert reasons == {expected}
    assert len(outcome.rows("packets", capture="fine.pcap")) == 4
    if damage == "truncated-record":
        # the cut record is a frame, counted and quarantined; the rest of the file is used
        assert rec["frames_in"] == 18 and rec["frames_quarantined"] == 1


def test_snaplen_cut_frames_leave_a_gap(tmp_path: Path) -> None:
    conn = Conn()
    big = publish("big", b"p" * 300, qos=1, packet_id=1)
    frames = _session(
        conn, ("c2s", connect()), ("s2c", CONNACK), ("c2s", big), ("c2s", publish("after", b"z"))
    )
    outcome = run_check(tmp_path, {"s.pcap": pcap([ether(f) for f in frames], snaplen=200)})
    _reconciled(outcome)
    assert outcome.count("bytes_missing") > 0
    row = outcome.tables["connections"][0]
    assert "gaps" in str(row["status"])
    # framing resumes at the next segment, which is a whole packet
    assert [r["type"] for r in outcome.tables["packets"]] == ["CONNECT", "CONNACK", "PUBLISH"]
    assert outcome.tables["packets"][-1]["topic"] == "after"
    assert _unparsed(outcome)["gap"] > 0


def test_out_of_order_retransmitted_and_overlapping_segments(tmp_path: Path) -> None:
    conn = Conn()
    first = conn.handshake()
    c = connect("c1")
    p1, p2 = publish("a", b"1" * 30), publish("b", b"2" * 30)
    seq = conn.seq["c2s"]
    seg_c = conn.segment("c2s", c)
    seg_p1 = conn.segment("c2s", p1)
    seg_p2 = conn.segment("c2s", p2)
    # an overlapping retransmission: the last 10 bytes of p1 and the first 10 of p2
    overlap = conn.segment(
        "c2s", (p1 + p2)[len(p1) - 10 : len(p1) + 10], seq=seq + len(c) + len(p1) - 10
    )
    frames = [*first, seg_c, seg_p2, seg_p1, seg_p1, overlap, *conn.close()]
    outcome = run_check(tmp_path, {"o.pcap": pcap([ether(f) for f in frames])})
    _reconciled(outcome)
    packets = outcome.tables["packets"]
    # p2 came first (frame 5): the frame that carried its last byte, though it is framed
    # only once p1 fills the hole (frame 6); rows are in frame order
    assert [(r["type"], r["topic"], r["frame"], r["offset"]) for r in packets] == [
        ("CONNECT", None, 4, 0),
        ("PUBLISH", "b", 5, len(c) + len(p1)),
        ("PUBLISH", "a", 6, len(c)),
    ]
    assert _unparsed(outcome) == {"retransmitted": len(p1) + 20}
    assert outcome.tables["connections"][0]["status"] == "complete"


def test_conflicting_overlap_is_noted_first_copy_wins(tmp_path: Path) -> None:
    conn = Conn()
    frames = conn.handshake()
    c = connect()
    seq = conn.seq["c2s"]
    frames.append(conn.segment("c2s", c))
    frames.append(conn.segment("c2s", b"\x10\x99", seq=seq))  # a different first copy
    outcome = run_check(tmp_path, {"c.pcap": pcap([ether(f) for f in frames + conn.close()])})
    _reconciled(outcome)
    assert "overlap-conflict" in str(outcome.tables["connections"][0]["status"])
    assert outcome.tables["packets"][0]["type"] == "CONNECT"


def test_gap_then_resync_and_flow_judging_stops(tmp_path: Path) -> None:
    conn = Conn()
    frames = [*conn.handshake(), conn.segment("c2s", connect()), conn.segment("s2c", CONNACK)]
    conn.segment("c2s", publish("lost", b"x" * 20, qos=2, packet_id=3))  # not in the capture
    frames += [
        conn.segment("c2s", ack("PUBREL", 3)),  # would be "before PUBREC" if judged
        conn.segment("c2s", publish("seen", b"y")),
    ]
    outcome = run_check(tmp_path, {"g.pcap": pcap([ether(f) for f in frames + conn.close()])})
    rec = _reconciled(outcome)
    assert rec["bytes_missing"] == len(publish("lost", b"x" * 20, qos=2, packet_id=3))
    assert [r["type"] for r in outcome.tables["packets"]] == [
        "CONNECT",
        "CONNACK",
        "PUBREL",
        "PUBLISH",
    ]
    assert outcome.tables["violations"] == []
    assert "gaps" in str(outcome.tables["connections"][0]["status"])


def test_gap_in_mid_packet_hunts_until_a_whole_segment(tmp_path: Path) -> None:
    conn = Conn()
    frames = [*conn.handshake(), conn.segment("c2s", connect())]
    big = publish("t", b"q" * 100)
    frames.append(conn.segment("c2s", big[:40]))
    conn.segment("c2s", big[40:70])  # lost
    frames.append(conn.segment("c2s", big[70:]))  # the rest of the packet: not a packet start
    frames.append(conn.segment("c2s", publish("next", b"n")))
    outcome = run_check(tmp_path, {"h.pcap": pcap([ether(f) for f in frames + conn.close()])})
    _reconciled(outcome)
    assert [r["topic"] for r in outcome.tables["packets"]] == [None, "next"]
    assert _unparsed(outcome) == {"gap": 40 + len(big) - 70}  # before and after the hole


def test_capture_started_mid_connection(tmp_path: Path) -> None:
    conn = Conn()
    conn.handshake()
    conn.segment("c2s", connect())
    conn.segment("s2c", CONNACK)
    tail = publish("t", b"z" * 50)
    frames = [
        conn.segment("c2s", tail[20:]),  # the end of a packet: skipped
        conn.segment("c2s", publish("x", b"1", qos=1, packet_id=4)),
        conn.segment("s2c", ack("PUBACK", 4)),
        *conn.close(),
    ]
    outcome = run_check(tmp_path, {"m.pcap": pcap([ether(f) for f in frames])})
    _reconciled(outcome)
    row = outcome.tables["connections"][0]
    assert "started-mid-connection" in str(row["status"])
    assert row["client"] == "10.0.0.1:50000"
    assert [r["type"] for r in outcome.tables["packets"]] == ["PUBLISH", "PUBACK"]
    assert _unparsed(outcome) == {"mid-connection": len(tail) - 20}


def test_four_tuple_reuse_gives_a_new_connection(tmp_path: Path) -> None:
    first = _basic(Conn())
    second = _basic(Conn(isn={"c2s": 900_000, "s2c": 7}))
    retransmitted_syn = [second[0]]
    outcome = run_check(
        tmp_path, {"r.pcap": pcap([ether(f) for f in first + second + retransmitted_syn])}
    )
    _reconciled(outcome)
    ids = [r["connection"] for r in outcome.tables["connections"]]
    assert ids == ["r.pcap:10.0.0.1:50000-10.0.0.2:1883#0", "r.pcap:10.0.0.1:50000-10.0.0.2:1883#1"]
    assert [r["frames"] for r in outcome.tables["connections"]] == [9, 10]


def test_not_mqtt_on_the_mqtt_port(tmp_path: Path) -> None:
    conn = Conn()
    frames = _session(
        conn,
        ("c2s", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("s2c", b"HTTP/1.1 400 Bad Request\r\n\r\n"),
    )
    outcome = run_check(
        tmp_path,
        {"h.pcap": pcap([ether(f) for f in frames + _basic(Conn(client=("10.0.0.9", 1)))])},
    )
    rec = _reconciled(outcome)
    bad = outcome.rows("connections", client="10.0.0.1:50000")[0]
    assert bad["status"] == "not-mqtt" and bad["packets"] == 0
    assert rec["bytes_unparsed_by_reason"] == {"not-mqtt": 27 + 28}
    assert len(outcome.tables["packets"]) == 4  # the other connection goes on


def test_tls_on_8883_is_counted_not_parsed(tmp_path: Path) -> None:
    conn = Conn(server=("10.0.0.2", 8883))
    hello = b"\x16\x03\x01\x00\x05hello"
    frames = _session(conn, ("c2s", hello), ("s2c", b"\x16\x03\x03\x00\x02ok"))
    outcome = run_check(tmp_path, {"t.pcap": pcap([ether(f) for f in frames])})
    rec = _reconciled(outcome)
    assert outcome.tables["connections"][0]["status"] == "encrypted-tls"
    assert rec["bytes_unparsed_by_reason"] == {"encrypted-tls": len(hello) + 7}
    assert outcome.tables["packets"] == []


def test_mqtt_on_another_port_is_found_by_its_connect(tmp_path: Path) -> None:
    mqtt = _basic(Conn(server=("10.0.0.2", 9999)))
    other = _session(
        Conn(client=("10.0.0.3", 2), server=("10.0.0.4", 80)),
        ("c2s", b"GET / HTTP/1.0\r\n\r\n"),
        ("s2c", b"HTTP/1.0 200 OK\r\n\r\n"),
    )
    outcome = run_check(tmp_path, {"p.pcap": pcap([ether(f) for f in mqtt + other])})
    rec = _reconciled(outcome)
    assert [r["server"] for r in outcome.tables["connections"]] == ["10.0.0.2:9999"]
    (q,) = outcome.tables["quarantine"]
    assert (q["reason"], q["frames"], q["frame"], q["last_frame"]) == ("tcp-not-mqtt", 7, 10, 16)
    assert rec["frames_in"] == 16


def test_mqtt_ports_option(tmp_path: Path) -> None:
    frames = [ether(f) for f in _basic(Conn(server=("10.0.0.2", 1884)))]
    mid = frames[:1] + frames[3:]  # no SYN-ACK/ACK: still found by its CONNECT
    outcome = run_check(tmp_path, {"p.pcap": pcap(mid)}, ports=frozenset({1884}))
    _reconciled(outcome)
    assert len(outcome.tables["packets"]) == 4


def test_rst_closes(tmp_path: Path) -> None:
    conn = Conn()
    frames = [*conn.handshake(), conn.segment("c2s", connect())]
    frames.append(conn.segment("s2c", b"", flags=RST))
    outcome = run_check(tmp_path, {"x.pcap": pcap([ether(f) for f in frames])})
    _reconciled(outcome)
    assert outcome.tables["connections"][0]["closed"] == "rst"


def test_a_packet_spanning_segments_is_reported_at_its_last_frame(tmp_path: Path) -> None:
    conn = Conn()
    big = publish("span", b"s" * 3000, qos=1, packet_id=2)
    frames = [*conn.handshake(), conn.segment("c2s", connect())]
    frames += [conn.segment("c2s", big[i : i + 1000]) for i in range(0, len(big), 1000)]
    outcome = run_check(tmp_path, {"b.pcapng": pcapng([(0, ether(f)) for f in frames])})
    _reconciled(outcome)
    row = outcome.rows("packets", type="PUBLISH")[0]
    assert (row["first_frame"], row["frame"], row["payload_len"]) == (5, 8, 3000)
    assert row["offset"] == len(connect())
    assert "open-at-end" in str(outcome.tables["connections"][0]["status"])
    assert _unparsed(outcome) == {}


# -- the reassembler alone ---------------------------------------------------------------


def test_stream_window_gives_up_a_hole() -> None:
    stream = Stream(window_bytes=10, window_segments=100)
    stream.syn(99)
    stream.segment(100 + 5, b"B" * 6, 6, 2)  # waits for bytes 0..4
    assert stream.take() == []
    stream.segment(100 + 11, b"C" * 6, 6, 3)  # the window overflows: 0..4 are lost
    assert stream.take() == [Gap(0, 5, 3), Data(5, b"B" * 6, 2, True), Data(11, b"C" * 6, 3, True)]
    assert (stream.missing, stream.captured) == (5, 12)


@st.composite
def _resent_streams(draw: st.DrawFn) -> tuple[bytes, list[tuple[int, bytes]]]:
    """A stream of bytes and the segments that carry it in order, with retransmissions
    of earlier bytes among them (some altered): small and large segments, so that the
    history is trimmed past 2 * HISTORY bytes and joined past HISTORY_CHUNKS payloads."""
    rng = random.Random(draw(st.integers(0, 2**32 - 1)))
    small = draw(st.booleans())
    total = draw(st.one_of(st.integers(1, 5000), st.integers(2 * HISTORY, 3 * HISTORY)))
    data = rng.randbytes(total)
    segments: list[tuple[int, bytes]] = []
    at = kept = 0  # the bytes delivered, and where the history starts
    while at < total:
        size = rng.randint(1, 300 if small else 4000)
        segments.append((at, data[at : at + size]))
        at += size
        if at - kept > 2 * HISTORY:
            kept = at - HISTORY
        if rng.random() < 0.1:  # a copy of earlier bytes, up to 2 * HISTORY back
            edge = rng.random() < 0.5 and kept > 0
            # or from a byte or two about where the history starts, altered there
            start = kept + rng.randint(-2, 1) if edge else max(0, at - rng.randint(1, 2 * HISTORY))
            copy = bytearray(data[start : min(at, start + rng.randint(1, 3000))])
            if not copy:  # (the last segment ran past the stream's end: nothing to resend)
                continue
            if rng.random() < 0.5:
                copy[0 if edge else rng.randrange(len(copy))] ^= 0xFF
            segments.append((start, bytes(copy)))
    return data, segments


@settings(max_examples=60, deadline=None)
@given(_resent_streams())
def test_a_retransmission_is_compared_with_the_last_bytes_delivered(
    stream_segments: tuple[bytes, list[tuple[int, bytes]]],
) -> None:
    """[the reassembler] a copy of bytes already delivered conflicts when it differs from
    them within the history: the bytes from where the history starts (the last HISTORY
    once it passed 2 * HISTORY) to the last delivered, whatever segments carried them."""
    data, segments = stream_segments
    stream = Stream()
    stream.syn(999)
    delivered = start = conflicts = duplicate = 0
    got: list[bytes] = []
    for frame, (offset, payload) in enumerate(segments, 1):
        seq = (1000 + offset) & 0xFFFFFFFF
        if offset == delivered and stream.accept(seq, payload) >= 0:  # as Connection does
            got.append(payload)
        else:
            stream.segment(seq, payload, len(payload), frame)
            got += [e.data for e in stream.take() if isinstance(e, Data)]
        if offset < delivered:  # what the model says of a copy
            duplicate += min(len(payload), delivered - offset)
            lo, hi = max(offset, start), min(offset + len(payload), delivered)
            if lo < hi and data[lo:hi] != payload[lo - offset : hi - offset]:
                conflicts += 1
        delivered = max(delivered, offset + len(payload))
        if delivered - start > 2 * HISTORY:
            start = delivered - HISTORY
    assert (stream.conflicts, stream.duplicate, stream.next) == (conflicts, duplicate, len(data))
    assert b"".join(got) == data


def test_stream_sequence_numbers_wrap() -> None:
    stream = Stream()
    stream.syn(0xFFFFFFF0)
    stream.segment(0xFFFFFFF1, b"a" * 20, 20, 1)
    stream.segment((0xFFFFFFF1 + 20) & 0xFFFFFFFF, b"b" * 5, 5, 2)
    assert [e.offset for e in stream.take()] == [0, 20]


def test_dissect_reads_what_the_builder_writes() -> None:
    frame = ether(ipv4("192.168.1.2", "10.1.1.1", tcp(1234, 1883, 77, 0, SYN | ACK | FIN)))
    assert dissect(1, frame) == Segment(
        "192.168.1.2", 1234, "10.1.1.1", 1883, 77, SYN | ACK | FIN, b"", 0
    )
    assert dissect(1, frame[:30]) == "truncated-header"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", False),
        (b"\x10", True),
        (b"\x10\x10\x00\x04MQ", True),
        (connect(), True),
        (connect(level=3), True),
        (b"\x10\x10\x00\x04HTTP", False),
        (b"GET / HTTP/1.1", False),
        (b"\x10\xff\xff\xff\xff\x7f", False),
    ],
)
def test_is_connect_start(data: bytes, expected: bool) -> None:
    from pubproof.pipeline.detect import is_connect_start

    assert is_connect_start(data) is expected
