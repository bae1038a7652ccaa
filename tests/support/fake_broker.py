"""A broker of a few lines on a socket, scripted by the test, and the probe's short timing:
the probe's units run against it without a real broker."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable

from pubproof.judge.packets import FrameError
from pubproof.probe import Timing
from pubproof.probe.frames import FrameSplitter

FAST = Timing(check=1.5, answer=0.4, quiet=0.1, liveness=0.2, run=30.0)


class FakeBroker:
    """A TCP server on a free loopback port; ``answer`` decides what each packet gets."""

    def __init__(self, answer: Callable[[bytes], bytes]) -> None:
        self.answer = answer
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.stopping = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        self.server.settimeout(0.2)
        while not self.stopping:
            try:
                conn, _ = self.server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._talk, args=(conn,), daemon=True).start()

    def _talk(self, conn: socket.socket) -> None:
        splitter = FrameSplitter()
        conn.settimeout(0.2)
        with conn:
            while not self.stopping:
                try:
                    data = conn.recv(4096)
                except TimeoutError:
                    continue
                except OSError:
                    return
                if not data:
                    return
                splitter.feed(data)
                try:
                    while (frame := splitter.next_frame()) is not None:
                        conn.sendall(self.answer(frame))
                except (FrameError, OSError):
                    return

    def stop(self) -> None:
        self.stopping = True
        self.server.close()
