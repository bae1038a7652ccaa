"""The progress display: one line on standard error per check as it finishes."""

from __future__ import annotations

import sys
import threading
from typing import TextIO

from pubproof.probe.report import CheckResult, Report

_MARK = {
    "pass": "ok", "tolerated": "~", "deviation": "-", "violation": "!!", "no-answer": "..",
    "error": "??",
}  # fmt: skip


class Progress:
    """Thread-safe: checks finish on worker threads."""

    def __init__(self, total: int, stream: TextIO | None = None, *, enabled: bool = True) -> None:
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.done = 0
        self._lock = threading.Lock()

    def _line(self, text: str) -> None:
        if self.enabled:
            self.stream.write(text + "\n")
            self.stream.flush()

    def start(self, target: str, edition: str) -> None:
        """The first line: what is probed."""
        with self._lock:
            self._line(f"probing {target} (MQTT {edition}): {self.total} checks")

    def finished(self, result: CheckResult) -> None:
        """One line for a check that finished."""
        with self._lock:
            self.done += 1
            width = len(str(self.total))
            mark = _MARK.get(result.verdict, "?")
            self._line(
                f"[{self.done:>{width}}/{self.total}] {mark:>2} {result.verdict:<9} "
                f"{result.id} ({result.seconds:.2f} s)"
            )

    def end(self, report: Report) -> None:
        """The last line: how many of each verdict."""
        with self._lock:
            counts = ", ".join(f"{n} {v}" for v, n in report.counts().items() if n)
            self._line(f"done in {report.seconds:.1f} s: {counts}")
