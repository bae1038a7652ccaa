"""The per-connection fast path (``Connection.FAST``) writes exactly the rows the general
path writes.

The fast path hands an in-order segment's bytes straight to the framer (without the
stream's events), cuts whole packets out of a segment itself, skips the framer's cutting
while a packet is still incomplete, and decodes the PUBLISH family straight into rows
through a decoder kept per connection. Each of these must be invisible in the tables:
the same packets, violations with the same evidence, connections with the same counts.
Both paths run on synthetic captures (reordering, retransmissions, cuts inside headers,
injected faults) and on random single connections (gaps, snapshot cuts, overlaps,
malformed and out-of-scope packets), and mutants of the fast path are caught."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.builds import pure_only
from support.fast_path import both_paths, keyed_capture

from pubproof.model.wire import encode_remaining_length
from pubproof.pipeline.connection import Connection
from pubproof.pipeline.connection_state import Config
from pubproof.pipeline.dissect import ACK, FIN, SYN, Segment
from pubproof.pipeline.framing import Framer, short_packets
from pubproof.pipeline.reassembly import Data, Stream
from pubproof.pipeline.synth import SynthConfig, generate

pytestmark = pure_only


@pytest.mark.parametrize(
    ("seed", "extra"),
    [
        (1, {}),
        (2, {"reorder": 0.2, "retransmit": 0.2, "split": 0.6}),
        (3, {"coalesce": 0.9, "split": 0.9, "mss": 97}),
        (4, {"payload_sizes": ((3000, 1.0), (70_000, 0.2)), "burst": 6}),
    ],
)
def test_synthetic_captures_give_the_same_rows(
    tmp_path: Path, seed: int, extra: dict[str, Any]
) -> None:
    config = SynthConfig(seed=seed, frames=2500, connections=12, concurrent=6, **extra)
    generate(config, tmp_path / "s.pcap")
    rows = both_paths(keyed_capture(tmp_path / "s.pcap"))
    assert len(rows["packets"]) > 500
    assert rows["violations"], "the injected faults are found"


# -- random single connections -------------------------------------------------------------

CLIENT, SERVER = ("10.0.0.1", 40000), ("10.0.0.2", 1883)


def _publish(qos: int, pid: int, topic: bytes, payload_len: int, first_flags: int) -> bytes:
    body = len(topic).to_bytes(2, "big") + topic
    if qos:
        body += pid.to_bytes(2, "big")
    body += bytes(range(256)) * (payload_len // 256) + bytes(payload_len % 256)
    return bytes([0x30 | qos << 1 | first_flags]) + encode_remaining_length(len(body)) + body


CONNECT = bytes.fromhex("101000044d5154540402003c000463312d31")
PACKETS = st.one_of(
    st.builds(
        _publish,
        st.integers(0, 2),
        st.integers(0, 4),  # identifier 0 is a violation
        st.sampled_from([b"a/b", b"t", b"", b"a/+", b"\xff", "\u00e9/x".encode()]),
        st.one_of(st.integers(0, 40), st.integers(100, 400), st.just(20_000)),
        st.sampled_from([0, 1, 8, 9]),
    ),
    st.builds(
        lambda first, pid: bytes([first, 2]) + pid.to_bytes(2, "big"),
        st.sampled_from([0x40, 0x50, 0x62, 0x70, 0x60, 0x41]),  # 0x60, 0x41: bad flags
        st.integers(0, 4),
    ),
    st.sampled_from(
        [
            b"\xc0\x00",
            b"\xd0\x00",
            b"\x20\x02\x00\x00",
            b"\x82\x06\x00\x01\x00\x01a\x01",
            b"\x40\x03\x00\x01\x00",  # PUBACK with Remaining Length 3
            b"\xf0\x00",  # reserved type: framing stops
            b"\x30\xff\xff\xff\xff\x01",  # five Remaining Length bytes: framing stops
        ]
    ),
)


@st.composite
def connections(draw: st.DrawFn) -> list[tuple[str, int, Any]]:
    """One connection's segments in capture order, both directions, with the TCP
    mishaps the fast path must step aside for."""
    isn = {"c2s": draw(st.integers(0, 2**32 - 1)), "s2c": draw(st.integers(0, 2**32 - 1))}
    key = "k"
    out: list[tuple[str, int, Any]] = []
    frame = 1

    def seg(direction: str, seq: int, flags: int, payload: bytes, carried: int) -> None:
        nonlocal frame
        src, dst = (CLIENT, SERVER) if direction == "c2s" else (SERVER, CLIENT)
        out.append(
            (key, frame, Segment(src[0], src[1], dst[0], dst[1], seq, flags, payload, carried))
        )
        frame += 1

    seg("c2s", isn["c2s"], SYN, b"", 0)
    seg("s2c", isn["s2c"], SYN | ACK, b"", 0)
    streams = {"c2s": CONNECT, "s2c": b"\x20\x02\x00\x00"}
    for direction in ("c2s", "s2c"):
        streams[direction] += b"".join(draw(st.lists(PACKETS, max_size=10)))
    pieces: list[tuple[str, int, bytes]] = []
    for direction, data in streams.items():
        pos = 0
        while pos < len(data):
            size = draw(st.sampled_from([1, 2, 3, 7, 60, 536, 1460, 5000]))
            pieces.append((direction, pos, data[pos : pos + size]))
            pos += size
    # interleave the two directions, keeping each one's order, then disturb it
    order = draw(st.permutations(range(len(pieces))))
    by_direction = {d: [p for p in pieces if p[0] == d] for d in streams}
    taken = {d: 0 for d in streams}
    for index in order:
        direction = pieces[index][0]
        piece = by_direction[direction][taken[direction]]
        taken[direction] += 1
        _, pos, data = piece
        seq = (isn[direction] + 1 + pos) & 0xFFFFFFFF
        mishap = draw(st.sampled_from(["none"] * 8 + ["drop", "twice", "late", "cut", "overlap"]))
        if mishap == "drop":
            continue
        if mishap == "cut" and len(data) > 1:
            seg(direction, seq, ACK, data[: len(data) // 2], len(data))
            continue
        if mishap == "overlap" and pos:
            back = min(pos, 3)
            earlier = streams[direction][pos - back : pos]
            seg(direction, (seq - back) & 0xFFFFFFFF, ACK, earlier + data, back + len(data))
            continue
        if mishap == "late" and len(out) > 2:
            last = out.pop()
            seg(direction, seq, ACK, data, len(data))
            out.append((key, frame, last[2]))
            frame += 1
            continue
        seg(direction, seq, ACK, data, len(data))
        if mishap == "twice":
            seg(direction, seq, ACK, data, len(data))
    if draw(st.booleans()):
        end = (isn["c2s"] + 1 + len(streams["c2s"])) & 0xFFFFFFFF
        seg("c2s", end, FIN | ACK, b"", 0)
    return out


@settings(max_examples=300, deadline=None)
@given(connections())
def test_random_connections_give_the_same_rows(keyed: list[tuple[str, int, Any]]) -> None:
    both_paths(keyed)


@settings(max_examples=60, deadline=None)
@given(connections(), st.sampled_from(["3.1", "3.1.1"]))
def test_forced_edition_and_readings_give_the_same_rows(
    keyed: list[tuple[str, int, Any]], edition: str
) -> None:
    from pubproof.model.editions import Edition

    readings = (("topic-rules", "as-3.1.1"), ("dup-qos0", "reject"))
    both_paths(keyed, Config(edition=Edition(edition), readings=readings))


# -- mutants of the fast path are caught -------------------------------------------------------


def _reordered() -> list[tuple[str, int, Any]]:
    """A CONNECT, then two PUBLISHes whose segments arrive swapped, the server's PUBACK of
    the second, and a third PUBLISH."""
    first, second, third = (_publish(1, i, b"t", 10, 0) for i in (1, 2, 3))
    c, s = CLIENT, SERVER
    at = 1001 + len(CONNECT)
    segments = [
        Segment(c[0], c[1], s[0], s[1], 1000, SYN, b"", 0),
        Segment(s[0], s[1], c[0], c[1], 5000, SYN | ACK, b"", 0),
        Segment(c[0], c[1], s[0], s[1], 1001, ACK, CONNECT, len(CONNECT)),
        Segment(c[0], c[1], s[0], s[1], at + len(first), ACK, second, len(second)),
        Segment(c[0], c[1], s[0], s[1], at, ACK, first, len(first)),
        Segment(s[0], s[1], c[0], c[1], 5001, ACK, b"\x40\x02\x00\x02", 4),  # PUBACK 2
        Segment(c[0], c[1], s[0], s[1], at + 2 * len(first), ACK, third, len(third)),
    ]
    return [("k", i + 1, seg) for i, seg in enumerate(segments)]


def _spanning() -> list[tuple[str, int, Any]]:
    """A CONNECT, then one PUBLISH of 3,000 bytes in three segments."""
    big = _publish(1, 7, b"big", 3000, 0)
    c, s = CLIENT, SERVER
    segments = [
        Segment(c[0], c[1], s[0], s[1], 1000, SYN, b"", 0),
        Segment(c[0], c[1], s[0], s[1], 1001, ACK, CONNECT, len(CONNECT)),
    ]
    pos = 0
    while pos < len(big):
        piece = big[pos : pos + 1200]
        segments.append(
            Segment(c[0], c[1], s[0], s[1], 1001 + len(CONNECT) + pos, ACK, piece, len(piece))
        )
        pos += 1200
    return [("k", i + 1, seg) for i, seg in enumerate(segments)]


def _mutant_accept_ignores_waiting(self: Stream, seq: int, payload: bytes) -> int:
    """Takes a segment at the next byte even while later ones wait."""
    if self.base is None or (seq - self.base - self.next) & 0xFFFFFFFF:
        return -1
    offset = self.next
    self.captured += len(payload)
    self.next = offset + len(payload)
    self.hist.append(payload)
    return offset


def _mutant_cut_uncounted(
    self: Connection, direction: str, frame: int, offset: int, data: bytes, framer: Framer
) -> None:
    """Cuts a segment's whole packets but does not count their bytes as framed."""
    size, pos = len(data), 0
    for end in short_packets(data):
        if self.declared is None:
            self._packet3(direction, frame, frame, offset + pos, data[pos:end], None)
        else:
            self._packet5(direction, frame, frame, offset + pos, data[pos:end], None)
        pos = end
    if pos < size:
        framer.event(Data(offset + pos, data[pos:] if pos else data, frame, not pos))
        for item in framer.take():
            self._item(direction, item)


@pytest.mark.parametrize(
    ("mutant", "capture"),
    [("accept-ignores-waiting", _reordered), ("cut-uncounted", _spanning)],
)
def test_mutants_of_the_fast_path_are_caught(
    monkeypatch: pytest.MonkeyPatch, mutant: str, capture: Any
) -> None:
    keyed = capture()
    both_paths(keyed)  # the fast path itself agrees
    if mutant == "accept-ignores-waiting":
        monkeypatch.setattr(Stream, "accept", _mutant_accept_ignores_waiting)
    else:
        monkeypatch.setattr(Connection, "_cut", _mutant_cut_uncounted)
    with pytest.raises(AssertionError):
        both_paths(keyed)
