"""The wire-format rules of PUBLISH, PUBACK, PUBREC, PUBREL and PUBCOMP, as data.

Each rule quotes the clause it stands on. Quotes marked ``en``/``de``/``ja``/``es``/``zh``
come verbatim from the excerpts in ``shared/spec`` (3.1: en, de, ja, es; 3.1.1: zh);
quotes with source "MQTT 3.1.1 ..." are the OASIS standard's own English, for statements
outside the excerpts. The checks in :mod:`pubproof.model.wire` name these keys.
"""

from __future__ import annotations

from pubproof.model.editions import Edition
from pubproof.model.rules import Binds, Kind, Quote, Rule, Strength, rule

V31, V311 = Edition.V31, Edition.V311

_SOURCES = {
    "en": "publish.en.txt",
    "de": "publish.de.txt",
    "ja": "publish.ja.txt",
    "es": "publish.es.txt",
    "zh": "publish.zh.txt",
}


def q(lang: str, text: str, source: str | None = None) -> Quote:
    return Quote(lang=lang, source=source or _SOURCES[lang], text=text)


def std(section: str, text: str) -> Quote:
    """The OASIS MQTT 3.1.1 standard's English wording."""
    return Quote(lang="en", source=f"MQTT 3.1.1 section {section}", text=text)


def v31(section: str, text: str) -> Quote:
    """The IBM MQTT V3.1 specification's wording, for clauses outside the excerpts."""
    return Quote(lang="en", source=f"MQTT V3.1 section {section}", text=text)


# --- packet type -----------------------------------------------------------------------

RESERVED_TYPE = rule(
    "type.reserved",
    "Packet types 0 and 15 are reserved",
    ids={V31: "PP31-2.1-reserved-type", V311: "PP311-2.2.1-reserved-type"},
    strength=Strength.MUST_NOT,
    binds=Binds.SENDER,
    kind=Kind.MALFORMED,
    quotes=(
        std("2.2.1", "Reserved 0 Forbidden Reserved ... Reserved 15 Forbidden Reserved"),
        v31("2.1", "Reserved | 0 | Reserved ... Reserved | 15 | Reserved"),
    ),
)

OUT_OF_SCOPE_TYPE = rule(
    "type.out-of-scope",
    "Packet types other than PUBLISH and its acknowledgements are outside pubproof's scope",
    ids={V31: "PP-scope-packet-type", V311: "PP-scope-packet-type"},
    strength=Strength.DEFINITION,
    binds=Binds.RECEIVER,
    kind=Kind.MALFORMED,
    quotes=(q("en", "PUBLISH Publish a message"),),
)

# --- fixed header flags ----------------------------------------------------------------

QOS_RESERVED = rule(
    "publish.qos-reserved",
    "QoS value 3 (both QoS bits set) is reserved",
    ids={V31: "PP31-2.1-qos-reserved", V311: "MQTT-3.3.1-4"},
    strength=Strength.MUST_NOT,
    binds=Binds.SENDER_AND_RECEIVER,
    kind=Kind.MALFORMED,
    reading="qos3",
    quotes=(
        q(
            "zh",
            "PUBLISH报文不能将QoS的两位都置1。如果服务端或客户端收到QoS两位都为1的PUBLISH报文,"
            "它必须关闭网络连接 [MQTT-3.3.1-4]",
        ),
        std(
            "3.3.1.2",
            "A PUBLISH Packet MUST NOT have both QoS bits set to 1. If a Server or Client "
            "receives a PUBLISH Packet which has both QoS bits set to 1 it MUST close the "
            "Network Connection [MQTT-3.3.1-4].",
        ),
        q(
            "en",
            "Should we add an error return code to the PUBACK messages, so that the broker has a "
            "way of flagging to the client a syntactic error in a publish, such as publishing on "
            "QoS3, for example?",
        ),
    ),
)

DUP_QOS0 = rule(
    "publish.dup-qos0",
    "DUP is 0 on every QoS 0 PUBLISH",
    ids={V31: "PP31-3.3-dup-qos0", V311: "MQTT-3.3.1-2"},
    also=("MQTT-4.3.1-1",),
    strength=Strength.MUST,
    binds=Binds.SENDER,
    kind=Kind.VIOLATION,
    reading="dup-qos0",
    quotes=(
        q("zh", "对于所有QoS 0的消息,重发标志位必须设置为0。[MQTT-3.3.1-2]"),
        std("3.3.1.1", "The DUP flag MUST be set to 0 for all QoS 0 messages [MQTT-3.3.1-2]."),
        q("en", "For QoS 0, the DUP bit is not used."),
        q("de", "Das DUP-Bit wird für Nachrichten mit QoS-Stufe 0 nicht gesetzt."),
        q("ja", "DUP ビットは、QoS レベル 0 のメッセージには使用されません。"),
        q("es", "El bit de DUP no se utiliza para mensajes con un nivel de QoS 0."),
    ),
)

_ACK_SECTIONS = {"PUBACK": "3.4", "PUBREC": "3.5", "PUBREL": "3.6", "PUBCOMP": "3.7"}
ACK_TYPES = {4: "PUBACK", 5: "PUBREC", 6: "PUBREL", 7: "PUBCOMP"}
#: The reserved flag values of the acknowledgements in 3.1.1 (Table 2.2).
ACK_FLAGS_311 = {"PUBACK": 0b0000, "PUBREC": 0b0000, "PUBREL": 0b0010, "PUBCOMP": 0b0000}

_ACK_FLAGS_ZERO = rule(
    "ack.flags",
    "PUBACK, PUBREC and PUBCOMP fixed-header flags are 0000",
    ids={V31: "PP31-2.1-ack-flags", V311: "MQTT-2.2.2-1"},
    also=("MQTT-2.2.2-2",),
    strength=Strength.MUST,
    binds=Binds.SENDER_AND_RECEIVER,
    kind=Kind.MALFORMED,
    reading="ack-flags",
    quotes=(
        std(
            "2.2.2",
            "Where a flag bit is marked as \u201cReserved\u201d in Table 2.2 - Flag Bits, it is "
            "reserved for future use and MUST be set to the value listed in that table "
            "[MQTT-2.2.2-1]. If invalid flags are received, the receiver MUST close the "
            "Network Connection [MQTT-2.2.2-2].",
        ),
        v31("3.4, 3.5, 3.7", "byte 1: Message Type | DUP flag | QoS level | RETAIN: x x x x"),
    ),
)
ACK_FLAGS: dict[str, Rule] = {n: _ACK_FLAGS_ZERO for n in ("PUBACK", "PUBREC", "PUBCOMP")}
ACK_FLAGS["PUBREL"] = rule(
    "pubrel.flags",
    "PUBREL fixed-header flags are 0010",
    ids={V31: "PP31-3.6-flags", V311: "MQTT-3.6.1-1"},
    also=("MQTT-2.2.2-1", "MQTT-2.2.2-2"),
    strength=Strength.MUST,
    binds=Binds.SENDER_AND_RECEIVER,
    kind=Kind.MALFORMED,
    reading="ack-flags",
    quotes=(
        std(
            "3.6.1",
            "Bits 3,2,1 and 0 of the fixed header in the PUBREL Control Packet are reserved and "
            "MUST be set to 0,0,1 and 0 respectively. The Server MUST treat any other value as "
            "malformed and close the Network Connection [MQTT-3.6.1-1].",
        ),
        v31("3.6", "byte 1: Message Type (6) | DUP flag | QoS level | RETAIN: x x x x"),
    ),
)

# --- Remaining Length ------------------------------------------------------------------

RL_MAX_BYTES = rule(
    "rl.max-four-bytes",
    "The Remaining Length field is 1 to 4 bytes (values up to 268,435,455)",
    ids={V31: "PP31-2.1-rl-max-four-bytes", V311: "PP311-2.2.3-rl-max-four-bytes"},
    strength=Strength.DEFINITION,
    binds=Binds.SENDER_AND_RECEIVER,
    kind=Kind.MALFORMED,
    quotes=(
        std(
            "2.2.3",
            "The maximum number of bytes in the Remaining Length field is four. ... This allows "
            "applications to send Control Packets of size up to 268,435,455 (256 MB).",
        ),
        v31(
            "2.1",
            "The variable length encoding scheme uses a single byte for messages up to 127 "
            "bytes long. ... the maximum number of bytes in the Remaining Length field is four.",
        ),
    ),
)

RL_MINIMAL = rule(
    "rl.minimal",
    "The Remaining Length uses the fewest bytes that hold its value (reading rl-encoding=strict)",
    ids={V31: "PP31-2.1-rl-minimal", V311: "PP311-2.2.3-rl-minimal"},
    strength=Strength.DEFINITION,
    binds=Binds.SENDER,
    kind=Kind.MALFORMED,
    reading="rl-encoding",
    quotes=(
        std(
            "2.2.3",
            "The Remaining Length is encoded using a variable length encoding scheme which uses "
            "a single byte for values up to 127.",
        ),
    ),
)

RL_DELIMITS = rule(
    "rl.delimits-packet",
    "The Remaining Length counts the bytes of the packet after it; what follows is the next packet",
    ids={V31: "PP31-2.1-rl-delimits-packet", V311: "PP311-2.2.3-rl-delimits-packet"},
    strength=Strength.DEFINITION,
    binds=Binds.SENDER_AND_RECEIVER,
    kind=Kind.ACCEPT,
    quotes=(
        std(
            "2.2.3",
            "The Remaining Length is the number of bytes remaining within the current packet, "
            "including data in the variable header and the payload. The Remaining Length does "
            "not include the bytes used to encode the Remaining Length.",
        ),
    ),
)

PUBLISH_RL_COVERS = rule(
    "publish.rl-covers-variable-header",
    "A PUBLISH's Remaining Length holds its variable header (topic name and packet identifier)",
    ids={V31: "PP31-3.3-rl-covers-variable-header", V311: "PP311-3.3.1-rl-covers-variable-header"},
    strength=Strength.DEFINITION,
    binds=Binds.SENDER,
    kind=Kind.MALFORMED,
    quotes=(
        q("zh", "剩余长度字段 等于可变报头的长度加上有效负载的长度。"),
        q(
            "en",
            "The Remaining Length is the length of the Variable Header plus the length of the Payload.",
        ),
        q(
            "de",
            'Das Feld "Verbleibende Länge" im festen Header enthält die Länge des variablen '
            "Headers sowie die Länge der Nutzlast.",
        ),
        q(
            "ja",
            "固定ヘッダーの「残りの長さ」フィールドには、変数ヘッダーの長さとペイロードの長さの両方が含まれます。",
        ),
        q("es", "Es la longitud de la cabecera variable más la longitud de la carga útil."),
    ),
)

ACK_RL: dict[str, Rule] = {}
for _name, _section in _ACK_SECTIONS.items():
    ACK_RL[_name] = rule(
        f"{_name.lower()}.remaining-length",
        f"The Remaining Length of {_name} is 2",
        ids={
            V31: f"PP31-{_section}-remaining-length",
            V311: f"PP311-{_section}.1-remaining-length",
        },
        strength=Strength.DEFINITION,
        binds=Binds.SENDER_AND_RECEIVER,
        kind=Kind.MALFORMED,
        quotes=(
            std(
                f"{_section}.1",
                f"Remaining Length field: This is the length of the variable header. For the "
                f"{_name} Packet this has the value 2.",
            ),
            v31(_section, "byte 2: Remaining Length (2)"),
        ),
    )

# --- topic name ------------------------------------------------------------------------

TOPIC_UTF8 = rule(
    "topic.utf8",
    "The topic name is well-formed UTF-8, without surrogate code points",
    ids={V31: "PP31-3.3-topic-utf8", V311: "MQTT-1.5.3-1"},
    also=("MQTT-3.3.2-1",),
    strength=Strength.MUST,
    binds=Binds.SENDER_AND_RECEIVER,
    kind=Kind.MALFORMED,
    quotes=(
        q("zh", "它必须是第1.5.3节中定义的UTF-8编码的字符串[MQTT-3.3.2-1]。"),
        std(
            "1.5.3",
            "The character data in a UTF-8 encoded string MUST be well-formed UTF-8 as defined "
            "by the Unicode specification [Unicode] and restated in RFC 3629 [RFC3629]. In "
            "particular this data MUST NOT include encodings of code points between U+D800 and "
            "U+DFFF. If a Server or Client receives a Control Packet containing ill-formed UTF-8 "
            "it MUST close the Network Connection [MQTT-1.5.3-1].",
        ),
        q("en", "The Topic Name is a UTF-encoded string."),
        q("es", "Nombre del tema Una serie de caracteres codificada en UTF."),
    ),
)

TOPIC_NUL = rule(
    "topic.no-nul",
    "The topic name does not contain U+0000",
    ids={V31: "PP31-3.3-topic-nul", V311: "MQTT-1.5.3-2"},
    also=("MQTT-4.7.3-2",),
    strength=Strength.MUST_NOT,
    binds=Binds.SENDER_AND_RECEIVER,
    kind=Kind.MALFORMED,
    reading="topic-rules",
    quotes=(
        std(
            "1.5.3",
            "A UTF-8 encoded string MUST NOT include an encoding of the null character U+0000. "
            "If a receiver (Server or Client) receives a Control Packet containing U+0000 it "
            "MUST close the Network Connection [MQTT-1.5.3-2].",
        ),
        std(
            "4.7.3",
            "Topic Names and Topic Filters MUST NOT include the null character (Unicode U+0000) [MQTT-4.7.3-2]",
        ),
    ),
)

TOPIC_NOT_EMPTY = rule(
    "topic.not-empty",
    "The topic name is at least one character long",
    ids={V31: "PP31-3.3-topic-empty", V311: "MQTT-4.7.3-1"},
    strength=Strength.MUST,
    binds=Binds.SENDER,
    kind=Kind.VIOLATION,
    reading="topic-rules",
    quotes=(
        std(
            "4.7.3",
            "All Topic Names and Topic Filters MUST be at least one character long [MQTT-4.7.3-1]",
        ),
    ),
)

TOPIC_NO_WILDCARDS = rule(
    "topic.no-wildcards",
    "The topic name of a PUBLISH contains no wildcard (+ or #)",
    ids={V31: "PP31-3.3-topic-wildcards", V311: "MQTT-3.3.2-2"},
    also=("MQTT-4.7.1-1",),
    strength=Strength.MUST_NOT,
    binds=Binds.SENDER,
    kind=Kind.VIOLATION,
    reading="topic-rules",
    quotes=(
        q("zh", "PUBLISH报文中的主题名不能包含通配符[MQTT-3.3.2-2]。"),
        std(
            "3.3.2.1",
            "The Topic Name in the PUBLISH Packet MUST NOT contain wildcard characters [MQTT-3.3.2-2].",
        ),
    ),
)

TOPIC_DISCOURAGED = rule(
    "topic.discouraged-code-points",
    "The topic name avoids control characters and non-characters (reading discouraged-code-points)",
    ids={V311: "PP311-1.5.3-discouraged-code-points"},
    strength=Strength.SHOULD_NOT,
    binds=Binds.SENDER,
    kind=Kind.VIOLATION,
    reading="discouraged-code-points",
    quotes=(
        std(
            "1.5.3",
            "The data SHOULD NOT include encodings of the Unicode [Unicode] code points listed "
            "below. If a receiver (Server or Client) receives a Control Packet containing any of "
            "them it MAY close the Network Connection: U+0001..U+001F control characters, "
            "U+007F..U+009F control characters, Code points defined in the Unicode "
            "specification [Unicode] to be non-characters (for example U+0FFFF)",
        ),
    ),
)

TOPIC_MAX_31 = rule(
    "topic.max-32767-chars",
    "An MQTT 3.1 topic name has at most 32,767 characters (reading topic-length)",
    ids={V31: "PP31-2.2-topic-max-32767"},
    strength=Strength.DEFINITION,
    binds=Binds.SENDER,
    kind=Kind.VIOLATION,
    reading="topic-length",
    quotes=(v31("2.2", "Topic name has an upper length limit of 32,767 characters."),),
)

TOPIC_MAX_BYTES = rule(
    "topic.max-65535-bytes",
    "A topic name encodes to at most 65,535 bytes (it must fit its length prefix)",
    ids={V31: "PP31-2.2-string-length-prefix", V311: "MQTT-4.7.3-3"},
    strength=Strength.MUST_NOT,
    binds=Binds.SENDER,
    kind=Kind.SENDER_ONLY,
    quotes=(
        std(
            "4.7.3",
            "Topic Names and Topic Filters are UTF-8 encoded strings, they MUST NOT encode to more than 65535 bytes [MQTT-4.7.3-3].",
        ),
    ),
)

# --- packet identifier -----------------------------------------------------------------

PACKET_ID_NONZERO = rule(
    "packet-id.nonzero",
    "A QoS 1 or 2 PUBLISH carries a non-zero packet identifier",
    ids={V31: "PP31-3.3-message-id-nonzero", V311: "MQTT-2.3.1-1"},
    strength=Strength.MUST,
    binds=Binds.SENDER,
    kind=Kind.VIOLATION,
    quotes=(
        std(
            "2.3.1",
            "SUBSCRIBE, UNSUBSCRIBE, and PUBLISH (in cases where QoS > 0) Control Packets MUST "
            "contain a non-zero 16-bit Packet Identifier [MQTT-2.3.1-1].",
        ),
        q(
            "en",
            "Message ID 0 (i.e. 0x0000) is reserved as an invalid Message ID, and must not be used.",
        ),
        q(
            "de",
            "Die Nachrichten-ID 0 (d. h. 0x0000) ist als ungültige Nachrichten-ID reserviert und darf nicht verwendet werden.",
        ),
        q(
            "ja",
            "メッセージ ID 0 (つまり、0x0000) は、無効なメッセージ ID として予約済みなので、使用してはなりません。",
        ),
        q(
            "es",
            "El ID de mensaje 0 (es decir, 0x0000) está reservado como ID de mensaje no válido y no debe utilizarse.",
        ),
    ),
)

PACKET_ID_PRESENCE = rule(
    "packet-id.presence",
    "The packet identifier is present in a PUBLISH exactly when QoS is 1 or 2",
    ids={V31: "PP31-3.3-message-id-qos0-absent", V311: "MQTT-2.3.1-5"},
    strength=Strength.MUST_NOT,
    binds=Binds.SENDER,
    kind=Kind.SENDER_ONLY,
    quotes=(
        std(
            "2.3.1",
            "A PUBLISH Packet MUST NOT contain a Packet Identifier if its QoS value is set to 0 [MQTT-2.3.1-5].",
        ),
        q("zh", "报文标识符仅出现在QoS等级为1或2得PUBLISH报文中。"),
        q(
            "en",
            "For QoS 0, Message Identifier is not used, and must not appear in the Variable Header.",
        ),
        q(
            "de",
            "Eine Nachrichten-ID darf nicht im variablen Header von Nachrichten mit QoS-Stufe 0 verwendet werden.",
        ),
        q(
            "ja",
            "QoS レベル 0 のメッセージの変数ヘッダーではメッセージ ID を使用しないでください。",
        ),
        q(
            "es",
            "Un ID de mensaje no debe utilizarse en la cabecera variable para mensajes cuyo nivel de QoS sea 0.",
        ),
    ),
)

BIG_ENDIAN = rule(
    "integer.big-endian",
    "Two-byte integers (lengths, packet identifiers) are big-endian",
    ids={V31: "PP31-2.2-big-endian", V311: "PP311-1.5.2-big-endian"},
    strength=Strength.DEFINITION,
    binds=Binds.SENDER_AND_RECEIVER,
    kind=Kind.ACCEPT,
    quotes=(
        std(
            "1.5.2",
            "Integer data values are 16 bits in big-endian order: the high order byte precedes the lower order byte.",
        ),
        q(
            "en",
            "The ordering of the 2 bytes of the Message Identifier is MSB, then LSB (big-endian).",
        ),
        q(
            "de",
            "Die 2 Bytes der Nachrichten-ID werden in der Reihenfolge MSB, dann LSB (Big Endian) sortiert.",
        ),
        q(
            "ja",
            "メッセージ ID の 2 バイトの順序は、まず MSB、その後で LSB になります (ビッグ・エンディアン)。",
        ),
        q(
            "es",
            "El orden de los 2 bytes del identificador de mensaje es MSB y a continuación LSB (big-endian).",
        ),
    ),
)

# --- payload ---------------------------------------------------------------------------

PAYLOAD_REST = rule(
    "publish.payload-rest",
    "The payload is the rest of the packet and may be empty",
    ids={V31: "PP31-3.3-payload", V311: "PP311-3.3.3-payload"},
    strength=Strength.DEFINITION,
    binds=Binds.SENDER_AND_RECEIVER,
    kind=Kind.ACCEPT,
    quotes=(
        q(
            "zh",
            "有效负载的长度=固定报头中的剩余长度字段的值-可变报头的长度。包含零长度有效负载的PUBLISH报文是合法的。",
        ),
        q(
            "en",
            "The Payload portion of a PUBLISH message contains the data to be published. Its content and format is completely application specific.",
        ),
    ),
)
