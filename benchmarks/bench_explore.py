"""``pubproof explore`` benchmarks: judged packets per second against a local mosquitto,
and the time to the first failure on the brokers the matrix knows to be faulty.

    python benchmarks/bench_explore.py [--seconds 30] [--faulty 60] [--seeds 3] [--json]

Three figures in one run, each broker started by ``interop/brokers.py``:

- **throughput**: mosquitto, 4 clients, MQTT 3.1.1 and 5.0, no invalid moves and no
  shrinking (the failures are counted by rule, not stopped at): every packet both ways
  judged by every judge after every move. Packets per second, moves per second, and the
  share of the wall clock the judges took. Goal: at least 500 judged packets per second.
- **time to the first failure**: amqtt and aedes (3.1.1), each with a few seeds: the seconds
  from the start of the run to the first example that fails, with its rule (shrinking not
  counted). The matrix lists, for amqtt, QoS 0 upgraded to QoS 1 or 2 and other topics'
  retained messages sent; for aedes, a QoS 2 message delivered several times when the
  publisher repeats it before PUBREL, and one copy above the granted QoS.
- **coverage**: the flow-table entries each throughput run reached at the broker's end.

The machine's load moves every figure; say what it was doing beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "interop"))

import brokers  # noqa: E402

from pubproof.model.editions import Edition, resolve_readings  # noqa: E402
from pubproof.probe.target import Target  # noqa: E402
from pubproof.testing.explore import explore  # noqa: E402
from pubproof.testing.machine import Exploration  # noqa: E402
from pubproof.testing.world import Example  # noqa: E402


def run_for(url: str, edition: Edition, seconds: float, seed: int, *,
            shrink: bool, invalid: int) -> tuple[Exploration, Any]:  # fmt: skip
    """A run against ``url`` for ``seconds``; the run and its outcome."""
    base = Example(target=Target.parse(url), edition=edition,
                   readings=resolve_readings(edition, {}), run_id=secrets.token_hex(3),
                   number=0)  # fmt: skip
    run = Exploration.of(base, budget=seconds, invalid_percent=invalid, shrink=shrink)
    return run, explore(run, seed=seed)


def throughput(seconds: float) -> list[dict[str, Any]]:
    """Judged packets per second against mosquitto, 4 clients, each edition."""
    rows = []
    for edition in (Edition.V311, Edition.V50):
        config = brokers.MOSQUITTO_LIMITS50 if edition is Edition.V50 else ()
        with brokers.started("mosquitto", config) as running:
            run, outcome = run_for(running.url, edition, seconds, 1, shrink=False, invalid=0)
        reached = sum(1 for r in outcome.coverage.table() if r.broker)
        rows.append({
            "edition": edition.value, "seconds": outcome.seconds, "examples": outcome.examples,
            "moves": outcome.moves, "packets": outcome.packets,
            "packets_per_second": round(outcome.packets / outcome.seconds, 1),
            "moves_per_second": round(outcome.moves / outcome.seconds, 1),
            "judging_share": round(run.judging / outcome.seconds, 3),
            "entries_reached": f"{reached} of {len(outcome.coverage.table())}",
            "failing_rules": dict(run.failing),
        })  # fmt: skip
    return rows


def first_failures(seconds: float, seeds: int) -> list[dict[str, Any]]:
    """Seconds to the first failure on amqtt and aedes, a few seeds each."""
    rows: list[dict[str, Any]] = []
    for name in ("amqtt", "aedes"):
        why = brokers.BROKERS[name].available()
        if why is not None:
            rows.append({"broker": name, "skipped": why})
            continue
        for seed in range(1, seeds + 1):
            with brokers.started(name) as running:
                _run, outcome = run_for(running.url, Edition.V311, seconds, seed, shrink=True,
                                       invalid=20)  # fmt: skip
                rows.append({
                    "broker": f"{name} {running.version}", "seed": seed,
                    "first_failure_seconds": None if outcome.first_failure is None
                    else round(outcome.first_failure, 2),
                    "rules": [f.failure.id for f in outcome.found],
                })  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="each throughput run")
    parser.add_argument("--faulty", type=float, default=60.0, help="each faulty broker's run")
    parser.add_argument("--seeds", type=int, default=3, help="seeds per faulty broker")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    report: dict[str, Any] = {
        "load_average": round(load, 2),
        "throughput": throughput(args.seconds),
        "first_failure": first_failures(args.faulty, args.seeds),
    }
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"load average at the start: {load:.2f} (2 cores)")
    for row in report["throughput"]:
        print(
            f"mosquitto, MQTT {row['edition']}, 4 clients: {row['packets']} packets judged "
            f"in {row['seconds']:.1f} s = {row['packets_per_second']:.0f} packets/s "
            f"({row['moves_per_second']:.0f} moves/s; judging {row['judging_share']:.0%} of "
            f"the time; {row['entries_reached']} table entries) (goal >= 500 packets/s)"
        )
        print(f"    rules failed, examples: {row['failing_rules']}")
    for row in report["first_failure"]:
        if "skipped" in row:
            print(f"{row['broker']}: skipped: {row['skipped']}")
            continue
        print(
            f"{row['broker']} seed {row['seed']}: first failure after "
            f"{row['first_failure_seconds']} s; found {row['rules']}"
        )


if __name__ == "__main__":
    main()
