"""The readable link judges (:mod:`pubproof.judge`) and their compiled twins, which the
capture pipeline runs (:mod:`pubproof.pipeline.fast`), are the same judge: fed the same
packets, finding for finding (verdict, rules, message, source, role, in order), with the
same answers owed (as a multiset: the order they are listed in is no finding), the same
resolved topic and offence after each packet (5.0), and for a live peer's judge
(``keep=True``, the probe's) the same *missing* findings at each close and the same
deliveries.

On random and faulty streams of both editions (:mod:`streams`): wrong identifiers,
out-of-turn acknowledgements, resumed and clean sessions, refused and session-losing
CONNACKs, DUP misuse; in 5.0 Receive Maximum exceeded, aliases out of bounds and unknown,
error and 0x92 Reason Codes, Maximum QoS, Retain Available, sessions that expired. The
probe's way is fed through the probe's own :class:`~pubproof.probe.judge_link.ClientLink`
(waits, cases, unreadable packets, other clients, closed connections).

The compiled twins read the model's tables compiled into typed entries at import: those
entries are the model's, entry by entry. And each mutant of a twin's tables or of its
inlined helpers (:data:`FAST_MUTANTS`, the pure pass) makes the differential tests fail:
they tell the twins apart wherever they differ.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.builds import patched, pure_only
from support.streams import (
    C2S,
    S2C,
    SEQUENCES,
    SEQUENCES50,
    Packet,
    entry,
    entry50,
    evidence,
    stream,
    stream3,
)

from pubproof.judge import ends, link, link50
from pubproof.judge.findings import Finding
from pubproof.model.editions import Edition
from pubproof.model.flows import (
    RECEIVER_STATES,
    Method,
    ReceiverInput,
    ReceiverState,
    SenderAction,
    SenderInput,
    SenderState,
    Step,
    receiver_step,
    sender_step,
)
from pubproof.model.flows50 import (
    ReceiverInput50,
    SenderAction50,
    SenderInput50,
    Step50,
    receiver_step50,
    sender_step50,
)
from pubproof.model.topic_alias import RECEIVER_ALIAS, AliasIn, AliasInInput
from pubproof.pipeline.fast import aliases as fast_aliases
from pubproof.pipeline.fast import ends as fast_ends
from pubproof.pipeline.fast import link as fast_link
from pubproof.pipeline.fast import link50 as fast_link50
from pubproof.probe.judge_link import BROKER, ClientLink

V50 = Edition.V50
SEEDS = range(300)


def _owed(judges: Any) -> tuple[Counter[Any], Counter[Any]]:
    return Counter(judges.owed_by(C2S)), Counter(judges.owed_by(S2C))


def same_on_both_ends(packets: list[Packet], *, edition: Edition) -> list[Finding]:
    """Feeds ``packets`` to the readable BothEnds and the fast one; fails at the first
    difference; returns the findings."""
    readable, fast = ends.BothEnds(edition=edition), fast_ends.BothEnds(edition=edition)
    every: list[Finding] = []
    for i, (direction, fields) in enumerate(packets):
        found = readable.feed(direction, fields)
        assert fast.feed(direction, fields) == found, (i, direction, fields)
        assert _owed(fast) == _owed(readable), (i, direction, fields)
        assert (fast.topic, fast.offence) == (readable.topic, readable.offence), (i, fields)
        every += found
    return every


@settings(max_examples=1500, deadline=None)
@given(SEQUENCES, st.sampled_from([Edition.V311, Edition.V31]))
def test_3x_both_ends_are_one_judge(packets: list[Packet], edition: Edition) -> None:
    same_on_both_ends(packets, edition=edition)


@settings(max_examples=1000, deadline=None)
@given(SEQUENCES50)
def test_5_0_both_ends_are_one_judge(packets: list[Packet]) -> None:
    same_on_both_ends(packets, edition=V50)


def test_5_0_both_ends_on_the_faulty_streams() -> None:
    found = offences = 0
    for seed in SEEDS:
        found += len(same_on_both_ends(stream(seed), edition=V50))
        readable = ends.BothEnds(edition=V50)
        for direction, fields in stream(seed):
            readable.feed(direction, fields)
            offences += readable.offence is not None
    assert found > 1000 and offences > 500  # the streams are faulty enough to tell


def same_for_the_probe(entries: list[dict[str, Any]], make_fast: Callable[[], Any],
                       edition: Edition) -> ClientLink:  # fmt: skip
    """The probe's link judge (``keep=True``) fed ``entries``, and the same with its
    judge replaced by the fast twin ``make_fast()``: the same findings after each entry,
    the same deliveries; returns the readable one."""
    v311 = edition is not Edition.V31
    readable = ClientLink("c", v311=v311, edition=edition)
    fast = ClientLink("c", v311=v311, edition=edition)
    fast.judge = make_fast()
    for index, item in enumerate(entries):
        readable.feed(index, item)
        fast.feed(index, item)
        assert fast.findings == readable.findings, (index, item)
    readable.finish()
    fast.finish()
    assert fast.findings == readable.findings
    assert fast.deliveries == readable.deliveries
    return readable


@settings(max_examples=1000, deadline=None)
@given(st.lists(entry(), max_size=40), st.booleans())
def test_3x_the_probes_judge_and_its_twin(entries: list[dict[str, Any]], v311: bool) -> None:
    edition = Edition.V311 if v311 else Edition.V31
    readable = same_for_the_probe(
        entries, lambda: fast_link.LinkJudge("c", BROKER, keep=True, v311=v311), edition
    )
    assert readable.judge.v311 is v311


@settings(max_examples=1000, deadline=None)
@given(st.lists(entry50(), max_size=40), st.booleans())
def test_5_0_the_probes_judge_and_its_twin(entries: list[dict[str, Any]], server: bool) -> None:
    # the probe judges a broker (a server) or a client: either end, by the same entries
    def make(module: Any) -> Any:
        return module.LinkJudge50("c", BROKER, server=server, keep=True)

    readable, fast = ClientLink("c", edition=V50), ClientLink("c", edition=V50)
    readable_judge, fast_judge = make(link50), make(fast_link50)
    readable.judge, fast.judge = readable_judge, fast_judge
    for index, item in enumerate(entries):
        readable.feed(index, item)
        fast.feed(index, item)
        assert fast.findings == readable.findings, (index, item)
        seen = (readable_judge.topic, readable_judge.offence)
        assert (fast_judge.topic, fast_judge.offence) == seen, (index, item)
    readable.finish()
    fast.finish()
    assert fast.findings == readable.findings
    assert fast.deliveries == readable.deliveries


def test_the_probe_twins_find_and_deliver() -> None:
    """The differential tests cannot pass on judges that find and deliver nothing: these
    streams (the 5.0 faulty streams as one client's evidence, with waits and closed
    connections) give missing answers, violations, tolerated faults and deliveries."""
    verdicts: Counter[str] = Counter()
    delivered = 0
    for seed in range(60):
        readable = same_for_the_probe(
            evidence(stream(seed), v50=True),
            lambda: fast_link50.LinkJudge50("c", BROKER, server=True, keep=True),
            V50,
        )
        verdicts.update(f.verdict for f in readable.findings)
        delivered += len(readable.deliveries)
    assert verdicts["missing"] > 50 and verdicts["violation"] > 50 and verdicts["tolerated"]
    # (205: what the client sends after a close, until a CONNECT, is not judged)
    assert delivered > 150


# -- the compiled tables of the twins are the model's -----------------------------------------

SENDER_STATES = tuple(SenderState)
RECEIVER_STATES_ALL = tuple(ReceiverState)


def _same_sender_entry(entry: Any, step: Any, sends: Mapping[Any, int | None]) -> None:
    assert entry.defined == isinstance(step, Step | Step50)
    assert entry.rules == step.rules
    if entry.defined:
        assert SENDER_STATES[entry.next] is step.next
        codes = [code for action, code in sends.items() if action in step.actions]
        if hasattr(entry, "pubrel_code"):  # 5.0
            assert entry.pubrel_code == (codes[0] if codes else None)
            assert entry.takes_quota == (SenderAction50.TAKE_QUOTA in step.actions)
            assert entry.releases_quota == (SenderAction50.RELEASE_QUOTA in step.actions)
        else:
            assert entry.sends_pubrel == bool(codes)
        assert entry.resends_publish == any(a.name == "RESEND_PUBLISH" for a in step.actions)
    else:
        assert entry.verdict == step.verdict


@pytest.mark.parametrize("event", list(SenderInput50))
def test_every_5_0_sender_entry_is_the_model_s(event: SenderInput50) -> None:
    sends = {SenderAction50.SEND_PUBREL: 0, SenderAction50.SEND_PUBREL_NOT_FOUND: 0x92}
    for index, state in enumerate(SENDER_STATES):
        step = sender_step50(state, event)
        _same_sender_entry(fast_link50.SENDER50[event][index], step, sends)


@pytest.mark.parametrize("event", [e for e in SenderInput if e is not SenderInput.CLEAN])
def test_every_3x_sender_entry_is_the_model_s(event: SenderInput) -> None:
    for index, state in enumerate(SENDER_STATES):
        step = sender_step(state, event)
        _same_sender_entry(fast_link.SENDER[event][index], step, {SenderAction.SEND_PUBREL: 0})


def _replies(step: Any) -> list[str]:
    return [a.name.split("_")[1] for a in step.actions if a.name.startswith("SEND_")]


#: each edition's receiver inputs, the twin's table of them, and the model's step
RECEIVER_TABLES: list[tuple[Any, Any, Any]] = [
    *((e, fast_link50.RECEIVER50, receiver_step50) for e in ReceiverInput50),
    *(
        (e, fast_link.RECEIVER, receiver_step)
        for e in ReceiverInput
        if e not in (ReceiverInput.RESUME, ReceiverInput.CLEAN)
    ),
]


@pytest.mark.parametrize(("event", "table", "step_of"), RECEIVER_TABLES)
def test_every_receiver_entry_is_the_model_s(event: Any, table: Any, step_of: Any) -> None:
    for index, state in enumerate(RECEIVER_STATES_ALL):
        entry = table[event][index]
        if state not in RECEIVER_STATES[Method.B]:  # the same states in both editions
            assert entry is None
            continue
        step = step_of(Method.B, state, event)
        assert entry is not None and entry.defined == isinstance(step, Step | Step50)
        assert entry.rules == step.rules
        if entry.defined:
            assert RECEIVER_STATES_ALL[entry.next] is step.next
            replies = entry.replies
            if replies and isinstance(replies[0], tuple):  # 5.0: (type, code)
                replies = tuple(kind for kind, _ in replies)
            assert list(replies) == _replies(step)
            if hasattr(entry, "disconnect"):
                disconnects = any("DISCONNECT" in a.name for a in step.actions)
                assert (entry.disconnect is not None) == disconnects


# -- the differential tests kill the mutants of the twins (the pure pass) ---------------------


def fixed_differential(edition: str) -> None:
    """The differential tests on fixed inputs of one edition ("3.x" or "5.0"): both ends,
    and the probe's judge (a mutant must fail them)."""
    if edition == "5.0":
        for seed in SEEDS:
            same_on_both_ends(stream(seed), edition=V50)
        test_the_probe_twins_find_and_deliver()
        return
    for seed in SEEDS:
        for level in (Edition.V311, Edition.V31):
            same_on_both_ends(stream3(seed), edition=level)
        same_for_the_probe(
            evidence(stream3(seed), v50=False),
            lambda: fast_link.LinkJudge("c", BROKER, keep=True),
            Edition.V311,
        )


def _entries(table: Any, **changes: Any) -> Any:
    return tuple(e if e is None else replace(e, **changes) for e in table)


def _table(module: ModuleType, name: str, make: Callable[[Any], Any]) -> Callable[[], Any]:
    """A mutant that replaces the table ``name`` of ``module`` with ``make(table)``."""
    return lambda: patched(module, name, make(getattr(module, name)))


@contextmanager
def _source(old: str, new: str, nth: int = 0) -> Iterator[None]:
    """A mutant of the 5.0 twin's source: its ``nth`` occurrence of ``old`` made ``new``
    (an inlined copy of a helper, which no patch of a name reaches), the mutated module
    put in its place for the fast BothEnds and the probe twins."""
    path = Path(str(fast_link50.__file__)).with_suffix(".py")
    text = path.read_text(encoding="utf-8")
    at = -1
    for _ in range(nth + 1):
        at = text.index(old, at + 1)
    mutant = ModuleType(fast_link50.__name__)
    mutant.__file__ = str(path)
    exec(compile(text[:at] + new + text[at + len(old) :], str(path), "exec"), mutant.__dict__)
    with (
        patched(fast_ends, "LinkJudge50", mutant.LinkJudge50),
        patched(fast_link50, "LinkJudge50", mutant.LinkJudge50),
    ):
        yield


def _alias_steps(change: Callable[[dict[Any, Any]], None]) -> Callable[[], Any]:
    def make() -> Any:
        table = dict(RECEIVER_ALIAS)
        change(table)
        return patched(fast_aliases, "STEPS", fast_aliases.by_input(table))

    return make


def _invalid_as_valid(table: dict[Any, Any]) -> None:
    for state in AliasIn:
        table[state, AliasInInput.ALIAS_INVALID] = table[state, AliasInInput.TOPIC_AND_ALIAS]


def _unordered_owed(self: Any, packet: Any, rules: Any, since: int, why: Any) -> Any:
    return fast_link.Owed(packet, rules, since, why, 0)  # no order among the answers owed


def _pubrel_answers_0(pubrel: Any) -> Any:
    def answered_0(entry: Any) -> Any:
        if entry is None:
            return None
        return replace(entry, replies=tuple((kind, 0) for kind, _ in entry.replies))

    return tuple(tuple(answered_0(e) for e in table) for table in pubrel)


#: a mutant of a twin -> the edition whose differential tests kill it: the faults of the
#: readable judges' mutants (``tests/test_judge50_mutants.py``) put in the twins' compiled
#: tables, and faults in the twins' inlined copies of their helpers. (An equivalent mutant,
#: so not here: a PUBREL's Reason Code not read, in either inlined copy of ``_code`` that
#: reads it (the 5.0 receiver table's PUBREL_OK and PUBREL_NOT_FOUND rows differ in their
#: notes only, which no finding shows). The inlined ``_move_rx`` that the judged receiver's
#: PUBLISH and PUBREL share (``_answers_owed``) is killed by a PUBLISH: every PUBREL entry of
#: Method B ends at FREE.)
FAST_MUTANTS: dict[str, tuple[Callable[[], Any], str]] = {
    "the quota is never taken": (_table(fast_link50, "_TX_PUBLISH", lambda tx: {
        qos: _entries(t, takes_quota=False) for qos, t in tx.items()}), "5.0"),
    "the quota is never released": (_table(fast_link50, "_TX_ACK", lambda tx: {
        kind: tuple(_entries(t, releases_quota=False) for t in pair)
        for kind, pair in tx.items()}), "5.0"),
    "PUBREC >= 0x80 taken for success": (_table(fast_link50, "_TX_ACK", lambda tx: {
        **tx, "PUBREC": (tx["PUBREC"][0], tx["PUBREC"][0])}), "5.0"),
    "error codes ignored": (lambda: patched(fast_link50, "is_error", lambda code: False), "5.0"),
    "resume without Session Present": (_table(fast_link50, "SENDER50", lambda table: {
        **table, SenderInput50.CLEAN: table[SenderInput50.RESUME]}), "5.0"),
    "PUBCOMP 0x92 not owed": (_table(fast_link50, "_RX_PUBREL", _pubrel_answers_0), "5.0"),
    "a refusal keeps the identifier": (_table(fast_link50, "_RX_REFUSED", lambda _: {
        1: fast_link50._RX_PUBLISH[1], 2: fast_link50._RX_PUBLISH[2]}), "5.0"),
    "alias maximum not checked": (_alias_steps(_invalid_as_valid), "5.0"),
    "inlined _code: a peer's acknowledgement's Reason Code not read": (lambda: _source(
        'code = fields.get("reason_code")  # _code, inlined: once per acknowledgement\n',
        'code = 0\n'), "5.0"),
    "inlined _code: the judged end's acknowledgement's Reason Code not read": (lambda: _source(
        'code = fields.get("reason_code")  # _code, inlined: once per acknowledgement\n',
        'code = 0\n', nth=1), "5.0"),
    "inlined topic_alias: the properties not read": (lambda: _source(
        'alias = as_dict(properties).get("topic_alias") if properties else None',
        'alias = None'), "5.0"),
    "inlined _move_rx: a PUBLISH does not move the judged receiver": (lambda: _source(
        "if entry.next == R_FREE:  # _move_rx, inlined", "if True:"), "5.0"),
    "inlined _move_rx: the model peer's receiver does not move": (lambda: _source(
        "if entry.next == R_FREE:  # _move_rx, inlined", "if True:", nth=1), "5.0"),
    "3.x: PUBREC owes no PUBREL": (_table(fast_link, "_TX_ACK", lambda tx: {
        **tx, "PUBREC": _entries(tx["PUBREC"], sends_pubrel=False)}), "3.x"),
    "3.x: the resumed session re-sends nothing": (_table(fast_link, "_TX_RESUME", lambda t: (
        _entries(t, resends_publish=False))), "3.x"),
    "3.x: a QoS 2 PUBLISH owes no PUBREC": (_table(fast_link, "_RX_PUBLISH", lambda rx: {
        **rx, 2: _entries(rx[2], replies=())}), "3.x"),
    "3.x: the answers owed have no order": (
        lambda: patched(fast_link.LinkJudge, "_owed", _unordered_owed), "3.x"),
}  # fmt: skip


@pure_only
@pytest.mark.parametrize("name", sorted(FAST_MUTANTS))
def test_the_differential_tests_kill_each_mutant_of_the_twins(name: str) -> None:
    make, edition = FAST_MUTANTS[name]
    fixed_differential(edition)  # the twins as they are pass
    with make(), pytest.raises(AssertionError):
        fixed_differential(edition)


# -- ... and each mutant of a readable judge: a readable judge held alone would miss it ------


def _readable_steps(*dropped: Any) -> Any:
    def step(state: Any, event: Any) -> Any:
        found = sender_step(state, event)
        if isinstance(found, Step):
            kept: Any = tuple(a for a in found.actions if a not in dropped)
            return replace(found, actions=kept)
        return found

    return patched(link, "sender_step", step)


def _session_always_present() -> Any:
    original = link.LinkJudge._connack

    def connack(self: Any, fields: Any, found: list[Finding], index: int) -> None:
        original(self, {**fields, "session_present": True}, found, index)

    return patched(link.LinkJudge, "_connack", connack)


def _dup_on_new_flow_not_read() -> Any:
    original = link.LinkJudge._new_flow

    def new_flow(self: Any, fields: Any, found: list[Finding]) -> None:
        original(self, {**fields, "dup": False}, found)

    return patched(link.LinkJudge, "_new_flow", new_flow)


#: a mutant of a readable 3.x judge -> killed by the 3.x differential tests (the 5.0
#: judge's mutants are killed by its own tests: ``tests/test_judge50_mutants.py``)
READABLE_MUTANTS: dict[str, Callable[[], Any]] = {
    "PUBREC owes no PUBREL": lambda: _readable_steps(SenderAction.SEND_PUBREL),
    "the resumed session re-sends nothing": lambda: _readable_steps(SenderAction.RESEND_PUBLISH),
    "Session Present 0 on a resumed session not found": _session_always_present,
    "DUP 1 on a message not sent before not found": _dup_on_new_flow_not_read,
    "every PUBLISH on an identifier in use the same message": lambda: patched(
        link, "same_message", lambda a, b: True
    ),
}


@pytest.mark.parametrize("name", sorted(READABLE_MUTANTS))
def test_the_differential_tests_kill_each_mutant_of_a_readable_judge(name: str) -> None:
    with READABLE_MUTANTS[name](), pytest.raises(AssertionError):
        fixed_differential("3.x")
