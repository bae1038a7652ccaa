"""``pubproof serve``'s event loop: asyncio around the sans-IO broker.

Rules / theory of operation
---------------------------
One :class:`asyncio.Protocol` per connection hands the broker (:class:`pubproof.probe.
serve.broker.Broker`) what the loop reads, and is the broker's :class:`~pubproof.probe.
serve.connection.Wire`: ``write`` goes to the transport, ``backlog`` is what the transport
holds that the client has not taken (the broker stops sending copies above its
``write_buffer_limit``, and asyncio's ``resume_writing`` tells it when to go on), and
``close`` lets the transport write what it holds first, then aborts it if the client has
not taken it within :data:`CLOSE_GRACE` seconds (a client that stopped reading never holds
a connection open). A timer ticks the broker every :data:`TICK` seconds (keep alive, Will
Delay, Message and Session Expiry). SIGINT and SIGTERM stop the broker: every connection
closes, the distribution judge gives its last findings, and the caller writes the summary.

The clock is :func:`time.monotonic`, in seconds since the broker started.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import Callable

from pubproof.probe.serve.broker import Broker
from pubproof.probe.serve.connection import Connection

#: seconds between ticks
TICK = 0.25
#: seconds a closed connection may take to write what it holds before it is aborted
CLOSE_GRACE = 5.0


class _Link(asyncio.Protocol):
    """One connection: the loop's side of it, and the broker's wire."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner
        self.transport: asyncio.Transport | None = None
        self.conn: Connection | None = None

    # -- asyncio's calls ------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        limit = self.runner.broker.settings.write_buffer_limit
        transport.set_write_buffer_limits(high=limit, low=limit // 4)
        peer = transport.get_extra_info("peername")
        self.conn = self.runner.broker.open(self, str(peer), self.runner.now())

    def data_received(self, data: bytes) -> None:
        if self.conn is not None:
            self.runner.guard(lambda: self.runner.broker.feed(self.conn, data, self.runner.now()))  # type: ignore[arg-type]

    def eof_received(self) -> bool | None:
        return None  # close the transport: the client has closed its side

    def connection_lost(self, exc: Exception | None) -> None:
        if self.conn is not None:
            how = "closed" if exc is None else "reset"
            conn = self.conn
            self.runner.guard(lambda: self.runner.broker.lost(conn, self.runner.now(), how))

    def resume_writing(self) -> None:
        if self.conn is not None:
            conn = self.conn
            self.runner.guard(lambda: self.runner.broker.writable(conn, self.runner.now()))

    # -- the broker's wire ----------------------------------------------------------------

    def write(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def close(self) -> None:
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        transport.close()
        self.runner.loop.call_later(CLOSE_GRACE, transport.abort)

    def backlog(self) -> int:
        return self.transport.get_write_buffer_size() if self.transport is not None else 0


class Runner:
    """The broker on an event loop: a listener, a timer, the signals."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        self.started = time.monotonic()
        self.loop = asyncio.get_running_loop()
        self.server: asyncio.Server | None = None
        self.done = asyncio.Event()
        self.failure: BaseException | None = None

    def now(self) -> float:
        return time.monotonic() - self.started

    def guard(self, call: Callable[[], None]) -> None:
        """Run a call of the broker; a failure of the broker itself stops it (reported by
        the caller), it never reaches asyncio's handler as a traceback."""
        try:
            call()
        except Exception as failure:  # a bug of serve: stop, say what it was
            self.failure = failure
            self.done.set()

    async def listen(self) -> int:
        """Start listening; the port."""
        settings = self.broker.settings
        self.server = await self.loop.create_server(
            lambda: _Link(self), settings.host, settings.port, reuse_address=True
        )
        sockets = self.server.sockets
        return int(sockets[0].getsockname()[1]) if sockets else settings.port

    async def _ticks(self) -> None:
        while not self.done.is_set():
            await asyncio.sleep(TICK)
            self.guard(lambda: self.broker.tick(self.now()))

    def stop(self) -> None:
        self.done.set()

    async def serve(self) -> None:
        """Run until :meth:`stop` (or a signal), then shut the broker down."""
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                self.loop.add_signal_handler(sig, self.stop)
        ticker = asyncio.ensure_future(self._ticks())
        try:
            await self.done.wait()
        finally:
            ticker.cancel()
            if self.server is not None:
                self.server.close()
            self.broker.shutdown(self.now())
            await asyncio.sleep(0)  # let the transports write their last packets
            for sig in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                    self.loop.remove_signal_handler(sig)


async def run(broker: Broker, *, ready: Callable[[int], None] | None = None,
              stop: asyncio.Event | None = None) -> BaseException | None:  # fmt: skip
    """Serve ``broker`` until a signal (or ``stop`` is set); ``ready`` gets the port once
    the broker listens. The failure of the broker itself, if one stopped it."""
    runner = Runner(broker)
    port = await runner.listen()
    if ready is not None:
        ready(port)
    if stop is not None:
        async def watch() -> None:
            await stop.wait()
            runner.stop()

        watcher = asyncio.ensure_future(watch())
    await runner.serve()
    if stop is not None:
        watcher.cancel()
    return runner.failure
