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
- the close judge likewise (:class:`~pubproof.probe.check.Closes`: a close's finding rests
  on what came before it);
- the distribution judge is fed the new entries' events
  (:class:`~pubproof.judge.distribution_events.ProbeEvents`) and asked what it would find
  were the evidence to end here (:meth:`~pubproof.judge.distribution.DistributionJudge.
  so_far`, which leaves it as it was); the Method A reading of a distribution violation
  (:func:`.verdicts.concluded`) is a second distribution judge fed the reading as it grows
  (:class:`.verdicts.MethodA`: a PUBREC held until its PUBREL), made the first time a
  violation asks for it;
- the invalid move's close judge reads the whole evidence, but only once the example made
  its invalid move (before it, it finds nothing);
- whether the broker is alive after the last wait that ran out is kept as the entries come.

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

from pubproof.judge.distribution import DistributionJudge
from pubproof.judge.distribution_events import ProbeEvents
from pubproof.judge.findings import VIOLATION, Finding
from pubproof.model.editions import Edition
from pubproof.probe.check import Closes, probe_findings
from pubproof.probe.evidence import LIVENESS_CLIENT, Entry, received
from pubproof.probe.judge50 import frame_findings50
from pubproof.probe.judge_link import WAIT_EVENTS, ClientLink
from pubproof.probe.judge_wire import frame_findings
from pubproof.probe.view import View
from pubproof.testing.verdicts import EXPLORE, MethodA, Verdict, concluded, key_of


class _Distribution:
    """A distribution judge fed the events of evidence that grows."""

    __slots__ = ("events", "judge")

    def __init__(self, readings: Mapping[str, str], *, passes: bool) -> None:
        self.events = ProbeEvents()
        self.judge = DistributionJudge(readings, complete=True, passes=passes)

    def so_far(self, entries: Sequence[Entry]) -> list[Finding]:
        """The judge's findings on ``entries``, fed the entries not read yet."""
        for event in self.events.read(entries):
            self.judge.feed(event)
        return self.judge.so_far()


class Judging:
    """One example's judges while it runs: :meth:`verdict` on the evidence so far."""

    __slots__ = (
        "alive", "cased", "closes", "distribution", "edition", "fed", "frames", "last_wait",
        "links", "method_a", "method_a_judge", "probe", "readings",
    )  # fmt: skip

    def __init__(self, edition: Edition, readings: Mapping[str, str]) -> None:
        self.edition = edition
        self.readings = readings
        self.fed = 0  # the entries read so far
        self.probe: list[Finding] = []
        self.frames: list[Finding] = []
        self.links: dict[str, ClientLink] = {}  # in the order the clients appear
        self.last_wait = -1  # the index of the last wait event read
        self.closes = Closes(edition)
        self.distribution = _Distribution(readings, passes=EXPLORE.distribution)
        #: the Method A reading and its judge, once a distribution violation asks for them
        self.method_a: MethodA | None = None
        self.method_a_judge: _Distribution | None = None
        self.cased = False  # the example made its invalid move
        #: the broker sent something after the last wait that ran out (or none ran out)
        self.alive = True

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
        self.closes.feed(entries)
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
            event = entry.get("event")
            if event in WAIT_EVENTS:
                self.last_wait = index
                if event != "quiet":  # a wait that ran out (View.broker_alive)
                    self.alive = False
            if received(entry):
                self.alive = True
            self.cased = self.cased or bool(entry.get("case"))
        self.fed = len(entries)

    def _method_a_keys(self, entries: Sequence[Entry]) -> set[str]:
        """The keys of the distribution violations on the Method A reading of ``entries``."""
        if self.method_a is None or self.method_a_judge is None:
            self.method_a = MethodA()
            self.method_a_judge = _Distribution(self.readings, passes=False)
        self.method_a.feed(entries)
        found = self.method_a_judge.so_far(self.method_a.entries)
        return {key_of(f) for f in found if f.verdict == VIOLATION}

    def verdict(self, entries: Sequence[Entry]) -> Verdict:
        """The judges on the evidence so far, while the example runs (violations only
        fail: an answer may still be on its way)."""
        view = View(entries, self.edition, self.readings)
        self.feed(view)
        found = [
            *self.probe,
            *self.frames,
            *(f for link in self.links.values() for f in link.findings),
            *self.closes.findings,
            *self.distribution.so_far(entries),
            *(EXPLORE.judge(view) if self.cased else ()),
        ]
        return concluded(
            found, view, final=False, method_a=lambda: self._method_a_keys(entries),
            alive=self.alive,
        )  # fmt: skip
