"""Protocol benchmarks: the stateful model-vs-reference comparison rate, and the time of
every protocol theorem.

    python benchmarks/bench_protocol.py [--examples N]

Prints steps per second of the Hypothesis stateful comparisons (the machines of
``pubproof.testing.sessions`` for 3.1.1 and ``pubproof.testing.sessions50`` for MQTT 5.0,
which tests/test_session_stateful.py and tests/test_session50_stateful.py run, with every
invariant checked after every step) and a table of the
protocol theorems with their seconds. Goals (protocol issue): at least
1,000 steps per second; the whole ``pubproof prove`` within 60 s (goal 30 s).
"""

from __future__ import annotations

import argparse
import time


def stateful_rate(examples: int, edition: str = "3.1.1") -> tuple[int, float]:
    from hypothesis import settings
    from hypothesis.stateful import run_state_machine_as_test

    from pubproof.testing.sessions import SessionsAgree
    from pubproof.testing.sessions50 import Sessions50Agree

    machine = Sessions50Agree if edition == "5.0" else SessionsAgree
    machine.checks = 0
    start = time.perf_counter()
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=examples, stateful_step_count=60, deadline=None, database=None
        ),
    )
    return machine.checks, time.perf_counter() - start


def theorem_times() -> list[tuple[str, str, str, float]]:
    from pubproof.proofs.catalog import load  # every module that registers theorems

    rows: list[tuple[str, str, str, float]] = []
    for theorem in load():
        if theorem.id.startswith("proto."):
            result = theorem.check()
            rows.append((theorem.id, theorem.expected, result.status, result.seconds))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=int, default=300)
    args = parser.parse_args()
    for edition in ("3.1.1", "5.0"):
        steps, seconds = stateful_rate(args.examples, edition)
        print(
            f"stateful model-vs-reference ({edition}): {steps} steps in {seconds:.2f} s = "
            f"{steps / seconds:,.0f} steps/s (goal >= 1,000)"
        )
    rows = theorem_times()
    print(f"\n{'theorem':62} {'expected':9} {'status':9} seconds")
    for theorem_id, expected, status, secs in rows:
        print(f"{theorem_id:62} {expected:9} {status:9} {secs:7.2f}")
    print(f"{'total':82} {sum(r[3] for r in rows):7.2f}")


if __name__ == "__main__":
    main()
