#!/usr/bin/env python
"""Fuzzing of the distribution core against the distribution model, in all three editions.

    python benchmarks/fuzz_distribution.py --runs 1000000 --findings DIR   # atheris
    python benchmarks/fuzz_distribution.py --engine random --runs 100000  # no atheris

Every input is one case: a program of events for a server. Byte 0 chooses the setting
(bits 0-1: the edition, ``value % 3``: 3.1, 3.1.1, 5.0; bit 2: the other value of every
reading of :data:`OTHER` that applies; bit 3: a server with the lowest limits it may
have); the rest is read as events, one opcode byte each (``opcode % 10``: connect,
disconnect, subscribe, unsubscribe, publish, send, complete, advance, and two that pass
arguments of the wrong types) followed by the bytes of its arguments, drawn from the input
as it goes (a missing byte counts as 0). Strings are built from pieces that break the
topic rules as often as they keep them (``+``, ``#``, ``$share/``, ``$``, U+0000, a
surrogate, ``é``, an empty level, and now and then 70,000 characters).

The core (:class:`pubproof.reference.distribution.DistributionCore`) runs every event; the
model (:class:`pubproof.model.distribution.DistributionModel`) every event whose arguments
have the right types. A **foreign exception** is anything the core raises that is not a
``pubproof.reference.ProtocolError`` (or anything the model raises on a well-typed event
but its own ``DistributionError``). A **disagreement** is an event one side refuses and
the other takes, different SUBACK codes or connection closes, or, after an event, a
different state: the sessions (status, persistence), each session's owed, optional and
under-way copies (client, message seq, QoS, RETAIN, Subscription Identifiers, topic
filters), the retained store. Each finding is saved under ``--findings DIR``; the run
goes on; it exits 1 if there was any.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pubproof.model import messages as model_messages
from pubproof.model import subscriptions as model_subscriptions
from pubproof.model.distribution import DistributionModel
from pubproof.model.distribution_state import DistributionError as ModelError
from pubproof.model.editions import Edition
from pubproof.reference import distribution_state as core_state
from pubproof.reference.distribution import DistributionCore
from pubproof.reference.errors import ProtocolError
from pubproof.reference.properties import PublishProperties

EDITIONS = (Edition.V31, Edition.V311, Edition.V50)
#: the other value of the readings that change what a server does
OTHER = {
    "overlapping-copies": "per-subscription",
    "queue-qos0": "queue",
    "invalid-filter": "refuse",
    "expiry-boundary": "after",
    "expiry-rounding": "up",
    "dollar-topics": "as-3.1.1",
    "topic-rules": "as-3.1.1",
    "topic-length": "65535-bytes",
    "retained-qos-31": "as-published",
}
APPLIES = {
    Edition.V31: {
        "dollar-topics",
        "topic-rules",
        "topic-length",
        "retained-qos-31",
        "overlapping-copies",
    },
    Edition.V311: {"overlapping-copies", "queue-qos0", "invalid-filter"},
    Edition.V50: {
        "overlapping-copies",
        "queue-qos0",
        "invalid-filter",
        "expiry-boundary",
        "expiry-rounding",
    },
}
CLIENTS = ("c1", "c2", "c3", "é")
PIECES = ("a", "b", "/", "+", "#", "$share/", "g/", "$", "$SYS", "\x00", "\ud800", "é", "", "a/b")
#: arguments of the wrong type (none of them a value the argument may take; None is, for
#: some, and is added where it is not)
WRONG: tuple[Any, ...] = (1.5, b"a", -1, True, object(), {"a": 1})


class Reader:
    """The input's bytes, taken as the events ask for them."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def byte(self) -> int:
        value = self.data[self.at] if self.at < len(self.data) else 0
        self.at += 1
        return value

    def more(self) -> bool:
        return self.at < len(self.data)

    def pick(self, choices: tuple[Any, ...]) -> Any:
        return choices[self.byte() % len(choices)]

    def text(self) -> str:
        count = self.byte() % 5
        if count == 4 and self.byte() % 16 == 0:
            return "a" * 70_000  # past 65,535 bytes, and 3.1's 32,767 characters
        return "".join(self.pick(PIECES) for _ in range(count))


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    kind: str  # "foreign" or "disagreement"
    detail: str


@dataclass(slots=True)
class Stats:
    runs: int = 0
    events: int = 0
    findings: list[tuple[bytes, Finding]] = field(default_factory=list)


def setting(first: int) -> tuple[Edition, dict[str, str], dict[str, Any]]:
    edition = EDITIONS[(first & 3) % 3]
    readings = {k: v for k, v in OTHER.items() if first & 4 and k in APPLIES[edition]}
    limits: dict[str, Any] = {}
    if first & 8:
        limits = {"maximum_qos": 0}
        if edition is not Edition.V31:
            limits |= {"wildcard_subscriptions": False}
        if edition is Edition.V50:
            limits |= {"shared_subscriptions": False, "subscription_identifiers": False}
    return edition, readings, limits


def _copy(copy: Any) -> tuple[Any, ...]:
    ids = tuple(sorted(copy.subscription_identifiers))
    return (copy.client_id, copy.message.seq, copy.qos, copy.retain, ids, tuple(copy.topic_filters))


def state(server: Any) -> tuple[Any, ...]:
    """What the two must agree on after every event."""
    sessions = tuple(
        (
            client,
            s.status.value,
            s.persistent,
            tuple(map(_copy, s.pending)),
            tuple(map(_copy, s.optional)),
            tuple(map(_copy, s.under_way.values())),
        )
        for client, s in sorted(server.sessions.items())
    )
    retained = tuple(sorted((t, m.seq) for t, m in server.retained.snapshot().items()))
    return server.now, sessions, retained


class Case:
    """One input run on both."""

    def __init__(self, data: bytes) -> None:
        self.read = Reader(data)
        self.edition, self.readings, limits = setting(self.read.byte())
        self.v50 = self.edition is Edition.V50
        self.core = DistributionCore(self.edition, self.readings, core_state.ServerConfig(**limits))
        self.model = DistributionModel(
            self.edition, self.readings, model_subscriptions.ServerConfig(**limits)
        )

    def both(self, call: Callable[[Any], Any], well_typed: bool = True) -> Finding | None:
        """Run ``call`` on the core and (well-typed) the model; the finding, if any."""
        try:
            got: Any = call(self.core)
        except ProtocolError as error:
            got = error
        except Exception as error:  # what a fuzzer is for
            return Finding(kind="foreign", detail=f"core: {type(error).__name__}: {error}")
        if not well_typed:
            return None
        try:
            want: Any = call(self.model)
        except ModelError as error:
            want = error
        except Exception as error:
            return Finding(kind="foreign", detail=f"model: {type(error).__name__}: {error}")
        if isinstance(got, Exception) != isinstance(want, Exception):
            return Finding(kind="disagreement", detail=f"core {got!r}, model {want!r}")
        if hasattr(want, "codes") and (got.codes, got.closed) != (want.codes, want.closed):
            return Finding(kind="disagreement", detail=f"codes {got.codes}/{want.codes}")
        if state(self.core) != state(self.model):
            return Finding(kind="disagreement", detail="the states differ")
        return None

    def event(self) -> Finding | None:
        read = self.read
        op = read.byte() % 10
        client = read.pick(CLIENTS)
        if op == 0:
            expiry = read.pick((0, 1, 3, 0xFFFF_FFFF)) if self.v50 else 0
            clean = bool(read.byte() & 1)
            return self.both(
                lambda s: s.connect(client, clean=clean, session_expiry_interval=expiry)
            )
        if op == 1:
            given = read.pick((None, 0, 2)) if self.v50 else None
            return self.both(lambda s: s.disconnect(client, session_expiry_interval=given))
        if op == 2:
            pairs = [(read.text(), read.byte()) for _ in range(read.byte() % 4)]
            ident = read.pick((None, None, 1, 2, 0)) if self.v50 else None
            return self.both(
                lambda s: s.subscribe(
                    client,
                    1,
                    [(f, self.options(s, o)) for f, o in pairs],
                    subscription_identifier=ident,
                )
            )
        if op == 3:
            filters = [read.text() for _ in range(read.byte() % 3)]
            return self.both(lambda s: s.unsubscribe(client, 2, filters))
        if op == 4:
            topic, qos, flags = read.text(), read.byte() % 3, read.byte()
            expiry = read.pick((None, 0, 1, 4)) if self.v50 else None
            return self.both(
                lambda s: s.publish(self.publication(s, client, topic, qos, flags, expiry))
            )
        if op == 5:
            at = read.byte()
            return self.both(lambda s: s.send(client, self.nth(s, client, at, "pending")))
        if op == 6:
            at, reason = read.byte(), read.pick((0, 0x80, 0x87))
            return self.both(
                lambda s: s.complete(client, self.nth(s, client, at, "under_way"), reason)
            )
        if op == 7:
            step = read.pick((0, 1, 999, 1000, 1001, 4000))
            return self.both(lambda s: s.advance(step))
        return self.wrong(op, client)

    def options(self, server: Any, byte: int) -> Any:
        kinds = (model_subscriptions, core_state)[server is self.core]
        handling = (byte >> 4) % 3 if self.v50 else 0
        return kinds.SubscriptionOptions(
            qos=byte % 3,
            no_local=self.v50 and bool(byte & 4),
            retain_as_published=self.v50 and bool(byte & 8),
            retain_handling=kinds.RetainHandling(handling),
        )

    def publication(
        self, server: Any, publisher: str, topic: str, qos: int, flags: int, expiry: int | None
    ) -> Any:
        payload, retain = (b"", b"x")[flags & 1], bool(flags & 2)
        if server is self.core:
            props = PublishProperties(message_expiry_interval=expiry) if self.v50 else None
            return core_state.Publication(
                publisher=publisher,
                topic=topic,
                payload=payload,
                qos=qos,
                retain=retain,
                properties=props,
            )
        return model_messages.Publication(
            publisher=publisher,
            topic=topic,
            payload=payload,
            qos=qos,
            retain=retain,
            properties=model_messages.Properties(message_expiry_interval=expiry),
        )

    def nth(self, server: Any, client: str, at: int, pool: str) -> int | None:
        """The copy_id of the ``at``-th copy of a session's pool on ``server`` (the two
        number copies independently), or an id owed to nobody."""
        session = server.sessions.get(client)
        copies = (
            list(
                getattr(session, pool).values()
                if pool == "under_way"
                else session.pending + session.optional
            )
            if session
            else []
        )
        return copies[at % len(copies)].copy_id if copies else 10**9

    def wrong(self, op: int, client: str) -> Finding | None:
        """Arguments of the wrong types, for the core alone: refused (a ``ProtocolError``)
        or answered, but never a change of its state."""
        bad = self.read.pick(WRONG)
        options = core_state.SubscriptionOptions(qos=1)
        calls: tuple[Callable[[Any], Any], ...] = (
            lambda s: s.connect(bad, clean=True),
            lambda s: s.connect(None, clean=True),
            lambda s: s.connect(client, clean=1 if bad is True else bad),
            lambda s: s.connect(client, clean=True, session_expiry_interval=bad),
            lambda s: s.disconnect(bad),
            lambda s: s.disconnect(client, session_expiry_interval=bad),
            lambda s: s.subscribe(client, 1, bad),
            lambda s: s.subscribe(client, 1, [(bad, options)]),
            lambda s: s.subscribe(client, 1, [("a", bad)]),
            lambda s: s.subscribe(client, 1, [bad]),
            lambda s: s.subscribe(client, 1, [("a", options)], subscription_identifier=bad),
            lambda s: s.unsubscribe(client, 1, bad),
            lambda s: s.unsubscribe(client, 1, [bad]),
            lambda s: s.unsubscribe(client, 1, "a"),
            lambda s: s.publish(bad),
            lambda s: s.send(client, bad),
            lambda s: s.complete(client, bad),
            lambda s: s.complete(client, 1, bad),
            lambda s: s.complete(bad, 1),
            lambda s: s.advance(bad),
            lambda s: s.owed(bad),
            lambda s: DistributionCore(bad),
            lambda s: DistributionCore(Edition.V50, bad),
            lambda s: DistributionCore(Edition.V50, None, bad),
        )
        call = calls[(op * 7 + self.read.byte()) % len(calls)]
        before = state(self.core)
        finding = self.both(call, well_typed=False)
        if finding is None and state(self.core) != before:
            return Finding(
                kind="disagreement", detail=f"arguments of the wrong type ({bad!r}) taken"
            )
        return finding

    def run(self) -> Finding | None:
        while self.read.more():
            finding = self.event()
            if finding is not None:
                return finding
        return None


def judge(data: bytes) -> Finding | None:
    """The first finding of ``data``, or None."""
    return Case(data).run()


def seeds() -> list[bytes]:
    """A few hand-made programs: every opcode in every setting."""
    return [bytes((first, *range(op, 60, 3))) for first in range(16) for op in range(10)]


def random_inputs(rng: random.Random, pool: list[bytes]) -> Iterable[bytes]:
    """Random bytes, and mutations (flips, insertions, deletions, splices) of the pool."""
    while True:
        if rng.random() < 0.3 or not pool:
            yield bytes(rng.randrange(256) for _ in range(rng.randrange(1, 80)))
            continue
        data = bytearray(rng.choice(pool))
        for _ in range(rng.randrange(1, 6)):
            where = rng.randrange(len(data) + 1)
            roll = rng.random()
            if roll < 0.4 and data:
                data[where % len(data)] = rng.randrange(256)
            elif roll < 0.7:
                data[where:where] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 8)))
            elif roll < 0.85 and len(data) > 1:
                del data[where % len(data)]
            else:
                data += rng.choice(pool)[rng.randrange(1, 4) :]
        yield bytes(data)


def record(stats: Stats, data: bytes, finding: Finding | None, folder: Path | None) -> None:
    stats.runs += 1
    if finding is None:
        return
    stats.findings.append((data, finding))
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha1(data).hexdigest()[:16]
        (folder / f"{finding.kind}-{name}").write_bytes(data)
        (folder / f"{finding.kind}-{name}.txt").write_text(f"{finding.kind}: {finding.detail}\n")


def run_random(args: argparse.Namespace) -> Stats:
    rng = random.Random(args.seed)
    stats = Stats()
    pool = seeds()
    started = time.perf_counter()
    for data in random_inputs(rng, pool):
        if stats.runs >= args.runs:
            break
        record(stats, data, judge(data), args.findings)
        if args.progress and stats.runs % args.progress == 0:
            rate = stats.runs / (time.perf_counter() - started)
            print(
                f"{stats.runs:,} inputs, {rate:,.0f}/s, {len(stats.findings)} findings",
                file=sys.stderr,
            )
    return stats


def run_atheris(args: argparse.Namespace) -> None:
    import atheris  # type: ignore[import-not-found, import-untyped, unused-ignore]

    stats = Stats()

    def one(data: bytes) -> None:
        record(stats, data, judge(data), args.findings)

    atheris.Setup([sys.argv[0], f"-runs={args.runs}"], one)
    atheris.Fuzz()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--engine", choices=("atheris", "random"), default="atheris")
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--findings", type=Path)
    parser.add_argument("--progress", type=int, default=10_000)
    args = parser.parse_args(argv)
    if args.engine == "atheris":
        run_atheris(args)
        return 0
    stats = run_random(args)
    kinds: dict[str, int] = {}
    for _, finding in stats.findings:
        kinds[finding.kind] = kinds.get(finding.kind, 0) + 1
    print(f"{stats.runs:,} inputs; findings: {kinds or 'none'}")
    for data, finding in stats.findings[:10]:
        print(f"  {data.hex()}: {finding.kind}: {finding.detail}")
    return 1 if stats.findings else 0


if __name__ == "__main__":
    raise SystemExit(main())
