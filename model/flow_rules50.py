"""The MQTT 5.0 flow rules: what the 5.0 flow tables (:mod:`pubproof.model.flows50`,
:mod:`pubproof.model.topic_alias`), the 5.0 sessions and the 5.0 protocol theorems cite.

Registered like the 3.1.1 ones (:mod:`pubproof.model.flow_rules`), with the kind
``Kind.FLOW`` and their 5.0 ids (MQTT Version 5.0, OASIS Standard, 7 March 2019). 5.0
numbers its statements afresh (its MQTT-4.3.3-2 is 3.1.1's MQTT-4.3.3-1, in part), so
each is its own rule, found with ``RULES.by_id(id, Edition.V50)``. The wire rules the
tables also cite (the acknowledgements' Reason Code tables, Topic Alias 0 and its
maximum) are registered in :mod:`pubproof.model.wire_rules`.
"""

from __future__ import annotations

from pubproof.model.editions import Edition
from pubproof.model.rules import Binds, Kind, Quote, Rule, Strength, rule

V50 = Edition.V50
_SOURCE = "MQTT 5.0 (OASIS), section "
M, MN = Strength.MUST, Strength.MUST_NOT
S, R, C, SV, BOTH = (
    Binds.SENDER, Binds.RECEIVER, Binds.CLIENT, Binds.SERVER, Binds.SENDER_AND_RECEIVER
)  # fmt: skip


def _flow(
    key: str, rule_id: str, section: str, title: str, strength: Strength, binds: Binds, text: str
) -> Rule:
    return rule(
        key,
        title,
        ids={V50: rule_id},
        strength=strength,
        binds=binds,
        kind=Kind.FLOW,
        quotes=(Quote(lang="en", source=_SOURCE + section, text=text),),
    )


RESPONSE = _flow(
    "flow50.publish.response", "MQTT-3.3.4-1", "3.3.4",
    "the receiver of a PUBLISH responds as its QoS requires", M, R,
    "The receiver of a PUBLISH Packet MUST respond with the packet as determined by the QoS "
    "in the PUBLISH Packet.",
)  # fmt: skip
DUP_ON_RESEND = _flow(
    "flow50.dup.on-resend", "MQTT-3.3.1-1", "3.3.1.1",
    "DUP is 1 on a re-delivered PUBLISH", M, S,
    "The DUP flag MUST be set to 1 by the Client or Server when it attempts to re-deliver a "
    "PUBLISH packet.",
)  # fmt: skip

# -- flow control (3.3.4, 4.9) ------------------------------------------------------------
CLIENT_RECEIVE_MAXIMUM = _flow(
    "flow50.receive-maximum.client", "MQTT-3.3.4-7", "3.3.4",
    "the Client has at most the Server's Receive Maximum QoS 1 and 2 PUBLISH unacknowledged",
    MN, C,
    "The Client MUST NOT send more than Receive Maximum QoS 1 and QoS 2 PUBLISH packets for "
    "which it has not received PUBACK, PUBCOMP, or PUBREC with a Reason Code of 128 or "
    "greater from the Server.",
)  # fmt: skip
CLIENT_NO_DELAY = _flow(
    "flow50.receive-maximum.client-no-delay", "MQTT-3.3.4-8", "3.3.4",
    "at its Receive Maximum the Client still sends packets other than PUBLISH", MN, C,
    "The Client MUST NOT delay the sending of any packets other than PUBLISH packets due to "
    "having sent Receive Maximum PUBLISH packets without receiving acknowledgements for them.",
)  # fmt: skip
SERVER_RECEIVE_MAXIMUM = _flow(
    "flow50.receive-maximum.server", "MQTT-3.3.4-9", "3.3.4",
    "the Server has at most the Client's Receive Maximum QoS 1 and 2 PUBLISH unacknowledged",
    MN, SV,
    "The Server MUST NOT send more than Receive Maximum QoS 1 and QoS 2 PUBLISH packets for "
    "which it has not received PUBACK, PUBCOMP, or PUBREC with a Reason Code of 128 or "
    "greater from the Client.",
)  # fmt: skip
SERVER_NO_DELAY = _flow(
    "flow50.receive-maximum.server-no-delay", "MQTT-3.3.4-10", "3.3.4",
    "at the Client's Receive Maximum the Server still sends packets other than PUBLISH", MN, SV,
    "The Server MUST NOT delay the sending of any packets other than PUBLISH packets due to "
    "having sent Receive Maximum PUBLISH packets without receiving acknowledgements for them.",
)  # fmt: skip
QUOTA_START = _flow(
    "flow50.quota.start", "MQTT-4.9.0-1", "4.9",
    "the send quota starts non-zero, at most the peer's Receive Maximum", M, BOTH,
    "The Client or Server MUST set its initial send quota to a non-zero value not exceeding "
    "the Receive Maximum.",
)  # fmt: skip
QUOTA_ZERO = _flow(
    "flow50.quota.zero", "MQTT-4.9.0-2", "4.9",
    "each QoS 1 or 2 PUBLISH takes a unit of quota; at zero, no QoS 1 or 2 PUBLISH", MN, BOTH,
    "Each time the Client or Server sends a PUBLISH packet at QoS > 0, it decrements the send "
    "quota. If the send quota reaches zero, the Client or Server MUST NOT send any more "
    "PUBLISH packets with QoS > 0.",
)  # fmt: skip
QUOTA_OTHERS = _flow(
    "flow50.quota.others", "MQTT-4.9.0-3", "4.9",
    "at zero quota, every other packet is still processed and answered", M, BOTH,
    "The Client and Server MUST continue to process and respond to all other MQTT Control "
    "Packets even if the quota is zero.",
)  # fmt: skip

# -- the QoS flows (4.3) ------------------------------------------------------------------
QOS0 = _flow(
    "flow50.qos0.sender", "MQTT-4.3.1-1", "4.3.1",
    "QoS 0: the sender sends PUBLISH with QoS 0 and DUP 0", M, S,
    "In the QoS 0 delivery protocol, the sender MUST send a PUBLISH packet with QoS 0 and DUP "
    "flag set to 0.",
)  # fmt: skip
QOS1_ID = _flow(
    "flow50.qos1.unused-id", "MQTT-4.3.2-1", "4.3.2",
    "QoS 1: an unused packet identifier for each new message", M, S,
    "In the QoS 1 delivery protocol, the sender MUST assign an unused Packet Identifier each "
    "time it has a new Application Message to publish.",
)  # fmt: skip
QOS1_SEND = _flow(
    "flow50.qos1.send", "MQTT-4.3.2-2", "4.3.2",
    "QoS 1: the PUBLISH carries the identifier, QoS 1 and DUP 0", M, S,
    "In the QoS 1 delivery protocol, the sender MUST send a PUBLISH packet containing this "
    "Packet Identifier with QoS 1 and DUP flag set to 0.",
)  # fmt: skip
QOS1_UNACKED = _flow(
    "flow50.qos1.unacknowledged", "MQTT-4.3.2-3", "4.3.2",
    "QoS 1: unacknowledged until the PUBACK", M, S,
    "In the QoS 1 delivery protocol, the sender: ... MUST treat the PUBLISH packet as "
    "“unacknowledged” until it has received the corresponding PUBACK packet from the "
    "receiver [MQTT-4.3.2-3].",
)  # fmt: skip
QOS1_PUBACK = _flow(
    "flow50.qos1.puback", "MQTT-4.3.2-4", "4.3.2",
    "QoS 1: the receiver answers PUBACK with the identifier", M, R,
    "In the QoS 1 delivery protocol, the receiver MUST respond with a PUBACK packet "
    "containing the Packet Identifier from the incoming PUBLISH packet, having accepted "
    "ownership of the Application Message.",
)  # fmt: skip
QOS1_NEW = _flow(
    "flow50.qos1.new-after-puback", "MQTT-4.3.2-5", "4.3.2",
    "QoS 1: after PUBACK, a PUBLISH on the identifier is a new message", M, R,
    "In the QoS 1 delivery protocol, the receiver: ... After it has sent a PUBACK packet "
    "the receiver MUST treat any incoming PUBLISH packet that contains the same Packet "
    "Identifier as being a new Application Message, irrespective of the setting of its "
    "DUP flag [MQTT-4.3.2-5].",
)  # fmt: skip
QOS2_ID = _flow(
    "flow50.qos2.unused-id", "MQTT-4.3.3-1", "4.3.3",
    "QoS 2: an unused packet identifier for each new message", M, S,
    "In the QoS 2 delivery protocol, the sender MUST assign an unused Packet Identifier when "
    "it has a new Application Message to publish.",
)  # fmt: skip
QOS2_SEND = _flow(
    "flow50.qos2.send", "MQTT-4.3.3-2", "4.3.3",
    "QoS 2: the PUBLISH carries the identifier, QoS 2 and DUP 0", M, S,
    "In the QoS 2 delivery protocol, the sender MUST send a PUBLISH packet containing this "
    "Packet Identifier with QoS 2 and DUP flag set to 0.",
)  # fmt: skip
QOS2_UNACKED = _flow(
    "flow50.qos2.unacknowledged", "MQTT-4.3.3-3", "4.3.3",
    "QoS 2: unacknowledged until the PUBREC", M, S,
    "In the QoS 2 delivery protocol, the sender: ... MUST treat the PUBLISH packet as "
    "“unacknowledged” until it has received the corresponding PUBREC packet from the "
    "receiver [MQTT-4.3.3-3].",
)  # fmt: skip
QOS2_PUBREL = _flow(
    "flow50.qos2.pubrel", "MQTT-4.3.3-4", "4.3.3",
    "QoS 2: PUBREL on a PUBREC below 0x80", M, S,
    "In the QoS 2 delivery protocol, the sender MUST send a PUBREL packet when it receives "
    "a PUBREC packet from the receiver with a Reason Code value less than 0x80. This PUBREL "
    "packet MUST contain the same Packet Identifier as the original PUBLISH packet.",
)  # fmt: skip
QOS2_PUBREL_UNACKED = _flow(
    "flow50.qos2.pubrel-unacknowledged", "MQTT-4.3.3-5", "4.3.3",
    "QoS 2: the PUBREL is unacknowledged until the PUBCOMP", M, S,
    "In the QoS 2 delivery protocol, the sender: ... MUST treat the PUBREL packet as "
    "“unacknowledged” until it has received the corresponding PUBCOMP packet from the "
    "receiver [MQTT-4.3.3-5].",
)  # fmt: skip
QOS2_NO_REPUBLISH = _flow(
    "flow50.qos2.no-publish-after-pubrel", "MQTT-4.3.3-6", "4.3.3",
    "QoS 2: no PUBLISH re-send once the PUBREL is sent", MN, S,
    "In the QoS 2 delivery protocol, the sender MUST NOT re-send the PUBLISH once it has "
    "sent the corresponding PUBREL packet.",
)  # fmt: skip
QOS2_PUBREC = _flow(
    "flow50.qos2.pubrec", "MQTT-4.3.3-8", "4.3.3",
    "QoS 2: the receiver answers PUBREC with the identifier", M, R,
    "In the QoS 2 delivery protocol, the receiver MUST respond with a PUBREC containing the "
    "Packet Identifier from the incoming PUBLISH packet, having accepted ownership of the "
    "Application Message.",
)  # fmt: skip
QOS2_NEW_AFTER_ERROR = _flow(
    "flow50.qos2.new-after-error", "MQTT-4.3.3-9", "4.3.3",
    "QoS 2: after a PUBREC of 0x80 or more, a PUBLISH on the identifier is a new message",
    M, R,
    "In the QoS 2 delivery protocol, the receiver: ... If it has sent a PUBREC with a "
    "Reason Code of 0x80 or greater, the receiver MUST treat any subsequent PUBLISH "
    "packet that contains that Packet Identifier as being a new Application Message "
    "[MQTT-4.3.3-9].",
)  # fmt: skip
QOS2_UNTIL_PUBREL = _flow(
    "flow50.qos2.until-pubrel", "MQTT-4.3.3-10", "4.3.3",
    "QoS 2: until PUBREL, PUBREC again for a duplicate, never delivered twice", M, R,
    "In the QoS 2 delivery protocol, the receiver: ... Until it has received the "
    "corresponding PUBREL packet, the receiver MUST acknowledge any subsequent PUBLISH "
    "packet with the same Packet Identifier by sending a PUBREC. It MUST NOT cause "
    "duplicate messages to be delivered to any onward recipients in this case "
    "[MQTT-4.3.3-10].",
)  # fmt: skip
QOS2_PUBCOMP = _flow(
    "flow50.qos2.pubcomp", "MQTT-4.3.3-11", "4.3.3",
    "QoS 2: PUBCOMP for each PUBREL, with its identifier", M, R,
    "In the QoS 2 delivery protocol, the receiver MUST respond to a PUBREL packet by sending "
    "a PUBCOMP packet containing the same Packet Identifier as the PUBREL.",
)  # fmt: skip
QOS2_NEW_AFTER_PUBCOMP = _flow(
    "flow50.qos2.new-after-pubcomp", "MQTT-4.3.3-12", "4.3.3",
    "QoS 2: after PUBCOMP, a PUBLISH on the identifier is a new message", M, R,
    "In the QoS 2 delivery protocol, the receiver: ... After it has sent a PUBCOMP, the "
    "receiver MUST treat any subsequent PUBLISH packet that contains that Packet "
    "Identifier as being a new Application Message [MQTT-4.3.3-12].",
)  # fmt: skip

# -- sessions and re-sending (4.1, 4.4) ---------------------------------------------------
SESSION_PRESENT_CLEAN = _flow(
    "flow50.session.present-clean", "MQTT-3.2.2-2", "3.2.2.1.1",
    "Clean Start 1 accepted: Session Present 0", M, SV,
    "If the Server accepts a connection with Clean Start set to 1, the Server MUST set "
    "Session Present to 0 in the CONNACK packet in addition to setting a 0x00 (Success) "
    "Reason Code in the CONNACK packet [MQTT-3.2.2-2].",
)  # fmt: skip
SESSION_PRESENT = _flow(
    "flow50.session.present", "MQTT-3.2.2-3", "3.2.2.1.1",
    "Clean Start 0 accepted: Session Present 1 if the Server has Session State for the "
    "ClientID, otherwise 0", M, SV,
    "If the Server accepts a connection with Clean Start set to 0 and the Server has Session "
    "State for the ClientID, it MUST set Session Present to 1 in the CONNACK packet, "
    "otherwise it MUST set Session Present to 0 in the CONNACK packet. In both cases it MUST "
    "set a 0x00 (Success) Reason Code in the CONNACK packet [MQTT-3.2.2-3].",
)  # fmt: skip
STORE_SESSION = _flow(
    "flow50.session.store", "MQTT-4.1.0-1", "4.1",
    "the Session State is kept while the connection is open", MN, BOTH,
    "The Client and Server MUST NOT discard the Session State while the Network Connection "
    "is open.",
)  # fmt: skip
EXPIRE_SESSION = _flow(
    "flow50.session.expire", "MQTT-4.1.0-2", "4.1",
    "the Server discards the Session State once the Session Expiry Interval has passed",
    M, SV,
    "The Server MUST discard the Session State when the Network Connection is closed and the "
    "Session Expiry Interval has passed.",
)  # fmt: skip
RESEND = _flow(
    "flow50.resend.on-reconnect", "MQTT-4.4.0-1", "4.4",
    "Clean Start 0 and a session present: re-send unacknowledged PUBLISH and PUBREL; "
    "never otherwise", M, BOTH,
    "When a Client reconnects with Clean Start set to 0 and a session is present, both the "
    "Client and Server MUST resend any unacknowledged PUBLISH packets (where QoS > 0) and "
    "PUBREL packets using their original Packet Identifiers. This is the only circumstance "
    "where a Client or Server is REQUIRED to resend messages. Clients and Servers MUST NOT "
    "resend messages at any other time.",
)  # fmt: skip
NO_RESEND_AFTER_ERROR = _flow(
    "flow50.resend.not-after-error", "MQTT-4.4.0-2", "4.4",
    "a PUBACK or PUBREC of 0x80 or more acknowledges: that PUBLISH is never re-sent", MN, S,
    "If PUBACK or PUBREC is received containing a Reason Code of 0x80 or greater the "
    "corresponding PUBLISH packet is treated as acknowledged, and MUST NOT be retransmitted.",
)  # fmt: skip

# -- Topic Alias (3.3.2.3.4) --------------------------------------------------------------
ALIAS_PER_CONNECTION = _flow(
    "flow50.topic-alias.per-connection", "MQTT-3.3.2-7", "3.3.2.3.4",
    "Topic Alias mappings never carry over to another Network Connection", MN, R,
    "A receiver MUST NOT carry forward any Topic Alias mappings from one Network Connection "
    "to another.",
)  # fmt: skip
ALIAS_CLIENT_MAX = _flow(
    "flow50.topic-alias.client-maximum", "MQTT-3.3.2-9", "3.3.2.3.4",
    "the Client's aliases stay within the Server's Topic Alias Maximum", MN, C,
    "A Client MUST NOT send a PUBLISH packet with a Topic Alias greater than the Topic Alias "
    "Maximum value returned by the Server in the CONNACK packet.",
)  # fmt: skip
ALIAS_CLIENT_ACCEPT = _flow(
    "flow50.topic-alias.client-accepts", "MQTT-3.3.2-10", "3.3.2.3.4",
    "the Client accepts every alias from 1 to its Topic Alias Maximum", M, C,
    "A Client MUST accept all Topic Alias values greater than 0 and less than or equal to "
    "the Topic Alias Maximum value that it sent in the CONNECT packet.",
)  # fmt: skip
ALIAS_SERVER_MAX = _flow(
    "flow50.topic-alias.server-maximum", "MQTT-3.3.2-11", "3.3.2.3.4",
    "the Server's aliases stay within the Client's Topic Alias Maximum", MN, SV,
    "A Server MUST NOT send a PUBLISH packet with a Topic Alias greater than the Topic Alias "
    "Maximum value sent by the Client in the CONNECT packet.",
)  # fmt: skip
ALIAS_SERVER_ACCEPT = _flow(
    "flow50.topic-alias.server-accepts", "MQTT-3.3.2-12", "3.3.2.3.4",
    "the Server accepts every alias from 1 to its Topic Alias Maximum", M, SV,
    "A Server MUST accept all Topic Alias values greater than 0 and less than or equal to "
    "the Topic Alias Maximum value that it returned in the CONNACK packet.",
)  # fmt: skip
ALIAS_UNKNOWN = _flow(
    "flow50.topic-alias.unknown", "PP50-3.3.2-topic-alias-unknown", "3.3.4",
    "an empty topic name with an alias the receiver has no mapping for is a Protocol Error",
    Strength.DEFINITION, S,
    "If the PUBLISH packet contains a Topic Alias, the receiver processes it as follows: ... "
    "3) If the receiver does not already have a mapping for this Topic Alias a) If the "
    "packet has a zero length Topic Name field it is a Protocol Error and the receiver uses "
    "DISCONNECT with Reason Code of 0x82 (Protocol Error) as described in section 4.13.",
)  # fmt: skip

# -- closing with a Reason Code (4.13) ----------------------------------------------------
CLOSE_WITH_REASON = _flow(
    "flow50.close.with-reason-code", "MQTT-4.13.1-1", "4.13.1",
    "a Malformed Packet or Protocol Error with a Reason Code: the Server closes the "
    "connection", M, SV,
    "When a Server detects a Malformed Packet or Protocol Error, and a Reason Code is given "
    "in the specification, it MUST close the Network Connection.",
)  # fmt: skip
CLIENT_CLOSE = _flow(
    "flow50.close.client-should-close", "PP50-4.13.1-client-close", "4.13.1",
    "a Malformed Packet or Protocol Error with a Reason Code: the Client should close the "
    "connection", Strength.SHOULD, C,
    "When a Client detects a Malformed Packet or Protocol Error, and a Reason Code is given "
    "in the specification, it SHOULD close the Network Connection.",
)  # fmt: skip
DISCONNECT_REASON = _flow(
    "flow50.close.disconnect-reason-code", "PP50-4.13.1-disconnect-reason-code", "4.13.1",
    "before closing for a Malformed Packet or Protocol Error, the receiver should send "
    "DISCONNECT with the Reason Code", Strength.SHOULD, R,
    "In the case of an error in any other packet it SHOULD send a DISCONNECT packet "
    "containing the Reason Code before closing the Network Connection. Use Reason Code 0x81 "
    "(Malformed Packet) or 0x82 (Protocol Error) unless a more specific Reason Code has been "
    "defined in section 3.2.2.2 - Connect Reason Code or in section 3.14.2.1 - Disconnect "
    "Reason Code.",
)  # fmt: skip

# -- what the Server declared in CONNACK (3.2.2.3.4, 3.2.2.3.5) ----------------------------
# The Server's DISCONNECT for each is 0x9B (QoS not supported) and 0x9A (Retain not
# supported): pubproof.judge.link50 names them beside these rules.
CLIENT_MAXIMUM_QOS = _flow(
    "flow50.connack.maximum-qos", "MQTT-3.2.2-11", "3.2.2.3.4",
    "the Client publishes at no QoS above the Server's Maximum QoS", MN, C,
    "If a Client receives a Maximum QoS from a Server, it MUST NOT send PUBLISH packets at a "
    "QoS level exceeding the Maximum QoS level specified.",
)  # fmt: skip
CLIENT_RETAIN_AVAILABLE = _flow(
    "flow50.connack.retain-available", "MQTT-3.2.2-14", "3.2.2.3.5",
    "Retain Available 0: the Client sends no PUBLISH with RETAIN 1", MN, C,
    "A Client receiving Retain Available set to 0 from the Server MUST NOT send a PUBLISH "
    "packet with the RETAIN flag set to 1.",
)  # fmt: skip
