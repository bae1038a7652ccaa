"""The fast twin of the distribution judge (:mod:`pubproof.pipeline.fast.distribution`) gives
the readable judge's rows wherever it does not give up, and gives up wherever the readable
judge finds something.

The cross-connection stage runs on the events of synthetic captures twice, with the twin
and without it (the readable judge on every topic): the ``deliveries`` and ``violations``
rows must be the same. The captures: a broker without faults (the twin must take most
topics), with every distribution fault (it must leave the faulty topics to the readable
judge), 3.1.1 and 5.0, retained messages, every QoS; and topics cut out of them, to see
the twin give up at each kind of row it does not judge.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from typing import Any

import pytest
from support.distribution_server import V50, Server
from support.pipeline_builder import captures_events, staged, unnumbered

from pubproof.judge.distribution import DistributionJudge
from pubproof.judge.distribution_capture import PATIENCE
from pubproof.pipeline.fast import distribution as fast_distribution
from pubproof.pipeline.servers import Stage, _event, _ledger
from pubproof.pipeline.synth import SynthConfig
from pubproof.pipeline.synth.broker import DistFault
from pubproof.pipeline.synth.faults import Fault

EVERY = tuple((f.value, 3) for f in DistFault)
_BASE = SynthConfig(frames=7000, connections=20, concurrent=12, inject=())
CAPTURES = {
    "clean-3.1.1": replace(_BASE, seed=31),
    "clean-5.0": replace(_BASE, seed=32, mqtt5=1.0),
    "faults-3.1.1": replace(_BASE, seed=33, inject=EVERY),
    "faults-mixed": replace(_BASE, seed=34, mqtt5=0.5, inject=EVERY),
    # the clients' own faults: copies of messages no PUBLISH in showed, among others
    "client-faults": replace(_BASE, seed=36, inject=tuple((f.value, 3) for f in Fault)),
    "retained": replace(
        _BASE, seed=35, qos_mix=(1.0, 1.0, 1.0), payload_sizes=((0, 1.0), (20, 3.0))
    ),
}


@pytest.fixture(scope="module")
def events(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[Any, ...]]]:
    return captures_events(CAPTURES, tmp_path_factory.mktemp("fast"))


def _stage(rows: list[tuple[Any, ...]], fast: bool) -> Stage:
    stage: Stage = staged(rows, fast)
    return stage


@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_the_twin_gives_the_readable_judges_rows(
    name: str, events: dict[str, list[tuple[Any, ...]]]
) -> None:
    rows = events[name]
    twin, readable = _stage(rows, True), _stage(rows, False)
    assert twin.deliveries == readable.deliveries
    # (a topic handed back from a quiet point numbers its messages from there, and may
    # give its findings in another order)
    assert sorted(unnumbered(v) for v in twin.violations) == sorted(
        unnumbered(v) for v in readable.violations
    )
    taken, topics = twin.figures["topics_fast"], twin.figures["topics"]
    if name == "client-faults":
        unseen = [r for r in twin.deliveries if "unknown:publication-unseen" in r]
        assert unseen and taken, (len(unseen), taken)
    elif name in ("clean-3.1.1", "retained"):
        assert taken >= topics * 0.8, (taken, topics)  # plain traffic: the twin's
    elif name == "clean-5.0":
        # the synthetic 5.0 clients give most topics a Message Expiry Interval, which
        # the twin leaves to the readable judge
        assert 0 < taken < topics, (taken, topics)
    else:
        assert readable.violations and taken < topics  # the faults: the readable judge's


def _topics(rows: list[tuple[Any, ...]]) -> dict[str, list[tuple[Any, ...]]]:
    """Each topic's rows as the stage feeds them (its own, and every session row)."""
    sessions = [r for r in rows if r[2] is None and r[1].startswith("192")]
    found: dict[str, list[tuple[Any, ...]]] = {}
    for row in rows:
        if row[2] is not None and row[1].startswith("192"):
            found.setdefault(row[2], []).append(row)
    key = lambda r: (r[3], r[4], r[5], r[6])  # noqa: E731
    return {t: sorted(own + sessions, key=key) for t, own in found.items()}


def _with(row: tuple[Any, ...], **changes: Any) -> tuple[Any, ...]:
    names = {
        "detail": 18,
        "connection": 5,
        "packet_id": 14,
        "type": 10,
        "qos": 11,
        "dup": 12,
        "retain": 13,
        "code": 15,
        "digest": 16,
    }
    values = list(row)
    for name, value in changes.items():
        values[names[name]] = value
    return tuple(values)


def test_the_twin_gives_up_at_each_row_it_does_not_judge(
    events: dict[str, list[tuple[Any, ...]]],
) -> None:
    """A topic the twin takes, with one row changed the ways the readable judge would find
    or leave open: the twin gives it back each time."""
    topics = _topics(events["clean-3.1.1"])
    topic, rows = next((t, r) for t, r in sorted(topics.items())
                       if fast_distribution.judge(r, t) is not None and len(r) > 200)  # fmt: skip
    copy = next(i for i, r in enumerate(rows) if r[10] == "PUBLISH" and r[9] == "s2c")
    publish = next(i for i, r in enumerate(rows) if r[10] == "PUBLISH" and r[9] == "c2s")
    connect = next(i for i, r in enumerate(rows) if r[10] == "CONNACK")
    changed = {
        "a copy at another QoS": (copy, {"qos": (rows[copy][11] + 1) % 3}),
        "RETAIN kept on a live copy": (copy, {"retain": True}),
        "a copy sent twice": (copy, {}),
        "a session resumed": (connect, {"code": 1}),
        "a publication's re-send": (publish, {}),
        "lost traffic": (copy, {"type": "lost"}),
        "an UNSUBSCRIBE": (publish, {"type": "UNSUBSCRIBE"}),
    }
    for what, (at, change) in changed.items():
        broken = list(rows)
        if not change:  # the same PUBLISH again
            broken.insert(at + 1, broken[at])
        else:
            broken[at] = _with(broken[at], **change)
        assert fast_distribution.judge(broken, topic) is None, what
    # a copy of a message no PUBLISH showed, to a subscriber: unknown, as the readable
    # judge says (and its message's copy owed still, as there)
    unseen = list(rows)
    unseen[copy] = _with(rows[copy], digest="ffff")
    twin = fast_distribution.judge(unseen, topic)
    assert twin is not None and twin == _readable(unseen)
    assert (copy, "unknown:publication-unseen", -1, None) in twin[1]
    # ... but to a session none of whose subscriptions matches: the readable judge's finding
    subscribed = {r[5] for r in rows[:copy] if r[10] == "SUBACK"}
    ended = {r[5] for r in rows[:copy] if r[10] in ("DISCONNECT", "closed")}
    served = {r[5] for r in rows if r[10] == "PUBLISH" and r[9] == "s2c"}
    other = sorted(subscribed - ended - served)[0]
    stray = list(rows)
    stray.insert(copy + 1, _with(rows[copy], connection=other, digest="ffff"))
    assert fast_distribution.judge(stray, topic) is None
    # and the same topic without a copy: owed past the patience, a capture proves it missing
    dropped = [r for i, r in enumerate(rows) if i != copy]
    assert fast_distribution.judge(dropped, topic, patience=1e-9) is None


def _readable(
    rows: list[tuple[Any, ...]], patience: float = PATIENCE
) -> tuple[list[Any], list[Any]]:
    """The readable judge's ledger of one topic's rows, in the twin's form."""
    judge = DistributionJudge({}, complete=False, capture=True, patience=patience)
    for row in rows:
        judge.feed(_event(row))
    judge.finish()
    return _ledger(judge)


def _publishers(rows: list[tuple[Any, ...]]) -> dict[str, tuple[int, str, int]]:
    """Each payload digest published once: (its row, its publisher's connection, QoS)."""
    found: dict[str, list[tuple[int, str, int]]] = {}
    for i, r in enumerate(rows):
        if r[10] == "PUBLISH" and r[9] == "c2s":
            found.setdefault(r[16], []).append((i, r[5], r[11]))
    return {d: p[0] for d, p in found.items() if len(p) == 1}


def test_the_twin_gives_up_at_copies_out_of_order(
    events: dict[str, list[tuple[Any, ...]]],
) -> None:
    """Two copies to one subscriber of one publisher's messages at one QoS, swapped: the
    order of 4.6 is the readable judge's to weigh."""
    swapped = 0
    for topic, rows in sorted(_topics(events["clean-3.1.1"]).items()):
        if fast_distribution.judge(rows, topic) is None:
            continue
        published = _publishers(rows)
        last: dict[tuple[str, str, int], int] = {}  # (subscriber, publisher, QoS) -> row
        for j, r in enumerate(rows):
            if r[10] != "PUBLISH" or r[9] != "s2c" or r[16] not in published:
                continue
            at, publisher, qos = published[r[16]]
            key = (r[5], publisher, qos)
            i = last.get(key)
            if i is not None and at < i:  # the later message was taken before the first copy
                broken = list(rows)
                broken[i], broken[j] = broken[j], broken[i]
                assert fast_distribution.judge(broken, topic) is None, (topic, i, j)
                swapped += 1
                break
            last[key] = j
    assert swapped


def test_a_copy_forwarded_before_its_acknowledgement_is_the_twins(
    events: dict[str, list[tuple[Any, ...]]],
) -> None:
    """A server may forward a QoS 1 message before its PUBACK goes out: the twin takes the
    message at its first copy, as the readable judge does, and writes its ledger."""
    moved = 0
    for topic, rows in sorted(_topics(events["clean-3.1.1"]).items()):
        if fast_distribution.judge(rows, topic) is None:
            continue
        published = _publishers(rows)
        for digest, (at, publisher, qos) in published.items():
            if qos != 1:
                continue
            packet_id = rows[at][14]
            ack = next(i for i in range(at + 1, len(rows)) if rows[i][5] == publisher
                       and rows[i][10] == "PUBACK" and rows[i][14] == packet_id)  # fmt: skip
            copy = next((i for i in range(ack + 1, len(rows)) if rows[i][10] == "PUBLISH"
                         and rows[i][9] == "s2c" and rows[i][16] == digest), None)  # fmt: skip
            if copy is None or any(r[9] != "s2c" for r in rows[ack + 1 : copy]):
                continue  # (no change and no other PUBLISH in meanwhile)
            early = list(rows)
            early.insert(copy + 1, early.pop(ack))  # the PUBACK after the first copy
            twin = fast_distribution.judge(early, topic)
            assert twin is not None and twin == _readable(early), (topic, at)
            # and with another message alike in flight (the subscriber's, published just
            # before, acknowledged after): which of the two was taken is the readable
            # judge's to weigh
            subscriber = rows[copy][5]
            twice = list(early)
            assert early[copy - 1] is rows[copy]  # (the PUBACK moved after it)
            twice.insert(copy, _with(rows[ack], connection=subscriber, packet_id=65535))
            twice.insert(copy - 1, _with(rows[at], connection=subscriber, packet_id=65535))
            assert fast_distribution.judge(twice, topic) is None
            moved += 1
            break
    assert moved


def _orphaned(rows: list[tuple[Any, ...]], qos: int) -> tuple[list[tuple[Any, ...]], int]:
    """``rows`` with a QoS ``qos`` message's publisher cut off before its acknowledgement
    (its link closed right after the PUBLISH, the rest of its traffic gone) and a copy of
    the message after that; the rows, and where the link closed."""
    published = _publishers(rows)
    for digest, (at, publisher, level) in published.items():
        copies = [i for i, r in enumerate(rows) if r[16] == digest and r[9] == "s2c"]
        if level != qos or not copies or copies[0] < at + 2:
            continue
        close = (*rows[at][:9], "c2s", "closed", *(None,) * 8, 0.0)
        cut = [r for i, r in enumerate(rows) if i <= at or r[5] != publisher]
        cut.insert(at + 1, close)
        assert cut.index(rows[copies[0]]) > at + 1
        return cut, at + 1
    raise AssertionError(f"no QoS {qos} message copied after its PUBLISH")


def _connect(rows: list[tuple[Any, ...]], client_id: str) -> list[tuple[Any, ...]]:
    """A new link's CONNECT and CONNACK for ``client_id`` (a new session), from the first
    link's."""
    connect = next(r for r in rows if r[10] == "CONNECT")
    connack = next(r for r in rows if r[10] == "CONNACK" and r[5] == connect[5])
    conn = connect[5] + "-again"
    detail = json.dumps({**json.loads(connect[18]), "client_id": client_id})
    return [(*connect[:5], conn, *connect[6:18], detail, *connect[19:]),
            (*connack[:5], conn, *connack[6:])]  # fmt: skip


@pytest.mark.parametrize("qos", [1, 2])
def test_a_message_in_flight_as_its_link_ended(
    qos: int, events: dict[str, list[tuple[Any, ...]]]
) -> None:
    """A publisher's link ends before the server acknowledged its message: the message is
    the server's from its first copy on (QoS 2: never released), as the readable judge
    keeps it; the client back is the readable judge's to weigh."""
    topics = _topics(events["clean-3.1.1"])
    topic, rows = max(topics.items(), key=lambda item: len(item[1]))
    cut, closed = _orphaned(rows, qos)
    twin = fast_distribution.judge(cut, topic)
    assert twin is not None and twin == _readable(cut)
    at = cut[closed - 1]
    message = next(i for i in twin[0] if i[0] == closed - 1)
    assert message[1] != "unknown:not-acknowledged" and message[2] > 0, message
    if qos == 2:
        # a copy owed and never sent, past any patience: not missing, its message never
        # released
        last = max(i for i, r in enumerate(cut) if r[16] == at[16] and r[9] == "s2c")
        unsent = cut[:last] + cut[last + 1 :]
        twin = fast_distribution.judge(unsent, topic, patience=1e-9)
        assert twin is not None and twin == _readable(unsent, patience=1e-9)
    client = json.loads(next(r for r in cut if r[5] == at[5] and r[10] == "CONNECT")[18])
    back = _connect(cut, client["client_id"])
    again = [_with(at, connection=back[0][5])]
    again.append(_with(next(r for r in rows if r[10] == ("PUBACK", "PUBREC")[qos - 1]),
                       connection=back[0][5], packet_id=at[14]))  # fmt: skip
    # someone connecting meanwhile: unsure for the message, owed nothing of it
    changed = cut[: closed + 1] + _connect(cut, "someone-new") + cut[closed + 1 :]
    twin = fast_distribution.judge(changed, topic)
    assert twin is not None and twin == _readable(changed)
    # the client back, and the same packet identifier on its new link: the readable
    # judge's flows are the client's (a re-send to them)
    changed = cut[: closed + 1] + back + again + cut[closed + 1 :]  # before the copy
    assert fast_distribution.judge(changed, topic) is None


def test_a_subscription_changing_while_a_message_flies(
    events: dict[str, list[tuple[Any, ...]]],
) -> None:
    """A subscriber asks for another subscription between a QoS 1 message's PUBLISH and its
    taking (its SUBACK after it): its copy, sent, is the twin's as the readable
    judge's; not sent, it is unknown (subscription-changing), the readable judge's to say."""
    topics = _topics(events["clean-3.1.1"])
    topic, rows = max(topics.items(), key=lambda item: len(item[1]))
    for digest, (at, publisher, qos) in _publishers(rows).items():
        ack = next((i for i in range(at + 1, len(rows)) if rows[i][5] == publisher
                    and rows[i][10] == "PUBACK" and rows[i][14] == rows[at][14]), None)  # fmt: skip
        copies = [i for i, r in enumerate(rows) if r[16] == digest and r[9] == "s2c"]
        if qos == 1 and ack is not None and copies:
            taken = min(ack, copies[0])  # (a server may forward before its PUBACK)
            if copies[-1] > taken:
                break
    else:
        raise AssertionError("no QoS 1 message with a copy after its taking")
    copy = copies[-1]
    subscriber = rows[copy][5]
    subscribe = next(r for r in rows if r[5] == subscriber and r[10] == "SUBSCRIBE")
    suback = next(r for r in rows if r[5] == subscriber and r[10] == "SUBACK")
    asked = {"packet_id": 999, "subscriptions": [{"filter": "elsewhere/x", "qos": 0}]}
    request = _with(subscribe, packet_id=999, detail=json.dumps({**asked, "type": "SUBSCRIBE"}))
    answer = _with(
        suback, packet_id=999,
        detail=json.dumps({"granted": [0], "packet_id": 999, "type": "SUBACK"}),
    )  # fmt: skip
    changing = [*rows[: at + 1], request, *rows[at + 1 : taken + 1], answer, *rows[taken + 1 :]]
    twin = fast_distribution.judge(changing, topic)
    assert twin is not None and twin == _readable(changing)
    unsent = [r for r in changing if r is not rows[copy]]
    assert fast_distribution.judge(unsent, topic) is None
    # the same with the change answered before the taking, after the PUBLISH
    answered = [*rows[: at + 1], request, answer, *rows[at + 1 :]]
    assert fast_distribution.judge([r for r in answered if r is not rows[copy]], topic) is None


def _copies(rows: list[tuple[Any, ...]]) -> dict[str, list[int]]:
    """Each subscriber connection's copies, in the order sent."""
    found: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        if r[10] == "PUBLISH" and r[9] == "s2c":
            found.setdefault(r[5], []).append(i)
    return found


def test_a_copy_among_several_owed_alike(events: dict[str, list[tuple[Any, ...]]]) -> None:
    """Two publishers' messages with the same payload, owed one subscriber at two QoS, their
    copies sent the other way round: the copy is the owed one whose QoS it has (not the
    first owed), as the readable judge matches it; the twin writes the same ledger."""
    made = 0
    for topic, rows in sorted(_topics(events["clean-3.1.1"]).items()):
        if fast_distribution.judge(rows, topic) is None:
            continue
        published = _publishers(rows)
        for subscriber, sent in sorted(_copies(rows).items()):
            for first, second in itertools.pairwise(sent):
                one, two = rows[first], rows[second]
                if one[16] not in published or two[16] not in published:
                    continue
                (at1, by1, _), (at2, by2, _) = published[one[16]], published[two[16]]
                if by1 == by2 or one[11] == two[11] or not at1 < at2 < first:
                    continue
                if any(r[5] == subscriber for r in rows[first + 1 : second]):
                    continue  # (nothing else of the subscriber between the two)
                alike = [_with(r, digest=one[16]) if r[16] == two[16] else r for r in rows]
                alike[first], alike[second] = alike[second], alike[first]
                twin = fast_distribution.judge(alike, topic)
                assert twin is not None and twin == _readable(alike), (topic, first)
                # the copy sent first is the later message's
                assert (first, "copy", at2, None) in twin[1], (topic, first)
                # at RETAIN 1 it is alike none of them: the readable judge's
                kept = list(alike)
                kept[first] = _with(kept[first], retain=True)
                assert fast_distribution.judge(kept, topic) is None
                made += 1
                break
            if made:
                break
        if made:
            break
    assert made


def test_a_copy_to_a_session_that_subscribed_after_its_message(
    events: dict[str, list[tuple[Any, ...]]],
) -> None:
    """A copy of a message the server took before the session subscribed: a capture cannot
    tell which the server did first, unknown (subscription-changing) for the twin as for
    the readable judge; retained, or to a session owed the message, the readable judge's."""
    topics = _topics(events["clean-3.1.1"])
    topic, rows = max(topics.items(), key=lambda item: len(item[1]))
    published = _publishers(rows)
    copies = _copies(rows)
    for subscriber, sent in sorted(copies.items()):
        suback = next(i for i, r in enumerate(rows) if r[5] == subscriber and r[10] == "SUBACK")
        # a message taken well before the subscriber's SUBSCRIBE, with no copy to it
        before = [(d, p) for d, p in published.items() if p[0] + 20 < suback - 2
                  and all(rows[i][16] != d for i in sent)]  # fmt: skip
        if len(before) > 1 and sent:
            digest, (at, _, _) = before[-1]
            break
    else:
        raise AssertionError("no subscriber after a message")
    late = list(rows)
    late.insert(sent[0], _with(rows[sent[0]], digest=digest, qos=0, packet_id=None))
    twin = fast_distribution.judge(late, topic)
    assert twin is not None and twin == _readable(late)
    assert (sent[0], "unknown:subscription-changing", at, None) in twin[1]
    # an earlier message alike: the copy is the latest's, as the readable judge reads it
    earlier = before[-2][0]
    twice = [_with(r, digest=digest) if r[16] == earlier else r for r in late]
    twin = fast_distribution.judge(twice, topic)
    assert twin is not None and twin == _readable(twice)
    assert (sent[0], "unknown:subscription-changing", at, None) in twin[1]
    # retained: not the message the subscription was owed
    retained = list(late)
    retained[sent[0]] = _with(late[sent[0]], retain=True)
    assert fast_distribution.judge(retained, topic) is None
    # to a session the message was owed, whose copy was sent: another copy
    owed = next(i for i, r in enumerate(rows) if r[16] == digest and r[9] == "s2c")
    again = list(rows)
    again.insert(owed + 1, _with(rows[owed], qos=0, packet_id=None))
    assert fast_distribution.judge(again, topic) is None
    # to a session none of whose subscriptions matches the topic: the readable judge's
    place = sent[0]
    ended = {r[5] for r in rows[:place] if r[10] in ("DISCONNECT", "closed")}
    live = {r[5] for r in rows[:place] if r[10] == "CONNACK"} - ended - set(copies)
    stray = list(rows)
    stray.insert(place, _with(rows[sent[0]], connection=sorted(live)[0], digest=digest))
    assert fast_distribution.judge(stray, topic) is None


def _rows(server: Server, topic: str) -> list[tuple[Any, ...]]:
    """A scripted exchange's events as the stage's ``events`` rows of one topic (the
    inverse of :func:`pubproof.pipeline.servers._event`)."""
    rows = []
    for seq, event in enumerate(server.events):
        packet = dict(event.packet or {})
        kind = packet.get("type", "closed")
        published = kind == "PUBLISH"
        detail = packet.get("properties") if published else packet
        if kind in ("PUBACK", "PUBREC", "PUBCOMP"):
            detail = None  # an acknowledgement's fields are its columns
        rows.append((
            "c", "s", topic if published else None, event.t, seq, event.conn, seq, seq, 0,
            event.direction or "c2s", kind, packet.get("qos"), packet.get("dup"),
            packet.get("retain"), packet.get("packet_id"), packet.get("reason_code"),
            packet.get("payload_hex"), len(packet.get("payload_hex") or "") // 2,
            None if detail is None else json.dumps(detail),
            0.0,
        ))  # fmt: skip
    return rows


def test_the_twin_gives_a_topic_back_when_a_send_quota_is_used_up() -> None:
    """5.0: a session's Receive Maximum QoS 1 copies unacknowledged at the end: the
    readable judge leaves the copy still owed waiting (``quota-full``); the twin gives the
    topic back. With room in the quota (or the copy acknowledged), the twin's rows are the
    readable judge's."""
    for maximum, acknowledged, full in ((1, False, True), (2, False, False), (1, True, False)):
        server = Server(level=V50)
        server.connect("sub", receive_maximum=maximum)
        server.subscribe("sub", ("q/#", 1))
        server.connect("pub")
        server.publish("pub", "q/t", b"1", 1)
        server.deliver("sub", "q/t", b"1", 1, acknowledged=acknowledged)
        server.publish("pub", "q/t", b"2", 1)
        rows = _rows(server, "q/t")
        readable = _readable(rows)
        assert ("unknown:quota-full" in str(readable)) is full
        twin = fast_distribution.judge(rows, "q/t")
        assert (twin is None) is full, maximum
        assert twin is None or twin == readable


def test_a_copy_among_several_owed_alike_is_the_one_whose_retain_it_has() -> None:
    """A retained message owed a new subscription, then a live message with the same
    payload and QoS: two copies owed alike but for RETAIN. The server sends the live one
    first (RETAIN 0), then the retained one (RETAIN 1): each copy is the owed one whose
    RETAIN it has, not the first owed, as the readable judge matches it; the twin takes
    the topic and writes the same ledger (a twin whose choice ignored RETAIN would match
    the live copy to the retained one and give the topic back)."""
    server = Server()
    server.connect("pub")
    server.publish("pub", "r/t", b"x", 1, retain=True)
    server.connect("sub")
    server.subscribe("sub", ("r/#", 1))
    server.publish("pub", "r/t", b"x", 1)
    server.deliver("sub", "r/t", b"x", 1)  # the live message's copy
    server.deliver("sub", "r/t", b"x", 1, retain=True)  # the retained message's
    rows = _rows(server, "r/t")
    readable = _readable(rows)
    twin = fast_distribution.judge(rows, "r/t")
    assert twin is not None and twin == readable
    ins, outs = twin
    published = [i for i, r in enumerate(rows) if r[10] == "PUBLISH" and r[9] == "c2s"]
    sent = [i for i, r in enumerate(rows) if r[10] == "PUBLISH" and r[9] == "s2c"]
    # the copy sent first is the live (second) message's, the next the retained one's
    assert [(at, message) for at, _, message, _ in outs] == list(
        zip(sent, published[::-1], strict=True)
    )
    # (the retained message had no subscriber when it was taken: its copy came later)
    assert [(outcome, copies) for _, outcome, copies in ins] == [
        ("no-subscriber", 1), ("delivered", 1),
    ]  # fmt: skip
