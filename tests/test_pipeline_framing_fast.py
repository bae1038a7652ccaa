"""The framer's fast path (nothing buffered: packets cut straight from a segment's bytes)
cuts exactly what the buffered path cuts: the same packets, offsets, frames, unparsed
counts, on random streams of packets, long Remaining Lengths, reserved types and gaps."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.builds import pure_only

from pubproof.model.wire import encode_remaining_length
from pubproof.pipeline import framing
from pubproof.pipeline.framing import Framer, short_packets
from pubproof.pipeline.reassembly import Data, Gap

pytestmark = pure_only


class BufferedOnly(Framer):
    """The framer as it was: every event through the buffer, and the buffer cut after
    every event (``need``, the size of the packet begun, is never used to wait)."""

    def _whole(self, event: Data) -> None:
        self.start = event.offset
        self.buf += event.data
        self.chunks.append((event.offset, event.frame))
        self._cut()

    def _cut(self) -> None:
        super()._cut()
        self.need = 0


class NeedTooLarge(Framer):
    """A mutant: believes the packet begun needs one byte more than it does."""

    def _cut(self) -> None:
        super()._cut()
        if self.need:
            self.need += 1


PACKET = st.one_of(
    st.builds(lambda n: bytes([0x30]) + encode_remaining_length(n) + b"p" * n, st.integers(0, 300)),
    st.sampled_from([b"\x40\x02\x00\x01", b"\xc0\x00", b"\xd0\x00", b"\x62\x02\x00\x07"]),
    st.sampled_from([b"\x00\x00", b"\xf0\x00", b"\x30\xff\xff\xff\xff\x01"]),  # never framed
    st.binary(min_size=1, max_size=6),
)


@given(st.lists(PACKET, max_size=12), st.lists(st.integers(1, 200), max_size=8), st.data())
def test_fast_path_cuts_as_the_buffer_does(
    packets: list[bytes], cuts: list[int], data: st.DataObject
) -> None:
    stream = b"".join(packets)
    events: list[Data | Gap] = []
    pos, frame = 0, 1
    for cut in [*cuts, len(stream)]:
        if pos >= len(stream):
            break
        piece = stream[pos : pos + cut]
        if data.draw(st.integers(0, 9)) == 0:
            events.append(Gap(pos, len(piece), frame))
        else:
            events.append(Data(pos, piece, frame, data.draw(st.booleans())))
        pos, frame = pos + len(piece), frame + 1
    fast, slow = Framer(), BufferedOnly()
    for framer in (fast, slow):
        for event in events:
            framer.event(event)
        framer.finish()
    assert fast.take() == slow.take()
    assert (fast.framed, fast.unparsed, fast.state) == (slow.framed, slow.unparsed, slow.state)


def test_waiting_for_the_packet_begun_is_checked() -> None:
    """The comparison above catches a framer that waits for one byte too many."""
    packet = bytes([0x30]) + encode_remaining_length(300) + b"p" * 300
    events: list[Data | Gap] = [Data(0, packet[:100], 1, True), Data(100, packet[100:], 2, True)]
    real, mutant, slow = Framer(), NeedTooLarge(), BufferedOnly()
    for framer in (real, mutant, slow):
        for event in events:
            framer.event(event)
        framer.finish()
    assert real.take() == slow.take() != []
    assert mutant.take() == []  # the packet was never cut
    assert mutant.unparsed == {"incomplete": len(packet)}


def _short_packets_shifted(data: bytes | bytearray) -> Iterator[int]:
    """A mutant of :func:`short_packets`: a two-byte Remaining Length read with its second
    byte shifted by 8 bits, not 7."""
    size, pos = len(data), 0
    while pos + 1 < size:
        length, body = data[pos + 1], pos + 2
        if not 0 < data[pos] >> 4 <= 14:
            return
        if length & 0x80:
            if body >= size or data[body] & 0x80 or not data[body]:
                return
            length = (length & 0x7F) | data[body] << 8
            body += 1
        end = body + length
        if end > size:
            return
        yield end
        pos = end


def test_two_byte_remaining_lengths_are_cut_fast_and_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Packets of 128 to 16,383 bytes are cut by the fast path (one segment, no buffer),
    as the buffered path cuts them; a mutant reading the second byte wrong is caught by the
    comparison above."""
    packets = [bytes([0x30]) + encode_remaining_length(n) + b"p" * n for n in (127, 128, 300)]
    packets.append(bytes([0x30, 0xFF, 0x7F]) + b"q" * 16383)  # the largest of two bytes
    packets.append(bytes([0x30, 0x80, 0x00]))  # 0 in two bytes: left to the buffered path
    stream = b"".join([*packets, b"\x40\x02\x00\x01"])
    assert list(short_packets(stream)) == [129, 260, 563, 16949]
    events: list[Data | Gap] = [Data(0, stream, 1, True)]

    def cut(framer: Framer) -> list[Any]:
        for event in events:
            framer.event(event)
        framer.finish()
        return [(item.offset, item.data) for item in framer.take()]

    expected = cut(BufferedOnly())
    assert cut(Framer()) == expected and len(expected) == 6
    monkeypatch.setattr(framing, "short_packets", _short_packets_shifted)
    assert cut(Framer()) != expected


def _events(packets: list[bytes], cuts: list[int], data: st.DataObject) -> list[Data | Gap]:
    stream = b"".join(packets)
    events: list[Data | Gap] = []
    pos, frame = 0, 1
    for cut in [*cuts, len(stream)]:
        if pos >= len(stream):
            break
        piece = stream[pos : pos + cut]
        if data.draw(st.integers(0, 9)) == 0:
            events.append(Gap(pos, len(piece), frame))
        else:
            events.append(Data(pos, piece, frame, True))
        pos, frame = pos + len(piece), frame + 1
    return events


class CompleteDropsAByte(Framer):
    """A mutant: :meth:`Framer.complete` says it took the packet's missing bytes but
    buffers one fewer (the byte is lost)."""

    def complete(self, offset: int, data: bytes, frame: int) -> int:
        need = self.need
        if not need or self.state != "sync":
            return 0
        missing = need - len(self.buf)
        if missing <= 0 or missing > len(data):
            return 0
        self.buf += data[: missing - 1]
        self.chunks.append((offset, frame))
        self._cut()
        return missing


def _completing(framer: Framer, events: list[Data | Gap]) -> list[Any]:
    """The events as the connection's fast path hands them over: a packet begun completed
    with :meth:`Framer.complete`, the rest framed with nothing buffered."""
    items: list[Any] = []
    for event in events:
        if isinstance(event, Data) and framer.buf:
            taken = framer.complete(event.offset, event.data, event.frame)
            if taken:
                items += framer.take()
                if taken < len(event.data):
                    rest = Data(event.offset + taken, event.data[taken:], event.frame, False)
                    framer.event(rest)
                items += framer.take()
                continue
        framer.event(event)
        items += framer.take()
    framer.finish()
    return [*items, *framer.take(), framer.framed, framer.unparsed, framer.state]


@given(st.lists(PACKET, max_size=12), st.lists(st.integers(1, 200), max_size=8), st.data())
def test_completing_the_packet_begun_cuts_as_the_buffer_does(
    packets: list[bytes], cuts: list[int], data: st.DataObject
) -> None:
    events = _events(packets, cuts, data)
    slow = BufferedOnly()
    for event in events:
        slow.event(event)
    slow.finish()
    expected = [*slow.take(), slow.framed, slow.unparsed, slow.state]
    assert _completing(Framer(), events) == expected


def test_a_mutant_losing_a_byte_while_completing_is_caught() -> None:
    """The check above catches :meth:`Framer.complete` losing a byte of the packet."""
    packet = bytes([0x30]) + encode_remaining_length(300) + b"p" * 300
    ack = b"\x40\x02\x00\x01"
    events: list[Data | Gap] = [
        Data(0, packet[:100], 1, True),
        Data(100, packet[100:] + ack, 2, True),
    ]
    slow = BufferedOnly()
    for event in events:
        slow.event(event)
    slow.finish()
    expected = [*slow.take(), slow.framed, slow.unparsed, slow.state]
    assert _completing(Framer(), events) == expected
    assert _completing(CompleteDropsAByte(), events) != expected
