"""The framer's fast path (nothing buffered: packets cut straight from a segment's bytes)
cuts exactly what the buffered path cuts: the same packets, offsets, frames, unparsed
counts, on random streams of packets, long Remaining Lengths, reserved types and gaps."""

from __future__ import annotations

from builds import pure_only
from hypothesis import given
from hypothesis import strategies as st

from pubproof.model.wire import encode_remaining_length
from pubproof.pipeline.framing import Framer
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
