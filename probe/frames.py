"""Byte streams cut into packets, and each packet described as evidence.

The splitter reads only the fixed header (type byte and Remaining Length) and so delimits
every packet type, which pubproof's codec does not (it rejects all but PUBLISH and its
acknowledgements with rule PP-scope-packet-type). :func:`describe_bytes` then decodes a
PUBLISH-family packet with the reference decoder (giving ``P``, the format of ``pubproof
decode``) and any other packet with :mod:`pubproof.judge.packets`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pubproof.judge.packets import (
    PUBLISH_FAMILY,
    FrameError,
    control_types,
    describe,
    header_length,
    type_name,
)
from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition, Limits
from pubproof.reference.codec import Decoder
from pubproof.reference.errors import ProtocolError
from pubproof.reference.jsonform import to_p
from pubproof.reference.packets import Ack, Packet, Publish

__all__ = ["FrameSplitter", "describe_bytes"]


class FrameSplitter:
    """Feed bytes as they arrive; take out complete packets."""

    __slots__ = ("_buf",)

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> None:
        """Add received bytes."""
        self._buf += data

    def next_frame(self) -> bytes | None:
        """The next complete packet, or None; ``FrameError`` if the stream is unreadable."""
        header = header_length(self._buf)
        if header is None:
            return None
        size = header[0] + header[1]
        if len(self._buf) < size:
            return None
        frame = bytes(self._buf[:size])
        del self._buf[:size]
        return frame

    def rest(self) -> bytes:
        """The bytes not yet taken out."""
        return bytes(self._buf)


def describe_bytes(
    data: bytes,
    edition: Edition,
    readings: Mapping[str, str],
    limits: Limits | None = None,
) -> tuple[dict[str, Any], Packet | None]:
    """Evidence fields for the bytes of one packet, and the reference packet if it is one.

    ``data`` is what one send or one received frame holds; a PUBLISH-family packet that the
    reference decoder rejects (or that is not exactly one packet) gives
    ``{"type", "error": {"rule", "offset", "message"}}``. MQTT 5.0: the PUBLISH family is
    decoded with ``limits`` (those the receiving end declared), the control packets with
    :func:`pubproof.judge.packets.describe` in 5.0 (AUTH is type 15).
    """
    if not data:
        return {"type": "NOTHING", "error": _error(None, 0, "no bytes")}, None
    kind = data[0] >> 4
    name = type_name(data[0], edition)
    v50 = edition is Edition.V50
    if kind in PUBLISH_FAMILY:
        return _publish_family(name, data, edition, readings, limits if v50 else None)
    if kind in control_types(edition):
        try:
            header = header_length(data)
        except FrameError as error:
            return {"type": name, "error": _error(None, 1, str(error))}, None
        if header is None or header[0] + header[1] != len(data):
            return {"type": name, "error": _error(None, 0, "not exactly one packet")}, None
        return describe(data[0], data[header[0] :], edition if v50 else None), None
    reserved = _error(R.RESERVED_TYPE.id_for(edition), 0, f"packet type {kind} is reserved")
    return {"type": name, "error": reserved}, None


def _publish_family(
    name: str, data: bytes, edition: Edition, readings: Mapping[str, str], limits: Limits | None
) -> tuple[dict[str, Any], Packet | None]:
    decoder = Decoder(edition=edition, readings=readings, limits=limits)
    decoder.feed(data)
    try:
        packet = decoder.next_packet()
        if not isinstance(packet, Publish | Ack):
            decoder.close()  # raises IncompleteStream
            return {"type": name, "error": _error(None, 0, "no packet")}, None
    except ProtocolError as error:
        return {"type": name, "error": error.as_json()}, None
    if decoder.buffered:
        extra = f"{decoder.buffered} byte(s) after the packet"
        return {"type": name, "error": _error(None, decoder.offset, extra)}, None
    return dict(to_p(packet)), packet


def _error(rule: str | None, offset: int | None, message: str) -> dict[str, Any]:
    return {"rule": rule, "offset": offset, "message": message}
