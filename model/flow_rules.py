"""The flow rules: what the flow tables (:mod:`pubproof.model.flows`) and the judges cite.

Each is registered in the one registry (:data:`pubproof.model.rules.RULES`) with the kind
``Kind.FLOW``: a flow rule is broken by a sequence of packets (an answer that never comes,
a packet out of turn, a session lost), never by the bytes of one packet, so the codec and
the corpus do not judge it; the link judge (:mod:`pubproof.judge.link`) and the close judge
(:mod:`pubproof.judge.close`) do, and cite it by id, found in the registry like any rule.

The ids are MQTT 3.1.1's (OASIS Standard, 29 October 2014, sections 2 to 4), quoted in
English; MQTT 3.1 labels no statement, and the judges cite the 3.1.1 ids on 3.1
connections too. ``tests/test_flow_rules.py`` holds that every id the flow tables and the
judges cite is registered here.
"""

from __future__ import annotations

from pubproof.model.editions import Edition
from pubproof.model.rules import Binds, Kind, Quote, Rule, Strength, rule

V311 = Edition.V311
_SOURCE = "MQTT 3.1.1 (OASIS), section "


def _flow(
    key: str, rule_id: str, section: str, title: str, strength: Strength, binds: Binds, text: str
) -> Rule:
    return rule(
        key,
        title,
        ids={V311: rule_id},
        strength=strength,
        binds=binds,
        kind=Kind.FLOW,
        quotes=(Quote(lang="en", source=_SOURCE + section, text=text),),
    )


M, S, B = Strength.MUST, Binds.SENDER, Binds.RECEIVER

# -- packet identifiers (2.3.1) -----------------------------------------------------------
ID_UNUSED = _flow(
    "flow.packet-id.unused", "MQTT-2.3.1-2", "2.3.1",
    "a Client assigns a currently unused packet identifier to each new packet", M, Binds.CLIENT,
    "Each time a Client sends a new packet of one of these types it MUST assign it a "
    "currently unused Packet Identifier.",
)  # fmt: skip
ID_RESENT_SAME = _flow(
    "flow.packet-id.same-on-resend", "MQTT-2.3.1-3", "2.3.1",
    "a re-send keeps its packet identifier; it is free again after the acknowledgement",
    M, Binds.CLIENT,
    "If a Client re-sends a particular Control Packet, then it MUST use the same Packet "
    "Identifier in subsequent re-sends of that packet. The Packet Identifier becomes "
    "available for reuse after the Client has processed the corresponding acknowledgement "
    "packet.",
)  # fmt: skip
ID_UNUSED_SERVER = _flow(
    "flow.packet-id.server-unused", "MQTT-2.3.1-4", "2.3.1",
    "the same conditions apply to a Server sending a PUBLISH with QoS > 0", M, Binds.SERVER,
    "The same conditions [MQTT-2.3.1-3] apply to a Server when it sends a PUBLISH with QoS >0.",
)  # fmt: skip

# -- the session (3.1.2, 3.2.2, 4.1) ------------------------------------------------------
RESUME = _flow(
    "flow.session.resume", "MQTT-3.1.2-4", "3.1.2.4",
    "CleanSession 0: the Server resumes the session of the client identifier", M, Binds.SERVER,
    "If CleanSession is set to 0, the Server MUST resume communications with the Client "
    "based on state from the current Session (as identified by the Client identifier).",
)  # fmt: skip
CLEAN = _flow(
    "flow.session.clean", "MQTT-3.1.2-6", "3.1.2.4",
    "CleanSession 1: Client and Server discard the previous session and start a new one",
    M, Binds.SENDER_AND_RECEIVER,
    "If CleanSession is set to 1, the Client and Server MUST discard any previous Session "
    "and start a new one.",
)  # fmt: skip
SESSION_PRESENT = _flow(
    "flow.session.present", "MQTT-3.2.2-2", "3.2.2.2",
    "CleanSession 0 accepted: Session Present says whether the Server had the session",
    M, Binds.SERVER,
    "If the Server accepts a connection with CleanSession set to 0, the value set in Session "
    "Present depends on whether the Server already has stored Session state for the "
    "supplied client ID.",
)  # fmt: skip
SESSION_PRESENT_CLEAN = _flow(
    "flow.session.present-clean", "MQTT-3.2.2-1", "3.2.2.2",
    "CleanSession 1 accepted: Session Present 0", M, Binds.SERVER,
    "If the Server accepts a connection with CleanSession set to 1, the Server MUST set "
    "Session Present to 0 in the CONNACK packet in addition to setting a zero return code "
    "in the CONNACK packet [MQTT-3.2.2-1].",
)  # fmt: skip
SESSION_PRESENT_NONE = _flow(
    "flow.session.present-none", "MQTT-3.2.2-3", "3.2.2.2",
    "CleanSession 0 accepted and no stored Session state: Session Present 0", M, Binds.SERVER,
    "If the Server does not have stored Session state, it MUST set Session Present to 0 in "
    "the CONNACK packet. This is in addition to setting a zero return code in the CONNACK "
    "packet [MQTT-3.2.2-3].",
)  # fmt: skip
STORE_SESSION = _flow(
    "flow.session.store", "MQTT-4.1.0-1", "4.1",
    "Client and Server keep the session state for the whole session", M, Binds.SENDER_AND_RECEIVER,
    "The Client and Server MUST store Session state for the entire duration of the Session.",
)  # fmt: skip

# -- PUBLISH: DUP, the response (3.3.1, 3.3.4) --------------------------------------------
DUP_ON_RESEND = _flow(
    "flow.dup.on-resend", "MQTT-3.3.1-1", "3.3.1.1",
    "DUP is 1 on a re-delivered PUBLISH", M, S,
    "The DUP flag MUST be set to 1 by the Client or Server when it attempts to re-deliver a "
    "PUBLISH Packet.",
)  # fmt: skip
DUP_FORWARDED = _flow(
    "flow.dup.forwarded", "MQTT-3.3.1-3", "3.3.1.1",
    "a forwarded PUBLISH has DUP 1 only when the Server re-sends it", M, Binds.SERVER,
    "The DUP flag in the outgoing PUBLISH packet is set independently to the incoming "
    "PUBLISH packet, its value MUST be determined solely by whether the outgoing PUBLISH "
    "packet is a retransmission.",
)  # fmt: skip
RESPONSE = _flow(
    "flow.publish.response", "MQTT-3.3.4-1", "3.3.4",
    "the receiver of a PUBLISH responds as its QoS requires", M, B,
    "The receiver of a PUBLISH Packet MUST respond according to Table 3.4 - Expected Publish "
    "Packet response as determined by the QoS in the PUBLISH Packet.",
)  # fmt: skip

# -- the QoS flows (4.3) ------------------------------------------------------------------
QOS0 = _flow(
    "flow.qos0.sender", "MQTT-4.3.1-1", "4.3.1",
    "QoS 0: the sender sends PUBLISH with QoS 0 and DUP 0", M, S,
    "In the QoS 0 delivery protocol, the Sender MUST send a PUBLISH packet with QoS=0, DUP=0.",
)  # fmt: skip
QOS1_SENDER = _flow(
    "flow.qos1.sender", "MQTT-4.3.2-1", "4.3.2",
    "QoS 1: unused identifier, QoS 1 and DUP 0, unacknowledged until PUBACK", M, S,
    "In the QoS 1 delivery protocol, the Sender MUST assign an unused Packet Identifier each "
    "time it has a new Application Message to publish. MUST send a PUBLISH Packet containing "
    "this Packet Identifier with QoS=1, DUP=0. MUST treat the PUBLISH Packet as "
    "\"unacknowledged\" until it has received the corresponding PUBACK packet from the "
    "receiver.",
)  # fmt: skip
QOS1_RECEIVER = _flow(
    "flow.qos1.receiver", "MQTT-4.3.2-2", "4.3.2",
    "QoS 1: PUBACK with the identifier; a PUBLISH after it is a new publication", M, B,
    "In the QoS 1 delivery protocol, the Receiver MUST respond with a PUBACK Packet "
    "containing the Packet Identifier from the incoming PUBLISH Packet, having accepted "
    "ownership of the Application Message. After it has sent a PUBACK Packet the Receiver "
    "MUST treat any incoming PUBLISH packet that contains the same Packet Identifier as being "
    "a new publication, irrespective of the setting of its DUP flag.",
)  # fmt: skip
QOS2_SENDER = _flow(
    "flow.qos2.sender", "MQTT-4.3.3-1", "4.3.3",
    "QoS 2: PUBREL on PUBREC, unacknowledged until PUBCOMP, no PUBLISH after PUBREL",
    Strength.MUST, S,
    "In the QoS 2 delivery protocol, the Sender MUST assign an unused Packet Identifier when "
    "it has a new Application Message to publish. MUST send a PUBLISH packet containing this "
    "Packet Identifier with QoS=2, DUP=0. MUST treat the PUBLISH packet as \"unacknowledged\" "
    "until it has received the corresponding PUBREC packet from the receiver. MUST send a "
    "PUBREL packet when it receives a PUBREC packet from the receiver. This PUBREL packet "
    "MUST contain the same Packet Identifier as the original PUBLISH packet. MUST treat the "
    "PUBREL packet as \"unacknowledged\" until it has received the corresponding PUBCOMP "
    "packet from the receiver. MUST NOT re-send the PUBLISH once it has sent the "
    "corresponding PUBREL packet.",
)  # fmt: skip
QOS2_RECEIVER = _flow(
    "flow.qos2.receiver", "MQTT-4.3.3-2", "4.3.3",
    "QoS 2: PUBREC with the identifier, PUBCOMP for each PUBREL", M, B,
    "In the QoS 2 delivery protocol, the Receiver MUST respond with a PUBREC containing the "
    "Packet Identifier from the incoming PUBLISH Packet, having accepted ownership of the "
    "Application Message. ... MUST respond to a PUBREL packet by sending a PUBCOMP packet "
    "containing the same Packet Identifier as the PUBREL.",
)  # fmt: skip

# -- re-sending on reconnect (4.4), closing on a protocol violation (4.8) -----------------
RESEND = _flow(
    "flow.resend.on-reconnect", "MQTT-4.4.0-1", "4.4",
    "CleanSession 0 reconnect: both ends re-send unacknowledged PUBLISH and PUBREL",
    M, Binds.SENDER_AND_RECEIVER,
    "When a Client reconnects with CleanSession set to 0, both the Client and Server MUST "
    "re-send any unacknowledged PUBLISH Packets (where QoS > 0) and PUBREL Packets using "
    "their original Packet Identifiers.",
)  # fmt: skip
CLOSE_ON_VIOLATION = _flow(
    "flow.close.on-violation", "MQTT-4.8.0-1", "4.8",
    "a protocol violation: the receiver closes the Network Connection", M, B,
    "Unless stated otherwise, if either the Server or Client encounters a protocol "
    "violation, it MUST close the Network Connection on which it received that Control "
    "Packet which caused the protocol violation.",
)  # fmt: skip
