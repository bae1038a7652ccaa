"""The rules a broker enforces on the packets around PUBLISH, and the words of any rule.

Rules / theory of operation
---------------------------
pubproof's registry (:mod:`pubproof.model.rules`) holds the rules of PUBLISH, its
acknowledgements, its flows and its distribution. A broker also has to answer CONNECT,
SUBSCRIBE, UNSUBSCRIBE, PINGREQ and DISCONNECT, and refuse what breaks their rules; those
rules are outside the registry's scope, so serve keeps the few it enforces here, as data:
an id per edition (the standard's label where the texts label the statement, a project id
``PP-serve-...`` where they do not or where the 5.0 numbering is not certain), a
paraphrase in pubproof's words (not a quotation), the MQTT 5.0 Reason Code the broker
answers with, and the 3.x CONNACK return code where the refusal is a CONNACK.

:func:`words` gives the words of any rule a finding cites: the registry's English quote
(its first sentence or two), else this table's paraphrase, else the registry's title.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from pubproof.model import distribution_rules, distribution_rules50, flow_rules, flow_rules50
from pubproof.model.editions import Edition
from pubproof.model.rules import RULES

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50
# the registry's flow and distribution rules are registered when their modules load
_REGISTERED = (flow_rules, flow_rules50, distribution_rules, distribution_rules50)
MALFORMED, PROTOCOL_ERROR = 0x81, 0x82


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeRule:
    """A rule of a control packet the broker enforces."""

    key: str
    ids: dict[Edition, str]
    words: str  # a paraphrase, in pubproof's words
    reason_code: int = PROTOCOL_ERROR  # 5.0: the DISCONNECT (or CONNACK) Reason Code
    connack: int | None = None  # 3.x: the CONNACK return code, where the answer is a CONNACK

    def id_for(self, edition: Edition | None) -> str:
        """The rule's id in ``edition`` (None: before the CONNECT named one, 3.1.1's)."""
        return self.ids.get(edition or V311) or self.ids[V311]


def _same(rule_id: str) -> dict[Edition, str]:
    return {V31: rule_id, V311: rule_id, V50: rule_id}


FIRST_PACKET = ServeRule(
    key="connect-first",
    ids=_same("MQTT-3.1.0-1"),
    words="The first packet a client sends on a new connection is CONNECT.",
)
SECOND_CONNECT = ServeRule(
    key="connect-once",
    ids=_same("MQTT-3.1.0-2"),
    words="A second CONNECT on the same connection is a protocol violation: the server "
    "closes the connection.",
)
PROTOCOL_NAME = ServeRule(
    key="protocol-name",
    ids=_same("MQTT-3.1.2-1"),
    words="A CONNECT names the protocol MQTT (3.1: MQIsdp); with another name the server "
    "may close the connection without CONNACK.",
)
PROTOCOL_LEVEL = ServeRule(
    key="protocol-level",
    ids=_same("MQTT-3.1.2-2"),
    words="A protocol level the server does not support is answered with CONNACK "
    "'unacceptable protocol version' (5.0: 0x84) and the connection is closed.",
    reason_code=0x84,
    connack=0x01,
)
RESERVED_FLAG = ServeRule(
    key="connect-reserved-flag",
    ids=_same("MQTT-3.1.2-3"),
    words="The reserved bit of the CONNECT flags is 0; otherwise the server closes the "
    "connection (5.0: a Malformed Packet).",
    reason_code=MALFORMED,
)
WILL_FLAGS = ServeRule(
    key="connect-will-flags",
    ids=_same("PP-serve-3.1.2-will-flags"),
    words="Without the Will Flag, Will QoS and Will Retain are 0; with it, Will QoS is 0, "
    "1 or 2 (a CONNECT that breaks this is malformed).",
    reason_code=MALFORMED,
)
PASSWORD_FLAG = ServeRule(
    key="connect-password-flag",
    ids={V31: "PP-serve-3.1.2-password", V311: "MQTT-3.1.2-22", V50: "PP-serve-3.1.2-password"},
    words="3.1 and 3.1.1: a Password Flag of 1 needs a User Name Flag of 1.",
    reason_code=MALFORMED,
)
CLIENT_ID = ServeRule(
    key="client-identifier",
    ids=_same("MQTT-3.1.3-8"),
    words="A zero-length Client Identifier with CleanSession 0 is refused with CONNACK "
    "'identifier rejected' (0x02) and the connection closed (5.0: the server assigns one).",
    reason_code=0x85,
    connack=0x02,
)
CLIENT_ID_31 = ServeRule(
    key="client-identifier-31",
    ids=_same("PP-serve-3.1-client-id"),
    words="MQTT 3.1: a Client Identifier has 1 to 23 characters; another is refused with "
    "CONNACK 'identifier rejected' (0x02).",
    connack=0x02,
)
CONNECT_MALFORMED = ServeRule(
    key="connect-malformed",
    ids=_same("PP-serve-connect-malformed"),
    words="A CONNECT that cannot be read (a field runs past the end, a property the packet "
    "may not carry) is a Malformed Packet: the server closes the connection.",
    reason_code=MALFORMED,
)
AUTHENTICATION = ServeRule(
    key="authentication-method",
    ids=_same("PP-serve-3.1.2-authentication"),
    words="A CONNECT asking for an Authentication Method the server does not support is "
    "answered CONNACK 0x8C (Bad authentication method).",
    reason_code=0x8C,
)
CONTROL_MALFORMED = ServeRule(
    key="control-malformed",
    ids=_same("PP-serve-control-malformed"),
    words="A control packet that cannot be read (a field runs past its end, bytes after the "
    "last field, a property it may not carry) is malformed: the server closes the "
    "connection.",
    reason_code=MALFORMED,
)
FLAGS = ServeRule(
    key="fixed-header-flags",
    ids={V31: "PP-serve-2.2.2-flags", V311: "MQTT-2.2.2-2", V50: "MQTT-2.2.2-2"},
    words="The fixed-header flags of a control packet are those Table 2.2 gives (SUBSCRIBE, "
    "UNSUBSCRIBE: 0010; the others 0000); the receiver of other flags closes the "
    "connection.",
    reason_code=MALFORMED,
)
SUBSCRIBE_FLAGS = ServeRule(
    key="subscribe-flags",
    ids=_same("MQTT-3.8.1-1"),
    words="The SUBSCRIBE fixed-header flags are 0,0,1,0; any other value is malformed and "
    "the server closes the connection.",
    reason_code=MALFORMED,
)
UNSUBSCRIBE_FLAGS = ServeRule(
    key="unsubscribe-flags",
    ids=_same("MQTT-3.10.1-1"),
    words="The UNSUBSCRIBE fixed-header flags are 0,0,1,0; any other value is malformed and "
    "the server closes the connection.",
    reason_code=MALFORMED,
)
SERVER_PACKET = ServeRule(
    key="server-packet",
    ids=_same("PP-serve-client-sends-server-packet"),
    words="CONNACK, SUBACK, UNSUBACK and PINGRESP go from server to client only: a server "
    "that receives one closes the connection (a protocol violation).",
)
RESERVED_TYPE = ServeRule(
    key="reserved-type",
    ids=_same("PP-serve-2.1.2-reserved-type"),
    words="Packet types 0 and (before 5.0) 15 are reserved: the receiver closes the "
    "connection.",
    reason_code=MALFORMED,
)
AUTH_PACKET = ServeRule(
    key="auth-without-method",
    ids={V31: "PP-serve-auth", V311: "PP-serve-auth", V50: "MQTT-4.12.0-1"},
    words="5.0: a client that named no Authentication Method in CONNECT sends no AUTH "
    "packet (a Protocol Error).",
)
DISCONNECT_EXPIRY = ServeRule(
    key="disconnect-session-expiry",
    ids=_same("PP-serve-3.14.2-session-expiry"),
    words="5.0: a Session Expiry Interval of 0 in CONNECT cannot be raised by DISCONNECT "
    "(a Protocol Error).",
)
FRAMING = ServeRule(
    key="remaining-length",
    ids=_same("PP-serve-2.2.3-remaining-length"),
    words="A Remaining Length has at most four bytes: a stream with a longer one cannot be "
    "cut into packets (a Malformed Packet).",
    reason_code=MALFORMED,
)
TOO_LARGE = ServeRule(
    key="packet-too-large",
    ids={V31: "PP-serve-packet-size", V311: "PP-serve-packet-size", V50: "MQTT-3.2.2-15"},
    words="5.0: a client sends no packet larger than the server's Maximum Packet Size "
    "(the server answers DISCONNECT 0x95).",
    reason_code=0x95,
)
WILL_QOS = ServeRule(
    key="will-qos",
    ids={V31: "PP-serve-will-qos", V311: "PP-serve-will-qos", V50: "MQTT-3.2.2-12"},
    words="5.0: a CONNECT whose Will QoS is above the server's Maximum QoS is refused "
    "(CONNACK 0x9B, QoS not supported).",
    reason_code=0x9B,
)
WILL_RETAIN = ServeRule(
    key="will-retain",
    ids={V31: "PP-serve-will-retain", V311: "PP-serve-will-retain", V50: "MQTT-3.2.2-13"},
    words="5.0: a CONNECT whose will has Will Retain 1 is refused by a server without "
    "retained messages (CONNACK 0x9A, Retain not supported).",
    reason_code=0x9A,
)
PACKET_ID = ServeRule(
    key="packet-identifier",
    ids=_same("MQTT-2.3.1-1"),
    words="SUBSCRIBE and UNSUBSCRIBE carry a non-zero packet identifier.",
    reason_code=MALFORMED,
)
KEEP_ALIVE = ServeRule(
    key="keep-alive",
    ids={V31: "PP-serve-3.1-keep-alive", V311: "MQTT-3.1.2-24", V50: "MQTT-3.1.2-22"},
    words="With a Keep Alive above 0, a server that receives nothing from the client for one "
    "and a half times that period closes the connection.",
    reason_code=0x8D,
)

SERVE_RULES = (
    FIRST_PACKET, SECOND_CONNECT, PROTOCOL_NAME, PROTOCOL_LEVEL, RESERVED_FLAG, WILL_FLAGS,
    PASSWORD_FLAG, CLIENT_ID, CLIENT_ID_31, CONNECT_MALFORMED, AUTHENTICATION,
    CONTROL_MALFORMED, FLAGS, SUBSCRIBE_FLAGS, UNSUBSCRIBE_FLAGS, SERVER_PACKET,
    RESERVED_TYPE, AUTH_PACKET, DISCONNECT_EXPIRY, FRAMING, TOO_LARGE, WILL_QOS, WILL_RETAIN,
    PACKET_ID, KEEP_ALIVE,
)  # fmt: skip
_BY_ID = {(e, rule_id): r for r in SERVE_RULES for e, rule_id in r.ids.items()}
#: how much of a quotation a finding line shows
WORDS_LIMIT = 240


@lru_cache(maxsize=1024)
def words(rule_id: str, edition: Edition | None = None) -> str:
    """The words of a rule a finding cites: the registry's English quote (shortened), this
    table's paraphrase, or the registry's title; "" for an id neither holds."""
    try:
        found = RULES.by_id(rule_id, edition) if edition is not None else RULES.by_id(rule_id)
    except KeyError:
        try:
            found = RULES.by_id(rule_id)
        except KeyError:
            found = None
    if found is not None:
        english = [q.text for q in found.quotes if q.lang == "en"]
        return _shortened(english[0]) if english else found.title
    own = _BY_ID.get((edition or V311, rule_id)) or next(
        (r for (_, i), r in _BY_ID.items() if i == rule_id), None
    )
    return own.words if own is not None else ""


def _shortened(text: str) -> str:
    flat = " ".join(text.split())
    if len(flat) <= WORDS_LIMIT:
        return flat
    cut = flat[:WORDS_LIMIT]
    end = cut.rfind(". ")
    return cut[: end + 1] if end > WORDS_LIMIT // 3 else cut.rstrip() + "..."
