"""A packet's wire error, as the pipeline records it: the codec's judgement of one packet
(:class:`WireError`). In a module of its own so that the compiled decoder
(:mod:`pubproof.pipeline.family`) and the descriptions (:mod:`pubproof.pipeline.describe`)
share it without importing each other."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class WireError:
    """The codec's judgement of a packet: rule, offset in the packet, message, kind."""

    rule: str | None
    offset: int
    message: str
    kind: str  # "malformed" | "violation"
