"""What the reference codec's decoder and encoder share, for every edition."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from pubproof.model.editions import Edition
from pubproof.model.rules import Rule
from pubproof.reference.packets import Packet, PubAck, PubComp, PubRec, PubRel

if TYPE_CHECKING:
    from pubproof.reference.errors import ProtocolError
    from pubproof.reference.properties import PublishProperties


class _NeedData:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NEED_DATA"


#: Returned by :meth:`Decoder.next_packet` when the buffered bytes hold no complete packet.
NEED_DATA: Final = _NeedData()

ACK_NAMES = {4: "PUBACK", 5: "PUBREC", 6: "PUBREL", 7: "PUBCOMP"}
ACK_TYPE_BYTE = {"PUBACK": 0x40, "PUBREC": 0x50, "PUBREL": 0x62, "PUBCOMP": 0x70}
#: packet type number (first byte >> 4) -> acknowledgement class, for the fast path
ACK_BY_KIND: tuple[type[Packet] | None, ...] = (None,) * 4 + (PubAck, PubRec, PubRel, PubComp)

#: The Disallowed Unicode code points (5.0 section 1.5.4; 3.1.1 section 1.5.3 discourages
#: the same ones): control characters and non-characters.
DISCOURAGED = re.compile(
    "[\x01-\x1f\x7f-\x9f\ufdd0-\ufdef"
    + "".join(f"\\U{plane:04x}fffe\\U{plane:04x}ffff" for plane in range(17))
    + "]"
)


@dataclass(frozen=True, slots=True)
class Config:
    """An edition with its readings, compiled for the decoder and the encoder (built and
    cached by :func:`pubproof.reference.codec.config_for`)."""

    edition: Edition
    edition_name: str
    first_byte: tuple[tuple[Rule, str] | None, ...]  # per first byte: the error, if any
    strict_rl: bool  # in 5.0: every Variable Byte Integer
    topic_rules: bool  # empty (3.x), U+0000 and wildcards are forbidden
    max_topic_chars: int | None
    reject_discouraged: bool  # in 5.0: in every string
    v5: bool = False
    pfi_mei_once: bool = False  # 5.0 reading pfi-mei-once=reject
    payload_utf8: bool = False  # 5.0 reading payload-utf8=reject


class DecoderState:
    """The state of a :class:`pubproof.reference.codec.Decoder` (its slots; the 3.x and
    5.0 methods live in the classes above it)."""

    __slots__ = (
        "_alias_max",
        "_awaiting",
        "_base",
        "_buf",
        "_config",
        "_error",
        "_max_size",
        "_pending",
        "_pos",
        "_sections",
    )

    _alias_max: int
    _awaiting: int
    _base: int
    _buf: bytes | bytearray
    _config: Config
    _error: ProtocolError | None
    _max_size: int | None
    _pending: object  # decode50._Pending | None
    _pos: int
    _sections: dict[bytes, PublishProperties]
