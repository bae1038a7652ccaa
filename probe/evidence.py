"""Evidence: the trace of one check, as JSON-ready entries another tool can replay.

A packet entry is what ``pubproof decode`` prints for the packet (``P``; a control packet
as ``{"type": "CONNACK", ...}`` with its fields; bytes that are no packet as ``{"type",
"error": {"rule", "offset", "message"}}``) plus::

    "dir": "to-broker" | "from-broker", "client": NAME, "hex": the bytes, "t": seconds

and ``"case": true`` on the packet a check is about (the malformed or forbidden one);
``"breaks": [RULE, ...]`` on a packet by which the probe's client breaks rules of its own
on purpose (an exploration's wrong acknowledgement): the broker may close for it.
An event entry is ``{"event": NAME, "client": NAME or null, "t", ...}``:

- ``closed``: the broker closed the connection (end of stream or reset)
- ``dropped``: the probe dropped the connection without DISCONNECT
- ``timeout``: a wait ran out; ``waiting_for`` says for what, ``seconds`` how long
- ``quiet``: a window of ``seconds`` in which the probe listened for anything more
- ``connect-failed``: no TCP connection (``message``)
- ``error``: the probe itself failed (``message``)
- ``deadline``: the check reached its hard deadline
"""

from __future__ import annotations

import time
from typing import Any

Entry = dict[str, Any]

#: the name of the client that checks, after a wait ran out, whether the broker is there
LIVENESS_CLIENT = "liveness"

TO_BROKER = "to-broker"
FROM_BROKER = "from-broker"


class Recorder:
    """Collects the entries of one check, in the order the probe sends and reads them."""

    __slots__ = ("_t0", "enabled", "entries")

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.enabled = True  # cleanup after a check is not evidence
        self._t0 = time.monotonic()

    def _now(self) -> float:
        return round(time.monotonic() - self._t0, 4)

    def packet(
        self, direction: str, client: str, fields: dict[str, Any], data: bytes, *, case: bool,
        breaks: tuple[str, ...] = (),
    ) -> Entry:
        entry: Entry = {**fields, "dir": direction, "client": client, "hex": data.hex()}
        if case:
            entry["case"] = True
        if breaks:
            entry["breaks"] = list(breaks)
        entry["t"] = self._now()
        if self.enabled:
            self.entries.append(entry)
        return entry

    def event(self, event: str, client: str | None = None, **details: Any) -> Entry:
        """Record an event."""
        entry: Entry = {"event": event, "client": client, **details, "t": self._now()}
        if self.enabled:
            self.entries.append(entry)
        return entry


def is_packet(entry: Entry) -> bool:
    """Whether the entry is a packet (not an event)."""
    return "dir" in entry


def sent(entry: Entry) -> bool:
    """Whether the entry is a packet the probe sent."""
    return entry.get("dir") == TO_BROKER


def received(entry: Entry) -> bool:
    """Whether the entry is a packet the broker sent."""
    return entry.get("dir") == FROM_BROKER


def connack_code(entry: Entry) -> int:
    """A CONNACK's return code (3.1, 3.1.1) or Reason Code (5.0)."""
    code = entry["return_code"] if "return_code" in entry else entry.get("reason_code", 0)
    return int(code)
