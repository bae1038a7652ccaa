"""What a client check runs in: pubproof's server (:mod:`.server`), the driver that makes
the client act (:mod:`.driver`), the check's names and its evidence."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pubproof.model.editions import Edition
from pubproof.probe.clients.driver import Driver, Message, Plan
from pubproof.probe.clients.server import Conn, ServerContext

#: how long the client has to connect after its driver starts (an interpreter may start)
CONNECT_SECONDS = 6.0
#: how long the client has to come back after pubproof dropped its connection
RECONNECT_SECONDS = 5.0
#: MQTT 5.0: the Session Expiry Interval a plan that keeps its session asks for, seconds
KEEP_SESSION_SECONDS = 300

#: a message the application publishes: (topic, qos, payload, retain) or a 5.0 Message
Outgoing = tuple[str, int, bytes, bool] | Message


class ClientContext(ServerContext):
    """The running state of one client check."""

    def __init__(
        self,
        *,
        argv: Sequence[str],
        edition: Edition,
        readings: Mapping[str, str],
        seconds: float,
        answer: float,
        run_id: str,
        check_id: str,
        check_no: int,
    ) -> None:
        super().__init__(edition=edition, readings=readings, seconds=seconds, answer=answer)
        self.argv = list(argv)
        self.run_id = run_id
        self.check_id = check_id
        self.client_id = f"pp{run_id}c{check_no:03d}"
        self.driver: Driver | None = None

    def topic(self, leaf: str = "t") -> str:
        """A topic name of this check and run only."""
        return f"pubproof/{self.run_id}/{self.check_id}/{leaf}"

    def topic_filter(self) -> str:
        """The filter that matches every topic of this check."""
        return f"pubproof/{self.run_id}/{self.check_id}/#"

    def start(
        self,
        *,
        subscribe: Sequence[tuple[str, int]] = (),
        publish: Sequence[Outgoing] = (),
        clean: bool = True,
        limits: Mapping[str, int] | None = None,
    ) -> Conn:
        """Start the driver with this plan; the client's first connection, answered.
        MQTT 5.0: a plan that keeps its session asks for a Session Expiry Interval;
        ``limits`` are the client's own (its CONNECT's Receive Maximum, Topic Alias
        Maximum, Maximum Packet Size)."""
        keep = self.v50 and not clean
        plan = Plan(
            url=self.url,
            client_id=self.client_id,
            edition=self.edition.value,
            clean_session=clean,
            subscribe=tuple(subscribe),
            publish=tuple(m if isinstance(m, Message) else Message(*m) for m in publish),
            session_expiry_interval=KEEP_SESSION_SECONDS if keep else None,
            limits=dict(limits or {}),
        )
        self.driver = Driver(self.argv, plan, self._app)
        self.driver.start()
        conn = self.connection(1, CONNECT_SECONDS)
        if subscribe:
            count = len(subscribe)
            self.wait_for("SUBSCRIBE", lambda: conn.count("SUBSCRIBE") >= count)
        return conn

    def _app(self, event: str, **details: Any) -> None:
        self.recorder.event(event, "app" if event == "app" else "driver", **details)

    def messages(self) -> list[dict[str, Any]]:
        """What the application received so far (the driver's ``message`` lines)."""
        return [
            e for e in list(self.recorder.entries) if e.get("event") == "app"
            and e.get("what") == "message"
        ]  # fmt: skip

    def reconnected(self, number: int = 2) -> Conn:
        """The client's ``number``-th connection, after pubproof dropped the one before."""
        return self.connection(number, RECONNECT_SECONDS)

    def no_reconnect(self) -> None:
        """Record that the client did not come back after pubproof dropped its connection:
        the check cannot see what it re-sends (``not-applicable``, not a failure)."""
        self.recorder.event(
            "not-applicable",
            None,
            message="the client did not reconnect after the connection was lost: what its "
            "session does on a new connection cannot be seen",
        )

    def stop(self) -> None:
        """Stop the driver (recorded) and close the server."""
        if self.driver is not None:
            self.driver.stop()
        self.close()
