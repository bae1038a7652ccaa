"""The distribution rules: what a server does with a message across sessions.

Rules / theory of operation
---------------------------
A distribution rule is broken by what a server sends to whom (a copy missing, a copy at
the wrong QoS, a retained message kept that should have gone), never by the bytes of one
packet or the turns of one flow. Each is registered in the one registry
(:data:`pubproof.model.rules.RULES`) with the kind ``Kind.DISTRIBUTION``: found by key
with ``RULES.distribution(key)``, all of them with ``RULES.distributions()``, and by id
like any rule (``RULES.by_id(id, edition)``).

This module holds the rules of MQTT 3.1 and 3.1.1 and those 5.0 states in the same words
(one rule, one id per edition, as the wire rules do); :mod:`.distribution_rules50` holds
the statements of 5.0 alone. A rule whose strength differs between editions (3.1 says
"should" where 3.1.1 says MUST) is two rules. Ids: the standard's ``MQTT-x.y.z-n`` where
it labels the statement; ``PP31-<section>-<slug>`` for the MQTT V3.1 text (no labels),
``PP50-<section>-<slug>`` for unlabelled 5.0 text. Where 3.1 is silent the model applies
the 3.1.1 rule on 3.1 and cites its 3.1.1 id (as the judges do for the flows:
:func:`cite`); where the silence matters a reading says so
(:mod:`.distribution_readings`).

Statements the registry already holds are cited, not registered twice: the session rules
of 3.1.1 (``flow.session.resume`` MQTT-3.1.2-4, ``flow.session.clean`` MQTT-3.1.2-6,
``flow.session.store`` MQTT-4.1.0-1), the DUP of a forwarded copy in 3.1.1
(``flow.dup.forwarded`` MQTT-3.3.1-3), re-sending on reconnect (``flow.resend.*``), 5.0's
Session expiry (``flow50.session.expire`` MQTT-4.1.0-2) and Topic Alias mappings
(``flow50.topic-alias.per-connection`` MQTT-3.3.2-7), and the topic rules that say "Topic
Names and Topic Filters" (``topic.not-empty``, ``topic.no-nul``, ``topic.max-65535-bytes``).

Quotes: "MQTT 3.1.1 section ..." and "MQTT 5.0 section ..." are the OASIS standards'
English; "MQTT V3.1 section ..." the IBM MQTT V3.1 specification's; "publish.en.txt" the
excerpt in ``shared/spec``.
"""

from __future__ import annotations

from pubproof.model.editions import Edition
from pubproof.model.rules import RULES, Binds, Kind, Quote, Rule, Strength, rule

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50
M, MN, SH, MAY, DEF = (
    Strength.MUST, Strength.MUST_NOT, Strength.SHOULD, Strength.MAY, Strength.DEFINITION
)  # fmt: skip
C, SV, BOTH = Binds.CLIENT, Binds.SERVER, Binds.SENDER_AND_RECEIVER


def s311(section: str, text: str) -> Quote:
    """MQTT 3.1.1 (OASIS Standard, 29 October 2014, errata 01 numbering), in English."""
    return Quote(lang="en", source=f"MQTT 3.1.1 section {section}", text=text)


def s50(section: str, text: str) -> Quote:
    """MQTT 5.0 (OASIS Standard, 7 March 2019), in English."""
    return Quote(lang="en", source=f"MQTT 5.0 section {section}", text=text)


def s31(section: str, text: str) -> Quote:
    """The IBM MQTT V3.1 protocol specification."""
    return Quote(lang="en", source=f"MQTT V3.1 section {section}", text=text)


def dist(
    key: str,
    title: str,
    ids: dict[Edition, str],
    strength: Strength,
    binds: Binds,
    *quotes: Quote,
    reading: str | None = None,
) -> Rule:
    """Define and register a distribution rule."""
    return rule(
        key, title, ids=ids, strength=strength, binds=binds, kind=Kind.DISTRIBUTION,
        quotes=quotes, reading=reading,
    )  # fmt: skip


def cite(found: Rule, edition: Edition) -> str:
    """The id to cite ``found`` by in ``edition``: its own id there, else (MQTT 3.1, where
    the model applies a 3.1.1 rule the 3.1 text does not state) its 3.1.1 id."""
    if edition in found.ids:
        return found.ids[edition]
    if edition is V31 and V311 in found.ids:
        return found.ids[V311]
    raise KeyError(f"rule {found.key!r} does not apply in edition {edition.value}")


# -- topic filters (4.7) ------------------------------------------------------------------
FILTER_UTF8 = dist(
    "dist.filter.utf8", "the topic filters of a SUBSCRIBE are UTF-8 encoded strings",
    {V311: "MQTT-3.8.3-1", V50: "MQTT-3.8.3-1"}, M, C,
    s311("3.8.3", "The Topic Filters in a SUBSCRIBE packet payload MUST be UTF-8 encoded "
         "strings as defined in Section 1.5.3 [MQTT-3.8.3-1]."),
    s50("3.8.3", "The Topic Filters MUST be a UTF-8 Encoded String [MQTT-3.8.3-1]."),
)  # fmt: skip
MULTI_LEVEL = dist(
    "dist.filter.multi-level",
    "'#' stands alone or after a '/', and is the last character of the topic filter",
    {V31: "PP31-A-multi-level-wildcard", V311: "MQTT-4.7.1-2", V50: "MQTT-4.7.1-1"}, M, C,
    s311("4.7.1.2", "The multi-level wildcard character MUST be specified either on its own "
         "or following a topic level separator. In either case it MUST be the last character "
         "specified in the Topic Filter [MQTT-4.7.1-2]."),
    s50("4.7.1.2", "The multi-level wildcard character MUST be specified either on its own "
        "or following a topic level separator. In either case it MUST be the last character "
        "specified in the Topic Filter [MQTT-4.7.1-1]."),
    s31("Appendix A", "The multi-level wildcard can be specified only on its own or next to "
        "the topic level separator character. Therefore, # and finance/# are both valid, but "
        "finance# is not valid. The multi-level wildcard must be the last character used "
        "within the topic tree."),
)  # fmt: skip
SINGLE_LEVEL = dist(
    "dist.filter.single-level", "'+' occupies a whole level of the topic filter",
    {V31: "PP31-A-single-level-wildcard", V311: "MQTT-4.7.1-3", V50: "MQTT-4.7.1-2"}, M, C,
    s311("4.7.1.3", "The single-level wildcard can be used at any level in the Topic Filter, "
         "including first and last levels. Where it is used it MUST occupy an entire level of "
         "the filter [MQTT-4.7.1-3]."),
    s50("4.7.1.3", "The single-level wildcard can be used at any level in the Topic Filter, "
        "including first and last levels. Where it is used, it MUST occupy an entire level of "
        "the filter [MQTT-4.7.1-2]."),
    s31("Appendix A", "It must be used next to the topic level separator, except when it is "
        "specified on its own. Therefore, + and finance/+ are both valid, but finance+ is not "
        "valid."),
)  # fmt: skip
DOLLAR_TOPICS = dist(
    "dist.match.dollar-topics",
    "a topic filter starting with a wildcard does not match a topic name starting with '$'",
    {V311: "MQTT-4.7.2-1", V50: "MQTT-4.7.2-1"}, MN, SV,
    s311("4.7.2", "The Server MUST NOT match Topic Filters starting with a wildcard character "
         "(# or +) with Topic Names beginning with a $ character [MQTT-4.7.2-1]."),
    reading="dollar-topics",
)  # fmt: skip
NO_NORMALISATION = dist(
    "dist.match.no-normalisation",
    "matching compares the strings as given: no normalisation or substitution",
    {V311: "MQTT-4.7.3-4", V50: "MQTT-4.7.3-4"}, MN, SV,
    s311("4.7.3", "When it performs subscription matching the Server MUST NOT perform any "
         "normalization of Topic Names or Topic Filters, or any modification or substitution "
         "of unrecognized characters [MQTT-4.7.3-4]. Each non-wildcarded level in the Topic "
         "Filter has to match the corresponding level in the Topic Name character for "
         "character for the match to succeed."),
)  # fmt: skip

# -- the retained store (3.3.1.3) ---------------------------------------------------------
RETAIN_STORE = dist(
    "dist.retain.store",
    "RETAIN 1 from a Client: the Server stores the message (and its QoS), replacing the "
    "topic's retained message", {V311: "MQTT-3.3.1-5", V50: "MQTT-3.3.1-5"}, M, SV,
    s311("3.3.1.3", "If the RETAIN flag is set to 1, in a PUBLISH Packet sent by a Client to "
         "a Server, the Server MUST store the Application Message and its QoS, so that it can "
         "be delivered to future subscribers whose subscriptions match its topic name "
         "[MQTT-3.3.1-5]."),
    s50("3.3.1.3", "If the RETAIN flag is set to 1 in a PUBLISH packet sent by a Client to a "
        "Server, the Server MUST replace any existing retained message for this topic and "
        "store the Application Message [MQTT-3.3.1-5], so that it can be delivered to future "
        "subscribers whose subscriptions match its Topic Name."),
)  # fmt: skip
RETAIN_STORE_31 = dist(
    "dist.retain.store-31", "RETAIN 1 from a client: the server should hold on to the message",
    {V31: "PP31-2.1-retain-hold"}, SH, SV,
    s31("2.1", "When a client sends a PUBLISH to a server, if the Retain flag is set (1), the "
        "server should hold on to the message after it has been delivered to the current "
        "subscribers."),
    Quote(lang="en", source="publish.en.txt", text="Note that there is no guarantee that a "
          "previous Retained PUBLISH to the broker will still be held by the broker, and so "
          "the subscriber might not receive an initial Retained PUBLISH on a Topic."),
)  # fmt: skip
RETAIN_ON_SUBSCRIBE = dist(
    "dist.retain.on-subscribe",
    "a new subscription gets the last retained message of each matching topic",
    {V311: "MQTT-3.3.1-6"}, M, SV,
    s311("3.3.1.3", "When a new subscription is established, the last retained message, if "
         "any, on each matching topic name MUST be sent to the subscriber [MQTT-3.3.1-6]."),
)  # fmt: skip
RETAIN_ON_SUBSCRIBE_31 = dist(
    "dist.retain.on-subscribe-31",
    "a new subscription should get the topic's last retained message, with RETAIN set",
    {V31: "PP31-2.1-retain-new-subscription"}, SH, SV,
    s31("2.1", "When a new subscription is established on a topic, the last retained message "
        "on that topic should be sent to the subscriber with the Retain flag set. If there is "
        "no retained message, nothing is sent"),
)  # fmt: skip
RETAIN_QOS0 = dist(
    "dist.retain.qos0",
    "a QoS 0 retained message replaces the previous one; the Server should keep it but may "
    "discard it at any time", {V311: "MQTT-3.3.1-7"}, M, SV,
    s311("3.3.1.3", "If the Server receives a QoS 0 message with the RETAIN flag set to 1 it "
         "MUST discard any message previously retained for that topic. It SHOULD store the new "
         "QoS 0 message as the new retained message for that topic, but MAY choose to discard "
         "it at any time - if this happens there will be no retained message for that topic "
         "[MQTT-3.3.1-7]."),
)  # fmt: skip
RETAIN_FLAG_NEW = dist(
    "dist.retain.flag-new-subscription",
    "a copy sent because of a new subscription has RETAIN 1", {V311: "MQTT-3.3.1-8"}, M, SV,
    s311("3.3.1.3", "When sending a PUBLISH Packet to a Client the Server MUST set the RETAIN "
         "flag to 1 if a message is sent as a result of a new subscription being made by a "
         "Client [MQTT-3.3.1-8]."),
)  # fmt: skip
RETAIN_FLAG_LIVE = dist(
    "dist.retain.flag-live",
    "a copy forwarded to an established subscription has RETAIN 0", {V311: "MQTT-3.3.1-9"},
    M, SV,
    s311("3.3.1.3", "It MUST set the RETAIN flag to 0 when a PUBLISH Packet is sent to a "
         "Client because it matches an established subscription regardless of how the flag "
         "was set in the message it received [MQTT-3.3.1-9]."),
)  # fmt: skip
RETAIN_FLAG_LIVE_31 = dist(
    "dist.retain.flag-live-31",
    "a copy forwarded to a subscription that already existed should have RETAIN 0",
    {V31: "PP31-2.1-retain-live"}, SH, SV,
    s31("2.1", "When a server sends a PUBLISH to a client as a result of a subscription that "
        "already existed when the original PUBLISH arrived, the Retain flag should not be "
        "set, regardless of the Retain flag of the original PUBLISH."),
)  # fmt: skip
RETAIN_EMPTY_DELETES = dist(
    "dist.retain.empty-deletes",
    "a retained PUBLISH with an empty payload is forwarded as normal and removes the "
    "topic's retained message", {V311: "MQTT-3.3.1-10", V50: "MQTT-3.3.1-6"}, M, SV,
    s311("3.3.1.3", "A PUBLISH Packet with a RETAIN flag set to 1 and a payload containing "
         "zero bytes will be processed as normal by the Server and sent to Clients with a "
         "subscription matching the topic name. Additionally any existing retained message "
         "with the same topic name MUST be removed and any future subscribers for the topic "
         "will not receive a retained message [MQTT-3.3.1-10]."),
    s50("3.3.1.3", "If the Payload contains zero bytes it is processed normally by the Server "
        "but any retained message with the same topic name MUST be removed and any future "
        "subscribers for the topic will not receive a retained message [MQTT-3.3.1-6]."),
)  # fmt: skip
RETAIN_EMPTY_MAY_DELETE_31 = dist(
    "dist.retain.empty-may-delete-31",
    "a retained PUBLISH with an empty payload may delete the topic's retained message",
    {V31: "PP31-2.1-retain-may-delete"}, MAY, SV,
    s31("2.1", "A server may delete a retained message if it receives a message with a "
        "zero-length payload and the Retain flag set on the same topic."),
    reading="retained-empty-31",
)  # fmt: skip
RETAIN_EMPTY_NOT_STORED = dist(
    "dist.retain.empty-not-stored", "a zero-byte message is never stored as retained",
    {V311: "MQTT-3.3.1-11", V50: "MQTT-3.3.1-7"}, MN, SV,
    s311("3.3.1.3", "A zero byte retained message MUST NOT be stored as a retained message on "
         "the Server [MQTT-3.3.1-11]."),
    s50("3.3.1.3", "A retained message with a Payload containing zero bytes MUST NOT be stored "
        "as a retained message on the Server [MQTT-3.3.1-7]."),
)  # fmt: skip
RETAIN_FLAG0_UNTOUCHED = dist(
    "dist.retain.flag0-untouched",
    "RETAIN 0 from a Client: not stored, and the retained message is left as it is",
    {V311: "MQTT-3.3.1-12", V50: "MQTT-3.3.1-8"}, MN, SV,
    s311("3.3.1.3", "If the RETAIN flag is 0, in a PUBLISH Packet sent by a Client to a "
         "Server, the Server MUST NOT store the message and MUST NOT remove or replace any "
         "existing retained message [MQTT-3.3.1-12]."),
    s50("3.3.1.3", "If the RETAIN flag is 0 in a PUBLISH packet sent by a Client to a Server, "
        "the Server MUST NOT store the message as a retained message and MUST NOT remove or "
        "replace any existing retained message [MQTT-3.3.1-8]."),
)  # fmt: skip
RETAIN_NOT_SESSION_STATE = dist(
    "dist.retain.not-session-state",
    "retained messages are not Session state: the end of a Session does not delete them",
    {V311: "MQTT-3.1.2-7"}, MN, SV,
    s311("3.1.2.4", "Retained messages do not form part of the Session state in the Server, "
         "they MUST NOT be deleted when the Session ends [MQTT-3.1.2.7]."),
)  # fmt: skip

# -- forwarding (4.5, 3.3.2.1, 3.8.4, 3.3.5) ----------------------------------------------
TO_MATCHING_SESSIONS = dist(
    "dist.forward.matching-sessions",
    "a message the Server took ownership of goes into the Session state of every Client "
    "with a matching subscription", {V311: "MQTT-4.5.0-1", V50: "MQTT-4.5.0-1"}, M, SV,
    s311("4.5", "When a Server takes ownership of an incoming Application Message it MUST add "
         "it to the Session state of those clients that have matching Subscriptions. Matching "
         "rules are defined in Section 4.7 [MQTT-4.5.0-1]."),
    s50("4.5", "When a Server takes ownership of an incoming Application Message it MUST add "
        "it to the Session State for those Clients that have matching Subscriptions "
        "[MQTT-4.5.0-1]."),
)  # fmt: skip
TO_SUBSCRIBERS_31 = dist(
    "dist.forward.subscribers-31",
    "a message published to a topic is delivered to the subscribers of that topic",
    {V31: "PP31-3.3-delivered-to-subscribers"}, DEF, SV,
    Quote(lang="en", source="publish.en.txt", text="Any message published to a given Topic "
          "Name will be delivered to any connected subscribers who have subscribed to that "
          "Topic."),
    s31("3.1", "If not set (0), then the server must store the subscriptions of the client "
        "after it disconnects. This includes continuing to store QoS 1 and QoS 2 messages for "
        "the subscribed topics so that they can be delivered when the client reconnects."),
)  # fmt: skip
TOPIC_MATCHES_FILTER = dist(
    "dist.forward.topic-matches-filter",
    "the topic name sent to a subscriber matches the subscription's topic filter",
    {V311: "MQTT-3.3.2-3", V50: "MQTT-3.3.2-3"}, M, SV,
    s311("3.3.2.1", "The Topic Name in a PUBLISH Packet sent by a Server to a subscribing "
         "Client MUST match the Subscription’s Topic Filter according to the matching process "
         "defined in Section 4.7 [MQTT-3.3.2-3]."),
)  # fmt: skip
MIN_QOS = dist(
    "dist.forward.min-qos",
    "a copy goes at the lower of the published QoS and the granted maximum QoS",
    {V311: "MQTT-3.8.4-6", V50: "MQTT-3.8.4-8"}, M, SV,
    s311("3.8.4", "The QoS of Payload Messages sent in response to a Subscription MUST be the "
         "minimum of the QoS of the originally published message and the maximum QoS granted "
         "by the Server. The server is permitted to send duplicate copies of a message to a "
         "subscriber in the case where the original message was published with QoS 1 and the "
         "maximum QoS granted was QoS 0 [MQTT-3.8.4-6]."),
    s50("3.8.4", "The QoS of Application Messages sent in response to a Subscription MUST be "
        "the minimum of the QoS of the originally published message and the Maximum QoS "
        "granted by the Server [MQTT-3.8.4-8]. The server is permitted to send duplicate "
        "copies of a message to a subscriber in the case where the original message was "
        "published with QoS 1 and the maximum QoS granted was QoS 0."),
)  # fmt: skip
MIN_QOS_31 = dist(
    "dist.forward.min-qos-31",
    "a subscriber receives a message at no more than its granted QoS; QoS is never upgraded",
    {V31: "PP31-3.8-qos-downgrade"}, DEF, SV,
    s31("3.8", "Assuming that the requested QoS level is granted, the client receives PUBLISH "
        "messages at less than or equal to this level, depending on the QoS level of the "
        "original message from the publisher. ... The QoS of a message is never upgraded."),
)  # fmt: skip
OVERLAP = dist(
    "dist.forward.overlap-max-qos",
    "overlapping subscriptions: the message is delivered respecting the highest of their "
    "QoS (and may be delivered once per subscription)",
    {V311: "MQTT-3.3.5-1", V50: "MQTT-3.3.4-2"}, M, SV,
    s311("3.3.5", "When Clients make subscriptions with Topic Filters that include wildcards, "
         "it is possible for a Client’s subscriptions to overlap so that a published message "
         "might match multiple filters. In this case the Server MUST deliver the message to "
         "the Client respecting the maximum QoS of all the matching subscriptions "
         "[MQTT-3.3.5-1]. In addition, the Server MAY deliver further copies of the message, "
         "one for each additional matching subscription and respecting the subscription’s QoS "
         "in each case."),
    s50("3.3.4", "In this case the Server MUST deliver the message to the Client respecting "
        "the maximum QoS of all the matching subscriptions [MQTT-3.3.4-2]. In addition, the "
        "Server MAY deliver further copies of the message, one for each additional matching "
        "subscription and respecting the subscription’s QoS in each case."),
    reading="overlapping-copies",
)  # fmt: skip

# -- sessions (3.1.2.4) -------------------------------------------------------------------
QUEUE_OFFLINE = dist(
    "dist.session.queue-offline",
    "a disconnected session that persists keeps the new QoS 1 and QoS 2 messages matching "
    "its subscriptions (QoS 0 optionally in 3.1.1)",
    {V31: "PP31-3.1-clean-session-0", V311: "MQTT-3.1.2-5"}, M, SV,
    s311("3.1.2.4", "After the disconnection of a Session that had CleanSession set to 0, the "
         "Server MUST store further QoS 1 and QoS 2 messages that match any subscriptions "
         "that the client had at the time of disconnection as part of the Session state "
         "[MQTT-3.1.2-5]. It MAY also store QoS 0 messages that meet the same criteria."),
    s31("3.1", "If not set (0), then the server must store the subscriptions of the client "
        "after it disconnects. This includes continuing to store QoS 1 and QoS 2 messages for "
        "the subscribed topics so that they can be delivered when the client reconnects."),
    reading="queue-qos0",
)  # fmt: skip
QOS0_NOT_STORED_31 = dist(
    "dist.session.qos0-not-stored-31",
    "QoS 0 messages are never stored for a disconnected client",
    {V31: "PP31-3.1-qos0-not-stored"}, DEF, SV,
    s31("3.1", "A non-clean session client will not miss any QoS 1 or QoS 2 messages that "
        "were published whilst it was disconnected. QoS 0 messages are never stored, since "
        "they are delivered on a best efforts basis."),
)  # fmt: skip
CLEAN_31 = dist(
    "dist.session.clean-31",
    "Clean session 1: the server discards what it kept of the client, and again at "
    "disconnection", {V31: "PP31-3.1-clean-session-1"}, M, SV,
    s31("3.1", "If set (1), then the server must discard any previously maintained "
        "information about the client and treat the connection as \"clean\". The server must "
        "also discard any state when the client disconnects."),
)  # fmt: skip

# -- SUBSCRIBE and SUBACK (3.8, 3.9) ------------------------------------------------------
NO_WILDCARD_SUPPORT = dist(
    "dist.subscribe.no-wildcard-support",
    "a Server without wildcard support rejects every subscription whose filter has one",
    {V311: "MQTT-3.8.3-2"}, M, SV,
    s311("3.8.3", "A Server SHOULD support Topic filters that contain the wildcard characters "
         "defined in Section 4.7.1. If it chooses not to support topic filters that contain "
         "wildcard characters it MUST reject any Subscription request whose filter contains "
         "them [MQTT-3.8.3-2]."),
)  # fmt: skip
SUBSCRIBE_NOT_EMPTY = dist(
    "dist.subscribe.not-empty", "a SUBSCRIBE carries at least one topic filter",
    {V311: "MQTT-3.8.3-3", V50: "MQTT-3.8.3-2"}, M, C,
    s311("3.8.3", "The payload of a SUBSCRIBE packet MUST contain at least one Topic Filter / "
         "QoS pair. A SUBSCRIBE packet with no payload is a protocol violation "
         "[MQTT-3.8.3-3]."),
    s50("3.8.3", "The Payload MUST contain at least one Topic Filter and Subscription Options "
        "pair [MQTT-3.8.3-2]. A SUBSCRIBE packet with no Payload is a Protocol Error."),
)  # fmt: skip
REQUESTED_QOS_BYTE = dist(
    "dist.subscribe.requested-qos-byte",
    "a Requested QoS byte with a reserved bit set, or QoS 3, makes the SUBSCRIBE malformed",
    {V311: "MQTT-3.8.3-4"}, M, SV,
    s311("3.8.3", "The Server MUST treat a SUBSCRIBE packet as malformed and close the Network "
         "Connection if any of Reserved bits in the payload are non-zero, or QoS is not 0,1 or "
         "2 [MQTT-3-8.3-4]."),
)  # fmt: skip
SUBACK_SENT = dist(
    "dist.suback.sent", "the Server answers every SUBSCRIBE with a SUBACK",
    {V311: "MQTT-3.8.4-1", V50: "MQTT-3.8.4-1"}, M, SV,
    s311("3.8.4", "When the Server receives a SUBSCRIBE Packet from a Client, the Server MUST "
         "respond with a SUBACK Packet [MQTT-3.8.4-1]."),
)  # fmt: skip
ACK_PACKET_ID = dist(
    "dist.ack.packet-id",
    "a SUBACK and an UNSUBACK carry the packet identifier of their SUBSCRIBE and UNSUBSCRIBE",
    {V311: "MQTT-2.3.1-7", V50: "MQTT-2.2.1-6"}, M, SV,
    s311("2.3.1", "Similarly SUBACK and UNSUBACK MUST contain the Packet Identifier that was "
         "used in the corresponding SUBSCRIBE and UNSUBSCRIBE Packet respectively "
         "[MQTT-2.3.1-7]."),
    s50("2.2.1", "A SUBACK and UNSUBACK MUST contain the Packet Identifier that was used in "
        "the corresponding SUBSCRIBE and UNSUBSCRIBE packet respectively [MQTT-2.2.1-6]."),
)  # fmt: skip
SUBACK_PACKET_ID = dist(
    "dist.suback.packet-id", "the SUBACK carries the SUBSCRIBE's packet identifier",
    {V311: "MQTT-3.8.4-2", V50: "MQTT-3.8.4-2"}, M, SV,
    s311("3.8.4", "The SUBACK Packet MUST have the same Packet Identifier as the SUBSCRIBE "
         "Packet that it is acknowledging [MQTT-3.8.4-2]."),
)  # fmt: skip
REPLACE_311 = dist(
    "dist.subscribe.replace",
    "the same topic filter again: the new subscription replaces the old one, the retained "
    "messages are sent again, and the flow of publications goes on", {V311: "MQTT-3.8.4-3"},
    M, SV,
    s311("3.8.4", "If a Server receives a SUBSCRIBE Packet containing a Topic Filter that is "
         "identical to an existing Subscription’s Topic Filter then it MUST completely replace "
         "that existing Subscription with a new Subscription. The Topic Filter in the new "
         "Subscription will be identical to that in the previous Subscription, although its "
         "maximum QoS value could be different. Any existing retained messages matching the "
         "Topic Filter MUST be re-sent, but the flow of publications MUST NOT be interrupted "
         "[MQTT-3.8.4-3]."),
)  # fmt: skip
SUBSCRIBE_SEQUENCE = dist(
    "dist.subscribe.sequence",
    "several topic filters in one SUBSCRIBE are handled one after another, with one SUBACK",
    {V311: "MQTT-3.8.4-4", V50: "MQTT-3.8.4-5"}, M, SV,
    s311("3.8.4", "If a Server receives a SUBSCRIBE packet that contains multiple Topic "
         "Filters it MUST handle that packet as if it had received a sequence of multiple "
         "SUBSCRIBE packets, except that it combines their responses into a single SUBACK "
         "response [MQTT-3.8.4-4]."),
)  # fmt: skip
SUBACK_CODE_PER_FILTER = dist(
    "dist.suback.code-per-filter",
    "the SUBACK has one code per topic filter: the maximum QoS granted, or failure",
    {V311: "MQTT-3.8.4-5", V50: "MQTT-3.8.4-6"}, M, SV,
    s311("3.8.4", "The SUBACK Packet sent by the Server to the Client MUST contain a return "
         "code for each Topic Filter/QoS pair. This return code MUST either show the maximum "
         "QoS that was granted for that Subscription or indicate that the subscription failed "
         "[MQTT-3.8.4-5]."),
    s50("3.8.4", "The SUBACK packet sent by the Server to the Client MUST contain a Reason "
        "Code for each Topic Filter/Subscription Option pair [MQTT-3.8.4-6]."),
)  # fmt: skip
SUBACK_ORDER = dist(
    "dist.suback.order", "SUBACK codes are in the order of the SUBSCRIBE's topic filters",
    {V311: "MQTT-3.9.3-1", V50: "MQTT-3.9.3-1"}, M, SV,
    s311("3.9.3", "The order of return codes in the SUBACK Packet MUST match the order of "
         "Topic Filters in the SUBSCRIBE Packet [MQTT-3.9.3-1]."),
)  # fmt: skip
SUBACK_CODES_311 = dist(
    "dist.suback.codes", "a SUBACK return code is 0x00, 0x01, 0x02 or 0x80",
    {V311: "MQTT-3.9.3-2"}, MN, SV,
    s311("3.9.3", "SUBACK return codes other than 0x00, 0x01, 0x02 and 0x80 are reserved and "
         "MUST NOT be used [MQTT-3.9.3-2]."),
)  # fmt: skip

# -- UNSUBSCRIBE and UNSUBACK (3.10, 3.11) ------------------------------------------------
UNSUBSCRIBE_UTF8 = dist(
    "dist.unsubscribe.utf8", "the topic filters of an UNSUBSCRIBE are UTF-8 encoded strings",
    {V311: "MQTT-3.10.3-1", V50: "MQTT-3.10.3-1"}, M, C,
    s311("3.10.3", "The Topic Filters in an UNSUBSCRIBE packet MUST be UTF-8 encoded strings "
         "as defined in Section 1.5.3, packed contiguously [MQTT-3.10.3-1]."),
)  # fmt: skip
UNSUBSCRIBE_NOT_EMPTY = dist(
    "dist.unsubscribe.not-empty", "an UNSUBSCRIBE names at least one topic filter",
    {V311: "MQTT-3.10.3-2", V50: "MQTT-3.10.3-2"}, M, C,
    s311("3.10.3", "The Payload of an UNSUBSCRIBE packet MUST contain at least one Topic "
         "Filter. An UNSUBSCRIBE packet with no payload is a protocol violation "
         "[MQTT-3.10.3-2]."),
)  # fmt: skip
UNSUBSCRIBE_DELETE = dist(
    "dist.unsubscribe.delete",
    "each topic filter is compared character by character with the stored ones; an exact "
    "match deletes that subscription", {V311: "MQTT-3.10.4-1", V50: "MQTT-3.10.4-1"}, M, SV,
    s311("3.10.4", "The Topic Filters (whether they contain wildcards or not) supplied in an "
         "UNSUBSCRIBE packet MUST be compared character-by-character with the current set of "
         "Topic Filters held by the Server for the Client. If any filter matches exactly then "
         "its owning Subscription is deleted, otherwise no additional processing occurs "
         "[MQTT-3.10.4-1]."),
    s50("3.10.4", "If any filter matches exactly then its owning Subscription MUST be deleted "
        "[MQTT-3.10.4-1], otherwise no additional processing occurs."),
)  # fmt: skip
UNSUBSCRIBE_STOP = dist(
    "dist.unsubscribe.stop-adding",
    "after UNSUBSCRIBE no new messages are added for the Client (5.0: those matching the "
    "topic filters)", {V311: "MQTT-3.10.4-2", V50: "MQTT-3.10.4-2"}, M, SV,
    s311("3.10.4", "If a Server deletes a Subscription: It MUST stop adding any new messages "
         "for delivery to the Client [MQTT-3.10.4-2]."),
    s50("3.10.4", "When a Server receives UNSUBSCRIBE : It MUST stop adding any new messages "
        "which match the Topic Filters, for delivery to the Client [MQTT-3.10.4-2]."),
)  # fmt: skip
UNSUBSCRIBE_COMPLETE = dist(
    "dist.unsubscribe.complete-started",
    "after UNSUBSCRIBE the QoS 1 and 2 deliveries already started are completed; buffered "
    "messages may still go out", {V311: "MQTT-3.10.4-3", V50: "MQTT-3.10.4-3"}, M, SV,
    s311("3.10.4", "It MUST complete the delivery of any QoS 1 or QoS 2 messages which it has "
         "started to send to the Client [MQTT-3.10.4-3]. It MAY continue to deliver any "
         "existing messages buffered for delivery to the Client."),
    s50("3.10.4", "It MUST complete the delivery of any QoS 1 or QoS 2 messages which match "
        "the Topic Filters and it has started to send to the Client [MQTT-3.10.4-3]. It MAY "
        "continue to deliver any existing messages buffered for delivery to the Client."),
)  # fmt: skip
UNSUBACK_SENT = dist(
    "dist.unsuback.sent", "the Server answers every UNSUBSCRIBE with an UNSUBACK",
    {V311: "MQTT-3.10.4-4", V50: "MQTT-3.10.4-4"}, M, SV,
    s311("3.10.4", "The Server MUST respond to an UNSUBSUBCRIBE request by sending an "
         "UNSUBACK packet. The UNSUBACK Packet MUST have the same Packet Identifier as the "
         "UNSUBSCRIBE Packet [MQTT-3.10.4-4]."),
    s50("3.10.4", "The Server MUST respond to an UNSUBSCRIBE request by sending an UNSUBACK "
        "packet [MQTT-3.10.4-4]."),
)  # fmt: skip
UNSUBACK_EVEN_IF_NONE = dist(
    "dist.unsuback.even-if-none", "the UNSUBACK is sent even when no subscription was deleted",
    {V311: "MQTT-3.10.4-5", V50: "MQTT-3.10.4-5"}, M, SV,
    s311("3.10.4", "Even where no Topic Subscriptions are deleted, the Server MUST respond "
         "with an UNSUBACK [MQTT-3.10.4-5]."),
    s50("3.10.4", "The UNSUBACK packet MUST have the same Packet Identifier as the UNSUBSCRIBE "
        "packet. Even where no Topic Subscriptions are deleted, the Server MUST respond with "
        "an UNSUBACK [MQTT-3.10.4-5]."),
)  # fmt: skip
UNSUBSCRIBE_SEQUENCE = dist(
    "dist.unsubscribe.sequence",
    "several topic filters in one UNSUBSCRIBE are handled one after another, with one "
    "UNSUBACK", {V311: "MQTT-3.10.4-6", V50: "MQTT-3.10.4-6"}, M, SV,
    s311("3.10.4", "If a Server receives an UNSUBSCRIBE packet that contains multiple Topic "
         "Filters it MUST handle that packet as if it had received a sequence of multiple "
         "UNSUBSCRIBE packets, except that it sends just one UNSUBACK response "
         "[MQTT-3.10.4-6]."),
)  # fmt: skip

# -- ordering (4.6) -----------------------------------------------------------------------
ORDERED_BY_DEFAULT = dist(
    "dist.order.ordered-by-default",
    "every topic is an Ordered Topic by default (5.0: on Non-shared Subscriptions); a Server "
    "may make some Unordered", {V311: "MQTT-4.6.0-5", V50: "MQTT-4.6.0-6"}, M, SV,
    s311("4.6", "A Server MUST by default treat each Topic as an \"Ordered Topic\". It MAY "
         "provide an administrative or other mechanism to allow one or more Topics to be "
         "treated as an \"Unordered Topic\" [MQTT-4.6.0-5]."),
    s50("4.6", "By default, a Server MUST treat every Topic as an Ordered Topic when it is "
        "forwarding messages on Non‑shared Subscriptions. [MQTT-4.6.0-6]. A Server MAY "
        "provide an administrative or other mechanism to allow one or more Topics to not be "
        "treated as an Ordered Topic."),
    reading="unordered-topics",
)  # fmt: skip
ORDER_PER_PUBLISHER = dist(
    "dist.order.per-publisher",
    "on an Ordered Topic, PUBLISH packets of the same topic and QoS go to each subscriber in "
    "the order they came from any one Client", {V311: "MQTT-4.6.0-6", V50: "MQTT-4.6.0-5"},
    M, SV,
    s311("4.6", "When a Server processes a message that has been published to an Ordered "
         "Topic, it MUST follow the rules listed above when delivering messages to each of its "
         "subscribers. In addition it MUST send PUBLISH packets to consumers (for the same "
         "Topic and QoS) in the order that they were received from any given Client "
         "[MQTT-4.6.0-6]."),
    s50("4.6", "When a Server processes a message that has been published to an Ordered "
        "Topic, it MUST send PUBLISH packets to consumers (for the same Topic and QoS) in the "
        "order that they were received from any given Client [MQTT-4.6.0-5]."),
    reading="ordering-qos",
)  # fmt: skip


def distribution_rules() -> tuple[Rule, ...]:
    """Every distribution rule (this module's and :mod:`.distribution_rules50`'s)."""
    from pubproof.model import distribution_rules50  # noqa: F401  (registers the 5.0 rules)

    return RULES.distributions()
