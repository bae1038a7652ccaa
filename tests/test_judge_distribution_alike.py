"""Copies that look alike, and the order of 4.6 (:mod:`pubproof.judge.distribution_alike`):
what the wire cannot tell apart is read the way that keeps the order, where one does; an
order no reading keeps is still found.

The first scenario is what 1,000,000 synthetic frames showed (four false MQTT-4.6.0-6
findings): a publisher's zero-byte QoS 2 message, a QoS 2 message, a zero-byte QoS 0
message, all three sent to a subscriber granted QoS 0 in the order received. The property
test holds :func:`untangled` against a brute force over every reading of small runs.
Mutants killed (14 tried, all killed): no untangling; the deadline ignored (the lower
message number first); when each message was taken ignored, by earliest deadline first
and by the search; the order group's earlier messages ignored; the moved copies' order
groups not followed; one round only; stopping after the first round; no search; nothing
left uncertain; every problem counted certain; the payload not part of what a copy
shows; the index's check of the order always or never kept; for a copy missing by the
order, an alike copy never or always read otherwise, the patience ignored, the other
message's own proof ignored (one more tried survives: a sent copy of the same message
counted as alike, which only overlapping subscriptions make, where nothing is owed).
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.distribution_server import Server

from pubproof.judge import distribution_alike
from pubproof.judge.distribution import DistributionJudge
from pubproof.judge.distribution_alike import alike, certain, untangled
from pubproof.judge.distribution_events import C2S, S2C
from pubproof.judge.findings import MISSING, PASS, Finding
from pubproof.model.editions import Edition
from pubproof.model.messages import Cause, Copy, Message, Publication
from pubproof.model.ordering import ordering_problems

V311 = Edition.V311


def _publish(server: Server, payload: bytes, qos: int, packet_id: int | None) -> None:
    server._at("pub", C2S, {
        "type": "PUBLISH", "dup": False, "qos": qos, "retain": False, "topic": "a",
        "packet_id": packet_id, "payload_hex": payload.hex(),
    })  # fmt: skip


def _release(server: Server, *packet_ids: int) -> None:
    """The QoS 2 flows of ``packet_ids`` to their end, each step for all at once (the
    server's PUBREC after the PUBLISH packets that followed: it takes the QoS 0 message
    first)."""
    for kind, direction in (("PUBREC", S2C), ("PUBREL", C2S), ("PUBCOMP", S2C)):
        for packet_id in packet_ids:
            server._at("pub", direction, {"type": kind, "packet_id": packet_id})


def _scenario(published: list[tuple[bytes, int]], sent: list[bytes]) -> Server:
    """``published`` (payload, QoS) by one client in one burst, the QoS 2 flows ended
    after all of them; ``sent``: the payloads of the copies to a subscriber granted QoS 0,
    in that order."""
    server = Server()
    server.connect("sub")
    server.subscribe("sub", ("a", 0))
    server.connect("pub")
    ids: list[int] = []
    for payload, qos in published:
        packet_id = len(ids) + 1 if qos else None
        if packet_id:
            ids.append(packet_id)
        _publish(server, payload, qos, packet_id)
    _release(server, *ids)
    for payload in sent:
        server.deliver("sub", "a", payload, 0)
    return server


def _order(found: list[Finding]) -> list[Finding]:
    return [f for f in found if f.verdict != PASS and "MQTT-4.6.0-6" in f.rules]


def _judged(server: Server) -> dict[str, list[Finding]]:
    """The order findings as a capture's judge and as a probe's (which knows every link)."""
    found = {}
    for name, options in (("capture", {"complete": False, "capture": True}), ("probe", {})):
        judge = DistributionJudge(**options)  # type: ignore[arg-type]
        found[name] = _order(judge.feed_all(server.events))
    return found


def test_the_first_alike_copy_read_as_the_message_the_order_needs_first() -> None:
    server = _scenario([(b"", 2), (b"x", 2), (b"", 0)], [b"", b"x", b""])
    assert _judged(server) == {"capture": [], "probe": []}


def test_the_message_received_first_is_not_always_the_one() -> None:
    """The QoS 0 message is received first here: reading the first copy as its breaks the
    order of the QoS 2 messages; reading it as the zero-byte QoS 2 message's keeps it."""
    server = _scenario([(b"", 0), (b"", 2), (b"x", 2)], [b"", b"x", b""])
    assert _judged(server) == {"capture": [], "probe": []}


def test_an_order_no_reading_keeps_is_still_found() -> None:
    """The "x" message went out before both zero-byte copies: the zero-byte QoS 2 message
    follows it whichever copy is whose. (The messages are numbered as the server took
    them: the QoS 0 one, at its PUBLISH, is 1; the QoS 2 ones, at their PUBREC, 2 and 3.)"""
    server = _scenario([(b"", 2), (b"x", 2), (b"", 0)], [b"x", b"", b""])
    found = _judged(server)
    assert [len(found[k]) for k in ("capture", "probe")] == [1, 1]
    assert "message 2 from 'pub' on 'a' at QoS 2 was sent after message 3" in (
        found["capture"][0].message
    )


def test_copies_told_apart_keep_their_reading() -> None:
    """Distinct payloads: the server sent message 2 first, found as before."""
    server = _scenario([(b"1", 2), (b"2", 2)], [b"2", b"1"])
    assert [len(v) for v in _judged(server).values()] == [1, 1]


# -- untangled against a brute force -------------------------------------------------------


def _copy(seq: int, publisher: str, payload: bytes, qos: int, granted: int) -> Copy:
    publication = Publication(publisher=publisher, topic="a", payload=payload, qos=qos)
    message = Message(seq=seq, received_at=seq, publication=publication)
    return Copy(
        copy_id=seq, client_id="sub", message=message, qos=min(qos, granted), retain=False,
        cause=Cause.LIVE, topic_filters=("a",),
    )  # fmt: skip


def _readings(sent: list[Copy]) -> list[list[Copy]]:
    """Every reading of ``sent``: each set of alike copies given its messages in every
    order, every other copy in place."""
    sets: dict[Any, list[int]] = {}
    for place, copy in enumerate(sent):
        sets.setdefault(alike(copy), []).append(place)
    choices = [list(itertools.permutations(places)) for places in sets.values()]
    readings = []
    for chosen in itertools.product(*choices):
        reading = list(sent)
        for places, order in zip(sets.values(), chosen, strict=True):
            for place, source in zip(places, order, strict=True):
                reading[place] = sent[source]
        readings.append(reading)
    return readings


messages = st.lists(
    st.tuples(st.sampled_from(["p", "q"]), st.sampled_from([b"", b"x"]), st.integers(0, 2)),
    min_size=2, max_size=6,
)  # fmt: skip
def each_run(test: Callable[..., None]) -> Callable[..., None]:
    """Run ``test`` on runs of copies to one session: their messages, the QoS granted,
    the order sent, the reading of ``ordering-qos``."""
    return settings(max_examples=300, deadline=None)(given(
        messages=messages, granted=st.integers(0, 2), shuffle=st.randoms(use_true_random=False),
        by=st.sampled_from(["published", "outgoing"]),
    )(test))  # fmt: skip


@each_run
def test_untangled_keeps_the_order_whenever_some_reading_does(
    messages: list[tuple[str, bytes, int]], granted: int, shuffle: Any, by: str
) -> None:
    sent = [_copy(seq, *m, granted) for seq, m in enumerate(messages, 1)]
    shuffle.shuffle(sent)
    readings = {"ordering-qos": by}
    got, uncertain = untangled(
        sent, V311, readings, None, placed=lambda place: place, owned=lambda c: -1
    )
    assert not uncertain  # few enough to try every reading
    # a reading: the same copies, each set of alike ones among its own places
    assert sorted(map(id, got)) == sorted(map(id, sent))
    assert all(alike(a) == alike(b) for a, b in zip(got, sent, strict=True))
    some = any(not ordering_problems(r, V311, readings) for r in _readings(sent))
    assert some == (not ordering_problems(got, V311, readings))


@each_run
def test_without_the_search_one_set_is_read_right_and_nothing_is_invented(
    messages: list[tuple[str, bytes, int]], granted: int, shuffle: Any, by: str
) -> None:
    """Earliest deadline first alone (no reading tried one by one): one set of alike
    copies is read so as to keep the order whenever a reading does; with several, what it
    cannot settle is uncertain, never a problem found."""
    sent = [_copy(seq, *m, granted) for seq, m in enumerate(messages, 1)]
    shuffle.shuffle(sent)
    readings = {"ordering-qos": by}
    with patched_search(0):
        got, uncertain = untangled(
            sent, V311, readings, None, placed=lambda place: place, owned=lambda c: -1
        )
    some = any(not ordering_problems(r, V311, readings) for r in _readings(sent))
    found = [p for p in ordering_problems(got, V311, readings) if certain(p.message, uncertain)]
    if some:
        assert not found
    else:
        assert found or uncertain
    if _tangled_sets(sent) == 1:
        assert some == (not ordering_problems(got, V311, readings))


def _tangled_sets(sent: list[Copy]) -> int:
    sets: dict[Any, set[int]] = {}
    for copy in sent:
        sets.setdefault(alike(copy), set()).add(copy.message.seq)
    return sum(1 for seqs in sets.values() if len(seqs) > 1)


@contextlib.contextmanager
def patched_search(most: int) -> Iterator[None]:
    saved = distribution_alike.SEARCH_MOST
    distribution_alike.SEARCH_MOST = most
    try:
        yield
    finally:
        distribution_alike.SEARCH_MOST = saved


def test_a_message_owned_after_a_place_is_not_read_into_it() -> None:
    """The release: a copy sent before the server took a message is not that message's,
    even where reading it so would keep the order (here the order is broken either way
    but only the reading that respects when the messages were taken says which)."""
    first, second = _copy(1, "p", b"", 2, 0), _copy(2, "p", b"", 0, 0)
    owned = {1: 10, 2: 0}  # message 1 taken at event 10, after the first place (event 5)
    got, _ = untangled([second, first], V311, None, None, placed=lambda p: (5, 20)[p],
                       owned=lambda c: owned[c.message.seq])  # fmt: skip
    assert [c.message.seq for c in got] == [2, 1]
    got, _ = untangled([second, first], V311, None, None, placed=lambda p: (15, 20)[p],
                       owned=lambda c: owned[c.message.seq])  # fmt: skip
    assert [c.message.seq for c in got] == [1, 2]  # both taken by then: the lower first


@pytest.mark.parametrize("granted", [0, 1])
def test_nothing_alike_nothing_moves(granted: int) -> None:
    sent = [_copy(2, "p", b"2", 1, granted), _copy(1, "p", b"1", 1, granted)]
    got, uncertain = untangled(sent, V311, None, None, placed=lambda p: p, owned=lambda c: -1)
    assert got == sent and not uncertain


def _sent(*copies: tuple[int, str, bytes, int]) -> list[Copy]:
    """Copies to a session granted QoS 0, in the order sent: (message, publisher,
    payload, QoS published)."""
    return [_copy(seq, publisher, payload, qos, 0) for seq, publisher, payload, qos in copies]


def _seqs(sent: list[Copy]) -> list[int]:
    got, uncertain = untangled(sent, V311, None, None, placed=lambda p: p, owned=lambda c: -1)
    assert not uncertain
    return [c.message.seq for c in got]


def test_one_set_read_by_the_deadline_then_by_what_its_group_allows() -> None:
    """Earliest deadline first alone (no reading tried one by one)."""
    with patched_search(0):
        # q's message 2 must precede q's 3 (sent second): it is the first zero-byte copy,
        # though message 1 is the lower number
        assert _seqs(_sent((1, "p", b"", 0), (3, "q", b"y", 0), (2, "q", b"", 0))) == [2, 3, 1]
        # q's message 2 must follow q's 1 (sent second): not the first "x" copy
        assert _seqs(_sent((2, "q", b"x", 0), (1, "q", b"", 0), (3, "p", b"x", 0))) == [3, 1, 2]


def test_sets_interleaved_are_tried_one_by_one_else_left_uncertain() -> None:
    """Two sets, each one's reading bound to the other's: only the reading [2, 4, 5, 1, 3]
    keeps both orders (q's QoS 0 messages 1, 3 and QoS 1 messages 2, 4, 5)."""
    sent = _sent((1, "q", b"x", 0), (3, "q", b"", 0), (4, "q", b"", 1), (2, "q", b"x", 1),
                 (5, "q", b"", 1))  # fmt: skip
    assert _seqs(sent) == [2, 4, 5, 1, 3]
    with patched_search(0):
        got, uncertain = untangled(sent, V311, None, None, placed=lambda p: p, owned=lambda c: -1)
    problems = ordering_problems(got, V311)
    assert problems and uncertain == {1, 2, 3, 4, 5}
    assert not any(certain(p.message, uncertain) for p in problems)
    assert certain(problems[0].message, frozenset({9}))
    # message 2 taken after the first place was sent: that one reading is not one, and
    # every reading tried breaks the order: found
    got, uncertain = untangled(sent, V311, None, None, placed=lambda p: p * 10,
                               owned=lambda c: 5 if c.message.seq == 2 else -1)  # fmt: skip
    assert ordering_problems(got, V311) and not uncertain


def test_a_set_read_again_sees_where_the_other_set_put_its_messages() -> None:
    """p's QoS 2 messages 1, 4 and QoS 1 messages 2, 3, sent as "", "x", "", "x": the
    zero-byte set is read first and moves its messages; the "x" set is then read on the
    places as they are now (the index of places per order group follows the moves)."""
    sent = _sent((1, "p", b"", 2), (3, "p", b"x", 1), (2, "p", b"", 1), (4, "p", b"x", 2))
    with patched_search(0):
        assert _seqs(sent) == [2, 3, 1, 4]


def test_the_sets_are_read_again_while_one_changes() -> None:
    """p's QoS 0 messages 3, 5 and QoS 2 messages 1, 2, 4, sent as "", "x", "", "x", "":
    the first reading of each set, on the other's first reading, breaks the order; read
    again, they keep it."""
    sent = _sent((5, "p", b"", 0), (4, "p", b"x", 2), (2, "p", b"", 2), (1, "p", b"x", 2),
                 (3, "p", b"", 0))  # fmt: skip
    with patched_search(0):
        assert _seqs(sent) == [3, 1, 2, 4, 5]


# -- a copy missing by the order, where an alike copy may have been it ---------------------


def _missing(server: Server) -> tuple[list[Finding], DistributionJudge]:
    judge = DistributionJudge(complete=False, capture=True)
    found = [f for f in judge.feed_all(server.events) if f.verdict == MISSING]
    return found, judge


def test_missing_by_the_order_only_if_no_alike_copy_may_have_been_it() -> None:
    """The first zero-byte copy read as the QoS 0 message's leaves the zero-byte QoS 2
    message missing (message 3, "x", went out after it); read as the QoS 2 message's, it
    leaves the QoS 0 message owed as the capture ends, which nothing proves missing."""
    server = _scenario([(b"", 2), (b"x", 2), (b"", 0)], [b"", b"x"])
    found, judge = _missing(server)
    assert found == [] and "unknown:ambiguous" in judge.copy_outcomes.values()
    server.wait(12.0)  # past the patience, the link still open: one of them is missing
    server.connect("other")
    found, _ = _missing(server)
    assert len(found) == 1 and "MQTT-4.5.0-1" in found[0].rules


def test_missing_either_way_is_found() -> None:
    """The QoS 0 message "z" sent after both: whichever the zero-byte copy was, the other
    zero-byte message is proven missing by the order."""
    server = _scenario([(b"", 0), (b"", 2), (b"x", 2), (b"z", 0)], [b"", b"x", b"z"])
    found, _ = _missing(server)
    assert len(found) == 1 and "order of 4.6" in found[0].message
