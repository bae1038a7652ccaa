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
3. no PUBLISH with RETAIN was read before q: a retained message (or its deletion, with
   the messages the store may hold in its place) is carried by the readable judge from
   message to message and cannot be given to a judge that starts at q, so a topic that
   retains gets no quiet point from its first retained PUBLISH on;

and, checked here over the whole topic once the twin gave up (:func:`cut`):

4. no PUBLISH from q on (in or out) carries the payload of a PUBLISH before q: the
   readable judge reads a copy by the latest message alike (its ``by_content``), so a
   copy from q on of a message before q (another copy, a re-send, a late one) must be
   judged against that message, which a judge starting at q does not know;
5. no PUBLISH of no topic (a 5.0 Topic Alias with no mapping seen) before q: it is fed
   to the readable judge as a session row, and the twin's ledger would hold it too.

Then the 4.6 order of copies (the latest message sent per session and publisher) is
settled at q too: every copy of a message before q went out before q, every message from
q on is received from q on, so no order problem spans q. The window of session changes
and the patience are rebuilt from the session rows and the times, the same for both
judges; the capture's end is the same row.

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
TOPIC, TYPE, DIGEST = _E["topic"], _E["type"], _E["digest"]
FRAME: Final = _E["frame"]


def cut(rows: Sequence[Sequence[Any]], quiet: Sequence[int]) -> int:
    """The latest of the twin's quiet points ``quiet`` (in increasing order) at which the
    readable judge may take over the topic (rules 4 and 5), or 0: the whole topic."""
    if not quiet:
        return 0
    # rule 5: no PUBLISH of no topic before the cut
    limit = len(rows)
    # rule 4: each payload's first and last PUBLISH; a cut inside (first, last] of one
    # splits it
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for at, row in enumerate(rows):
        if row[TYPE] != "PUBLISH":
            continue
        if row[TOPIC] is None:
            limit = min(limit, at)
            continue
        digest = row[DIGEST] or ""
        if digest not in first:
            first[digest] = at
        last[digest] = at
    covered = [0] * (len(rows) + 2)
    for digest, start in first.items():
        end = last[digest]
        if start < end:
            covered[start + 1] += 1
            covered[end + 1] -= 1
    depth = 0
    split = [False] * (len(rows) + 1)
    for at in range(len(rows) + 1):
        depth += covered[at]
        split[at] = depth > 0
    for i in range(len(quiet) - 1, -1, -1):
        at = quiet[i]
        if 0 < at <= limit and not split[at]:
            return at
    return 0


def handed(rows: Sequence[Sequence[Any]], start: int) -> list[int]:
    """The rows the readable judge is fed from the cut ``start`` on: every session row
    (of no topic), and the topic's rows from ``start``."""
    return [at for at, row in enumerate(rows) if at >= start or row[TOPIC] is None]


def note(message: str, start: Sequence[Any]) -> str:
    """A finding's text, of a topic handed back at the row ``start``: its messages are
    numbered from there."""
    return f"{message} (judged from frame {start[FRAME]} on: messages numbered from there)"
