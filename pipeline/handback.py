"""A topic handed back to the readable judge from a quiet point on, not from its first row.

Rules / theory of operation
---------------------------
The cross-connection stage (:mod:`.servers`) judges a topic with the fast twin
(:mod:`.fast.distribution`) and, where the twin gives up at row k, with the readable judge
(:class:`~pubproof.judge.distribution.DistributionJudge`). The readable judge need not
start again from the topic's first row: the twin's ledger of the rows before a *quiet
point* q <= k is kept, and the readable judge, started fresh, is fed every session row
(the rows of no topic: CONNECT, SUBSCRIBE, their answers, the links' ends, from the
first, since sessions and subscriptions must be known) and the topic's rows from q on.
Its ledger of the rows from q on, and its findings, are the whole topic's.

A quiet point is a PUBLISH in (row q, read by the twin before it), where:

1. the twin followed every row before q (it gives up at anything it does not follow, so
   the rows before q are plain traffic: clean sessions seen from their CONNECT, messages
   each taken, forwarded and acknowledged as the model says, no finding);
2. every PUBLISH in before q was taken (none waits for its acknowledgement, none of a
   link that ended), and every flow open (a copy not acknowledged, a QoS 2 message
   before its PUBREL) is a flow of a message the twin follows: none of a copy of a
   message no PUBLISH showed, none a client's wrong answer left open, none left open by
   a session that ended (the readable judge keeps a session's flows until its next clean
   CONNACK);
3. the messages still *open* at q (the topic's retained message, each message with a
   copy owed, each with a flow open) are *carried over*: their *footprints*
   (:func:`footprint`: the PUBLISH in, its flow's acknowledgements, each copy of it before
   q and theirs) are fed to the readable judge, which so takes each, stores the retained
   one, owes their copies and sees those sent, as the whole topic's judge did; the ledger
   of a footprint's rows is the readable judge's. Every other message before q is
   *settled*: each of its copies sent and acknowledged, or its session ended, so what
   became of it is final at q (the twin's ledger), and a judge that never saw it owes
   nothing of it and keeps no flow of it;
4. the retained message, if any, is one the store holds for certain: no two retained
   PUBLISHes in flight together since the last change of the store received after both
   were taken (the readable judge keeps both as what the store may hold until then: its
   ``retained_open``), and no retained copy of a message no PUBLISH showed was ever sent;
5. the order of 4.6 is known across q: a copy owed at q of a message older than one of
   the same order key whose copy was already sent (a copy the order proves missing) is
   carried over with the latest message of that order key whose copy was sent (that
   copy is what the judge names as proving it, when no later one comes). Every other
   order problem is between messages both judges know: a settled message's copies all
   went out before q, and it was received before any message from q on;

and, checked here over the whole topic once the twin gave up (:func:`cut`):

6. a payload the readable judge sees (a PUBLISH from q on, or a message carried over) is
   seen whole: every message of it before q is carried over too (a settled one fed
   whole by its footprint, so the judge's ``by_content``, by which it reads a copy no
   copy owed matches, and its untangling of alike copies for the order know every
   message alike), and no PUBLISH of it before q is a copy of a message no PUBLISH
   showed (which no footprint holds);
7. no PUBLISH of no topic (a 5.0 Topic Alias with no mapping seen) before q: it is fed
   to the readable judge as a session row, and the twin's ledger would hold it too (the
   twin gives up at one: this only keeps the two ledgers apart for certain);
8. the order of 4.6 is judged alike: the judge reads a copy owed as missing where a copy
   of a later message of its order was sent (``_later``), unless an alike copy sent may
   have been its and that copy's message has no later one sent (``_read_otherwise``), and
   it untangles alike copies by the places of the later messages of each's order, and by
   whether the earlier ones were sent. So for each copy, sent before q, of a message fed
   whose payload another message has, the next message of that copy's order is fed too
   (by its footprint, settled or not), where its copy went out before q (a copy after q
   is of a message open at q, carried over). One is enough: it is the earliest later one
   (the twin saw the order kept before q), and no message alike may be read as sent
   before it. Without it a missing copy read "ambiguous" (the property test's
   counterexample: a missing QoS 0 copy of an empty payload);
9. the retained message is the same for both judges wherever one is fed: a settled
   retained message fed (by rules 6 or 8) is the judge's retained message from its
   PUBLISH on, so every later retained PUBLISH before q is fed too (a subscription made
   in between is owed the one the server kept: the benchmark's capture found
   MQTT-3.3.1-6 and -7 the whole topic's judge does not).

The window of session changes and the patience are rebuilt from the session rows and the
footprints' times, the same for both judges; the capture's end is the same row.

What the readable judge writes from q on is the whole topic's, but for one thing: it
numbers the messages it follows from 1 at q (its findings' text says "message N"); a
handed-back finding's text says so, and its evidence names the frames as ever.
``tests/test_pipeline_handback.py`` holds the rows and findings equal to the whole
topic's readable judgement.
"""

from __future__ import annotations

import bisect
import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from pubproof.pipeline.tables import EVENTS, index

_E = index(EVENTS)
TOPIC, TYPE, DIGEST, QOS = _E["topic"], _E["type"], _E["digest"], _E["qos"]
RETAIN: Final = _E["retain"]
FRAME, CONNECTION, PACKET_ID, CODE = _E["frame"], _E["connection"], _E["packet_id"], _E["code"]
DETAIL: Final = _E["detail"]
DIRECTION: Final = _E["direction"]
#: a client's packets
C2S: Final = "c2s"


#: the quiet points whose footprints are weighed, the latest first (each a pass over the
#: rows of the messages carried over)
TRIED: Final = 16
#: an acknowledgement's rows
ACKS: Final = ("PUBACK", "PUBREC", "PUBREL", "PUBCOMP")


def cut(
    rows: Sequence[Sequence[Any]],
    quiet: Sequence[int],
    carried: Sequence[Sequence[int]],
    outs: Sequence[tuple[int, str, int, bool | None]],
    clients: Mapping[str, str] | None = None,
) -> tuple[int, list[int]]:
    """The latest of the twin's quiet points ``quiet`` (in increasing order, ``carried``
    the messages carried over at each, ``outs`` the twin's ledger of copies) at which the
    readable judge may take over the topic (rules 6 to 9), with the footprints of the
    messages carried over; or 0: the whole topic. ``clients``: each connection's client
    identifier (the stage's, of its server; else read from the CONNECT rows)."""
    limit = len(rows)
    alike: dict[str, list[int]] = {}  # each payload's PUBLISH rows
    acks: dict[tuple[Any, Any], list[int]] = {}  # each flow's acknowledgements
    retained: list[int] = []  # the retained messages' PUBLISH in rows (rule 9)
    for at, row in enumerate(rows):
        kind = row[TYPE]
        if kind == "PUBLISH":
            if row[TOPIC] is None:  # rule 7: no PUBLISH of no topic before the cut
                limit = min(limit, at)
                continue
            alike.setdefault(row[DIGEST] or "", []).append(at)
            if row[RETAIN] and row[DIRECTION] == C2S:
                retained.append(at)
        elif kind in ACKS:
            acks.setdefault((row[CONNECTION], row[PACKET_ID]), []).append(at)
    copies: dict[int, list[int]] = {}
    for out in outs:
        if out[2] >= 0:
            copies.setdefault(out[2], []).append(out[0])
    later = _later(rows, copies, _clients(rows) if clients is None else clients)
    # the payloads several messages share (rule 8)
    repeated = {
        d for d, found in alike.items() if sum(rows[at][DIRECTION] == C2S for at in found) > 1
    }
    # the payloads on both sides of each cut, swept from the end: a payload spans the
    # cuts in (its first row, its last]
    ends = sorted((found[-1], found[0], digest) for digest, found in alike.items())
    spanning: dict[str, int] = {}  # payload -> its first row
    weighed = 0
    for i in range(len(quiet) - 1, -1, -1):
        start = quiet[i]
        if weighed == TRIED or start <= 0:
            break
        while ends and ends[-1][0] >= start:
            _, first, digest = ends.pop()
            spanning[digest] = first
        for digest in [d for d, first in spanning.items() if first >= start]:
            del spanning[digest]
        if start > limit:
            continue
        # rule 6: a payload the readable judge sees (after the cut, or a message carried
        # over) is seen whole: each message of it before the cut is carried over too (a
        # settled one so fed whole: its PUBLISH in, its copies, their flows), and no row
        # of it is a copy of none (of a message no PUBLISH showed)
        opened, seen = _opened(rows, start, carried[i], spanning, alike, later, repeated, retained)
        weighed += 1
        steps: list[int] = []
        for message in opened:
            steps.extend(footprint(rows, message, start, copies.get(message, ()), acks))
        inside = set(steps)
        if all(at >= start or at in inside for digest in seen for at in alike[digest]):
            steps.sort()
            return start, steps
    return 0, []


def _opened(
    rows: Sequence[Sequence[Any]],
    start: int,
    carried: Sequence[int],
    spanning: dict[str, int],
    alike: dict[str, list[int]],
    later: dict[int, list[tuple[int, int]]],
    repeated: set[str],
    retained: Sequence[int],
) -> tuple[set[int], set[str]]:
    """The messages (their PUBLISH in rows) whose footprints are fed to the readable judge
    at the cut ``start``, and the payloads it sees: those carried over (rule 3), every
    message before the cut of a payload it sees (rule 6), and for each copy of a message
    whose payload another message has (``repeated``), the next message of the copy's
    order (rule 8: ``later``, where that one's copy went out before the cut), until none
    is new."""
    opened: set[int] = set()
    seen: set[str] = set()
    todo = list(carried)
    payloads = list(spanning)
    while todo or payloads:
        for digest in payloads:  # rule 6
            if digest not in seen:
                seen.add(digest)
                todo.extend(at for at in alike[digest] if at < start and rows[at][DIRECTION] == C2S)
        payloads = []
        while todo:
            message = todo.pop()
            if message in opened:
                continue
            opened.add(message)
            digest = rows[message][DIGEST] or ""
            payloads.append(digest)
            if digest in repeated:  # rule 8
                todo.extend(after for after, copy in later.get(message, ()) if copy < start)
        # rule 9: from the first retained message fed on, every retained message
        first = min((m for m in opened if rows[m][RETAIN]), default=start)
        todo.extend(r for r in retained[bisect.bisect_left(retained, first) :] if r < start
                    and r not in opened)  # fmt: skip
    return opened, seen


def _clients(rows: Sequence[Sequence[Any]]) -> dict[str, str]:
    """Each connection's client identifier, from its CONNECT row."""
    client: dict[str, str] = {}
    for row in rows:
        if row[TYPE] == "CONNECT" and row[DETAIL]:
            client[row[CONNECTION]] = str(json.loads(row[DETAIL]).get("client_id") or "")
    return client


def _later(
    rows: Sequence[Sequence[Any]], copies: dict[int, list[int]], client: Mapping[str, str]
) -> dict[int, list[tuple[int, int]]]:
    """For each message (its PUBLISH in row), the next message of the order of each of
    its copies (the same publisher, QoS published and sent, to the same client: the
    judge's ``order_key``), with that one's copy's row."""
    groups: dict[tuple[Any, ...], list[tuple[int, int]]] = {}
    for message, sent in copies.items():
        publish = rows[message]
        publisher = client.get(publish[CONNECTION], publish[CONNECTION])
        for at in sent:
            copy = rows[at]
            key = (client.get(copy[CONNECTION], copy[CONNECTION]), publisher, publish[QOS],
                   copy[QOS])  # fmt: skip
            groups.setdefault(key, []).append((message, at))
    found: dict[int, list[tuple[int, int]]] = {}
    for group in groups.values():
        group.sort()
        for (message, _), after in itertools.pairwise(group):
            found.setdefault(message, []).append(after)
    return found


def footprint(
    rows: Sequence[Sequence[Any]],
    message: int,
    before: int,
    copies: Sequence[int],
    acks: dict[tuple[Any, Any], list[int]] | None = None,
) -> list[int]:
    """The rows before ``before`` of the message whose PUBLISH in is at ``message``: that
    row and the acknowledgements of its flow, each of its ``copies`` (the twin's ledger
    says which rows are) and theirs. ``acks``: the rows of the acknowledgements by
    connection and packet identifier, in order (else looked for row by row)."""
    found = [message, *_flow(rows, message, before, acks)]
    for at in copies:
        if at < before:
            found.append(at)
            found.extend(_flow(rows, at, before, acks))
    return found


def _flow(
    rows: Sequence[Sequence[Any]],
    at: int,
    before: int,
    acks: dict[tuple[Any, Any], list[int]] | None,
) -> list[int]:
    """The acknowledgements, before ``before``, of the PUBLISH at ``at`` (by its
    connection and packet identifier, up to the one that ends its flow)."""
    publish = rows[at]
    qos = publish[QOS] or 0
    if not qos or publish[PACKET_ID] is None:
        return []
    conn, packet_id, way = publish[CONNECTION], publish[PACKET_ID], publish[DIRECTION]
    last = "PUBACK" if qos == 1 else "PUBCOMP"
    found = []
    if acks is None:
        places: Sequence[int] = range(at + 1, before)
    else:
        own = acks.get((conn, packet_id), [])
        places = own[bisect.bisect_right(own, at) : bisect.bisect_left(own, before)]
    for i in places:
        row = rows[i]
        if row[CONNECTION] != conn or row[PACKET_ID] != packet_id or row[TYPE] not in ACKS:
            continue
        # the receiver's answers, the sender's PUBREL (the other way's flows aside)
        if (row[DIRECTION] == way) == (row[TYPE] == "PUBREL"):
            found.append(i)
            if row[TYPE] == last or (row[TYPE] == "PUBREC" and (row[CODE] or 0) >= 0x80):
                break
    return found


def handed(rows: Sequence[Sequence[Any]], start: int, steps: Sequence[int]) -> list[int]:
    """The rows the readable judge is fed from the cut ``start`` on: every session row
    (of no topic), the footprints ``steps`` of the messages carried over, and the topic's
    rows from ``start``."""
    inside = set(steps)
    return [at for at, row in enumerate(rows) if at >= start or row[TOPIC] is None or at in inside]


def note(message: str, start: Sequence[Any]) -> str:
    """A finding's text, of a topic handed back at the row ``start``: its messages are
    numbered from there."""
    return f"{message} (judged from frame {start[FRAME]} on: messages numbered from there)"
