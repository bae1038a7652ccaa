"""The hand-back's rule 4 (:mod:`pubproof.pipeline.handback`): a quiet point only where the
retained store is certain. Two retained PUBLISHes in flight together leave it uncertain
(the server may have stored either last: the readable judge keeps both, its
``retained_open``) until a later change of the store is received after both were taken;
from then on the quiet points come again (the fast twin's ``stored``).

The topic: ``a`` of a small synthetic capture of QoS 1 messages with empty payloads among
them (as the 1,000,000-frame benchmark's ``deep/...`` topic, which the old rule, no quiet
point ever after such an overlap, handed back from halfway: 43,251 events more than its
fault needed), a ``lost`` row at its end making the twin give up there.
"""

from __future__ import annotations

from typing import Any

import pytest
from support.pipeline_builder import captures_events, staged, unnumbered

from pubproof.pipeline import handback
from pubproof.pipeline.fast import distribution as fast_distribution
from pubproof.pipeline.servers import ORDER_KEY, Stage
from pubproof.pipeline.synth import SynthConfig
from pubproof.pipeline.synth.broker import DistFault

EVERY = tuple((f.value, 3) for f in DistFault)
CONFIG = SynthConfig(
    frames=7000, connections=20, concurrent=12, seed=5, qos_mix=(1.0, 1.0, 1.0),
    payload_sizes=((0, 1.0), (20, 3.0)), inject=EVERY,
)  # fmt: skip
TOPIC, T, CONNECTION, DIRECTION, TYPE, QOS = 2, 3, 5, 9, 10, 11
RETAIN, PACKET_ID, DIGEST = 13, 14, 16


@pytest.fixture(scope="module")
def topic(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Any], list[Any], Any]:
    """The server's session rows, topic ``a``'s rows, and a ``lost`` row after them."""
    rows = captures_events({"retained": CONFIG}, tmp_path_factory.mktemp("untangle"))["retained"]
    server = rows[0][1]
    sessions = [r for r in rows if r[1] == server and r[TOPIC] is None]
    own = [r for r in rows if r[1] == server and r[TOPIC] == "a"]
    last = max([*sessions, *own], key=ORDER_KEY)
    lost = (*last[:DIRECTION], "c2s", "lost", *(None,) * 8, 0.0)
    return sessions, own, (*lost[:TOPIC], None, *lost[TOPIC + 1 :])


def _fed(sessions: list[Any], own: list[Any], lost: Any) -> list[tuple[Any, ...]]:
    return sorted([*own, *sessions, lost], key=ORDER_KEY)


def _overlaps(fed: list[tuple[Any, ...]]) -> list[tuple[int, int, int]]:
    """Each retained PUBLISH received while another was in flight (neither acknowledged
    yet), read off the rows: (the other's row, its row, its acknowledgement's row)."""
    open_: dict[tuple[str, int], int] = {}
    acked: dict[int, int] = {}
    for at, row in enumerate(fed):
        if row[TYPE] == "PUBLISH" and row[DIRECTION] == "c2s" and row[RETAIN] and row[QOS]:
            open_[row[CONNECTION], int(row[PACKET_ID])] = at
        elif row[TYPE] in ("PUBACK", "PUBREC") and row[DIRECTION] == "s2c":
            publish = open_.pop((row[CONNECTION], int(row[PACKET_ID] or 0)), None)
            if publish is not None:
                acked[publish] = at
    found = []
    starts = sorted(acked)
    for first in starts:
        for second in starts:
            if first < second < acked[first]:
                found.append((first, second, acked[second]))
    return found


def _next_change(fed: list[tuple[Any, ...]], after: int) -> int:
    """The row of the first retained PUBLISH received after row ``after``."""
    return next(
        at for at in range(after + 1, len(fed))
        if fed[at][TYPE] == "PUBLISH" and fed[at][DIRECTION] == "c2s" and fed[at][RETAIN]
    )  # fmt: skip


def _same(sessions: list[Any], own: list[Any], lost: Any) -> Stage:
    rows = sorted([*sessions, lost], key=ORDER_KEY) + own
    partial, whole = staged(rows, True), staged(rows, False)
    assert partial.deliveries == whole.deliveries
    assert sorted(map(unnumbered, partial.violations)) == sorted(map(unnumbered, whole.violations))
    stage: Stage = partial
    return stage


def test_the_store_is_certain_again_after_the_next_change(
    topic: tuple[list[Any], list[Any], Any],
) -> None:
    sessions, own, lost = topic
    fed = _fed(sessions, own, lost)
    overlaps = _overlaps(fed)
    assert overlaps, "the topic changed: no two retained PUBLISHes in flight together"
    _, second, taken = overlaps[0]
    change = _next_change(fed, taken)
    found = fast_distribution.attempt(fed, "a")
    assert isinstance(found, fast_distribution.Handback) and found.at == len(fed) - 1
    # none while the store is uncertain (the next change, at its PUBLISH, not yet taken)
    assert not [q for q in found.quiet if second < q <= change]
    # and again after it: the topic is cut there, not before the two
    assert [q for q in found.quiet if q > change]
    start, _ = handback.cut(fed, found.quiet, found.carried, found.outs)
    assert start > change
    stage = _same(sessions, own, lost)
    assert stage.figures["topics_partial"] == 1


def test_the_other_retained_message_sent_for_a_subscription_made_meanwhile(
    topic: tuple[list[Any], list[Any], Any],
) -> None:
    """The server sends a subscription made while the store was uncertain the other of
    the two retained messages (which it may have stored last): the readable judge owes
    both copies no more (``unknown:retained-order``). No quiet point comes between the
    two in flight and that copy, so the judge that takes the topic over knows both."""
    sessions, own, lost = topic
    fed = _fed(sessions, own, lost)
    first, second, taken = _overlaps(fed)[0]
    held = {fed[first][DIGEST], fed[second][DIGEST]}
    change = _next_change(fed, taken)
    copies = [
        at for at in range(taken, change)
        if fed[at][TYPE] == "PUBLISH" and fed[at][DIRECTION] == "s2c" and fed[at][RETAIN]
        and fed[at][DIGEST] in held
    ]  # fmt: skip
    assert copies, "the topic changed: no retained copy while the store is uncertain"
    copy = fed[copies[0]]
    other = (held - {copy[DIGEST]}).pop()
    swapped = (*copy[:DIGEST], other, *copy[DIGEST + 1 :])
    broken = [swapped if row is copy else row for row in own]
    stage = _same(sessions, broken, lost)
    outcomes = {d[20] for d in stage.deliveries if d[2] == "a"}
    assert "unknown:retained-order" in outcomes, outcomes
