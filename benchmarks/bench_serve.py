"""``pubproof serve`` against amqtt and aedes: messages per second through each broker, one
publisher to ten subscribers, at QoS 0 and QoS 1, with the load of real ``mosquitto_pub``
and ``mosquitto_sub`` processes (libmosquitto, C: not pubproof), in one run.

    python benchmarks/bench_serve.py                    # 20,000 messages a run
    python benchmarks/bench_serve.py --messages 5000    # a quick run
    python benchmarks/bench_serve.py --json             # the results as JSON

What each run does: the broker starts on a free loopback port; ten ``mosquitto_sub -v -t
bench/#`` subscribe at the run's QoS; the bench publishes ``bench/ping`` once every 0.2 s
(its own socket, QoS 0) until every subscriber has printed one, so all ten are subscribed;
then one ``mosquitto_pub -l -M 100 -t bench/data`` publishes the messages, one per line
of its standard input (at QoS 1, at most 100 unacknowledged). The time is from the start of
``mosquitto_pub`` until every subscriber has printed every message (a subscriber that
misses a message fails the run at QoS 1; at QoS 0 the rate counts what arrived, and the
losses are reported). Messages per second = messages / time: each is delivered ten times.
Peak memory is the largest resident set of the broker's processes, sampled from /proc every
50 ms.

The brokers: ``serve`` as ``pubproof serve`` runs (every packet received judged by the wire
and link judges, the distribution judge over every link, findings live), ``serve
wire+link`` (``--judge-messages 0``: no distribution judge), ``serve no judges``
(``--no-judges``: the codec still reads every packet; what the judges cost is the
difference), and amqtt and aedes as :mod:`interop.brokers` starts them. serve runs with
``--max-queued`` at the run's messages: amqtt and aedes queue without a bound, and with its
default (1,000) serve drops the oldest copies of a subscriber that falls behind (its bound,
see ``docs/guides/serve.md``), which a QoS 1 run would count as losses. The goal (issue
36): ``serve`` at least 3 times amqtt's rate and at least 0.5 times aedes', each QoS.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "interop"))

import brokers  # noqa: E402

from pubproof.judge import packets as P  # noqa: E402
from pubproof.reference import Publish, encode  # noqa: E402

SUBSCRIBERS = 10
SERVE_VARIANTS = {
    "serve": [],
    "serve wire+link": ["--judge-messages", "0"],
    "serve no judges": ["--no-judges"],
}
#: the CONNECT and PUBLISH of the bench's own ping (3.1.1, QoS 0, topic bench/ping): only
#: to know that every subscriber has subscribed (the load itself is mosquitto_pub's)
PING_CONNECT = P.connect("bench-ping", clean=True)
PING = encode(Publish(topic="bench/ping", payload=b"x"))


@dataclass
class Result:
    broker: str
    qos: int
    messages: int
    seconds: float
    delivered: int  # copies received, of messages x subscribers
    peak_rss_mib: float
    version: str = ""
    note: str = ""

    @property
    def rate(self) -> float:
        return self.messages / self.seconds if self.seconds else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"broker": self.broker, "version": self.version, "qos": self.qos,
                "messages": self.messages, "seconds": round(self.seconds, 3),
                "messages_per_second": round(self.rate, 1), "delivered": self.delivered,
                "expected": self.messages * SUBSCRIBERS,
                "peak_rss_mib": round(self.peak_rss_mib, 1), "note": self.note}  # fmt: skip


@dataclass
class Subscriber:
    process: subprocess.Popen[str]
    data: int = 0
    pinged: bool = False
    done: threading.Event = field(default_factory=threading.Event)

    def read(self, expected: int) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith("bench/ping"):
                self.pinged = True
            elif line.startswith("bench/data"):
                self.data += 1
                if self.data >= expected:
                    self.done.set()
        self.done.set()


def _tree_rss(pid: int) -> int:
    """The resident set of ``pid`` and its descendants, bytes."""
    total = 0
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(stat[1]), []).append(int(entry.name))
    stack = [pid]
    while stack:
        current = stack.pop()
        with contextlib.suppress(OSError, ValueError):
            for line in (Path("/proc") / str(current) / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        stack += children.get(current, [])
    return total


class Peak:
    """The peak RSS of a process tree, sampled every 50 ms on a thread."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self.stop = pid, 0, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            self.peak = max(self.peak, _tree_rss(self.pid))
            time.sleep(0.05)

    def end(self) -> float:
        self.stop.set()
        self.thread.join(1)
        return self.peak / (1 << 20)


@contextlib.contextmanager
def _serve(args: list[str]) -> Iterator[tuple[int, int, str]]:
    port = brokers.free_port()
    command = [sys.executable, "-m", "pubproof", "serve", "--port", str(port), "--quiet", *args]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 30
        while time.monotonic() < end:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            time.sleep(0.1)
        yield port, process.pid, "pubproof"
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()


@contextlib.contextmanager
def _other(name: str) -> Iterator[tuple[int, int, str]]:
    with brokers.started(name) as running:
        yield running.port, running.pid, running.version


def _ping_until_subscribed(port: int, subscribers: list[Subscriber], seconds: float = 30) -> None:
    with socket.create_connection(("127.0.0.1", port), 5) as sock:
        sock.sendall(PING_CONNECT)
        sock.recv(4)
        end = time.monotonic() + seconds
        while not all(s.pinged for s in subscribers):
            if time.monotonic() > end:
                raise RuntimeError("the subscribers did not all subscribe")
            sock.sendall(PING)
            time.sleep(0.2)


def run_one(label: str, broker: Any, qos: int, messages: int, timeout: float) -> Result:
    """One broker, one QoS."""
    with broker as (port, pid, version), tempfile.TemporaryDirectory() as scratch:
        lines = Path(scratch) / "lines"
        lines.write_text("".join(f"{n}\n" for n in range(messages)))
        subs = []
        for _ in range(SUBSCRIBERS):
            process = subprocess.Popen(
                ["mosquitto_sub", "-p", str(port), "-t", "bench/#", "-q", str(qos), "-v"],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            )  # fmt: skip
            sub = Subscriber(process)
            threading.Thread(target=sub.read, args=(messages,), daemon=True).start()
            subs.append(sub)
        try:
            _ping_until_subscribed(port, subs)
            peak = Peak(pid)
            started = time.monotonic()
            with lines.open() as source:
                publisher = subprocess.Popen(
                    ["mosquitto_pub", "-p", str(port), "-t", "bench/data", "-q", str(qos),
                     "-l", "-M", "100"], stdin=source, stderr=subprocess.DEVNULL,
                )  # fmt: skip
            end = started + timeout
            for sub in subs:
                sub.done.wait(max(0.0, end - time.monotonic()))
            seconds = time.monotonic() - started
            if qos == 0:  # losses allowed: the last arrival ends the run
                seconds = min(seconds, timeout)
            publisher.wait(10)
            rss = peak.end()
        finally:
            for sub in subs:
                sub.process.terminate()
            for sub in subs:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    sub.process.wait(5)
        delivered = sum(min(s.data, messages) for s in subs)
        note = ""
        if delivered < messages * SUBSCRIBERS:
            note = f"{messages * SUBSCRIBERS - delivered} copies not delivered within {timeout} s"
        return Result(label, qos, messages, seconds, delivered, rss, version, note)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--qos", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--brokers", nargs="+", default=[*SERVE_VARIANTS, "amqtt", "aedes"])
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: list[Result] = []
    for qos in args.qos:
        for name in args.brokers:
            if name in SERVE_VARIANTS:
                broker = _serve([*SERVE_VARIANTS[name], "--max-queued", str(args.messages)])
            else:
                broker = _other(name)
            print(f"{name}, QoS {qos}: {args.messages} messages ...", file=sys.stderr, flush=True)
            result = run_one(name, broker, qos, args.messages, args.timeout)
            print(f"  {result.rate:,.0f} messages/s, peak {result.peak_rss_mib:.0f} MiB "
                  f"{result.note}", file=sys.stderr, flush=True)  # fmt: skip
            results.append(result)
    ratios = _ratios(results)
    if args.json:
        print(json.dumps({"subscribers": SUBSCRIBERS, "cpus": os.cpu_count(),
                          "results": [r.to_json() for r in results], "ratios": ratios},
                         indent=1))  # fmt: skip
    else:
        print(f"{'broker':<18} {'QoS':>3} {'msg/s':>9} {'peak MiB':>9}  note")
        for r in results:
            print(f"{r.broker:<18} {r.qos:>3} {r.rate:>9,.0f} {r.peak_rss_mib:>9.0f}  {r.note}")
        for key, value in ratios.items():
            print(f"{key}: {value:.2f}")
    return 0


def _ratios(results: list[Result]) -> dict[str, float]:
    """serve's rate over each other broker's, per QoS (the goal: >= 3 x amqtt, >= 0.5 x
    aedes), and what the judges cost (serve over serve without judges)."""
    by = {(r.broker, r.qos): r.rate for r in results}
    out: dict[str, float] = {}
    for (broker, qos), rate in by.items():
        if broker in SERVE_VARIANTS or not rate:
            continue
        for variant in SERVE_VARIANTS:
            mine = by.get((variant, qos))
            if mine:
                out[f"QoS {qos} {variant} / {broker}"] = mine / rate
    for qos in {q for _, q in by}:
        free = by.get(("serve no judges", qos))
        if free:
            for variant in ("serve", "serve wire+link"):
                if by.get((variant, qos)):
                    out[f"QoS {qos} {variant} / serve no judges"] = by[variant, qos] / free
    return out


if __name__ == "__main__":
    raise SystemExit(main())
