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
2. nothing of the topic is in flight: no PUBLISH in waiting for its acknowledgement (or
   of a link that ended, an orphan), no QoS 2 message before its PUBREL, no copy owed to
   any session, no copy unacknowledged, and no flow left open by a session that ended
   (the readable judge keeps a session's flows until its next clean CONNACK). So every
   message before q has each of its copies settled: what became of it is final at q, and
   a judge that never saw it owes nothing of it, and keeps no flow of it, either;
3. the retained message, if the topic has one at q (R), is one the store holds for
   certain: no two retained PUBLISHes were ever in flight together (the readable judge
   would keep both as what the store may hold), and no retained copy of a message no
   PUBLISH showed was sent (a retained message from before the capture). R is carried
   over by its *footprint* (:func:`footprint`): its PUBLISH in, the acknowledgements of
   its flow, each copy of it before q and their acknowledgements, all fed to the readable
   judge, which so takes R, stores it, owes its copies and sees them all sent, as the
   whole topic's judge did; the ledger of the footprint's rows is the readable judge's
   (R's copies, counted in its row, may go on after q);

and, checked here over the whole topic once the twin gave up (:func:`cut`):

4. no PUBLISH from q on (in or out) carries the payload of a PUBLISH before q outside the
   footprint: the readable judge reads a copy by the latest message alike (its
   ``by_content``), so a copy from q on of a message before q (another copy, a re-send, a
   late one) must be judged against that message, which a judge starting at q does not
   know (R it knows);
5. no PUBLISH of no topic (a 5.0 Topic Alias with no mapping seen) before q: it is fed
   to the readable judge as a session row, and the twin's ledger would hold it too (the
   twin gives up at one: this only keeps the two ledgers apart for certain).

Then the 4.6 order of copies (the latest message sent per session and publisher) is
settled at q too: every copy of a message before q went out before q, every message from
q on is received from q on, so no order problem spans q (R's copies before q come before
any later message's, in both judges). The window of session changes and the patience are
rebuilt from the session rows and the times, the same for both judges; the capture's end
is the same row.

What the readable judge writes from q on is the whole topic's, but for one thing: it
numbers the messages it follows from 1 at q (its findings' text says "message N"); a
handed-back finding's text says so, and its evidence names the frames as ever.
``tests/test_pipeline_handback.py`` holds the rows and findings equal to the whole
topic's readable judgement.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from pubproof.pipeline.tables import EVENTS, index

_E = index(EVENTS)
TOPIC, TYPE, DIGEST, QOS = _E["topic"], _E["type"], _E["digest"], _E["qos"]
FRAME, CONNECTION, PACKET_ID, CODE = _E["frame"], _E["connection"], _E["packet_id"], _E["code"]


#: the quiet points tried, the latest first (each is a pass over the topic's rows)
TRIED: Final = 8
#: an acknowledgement's rows
ACKS: Final = ("PUBACK", "PUBREC", "PUBREL", "PUBCOMP")


def cut(
    rows: Sequence[Sequence[Any]],
    quiet: Sequence[int],
    kept: Sequence[int],
    outs: Sequence[tuple[int, str, int, bool | None]],
) -> tuple[int, list[int]]:
    """The latest of the twin's quiet points ``quiet`` (in increasing order, ``kept`` the
    retained message's row at each, ``outs`` the twin's ledger of copies) at which the
    readable judge may take over the topic (rules 4 and 5), with the footprint of the
    retained message there; or 0: the whole topic."""
    # rule 5: no PUBLISH of no topic before the cut
    limit = len(rows)
    for at, row in enumerate(rows):
        if row[TYPE] == "PUBLISH" and row[TOPIC] is None:
            limit = at
            break
    tried = 0
    for i in range(len(quiet) - 1, -1, -1):
        start = quiet[i]
        if start <= 0 or start > limit:
            continue
        if tried == TRIED:
            break
        tried += 1
        steps = [] if kept[i] < 0 else footprint(rows, kept[i], start, outs)
        # rule 4: no payload on both sides, the footprint's aside
        inside = set(steps)
        later = {rows[at][DIGEST] or "" for at in range(start, len(rows))
                 if rows[at][TYPE] == "PUBLISH"}  # fmt: skip
        if not any(
            rows[at][TYPE] == "PUBLISH" and (rows[at][DIGEST] or "") in later
            and at not in inside
            for at in range(start)
        ):  # fmt: skip
            return start, steps
    return 0, []


def footprint(
    rows: Sequence[Sequence[Any]],
    message: int,
    before: int,
    outs: Sequence[tuple[int, str, int, bool | None]],
) -> list[int]:
    """The rows before ``before`` of the message whose PUBLISH in is at ``message``: that
    row and the acknowledgements of its flow, each copy of it (the twin's ledger says
    which) and theirs; in order."""
    found = [message, *_flow(rows, message, before)]
    for out in outs:
        if out[2] == message and out[0] < before:
            found.append(out[0])
            found.extend(_flow(rows, out[0], before))
    return sorted(found)


def _flow(rows: Sequence[Sequence[Any]], at: int, before: int) -> list[int]:
    """The acknowledgements, before ``before``, of the PUBLISH at ``at`` (by its
    connection and packet identifier, up to the one that ends its flow)."""
    publish = rows[at]
    qos = publish[QOS] or 0
    if not qos or publish[PACKET_ID] is None:
        return []
    conn, packet_id = publish[CONNECTION], publish[PACKET_ID]
    last = "PUBACK" if qos == 1 else "PUBCOMP"
    found = []
    for i in range(at + 1, before):
        row = rows[i]
        if row[CONNECTION] == conn and row[PACKET_ID] == packet_id and row[TYPE] in ACKS:
            found.append(i)
            if row[TYPE] == last or (row[TYPE] == "PUBREC" and (row[CODE] or 0) >= 0x80):
                break
    return found


def handed(rows: Sequence[Sequence[Any]], start: int, steps: Sequence[int]) -> list[int]:
    """The rows the readable judge is fed from the cut ``start`` on: every session row
    (of no topic), the retained message's footprint ``steps``, and the topic's rows from
    ``start``."""
    inside = set(steps)
    return [at for at, row in enumerate(rows) if at >= start or row[TOPIC] is None or at in inside]


def note(message: str, start: Sequence[Any]) -> str:
    """A finding's text, of a topic handed back at the row ``start``: its messages are
    numbered from there."""
    return f"{message} (judged from frame {start[FRAME]} on: messages numbered from there)"
