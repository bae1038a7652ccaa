"""The wire-format rules of PUBLISH, PUBACK, PUBREC, PUBREL and PUBCOMP, as data.

Each rule quotes the clause it stands on. Quotes marked ``en``/``de``/``ja``/``es``/``zh``
come verbatim from the excerpts in ``shared/spec`` (3.1: en, de, ja, es; 3.1.1: zh);
quotes with source "MQTT 3.1.1 ..." are the OASIS standard's own English, for statements
outside the excerpts. The checks in :mod:`pubproof.model.wire` name these keys.
"""

from __future__ import annotations

from pubproof.model.editions import Edition
from pubproof.model.rules import Binds, Kind, Quote, Rule, Strength, rule

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50

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


def std50(section: str, text: str) -> Quote:
    """The OASIS MQTT 5.0 standard's English wording (OASIS Standard, 7 March 2019)."""
    return Quote(lang="en", source=f"MQTT 5.0 section {section}", text=text)


def v31(section: str, text: str) -> Quote:
    """The IBM MQTT V3.1 specification's wording, for clauses outside the excerpts."""
    return Quote(lang="en", source=f"MQTT V3.1 section {section}", text=text)


# --- packet type -----------------------------------------------------------------------

RESERVED_TYPE = rule(
    "type.reserved",
    "Packet types 0 and 15 are reserved",
    ids={
        V31: "PP31-2.1-reserved-type",
        V311: "PP311-2.2.1-reserved-type",
        V50: "PP50-2.1.2-reserved-type",
    },
    strength=Strength.MUST_NOT,
    binds=Binds.SENDER,
    kind=Kind.MALFORMED,
    quotes=(
        std50("2.1.2", "Reserved 0 Forbidden Reserved"),
        std("2.2.1", "Reserved 0 Forbidden Reserved ... Reserved 15 Forbidden Reserved"),
        v31("2.1", "Reserved | 0 | Reserved ... Reserved | 15 | Reserved"),
    ),
)

OUT_OF_SCOPE_TYPE = rule(
    "type.out-of-scope",
    "Packet types other than PUBLISH and its acknowledgements are outside pubproof's scope",
    ids={V31: "PP-scope-packet-type", V311: "PP-scope-packet-type", V50: "PP-scope-packet-type"},
    strength=Strength.DEFINITION,
    binds=Binds.RECEIVER,
    kind=Kind.MALFORMED,
    quotes=(q("en", "PUBLISH Publish a message"),),
)

# --- fixed header flags ----------------------------------------------------------------

QOS_RESERVED = rule(
    "publish.qos-reserved",
    "QoS value 3 (both QoS bits set) is reserved",
    ids={V31: "PP31-2.1-qos-reserved", V311: "MQTT-3.3.1-4", V50: "MQTT-3.3.1-4"},
    strength=Strength.MUST_NOT,
    binds=Binds.SENDER_AND_RECEIVER,
    kind=Kind.MALFORMED,
    reading="qos3",
    quotes=(
        std50(
            "3.3.1.2",
            "A PUBLISH Packet MUST NOT have both QoS bits set to 1 [MQTT-3.3.1-4]. If a Server or Client receives a PUBLISH packet which has both QoS bits set to 1 it is a Malformed Packet.",
        ),
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
    ids={V31: "PP31-3.3-dup-qos0", V311: "MQTT-3.3.1-2", V50: "MQTT-3.3.1-2"},
    also=("MQTT-4.3.1-1",),
    strength=Strength.MUST,
    binds=Binds.SENDER,
    kind=Kind.VIOLATION,
    reading="dup-qos0",
    quotes=(
        std50("3.3.1.1", "The DUP flag MUST be set to 0 for all QoS 0 messages [MQTT-3.3.1-2]."),
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
    ids={V31: "PP31-2.1-ack-flags", V311: "MQTT-2.2.2-1", V50: "MQTT-2.1.3-1"},
    also=("MQTT-2.2.2-2",),
    strength=Strength.MUST,
    binds=Binds.SENDER_AND_RECEIVER,
    kind=Kind.MALFORMED,
    reading="ack-flags",
    quotes=(
        std50(
            "2.1.3",
            "Where a flag bit is marked as \u201cReserved\u201d, it is reserved for future use and MUST be set to the value listed [MQTT-2.1.3-1]. If invalid flags are received it is a Malformed Packet.",
        ),
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
    ids={V31: "PP31-3.6-flags", V311: "MQTT-3.6.1-1", V50: "MQTT-3.6.1-1"},
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
    ids={
        V31: "PP31-2.1-rl-max-four-bytes",
        V311: "PP311-2.2.3-rl-max-four-bytes",
        V50: "PP50-1.5.5-four-bytes",
    },
    strength=Strength.DEFINITION,
    binds=Binds.SENDER_AND_RECEIVER,
    kind=Kind.MALFORMED,
    quotes=(
        std50("1.5.5", "The maximum number of bytes in the Variable Byte Integer field is four."),
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
    ids={V31: "PP31-2.1-rl-minimal", V311: "PP311-2.2.3-rl-minimal", V50: "MQTT-1.5.5-1"},
    strength=Strength.DEFINITION,
    binds=Binds.SENDER,
    kind=Kind.MALFORMED,
    reading="rl-encoding",
    quotes=(
        std50(
            "1.5.5",
            "The encoded value MUST use the minimum number of bytes necessary to represent the value [MQTT-1.5.5-1].",
        ),
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
    ids={
        V31: "PP31-2.1-rl-delimits-packet",
        V311: "PP311-2.2.3-rl-delimits-packet",
        V50: "PP50-2.1.4-rl-delimits-packet",
    },
    strength=Strength.DEFINITION,
    binds=Binds.SENDER_AND_RECEIVER,
    kind=Kind.ACCEPT,
    quotes=(
        std50(
            "2.1.4",
            "The Remaining Length is a Variable Byte Integer that represents the number of bytes remaining within the current Control Packet, including data in the Variable Header and the Payload. The Remaining Length does not include the bytes used to encode the Remaining Length.",
        ),
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
    ids={
        V31: "PP31-3.3-rl-covers-variable-header",
        V311: "PP311-3.3.1-rl-covers-variable-header",
        V50: "PP50-3.3.2-rl-covers-variable-header",
    },
    strength=Strength.DEFINITION,
    binds=Binds.SENDER,
    kind=Kind.MALFORMED,
    quotes=(
        std50(
            "3.3.1.4",
            "This is the length of Variable Header plus the length of the Payload, encoded as a Variable Byte Integer.",
        ),
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
        f"The Remaining Length of {_name} is 2 (in 5.0: 2, or the length of its fields)",
        ids={
            V31: f"PP31-{_section}-remaining-length",
            V311: f"PP311-{_section}.1-remaining-length",
            V50: f"PP50-{_section}.1-remaining-length",
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
            std50(
                f"{_section}.2.1",
                f"If the Remaining Length is 2, then there is no Reason Code and the value of "
                f"0x00 (Success) is used. ... The {_name} packet has no Payload.",
            ),
        ),
    )

# --- topic name ------------------------------------------------------------------------

TOPIC_UTF8 = rule(
    "topic.utf8",
    "The topic name is well-formed UTF-8, without surrogate code points",
    ids={V31: "PP31-3.3-topic-utf8", V311: "MQTT-1.5.3-1", V50: "MQTT-3.3.2-1"},
    also=("MQTT-3.3.2-1",),
    strength=Strength.MUST,
    binds=Binds.SENDER_AND_RECEIVER,
    kind=Kind.MALFORMED,
    quotes=(
        std50(
            "3.3.2.1",
            "The Topic Name MUST be present as the first field in the PUBLISH packet Variable Header. It MUST be a UTF-8 Encoded String as defined in section 1.5.4 [MQTT-3.3.2-1].",
        ),
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
    ids={V31: "PP31-3.3-topic-nul", V311: "MQTT-1.5.3-2", V50: "MQTT-4.7.3-2"},
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
    ids={V31: "PP31-3.3-topic-wildcards", V311: "MQTT-3.3.2-2", V50: "MQTT-3.3.2-2"},
    also=("MQTT-4.7.1-1",),
    strength=Strength.MUST_NOT,
    binds=Binds.SENDER,
    kind=Kind.VIOLATION,
    reading="topic-rules",
    quotes=(
        std50(
            "3.3.2.1",
            "The Topic Name in the PUBLISH packet MUST NOT contain wildcard characters [MQTT-3.3.2-2].",
        ),
        q("zh", "PUBLISH报文中的主题名不能包含通配符[MQTT-3.3.2-2]。"),
        std(
            "3.3.2.1",
            "The Topic Name in the PUBLISH Packet MUST NOT contain wildcard characters [MQTT-3.3.2-2].",
        ),
    ),
)

TOPIC_DISCOURAGED = rule(
    "topic.discouraged-code-points",
    "The topic name (in 5.0: every string) avoids control characters and non-characters "
    "(reading discouraged-code-points)",
    ids={V311: "PP311-1.5.3-discouraged-code-points", V50: "PP50-1.5.4-disallowed"},
    strength=Strength.SHOULD_NOT,
    binds=Binds.SENDER,
    kind=Kind.VIOLATION,
    kinds={V50: Kind.MALFORMED},
    reading="discouraged-code-points",
    quotes=(
        std50(
            "1.5.4",
            "The data SHOULD NOT include encodings of the Unicode [Unicode] code points listed below. If a receiver (Server or Client) receives an MQTT Control Packet containing any of them it MAY treat it as a Malformed Packet. These are the Disallowed Unicode code points.",
        ),
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
    ids={V31: "PP31-2.2-string-length-prefix", V311: "MQTT-4.7.3-3", V50: "MQTT-4.7.3-3"},
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
    ids={V31: "PP31-3.3-message-id-nonzero", V311: "MQTT-2.3.1-1", V50: "MQTT-2.2.1-3"},
    strength=Strength.MUST,
    binds=Binds.SENDER,
    kind=Kind.VIOLATION,
    quotes=(
        std50(
            "2.2.1",
            "Each time a Client sends a new SUBSCRIBE, UNSUBSCRIBE,or PUBLISH (where QoS > 0) MQTT Control Packet it MUST assign it a non-zero Packet Identifier that is currently unused [MQTT-2.2.1-3]. Each time a Server sends a new PUBLISH (with QoS > 0) MQTT Control Packet it MUST assign it a non zero Packet Identifier that is currently unused [MQTT-2.2.1-4].",
        ),
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
    ids={V31: "PP31-3.3-message-id-qos0-absent", V311: "MQTT-2.3.1-5", V50: "MQTT-2.2.1-2"},
    strength=Strength.MUST_NOT,
    binds=Binds.SENDER,
    kind=Kind.SENDER_ONLY,
    quotes=(
        std50(
            "2.2.1",
            "A PUBLISH packet MUST NOT contain a Packet Identifier if its QoS value is set to 0 [MQTT-2.2.1-2].",
        ),
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
    ids={V31: "PP31-2.2-big-endian", V311: "PP311-1.5.2-big-endian", V50: "PP50-1.5.2-big-endian"},
    strength=Strength.DEFINITION,
    binds=Binds.SENDER_AND_RECEIVER,
    kind=Kind.ACCEPT,
    quotes=(
        std50(
            "1.5.2",
            "Two Byte Integer data values are 16-bit unsigned integers in big-endian order: the high order byte precedes the lower order byte.",
        ),
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
    ids={V31: "PP31-3.3-payload", V311: "PP311-3.3.3-payload", V50: "PP50-3.3.3-payload"},
    strength=Strength.DEFINITION,
    binds=Binds.SENDER_AND_RECEIVER,
    kind=Kind.ACCEPT,
    quotes=(
        std50(
            "3.3.3",
            "The length of the Payload can be calculated by subtracting the length of the Variable Header from the Remaining Length field that is in the Fixed Header. It is valid for a PUBLISH packet to contain a zero length Payload.",
        ),
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


# --- MQTT 5.0 only ---------------------------------------------------------------------
# The rules below exist in 5.0 alone: the property section, the acknowledgements' Reason
# Codes and the receiver's limits. Where the standard labels no statement, the id is a
# project id, ``PP50-<section>-<slug>``, and ``also`` lists the labelled statements that
# bind the sender to the same thing. docs/guides/mqtt5-wire.md gives the judgement order.

PACKET_TOO_LARGE = rule(
    "packet.too-large",
    "A packet is no larger than the receiver's Maximum Packet Size",
    ids={V50: "PP50-3.1.2-packet-too-large"},
    also=(
        "MQTT-3.1.2-24",
        "MQTT-3.2.2-15",
        "MQTT-3.4.2-2",
        "MQTT-3.4.2-3",
        "MQTT-3.5.2-2",
        "MQTT-3.5.2-3",
        "MQTT-3.6.2-2",
        "MQTT-3.6.2-3",
        "MQTT-3.7.2-2",
        "MQTT-3.7.2-3",
    ),
    strength=Strength.MUST_NOT,
    binds=Binds.SENDER,
    kind=Kind.VIOLATION,
    reason_code=0x95,
    quotes=(
        std50(
            "3.1.2.11.4",
            "The Server MUST NOT send packets exceeding Maximum Packet Size to the Client [MQTT-3.1.2-24]. If a Client receives a packet whose size exceeds this limit, this is a Protocol Error, the Client uses DISCONNECT with Reason Code 0x95 (Packet too large), as described in section 4.13.",
        ),
        std50(
            "2.1.4",
            "The packet size is the total number of bytes in an MQTT Control Packet, this is equal to the length of the Fixed Header plus the Remaining Length.",
        ),
    ),
)

PROPERTIES_PRESENT = rule(
    "props.present",
    "A 5.0 PUBLISH carries a Property Length, zero when there are no properties",
    ids={V50: "MQTT-2.2.2-1"},
    strength=Strength.MUST,
    binds=Binds.SENDER,
    kind=Kind.MALFORMED,
    quotes=(
        std50(
            "2.2.2.1",
            "The Property Length is encoded as a Variable Byte Integer. The Property Length does not include the bytes used to encode itself, but includes the length of the Properties. If there are no properties, this MUST be indicated by including a Property Length of zero [MQTT-2.2.2-1].",
        ),
    ),
)

PROPERTY_LENGTH = rule(
    "props.length",
    "The Property Length fits in what the Remaining Length leaves",
    ids={V50: "PP50-2.2.2-property-length"},
    strength=Strength.DEFINITION,
    binds=Binds.SENDER,
    kind=Kind.MALFORMED,
    quotes=(
        std50(
            "2.2.2.1",
            "The Property Length does not include the bytes used to encode itself, but includes the length of the Properties.",
        ),
    ),
)

PROPERTY_IDENTIFIER = rule(
    "props.identifier",
    "Every property identifier is valid for its packet type",
    ids={V50: "PP50-2.2.2-property-identifier"},
    strength=Strength.DEFINITION,
    binds=Binds.SENDER,
    kind=Kind.MALFORMED,
    quotes=(
        std50(
            "2.2.2.2",
            "A Property consists of an Identifier which defines its usage and data type, followed by a value. The Identifier is encoded as a Variable Byte Integer. A Control Packet which contains an Identifier which is not valid for its packet type, or contains a value not of the specified data type, is a Malformed Packet. If received, use a CONNACK or DISCONNECT packet with Reason Code 0x81 (Malformed Packet) as described in section 4.13 Handling errors.",
        ),
    ),
)

PROPERTY_VALUE = rule(
    "props.value",
    "Every property value lies within the property section",
    ids={V50: "PP50-2.2.2-property-value"},
    strength=Strength.DEFINITION,
    binds=Binds.SENDER,
    kind=Kind.MALFORMED,
    quotes=(
        std50(
            "2.2.2.2",
            "A Control Packet which contains an Identifier which is not valid for its packet type, or contains a value not of the specified data type, is a Malformed Packet.",
        ),
    ),
)

PROPERTY_ONCE = rule(
    "props.once",
    "A property other than User Property and Subscription Identifier appears at most once "
    "(Payload Format Indicator and Message Expiry Interval: reading pfi-mei-once)",
    ids={V50: "PP50-2.2.2-property-once"},
    strength=Strength.DEFINITION,
    binds=Binds.SENDER,
    kind=Kind.VIOLATION,
    quotes=(
        std50(
            "3.3.2.3.4", "It is a Protocol Error to include the Topic Alias value more than once."
        ),
        std50("3.3.2.3.5", "It is a Protocol Error to include the Response Topic more than once."),
        std50("3.3.2.3.6", "It is a Protocol Error to include Correlation Data more than once."),
        std50("3.3.2.3.9", "It is a Protocol Error to include the Content Type more than once."),
        std50("3.4.2.2.2", "It is a Protocol Error to include the Reason String more than once."),
    ),
)

PAYLOAD_FORMAT_VALUE = rule(
    "publish.payload-format-value",
    "The Payload Format Indicator is 0 or 1",
    ids={V50: "PP50-3.3.2-payload-format-value"},
    strength=Strength.DEFINITION,
    binds=Binds.SENDER,
    kind=Kind.VIOLATION,
    quotes=(
        std50(
            "3.3.2.3.2",
            "Followed by the value of the Payload Format Indicator, either of: 0 (0x00) Byte Indicates that the Payload is unspecified bytes, which is equivalent to not sending a Payload Format Indicator. 1 (0x01) Byte Indicates that the Payload is UTF-8 Encoded Character Data.",
        ),
    ),
)

PAYLOAD_UTF8 = rule(
    "publish.payload-utf8",
    "A payload marked as UTF-8 (Payload Format Indicator 1) is well-formed UTF-8 "
    "(reading payload-utf8)",
    ids={V50: "PP50-3.3.2-payload-utf8"},
    strength=Strength.MUST,
    binds=Binds.SENDER,
    kind=Kind.VIOLATION,
    reason_code=0x99,
    reading="payload-utf8",
    quotes=(
        std50(
            "3.3.2.3.2",
            "The UTF-8 data in the Payload MUST be well-formed UTF-8 as defined by the Unicode specification [Unicode] and restated in RFC 3629 [RFC3629]. ... The receiver MAY validate that the Payload is of the format indicated, and if it is not send a PUBACK, PUBREC, or DISCONNECT with Reason Code of 0x99 (Payload format invalid) as described in section 4.13.",
        ),
    ),
)

TOPIC_ALIAS_ZERO = rule(
    "publish.topic-alias-zero",
    "A Topic Alias is never 0",
    ids={V50: "MQTT-3.3.2-8"},
    strength=Strength.MUST_NOT,
    binds=Binds.SENDER,
    kind=Kind.VIOLATION,
    reason_code=0x94,
    quotes=(
        std50(
            "3.3.2.3.4",
            "A Topic Alias of 0 is not permitted. A sender MUST NOT send a PUBLISH packet containing a Topic Alias which has the value 0 [MQTT-3.3.2-8].",
        ),
        std50(
            "3.3.4",
            "A Topic Alias value of 0 or greater than the Maximum Topic Alias is a Protocol Error, the receiver uses DISCONNECT with Reason Code of 0x94 (Topic Alias invalid) as described in section 4.13.",
        ),
    ),
)

TOPIC_ALIAS_MAXIMUM = rule(
    "publish.topic-alias-maximum",
    "A Topic Alias is at most the receiver's Topic Alias Maximum (0 when it sent none)",
    ids={V50: "PP50-3.3.4-topic-alias-maximum"},
    also=(
        "MQTT-3.3.2-9",
        "MQTT-3.3.2-11",
        "MQTT-3.1.2-26",
        "MQTT-3.1.2-27",
        "MQTT-3.2.2-17",
        "MQTT-3.2.2-18",
    ),
    strength=Strength.MUST_NOT,
    binds=Binds.SENDER,
    kind=Kind.VIOLATION,
    reason_code=0x94,
    quotes=(
        std50(
            "3.3.4",
            "A Topic Alias value of 0 or greater than the Maximum Topic Alias is a Protocol Error, the receiver uses DISCONNECT with Reason Code of 0x94 (Topic Alias invalid) as described in section 4.13.",
        ),
        std50(
            "3.3.2.3.4",
            "A Client MUST NOT send a PUBLISH packet with a Topic Alias greater than the Topic Alias Maximum value returned by the Server in the CONNACK packet [MQTT-3.3.2-9]. ... A Server MUST NOT send a PUBLISH packet with a Topic Alias greater than the Topic Alias Maximum value sent by the Client in the CONNECT packet [MQTT-3.3.2-11].",
        ),
        std50(
            "3.1.2.11.5",
            "If the Topic Alias Maximum property is absent, the default value is 0. ... If Topic Alias Maximum is absent or zero, the Server MUST NOT send any Topic Aliases to the Client [MQTT-3.1.2-27].",
        ),
    ),
)

TOPIC_OR_ALIAS = rule(
    "publish.topic-or-alias",
    "A PUBLISH with an empty topic name carries a Topic Alias",
    ids={V50: "PP50-3.3.2-topic-or-alias"},
    also=("MQTT-4.7.3-1",),
    strength=Strength.DEFINITION,
    binds=Binds.SENDER,
    kind=Kind.VIOLATION,
    quotes=(
        std50(
            "3.3.2.1",
            "To reduce the size of the PUBLISH packet the sender can use a Topic Alias. The Topic Alias is described in section 3.3.2.3.4. It is a Protocol Error if the Topic Name is zero length and there is no Topic Alias.",
        ),
    ),
)

SUBSCRIPTION_ID_ZERO = rule(
    "publish.subscription-identifier-zero",
    "A Subscription Identifier is from 1 to 268,435,455",
    ids={V50: "PP50-3.3.2-subscription-identifier-zero"},
    strength=Strength.DEFINITION,
    binds=Binds.SENDER,
    kind=Kind.VIOLATION,
    quotes=(
        std50(
            "3.3.2.3.8",
            "Followed by a Variable Byte Integer representing the identifier of the subscription. The Subscription Identifier can have the value of 1 to 268,435,455. It is a Protocol Error if the Subscription Identifier has a value of 0.",
        ),
    ),
)

STRING_UTF8 = rule(
    "string.utf8",
    "A UTF-8 Encoded String (the Reason String) is well-formed UTF-8",
    ids={V50: "MQTT-1.5.4-1"},
    strength=Strength.MUST,
    binds=Binds.SENDER,
    kind=Kind.MALFORMED,
    quotes=(
        std50(
            "1.5.4",
            "The character data in a UTF-8 Encoded String MUST be well-formed UTF-8 as defined by the Unicode specification [Unicode] and restated in RFC 3629 [RFC3629]. In particular, the character data MUST NOT include encodings of code points between U+D800 and U+DFFF [MQTT-1.5.4-1]. If the Client or Server receives an MQTT Control Packet containing ill-formed UTF-8 it is a Malformed Packet.",
        ),
    ),
)

STRING_NUL = rule(
    "string.no-nul",
    "A UTF-8 Encoded String (the Reason String) does not contain U+0000",
    ids={V50: "MQTT-1.5.4-2"},
    strength=Strength.MUST_NOT,
    binds=Binds.SENDER,
    kind=Kind.MALFORMED,
    quotes=(
        std50(
            "1.5.4",
            "A UTF-8 Encoded String MUST NOT include an encoding of the null character U+0000. [MQTT-1.5.4-2]. If a receiver (Server or Client) receives an MQTT Control Packet containing U+0000 it is a Malformed Packet.",
        ),
    ),
)

STRING_PAIR = rule(
    "string.pair",
    "Both halves of a User Property are UTF-8 Encoded Strings (well-formed, no U+0000)",
    ids={V50: "MQTT-1.5.7-1"},
    strength=Strength.MUST,
    binds=Binds.SENDER,
    kind=Kind.MALFORMED,
    quotes=(
        std50(
            "1.5.7",
            "Both strings MUST comply with the requirements for UTF-8 Encoded Strings [MQTT-1.5.7-1]. If a receiver (Client or Server) receives a string pair which does not meet these requirements it is a Malformed Packet.",
        ),
    ),
)

RESPONSE_TOPIC_STRING = rule(
    "publish.response-topic-string",
    "The Response Topic is a UTF-8 Encoded String (well-formed, no U+0000)",
    ids={V50: "MQTT-3.3.2-13"},
    strength=Strength.MUST,
    binds=Binds.SENDER,
    kind=Kind.MALFORMED,
    quotes=(
        std50(
            "3.3.2.3.5",
            "Followed by a UTF-8 Encoded String which is used as the Topic Name for a response message. The Response Topic MUST be a UTF-8 Encoded String as defined in section 1.5.4 [MQTT-3.3.2-13].",
        ),
    ),
)

RESPONSE_TOPIC_WILDCARDS = rule(
    "publish.response-topic-wildcards",
    "The Response Topic contains no wildcard (+ or #)",
    ids={V50: "MQTT-3.3.2-14"},
    strength=Strength.MUST_NOT,
    binds=Binds.SENDER,
    kind=Kind.VIOLATION,
    quotes=(
        std50(
            "3.3.2.3.5", "The Response Topic MUST NOT contain wildcard characters [MQTT-3.3.2-14]."
        ),
    ),
)

CONTENT_TYPE_STRING = rule(
    "publish.content-type-string",
    "The Content Type is a UTF-8 Encoded String (well-formed, no U+0000)",
    ids={V50: "MQTT-3.3.2-19"},
    strength=Strength.MUST,
    binds=Binds.SENDER,
    kind=Kind.MALFORMED,
    quotes=(
        std50(
            "3.3.2.3.9",
            "Followed by a UTF-8 Encoded String describing the content of the Application Message. The Content Type MUST be a UTF-8 Encoded String as defined in section 1.5.4 [MQTT-3.3.2-19].",
        ),
    ),
)

#: The Reason Codes each acknowledgement may carry (MQTT 5.0 Tables 3-4 to 3-7), with
#: their names.
ACK_REASON_CODES: dict[str, dict[int, str]] = {
    "PUBACK": {
        0x00: "Success",
        0x10: "No matching subscribers",
        0x80: "Unspecified error",
        0x83: "Implementation specific error",
        0x87: "Not authorized",
        0x90: "Topic Name invalid",
        0x91: "Packet identifier in use",
        0x97: "Quota exceeded",
        0x99: "Payload format invalid",
    },
    "PUBREL": {0x00: "Success", 0x92: "Packet Identifier not found"},
}
ACK_REASON_CODES["PUBREC"] = dict(ACK_REASON_CODES["PUBACK"])
ACK_REASON_CODES["PUBCOMP"] = dict(ACK_REASON_CODES["PUBREL"])

ACK_REASON_CODE: dict[str, Rule] = {}
for _name, _section in _ACK_SECTIONS.items():
    _codes = ", ".join(f"0x{code:02X}" for code in ACK_REASON_CODES[_name])
    ACK_REASON_CODE[_name] = rule(
        f"{_name.lower()}.reason-code",
        f"A {_name} carries one of its Reason Codes ({_codes})",
        ids={V50: f"MQTT-{_section}.2-1"},
        strength=Strength.MUST,
        binds=Binds.SENDER,
        kind=Kind.VIOLATION,
        quotes=(
            std50(
                f"{_section}.2.1",
                f"The Client or Server sending the {_name} packet MUST use one of the {_name} "
                f"Reason Code{'s' if _name == 'PUBACK' else ' values'} [MQTT-{_section}.2-1].",
            ),
        ),
    )
