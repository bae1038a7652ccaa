#!/usr/bin/env python
"""Topic matching: pubproof's subscription index against the matchers of aedes, paho-mqtt, amqtt.

    python benchmarks/bench_topics.py [--subscriptions N] [--publications N] [--json]
        [--variants repeats,fresh] [--peers qlobber,paho,amqtt] [--amqtt-publications N]

The workload (``topics_workload.py``, seeded: the same on every run) is 100,000
subscriptions of 25,000 clients, a realistic mix of exact filters, ``+`` at several levels,
``#`` tails, ``$SYS`` filters, a few 5.0 Shared Subscriptions and monitors on ``#``, and
1,000,000 publications, in two variants: ``repeats`` (topic names drawn with Zipf-like
weights from 50,000, as real traffic repeats) and ``fresh`` (almost every name new).

Every matcher gets the same subscriptions (a Shared Subscription as its ``{filter}``: the
peers know no ``$share/``) and matches the same publications in order, single-threaded:

``pubproof``
    :class:`pubproof.reference.subscriptions.SubscriptionIndex` (options: the
    subscription's number), ``match(topic_name)`` on each publication, with its match cache
    (65,536 names), emptied before each timed pass; ``pubproof, no cache`` is the trie
    alone (``cache_size=0``). ``match`` answers with the tuples of the filters that match
    (as paho-mqtt's matcher gives one value per filter); the ``flat`` rows also read
    ``.subscriptions``, the answer as one tuple (as qlobber gives one array), made on first
    use: that touches every subscription matched.
``qlobber``, ``qlobber-sub``
    qlobber 8.0.1 (npm) in node: ``Qlobber`` with MQTT's separator and wildcards and
    ``match_empty_levels`` (so that ``+`` matches an empty level), and ``QlobberSub``, the
    class aedes-persistence keeps subscriptions in, with the same options
    (``benchmarks/peers/qlobber_bench.js``; timed in node after a warm-up pass).
``paho``
    paho-mqtt 2.2.0's ``paho.mqtt.matcher.MQTTMatcher`` (a trie of filters, one value per
    filter: the list of its subscriptions' numbers), ``list(iter_match(topic_name))``.
``amqtt``
    amqtt 0.12.1's ``Broker._matches(topic, filter)`` over every distinct filter, as its
    broker does for each message (``_run_broadcast``): a linear scan, so it is checked and
    timed on the first ``--amqtt-publications`` publications only (default 100).

Before timing, every matcher's answer for every publication (the set of subscriptions
matched) is compared with pubproof's: pubproof's is computed for each publication in order
(its cache in play), the peers' for each distinct topic name (their answers depend on the
name alone), as a digest (count and two sums of a 32-bit mix of the subscriptions'
numbers) where the answers come from node. Where a peer's semantics differ from MQTT's the
check says so and compares on what they agree on: qlobber has no ``$`` rule
[MQTT-4.7.2-1] (aedes applies it outside the matcher), so its matches of filters starting
with ``+`` or ``#`` are dropped from its answers for ``$`` topic names before the check (not
in its timed passes, where it does less than the others). A matcher that disagrees is
reported and not timed.

Figures: publications per second of the best of the timed passes (Python: GC off while
timing, as ``timeit`` does; node: GC on) by CPU time (``time.process_time``; node's
``process.cpuUsage``, which counts its helper threads too): the machine is shared and its
load moves the wall clock far more than the CPU time (the wall seconds of the fastest
pass are printed beside). pubproof's rate (the
``pubproof`` row: ``match`` with its cache) divided by each peer's. The issue's goals:
at least qlobber's rate per core (1.0x) and 10x paho-mqtt's matcher.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import logging
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from pubproof.reference import subscriptions as pubproof_subscriptions
from pubproof.reference.subscriptions import Matches, SubscriptionIndex

sys.path.insert(0, str(Path(__file__).resolve().parent))
from topics_workload import Workload, workload

PEERS_DIR = Path(__file__).resolve().parent / "peers"
PEERS = ("qlobber", "paho", "amqtt")
VARIANTS = ("repeats", "fresh")
TARGET_QLOBBER = 1.0
TARGET_PAHO = 10.0
MASK = 0xFFFFFFFF
Digest = tuple[int, int, int]


def _fmix32(h: int) -> int:
    """MurmurHash3's finaliser (the node script computes the same)."""
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & MASK
    return h ^ (h >> 16)


class Digester:
    """The digest of a set of subscription numbers: (count, two sums of mixes mod 2^32),
    the same whatever the order."""

    def __init__(self, size: int) -> None:
        self.one = [_fmix32(i + 1) for i in range(size)]
        self.two = [_fmix32((i + 1) ^ 0x5BD1E995) for i in range(size)]

    def __call__(self, numbers: Sequence[int]) -> Digest:
        return (
            len(numbers),
            sum(map(self.one.__getitem__, numbers)) & MASK,
            sum(map(self.two.__getitem__, numbers)) & MASK,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    matcher: str
    variant: str
    publications: int
    #: CPU seconds of the fastest timed pass (the rate's), the median pass's, and the wall
    #: seconds of the fastest pass by the wall clock
    best_s: float
    median_s: float
    wall_s: float
    repeats: int
    build_s: float
    note: str = ""

    @property
    def rate(self) -> float:
        return self.publications / self.best_s


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def timed(
    run: Callable[[], object],
    *,
    budget: float,
    min_repeats: int,
    max_repeats: int,
    before: Callable[[], object] = lambda: None,
) -> tuple[float, float, float, int]:
    """CPU seconds of the fastest and of the median pass of ``run()``, wall seconds of the
    fastest pass by the wall clock, and the passes: at least ``min_repeats``, more while
    ``budget`` wall seconds last, at most ``max_repeats``; GC off while timing; ``before()``
    (untimed) before each pass."""
    cpu: list[float] = []
    wall: list[float] = []
    gc.collect()
    gc.disable()
    try:
        started = time.perf_counter()
        while len(cpu) < max_repeats and (
            len(cpu) < min_repeats or time.perf_counter() - started < budget
        ):
            before()
            t0, c0 = time.perf_counter(), time.process_time()
            run()
            cpu.append(time.process_time() - c0)
            wall.append(time.perf_counter() - t0)
    finally:
        gc.enable()
        gc.collect()
    return min(cpu), statistics.median(cpu), min(wall), len(cpu)


# --- pubproof ----------------------------------------------------------------------------


def build_pubproof(work: Workload, cache_size: int) -> tuple[SubscriptionIndex[int], float]:
    t0 = time.perf_counter()
    index = SubscriptionIndex[int](cache_size=cache_size)
    for number, (client, sent, _) in enumerate(work.subscriptions):
        index.subscribe(client, sent, number)
    return index, time.perf_counter() - t0


def pubproof_digests(
    index: SubscriptionIndex[int], work: Workload, digest: Digester
) -> list[Digest]:
    """The digest of pubproof's answer for each publication, in order (the cache in play;
    an answer object seen again is not digested again)."""
    out: list[Digest] = []
    seen: dict[object, Digest] = {}
    for name in work.publications:
        found = index.match(name)
        known = seen.get(found)
        if known is None:
            if len(seen) > 100_000:
                seen.clear()
            known = seen[found] = digest([s.options for s in found.subscriptions])
        out.append(known)
    return out


def pubproof_rows(
    work: Workload, args: argparse.Namespace
) -> tuple[list[Row], SubscriptionIndex[int]]:
    """Four rows: with and without the match cache, the answer as ``match`` gives it (the
    matching filters' tuples) and flattened (``.subscriptions``)."""
    rows = []
    pubs = work.publications
    cached, cached_build = build_pubproof(work, 65536)
    bare, bare_build = build_pubproof(work, 0)
    for label, index, build_s in (
        ("pubproof", cached, cached_build),
        ("pubproof, no cache", bare, bare_build),
    ):
        match = index.match

        def only_match(match: Callable[[str], Matches[int]] = match) -> None:
            for name in pubs:
                match(name)

        def flat(match: Callable[[str], Matches[int]] = match) -> None:
            for name in pubs:
                _ = match(name).subscriptions

        for suffix, run in (("", only_match), (", flat", flat)):
            # each pass starts with an empty cache: no pass gains from the one before it
            best, median, wall, repeats = timed(run, before=index.clear_cache, **_timing(args))
            rows.append(
                Row(
                    matcher=label + suffix,
                    variant=work.variant,
                    publications=len(pubs),
                    best_s=best,
                    median_s=median,
                    wall_s=wall,
                    repeats=repeats,
                    build_s=build_s,
                )
            )
    return rows, cached


def _timing(args: argparse.Namespace) -> dict[str, Any]:
    return {"budget": args.budget, "min_repeats": args.min_repeats, "max_repeats": args.max_repeats}


# --- paho-mqtt and amqtt -----------------------------------------------------------------


def numbers_by_filter(work: Workload) -> dict[str, list[int]]:
    """The subscriptions' numbers by the filter they match."""
    by_filter: dict[str, list[int]] = {}
    for number, (_, _, plain) in enumerate(work.subscriptions):
        by_filter.setdefault(plain, []).append(number)
    return by_filter


def paho_row(
    work: Workload, want: dict[str, Digest], digest: Digester, args: argparse.Namespace
) -> Row:
    # untyped: reached through importlib, as Any
    MQTTMatcher: Any = importlib.import_module("paho.mqtt.matcher").MQTTMatcher

    t0 = time.perf_counter()
    matcher = MQTTMatcher()
    for plain, numbers in numbers_by_filter(work).items():
        matcher[plain] = numbers
    build_s = time.perf_counter() - t0
    for name, expected in want.items():
        got = digest([n for numbers in matcher.iter_match(name) for n in numbers])
        if got != expected:
            raise Disagreement(f"paho: {name!r} matched {got}, pubproof {expected}")
    iter_match = matcher.iter_match
    pubs = work.publications

    def run() -> None:
        for name in pubs:
            list(iter_match(name))

    best, median, wall, repeats = timed(run, **_timing(args))
    return Row(
        matcher="paho",
        variant=work.variant,
        publications=len(pubs),
        best_s=best,
        median_s=median,
        wall_s=wall,
        repeats=repeats,
        build_s=build_s,
        note=f"paho-mqtt {metadata.version('paho-mqtt')}",
    )


def amqtt_row(work: Workload, index: SubscriptionIndex[int], args: argparse.Namespace) -> Row:
    broker: Any = importlib.import_module("amqtt.broker")

    class Host:  # what Broker._matches reads of its broker: a logger
        logger = logging.getLogger("bench_topics.amqtt")

    Host.logger.setLevel(logging.WARNING)
    host = Host()
    matches = broker.Broker._matches
    t0 = time.perf_counter()
    by_filter = numbers_by_filter(work)  # as amqtt's Broker._subscriptions
    build_s = time.perf_counter() - t0
    pubs = work.publications[: args.amqtt_publications]

    def answer(name: str) -> list[int]:
        out: list[int] = []
        for plain, numbers in by_filter.items():
            if matches(host, name, plain):
                out.extend(numbers)
        return out

    for name in dict.fromkeys(pubs):
        got, expected = set(answer(name)), {s.options for s in index.match(name)}
        if got != expected:
            raise Disagreement(f"amqtt: {name!r}: {len(got ^ expected)} subscriptions differ")

    def run() -> None:
        for name in pubs:
            answer(name)

    best, median, wall, repeats = timed(run, budget=0.0, min_repeats=1, max_repeats=1)
    return Row(
        matcher="amqtt",
        variant=work.variant,
        publications=len(pubs),
        best_s=best,
        median_s=median,
        wall_s=wall,
        repeats=repeats,
        build_s=build_s,
        note=f"amqtt {metadata.version('amqtt')}: first {len(pubs)} publications",
    )


class Disagreement(Exception):
    """A matcher's answer differs from pubproof's."""


# --- qlobber, in node --------------------------------------------------------------------


def qlobber_rows(
    work: Workload, want: dict[str, Digest], args: argparse.Namespace, folder: Path
) -> tuple[list[Row], list[str]]:
    node = shutil.which("node")
    script = PEERS_DIR / "qlobber_bench.js"
    if node is None:
        raise ImportError("no node on PATH")
    if not (PEERS_DIR / "node_modules" / "qlobber" / "package.json").exists():
        raise ImportError("qlobber is not installed: (cd benchmarks/peers && npm ci)")
    path = folder / f"workload-{work.variant}.json"
    names = list(want)
    path.write_text(
        json.dumps(
            {
                "subscriptions": [[client, plain] for client, _, plain in work.subscriptions],
                "publications": work.publications,
                "check": names,
            }
        )
    )

    def run_node(*argv: object) -> Any:
        done = subprocess.run(
            [node, "--max-old-space-size=8192", str(script), *map(str, argv)],
            capture_output=True,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"node failed: {done.stderr.decode(errors='replace')[-800:]}")
        return json.loads(done.stdout)

    progress(f"  qlobber: checking {len(names):,} topic names in node")
    checked = run_node("digests", path)
    notes = []
    for matcher, digests in checked["matchers"].items():
        for name, got in zip(names, digests, strict=True):
            if tuple(got) != want[name]:
                raise Disagreement(f"{matcher}: {name!r} matched {got}, pubproof {want[name]}")
        notes.append(
            f"{matcher}: no $ rule, its matches of filters starting with + or # dropped for "
            f"{checked['dollar_dropped'][matcher]:,} of {len(names):,} topic names ($ topics) "
            f"before the check; with aedes's options (no match_empty_levels) "
            f"{checked['aedes_options_differ'][matcher]:,} answers would differ"
        )
    progress("  qlobber: timing in node")
    timing = run_node("time", path, args.budget, args.min_repeats, args.max_repeats)
    rows = [
        Row(
            matcher=matcher,
            variant=work.variant,
            publications=len(work.publications),
            best_s=t["best_cpu_s"],
            median_s=t["median_cpu_s"],
            wall_s=t["best_wall_s"],
            repeats=t["repeats"],
            build_s=t["build_s"],
            note=f"qlobber {timing['version']}, node {timing['node']}",
        )
        for matcher, t in timing["matchers"].items()
    ]
    return rows, notes


# --- the run -----------------------------------------------------------------------------


def run_variant(variant: str, args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    t0 = time.perf_counter()
    work = workload(
        subscriptions=args.subscriptions, publications=args.publications, variant=variant
    )
    names = dict.fromkeys(work.publications)
    progress(
        f"{variant}: {len(work.subscriptions):,} subscriptions, {len(work.publications):,} "
        f"publications of {len(names):,} topic names ({time.perf_counter() - t0:.1f} s)"
    )
    digest = Digester(len(work.subscriptions))
    progress("  pubproof: timing")
    rows, index = pubproof_rows(work, args)
    progress("  pubproof: its answers")
    want: dict[str, Digest] = {}
    for name, found in zip(work.publications, pubproof_digests(index, work, digest), strict=True):
        if want.setdefault(name, found) != found:
            raise Disagreement(f"pubproof: two answers for {name!r}")
    bare, _ = build_pubproof(work, 0)
    for name, expected in want.items():
        if digest([s.options for s in bare.match(name).subscriptions]) != expected:
            raise Disagreement(f"pubproof without its cache: another answer for {name!r}")
    matched = sum(found[0] for found in pubproof_digests(index, work, digest))
    notes = [
        f"pubproof: {matched / len(work.publications):.1f} subscriptions matched a publication"
    ]
    skipped: dict[str, str] = {}
    for peer in args.peers:
        progress(f"  {peer}")
        try:
            if peer == "qlobber":
                found_rows, found_notes = qlobber_rows(work, want, args, folder)
                rows += found_rows
                notes += found_notes
            elif peer == "paho":
                rows.append(paho_row(work, want, digest, args))
            else:
                rows.append(amqtt_row(work, index, args))
        except (ImportError, Disagreement) as why:
            skipped[peer] = f"{type(why).__name__}: {why}"
    return {"variant": variant, "rows": rows, "notes": notes, "skipped": skipped}


def ratios(result: dict[str, Any]) -> dict[str, float]:
    ours = next(r for r in result["rows"] if r.matcher == "pubproof").rate
    return {r.matcher: ours / r.rate for r in result["rows"]}


def goals(result: dict[str, Any]) -> list[str]:
    """The issue's two goals, for each of pubproof's four rows."""
    by_name = {r.matcher: r for r in result["rows"]}
    lines = []
    for peer, target in (("qlobber", TARGET_QLOBBER), ("paho", TARGET_PAHO)):
        if peer not in by_name:
            continue
        parts = []
        for ours in (
            "pubproof",
            "pubproof, flat",
            "pubproof, no cache",
            "pubproof, no cache, flat",
        ):
            ratio = by_name[ours].rate / by_name[peer].rate
            met = "met" if ratio >= target else f"short by {target / ratio:.2f}x"
            parts.append(f"{ours} {ratio:.2f}x ({met})")
        lines.append(f"{target:g}x {peer}: " + "; ".join(parts))
    return lines


def report(results: list[dict[str, Any]]) -> str:
    compiled = not str(pubproof_subscriptions.__file__).endswith(".py")
    out = [
        f"pubproof.reference.subscriptions runs {'compiled (mypyc)' if compiled else 'as Python'}"
        f" on Python {sys.version.split()[0]}",
    ]
    for result in results:
        out.append("")
        out.append(f"== {result['variant']}")
        out.append(
            f"{'matcher':<24} {'pubs/CPU s':>11} {'pubproof/this':>14} {'CPU s':>7} "
            f"{'median':>7} {'wall s':>7} {'passes':>6} {'build s':>7}"
        )
        for row in result["rows"]:
            out.append(
                f"{row.matcher:<24} {row.rate:>11,.0f} {ratios(result)[row.matcher]:>13.2f}x "
                f"{row.best_s:>7.3f} {row.median_s:>7.3f} {row.wall_s:>7.3f} {row.repeats:>6} "
                f"{row.build_s:>7.2f}"
            )
        for row in result["rows"]:
            if row.note:
                out.append(f"  {row.matcher}: {row.note}")
        out += [f"  {note}" for note in result["notes"]]
        out += [f"  skipped {peer}: {why}" for peer, why in result["skipped"].items()]
        out += [f"  goal: {line}" for line in goals(result)]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--subscriptions", type=int, default=100_000)
    parser.add_argument("--publications", type=int, default=1_000_000)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--peers", default=",".join(PEERS))
    parser.add_argument("--amqtt-publications", type=int, default=100)
    parser.add_argument("--budget", type=float, default=10.0, help="seconds of timed passes")
    parser.add_argument("--min-repeats", type=int, default=2)
    parser.add_argument("--max-repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    args.peers = [p for p in args.peers.split(",") if p]
    args.variants = [v for v in args.variants.split(",") if v]
    if any(p not in PEERS for p in args.peers) or any(v not in VARIANTS for v in args.variants):
        parser.error(f"peers are among {', '.join(PEERS)}; variants among {', '.join(VARIANTS)}")
    with tempfile.TemporaryDirectory(prefix="bench-topics-") as folder:
        results = [run_variant(v, args, Path(folder)) for v in args.variants]
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "variant": r["variant"],
                        "rows": [
                            {
                                **{k: getattr(row, k) for k in row.__slots__},
                                "rate": row.rate,
                                "pubproof_over_this": ratios(r)[row.matcher],
                            }
                            for row in r["rows"]
                        ],
                        "notes": r["notes"],
                        "skipped": r["skipped"],
                        "goals": goals(r),
                    }
                    for r in results
                ],
                indent=2,
            )
        )
    else:
        print(report(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
