"""The Python model, asked the questions the Z3 encodings answer, for the cross-checks.

Every theorem compares its Z3 encoding with :mod:`pubproof.model.wire` on samples and on
the witnesses Z3 finds, so that the encoding cannot drift from the model unnoticed. The
answers here come from the model's own functions; nothing is re-implemented.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pubproof.model import wire
from pubproof.model.editions import Edition, resolve_readings
from pubproof.model.rules import INCOMPLETE, RULES
from pubproof.model.trace import P, ack, publish

OK = "ok"


@dataclass(frozen=True, slots=True)
class Config:
    """An edition with every reading resolved: what a verdict is relative to."""

    edition: Edition
    readings: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, edition: Edition, chosen: Mapping[str, str] | None = None) -> Config:
        return cls(edition, tuple(sorted(resolve_readings(edition, chosen).items())))

    def reading(self, name: str) -> str | None:
        return dict(self.readings).get(name)

    def label(self) -> str:
        """The edition and the readings that differ from its defaults."""
        defaults = resolve_readings(self.edition)
        changed = [f"{k}={v}" for k, v in self.readings if defaults[k] != v]
        return " ".join([self.edition.value, *changed]) if changed else f"{self.edition.value}"


def rule_key(rule_id: str, edition: Edition | None = None) -> str:
    """The registry key of a rule id in ``edition`` (by default in any edition, 3.1.1's
    first: 5.0 reuses some 3.1.1 numbers for other rules); ``incomplete`` stays as it is."""
    return rule_id if rule_id == INCOMPLETE else RULES.by_id(rule_id, edition).key


def rule_id(key: str, edition: Edition) -> str:
    """The id a rule key has in ``edition`` (``ok`` and ``incomplete`` stay as they are)."""
    return key if key in (OK, INCOMPLETE) else RULES[key].id_for(edition)


def verdict(data: bytes, config: Config) -> tuple[str, list[P]]:
    """The model's verdict on a byte stream: ``ok`` or the broken rule's key; the packets."""
    result = wire.decode(data, config.edition, dict(config.readings))
    if result.failure is None:
        return OK, result.packets
    return rule_key(result.failure.rule, config.edition), result.packets


def first_byte_accepted(first: int, config: Config) -> bool:
    """Whether the model lets a packet start with ``first`` (it then waits for more)."""
    return verdict(bytes([first]), config)[0] == INCOMPLETE


@dataclass(frozen=True, slots=True)
class RlAnswer:
    """The model's reading of a Remaining Length field: a value and length, or a rule."""

    value: int | None
    length: int | None
    rule: str  # OK, or the key of the rule the field breaks, or "incomplete"


def remaining_length(data: bytes, *, strict: bool) -> RlAnswer:
    """The model's Remaining Length decoder run on ``data`` alone (through a whole packet
    the value would cost a body of that many bytes, up to 256 MB)."""
    readings = {"rl-encoding": "strict" if strict else "lenient"}
    answer = wire.decode_remaining_length(data, Edition.V311, readings)
    if isinstance(answer, wire.Failure):
        return RlAnswer(None, None, rule_key(answer.rule))
    value, body = answer
    return RlAnswer(value, body, OK)


# --- packets that carry a given Remaining Length, for witnesses --------------------------

#: A witness packet: its first byte, its body and its ``P``.
Frame = tuple[int, bytes, P]


def frame_for_length(value: int) -> Frame | None:
    """A valid packet (both editions, default readings) whose Remaining Length is ``value``.

    2 is a PUBACK; from 3 up a QoS 0 PUBLISH to topic "a" with ``value - 3`` zero bytes of
    payload. 0 and 1 have none, and neither do lengths too big to write out.
    """
    if value == 2:
        return 0x40, b"\x00\x01", ack("PUBACK", 1)
    if 3 <= value <= 1 << 20:
        payload = bytes(value - 3)
        return 0x30, b"\x00\x01a" + payload, publish(topic="a", payload=payload)
    return None


__all__ = [
    "OK",
    "Config",
    "Frame",
    "RlAnswer",
    "first_byte_accepted",
    "frame_for_length",
    "remaining_length",
    "rule_id",
    "rule_key",
    "verdict",
]
