"""The recorder of the vector corpus: a case is computed by the model and checked against
what its generator meant it to show (:mod:`pubproof.model.vectors`, and
:mod:`pubproof.model.vectors50` for MQTT 5.0)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pubproof.model.editions import Edition, Limits, resolve_readings
from pubproof.model.rules import INCOMPLETE, Rule
from pubproof.model.trace import P
from pubproof.model.wire import EncodeError, decode, encode

V50 = Edition.V50


@dataclass(frozen=True, slots=True)
class Intent:
    rule: Rule | None
    side: str  # "accept" | "reject" | "incomplete" | "random"


class Corpus:
    def __init__(self) -> None:
        self.cases: list[dict[str, Any]] = []
        self.counters: dict[str, int] = {}

    def _id(self, edition: Edition, op: str, rule: str | None, side: str) -> str:
        stem = f"{edition.value}/{op}/{rule or 'any'}/{side}"
        self.counters[stem] = self.counters.get(stem, 0) + 1
        return f"{stem}/{self.counters[stem]:04d}"

    def decode_case(
        self,
        intent: Intent,
        data: bytes,
        edition: Edition,
        readings: Mapping[str, str] | None = None,
        limits: Limits | None = None,
    ) -> None:
        resolved = resolve_readings(edition, readings)
        verdict = decode(data, edition, resolved, limits)
        failure = verdict.failure
        if intent.side == "accept" and failure is not None:
            raise AssertionError(f"meant to accept {data.hex()} ({intent}), model says {failure}")
        if intent.side == "reject":
            assert intent.rule is not None
            expected = intent.rule.id_for(edition)
            if failure is None or failure.rule != expected:
                raise AssertionError(f"meant {expected} for {data.hex()}, model says {failure}")
        if intent.side == "incomplete" and (failure is None or failure.rule != INCOMPLETE):
            raise AssertionError(f"meant incomplete for {data.hex()}, model says {failure}")
        if failure is None:
            rule = intent.rule.id_for(edition) if intent.rule is not None else None
        else:
            rule = failure.rule
        case: dict[str, Any] = {
            "id": self._id(edition, "decode", rule, intent.side),
            "op": "decode",
            "edition": edition.value,
            "reading": resolved,
            "hex": data.hex(),
            "verdict": verdict.verdict,
            "rule": rule,
            "offset": None if failure is None else failure.offset,
            "packets": verdict.packets,
        }
        if edition is V50:
            case["limits"] = limits_json(limits)
            case["reason_code"] = None if failure is None else failure.reason_code
        self.cases.append(case)

    def encode_case(
        self,
        intent: Intent,
        packet: P,
        edition: Edition,
        readings: Mapping[str, str] | None = None,
        limits: Limits | None = None,
    ) -> None:
        resolved = resolve_readings(edition, readings)
        assert intent.rule is not None
        expected = intent.rule.id_for(edition)
        try:
            data: bytes | None = encode(packet, edition, resolved, limits)
            verdict, rule = "ok", expected
        except EncodeError as error:
            data, rule = None, error.rule
            verdict = "violation"
        if (intent.side == "accept") != (data is not None) or rule != expected:
            raise AssertionError(f"encode intent {intent} for {packet}: got {rule} {data!r}")
        case: dict[str, Any] = {
            "id": self._id(edition, "encode", rule, intent.side),
            "op": "encode",
            "edition": edition.value,
            "reading": resolved,
            "hex": None if data is None else data.hex(),
            "verdict": verdict,
            "rule": rule,
            "offset": None,
            "packets": [packet],
        }
        if edition is V50:
            # null: the encoder's own default (any Topic Alias up to 65,535, no size limit)
            case["limits"] = None if limits is None else limits_json(limits)
            case["reason_code"] = None
        self.cases.append(case)


def limits_json(limits: Limits | None) -> dict[str, int | None]:
    given = limits if limits is not None else Limits()
    return {
        "topic_alias_maximum": given.topic_alias_maximum,
        "maximum_packet_size": given.maximum_packet_size,
    }


def accept(rule: Rule) -> Intent:
    return Intent(rule, "accept")


def reject(rule: Rule) -> Intent:
    return Intent(rule, "reject")
