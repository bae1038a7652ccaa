"""A Z3 witness from the latest prove run, turned back into bytes and judged by the model
under each configuration it separates."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from pubproof.model.editions import READINGS, Edition, resolve_readings
from pubproof.model.trace import P
from pubproof.model.wire import EncodeError, decode, decode_remaining_length, encode


@dataclass(frozen=True, slots=True, kw_only=True)
class Judged:
    edition: Edition
    readings: Mapping[str, str]  # only the ones that differ from the edition's defaults
    verdict: str  # "ok" or "<kind> <rule id> at offset <n>"


@dataclass(frozen=True, slots=True, kw_only=True)
class Witness:
    data: bytes
    packets: Sequence[Mapping[str, Any]]
    verdicts: tuple[Judged, ...]


def configurations(
    editions: Sequence[str], reading: str | None
) -> list[tuple[Edition, dict[str, str]]]:
    """Each edition with its defaults, and, for a reading, each of its values there."""
    found: list[tuple[Edition, dict[str, str]]] = []
    for name in editions:
        edition = Edition.parse(name)
        if reading is None:
            found.append((edition, {}))
            continue
        switch = READINGS[reading]
        if not switch.applies_to(edition):
            continue
        found += [(edition, {reading: value}) for value in switch.values]
    return found


def judge(data: bytes, edition: Edition, chosen: Mapping[str, str]) -> str:
    verdict = decode(data, edition, chosen)
    if verdict.failure is None:
        return "ok"
    failure = verdict.failure
    return f"{failure.kind} {failure.rule} at offset {failure.offset}"


def _variants(data: bytes) -> list[bytes]:
    """``data`` (one packet) as encoded, then with each other value of the fixed header's
    flag bits, then with its Remaining Length in each longer (non-minimal) form: the bytes a
    decoded ``P`` does not record."""
    found = [data]
    found += [bytes([data[0] & 0xF0 | flags]) + data[1:] for flags in range(16)]
    field = decode_remaining_length(data[1:])
    if isinstance(field, tuple):
        _value, used = field
        groups = list(data[1 : 1 + used])
        for extra in range(1, 5 - used):
            longer = [g | 0x80 for g in groups] + [0x80] * (extra - 1) + [0x00]
            found.append(bytes([data[0], *longer]) + data[1 + used :])
    return found


def _judged(data: bytes, configs: list[tuple[Edition, dict[str, str]]]) -> tuple[Judged, ...]:
    verdicts = []
    for e, c in configs:
        defaults = resolve_readings(e)
        differs = {k: v for k, v in c.items() if defaults.get(k) != v}
        verdicts.append(Judged(edition=e, readings=differs, verdict=judge(data, e, c)))
    return tuple(verdicts)


def rebuild(
    packets: Sequence[Mapping[str, Any]], configs: list[tuple[Edition, dict[str, str]]]
) -> Witness | None:
    """The witness's bytes and every configuration's verdict on them, or None.

    ``P`` is encoded by the model under a configuration that accepts it; when those bytes do
    not separate the configurations (``P`` does not record flag bits the packet type fixes,
    nor the form of the Remaining Length), the first variant of them that does and still
    decodes to ``P`` is shown.
    """
    for edition, chosen in configs:
        try:
            data = b"".join(encode(cast(P, p), edition, chosen) for p in packets)
        except EncodeError:
            continue
        candidates = _variants(data) if len(packets) == 1 else [data]
        for candidate in candidates:
            verdicts = _judged(candidate, configs)
            if len({v.verdict for v in verdicts}) > 1 and any(
                decode(candidate, e, c).packets == list(packets) for e, c in configs
            ):
                return Witness(data=candidate, packets=packets, verdicts=verdicts)
        return Witness(data=data, packets=packets, verdicts=_judged(data, configs))
    return None


_CONFIRMED = re.compile(r"(?:confirmed by the model: |; )([0-9a-f]{2,}):")


def from_details(details: str, configs: list[tuple[Edition, dict[str, str]]]) -> Witness | None:
    """The first byte string a theorem's details report ("confirmed by the model: <hex>:
    ...") that the configurations judge differently, with the packets it decodes to where
    one of them accepts it. For a witness its decoded ``P`` cannot stand for (a property
    given twice: the configuration that accepts it keeps the last one)."""
    for match in _CONFIRMED.finditer(details):
        data = bytes.fromhex(match.group(1))
        verdicts = _judged(data, configs)
        if len({v.verdict for v in verdicts}) < 2:
            continue
        packets: list[Mapping[str, Any]] = []
        for edition, chosen in configs:
            decoded = decode(data, edition, chosen)
            if decoded.failure is None:
                packets = [dict(p) for p in decoded.packets]
                break
        return Witness(data=data, packets=packets, verdicts=verdicts)
    return None


def shown_witness(
    counterexample: Sequence[Mapping[str, Any]],
    details: str,
    editions: Sequence[str],
    reading: str | None,
) -> Witness | None:
    """The witness a theorem's entry shows: its decoded packets encoded again
    (:func:`rebuild`), or, when those bytes do not part the configurations (the decoded
    ``P`` of a property given twice keeps one), the bytes the run confirmed with the model
    (:func:`from_details`)."""
    configs = configurations(editions, reading)
    found = rebuild(counterexample, configs)
    if found is None or len({v.verdict for v in found.verdicts}) < 2:
        found = from_details(details, configs) or found
    return found


def short(data: bytes, limit: int = 32) -> str:
    if len(data) <= limit:
        return data.hex()
    return f"{data[:limit].hex()}… ({len(data):,} bytes)"


def shown_packet(packet: Mapping[str, Any], limit: int = 40) -> dict[str, Any]:
    """``packet`` with long fields shortened for display."""
    out = dict(packet)
    for key in ("topic", "payload_hex"):
        value = out.get(key)
        if isinstance(value, str) and len(value) > limit:
            out[key] = f"{value[:limit]}… ({len(value):,} characters)"
    return out
