"""The command line of the synthetic capture generator: ``python -m pubproof.pipeline.synth
OUT.pcap [options]`` (:mod:`pubproof.pipeline.synth.__main__`).

It parses the options into a :class:`~pubproof.pipeline.synth.config.SynthConfig` (the
QoS mix as three weights, the payload sizes as ``SIZE:WEIGHT`` pairs, the faults to inject
as ``NAME=COUNT``, with ``all`` and ``distribution`` naming every per-connection or every
distribution fault), runs :func:`~pubproof.pipeline.synth.generate.generate`, and prints
the expected counts (``--json``: the whole expected document) or a one-line summary on
stderr. Everything the output depends on is in the config, so the same options give the
same bytes.
"""

from __future__ import annotations

import argparse
import enum
import json
import sys
from collections.abc import Sequence
from typing import Literal

from pubproof.pipeline.synth.broker import DistFault
from pubproof.pipeline.synth.config import SynthConfig
from pubproof.pipeline.synth.faults import Fault
from pubproof.pipeline.synth.generate import generate


def _parse_mix(text: str) -> tuple[float, float, float]:
    parts = [float(p) for p in text.split(",")]
    if len(parts) != 3 or any(p < 0 for p in parts) or sum(parts) <= 0:
        raise argparse.ArgumentTypeError("the QoS mix is three weights, e.g. 5,3,2")
    return parts[0], parts[1], parts[2]


def _parse_sizes(text: str) -> tuple[tuple[int, float], ...]:
    sizes = []
    for part in text.split(","):
        size, _, weight = part.partition(":")
        sizes.append((int(size), float(weight or 1)))
    if not sizes or any(s < 0 or w < 0 for s, w in sizes):
        raise argparse.ArgumentTypeError("payload sizes are SIZE:WEIGHT,...")
    return tuple(sizes)


def _parse_inject(values: Sequence[str]) -> tuple[tuple[str, int], ...]:
    """``NAME=COUNT`` values: a fault of either kind; ``all``, every per-connection one;
    ``distribution``, every distribution one (the others none)."""
    counts = {f.value: 0 for f in (*Fault, *DistFault)}
    for value in values:
        name, _, count = value.partition("=")
        if name in ("all", "distribution"):
            kind: tuple[enum.Enum, ...] = tuple(Fault) if name == "all" else tuple(DistFault)
            counts.update({f.value: int(count) for f in kind})
            continue
        if name not in counts:
            raise SystemExit(f"--inject: unknown fault {name!r} (known: all, {', '.join(counts)})")
        counts[name] = int(count)
    return tuple(counts.items())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the generator with the options of ``argv`` (default: ``sys.argv``)."""
    parser = argparse.ArgumentParser(
        prog="python -m pubproof.pipeline.synth",
        description="Write a deterministic synthetic MQTT capture and FILE.expected.json.",
    )
    defaults = SynthConfig()
    parser.add_argument("out", help="the capture to write (.pcap or .pcapng)")
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument(
        "--frames", type=int, default=defaults.frames, help="at least this many frames"
    )
    parser.add_argument("--connections", type=int, default=defaults.connections)
    parser.add_argument("--concurrent", type=int, default=defaults.concurrent)
    parser.add_argument(
        "--qos-mix", type=_parse_mix, default=defaults.qos_mix, help="weights of QoS 0,1,2"
    )
    parser.add_argument(
        "--payload-sizes",
        type=_parse_sizes,
        default=defaults.payload_sizes,
        metavar="SIZE:WEIGHT,...",
    )
    parser.add_argument("--mss", type=int, default=defaults.mss)
    parser.add_argument("--burst", type=int, default=defaults.burst)
    for name in ("split", "coalesce", "retransmit", "reorder", "pure_ack", "ping", "rst", "ipv6"):
        parser.add_argument(
            f"--{name.replace('_', '-')}", type=float, default=getattr(defaults, name), metavar="P"
        )
    parser.add_argument(
        "--no-split-headers", dest="split_headers", action="store_false",
        help="never cut inside a Remaining Length (tshark 4.0 cannot reassemble those)",
    )  # fmt: skip
    parser.add_argument("--port", type=int, default=defaults.port)
    parser.add_argument(
        "--inject", action="append", default=[], metavar="FAULT=COUNT",
        help="faults to inject (default: 10 of each per-connection fault, 2 of each "
        "distribution fault); FAULT is one of "
        + ", ".join(f.value for f in (*Fault, *DistFault))
        + ", all (every per-connection fault) or distribution (every distribution fault)",
    )  # fmt: skip
    parser.add_argument("--large-connection-packets", type=int, default=0, metavar="N")
    parser.add_argument(
        "--mqtt5", type=float, default=0.0, metavar="P",
        help="the share of connections in MQTT 5.0, with properties and Topic Aliases "
        "(default 0; 1: all)",
    )  # fmt: skip
    parser.add_argument(
        "--format", choices=("pcap", "pcapng"), default=None, help="default: from the file name"
    )
    parser.add_argument("--json", action="store_true", help="print the expected counts")
    args = parser.parse_args(argv)
    fmt: Literal["pcap", "pcapng"] = args.format or (
        "pcapng" if args.out.endswith(".pcapng") else "pcap"
    )
    config = SynthConfig(
        seed=args.seed, frames=args.frames, connections=args.connections,
        concurrent=args.concurrent,
        qos_mix=args.qos_mix, payload_sizes=args.payload_sizes, mss=args.mss, burst=args.burst,
        split=args.split, split_headers=args.split_headers, coalesce=args.coalesce,
        retransmit=args.retransmit, reorder=args.reorder,
        pure_ack=args.pure_ack, ping=args.ping, rst=args.rst, ipv6=args.ipv6, port=args.port,
        inject=_parse_inject(args.inject) if args.inject else SynthConfig().inject,
        large_connection_packets=args.large_connection_packets, mqtt5=args.mqtt5, fmt=fmt,
    )  # fmt: skip
    result = generate(config, args.out)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(
            f"{args.out}: {result['frames']} frames, {result['connections']} connections, "
            f"{result['packets_total']} MQTT packets, violations {result['violations']}",
            file=sys.stderr,
        )
    return 0
