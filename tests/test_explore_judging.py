"""pubproof explore's judging while an example runs (:mod:`pubproof.testing.judging`, fed
only what each move added) against the whole-example judging it replaces
(:func:`pubproof.testing.verdicts.judge_example` on the evidence so far), on real
conversations with brokers: every check the matrix pinned for each broker and edition
(``docs/matrix/evidence/``), judged after every entry, and evidence with a violation in
the middle of it. The same failures, the same findings, in the same order."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import pytest

from pubproof.judge.distribution import DistributionJudge
from pubproof.judge.distribution_events import from_probe
from pubproof.judge.findings import VIOLATION, Finding
from pubproof.model.editions import Edition, resolve_readings
from pubproof.probe.check import all_findings
from pubproof.probe.evidence import Entry
from pubproof.probe.judge_link import WAIT_EVENTS, ClientLink
from pubproof.probe.view import View
from pubproof.testing.judging import Judging, _Distribution
from pubproof.testing.verdicts import EXPLORE, Verdict, _method_a_keys, judge_example

EVIDENCE = Path(__file__).resolve().parent.parent / "docs" / "matrix" / "evidence"
#: the brokers the matrix probed (the other files are client libraries': another role)
BROKERS = ("aedes", "amqtt", "mosquitto", "rabbitmq")
FILES = sorted(
    p.name for p in EVIDENCE.glob("*.json") if re.match(rf"({'|'.join(BROKERS)})-\d", p.name)
)


@cache
def conversations(name: str) -> tuple[Edition, list[tuple[str, list[Entry]]]]:
    """The edition of a matrix evidence file and each check's evidence in it."""
    data = json.loads((EVIDENCE / name).read_text())
    return Edition(data["edition"]), [(c["id"], c["evidence"]) for c in data["checks"]]


class _Unfinished(View):
    """The whole-evidence view with its link judges not finished: what a link judge says
    while the evidence may still grow (its *missing* answers are the end's)."""

    @property
    def links(self) -> dict[str, ClientLink]:
        v311 = self.edition is Edition.V311
        judges = {n: ClientLink(n, v311=v311, edition=self.edition) for n in self.clients}
        for index, entry in enumerate(self.entries):
            for judge in judges.values():
                judge.feed(index, entry)
        return judges


def differences(
    entries: Sequence[Entry], edition: Edition, judging_class: type[Judging] = Judging,
    *, first: bool = False,
) -> list[str]:  # fmt: skip
    """Where judging ``entries`` as they grow, one entry at a time, differs from judging
    the whole of them so far: the failures (against :func:`judge_example`, the judging the
    incremental one replaces) and every finding (against all the judges on the whole
    evidence, link judges unfinished); ``first``: stop at the first difference."""
    readings = resolve_readings(edition, {})
    judging = judging_class(edition, readings)
    found: list[str] = []
    for end in range(1, len(entries) + 1):
        so_far = entries[:end]
        old = judge_example(so_far, edition, readings, final=False)
        new = judging.verdict(so_far)
        if new.failures != old.failures:
            found.append(f"after entry {end - 1}: failures {new.failures} != {old.failures}")
        if new.broker_alive != old.broker_alive:
            found.append(f"after entry {end - 1}: broker alive {new.broker_alive}")
        whole = all_findings(EXPLORE, _Unfinished(so_far, edition, readings))
        if _plain(new.findings) != _plain(whole):
            found.append(f"after entry {end - 1}: findings {new.findings} != {whole}")
        if found and first:
            break
    return found


def _plain(findings: Sequence[Finding]) -> list[tuple[str, str, tuple[str, ...]]]:
    """The findings without the Method A re-reading (which only the verdict makes)."""
    return [(f.verdict, f.message.split(" (as a Method A")[0], f.rules) for f in findings]


@pytest.mark.parametrize("name", FILES)
def test_judging_as_the_evidence_grows_equals_judging_it_whole(name: str) -> None:
    edition, checks = conversations(name)
    assert checks, f"{name} holds no check"
    for check_id, entries in checks:
        assert differences(entries, edition) == [], f"{name} {check_id}"


def _with_violations() -> list[tuple[Edition, str, list[Entry]]]:
    """The pinned checks in which a judge finds a violation, and their editions."""
    out = []
    for name in FILES:
        edition, checks = conversations(name)
        readings = resolve_readings(edition, {})
        for check_id, entries in checks:
            if judge_example(entries, edition, readings, final=False).failures:
                out.append((edition, f"{name} {check_id}", entries))
    return out


def test_the_conversations_hold_violations_of_every_kind_of_judge() -> None:
    """The differential test above has something to tell apart: the pinned checks fail
    the wire, link, close and distribution judges, mid-evidence and at a wait."""
    sources = set()
    for edition, _, entries in _with_violations():
        found = judge_example(entries, edition, resolve_readings(edition, {}), final=False)
        sources |= {f.source for f in found.findings if f.verdict == VIOLATION}
    assert {"link", "distribution", "close"} <= {str(s) for s in sources}, sources
    waits = sum(
        1 for name in FILES for _, entries in conversations(name)[1]
        for e in entries if e.get("event") in WAIT_EVENTS
    )  # fmt: skip
    assert waits > 0


class _DropsAPacket(Judging):
    """Mutant: the first packet of each move's new evidence never reaches the judges."""

    def feed(self, view: View) -> None:
        entries = list(view.entries)
        if self.fed < len(entries) and "dir" in entries[self.fed]:
            entries[self.fed] = {"event": "step", "t": entries[self.fed]["t"]}
        super().feed(View(entries, view.edition, view.readings))


class _ReadsTwice(Judging):
    """Mutant: the last entry read is read again with the new ones."""

    def feed(self, view: View) -> None:
        self.fed = max(0, self.fed - 1) if self.fed < len(view.entries) else self.fed
        super().feed(view)


class _ForgetsWhatItRead(Judging):
    """Mutant: the count of entries read is not kept (every judgement reads them all)."""

    def feed(self, view: View) -> None:
        super().feed(view)
        self.fed = 0


class _SortsTheClients(Judging):
    """Mutant: the link judges' findings by client name, not in the order they appear."""

    def feed(self, view: View) -> None:
        super().feed(view)
        self.links = dict(sorted(self.links.items()))


class _DistributionConsumed(Judging):
    """Mutant: the distribution judge's judgement so far is its ``finish``, which keeps the
    findings it adds (the next judgement repeats them)."""

    def verdict(self, entries: Sequence[Entry]) -> Verdict:
        self.distribution.judge.so_far = self.distribution.judge.finish  # type: ignore[method-assign]
        return super().verdict(entries)


class _DistributionFromTheStart(Judging):
    """Mutant: the distribution judge reads only each move's new events (a fresh judge
    every time, as if the example began there)."""

    def verdict(self, entries: Sequence[Entry]) -> Verdict:
        fed = self.distribution.events.fed
        self.distribution = _Distribution(self.readings, passes=True)
        self.distribution.events.fed = fed
        return super().verdict(entries)


class _ClosesForgetTheState(Judging):
    """Mutant: the close judge forgets, between moves, which connections are up."""

    def feed(self, view: View) -> None:
        self.closes.state.clear()
        super().feed(view)


class _NeverAlive(Judging):
    """Mutant: a wait that ran out does not count against the broker's sign of life."""

    def feed(self, view: View) -> None:
        super().feed(view)
        self.alive = True


class _NoCase(Judging):
    """Mutant: the invalid move's close judge is never asked."""

    def feed(self, view: View) -> None:
        super().feed(view)
        self.cased = False


def method_a_differences(
    entries: Sequence[Entry], edition: Edition, judging_class: type[Judging] = Judging
) -> list[str]:
    """Where the Method A reading's distribution violations, read as the evidence grows,
    differ from those of the reading of the whole evidence so far (the verdict asks for
    them only when a distribution violation stands: asked here after every entry)."""
    readings = resolve_readings(edition, {})
    judging = judging_class(edition, readings)
    found = []
    for end in range(1, len(entries) + 1):
        new = judging._method_a_keys(entries[:end])
        old = _method_a_keys(entries[:end], edition, readings)
        if new != old:
            found.append(f"after entry {end - 1}: Method A {new} != {old}")
    return found


def _qos2() -> list[tuple[Edition, str, list[Entry]]]:
    """The pinned checks in which the broker sent a PUBREC (a QoS 2 message taken)."""
    return [
        (edition, f"{name} {check_id}", entries)
        for name in FILES
        for edition, checks in [conversations(name)]
        for check_id, entries in checks
        if any(e.get("type") == "PUBREC" and e.get("dir") == "from-broker" for e in entries)
    ]


def test_the_method_a_reading_as_the_evidence_grows_equals_reading_it_whole() -> None:
    checks = _qos2()
    assert len(checks) > 10
    for edition, where, entries in checks:
        assert method_a_differences(entries, edition) == [], where


MUTANTS = [
    _DropsAPacket, _ReadsTwice, _ForgetsWhatItRead, _SortsTheClients, _DistributionConsumed,
    _DistributionFromTheStart, _ClosesForgetTheState, _NeverAlive, _NoCase,
]  # fmt: skip


@pytest.mark.parametrize("mutant", MUTANTS)
def test_a_mutant_of_the_incremental_judging_is_told_apart(mutant: type[Judging]) -> None:
    """Each mutant of :class:`Judging` differs from the whole-example judging on some
    pinned conversation: the differential test kills it."""
    for name in FILES:
        edition, checks = conversations(name)
        for _, entries in checks:
            if differences(entries, edition, mutant, first=True):
                return
    pytest.fail(f"the mutant {mutant.__doc__} survived every pinned conversation")


def test_the_evidence_may_not_shrink() -> None:
    edition, checks = conversations(FILES[0])
    entries = checks[0][1]
    readings = resolve_readings(edition, {})
    judging = Judging(edition, readings)
    judging.verdict(entries)
    with pytest.raises(ValueError, match="shrank"):
        judging.verdict(entries[:1])


def test_the_distribution_judgement_so_far_leaves_the_judge_as_it_was() -> None:
    """``so_far`` twice, then ``finish``: the same findings each time (a ``finish`` in its
    place would repeat them); a capture's judge has no judgement so far."""
    edition, checks = conversations("aedes-3.1.1.json")
    readings = resolve_readings(edition, {})
    for _, entries in checks:
        judge = DistributionJudge(readings, complete=True, passes=True)
        for event in from_probe(entries):
            judge.feed(event)
        first = judge.so_far()
        assert judge.so_far() == first == judge.finish()
    with pytest.raises(ValueError, match="once"):
        DistributionJudge(complete=False, capture=True).so_far()
