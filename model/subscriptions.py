"""Subscriptions, their options, the server's limits, and the SUBACK and UNSUBACK codes.

Rules / theory of operation
---------------------------
A subscription belongs to one session and is keyed by its topic filter: "A Session cannot
have more than one Non‑shared Subscription with the same Topic Filter, so the Topic Filter
can be used as a key to identify the subscription within that Session" (5.0 4.8.1). It
holds the maximum QoS the server granted and, in MQTT 5.0, the options No Local, Retain As
Published and Retain Handling and the Subscription Identifier the SUBSCRIBE carried (or its
absence: "the absence of a Subscription Identifier is stored with the subscription").

For each topic filter of a SUBSCRIBE, in order ("as if it had received a sequence of
multiple SUBSCRIBE packets" [MQTT-3.8.4-4]), :func:`grant` gives the SUBACK code: the QoS
granted (the lower of the one requested and the server's maximum) or a failure code, from
``SUBACK_CODES`` of the edition [MQTT-3.9.3-2]. What is refused, and why:

==========================================  ==============  =============================
the filter                                  3.1.1           5.0
==========================================  ==============  =============================
has a wildcard the server does not support  0x80 [3.8.3-2]  0xA2 Wildcard not supported
is a Shared Subscription, not supported     (none)          0x9E Shared not supported
carries an identifier, not supported        (none)          0xA1 Identifiers not supported
==========================================  ==============  =============================

A filter that breaks the filter rules is a protocol violation (5.0: a Malformed Packet),
unless reading ``invalid-filter`` is "refuse" (then 0x80). MQTT 3.1 has no failure code at
all ("It must therefore make a positive acknowledgement with a SUBACK"), so a 3.1 server
has wildcards and grants every well-formed filter.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from pubproof.model.editions import Edition
from pubproof.model.messages import MAX_SUBSCRIPTION_IDENTIFIER, _check_qos

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50

FAILURE = 0x80  # 3.1.1 "Failure"; 5.0 "Unspecified error"
#: MQTT 5.0 Table 3-8, Subscribe Reason Codes (3.9.3)
IMPLEMENTATION_SPECIFIC = 0x83
NOT_AUTHORIZED = 0x87
TOPIC_FILTER_INVALID = 0x8F
PACKET_IDENTIFIER_IN_USE = 0x91
QUOTA_EXCEEDED = 0x97
SHARED_NOT_SUPPORTED = 0x9E
IDENTIFIERS_NOT_SUPPORTED = 0xA1
WILDCARDS_NOT_SUPPORTED = 0xA2
#: The SUBACK codes each edition allows [MQTT-3.9.3-2]: 3.1 has the granted QoS only.
SUBACK_CODES: dict[Edition, frozenset[int]] = {
    V31: frozenset({0, 1, 2}),
    V311: frozenset({0, 1, 2, FAILURE}),
    V50: frozenset(
        {
            0,
            1,
            2,
            FAILURE,
            IMPLEMENTATION_SPECIFIC,
            NOT_AUTHORIZED,
            TOPIC_FILTER_INVALID,
            PACKET_IDENTIFIER_IN_USE,
            QUOTA_EXCEEDED,
            SHARED_NOT_SUPPORTED,
            IDENTIFIERS_NOT_SUPPORTED,
            WILDCARDS_NOT_SUPPORTED,
        }
    ),
}
#: MQTT 5.0 Table 3-9, Unsubscribe Reason Codes (3.11.3) [MQTT-3.11.3-2]
UNSUB_SUCCESS, NO_SUBSCRIPTION_EXISTED = 0x00, 0x11
UNSUBACK_CODES = frozenset(
    {
        UNSUB_SUCCESS,
        NO_SUBSCRIPTION_EXISTED,
        FAILURE,
        IMPLEMENTATION_SPECIFIC,
        NOT_AUTHORIZED,
        TOPIC_FILTER_INVALID,
        PACKET_IDENTIFIER_IN_USE,
    }
)


class RetainHandling(enum.IntEnum):
    """MQTT 5.0 Retain Handling (bits 4 and 5 of the Subscription Options, 3.8.3.1)."""

    SEND = 0  # "Send retained messages at the time of the subscribe"
    SEND_IF_NEW = 1  # "... at subscribe only if the subscription does not currently exist"
    DONT_SEND = 2  # "Do not send retained messages at the time of the subscribe"


@dataclass(frozen=True, slots=True, kw_only=True)
class SubscriptionOptions:
    """What a SUBSCRIBE asks for one topic filter: the Requested QoS (3.1, 3.1.1) or the
    Subscription Options (5.0; the defaults are 3.1.1's behaviour)."""

    qos: int  # the maximum QoS requested
    no_local: bool = False
    retain_as_published: bool = False
    retain_handling: RetainHandling = RetainHandling.SEND

    def __post_init__(self) -> None:
        _check_qos(self.qos)
        if not isinstance(self.retain_handling, RetainHandling):
            raise ValueError("retain_handling is a RetainHandling")

    def fits(self, edition: Edition) -> bool:
        """Whether the options exist in ``edition`` (3.1 and 3.1.1 have the QoS alone)."""
        return edition is V50 or (
            not self.no_local
            and not self.retain_as_published
            and self.retain_handling is RetainHandling.SEND
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class OptionsProblem:
    """A Requested QoS or Subscription Options byte the server cannot accept."""

    rule_id: str
    malformed: bool  # True: a Malformed Packet; False: a Protocol Error (5.0)
    message: str


def options_from_byte(byte: int, edition: Edition) -> SubscriptionOptions | OptionsProblem:
    """The options a Requested QoS (3.x) or Subscription Options (5.0) byte gives, or why
    the SUBSCRIBE is malformed or a Protocol Error."""
    if type(byte) is not int or not 0 <= byte <= 0xFF:
        raise ValueError("an options byte is 0 to 255")
    qos, handling = byte & 0x03, (byte >> 4) & 0x03
    if edition is not V50:
        if byte & 0xFC or qos == 3:
            # [MQTT-3-8.3-4] "The Server MUST treat a SUBSCRIBE packet as malformed and close
            # the Network Connection if any of Reserved bits in the payload are non-zero, or
            # QoS is not 0,1 or 2" (3.1 reserves the same bits)
            return OptionsProblem(
                rule_id="MQTT-3.8.3-4", malformed=True, message=f"Requested QoS byte {byte:#04x}"
            )
        return SubscriptionOptions(qos=qos)
    if byte & 0xC0:
        # [MQTT-3.8.3-5] "The Server MUST treat a SUBSCRIBE packet as malformed if any of
        # Reserved bits in the Payload are non-zero"
        return OptionsProblem(
            rule_id="MQTT-3.8.3-5",
            malformed=True,
            message=f"reserved bit set in options {byte:#04x}",
        )
    if qos == 3 or handling == 3:
        # 3.8.3.1: "It is a Protocol Error if the Maximum QoS field has the value 3." "It is
        # a Protocol Error to send a Retain Handling value of 3."
        return OptionsProblem(
            rule_id="PP50-3.8.3.1-options-value",
            malformed=False,
            message=f"Maximum QoS or Retain Handling 3 in {byte:#04x}",
        )
    return SubscriptionOptions(
        qos=qos,
        no_local=bool(byte & 0x04),
        retain_as_published=bool(byte & 0x08),
        retain_handling=RetainHandling(handling),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Subscription:
    """A subscription of one session (for a Shared Subscription: one member's)."""

    topic_filter: str  # as subscribed (with ``$share/{ShareName}/`` for a shared one)
    granted_qos: int
    no_local: bool = False
    retain_as_published: bool = False
    retain_handling: RetainHandling = RetainHandling.SEND
    subscription_identifier: int | None = None
    share_name: str | None = None  # 5.0 Shared Subscriptions only
    since: int = 0  # the ``seq`` of the last message owned before it was made

    def __post_init__(self) -> None:
        _check_qos(self.granted_qos)
        ident = self.subscription_identifier
        if ident is not None and not 1 <= ident <= MAX_SUBSCRIPTION_IDENTIFIER:
            raise ValueError("a Subscription Identifier is 1 to 268,435,455")

    @property
    def shared(self) -> bool:
        return self.share_name is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerConfig:
    """What the server supports and chooses (5.0 announces most of it in CONNACK)."""

    maximum_qos: int = 2  # the highest QoS it grants (5.0 CONNACK Maximum QoS)
    wildcard_subscriptions: bool = True  # 3.1.1: SHOULD; 5.0: Wildcard Subscription Available
    shared_subscriptions: bool = True  # 5.0 Shared Subscription Available
    subscription_identifiers: bool = True  # 5.0 Subscription Identifiers Available
    #: the topic filters of the topics the administrator made Unordered (used under reading
    #: ``unordered-topics=configured``)
    unordered_topics: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _check_qos(self.maximum_qos)

    def check(self, edition: Edition) -> None:
        """A 3.1 server cannot refuse a subscription, so it supports wildcards."""
        if edition is V31 and not self.wildcard_subscriptions:
            raise ValueError("MQTT 3.1 has no failure return code: a 3.1 server has wildcards")


def grant(
    options: SubscriptionOptions,
    *,
    edition: Edition,
    config: ServerConfig,
    has_wildcard: bool,
    shared: bool,
    identifier: int | None,
) -> tuple[int, str | None]:
    """The SUBACK code for one well-formed topic filter, and the id of the rule that
    decided a failure (None when granted)."""
    if has_wildcard and not config.wildcard_subscriptions:
        # [MQTT-3.8.3-2] "If it chooses not to support topic filters that contain wildcard
        # characters it MUST reject any Subscription request whose filter contains them"
        if edition is V311:
            return FAILURE, "MQTT-3.8.3-2"
        return WILDCARDS_NOT_SUPPORTED, "PP50-3.9.3-wildcards-not-supported"
    if edition is V50 and shared and not config.shared_subscriptions:
        return SHARED_NOT_SUPPORTED, "PP50-3.9.3-shared-not-supported"
    if edition is V50 and identifier is not None and not config.subscription_identifiers:
        return IDENTIFIERS_NOT_SUPPORTED, "PP50-3.9.3-identifiers-not-supported"
    # [MQTT-3.8.4-5] "This return code MUST either show the maximum QoS that was granted for
    # that Subscription or indicate that the subscription failed"; "The Server might grant a
    # lower maximum QoS than the subscriber requested."
    return min(options.qos, config.maximum_qos), None
