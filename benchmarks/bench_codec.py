#!/usr/bin/env python
"""Throughput of pubproof's reference codec, against MQTT codecs (PyPI, npm) on the same bytes.

    python benchmarks/bench_codec.py [--packets N] [--json] [--peers NAME,...] [--streams NAME,...]

Four streams are built from a seeded random generator, so every run decodes the same bytes:

``mix``
    A realistic MQTT 3.1.1 session: ~85% small PUBLISH (QoS 0/1/2, topics such as
    ``sensors/room12/temp``, payloads of 2-64 bytes), ~2% PUBLISH with a large payload
    (4-64 KiB), the rest PUBACK/PUBREC/PUBREL/PUBCOMP.
``small``
    Small PUBLISH packets only: the target of the performance issue (pubproof decodes at
    least 500,000 of them per second on one core with full validation, and at least 3x as
    many as the fastest Python peer).
``small5``
    MQTT 5.0 small PUBLISH packets with two or three properties each: a Topic Alias (sent
    with its topic name, which sets the mapping) or a Message Expiry Interval, a User
    Property, and half the time a Content Type. The target of "MQTT 5.0, part 1": at least
    mqtt-packet's rate, and 3x the fastest Python peer, with full validation.
``small5u``
    ``small5`` with one more property on every packet, a Correlation Data holding the
    packet's sequence number (as a requester numbers its requests), so that no two property
    sections are alike: the reference decoder remembers the property sections it has judged
    (a sender repeats them), and this stream shows its rate when nothing repeats.
``mix5``
    MQTT 5.0 like ``mix``: the PUBLISH packets of ``small5`` (and 2% large ones), the
    acknowledgements with Reason Codes (70% success, mostly in the two-byte short form),
    about a third of the failures with a Reason String, a few with a User Property.

The 5.0 streams are written by a small builder (``encode5`` in ``codec_streams.py``,
property order as the wire contract gives it), by the model's encoder and by the
reference's: the three must give the same bytes, or the run stops. They are decoded with a
Topic Alias Maximum of 16 (the receiver's limit; the default, 0, accepts no alias).

Operations: ``decode`` (the whole stream is available, then every packet is taken out),
``decode/4KiB`` (pubproof only: the stream arrives in 4 KiB chunks, each drained before the
next, as from a socket) and ``encode`` (packet objects to the bytes of the stream).

Every figure is packets per second of the best of several timed passes over the whole
stream (``time.perf_counter``; the garbage collector is off while timing, as ``timeit``
does). The ratio column is pubproof's rate divided by the row's rate for the same stream
and operation (so a peer's row reads "pubproof is N times faster"). Before any timing, each
peer's output is compared field by field (type, topic, payload, QoS, packet id, DUP,
RETAIN; in 5.0 also each acknowledgement's Reason Code and every packet's properties) with
pubproof's on the whole stream: a peer that decodes something else is not timed.

Peers are used through their own packet-reading path, in the most favourable honest way
(all bytes already in memory, no sockets, no logging); see the comment on each for what it
validates (the Python peers are in ``interop/peer_codecs.py``, which the conformance
matrix's corpus run shares; mqtt-packet's is ``mqtt_packet_codec`` in ``codec_peers.py``).
A peer that is not installed is skipped with a note; the pinned versions are in the
``bench`` extra of pyproject.toml (``pip install -e '.[bench]'``), except mqtt-codec, whose
2019 sdist needs ``setuptools<58`` to build, and mqtt-packet, the npm package, which runs
in node from ``benchmarks/peers`` (``npm ci`` there; see ``benchmarks/README.md``).
mqtt-packet is timed inside node (after untimed warm-up passes, best of the same number of
passes, each a fresh parser fed the whole stream), and its packets come back to Python as
JSON for the check.
Only paho-mqtt, gmqtt and mqtt-packet parse 5.0 properties; amqtt and mqtt-codec decode
3.1.1 only.

Progress goes to stderr; the table (or, with ``--json``, a JSON document) to stdout.

This script is the command line and the run; its modules beside it: ``codec_streams.py``
(the workloads and their streams), ``codec_peers.py`` (pubproof and its peers as codecs),
``codec_measure.py`` (the checks before timing, the timed passes) and ``codec_report.py``
(the goals and the table).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

# the codecs pubproof is compared with live in interop/ (the conformance matrix runs the
# vector corpus against them too); interop/ is not a package, so it is imported by its path
# (by this script's modules too: codec_streams, codec_peers, codec_measure)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
from codec_measure import Result, check, measure
from codec_peers import PEERS, pubproof_codec
from codec_report import TARGET_RATE, TARGET_RATIO, fastest_peer, table, targets5_for
from codec_streams import CHUNK, SEED, STREAMS, Stream, build_streams, log


def run(args: argparse.Namespace) -> dict[str, Any]:
    log(f"building streams of {args.packets:,} packets (seed {SEED})")
    streams = build_streams(args.packets, args.streams)
    for s in streams:
        log(f"  {s.name}: {len(s.packets):,} packets, {len(s.data):,} bytes ({s.encoded_by})")

    codecs = [pubproof_codec()]
    peers: dict[str, dict[str, Any]] = {}
    for name in args.peers:
        try:
            codec = PEERS[name]()
        except ImportError as error:
            log(f"{name}: not installed ({error}); skipped")
            peers[name] = {"status": f"skipped: not installed ({error})"}
            continue
        peers[name] = {
            "version": codec.version,
            "runtime": codec.runtime,
            "how": codec.how,
            "status": "ok",
            "verified": {},
        }
        codecs.append(codec)

    # Check before timing: pubproof against the packets it encoded, peers against pubproof,
    # stream by stream (a peer is timed on the streams it decodes right).
    usable: dict[str, list[Stream]] = {}
    for codec in codecs:
        usable[codec.name] = []
        for s in streams:
            if s.edition not in codec.editions:
                problem: str | None = f"not run: no MQTT {s.edition.value} decoding"
            else:
                problem = check(codec, s)
            log(f"check {codec.name} on {s.name}: {'ok' if problem is None else problem}")
            if codec.name == "pubproof":
                if problem is not None:
                    raise SystemExit(f"pubproof fails its own check on {s.name}: {problem}")
            else:
                peers[codec.name]["verified"][s.name] = problem or "ok"
            if problem is None:
                usable[codec.name].append(s)
        if codec.name != "pubproof":
            left_out = {
                k: v
                for k, v in peers[codec.name]["verified"].items()
                if v != "ok" and not v.startswith("not run")
            }
            if left_out:
                peers[codec.name]["status"] = "; ".join(
                    f"excluded from {k}: {v}" for k, v in left_out.items()
                )

    results: list[Result] = []
    for s in streams:
        for codec in codecs:
            if s not in usable[codec.name]:
                continue
            count = len(s.packets)
            if codec.timer is not None:
                log(f"timing {codec.name} decode on {s.name} ({codec.runtime}) ...")
                best, median, repeats = codec.timer(
                    s, args.budget, args.min_repeats, args.max_repeats
                )
                result = Result(
                    codec.name, s.name, "decode", count, best, median, repeats, codec.runtime
                )
                results.append(result)
                log(
                    f"  {result.rate:,.0f} packets/s "
                    f"(best of {repeats}; median {count / median:,.0f})"
                )
                continue
            assert codec.decode is not None

            def decoded_all(out: list[Any], count: int = count) -> bool:
                return len(out) == count

            operations: list[tuple[str, Callable[[], Any], Callable[[Any], bool]]] = [
                ("decode", partial(codec.decode, s), decoded_all)
            ]
            if codec.decode_chunked is not None:
                operations.append(("decode/4KiB", partial(codec.decode_chunked, s), decoded_all))
            if codec.encode is not None:
                objects = codec.decode(s)
                operations.append(
                    ("encode", partial(codec.encode, objects, s.edition), s.data.__eq__)
                )
            for operation, fn, is_right in operations:
                log(f"timing {codec.name} {operation} on {s.name} ...")
                best, median, repeats = measure(
                    fn, is_right, args.budget, args.min_repeats, args.max_repeats
                )
                result = Result(
                    codec.name, s.name, operation, count, best, median, repeats, codec.runtime
                )
                results.append(result)
                log(
                    f"  {result.rate:,.0f} packets/s "
                    f"(best of {repeats}; median {count / median:,.0f})"
                )

    reference = {(r.stream, r.operation): r.rate for r in results if r.codec == "pubproof"}
    for r in results:
        ours = reference.get((r.stream, r.operation))
        r.ratio = ours / r.rate if ours else None

    small_ours = reference.get(("small", "decode"), 0.0)
    fastest = fastest_peer(results, "small", "Python")
    targets: dict[str, Any] = {
        "small_publish_decode_rate": small_ours,
        "rate_target": TARGET_RATE,
        "rate_met": small_ours >= TARGET_RATE,
        "fastest_peer": fastest.codec if fastest else None,
        "fastest_peer_rate": fastest.rate if fastest else None,
        "ratio_to_fastest_peer": small_ours / fastest.rate if fastest else None,
        "ratio_target": TARGET_RATIO,
        "ratio_met": (small_ours / fastest.rate >= TARGET_RATIO) if fastest else None,
    }
    targets5 = targets5_for(results, reference, "small5")
    targets5u = targets5_for(results, reference, "small5u")
    return {
        "targets5_unique_sections": targets5u,
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
        "seed": SEED,
        "chunk_bytes": CHUNK,
        "streams": {
            s.name: {
                "edition": s.edition.value,
                "packets": len(s.packets),
                "bytes": len(s.data),
                "encoded_by": s.encoded_by,
            }
            for s in streams
        },
        "peers": peers,
        "results": [
            {
                "codec": r.codec,
                "runtime": r.runtime,
                "stream": r.stream,
                "operation": r.operation,
                "packets_per_s": round(r.rate),
                "best_s": r.best_s,
                "median_s": r.median_s,
                "repeats": r.repeats,
                "pubproof_ratio": None if r.ratio is None else round(r.ratio, 2),
            }
            for r in results
        ],
        "targets": targets,
        "targets5": targets5,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--packets", type=int, default=40_000, help="packets per stream (default 40,000)"
    )
    parser.add_argument(
        "--json", action="store_true", help="print a JSON document instead of the table"
    )
    parser.add_argument(
        "--peers",
        default=",".join(PEERS),
        help=f"comma-separated peers (default: all of {', '.join(PEERS)}; '' for none)",
    )
    parser.add_argument(
        "--streams",
        default=",".join(STREAMS),
        help=f"comma-separated streams (default: all of {', '.join(STREAMS)})",
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=1.5,
        help="seconds of timed passes per measurement (default 1.5)",
    )
    parser.add_argument(
        "--min-repeats", type=int, default=3, help="timed passes at least (default 3)"
    )
    parser.add_argument(
        "--max-repeats", type=int, default=25, help="timed passes at most (default 25)"
    )
    args = parser.parse_args(argv)
    args.peers = [p for p in args.peers.split(",") if p]
    unknown = [p for p in args.peers if p not in PEERS]
    if unknown:
        parser.error(f"unknown peer(s) {', '.join(unknown)}; known: {', '.join(PEERS)}")
    args.streams = [s for s in args.streams.split(",") if s]
    unknown = [s for s in args.streams if s not in STREAMS]
    if unknown or not args.streams:
        parser.error(f"unknown stream(s) {', '.join(unknown)}; known: {', '.join(STREAMS)}")
    if args.packets < 1:
        parser.error("--packets must be at least 1")

    started = time.perf_counter()
    report = run(args)
    report["wall_s"] = round(time.perf_counter() - started, 1)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(table(report))
    log(f"done in {report['wall_s']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
