"""The MQTT 5.0 distribution rules: what 5.0 alone says of sessions, subscriptions, the
retained store and forwarding.

Registered like :mod:`.distribution_rules` (``Kind.DISTRIBUTION``), each with its 5.0 id
(MQTT Version 5.0, OASIS Standard, 7 March 2019): the standard's label, or
``PP50-<section>-<slug>`` for an unlabelled sentence the model enforces. 5.0 numbers its
statements afresh (its MQTT-3.1.2-5 is "resume the Session", 3.1.1's is "queue for an
offline Session"), so each is its own rule, found with ``RULES.by_id(id, Edition.V50)``.
"""

from __future__ import annotations

from pubproof.model.distribution_rules import s50
from pubproof.model.editions import Edition
from pubproof.model.rules import Binds, Kind, Rule, Strength, rule

V50 = Edition.V50
M, MN, MAY, DEF = Strength.MUST, Strength.MUST_NOT, Strength.MAY, Strength.DEFINITION
C, SV, BOTH = Binds.CLIENT, Binds.SERVER, Binds.SENDER_AND_RECEIVER


def dist50(
    key: str, title: str, rule_id: str, strength: Strength, binds: Binds, section: str,
    text: str, reading: str | None = None,
) -> Rule:  # fmt: skip
    """Define and register a 5.0 distribution rule, quoting ``section``."""
    return rule(
        key, title, ids={V50: rule_id}, strength=strength, binds=binds,
        kind=Kind.DISTRIBUTION, quotes=(s50(section, text),), reading=reading,
    )  # fmt: skip


# -- sessions (3.1.2.4, 3.1.2.11.2, 4.1) --------------------------------------------------
CLEAN_START = dist50(
    "dist50.session.clean-start", "Clean Start 1: discard any existing Session, start a new one",
    "MQTT-3.1.2-4", M, BOTH, "3.1.2.4",
    "If a CONNECT packet is received with Clean Start is set to 1, the Client and Server MUST "
    "discard any existing Session and start a new Session [MQTT-3.1.2-4].",
)  # fmt: skip
RESUME = dist50(
    "dist50.session.resume", "Clean Start 0 and a Session on record: carry on from its state",
    "MQTT-3.1.2-5", M, SV, "3.1.2.4",
    "If a CONNECT packet is received with Clean Start set to 0 and there is a Session "
    "associated with the Client Identifier, the Server MUST resume communications with the "
    "Client based on state from the existing Session [MQTT-3.1.2-5].",
)  # fmt: skip
CREATE = dist50(
    "dist50.session.create", "Clean Start 0 and no Session on record: create a new Session",
    "MQTT-3.1.2-6", M, SV, "3.1.2.4",
    "If a CONNECT packet is received with Clean Start set to 0 and there is no Session "
    "associated with the Client Identifier, the Server MUST create a new Session "
    "[MQTT-3.1.2-6].",
)  # fmt: skip
KEEP_AFTER_CLOSE = dist50(
    "dist50.session.keep-after-close",
    "Session Expiry Interval above 0: the Session State is kept after the connection closes "
    "(0 or absent: it ends with the connection; 0xFFFFFFFF: it never expires)",
    "MQTT-3.1.2-23", M, BOTH, "3.1.2.11.2",
    "If the Session Expiry Interval is absent the value 0 is used. If it is set to 0, or is "
    "absent, the Session ends when the Network Connection is closed. If the Session Expiry "
    "Interval is 0xFFFFFFFF (UINT_MAX), the Session does not expire. The Client and Server "
    "MUST store the Session State after the Network Connection is closed if the Session "
    "Expiry Interval is greater than 0 [MQTT-3.1.2-23].",
)  # fmt: skip
PENDING_QOS0_OPTIONAL = dist50(
    "dist50.session.pending-qos0-optional",
    "the Session State holds the QoS 1 and 2 messages pending transmission, QoS 0 optionally",
    "PP50-4.1-pending-messages", MAY, SV, "4.1",
    "The Session State in the Server consists of: ... QoS 1 and QoS 2 messages pending "
    "transmission to the Client and OPTIONALLY QoS 0 messages pending transmission to the "
    "Client.", reading="queue-qos0",
)  # fmt: skip
RETAINED_NOT_SESSION = dist50(
    "dist50.retain.not-session-state",
    "retained messages are not Session State: a Session ending does not delete them",
    "PP50-4.1-retained-not-session-state", DEF, SV, "4.1",
    "Retained messages do not form part of the Session State in the Server, they are not "
    "deleted as a result of a Session ending.",
)  # fmt: skip

# -- the retained store and subscribing (3.3.1.3, 3.8.3.1, 3.8.4) -------------------------
RETAIN_QOS0 = dist50(
    "dist50.retain.qos0", "a QoS 0 retained message should be kept, but may be discarded "
    "at any time", "PP50-3.3.1-retained-qos0", Strength.SHOULD, SV, "3.3.1.3",
    "If the Server receives a PUBLISH packet with the RETAIN flag set to 1, and QoS 0 it "
    "SHOULD store the new QoS 0 message as the new retained message for that topic, but MAY "
    "choose to discard it at any time. If this happens there will be no retained message for "
    "that topic.",
)  # fmt: skip
RETAIN_EXPIRES = dist50(
    "dist50.retain.expires", "a retained message that expires is discarded",
    "PP50-3.3.1-retained-expires", DEF, SV, "3.3.1.3",
    "If the current retained message for a Topic expires, it is discarded and there will be "
    "no retained message for that topic.",
)  # fmt: skip
RETAIN_FLAG_SUBSCRIBE = dist50(
    "dist50.retain.flag-on-subscribe", "retained messages sent at subscribe have RETAIN 1",
    "PP50-3.3.1-retained-flag", DEF, SV, "3.3.1.3",
    "When a new Non‑shared Subscription is made, the last retained message, if any, on each "
    "matching topic name is sent to the Client as directed by the Retain Handling "
    "Subscription Option. These messages are sent with the RETAIN flag set to 1.",
)  # fmt: skip
RETAIN_HANDLING_0 = dist50(
    "dist50.retain-handling.0", "Retain Handling 0: the retained messages are sent at subscribe",
    "MQTT-3.3.1-9", M, SV, "3.3.1.3",
    "If Retain Handling is set to 0 the Server MUST send the retained messages matching the "
    "Topic Filter of the subscription to the Client [MQTT-3.3.1-9].",
)  # fmt: skip
RETAIN_HANDLING_1 = dist50(
    "dist50.retain-handling.1",
    "Retain Handling 1: the retained messages are sent only if the subscription is new",
    "MQTT-3.3.1-10", M, SV, "3.3.1.3",
    "If Retain Handling is set to 1 then if the subscription did not already exist, the "
    "Server MUST send all retained message matching the Topic Filter of the subscription to "
    "the Client, and if the subscription did exist the Server MUST NOT send the retained "
    "messages. [MQTT-3.3.1-10].",
)  # fmt: skip
RETAIN_HANDLING_2 = dist50(
    "dist50.retain-handling.2", "Retain Handling 2: no retained messages at subscribe",
    "MQTT-3.3.1-11", MN, SV, "3.3.1.3",
    "If Retain Handling is set to 2, the Server MUST NOT send the retained messages "
    "[MQTT-3.3.1-11].",
)  # fmt: skip
RETAIN_AS_PUBLISHED_0 = dist50(
    "dist50.retain-as-published.0", "Retain As Published 0: forwarded with RETAIN 0",
    "MQTT-3.3.1-12", M, SV, "3.3.1.3",
    "If the value of Retain As Published subscription option is set to 0, the Server MUST "
    "set the RETAIN flag to 0 when forwarding an Application Message regardless of how the "
    "RETAIN flag was set in the received PUBLISH packet [MQTT-3.3.1-12].",
)  # fmt: skip
RETAIN_AS_PUBLISHED_1 = dist50(
    "dist50.retain-as-published.1", "Retain As Published 1: forwarded with the RETAIN received",
    "MQTT-3.3.1-13", M, SV, "3.3.1.3",
    "If the value of Retain As Published subscription option is set to 1, the Server MUST "
    "set the RETAIN flag equal to the RETAIN flag in the received PUBLISH packet "
    "[MQTT-3.3.1-13].",
)  # fmt: skip
SHARED_NO_RETAINED = dist50(
    "dist50.shared.no-retained", "a Shared Subscription gets no retained messages at subscribe",
    "PP50-3.8.4-shared-no-retained", DEF, SV, "3.8.4",
    "If a Server receives a Shared Subscription Topic Filter that is not identical to any "
    "existing Shared Subscription’s Topic Filter, a new Shared Subscription is created. The "
    "Session is added as a subscriber to that Shared Subscription. No retained messages are "
    "sent.",
)  # fmt: skip
REPLACE = dist50(
    "dist50.subscribe.replace",
    "the same topic filter as a Non-shared Subscription of the Session: the new one replaces it",
    "MQTT-3.8.4-3", M, SV, "3.8.4",
    "If a Server receives a SUBSCRIBE packet containing a Topic Filter that is identical to "
    "a Non‑shared Subscription’s Topic Filter for the current Session, then it MUST replace "
    "that existing Subscription with a new Subscription [MQTT-3.8.4-3].",
)  # fmt: skip
REPLACE_RETAINED = dist50(
    "dist50.subscribe.replace-retained",
    "on replacement, the retained messages are re-sent when Retain Handling is 0, and no "
    "Application Message is lost", "MQTT-3.8.4-4", M, SV, "3.8.4",
    "If the Retain Handling option is 0, any existing retained messages matching the Topic "
    "Filter MUST be re-sent, but Applicaton Messages MUST NOT be lost due to replacing the "
    "Subscription [MQTT-3.8.4-4].",
)  # fmt: skip
SUBSCRIPTION_IDENTIFIER_STORED = dist50(
    "dist50.subscribe.identifier-stored",
    "the Subscription Identifier (or its absence) is stored with the subscription it made "
    "or modified", "PP50-3.8.2.1.2-identifier-stored", DEF, SV, "3.8.2.1.2",
    "The Subscription Identifier is associated with any subscription created or modified as "
    "the result of this SUBSCRIBE packet. If there is a Subscription Identifier, it is stored "
    "with the subscription. If this property is not specified, then the absence of a "
    "Subscription Identifier is stored with the subscription.",
)  # fmt: skip
OPTIONS_RESERVED = dist50(
    "dist50.subscribe.options-reserved",
    "a Subscription Options byte with bit 6 or 7 set makes the SUBSCRIBE malformed "
    "(Maximum QoS 3 and Retain Handling 3 are Protocol Errors)", "MQTT-3.8.3-5", M, SV,
    "3.8.3.1",
    "Bits 6 and 7 of the Subscription Options byte are reserved for future use. The Server "
    "MUST treat a SUBSCRIBE packet as malformed if any of Reserved bits in the Payload are "
    "non-zero [MQTT-3.8.3-5].",
)  # fmt: skip
NO_LOCAL = dist50(
    "dist50.forward.no-local",
    "No Local 1: no copy to a connection whose ClientID is the publisher's",
    "MQTT-3.8.3-3", MN, SV, "3.8.3.1",
    "Bit 2 of the Subscription Options represents the No Local option. If the value is 1, "
    "Application Messages MUST NOT be forwarded to a connection with a ClientID equal to the "
    "ClientID of the publishing connection [MQTT-3.8.3-3].",
)  # fmt: skip
NO_LOCAL_SHARED = dist50(
    "dist50.subscribe.no-local-shared", "No Local 1 on a Shared Subscription is a Protocol Error",
    "MQTT-3.8.3-4", DEF, C, "3.8.3.1",
    "It is a Protocol Error to set the No Local bit to 1 on a Shared Subscription "
    "[MQTT-3.8.3-4].",
)  # fmt: skip
SUBACK_GRANTED_OR_FAILURE = dist50(
    "dist50.suback.granted-or-failure",
    "each SUBACK Reason Code shows the maximum QoS granted or that the subscription failed",
    "MQTT-3.8.4-7", M, SV, "3.8.4",
    "This Reason Code MUST either show the maximum QoS that was granted for that "
    "Subscription or indicate that the subscription failed [MQTT-3.8.4-7].",
)  # fmt: skip
SUBACK_CODES = dist50(
    "dist50.suback.codes", "each SUBACK Reason Code is one of the Subscribe Reason Codes",
    "MQTT-3.9.3-2", M, SV, "3.9.3",
    "The Server sending a SUBACK packet MUST use one of the Subscribe Reason Codes for each "
    "Topic Filter received [MQTT-3.9.3-2].",
)  # fmt: skip
UNSUBACK_ORDER = dist50(
    "dist50.unsuback.order", "UNSUBACK Reason Codes are in the order of the topic filters",
    "MQTT-3.11.3-1", M, SV, "3.11.3",
    "The order of Reason Codes in the UNSUBACK packet MUST match the order of Topic Filters "
    "in the UNSUBSCRIBE packet [MQTT-3.11.3-1].",
)  # fmt: skip
UNSUBACK_CODES = dist50(
    "dist50.unsuback.codes",
    "each UNSUBACK Reason Code is an Unsubscribe Reason Code (0x00 Success, 0x11 No "
    "subscription existed, ...)", "MQTT-3.11.3-2", M, SV, "3.11.3",
    "The Server sending an UNSUBACK packet MUST use one of the Unsubscribe Reason Code "
    "values for each Topic Filter received [MQTT-3.11.3-2].",
)  # fmt: skip

# -- forwarding (3.3.1.1, 3.3.2.3, 3.3.4) -------------------------------------------------
DUP_FORWARDED = dist50(
    "dist50.forward.dup", "a forwarded copy's DUP says only whether it is a retransmission",
    "MQTT-3.3.1-3", M, SV, "3.3.1.1",
    "The DUP flag in the outgoing PUBLISH packet is set independently to the incoming "
    "PUBLISH packet, its value MUST be determined solely by whether the outgoing PUBLISH "
    "packet is a retransmission [MQTT-3.3.1-3].",
)  # fmt: skip
PAYLOAD_FORMAT = dist50(
    "dist50.forward.payload-format-indicator", "the Payload Format Indicator goes unaltered",
    "MQTT-3.3.2-4", M, SV, "3.3.2.3.2",
    "A Server MUST send the Payload Format Indicator unaltered to all subscribers receiving "
    "the Application Message [MQTT-3.3.2-4].",
)  # fmt: skip
EXPIRED_NOT_SENT = dist50(
    "dist50.forward.expired-deleted",
    "a copy whose Message Expiry Interval passed before onward delivery started is deleted",
    "MQTT-3.3.2-5", M, SV, "3.3.2.3.3",
    "If the Message Expiry Interval has passed and the Server has not managed to start "
    "onward delivery to a matching subscriber, then it MUST delete the copy of the message "
    "for that subscriber [MQTT-3.3.2-5].", reading="expiry-boundary",
)  # fmt: skip
EXPIRY_REDUCED = dist50(
    "dist50.forward.expiry-reduced",
    "a forwarded Message Expiry Interval is the received one less the time waited",
    "MQTT-3.3.2-6", M, SV, "3.3.2.3.3",
    "The PUBLISH packet sent to a Client by the Server MUST contain a Message Expiry "
    "Interval set to the received value minus the time that the Application Message has "
    "been waiting in the Server [MQTT-3.3.2-6].", reading="expiry-rounding",
)  # fmt: skip
NO_EXPIRY_AFTER_SEND = dist50(
    "dist50.forward.no-expiry-after-send",
    "QoS 2: once the PUBLISH has been sent, Message Expiry no longer applies",
    "MQTT-4.3.3-7", MN, Binds.SENDER, "4.3.3",
    "In the QoS 2 delivery protocol, the sender ... MUST NOT apply Message expiry if a PUBLISH "
    "packet has been sent [MQTT-4.3.3-7].",
)  # fmt: skip
RESPONSE_TOPIC = dist50(
    "dist50.forward.response-topic", "the Response Topic goes unaltered",
    "MQTT-3.3.2-15", M, SV, "3.3.2.3.5",
    "The Server MUST send the Response Topic unaltered to all subscribers receiving the "
    "Application Message [MQTT-3.3.2-15].",
)  # fmt: skip
CORRELATION_DATA = dist50(
    "dist50.forward.correlation-data", "the Correlation Data goes unaltered",
    "MQTT-3.3.2-16", M, SV, "3.3.2.3.6",
    "The Server MUST send the Correlation Data unaltered to all subscribers receiving the "
    "Application Message [MQTT-3.3.2-16].",
)  # fmt: skip
USER_PROPERTIES = dist50(
    "dist50.forward.user-properties", "every User Property goes unaltered",
    "MQTT-3.3.2-17", M, SV, "3.3.2.3.7",
    "The Server MUST send all User Properties unaltered in a PUBLISH packet when forwarding "
    "the Application Message to a Client [MQTT-3.3.2-17].",
)  # fmt: skip
USER_PROPERTY_ORDER = dist50(
    "dist50.forward.user-property-order", "the User Properties keep their order",
    "MQTT-3.3.2-18", M, SV, "3.3.2.3.7",
    "The Server MUST maintain the order of User Properties when forwarding the Application "
    "Message [MQTT-3.3.2-18].",
)  # fmt: skip
CONTENT_TYPE = dist50(
    "dist50.forward.content-type", "the Content Type goes unaltered",
    "MQTT-3.3.2-20", M, SV, "3.3.2.3.9",
    "A Server MUST send the Content Type unaltered to all subscribers receiving the "
    "Application Message [MQTT-3.3.2-20].",
)  # fmt: skip
SUBSCRIPTION_IDS = dist50(
    "dist50.forward.subscription-identifiers",
    "the Subscription Identifiers of the overlapping matching subscriptions are sent",
    "MQTT-3.3.4-3", M, SV, "3.3.4",
    "If the Client specified a Subscription Identifier for any of the overlapping "
    "subscriptions the Server MUST send those Subscription Identifiers in the message which "
    "is published as the result of the subscriptions [MQTT-3.3.4-3].",
)  # fmt: skip
SUBSCRIPTION_IDS_ONE_COPY = dist50(
    "dist50.forward.identifiers-one-copy",
    "one copy sent: it carries the identifiers of every matching subscription, in any order",
    "MQTT-3.3.4-4", M, SV, "3.3.4",
    "If the Server sends a single copy of the message it MUST include in the PUBLISH packet "
    "the Subscription Identifiers for all matching subscriptions which have a Subscription "
    "Identifiers, their order is not significant [MQTT-3.3.4-4].",
)  # fmt: skip
SUBSCRIPTION_IDS_PER_COPY = dist50(
    "dist50.forward.identifiers-per-copy",
    "several copies sent: each carries the identifier of its own subscription",
    "MQTT-3.3.4-5", M, SV, "3.3.4",
    "If the Server sends multiple PUBLISH packets it MUST send, in each of them, the "
    "Subscription Identifier of the matching subscription if it has a Subscription "
    "Identifier [MQTT-3.3.4-5].",
)  # fmt: skip
FILTER_NOT_EMPTY = dist50(
    "dist50.filter.not-empty",
    "a topic filter (and the topic name a message is distributed under) is at least one "
    "character long",
    "MQTT-4.7.3-1", M, BOTH, "4.7.3",
    "All Topic Names and Topic Filters MUST be at least one character long [MQTT-4.7.3-1]",
)  # fmt: skip

# -- Shared Subscriptions (4.8.2) ---------------------------------------------------------
SHARED_SHARE_NAME = dist50(
    "dist50.shared.share-name",
    "a Shared Subscription filter starts with $share/ and has a ShareName of one character "
    "or more", "MQTT-4.8.2-1", M, C, "4.8.2",
    "A Shared Subscription's Topic Filter MUST start with $share/ and MUST contain a "
    "ShareName that is at least one character long [MQTT-4.8.2-1].",
)  # fmt: skip
SHARED_FILTER = dist50(
    "dist50.shared.filter",
    "the ShareName has no '/', '+' or '#' and is followed by '/' and a topic filter",
    "MQTT-4.8.2-2", M, C, "4.8.2",
    "The ShareName MUST NOT contain the characters \"/\", \"+\" or \"#\", but MUST be "
    "followed by a \"/\" character. This \"/\" character MUST be followed by a Topic Filter "
    "[MQTT-4.8.2-2] as described in section 4.7.",
)  # fmt: skip
SHARED_ONE_MEMBER = dist50(
    "dist50.shared.one-member",
    "a message matching a Shared Subscription goes to one of its Sessions, chosen freely",
    "PP50-4.8.2-one-member", DEF, SV, "4.8.2",
    "Each subsequent Application Message that matches the Shared Subscription is now sent to "
    "one and only one of the Sessions that are subscribed to the Shared Subscription. ... If "
    "there's more than one Session subscribed to the Shared Subscription, the Server "
    "implementation is free to choose, on a message by message basis, which Session to use "
    "and what criteria it uses to make this selection.",
)  # fmt: skip
SHARED_GRANTED_QOS = dist50(
    "dist50.shared.granted-qos", "each member of a Shared Subscription gets its own granted QoS",
    "MQTT-4.8.2-3", M, SV, "4.8.2",
    "When sending an Application Message to a Client, the Server MUST respect the granted "
    "QoS for the Client's subscription [MQTT-4.8.2-3]",
)  # fmt: skip
SHARED_QOS2_SAME_CLIENT = dist50(
    "dist50.shared.qos2-same-client",
    "a QoS 2 message cut off by a broken connection is completed to the same Client",
    "MQTT-4.8.2-4", M, SV, "4.8.2",
    "If the Server is in the process of sending a QoS 2 message to its chosen subscribing "
    "Client and the connection to the Client breaks before delivery is complete, the Server "
    "MUST complete the delivery of the message to that Client when it reconnects "
    "[MQTT-4.8.2-4] as described in section 4.3.3.",
)  # fmt: skip
SHARED_QOS2_NO_OTHER = dist50(
    "dist50.shared.qos2-no-other",
    "if that Client's Session ends first, the QoS 2 message goes to no other member",
    "MQTT-4.8.2-5", MN, SV, "4.8.2",
    "If the Client's Session terminates before the Client reconnects, the Server MUST NOT "
    "send the Application Message to any other subscribed Client [MQTT-4.8.2-5].",
)  # fmt: skip
SHARED_ERROR_ACK = dist50(
    "dist50.shared.error-ack",
    "a PUBACK or PUBREC of 0x80 or more: the message is discarded, offered to no other "
    "subscriber", "MQTT-4.8.2-6", M, SV, "4.8.2",
    "If a Client responds with a PUBACK or PUBREC containing a Reason Code of 0x80 or "
    "greater to a PUBLISH packet from the Server, the Server MUST discard the Application "
    "Message and not attempt to send it to any other Subscriber [MQTT-4.8.2-6].",
)  # fmt: skip
SHARED_DETACH = dist50(
    "dist50.shared.detach",
    "UNSUBSCRIBE of a Shared Subscription detaches the Session; the last one out deletes it",
    "PP50-3.10.4-shared-detach", DEF, SV, "3.10.4",
    "If a Topic Filter represents a Shared Subscription, this Session is detached from the "
    "Shared Subscription. If this Session was the only Session that the Shared Subscription "
    "was associated with, the Shared Subscription is deleted.",
)  # fmt: skip

# -- why a SUBSCRIBE or one of its topic filters is refused (3.8.2.1.2, 3.8.3.1, 3.9.3) -----
OPTIONS_VALUE = dist50(
    "dist50.subscribe.options-value",
    "Maximum QoS 3 or Retain Handling 3 in a Subscription Options byte is a Protocol Error",
    "PP50-3.8.3.1-options-value", DEF, C, "3.8.3.1",
    "It is a Protocol Error if the Maximum QoS field has the value 3. ... It is a Protocol "
    "Error to send a Retain Handling value of 3.",
)  # fmt: skip
IDENTIFIER_RANGE = dist50(
    "dist50.subscribe.identifier-range",
    "a SUBSCRIBE's Subscription Identifier is 1 to 268,435,455 (0 is a Protocol Error)",
    "PP50-3.8.2.1.2-identifier-range", DEF, C, "3.8.2.1.2",
    "The Subscription Identifier can have the value of 1 to 268,435,455. It is a Protocol "
    "Error if the Subscription Identifier has a value of 0.",
)  # fmt: skip
WILDCARDS_REFUSED = dist50(
    "dist50.suback.wildcards-not-supported",
    "a wildcard filter on a Server without Wildcard Subscriptions: 0xA2",
    "PP50-3.9.3-wildcards-not-supported", DEF, SV, "3.9.3",
    "162 0xA2 Wildcard Subscriptions not supported: The Server does not support Wildcard "
    "Subscriptions; the subscription is not accepted.",
)  # fmt: skip
SHARED_REFUSED = dist50(
    "dist50.suback.shared-not-supported",
    "a Shared Subscription on a Server without them: 0x9E",
    "PP50-3.9.3-shared-not-supported", DEF, SV, "3.9.3",
    "158 0x9E Shared Subscriptions not supported: The Server does not support Shared "
    "Subscriptions for this Client.",
)  # fmt: skip
IDENTIFIERS_REFUSED = dist50(
    "dist50.suback.identifiers-not-supported",
    "a Subscription Identifier on a Server without them: 0xA1",
    "PP50-3.9.3-identifiers-not-supported", DEF, SV, "3.9.3",
    "161 0xA1 Subscription Identifiers not supported: The Server does not support "
    "Subscription Identifiers; the subscription is not accepted.",
)  # fmt: skip
