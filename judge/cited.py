"""What the link judges cite and hand on besides the flow tables' own.

One small module that the readable link judges (:mod:`pubproof.judge.link`,
:mod:`pubproof.judge.link50`) and their compiled twins (:mod:`pubproof.pipeline.fast`)
share, so that the twins need not import the readable judges: the ids of the rules a
finding cites (objects of the registry, found by their id in the edition), the Client's
rule for the Server's where the standard words an obligation twice (:func:`about_client`),
the offence a packet's receiver must close for (:class:`FlowOffence`), and how a judge
reads an acknowledgement's Reason Code (:func:`reason_code`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pubproof.judge.findings import Finding
from pubproof.model import flow_rules as FR
from pubproof.model import flow_rules50 as FR50
from pubproof.model.editions import Edition

V311, V50 = Edition.V311, Edition.V50

# -- MQTT 3.1 and 3.1.1 -----------------------------------------------------------------------
#: Session Present 0 on a resumed session: [MQTT-3.2.2-2] and [MQTT-3.1.2-4]
SESSION_LOST = (FR.SESSION_PRESENT.id_for(V311), FR.RESUME.id_for(V311))
#: a re-sent PUBLISH with DUP 0: [MQTT-3.3.1-1]
RESENT_DUP = FR.DUP_ON_RESEND.id_for(V311)
#: DUP 1 on a PUBLISH not sent before: [MQTT-3.3.1-3] binds a server that forwards
FORWARD_DUP = FR.DUP_FORWARDED.id_for(V311)
#: the re-sends a resumed session owes: [MQTT-4.4.0-1]
RESEND = FR.RESEND.id_for(V311)
#: a new message on an identifier in use: [MQTT-2.3.1-4] for a Server, [MQTT-2.3.1-2] for
#: a Client
ID_IN_USE_SERVER = FR.ID_UNUSED_SERVER.id_for(V311)
ID_IN_USE_CLIENT = FR.ID_UNUSED.id_for(V311)
#: the QoS 2 sender (PUBREL only after PUBREC, no PUBLISH after PUBREL): [MQTT-4.3.3-1]
QOS2_SENDER = FR.QOS2_SENDER.id_for(V311)
#: the QoS 2 receiver answers every PUBREL with PUBCOMP: [MQTT-4.3.3-2]
QOS2_RECEIVER = FR.QOS2_RECEIVER.id_for(V311)
#: a rule of the judged end that binds a Server, and the same rule for a Client
_SERVER_TO_CLIENT_RULE = {ID_IN_USE_SERVER: ID_IN_USE_CLIENT}
#: why a re-sent PUBLISH or PUBREL is owed, in both editions
RESUMED = "the re-send the resumed session owes"


def about_client(finding: Finding) -> Finding:
    """A finding of the judge that takes the client for the judged end, with the Server's
    rule ids replaced by the Client's (each id once)."""
    if not any(rule in _SERVER_TO_CLIENT_RULE for rule in finding.rules):
        return finding
    return finding.with_rules(
        tuple(dict.fromkeys(_SERVER_TO_CLIENT_RULE.get(r, r) for r in finding.rules))
    )


# -- MQTT 5.0 ---------------------------------------------------------------------------------


def _id50(rule: Any) -> str:
    return str(rule.id_for(V50))


#: QoS 1 and 2 PUBLISH beyond the receiver's Receive Maximum, by the sender's role
QUOTA_SERVER = _id50(FR50.SERVER_RECEIVE_MAXIMUM)  # [MQTT-3.3.4-9]
QUOTA_CLIENT = _id50(FR50.CLIENT_RECEIVE_MAXIMUM)  # [MQTT-3.3.4-7]
QUOTA_ZERO = _id50(FR50.QUOTA_ZERO)  # [MQTT-4.9.0-2]
#: an alias above the receiver's Topic Alias Maximum, by the sender's role
ALIAS_MAX_SERVER = _id50(FR50.ALIAS_SERVER_MAX)  # [MQTT-3.3.2-11]
ALIAS_MAX_CLIENT = _id50(FR50.ALIAS_CLIENT_MAX)  # [MQTT-3.3.2-9]
MAXIMUM_QOS = _id50(FR50.CLIENT_MAXIMUM_QOS)  # [MQTT-3.2.2-11]
RETAIN_AVAILABLE = _id50(FR50.CLIENT_RETAIN_AVAILABLE)  # [MQTT-3.2.2-14]
NOT_AFTER_ERROR = _id50(FR50.NO_RESEND_AFTER_ERROR)  # [MQTT-4.4.0-2]
RESEND50 = _id50(FR50.RESEND)  # [MQTT-4.4.0-1]
RESENT_DUP50 = _id50(FR50.DUP_ON_RESEND)  # [MQTT-3.3.1-1]
PUBREL_ON_PUBREC = _id50(FR50.QOS2_PUBREL)  # [MQTT-4.3.3-4]
NO_PUBLISH_AFTER_PUBREL = _id50(FR50.QOS2_NO_REPUBLISH)  # [MQTT-4.3.3-6]
PUBCOMP_FOR_PUBREL = _id50(FR50.QOS2_PUBCOMP)  # [MQTT-4.3.3-11]
PUBCOMP_REASON = "MQTT-3.7.2-1"  # a wire rule: "MUST use one of the PUBCOMP Reason Codes"
#: the Server's DISCONNECT Reason Codes for what it declared in CONNACK (3.2.2.3.4:
#: "use DISCONNECT with Reason Code 0x9B (QoS not supported)"; 3.2.2.3.5: "The Server
#: SHOULD send a DISCONNECT with Reason Code of 0x9A (Retain not supported)")
QOS_NOT_SUPPORTED = 0x9B
RETAIN_NOT_SUPPORTED = 0x9A


@dataclass(frozen=True, slots=True)
class FlowOffence:
    """A packet after which its receiver must close: the rule it breaks, why, and the
    DISCONNECT Reason Code the model calls for."""

    rule: str
    message: str
    reason_code: int


def reason_code(fields: Mapping[str, Any]) -> int:
    """An acknowledgement's Reason Code (0x00 when it has none: the short form)."""
    code = fields.get("reason_code")
    return code if isinstance(code, int) else 0
