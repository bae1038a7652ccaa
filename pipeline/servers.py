"""The cross-connection stage: every message followed from its publisher through the server
to each subscriber, by the distribution judge, server by server and topic by topic.

Rules / theory of operation
---------------------------
The per-connection stage writes, per connection, the packets the distribution judge reads
(:mod:`.tap`: the ``events`` scratch table). This stage reads them sorted by (capture,
server, topic, time, ...), with each server's events of no topic first (its sessions:
CONNECT, CONNACK, SUBSCRIBE, SUBACK, UNSUBSCRIBE, UNSUBACK, DISCONNECT, and the links'
``lost`` and ``closed``), and judges each (capture, server, topic) apart: a fresh
:class:`~pubproof.judge.distribution.DistributionJudge` (``capture`` mode) is fed the
topic's events (its PUBLISH packets both ways and their acknowledgements) merged, in time
order, with the session events of the connections that matter to the topic (those with
events on it, those with a topic filter that may match it, and any other connection of
the same client identifier). One server is never mixed with another, nor one capture with
another: each has its own clock.

The fast twin (:mod:`.fast.distribution`) judges a topic first; where it gives up, the
readable judge takes the topic over from the twin's last quiet point (:mod:`.handback`:
the twin's ledger before it, the messages still open there carried over by their rows,
with those the judge's reading of alike copies needs, every session row), or from its
first row where there is none. Its findings' text then
numbers the topic's messages from the cut (and says so); the figures count the topics
taken whole by the twin (``topics_fast``), those the readable judge read
(``topics_readable``), of which handed back from a quiet point (``topics_partial``), and
the topics' events it read (``events_handed_back``).

Why a topic alone is enough: everything the judge decides of a message depends on the
sessions and their subscriptions (which are all here), on other messages of the same topic
only (the retained message, the order of 4.6, which is per topic), and on the flows of the
packet identifiers its copies use (whose acknowledgements carry the topic of their
PUBLISH, :mod:`.tap`). So the judgement of a topic is a function of its rows and its
server's sessions, whichever task makes it: both engines, any number of partitions and any
split of the input give the same tables.

Partitioning: a (capture, server, topic) belongs to partition
``crc32(capture NUL server NUL topic) mod N`` (:func:`partition_of`); a partition's task
judges its topics and needs every session event of their servers, which every task reads
(they are few: a handful per connection). What must be co-located is therefore one
topic's events of one server and that server's session events; the work scales with the
number of servers and topics.

Output, per topic judged: the ``deliveries`` rows (each PUBLISH in and out, with what
became of it: :mod:`pubproof.judge.distribution_ledger`) and the distribution findings as
``violations`` rows (``source`` ``distribution``, ``role`` ``server``, reported at the
last packet of their evidence, which is a trace across the connections involved). A
PUBLISH whose topic name is unknown (a 5.0 Topic Alias with no mapping seen) is counted
by partition 0, never judged.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import operator
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

from pubproof.judge.distribution import DistributionJudge
from pubproof.judge.distribution_capture import PATIENCE
from pubproof.judge.distribution_events import C2S, S2C, Event
from pubproof.judge.distribution_ledger import unknown
from pubproof.judge.findings import PASS, Finding, Source
from pubproof.pipeline import handback
from pubproof.pipeline.fast import distribution as fast_distribution
from pubproof.pipeline.rows import Columns, DeliveryRow, ViolationRow
from pubproof.pipeline.tables import EVENTS, index
from pubproof.pipeline.tap import CLOSED, LOST

_E = index(EVENTS)
CAPTURE, SERVER, TOPIC, T = _E["capture"], _E["server"], _E["topic"], _E["t"]
AT, CONNECTION, SEQ, FRAME = _E["at_frame"], _E["connection"], _E["seq"], _E["frame"]
OFFSET, DIRECTION, TYPE, QOS = _E["offset"], _E["direction"], _E["type"], _E["qos"]
DUP, RETAIN, PACKET_ID, CODE = _E["dup"], _E["retain"], _E["packet_id"], _E["code"]
DIGEST, SIZE, DETAIL, SKEW = _E["digest"], _E["size"], _E["detail"], _E["skew"]
#: the order the judge is fed a server's events in (within one capture and server)
ORDER: Final = (T, AT, CONNECTION, SEQ)
#: :func:`order` made in C
ORDER_KEY: Final = operator.itemgetter(*ORDER)
#: a ledger entry's row
_FIRST: Final = operator.itemgetter(0)


def order(row: Sequence[Any]) -> tuple[Any, ...]:
    """A row's place in time: capture time, the frame that completed it, its connection
    and its place on the connection."""
    return row[T], row[AT], row[CONNECTION], row[SEQ]


def partition_of(capture: str, server: str, topic: str, count: int) -> int:
    """Which of ``count`` partitions judges the topic ``topic`` of ``server`` in
    ``capture`` (the same in every process)."""
    key = f"{capture}\x00{server}\x00{topic}".encode()
    return zlib.crc32(key) % count


def may_match(topic_filter: str, topic: str) -> bool:
    """Whether ``topic_filter`` may match ``topic`` under any edition and reading (a
    Shared Subscription's filter without its share name; ``$`` topics matched like any
    other): more than the judge's match, never less, so that no session a topic needs is
    left out."""
    if topic_filter.startswith("$share/"):
        parts = topic_filter.split("/", 2)
        topic_filter = parts[2] if len(parts) == 3 else ""
    wanted, names = topic_filter.split("/"), topic.split("/")
    for i, level in enumerate(wanted):
        if level == "#":
            return True
        if i >= len(names):
            return False
        if level != "+" and level != names[i]:
            return False
    return len(wanted) == len(names)


class _Server:
    """One server's session events (its rows without a topic), by connection, with each
    connection's topic filters and client identifier."""

    def __init__(self) -> None:
        self.rows: dict[str, list[tuple[Any, ...]]] = {}
        self.filters: dict[str, set[str]] = {}
        self.client: dict[str, str] = {}
        self.by_client: dict[str, set[str]] = {}

    def add(self, row: tuple[Any, ...]) -> None:
        conn = row[CONNECTION]
        self.rows.setdefault(conn, []).append(row)
        kind, detail = row[TYPE], row[DETAIL]
        if detail is None or kind not in ("CONNECT", "SUBSCRIBE", "UNSUBSCRIBE"):
            return
        fields = json.loads(detail)
        if kind == "CONNECT":
            client = str(fields.get("client_id") or "")
            self.client[conn] = client
            self.by_client.setdefault(client, set()).add(conn)
        elif kind == "SUBSCRIBE":
            wanted = fields.get("subscriptions") or []
            self.filters.setdefault(conn, set()).update(str(w.get("filter")) for w in wanted)
        else:
            self.filters.setdefault(conn, set()).update(str(f) for f in fields.get("filters", []))

    def relevant(self, topic: str, seen: Iterable[str]) -> set[str]:
        """The connections whose session events the judgement of ``topic`` needs."""
        chosen = set(seen)
        for conn, filters in self.filters.items():
            if conn not in chosen and any(may_match(f, topic) for f in filters):
                chosen.add(conn)
        for conn in list(chosen):
            client = self.client.get(conn)
            if client:
                chosen.update(self.by_client.get(client, ()))
        return chosen


class Stage:
    """The cross-connection stage over the rows of ``events`` in its sort order: partition
    ``partition`` of ``count``'s share of the topics. Its output: :attr:`deliveries` and
    :attr:`violations` (row tuples of those tables) and :attr:`figures` (counts for the
    reconciliation, each made by exactly one partition)."""

    def __init__(
        self,
        readings: Mapping[str, str] | None = None,
        *,
        patience: float = PATIENCE,
        count: int = 1,
        partition: int = 0,
        flush: Callable[[Stage], None] | None = None,
        fast: bool = True,
    ) -> None:
        self.readings = dict(readings or {})
        #: judge a topic with the fast twin first (:mod:`.fast.distribution`; off: the
        #: readable judge alone, as the differential tests run it)
        self.fast = fast
        #: called after each topic judged (to hand the rows on, say)
        self.flush = flush
        self.patience = patience
        self.count, self.partition = count, partition
        #: the ``deliveries`` rows, as columns (:class:`~.rows.Columns`: see :meth:`_deliveries`)
        self.deliveries = Columns(len(DeliveryRow._fields))
        self.violations: list[tuple[Any, ...]] = []
        self.figures: Counter[str] = Counter()

    def run(self, rows: Iterable[tuple[Any, ...]]) -> None:
        """Judge every topic of this partition in ``rows``: grouped as ``events`` is sorted,
        by capture, server and topic (a server's sessions first), each connection's rows
        in its order (the table's order, or :class:`~.events_held.HeldEvents`' runs)."""
        server: _Server | None = None
        key: tuple[str, str] | None = None
        topic_key: tuple[str, str, str] | None = None
        group: list[tuple[Any, ...]] = []
        mine = self.partition == 0  # the counts of a server's own rows
        for row in rows:
            here = (row[CAPTURE], row[SERVER])
            if here != key:
                if topic_key is not None:
                    self._topic(topic_key, group, server)
                    topic_key, group = None, []
                key, server = here, _Server()
                if mine:
                    self.figures["servers"] += 1
            assert server is not None
            topic = row[TOPIC]
            if topic is None:
                server.add(row)
                if mine:
                    self._count(row)
                    if row[TYPE] == "PUBLISH":
                        self._unrouted(row)
                continue
            this = (row[CAPTURE], row[SERVER], topic)
            if this != topic_key:
                if topic_key is not None:
                    self._topic(topic_key, group, server)
                topic_key, group = this, []
            group.append(row)
        if topic_key is not None:
            self._topic(topic_key, group, server)

    def _count(self, row: tuple[Any, ...]) -> None:
        self.figures["events"] += 1
        if row[SKEW]:
            self.figures["events_out_of_time_order"] += 1

    def _unrouted(self, row: tuple[Any, ...]) -> None:
        """A PUBLISH whose topic name is unknown (a Topic Alias no mapping seen stands
        for): counted, never judged."""
        incoming = row[DIRECTION] == C2S
        self.deliveries.append(_delivery(
            row, "", None, "in" if incoming else "out", unknown("topic-unknown"),
            row if incoming else None, None, 0 if incoming else None,
        ))  # fmt: skip

    def _topic(
        self, key: tuple[str, str, str], rows: list[tuple[Any, ...]], server: _Server | None
    ) -> None:
        capture, address, topic = key
        if partition_of(capture, address, topic, self.count) != self.partition:
            return
        assert server is not None
        # no cyclic collection while a topic is judged: what the judges make for it (the
        # ledger's tuples, the twin's state) lives until the topic is done, so each young
        # collection walked all of it again, for nothing to collect (about 1.2 s of the
        # stage's 38 on 1,000,000 synthetic frames, by gc.callbacks); what it leaves is
        # collected once, after
        collecting = gc.isenabled()
        gc.disable()
        try:
            self._judge(capture, address, topic, rows, server)
        finally:
            if collecting:
                gc.enable()

    def _judge(
        self, capture: str, address: str, topic: str, rows: list[tuple[Any, ...]], server: _Server
    ) -> None:
        self.figures["topics"] += 1
        self.figures["events"] += len(rows)
        skewed = sum(1 for row in rows if row[SKEW])
        if skewed:
            self.figures["events_out_of_time_order"] += skewed
        needed = server.relevant(topic, {row[CONNECTION] for row in rows})
        # the topic's rows and each session's, each in time order already (or each
        # connection's: HeldEvents) one stable sort of them one after the other is their
        # merge (Timsort finds the runs), with the key made in C (a Python key per row
        # was a tenth of the stage)
        fed = list(rows)
        for conn in sorted(needed):
            fed.extend(server.rows.get(conn, ()))
        fed.sort(key=ORDER_KEY)
        fast = None if self.readings or not self.fast else fast_distribution.attempt(
            fed, topic, self.patience
        )  # fmt: skip
        ins: list[fast_distribution.In]
        outs: list[fast_distribution.Out]
        if fast is not None and not isinstance(fast, fast_distribution.Handback):
            self.figures["topics_fast"] += 1
            ins, outs = fast[0], fast[1]
        else:
            # the readable judge's: from the twin's last quiet point that holds, with the
            # twin's ledger before it (:mod:`.handback`), else the whole topic
            start = 0
            steps: list[int] = []
            if fast is not None:
                start, steps = handback.cut(fed, fast.quiet, fast.carried, fast.outs, server.client)
            ins, outs = [], []
            places: Sequence[int] = range(len(fed))
            if fast is not None and start > 0:
                ins, outs = fast.before(start)
                if steps:  # the footprints of the messages carried over: the readable judge's
                    inside = set(steps)
                    ins = [entry for entry in ins if entry[0] not in inside]
                    outs = [entry for entry in outs if entry[0] not in inside]
                places = handback.handed(fed, start, steps)
                self.figures["topics_partial"] += 1
            self.figures["topics_readable"] += 1
            self.figures["events_handed_back"] += sum(1 for at in places if fed[at][TOPIC])
            judge = DistributionJudge(
                self.readings, complete=False, capture=True, patience=self.patience
            )
            for order, at in enumerate(places, 1):
                judge.feed(_event(fed[at], order))
            findings = judge.finish()
            later_ins, later_outs = _ledger(judge)
            ins.extend((places[at], outcome, copies) for at, outcome, copies in later_ins)
            outs.extend(
                (places[at], outcome, -1 if message < 0 else places[message], changed)
                for at, outcome, message, changed in later_outs
            )
            if steps:
                ins.sort(key=_FIRST)
                outs.sort(key=_FIRST)
            for finding in findings:
                if finding.verdict != PASS:
                    if start > 0:
                        finding = dataclasses.replace(
                            finding, message=handback.note(finding.message, fed[start])
                        )
                    self.violations.append(_violation(capture, address, finding))
        self._deliveries(fed, ins, outs, topic, server)
        if self.flush is not None:
            self.flush(self)

    def _deliveries(
        self,
        fed: list[tuple[Any, ...]],
        ins: list[fast_distribution.In],
        outs: list[fast_distribution.Out],
        topic: str,
        server: _Server,
    ) -> None:
        """The ``deliveries`` rows of one topic, from its ledger: each PUBLISH in (its
        row, outcome, copies seen) and out (its row, outcome, its message's row or -1,
        properties changed). A PUBLISH of no topic (a Topic Alias no mapping seen stands
        for) is a session row, fed with every topic its connection matters to: its row is
        the server's, written once (:meth:`_unrouted`), not the topic's."""
        clients = server.client
        add = self.deliveries.append
        for at, outcome, copies in ins:
            row = fed[at]
            if row[TOPIC] is None:
                continue
            add(_delivery(
                row, topic, clients.get(row[CONNECTION]), "in", outcome, row, None, copies,
            ))  # fmt: skip
        # a copy of a message (most rows): _delivery's values, appended to their columns
        # (no tuple per row: a NamedTuple's __new__ was a Python call per row, a fifth of
        # the real capture's stage, and Arrow converts columns twice as fast as rows)
        (
            captures, servers, topics, directions, connections, client_ids, frames, offsets,
            times, qoss, dups, retains, packet_ids, digests, sizes, in_connections, in_frames,
            in_offsets, changeds, latencies, outcomes, copies_seen,
        ) = self.deliveries.lists  # fmt: skip
        for at, outcome, message, changed in outs:
            row = fed[at]
            if row[TOPIC] is None:
                continue
            if message < 0:
                add(_delivery(
                    row, topic, clients.get(row[CONNECTION]), "out", outcome, None, changed, None,
                ))  # fmt: skip
                continue
            of = fed[message]
            captures.append(row[CAPTURE])
            servers.append(row[SERVER])
            topics.append(topic)
            directions.append("out")
            connections.append(row[CONNECTION])
            client_ids.append(clients.get(row[CONNECTION]))
            frames.append(row[FRAME])
            offsets.append(row[OFFSET])
            times.append(row[T])
            qoss.append(row[QOS])
            dups.append(bool(row[DUP]))
            retains.append(bool(row[RETAIN]))
            packet_ids.append(row[PACKET_ID])
            digests.append(row[DIGEST] or "")
            sizes.append(row[SIZE] or 0)
            in_connections.append(of[CONNECTION])
            in_frames.append(of[FRAME])
            in_offsets.append(of[OFFSET])
            changeds.append(changed)
            latencies.append(round(row[T] - of[T], 6))
            outcomes.append(outcome)
            copies_seen.append(None)


def _ledger(
    judge: DistributionJudge,
) -> tuple[list[fast_distribution.In], list[fast_distribution.Out]]:
    """The readable judge's ledger in the form :func:`.fast.distribution.judge` gives it:
    rows by their place among the events fed."""
    ledger = judge.ledger
    copies: Counter[int] = Counter()  # copies out per message, by its event order
    for out in ledger.outs:
        entry = None if out.message is None else ledger.messages.get(out.message)
        if entry is not None and out.outcome in ("copy", "again"):
            copies[entry.event.order] += 1
    ins = [(e.event.order - 1, e.outcome, copies[e.event.order]) for e in ledger.ins]
    outs = []
    for out in ledger.outs:
        entry = None if out.message is None else ledger.messages.get(out.message)
        message = -1 if entry is None else entry.event.order - 1
        outs.append((out.event.order - 1, out.outcome, message, out.changed))
    return ins, outs


def _delivery(
    row: tuple[Any, ...],
    topic: str,
    client: str | None,
    direction: str,
    outcome: str,
    message: tuple[Any, ...] | None,
    changed: bool | None,
    copies: int | None,
) -> tuple[Any, ...]:
    latency = None
    if direction == "out" and message is not None:
        latency = round(row[T] - message[T], 6)
    return (  # DeliveryRow's columns (a plain tuple: see Stage._deliveries)
        row[CAPTURE], row[SERVER], topic, direction, row[CONNECTION], client, row[FRAME],
        row[OFFSET], row[T], row[QOS], bool(row[DUP]), bool(row[RETAIN]), row[PACKET_ID],
        row[DIGEST] or "", row[SIZE] or 0,
        None if message is None else message[CONNECTION],
        None if message is None else message[FRAME],
        None if message is None else message[OFFSET], changed, latency, outcome, copies,
    )  # fmt: skip


def _event(row: tuple[Any, ...], order: int = 0) -> Event:
    """A row as the judge's event (a PUBLISH's payload is its digest; its length beside),
    ``order`` its place among the events fed (the judge's numbering, given)."""
    kind = row[TYPE]
    origin = {"frame": row[FRAME], "offset": row[OFFSET]}
    direction = row[DIRECTION]
    if kind == LOST:
        return Event(t=row[T], conn=row[CONNECTION], direction=direction, lost=True,
                     origin=origin, order=order)  # fmt: skip
    if kind == CLOSED:
        return Event(t=row[T], conn=row[CONNECTION], origin=origin, order=order)
    packet: dict[str, Any]
    if kind == "PUBLISH":
        packet = {
            "type": kind, "dup": bool(row[DUP]), "qos": row[QOS], "retain": bool(row[RETAIN]),
            "topic": row[TOPIC] or "", "packet_id": row[PACKET_ID],
            "payload_hex": row[DIGEST] or "", "payload_size": row[SIZE],
        }  # fmt: skip
        if row[DETAIL] is not None:
            packet["properties"] = json.loads(row[DETAIL])
    elif kind in ("PUBACK", "PUBREC", "PUBREL", "PUBCOMP"):
        packet = {"type": kind, "packet_id": row[PACKET_ID]}
        if row[CODE] is not None:
            packet["reason_code"] = row[CODE]
    else:
        packet = json.loads(row[DETAIL])
    return Event(t=row[T], conn=row[CONNECTION], direction=direction, packet=packet,
                 origin=origin, order=order)  # fmt: skip


#: a PUBLISH's fields in an event's evidence, as the capture's evidence names them
_RENAMED: Final = {"payload_hex": "payload_digest", "payload_size": "payload_len"}


def _violation(capture: str, server: str, finding: Finding) -> tuple[Any, ...]:
    """A distribution finding as a ``violations`` row, at the last packet of its evidence
    (the copy, or the later event, that shows it)."""
    evidence: list[dict[str, Any]] = [
        {_RENAMED.get(k, k): v for k, v in entry.items()} for entry in finding.evidence
    ]
    at: dict[str, Any] | None = None
    for i in range(len(evidence) - 1, -1, -1):  # (mypyc cannot compile reversed here)
        if "frame" in evidence[i]:
            at = evidence[i]
            break
    connection = str(at["conn"]) if at else f"{capture}:{server}"
    direction = str(at.get("dir", S2C)) if at else S2C
    rules = finding.rules
    return ViolationRow(
        capture, connection, direction, int(at["frame"]) if at else 0,
        int(at.get("offset", 0)) if at else 0, rules[0] if rules else None, ",".join(rules),
        ",".join(finding.provoked), finding.verdict, Source.DISTRIBUTION, "server", server,
        finding.message, json.dumps(evidence, sort_keys=True, ensure_ascii=False),
    )  # fmt: skip


def rows_of_batches(batches: Iterable[Any]) -> Iterator[tuple[Any, ...]]:
    """Row tuples of Arrow record batches (in ``events``' columns)."""
    for batch in batches:
        yield from zip(*(column.to_pylist() for column in batch.columns), strict=True)
