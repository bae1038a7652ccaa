#!/usr/bin/env python
"""The distribution core's publish path, as a broker runs it per message, against the model.

    python benchmarks/bench_distribution.py [--publications N] [--model-publications N]
        [--workloads fleet,fanout1000,fanout10] [--budget S] [--json]

Per message the broker's work is the core's: ``publish`` (match the topic name, update the
retained store, one copy per session it goes to, queued in that session), then for each
copy ``send`` (the first owed: it leaves the queue; QoS 1 and 2 go under way) and, for QoS
1 and 2, ``complete`` (the PUBACK or PUBCOMP came back). The figures are messages per
second and copies per second over the whole of that, best of the timed passes
(``bench_topics.timed``: GC off while timing), single-threaded, MQTT 5.0, all sessions
connected.

Workloads (seeded, the same on every run):

``fleet``
    bench_topics's workload (``topics_workload.py``): 100,000 subscriptions of 25,000
    sessions (exact names, ``+`` and ``#`` at several levels, ``$SYS``, 2.5% Shared
    Subscriptions, monitors on ``#``), granted QoS 0, 1, 2 in turn, and its ``repeats``
    publications (Zipf-like over 50,000 names) published at QoS 1, 10% with RETAIN.
``fanout1000``
    1,000 sessions, each subscribed to ``sensors/+/temp`` (and one filter of its own):
    every message goes to all 1,000.
``fanout10``
    1,000 sessions in 100 groups of 10, each group subscribed to ``site{g}/#``: every
    message goes to 10.

The model (:class:`pubproof.model.distribution.DistributionModel`, the oracle: it walks
the decision graphs of every subscription of every session for every message) runs the
same workload on ``--model-publications`` messages (after the same subscriptions), and
the report gives the core's rate over the model's. Before timing, the copies of the
first messages are compared between the two (the same sessions, QoS and RETAIN), so a
fast wrong answer is not reported as a rate.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pubproof.model.distribution import DistributionModel
from pubproof.model.editions import Edition
from pubproof.model.messages import Publication as ModelPublication
from pubproof.model.subscriptions import SubscriptionOptions as ModelOptions
from pubproof.reference.distribution import DistributionCore
from pubproof.reference.distribution_state import Publication, SubscriptionOptions

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_topics import progress, timed
from topics_workload import workload

WORKLOADS = ("fleet", "fanout1000", "fanout10")
V50 = Edition.V50


@dataclass(frozen=True, slots=True, kw_only=True)
class Setup:
    """A workload: each session's subscriptions (filter, granted QoS), the messages as
    (publisher, topic name, QoS, RETAIN)."""

    name: str
    subscriptions: dict[str, list[tuple[str, int]]]
    messages: list[tuple[str, str, int, bool]]


def fleet(publications: int) -> Setup:
    work = workload(subscriptions=100_000, publications=publications, variant="repeats")
    subs: dict[str, list[tuple[str, int]]] = {}
    for number, (client, sent, _) in enumerate(work.subscriptions):
        subs.setdefault(client, []).append((sent, number % 3))
    messages = [
        (f"publisher{i % 7}", name, 1, i % 10 == 0) for i, name in enumerate(work.publications)
    ]
    return Setup(name="fleet", subscriptions=subs, messages=messages)


def fanout(groups: int, publications: int) -> Setup:
    subs: dict[str, list[tuple[str, int]]] = {}
    for i in range(1000):
        if groups == 1:
            subs[f"s{i}"] = [("sensors/+/temp", 1), (f"own/{i}/#", 1)]
        else:
            subs[f"s{i}"] = [(f"site{i % groups}/#", 1)]
    if groups == 1:
        topics = [f"sensors/dev{i % 50}/temp" for i in range(publications)]
    else:
        topics = [f"site{i % groups}/dev{i % 7}/temp" for i in range(publications)]
    messages = [("publisher", t, 1, False) for t in topics]
    return Setup(name=f"fanout{1000 // groups}", subscriptions=subs, messages=messages)


def setup(name: str, publications: int) -> Setup:
    if name == "fleet":
        return fleet(publications)
    return fanout(1 if name == "fanout1000" else 100, publications)


def build(setup: Setup, make: Callable[[], Any], options: Callable[[int], Any]) -> Any:
    """A core or model with every session connected and subscribed."""
    server = make()
    packet_id = 0
    for client, filters in setup.subscriptions.items():
        server.connect(client, clean=True)
        for topic_filter, qos in filters:
            packet_id = packet_id % 65535 + 1
            server.subscribe(client, packet_id, [(topic_filter, options(qos))])
    return server


def run_once(server: Any, publications: Sequence[Any]) -> int:
    """One pass: every message published, each copy sent and completed."""
    publish, send, complete = server.publish, server.send, server.complete
    copies = 0
    for publication in publications:
        made = publish(publication).copies
        copies += len(made)
        for copy in made:
            send(copy.client_id)
            if copy.qos:
                complete(copy.client_id, copy.copy_id)
    return copies


def _shape(copies: Any) -> list[tuple[str, int, bool]]:
    return sorted((c.client_id, c.qos, c.retain) for c in copies)


def measure(name: str, args: argparse.Namespace) -> dict[str, Any]:
    work = setup(name, args.publications)
    progress(f"{name}: {sum(map(len, work.subscriptions.values())):,} subscriptions of "
             f"{len(work.subscriptions):,} sessions; building the core")  # fmt: skip
    t0 = time.perf_counter()
    core = build(work, lambda: DistributionCore(V50), lambda q: SubscriptionOptions(qos=q))
    core_build = time.perf_counter() - t0
    mine = [
        Publication(publisher=p, topic=t, payload=b"x", qos=q, retain=r)
        for p, t, q, r in work.messages
    ]
    progress(f"{name}: building the model")
    t0 = time.perf_counter()
    model = build(work, lambda: DistributionModel(V50), lambda q: ModelOptions(qos=q))
    model_build = time.perf_counter() - t0
    theirs = [
        ModelPublication(publisher=p, topic=t, payload=b"x", qos=q, retain=r)
        for p, t, q, r in work.messages[: args.model_publications]
    ]
    progress(f"{name}: the model on {len(theirs)} messages (checked against the core)")
    t0 = time.perf_counter()
    model_copies = 0
    for ours, oracle in zip(mine, theirs, strict=False):
        want = model.publish(oracle).copies
        got = core.publish(ours).copies
        if _shape(got) != _shape(want):
            raise SystemExit(f"{name}: the core and the model differ on {ours.topic!r}")
        model_copies += len(want)
        for copy in want:
            model.send(copy.client_id)
            if copy.qos:
                model.complete(copy.client_id, copy.copy_id)
        for copy in got:
            core.send(copy.client_id)
            if copy.qos:
                core.complete(copy.client_id, copy.copy_id)
    model_s = time.perf_counter() - t0
    progress(f"{name}: timing the core on {len(mine):,} messages")
    counted: list[int] = []
    best, median, _wall, repeats = timed(
        lambda: counted.append(run_once(core, mine)),
        budget=args.budget,
        min_repeats=args.min_repeats,
        max_repeats=args.max_repeats,
    )
    copies = counted[-1]
    model_rate = len(theirs) / model_s if model_s else float("nan")
    core_rate = len(mine) / best
    return {
        "workload": name,
        "subscriptions": sum(map(len, work.subscriptions.values())),
        "sessions": len(work.subscriptions),
        "messages": len(mine),
        "copies_per_message": copies / len(mine),
        "core_messages_per_s": core_rate,
        "core_copies_per_s": copies / best,
        "core_best_s": best,
        "core_median_s": median,
        "repeats": repeats,
        "core_build_s": core_build,
        "model_messages": len(theirs),
        "model_messages_per_s": model_rate,
        "model_copies_per_s": model_copies / model_s if model_s else float("nan"),
        "model_build_s": model_build,
        "core_over_model": core_rate / model_rate,
    }


def report(rows: list[dict[str, Any]]) -> str:
    lines = [
        f"{'workload':<11} {'subs':>8} {'sessions':>8} {'copies/msg':>10} "
        f"{'core msg/s':>11} {'core copies/s':>13} {'model msg/s':>11} {'core/model':>10}"
    ]
    for r in rows:
        lines.append(
            f"{r['workload']:<11} {r['subscriptions']:>8,} {r['sessions']:>8,} "
            f"{r['copies_per_message']:>10.1f} {r['core_messages_per_s']:>11,.0f} "
            f"{r['core_copies_per_s']:>13,.0f} {r['model_messages_per_s']:>11,.1f} "
            f"{r['core_over_model']:>9,.0f}x"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--publications", type=int, default=200_000)
    parser.add_argument("--model-publications", type=int, default=20)
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--budget", type=float, default=10.0, help="seconds of timed passes")
    parser.add_argument("--min-repeats", type=int, default=2)
    parser.add_argument("--max-repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    names = [w for w in args.workloads.split(",") if w]
    if any(n not in WORKLOADS for n in names):
        parser.error(f"workloads are among {', '.join(WORKLOADS)}")
    rows = [measure(n, args) for n in names]
    print(json.dumps(rows, indent=2) if args.json else report(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
