"""What the MQTT 5.0 wire theorems share: 5.0 packets as ``P``, and the model's 5.0 verdict.

The cross-checks ask :func:`pubproof.model.wire.decode` with ``Edition.V50`` (and, where a
verdict depends on them, the receiver's ``Limits``); an answer is an :class:`Outcome`: the
rule id broken (or ``ok``, or ``incomplete``), its offset, and the packets read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pubproof.model import wire
from pubproof.model.editions import Edition, Limits
from pubproof.model.trace import AckP, AckProps, AckType, PublishP, PublishProps, publish
from pubproof.proofs.oracle import OK
from pubproof.proofs.z3env import z3

V50 = (Edition.V50,)


def ack50(
    name: AckType, packet_id: int = 1, reason_code: int = 0, properties: AckProps | None = None
) -> AckP:
    """A 5.0 acknowledgement as ``pubproof decode --edition 5.0`` prints it."""
    return {
        "type": name,
        "packet_id": packet_id,
        "reason_code": reason_code,
        "properties": properties or {},
    }


def publish50(
    *, topic: str = "a", properties: PublishProps | None = None, qos: int = 0,
    packet_id: int | None = None, payload: bytes = b"", dup: bool = False, retain: bool = False,
) -> PublishP:  # fmt: skip
    """A 5.0 PUBLISH ``P``: the 3.1.1 form with its ``properties``."""
    packet = publish(
        topic=topic, qos=qos, packet_id=packet_id, payload=payload, dup=dup, retain=retain
    )
    packet["properties"] = properties or {}
    return packet


@dataclass(frozen=True, slots=True)
class Outcome:
    """The model's 5.0 verdict on a byte stream: ``ok`` or a rule id, where, and what."""

    rule: str
    offset: int | None
    packets: list[object]

    def __str__(self) -> str:
        if self.rule == OK:
            return f"ok {self.packets}"
        return f"{self.rule} at offset {self.offset}"


def decode50(
    data: bytes, readings: Mapping[str, str] | None = None, limits: Limits | None = None
) -> Outcome:
    """The model's verdict on ``data`` in 5.0, with the receiver's ``limits``."""
    verdict = wire.decode(data, Edition.V50, readings, limits)
    if verdict.failure is None:
        return Outcome(OK, None, list(verdict.packets))
    return Outcome(verdict.failure.rule, verdict.failure.offset, list(verdict.packets))


def constant(term: object) -> int:
    """The value of a Z3 term built from constants only (a Boolean as 0 or 1)."""
    result = z3.simplify(term)
    if z3.is_true(result) or z3.is_false(result):
        return int(z3.is_true(result))
    return int(result.as_long())


def bytes_of(values: list[int] | tuple[int, ...]) -> list[object]:
    """Concrete bytes as Z3 constants, for running an encoding on a sample."""
    return [z3.BitVecVal(v, 8) for v in values]


__all__ = ["V50", "Outcome", "ack50", "bytes_of", "constant", "decode50", "publish50"]
