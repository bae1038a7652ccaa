"""The judges of one example, fed its evidence as it grows (judging after every move).

Rules / theory of operation
---------------------------
After every move the exploration asks whether the evidence so far holds a violation
(:mod:`.machine`). Judging the whole evidence each time costs the square of the example's
length (the cube for MQTT 5.0, whose wire judge looks back for the limits each receiver
declared), so a :class:`Judging` keeps what it has read and reads only what is new:

- the judges whose finding on an entry rests on that entry and those before it, never on
  those after (the probe's own findings, the wire format: ``start`` tells them where the
  new entries begin), keep their findings;
- the flow tables' link judges are state machines fed packet by packet
  (:class:`~pubproof.probe.judge_link.ClientLink`): each client's judge is kept and fed
  only the new entries; one made when its client first appears starts at the last wait
  before it, as one fed every entry from the start would;
- the close judge, the distribution judge and the invalid move's close judge read the
  whole evidence each time (their findings on an entry depend on what follows it), as
  does the Method A reading of a distribution violation (:func:`.verdicts.concluded`).

The findings keep the order of :func:`pubproof.probe.check.all_findings`, so the first
failure is the same one. What a judgement while the example runs leaves out is what it
does not count: the link judges' *missing* answers, owed when a connection ends, which
only the end of the example counts (:func:`.verdicts.judge_example`, on the whole
evidence, once). ``tests/test_explore_judging.py`` holds the two ways equal on recorded
examples, after every move.

The evidence must only grow (the recorder's list): an entry already read is not read
again, so one changed after it was read is not seen (:class:`~.world.World` changes only
the last entry, a ``closed`` it turns into ``dropped``, within the move that recorded it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pubproof.judge.findings import Finding
from pubproof.model.editions import Edition
from pubproof.probe.check import close_findings, distribution_findings, probe_findings
from pubproof.probe.evidence import LIVENESS_CLIENT, Entry
from pubproof.probe.judge50 import frame_findings50
from pubproof.probe.judge_link import WAIT_EVENTS, ClientLink
from pubproof.probe.judge_wire import frame_findings
from pubproof.probe.view import View
from pubproof.testing.verdicts import EXPLORE, Verdict, concluded


class Judging:
    """One example's judges while it runs: :meth:`verdict` on the evidence so far."""

    __slots__ = ("edition", "fed", "frames", "last_wait", "links", "probe", "readings")

    def __init__(self, edition: Edition, readings: Mapping[str, str]) -> None:
        self.edition = edition
        self.readings = readings
        self.fed = 0  # the entries read so far
        self.probe: list[Finding] = []
        self.frames: list[Finding] = []
        self.links: dict[str, ClientLink] = {}  # in the order the clients appear
        self.last_wait = -1  # the index of the last wait event read

    def feed(self, view: View) -> None:
        """Read the entries of ``view`` not read yet."""
        start, entries = self.fed, view.entries
        if start > len(entries):
            raise ValueError(f"the evidence shrank: {len(entries)} entries, {start} read")
        if start == len(entries):
            return
        self.probe += probe_findings(view, start)
        if self.edition is Edition.V50:
            self.frames += frame_findings50(view, start=start)
        else:
            self.frames += frame_findings(view, start)
        v311 = self.edition is Edition.V311
        for index in range(start, len(entries)):
            entry = entries[index]
            name = entry.get("client")
            if isinstance(name, str) and name != LIVENESS_CLIENT and name not in self.links:
                link = ClientLink(name, v311=v311, edition=self.edition)
                link.last_wait = self.last_wait  # the waits before it, as if fed them
                self.links[name] = link
            for link in self.links.values():
                link.feed(index, entry)
            if entry.get("event") in WAIT_EVENTS:
                self.last_wait = index
        self.fed = len(entries)

    def verdict(self, entries: Sequence[Entry]) -> Verdict:
        """The judges on the evidence so far, while the example runs (violations only
        fail: an answer may still be on its way)."""
        view = View(entries, self.edition, self.readings)
        self.feed(view)
        found = [
            *self.probe,
            *self.frames,
            *(f for link in self.links.values() for f in link.findings),
            *close_findings(view),
            *distribution_findings(view, passes=EXPLORE.distribution),
            *EXPLORE.judge(view),
        ]
        return concluded(found, view, final=False)
