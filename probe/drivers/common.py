"""What every Python driver shares: reading the plan, printing a line, waiting for the
end of standard input."""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any
from urllib.parse import urlsplit

_LOCK = threading.Lock()


def plan() -> dict[str, Any]:
    """The plan of ``PUBPROOF_PLAN``, with ``host`` and ``port`` taken from its URL."""
    data: dict[str, Any] = json.loads(os.environ["PUBPROOF_PLAN"])
    url = urlsplit(data["url"])
    data["host"], data["port"] = url.hostname or "127.0.0.1", url.port or 1883
    return data


def say(event: str, **fields: Any) -> None:
    """Print one line of the protocol (thread-safe, flushed)."""
    with _LOCK:
        sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
        sys.stdout.flush()


def message(topic: str, qos: int, retain: bool, payload: bytes) -> None:
    """A message the library handed the application."""
    say("message", topic=topic, qos=qos, retain=bool(retain), payload_hex=payload.hex())


def until_stdin_closes() -> None:
    """Block until standard input ends (the protocol's "stop")."""
    for _ in sys.stdin:
        pass
