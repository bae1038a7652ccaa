"""The store (placeholder)."""

from __future__ import annotations

from pubproof.probe.serve.broker import Broker
from pubproof.probe.serve.live import Reporter
from pubproof.probe.serve.settings import ServeSettings


def stored_broker(settings: ServeSettings, reporter: Reporter) -> Broker:
    return Broker(settings, reporter)
