"""Progress of a long run on standard error: files, bytes and frames done, and the rate.

On a terminal one line is rewritten in place; otherwise (a log, CI) plain lines, at most
one every ``interval`` seconds.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO


class Progress:
    """Thread-safe counters and their display."""

    def __init__(
        self,
        *,
        files: int,
        total_bytes: int,
        total_frames: int,
        stream: TextIO | None = None,
        enabled: bool = True,
        interval: float = 2.0,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.tty = self.stream.isatty()
        self.interval = interval
        self.files, self.total_bytes, self.total_frames = files, total_bytes, total_frames
        self.bytes = self.frames = 0
        self.start = time.monotonic()
        self._last = 0.0
        self._lock = threading.Lock()

    def line(self, text: str) -> None:
        """Print one line (ends any line being rewritten)."""
        if not self.enabled:
            return
        with self._lock:
            end = "\n"
            self.stream.write(("\r\033[K" if self.tty else "") + text + end)
            self.stream.flush()

    def advance(self, size: int, frames: int, *, force: bool = False) -> None:
        """``size`` more bytes and ``frames`` more frames are done."""
        with self._lock:
            self.bytes += size
            self.frames += frames
            now = time.monotonic()
            if not self.enabled or (not force and now - self._last < self.interval):
                return
            self._last = now
            seconds = max(now - self.start, 1e-9)
            text = (
                f"check: {self.bytes / 1e6:,.1f}/{self.total_bytes / 1e6:,.1f} MB, "
                f"{self.frames:,}/{self.total_frames:,} frames, "
                f"{self.frames / seconds:,.0f} frames/s, {seconds:.0f} s"
            )
            self.stream.write(("\r\033[K" + text) if self.tty else text + "\n")
            self.stream.flush()

    def done(self) -> None:
        """End a line being rewritten."""
        if self.enabled and self.tty:
            with self._lock:
                self.stream.write("\n")
                self.stream.flush()
