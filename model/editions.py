"""Editions of the MQTT text and the named *readings* where the texts are silent or disagree.

Every verdict pubproof gives is relative to an (edition, readings) pair. A reading is a
named switch with a small set of values, a default per edition, and the passages that make
it necessary. Nothing here chooses silently: when the texts leave a question open, the
question is a reading and the default is stated with its reason.

MQTT 5.0 is another ``Edition`` member; readings name the editions they apply to. A 5.0
verdict also depends on two limits the receiver declared (``Limits``).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


class Edition(enum.Enum):
    """An edition of the protocol text."""

    V31 = "3.1"
    V311 = "3.1.1"
    V50 = "5.0"

    # a member is equal to itself only (Enum's equality), so hashing it as an object is
    # enough; Enum's own __hash__ is a Python call (its name's hash), and an edition is in
    # most keys of the judges' and the model's tables (nearly a million such calls for
    # 54,807 events read by the distribution judge)
    __hash__ = object.__hash__

    @classmethod
    def parse(cls, text: str) -> Edition:
        for edition in cls:
            if edition.value == text:
                return edition
        known = ", ".join(e.value for e in cls)
        raise ValueError(f"unknown edition {text!r} (known: {known})")


@dataclass(frozen=True, slots=True, kw_only=True)
class Passage:
    """A quoted passage with where it comes from."""

    source: str  # e.g. "publish.en.txt", "MQTT 3.1.1 section 2.2.3"
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Reading:
    """A named choice where the texts are silent, ambiguous or disagree."""

    name: str
    question: str
    values: Mapping[str, str]  # value -> what it means
    defaults: Mapping[Edition, str]  # editions the reading applies to, and the default there
    why_default: str
    passages: tuple[Passage, ...] = field(default=())

    def applies_to(self, edition: Edition) -> bool:
        return edition in self.defaults


def _reading(
    name: str,
    question: str,
    values: dict[str, str],
    defaults: dict[Edition, str],
    why_default: str,
    *passages: Passage,
) -> Reading:
    for value in defaults.values():
        assert value in values, (name, value)
    return Reading(
        name=name,
        question=question,
        values=MappingProxyType(values),
        defaults=MappingProxyType(defaults),
        why_default=why_default,
        passages=passages,
    )


V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50

#: The largest Remaining Length; with the fixed header's at most 5 bytes, the largest packet.
MAX_REMAINING_LENGTH = 268_435_455
MAX_PACKET_SIZE = MAX_REMAINING_LENGTH + 5


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """MQTT 5.0: what the receiver declared it accepts (in CONNECT for a client receiving,
    in CONNACK for a server receiving); each absent property has the standard's default."""

    #: "If the Topic Alias Maximum property is absent, the default value is 0." (3.1.2.11.5)
    topic_alias_maximum: int = 0
    #: "If the Maximum Packet Size is not present, no limit on the packet size is imposed
    #: beyond the limitations in the protocol" (3.1.2.11.4)
    maximum_packet_size: int | None = None

    def __post_init__(self) -> None:
        if type(self.topic_alias_maximum) is not int or not (
            0 <= self.topic_alias_maximum <= 0xFFFF
        ):
            raise ValueError("topic_alias_maximum is a Two Byte Integer (0 to 65,535)")
        size = self.maximum_packet_size
        # "It is a Protocol Error to include the Maximum Packet Size more than once, or for
        # the value to be set to zero." A Four Byte Integer.
        if size is not None and (type(size) is not int or not 1 <= size <= 0xFFFF_FFFF):
            raise ValueError("maximum_packet_size is a Four Byte Integer from 1")

    @property
    def is_default(self) -> bool:
        return self.topic_alias_maximum == 0 and self.maximum_packet_size is None


DEFAULT_LIMITS = Limits()


def check_limits(edition: Edition, limits: Limits | None) -> Limits:
    """The limits to judge with: ``limits`` (or the defaults) in 5.0; 3.1 and 3.1.1 have
    none, and asking for one there is an error."""
    if limits is None:
        return DEFAULT_LIMITS
    if edition is not Edition.V50 and not limits.is_default:
        raise ValueError(
            f"edition {edition.value} has no Topic Alias Maximum or Maximum Packet Size"
        )
    return limits


RL_ENCODING = _reading(
    "rl-encoding",
    "Is a Remaining Length (in 5.0: any Variable Byte Integer) encoded in more bytes than its "
    "value needs (e.g. 80 00 for 0) valid?",
    {
        "lenient": "accept any encoding of 1 to 4 bytes",
        "strict": "reject an encoding longer than the shortest one for its value",
    },
    {V31: "lenient", V311: "lenient", V50: "strict"},
    "Neither 3.1 nor 3.1.1 forbids it: 3.1.1 section 2.2.3 gives an encoding algorithm that "
    "produces the shortest form but no MUST. MQTT 5.0 makes the shortest form mandatory for "
    "senders [MQTT-1.5.5-1], for the Remaining Length, the Property Length and the "
    "Subscription Identifier alike, so a 5.0 oracle reports a longer one (as a Malformed "
    "Packet: the text says nothing of the receiver, and 'lenient' is the receiver that "
    "parses it anyway).",
    Passage(
        source="MQTT 3.1.1 section 2.2.3",
        text="The Remaining Length is encoded using a variable length encoding scheme which uses "
        "a single byte for values up to 127.",
    ),
    Passage(
        source="MQTT 5.0 [MQTT-1.5.5-1]",
        text="The encoded value MUST use the minimum number of bytes necessary to represent the "
        "value.",
    ),
)

DUP_QOS0 = _reading(
    "dup-qos0",
    "What does a receiver make of DUP=1 on a QoS 0 PUBLISH?",
    {
        "reject": "a violation of the sender's obligation to clear DUP on QoS 0",
        "ignore": "the bit carries no meaning for QoS 0 and is ignored",
    },
    {V31: "ignore", V311: "reject", V50: "reject"},
    "3.1.1 and 5.0 bind the sender with a MUST [MQTT-3.3.1-2], so an oracle reports it. The "
    "English 3.1 text only says the bit 'is not used' for QoS 0 (and the Japanese and Spanish "
    "agree), which reads as an instruction to ignore it; the German says it 'is not set', "
    "a statement about the sender.",
    Passage(source="publish.en.txt", text="For QoS 0, the DUP bit is not used."),
    Passage(
        source="publish.de.txt",
        text="Das DUP-Bit wird für Nachrichten mit QoS-Stufe 0 nicht gesetzt.",
    ),
    Passage(
        source="publish.zh.txt", text="对于所有QoS 0的消息,重发标志位必须设置为0。[MQTT-3.3.1-2]"
    ),
)

QOS3 = _reading(
    "qos3",
    "What is a PUBLISH with both QoS bits set under MQTT 3.1?",
    {
        "reject": "malformed: the value is reserved",
        "accept": "reserved but not forbidden: parsed like QoS 1 and 2 (with a packet identifier)",
    },
    {V31: "reject"},
    "The 3.1 QoS table lists 3 as 'Reserved' without a MUST, but the authors' discussion calls "
    "publishing on QoS 3 a 'syntactic error'. 3.1.1 settles it [MQTT-3.3.1-4].",
    Passage(
        source="publish.en.txt",
        text="Should we add an error return code to the PUBACK messages, so that the broker has "
        "a way of flagging to the client a syntactic error in a publish, such as publishing "
        "on QoS3, for example?",
    ),
)

ACK_FLAGS = _reading(
    "ack-flags",
    "Must the flag bits of PUBACK, PUBREC, PUBREL and PUBCOMP have particular values under 3.1?",
    {
        "ignore": "the bits are not used and any value is accepted",
        "as-3.1.1": "PUBACK, PUBREC, PUBCOMP carry 0000 and PUBREL 0010, as in 3.1.1",
    },
    {V31: "ignore"},
    "The 3.1 fixed-header figures of PUBACK, PUBREC and PUBCOMP mark DUP, QoS and RETAIN as "
    "'x' (not used); its PUBREL figure (3.1 section 3.6) draws 0110 0 01 x, 'PUBREL messages use "
    "QoS level 1 as an acknowledgement is expected in the form of a PUBCOMP', but no 3.1 text "
    "says what a receiver does with other bits, so the default accepts any. 3.1.1 makes them "
    "reserved values [MQTT-2.2.2-1]; its PUBREL 0010 is 3.1's QoS 1 with DUP and RETAIN at 0.",
    Passage(
        source="MQTT 3.1 PUBCOMP fixed header",
        text="byte 1: Message Type (7) | DUP flag | QoS level | RETAIN -- 0 1 1 1 x x x x",
    ),
    Passage(
        source="MQTT 3.1 section 3.6, PUBREL fixed header",
        text="byte 1: Message Type (6) | DUP flag | QoS level | RETAIN -- 0 1 1 0 0 0 1 x; "
        "PUBREL messages use QoS level 1 as an acknowledgement is expected in the form of a "
        "PUBCOMP. Retries are handled in the same way as PUBLISH messages.",
    ),
)

TOPIC_RULES = _reading(
    "topic-rules",
    "Which topic names does MQTT 3.1 allow in a PUBLISH?",
    {
        "utf8-only": "any well-formed UTF-8 string, as the 3.1 text says",
        "as-3.1.1": "also non-empty, without U+0000 and without the wildcards + and #",
    },
    {V31: "utf8-only"},
    "The 3.1 PUBLISH text requires only a 'UTF-encoded string' and is silent on empty names, "
    "U+0000 and wildcards; 3.1.1 forbids all three [MQTT-4.7.3-1] [MQTT-1.5.3-2] "
    "[MQTT-3.3.2-2].",
    Passage(source="publish.en.txt", text="The Topic Name is a UTF-encoded string."),
    # a heading and its cell, one per line in the flattened table
    Passage(
        source="publish.es.txt", text="Nombre del tema Una serie de caracteres codificada en UTF."
    ),
)

TOPIC_LENGTH = _reading(
    "topic-length",
    "How long may a topic name be under MQTT 3.1?",
    {
        "32767-chars": "at most 32,767 characters (code points)",
        "65535-bytes": "whatever the two-byte length prefix can hold",
    },
    {V31: "32767-chars"},
    "Section 2.2 of the 3.1 specification limits topic names to 32,767 characters; its "
    "Appendix A speaks of 64k, and the excerpts say nothing. The specific clause is the "
    "default. (Raised as OASIS issue MQTT-13.)",
    Passage(
        source="MQTT 3.1 section 2.2",
        text="Topic name has an upper length limit of 32,767 characters.",
    ),
    Passage(source="MQTT 3.1 Appendix A", text="The length is limited to 64k"),
)

DISCOURAGED_CODE_POINTS = _reading(
    "discouraged-code-points",
    "Is a topic name with control characters (U+0001..U+001F, U+007F..U+009F) or "
    "non-characters acceptable under 3.1.1?",
    {
        "accept": "yes: the text only says SHOULD NOT",
        "reject": "no: the receiver takes the option to close the connection",
    },
    {V311: "accept", V50: "accept"},
    "MQTT 3.1.1 section 1.5.3 says a string SHOULD NOT include these code points and that a "
    "receiver MAY close the connection; 5.0 section 1.5.4 says the same ('it MAY treat it as "
    "a Malformed Packet') of every UTF-8 Encoded String, which pubproof applies in 5.0 to "
    "every string it decodes. A SHOULD is not a MUST.",
    Passage(
        source="MQTT 3.1.1 section 1.5.3",
        text="The data SHOULD NOT include encodings of the Unicode code points listed below. If a "
        "receiver receives a Control Packet containing any of them it MAY close the Network "
        "Connection.",
    ),
)

PFI_MEI_ONCE = _reading(
    "pfi-mei-once",
    "May a 5.0 PUBLISH carry the Payload Format Indicator or the Message Expiry Interval "
    "more than once?",
    {
        "reject": "no: a Protocol Error, as for every other property that is not a User "
        "Property or a Subscription Identifier",
        "accept": "yes: the PUBLISH section does not forbid it; the last one counts",
    },
    {V50: "reject"},
    "MQTT 5.0 section 3.3.2.3 says 'It is a Protocol Error to include ... more than once' of "
    "the Topic Alias, Response Topic, Correlation Data and Content Type but not of these two, "
    "while the Will Properties (3.1.3.2.3, 3.1.3.2.4) say it of the very same properties, "
    "and only User Property and Subscription Identifier are described as repeatable. The "
    "omission reads as an editorial gap.",
    Passage(
        source="MQTT 5.0 section 3.3.2.3.4",
        text="It is a Protocol Error to include the Topic Alias value more than once.",
    ),
    Passage(
        source="MQTT 5.0 section 3.1.3.2.3",
        text="It is a Protocol Error to include the Payload Format Indicator more than once.",
    ),
    Passage(
        source="MQTT 5.0 section 3.3.2.3.3",
        text="Followed by the Four Byte Integer representing the Message Expiry Interval.",
    ),
)

PAYLOAD_UTF8 = _reading(
    "payload-utf8",
    "Does a 5.0 receiver judge the payload of a PUBLISH whose Payload Format Indicator is 1?",
    {
        "reject": "yes: ill-formed UTF-8 there breaks the sender's MUST (Reason Code 0x99)",
        "accept": "no: the receiver MAY validate it, and this one does not",
    },
    {V50: "reject"},
    "Section 3.3.2.3.2 binds the sender ('The UTF-8 data in the Payload MUST be well-formed "
    "UTF-8') and leaves checking to the receiver ('MAY validate'). An oracle reports what "
    "the sender broke; a receiver that skips the check is 'accept'.",
    Passage(
        source="MQTT 5.0 section 3.3.2.3.2",
        text="1 (0x01) Byte Indicates that the Payload is UTF-8 Encoded Character Data. The "
        "UTF-8 data in the Payload MUST be well-formed UTF-8 as defined by the Unicode "
        "specification [Unicode] and restated in RFC 3629 [RFC3629].",
    ),
    Passage(
        source="MQTT 5.0 section 3.3.2.3.2",
        text="The receiver MAY validate that the Payload is of the format indicated, and if it "
        "is not send a PUBACK, PUBREC, or DISCONNECT with Reason Code of 0x99 (Payload format "
        "invalid) as described in section 4.13.",
    ),
)

READINGS: Mapping[str, Reading] = MappingProxyType(
    {
        r.name: r
        for r in (
            RL_ENCODING,
            DUP_QOS0,
            QOS3,
            ACK_FLAGS,
            TOPIC_RULES,
            TOPIC_LENGTH,
            DISCOURAGED_CODE_POINTS,
            PFI_MEI_ONCE,
            PAYLOAD_UTF8,
        )
    }
)


class ReadingError(ValueError):
    """A reading name or value that does not exist for the chosen edition."""


def resolve_readings(edition: Edition, chosen: Mapping[str, str] | None = None) -> dict[str, str]:
    """All readings that apply to ``edition``, with ``chosen`` overriding the defaults.

    The result names every applicable reading, so that an output can say exactly which
    pair (edition, readings) it used.
    """
    return resolve_in(READINGS, edition, chosen)


def resolve_in(
    table: Mapping[str, Reading],
    edition: Edition,
    chosen: Mapping[str, str] | None = None,
    what: str = "reading",
) -> dict[str, str]:
    """``resolve_readings`` over another table of readings (``what`` names it in errors)."""
    resolved = {r.name: r.defaults[edition] for r in table.values() if r.applies_to(edition)}
    for name, value in (chosen or {}).items():
        reading = table.get(name)
        if reading is None:
            raise ReadingError(f"unknown {what} {name!r} (known: {', '.join(table)})")
        if not reading.applies_to(edition):
            editions = ", ".join(e.value for e in reading.defaults)
            raise ReadingError(
                f"reading {name!r} applies to edition {editions}, not {edition.value}"
            )
        if value not in reading.values:
            raise ReadingError(
                f"reading {name!r} has no value {value!r} (values: {', '.join(reading.values)})"
            )
        resolved[name] = value
    return resolved


def parse_reading_assignments(items: list[str]) -> dict[str, str]:
    """Parse ``NAME=VALUE`` strings (as given on the command line)."""
    chosen: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise ReadingError(f"a reading is NAME=VALUE, not {item!r}")
        chosen[name.strip()] = value.strip()
    return chosen
