"""The driver protocol: how ``pubproof probe-client`` makes a client library act.

A client library needs an application to drive it. A *driver* is that application, as
small as it can be: a program that connects the library to the server pubproof plays,
subscribes and publishes as the check asks, and prints what the application received.

The driver is started once per check, with its command line as given and one environment
variable, ``PUBPROOF_PLAN``, holding a JSON object::

    {"url": "mqtt://127.0.0.1:PORT",        # the server pubproof plays (plain TCP)
     "client_id": "pp1a2b3cc004",           # at most 23 characters
     "edition": "3.1.1",                    # or "3.1" (MQTT 3.1, protocol name MQIsdp)
     "clean_session": true,
     "keepalive": 60,
     "subscribe": [{"topic": "pubproof/1a2b3c/#", "qos": 2}, ...],
     "publish": [{"topic": "...", "qos": 1, "retain": false, "payload_hex": "6869"}, ...],
     "reconnect": true}                     # reconnect (same client id and clean_session)
                                            # when the connection is lost

MQTT 5.0 (``"edition": "5.0"``) adds, only where a check needs them:

    "session_expiry_interval": 60,          # in CONNECT (absent: 0, the session ends with
                                            # the connection); set when clean_session is false
    "limits": {"receive_maximum": 2,        # the client's own limits, in CONNECT
               "topic_alias_maximum": 4,
               "maximum_packet_size": 1024},
    "publish": [{..., "properties": {...}}] # a message's properties, as pubproof decode
                                            # prints them: payload_format_indicator,
                                            # message_expiry_interval, topic_alias,
                                            # response_topic, correlation_data_hex,
                                            # user_properties [[name, value], ...],
                                            # content_type

``clean_session`` is then Clean Start, on every connection (not only the first).

The driver connects; once connected the first time it subscribes to each filter (one
SUBSCRIBE each, in order), then hands every message of ``publish`` to the library at once,
in order (the library decides when each goes on the wire). Whenever the connection is lost
it reconnects, if ``reconnect`` is true, as an application would. It runs until its
standard input closes, then disconnects and exits with status 0.

It prints one JSON object a line on standard output (flushed each line):

- ``{"event": "hello", "library": "paho-mqtt", "version": "2.2.0"}`` first of all;
- ``{"event": "connected"}`` on each CONNACK the library accepts;
- ``{"event": "subscribed"}`` when the library reports a SUBACK;
- ``{"event": "message", "topic": "...", "qos": 1, "retain": false, "payload_hex": "..."}``
  for each message the library hands the application: this is what is judged;
- MQTT 5.0: a ``message`` line also has ``"properties"`` (the same form) as the
  application was handed them;
- ``{"event": "publish-refused", "index": 0, "message": "..."}`` when the library refuses
  to publish the plan's message at ``index`` (e.g. larger than the server's Maximum Packet
  Size): evidence, neither a crash nor a failure;
- ``{"event": "connection-lost"}`` when the library reports the connection lost;
- ``{"event": "error", "message": "..."}`` when the library raises or reports an error;
- ``{"event": "unsupported", "message": "..."}`` when the library cannot do what the plan
  asks (an edition it does not speak, a property or limit it cannot set): the check is
  ``not-applicable``.

Anything else on standard output is kept as evidence (``{"event": "app-output"}``) and
judged as nothing; standard error is kept too. A driver that exits on its own with a
status other than 0, or reports an error, is evidence against the check (verdict
``error``, with the status and the end of standard error), never a pass.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pubproof.probe.clients.local_paths import here
from pubproof.probe.clients.shipped import SHIPPED

PLAN_VARIABLE = "PUBPROOF_PLAN"
#: how much of the driver's standard error the evidence keeps (its end)
STDERR_KEPT = 4000


def command_line(driver: str) -> list[str]:
    """The command line of a driver: a shipped one by name
    (:data:`~pubproof.probe.clients.shipped.SHIPPED`), else ``driver`` split as a shell
    would."""
    if driver in SHIPPED:
        return SHIPPED[driver].command_line()
    return shlex.split(driver)


@dataclass(frozen=True, slots=True)
class Message:
    """A message the application publishes (MQTT 5.0: with ``properties`` in the form of
    ``pubproof decode``'s ``P``)."""

    topic: str
    qos: int
    payload: bytes
    retain: bool = False
    properties: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The plan's JSON of the message (``properties`` only when there are some)."""
        out: dict[str, Any] = {
            "topic": self.topic, "qos": self.qos, "retain": self.retain,
            "payload_hex": self.payload.hex(),
        }  # fmt: skip
        if self.properties:
            out["properties"] = dict(self.properties)
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """What a check asks the driver to do (the JSON of ``PUBPROOF_PLAN``)."""

    url: str
    client_id: str
    edition: str
    clean_session: bool = True
    keepalive: int = 60
    subscribe: tuple[tuple[str, int], ...] = ()
    publish: tuple[Message, ...] = ()
    reconnect: bool = True
    #: MQTT 5.0: the CONNECT's Session Expiry Interval (None: absent)
    session_expiry_interval: int | None = None
    #: MQTT 5.0: the client's own limits in CONNECT (receive_maximum, topic_alias_maximum,
    #: maximum_packet_size)
    limits: Mapping[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The JSON object the driver reads (the 5.0 keys only when set)."""
        out: dict[str, Any] = {
            "url": self.url,
            "client_id": self.client_id,
            "edition": self.edition,
            "clean_session": self.clean_session,
            "keepalive": self.keepalive,
            "subscribe": [{"topic": t, "qos": q} for t, q in self.subscribe],
            "publish": [m.to_json() for m in self.publish],
            "reconnect": self.reconnect,
        }
        if self.session_expiry_interval is not None:
            out["session_expiry_interval"] = self.session_expiry_interval
        if self.limits:
            out["limits"] = dict(self.limits)
        return out


#: what the evidence calls the driver's lines
Record = Callable[..., Any]


@dataclass(slots=True)
class Driver:
    """One running driver: its lines go to ``record`` as they come."""

    argv: Sequence[str]
    plan: Plan
    record: Record
    process: subprocess.Popen[bytes] | None = None
    lines: list[dict[str, Any]] = field(default_factory=list)
    stopping: bool = False
    _threads: list[threading.Thread] = field(default_factory=list)
    _stderr: bytearray = field(default_factory=bytearray)

    def start(self) -> None:
        """Start the driver (recorded as ``driver-start``); an ``error`` event if it
        cannot be started at all."""
        environment = {**os.environ, PLAN_VARIABLE: json.dumps(self.plan.to_json())}
        # the evidence is shared: the recording machine's folders become placeholders
        self.record("driver-start", argv=here().hide_all(self.argv), plan=self.plan.to_json())
        try:
            self.process = subprocess.Popen(
                list(self.argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=environment,
            )
        except OSError as failure:
            message = here().hide(f"the driver cannot be started: {failure}")
            self.record("error", message=message)
            return
        for target in (self._read_stdout, self._read_stderr):
            thread = threading.Thread(target=target, daemon=True)
            thread.start()
            self._threads.append(thread)

    def _read_stdout(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        for raw in self.process.stdout:
            text = raw.decode("utf-8", errors="replace").rstrip("\n")
            if not text.strip():
                continue
            try:
                line = json.loads(text)
            except ValueError:
                line = None
            if isinstance(line, dict) and isinstance(line.get("event"), str):
                self.lines.append(line)
                fields = {k: v for k, v in line.items() if k not in ("event", "t", "client")}
                if line["event"] == "error" and isinstance(fields.get("message"), str):
                    fields["message"] = here().hide(fields["message"])  # an exception's text
                self.record("app", what=line["event"], **fields)
            else:
                self.record("app", what="app-output", text=here().hide(text[:500]))

    def _read_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        for raw in self.process.stderr:
            self._stderr += raw
            if len(self._stderr) > 4 * STDERR_KEPT:
                del self._stderr[:-STDERR_KEPT]

    def exited(self) -> bool:
        """Whether the driver has ended (on its own or stopped)."""
        return self.process is None or self.process.poll() is not None

    def stop(self, grace: float = 2.0) -> None:
        """Close its standard input (the protocol's "stop"), wait ``grace`` seconds, then
        terminate and kill; record ``driver-exit`` with the status, whether it ended on
        its own before being asked, and the end of its standard error."""
        process = self.process
        if process is None:
            return
        early = process.poll() is not None
        self.stopping = True
        if not early:
            try:
                assert process.stdin is not None
                process.stdin.close()
            except OSError:
                pass
            try:
                process.wait(grace)
            except subprocess.TimeoutExpired:
                process.terminate()
                try:
                    process.wait(1.0)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(5.0)
        for thread in self._threads:
            thread.join(1.0)
        stderr = bytes(self._stderr[-STDERR_KEPT:]).decode("utf-8", errors="replace")
        stderr = here().hide(stderr)
        self.record("driver-exit", status=process.returncode, on_its_own=early, stderr=stderr)

    def hello(self) -> dict[str, Any] | None:
        """The driver's ``hello`` line, once it has printed it."""
        return next((line for line in self.lines if line.get("event") == "hello"), None)


def wait_hello(driver: Driver, seconds: float) -> dict[str, Any] | None:
    """Wait up to ``seconds`` for the driver's ``hello``."""
    end = time.monotonic() + seconds
    while time.monotonic() < end and not driver.exited():
        found = driver.hello()
        if found is not None:
            return found
        time.sleep(0.02)
    return driver.hello()
