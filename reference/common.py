"""What the reference codec's decoder and encoder share, for every edition."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from pubproof.model.editions import Edition
from pubproof.model.rules import Rule
from pubproof.reference.packets import Packet, PubAck, PubComp, PubRec, PubRel

if TYPE_CHECKING:
    from pubproof.reference.errors import ProtocolError
    from pubproof.reference.properties import AckProperties, PublishProperties


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


class _Pending:
    """A 5.0 packet whose fixed header, variable header and Property Length are judged,
    and whose properties (from ``cursor``) or payload have not all arrived. Offsets are
    stream offsets (the buffer moves under ``feed``). The 5.0 decoder's
    (:mod:`pubproof.reference.decode50`), kept here so that :class:`DecoderState` declares
    the exact type of its slot, as mypyc needs."""

    __slots__ = (
        "alias",
        "content_type",
        "correlation",
        "cursor",
        "end",
        "first",
        "mei",
        "packet_id",
        "pfi",
        "reason_code",
        "reason_string",
        "response_topic",
        "section_end",
        "seen",
        "start",
        "sub_ids",
        "topic",
        "topic_at",
        "user",
    )

    def __init__(
        self,
        *,
        start: int,
        end: int,
        first: int,
        packet_id: int | None,
        section_start: int,
        section_end: int,
        topic: str = "",
        topic_at: int = -1,
        reason_code: int = 0,
    ) -> None:
        self.start = start
        self.end = end
        self.first = first
        self.packet_id = packet_id
        self.topic = topic
        self.topic_at = topic_at  # stream offset of the topic length
        self.reason_code = reason_code
        self.cursor = section_start  # the next property's identifier; -1 once all judged
        self.section_end = section_end
        self.seen: set[int] = set()
        self.pfi: int | None = None
        self.mei: int | None = None
        self.alias: int | None = None
        self.response_topic: str | None = None
        self.correlation: bytes | None = None
        self.content_type: str | None = None
        self.reason_string: str | None = None
        self.user: list[tuple[str, str]] = []
        self.sub_ids: list[int] = []


class Whole5:
    """What the 5.0 fast path read of one whole PUBLISH, PUBACK, PUBREC, PUBREL or PUBCOMP
    whose every field is within the rules (:meth:`~pubproof.reference.fast50.FastPath50.
    scan_whole5`): the fields of the packet it stands for, and a PUBLISH's Topic Alias.

    One per decoder, filled anew by every packet the fast path takes: read it before the
    decoder's next call. A native class in the compiled build, so that a compiled caller
    reads the fields directly, where a packet object (an interpreted class) is written and
    read through the generic attribute protocol, some 200 instructions a field."""

    __slots__ = ("dup", "kind", "packet_id", "payload", "properties", "qos", "reason_code",
                 "retain", "section", "topic", "topic_alias")  # fmt: skip

    def __init__(self) -> None:
        self.kind = 0  # the packet type number: 3 PUBLISH, 4 to 7 the acknowledgements
        self.topic = ""
        self.payload = b""
        self.qos = 0
        self.packet_id: int | None = None
        self.dup = False
        self.retain = False
        self.reason_code = 0  # an acknowledgement's
        self.properties: PublishProperties | AckProperties | None = None
        self.topic_alias: int | None = None  # a PUBLISH's
        # the section memory's entry for the property section (None: the packet has none)
        self.section: Section | None = None


class Section:
    """A property section the 5.0 fast path has judged (its memory of them, by their
    bytes): the properties, what the per-packet path reads of them, read once, and
    :attr:`shown`, kept for a reader of :class:`Whole5` that makes something of the
    section once (the capture pipeline: its ``properties`` column and the dict ``P``
    holds), so that it has no memory of its own to look up at every packet."""

    __slots__ = ("properties", "shown", "topic_alias", "utf8_payload")

    def __init__(
        self,
        properties: PublishProperties | AckProperties,
        topic_alias: int | None = None,
        utf8_payload: bool = False,
    ) -> None:
        self.properties = properties
        self.topic_alias = topic_alias  # a PUBLISH's
        # Payload Format Indicator 1: the payload is UTF-8 (judged under payload-utf8)
        self.utf8_payload = utf8_payload
        self.shown: tuple[str, dict[str, Any]] | None = None


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
    5.0 methods live in the classes above it, :mod:`pubproof.reference.decode50` says
    which), and the three methods of ``Decoder`` that the 5.0 classes call."""

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
        "_whole",
    )

    _alias_max: int
    _awaiting: int
    _base: int
    _buf: bytes | bytearray
    _config: Config
    _error: ProtocolError | None
    _max_size: int | None
    _pending: _Pending | None  # 5.0: a packet partly judged
    _pos: int
    _whole: Whole5  # 5.0: what the fast path read of the last packet it took

    # What Decoder provides (real methods, not declarations under TYPE_CHECKING, which
    # mypyc does not take in a class body; Decoder overrides all three).

    def next_packet(self) -> Packet | _NeedData:
        raise NotImplementedError

    def _fail(self, rule: Rule, at: int, message: str) -> ProtocolError:
        raise NotImplementedError

    def _check_topic_content(self, raw: bytes | bytearray, topic: str, start: int) -> None:
        raise NotImplementedError
