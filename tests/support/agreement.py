"""The verdicts of the model and of the reference decoder on the same bytes, and the
streams they are compared on (valid packets, their mutations, raw and arbitrary bytes, in
every edition and reading): what the agreement tests and the codec's mutants share."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from pubproof.model import wire as model
from pubproof.model.editions import Edition, Limits
from pubproof.model.trace import P
from pubproof.reference import Decoder, ProtocolError, to_p
from support.strategies import (
    edition_and_readings,
    limits50,
    mutated,
    raw_ack50,
    raw_publish,
    raw_publish50,
    valid_packet_for,
)

#: In 5.0 a round trip is judged by a receiver that takes any Topic Alias.
ANY_ALIAS = Limits(topic_alias_maximum=0xFFFF)


def decoder_for(edition: Edition, readings: dict[str, str], limits: Limits | None) -> Decoder:
    if limits is None:
        return Decoder(edition=edition, readings=readings)
    return Decoder(edition=edition, readings=readings, limits=limits)


def reference_verdict(
    chunks: list[bytes],
    edition: Edition,
    readings: dict[str, str],
    limits: Limits | None = None,
) -> dict[str, Any]:
    decoder = decoder_for(edition, readings, limits)
    packets: list[P] = []
    try:
        for chunk in chunks:
            decoder.feed(chunk)
            packets.extend(to_p(p) for p in decoder)
        decoder.close()
    except ProtocolError as error:
        return {
            "packets": packets,
            "error": (error.rule, error.offset, error.kind, getattr(error, "reason_code", None)),
        }
    return {"packets": packets, "error": None}


def model_verdict(
    data: bytes, edition: Edition, readings: dict[str, str], limits: Limits | None = None
) -> dict[str, Any]:
    verdict = model.decode(data, edition, readings, limits)
    failure = verdict.failure
    error = (
        None
        if failure is None
        else (failure.rule, failure.offset, failure.kind, failure.reason_code)
    )
    return {"packets": verdict.packets, "error": error}


Stream = tuple[Edition, dict[str, str], Limits | None, bytes]


@st.composite
def streams(draw: st.DrawFn) -> Stream:
    edition, readings = draw(edition_and_readings())
    limits = draw(limits50()) if edition is Edition.V50 else None
    packets = draw(st.lists(valid_packet_for(edition), min_size=0, max_size=4))
    data = b""
    for packet in packets:
        try:
            data += model.encode(packet, edition, readings)
        except model.EncodeError:
            continue
    kind = draw(st.sampled_from(["mutation", "mutation", "arbitrary", "raw", "raw"]))
    if kind == "arbitrary":
        data = draw(st.binary(max_size=64))
    elif kind == "raw":
        raw = (
            draw(st.one_of(raw_publish50(), raw_ack50(), raw_publish()))
            if edition is Edition.V50
            else draw(raw_publish())
        )
        data = raw + draw(st.sampled_from([b"", data]))
    else:
        data = draw(mutated(data))
    return edition, readings, limits, data
