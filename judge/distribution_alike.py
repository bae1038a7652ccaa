"""Copies that look alike on the wire, and the order of 4.6.

Rules / theory of operation
---------------------------
A PUBLISH a server sends a client is matched to a copy the model owes its session by
topic name and payload (:func:`.distribution_copies.publish_out`). When several messages
owed have the same topic name and payload, and their copies the same QoS, RETAIN and
(5.0) properties and Subscription Identifiers, nothing on the wire tells their copies
apart, and the judge takes the first owed. The order of 4.6 judged on that choice can
find an inversion the server never made. Take messages 1 (QoS 2, zero bytes), 2 (QoS 2,
"x") and 3 (QoS 0, zero bytes) of one publisher, sent to a session granted QoS 0 as
[zero bytes, "x", zero bytes]. Reading the first copy as message 3's puts message 1 after
message 2; reading it as message 1's breaks no order. A capture, or a live client, cannot
tell which it was, and what it cannot tell is never a violation (found on 1,000,000
synthetic frames, whose broker sends in order: four false MQTT-4.6.0-6 findings).

So before the order is judged, :func:`untangled` gives each set of alike copies to one
session the messages that keep the order, where an assignment does:

- the copies of the set keep their places (the times they were sent), and so does every
  other copy;
- the places are filled in time order; each place gets, among the set's messages the
  server owned by then and whose order group allows them there (every earlier message of
  the group outside the set sent before), the one the group needs soonest: the earliest
  place of a later message of its group outside the set, then the lower message number
  (the groups: :func:`~pubproof.model.ordering.order_groups`).

This is earliest deadline first, for unit jobs with release times: it keeps every order
that any assignment of the set keeps while the other copies stay in place. Sets of alike
copies interleaved make each set's deadlines the others' places: the sets are read again
in turn while one changes, and when that finds no reading that keeps the order, every
reading is tried (up to :data:`SEARCH_MOST` of them). An order broken under every reading
is found; one too costly to try every reading of is left uncertain for the messages of
the sets (not a finding). Only the judgement of the order sees the new reading; the
ledger (``deliveries``) keeps the first match, one of the readings the wire allows.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
from collections.abc import Callable, Hashable, Mapping, Sequence

from pubproof.judge.distribution_records import JudgeState
from pubproof.model.editions import Edition
from pubproof.model.messages import Copy
from pubproof.model.ordering import order_groups, ordering_problems
from pubproof.model.subscriptions import ServerConfig

#: a place no later message of the group holds
NEVER = float("inf")
#: the most readings tried one by one when earliest deadline first finds none that keeps
#: the order (sets of alike copies interleaved: each set's deadlines are the others')
SEARCH_MOST = 5040


def alike(copy: Copy) -> Hashable:
    """What a copy shows on the wire: two copies that show the same are interchangeable."""
    message = copy.message
    return (
        copy.topic, message.publication.payload, copy.qos, copy.retain,
        message.publication.properties, copy.subscription_identifiers, copy.cause,
    )  # fmt: skip


#: an ordering problem's message: "message LATER ... was sent after message EARLIER, ..."
INVERSION = re.compile(r"^message (\d+) .* was sent after message (\d+),")


def certain(problem: str, uncertain: frozenset[int]) -> bool:
    """Whether the ordering problem ``problem`` (its message) involves no message whose
    order :func:`untangled` left uncertain."""
    matched = INVERSION.match(problem)
    if matched is None or not uncertain:
        return True
    return uncertain.isdisjoint(int(seq) for seq in matched.groups())


def _deadline(
    copy: Copy,
    group: Hashable | None,
    inside: set[int],
    where: Mapping[Hashable, list[int]],
    result: Sequence[Copy],
) -> float:
    """The earliest place outside the set (``inside``) of a later message of the copy's
    order group (its places: ``where``)."""
    if group is None:
        return NEVER
    seq = copy.message.seq
    later = (p for p in where[group] if p not in inside and result[p].message.seq > seq)
    return float(next(later, NEVER))


def _release(
    copy: Copy,
    group: Hashable | None,
    inside: set[int],
    where: Mapping[Hashable, list[int]],
    result: Sequence[Copy],
) -> int:
    """The latest place outside the set of an earlier message of the copy's order group
    (-1 if none): the copy's place must come after it."""
    if group is None:
        return -1
    seq = copy.message.seq
    earlier = [p for p in where[group] if p not in inside and result[p].message.seq < seq]
    return max(earlier, default=-1)


def untangled_for(
    judge: JudgeState, edition: Edition, client_id: str
) -> tuple[list[Copy], frozenset[int]]:
    """The copies sent to ``client_id``'s session, as :func:`untangled` reads them, from
    what the judge saw: where each was sent, and when the server took its message."""
    sent = judge.sent.get((edition, client_id), [])
    if len(sent) < 2:
        return list(sent), frozenset()

    def placed(place: int) -> int:
        event = judge.copy_events.get((edition, client_id, sent[place].message.seq))
        return place if event is None else event.order

    def owned(copy: Copy) -> int:
        record = judge.messages.get((edition, copy.message.seq))
        return -1 if record is None else record.owned.order

    return untangled(sent, edition, judge.readings, judge.config, placed, owned)


def untangled(
    sent: Sequence[Copy],
    edition: Edition,
    readings: Mapping[str, str] | None,
    config: ServerConfig | None,
    placed: Callable[[int], int],
    owned: Callable[[Copy], int],
) -> tuple[list[Copy], frozenset[int]]:
    """``sent`` (one session's copies, in the order sent) read as the module says, and
    the messages whose order stays uncertain (none, unless no reading found keeps the
    order and there were too many to try them all). ``placed(i)``: the event order at
    which place ``i`` was sent; ``owned(copy)``: the event order at which the server took
    its message."""
    sets: dict[Hashable, list[int]] = {}
    for place, copy in enumerate(sent):
        sets.setdefault(alike(copy), []).append(place)
    tangled = [
        places for places in sets.values()
        if len(places) > 1 and len({sent[p].message.seq for p in places}) > 1
    ]  # fmt: skip
    result = list(sent)
    if not tangled:
        return result, frozenset()

    def broken(reading: Sequence[Copy]) -> bool:
        return bool(ordering_problems(reading, edition, readings, config))

    groups: list[Hashable | None] = list(order_groups(sent, edition, readings, config))
    where: dict[Hashable, list[int]] = {}  # an order group -> its places, in time order
    for place, group in enumerate(groups):
        if group is not None:
            where.setdefault(group, []).append(place)

    def kept() -> bool:
        """Whether the reading as it stands keeps every group's order (as
        :func:`~pubproof.model.ordering.ordering_problems` judges it, from the index)."""
        for places in where.values():
            highest = 0
            for place in places:
                seq = result[place].message.seq
                if seq < highest:
                    return False
                highest = seq
        return True

    # each set in turn, the others as they stand; again while a set's reading changes
    # (a set's deadlines are the other sets' places)
    for _ in range(len(tangled) + 1):
        before = list(result)
        for places in tangled:
            _earliest_deadline_first(places, result, groups, where, placed, owned)
        if kept():
            return result, frozenset()
        if result == before:
            break
    found = _search(tangled, result, placed, owned, broken)
    if found is not None:
        return found, frozenset()
    if _readings_count(tangled) <= SEARCH_MOST:
        return result, frozenset()  # every reading tried: the order is broken
    return result, frozenset(result[p].message.seq for places in tangled for p in places)


def _earliest_deadline_first(
    places: list[int],
    result: list[Copy],
    groups: list[Hashable | None],
    where: dict[Hashable, list[int]],
    placed: Callable[[int], int],
    owned: Callable[[Copy], int],
) -> None:
    """One set's places given its messages, the other copies where they are."""
    inside = set(places)
    copies = [result[p] for p in places]
    mine = [groups[p] for p in places]
    due = [_deadline(c, g, inside, where, result) for c, g in zip(copies, mine, strict=True)]
    after = [_release(c, g, inside, where, result) for c, g in zip(copies, mine, strict=True)]
    jobs = list(range(len(copies)))
    for place in places:
        ready = [i for i in jobs if after[i] < place and owned(copies[i]) <= placed(place)] or jobs
        chosen = min(ready, key=lambda i: (due[i], copies[i].message.seq))
        jobs.remove(chosen)
        result[place] = copies[chosen]
        _move(where, groups, place, mine[chosen])


def _readings_count(tangled: Sequence[Sequence[int]]) -> int:
    return math.prod(math.factorial(len(places)) for places in tangled)


def _search(
    tangled: Sequence[list[int]],
    result: list[Copy],
    placed: Callable[[int], int],
    owned: Callable[[Copy], int],
    broken: Callable[[Sequence[Copy]], bool],
) -> list[Copy] | None:
    """A reading that keeps the order and when each message was taken, tried one by one
    while there are at most :data:`SEARCH_MOST`; None when none does (or too many)."""
    if _readings_count(tangled) > SEARCH_MOST:
        return None
    copies = [[result[p] for p in places] for places in tangled]
    orders = [itertools.permutations(range(len(places))) for places in tangled]
    for chosen in itertools.product(*(list(o) for o in orders)):
        reading = list(result)
        for places, mine, order in zip(tangled, copies, chosen, strict=True):
            for place, index in zip(places, order, strict=True):
                reading[place] = mine[index]
        taken = all(owned(reading[p]) <= placed(p) for places in tangled for p in places)
        if taken and not broken(reading):
            return reading
    return None


def _move(
    where: dict[Hashable, list[int]],
    groups: list[Hashable | None],
    place: int,
    group: Hashable | None,
) -> None:
    """Place ``place`` now holds a copy of order group ``group``: the index follows."""
    before = groups[place]
    if before == group:
        return
    if before is not None:
        where[before].remove(place)
    if group is not None:
        bisect.insort(where.setdefault(group, []), place)
    groups[place] = group
