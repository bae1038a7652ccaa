"""The MQTT 5.0 publish/acknowledge flows, as transition tables beside the 3.1.1 ones.

Rules / theory of operation
---------------------------
The states are 3.1.1's (:mod:`pubproof.model.flows`): the sender per packet identifier
(FREE, AWAIT_PUBACK, AWAIT_PUBREC, AWAIT_PUBCOMP), the receiver per identifier for the two
QoS 2 methods (FREE, STORED for Method A, ID_HELD for Method B). What 5.0 adds is in the
inputs and the actions:

- **Reason Codes.** An acknowledgement is an input by its code: below 0x80 a success,
  0x80 or more an error. A PUBACK or PUBREC with an error ends the flow and frees the
  identifier, and the PUBLISH is never re-sent [MQTT-4.4.0-2]; PUBREL only after a PUBREC
  below 0x80 [MQTT-4.3.3-4]. 0x92 (Packet Identifier not found) is what an end answers to
  a PUBREL (with PUBCOMP) or a PUBREC (with PUBREL) for an identifier it does not hold.
  A receiver may refuse a message (its application's verdict): PUBACK or PUBREC with an
  error code, and the identifier is free at once [MQTT-4.3.3-9].
- **Flow control** (section 4.9, 3.3.4). The actions ``TAKE_QUOTA`` and ``RELEASE_QUOTA``
  move the send quota the session keeps from the peer's Receive Maximum: taken by each
  QoS 1 or 2 PUBLISH sent [MQTT-4.9.0-2] (re-sends included), released by PUBACK, PUBCOMP
  and a PUBREC of 0x80 or more (any code) [MQTT-3.3.4-7, MQTT-3.3.4-9]. The quota starts
  afresh at each connection [MQTT-4.9.0-1]; a flow still awaiting PUBCOMP counts as
  unacknowledged, so the re-sent PUBREL takes its slot again. At zero quota a new message
  waits (the session's guard, ``PUBLISH_*`` is only an input when the quota is above 0);
  a receiver that gets a new QoS 1 or 2 PUBLISH while it already holds Receive Maximum
  unacknowledged ones answers DISCONNECT 0x93 (the input ``PUBLISH_OVER_RECEIVE_MAXIMUM``).
- **Resending** [MQTT-4.4.0-1]: only on a reconnect with Clean Start 0 and a session
  present (``RESUME``); a Clean Start 1, or a session that has expired (Session Present 0),
  is ``CLEAN``: everything is dropped, nothing re-sent.
- **DISCONNECT** with a Reason Code ends a connection on a Protocol Error (0x82), a
  Receive Maximum exceeded (0x93) or a Topic Alias invalid (0x94); Malformed Packets
  (0x81) are the wire format's (:mod:`pubproof.model.wire50`).

Topic Alias, which is kept per connection and direction rather than per identifier, has
its own tables in :mod:`pubproof.model.topic_alias`.

Every (state, input) pair is a table entry or an explicit ``UNDEFINED_*50`` case; the
5.0 session (:mod:`pubproof.model.session50`), the 5.0 proofs and the diagrams read them.
The edition selects the tables (:func:`sender_table_for`): 3.1 and 3.1.1 keep theirs.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from pubproof.model.editions import Edition
from pubproof.model.flows import (
    Method,
    ReceiverState,
    SenderState,
    Undefined,
)

#: MQTT 5.0 Reason Codes the flows use (section 2.4).
SUCCESS = 0x00
UNSPECIFIED_ERROR = 0x80
PACKET_ID_NOT_FOUND = 0x92
PROTOCOL_ERROR = 0x82
RECEIVE_MAXIMUM_EXCEEDED = 0x93
TOPIC_ALIAS_INVALID = 0x94


def is_error(reason_code: int) -> bool:
    """A Reason Code of 0x80 or more is a failure (section 2.4)."""
    return reason_code >= 0x80


class SenderInput50(enum.Enum):
    PUBLISH_QOS1 = "app publishes at QoS 1 (send quota above 0)"
    PUBLISH_QOS2 = "app publishes at QoS 2 (send quota above 0)"
    PUBACK_OK = "PUBACK < 0x80 received"
    PUBACK_ERROR = "PUBACK >= 0x80 received"
    PUBREC_OK = "PUBREC < 0x80 received"
    PUBREC_ERROR = "PUBREC >= 0x80 received"
    PUBCOMP_OK = "PUBCOMP 0x00 received"
    PUBCOMP_NOT_FOUND = "PUBCOMP 0x92 received"
    RESUME = "reconnected, Clean Start 0, session present"
    CLEAN = "reconnected, Clean Start 1 or session expired"


class SenderAction50(enum.Enum):
    TAKE_QUOTA = "send quota - 1"
    RELEASE_QUOTA = "send quota + 1"
    SEND_PUBLISH = "send PUBLISH (DUP=0)"
    RESEND_PUBLISH = "send PUBLISH again (DUP=1)"
    SEND_PUBREL = "send PUBREL 0x00"
    SEND_PUBREL_NOT_FOUND = "send PUBREL 0x92"
    COMPLETE = "flow ended: identifier free"


class ReceiverInput50(enum.Enum):
    PUBLISH_QOS0 = "PUBLISH QoS 0 received"
    PUBLISH_QOS1 = "PUBLISH QoS 1 received, accepted"
    PUBLISH_QOS1_REFUSED = "PUBLISH QoS 1 received, refused (>= 0x80)"
    PUBLISH_QOS2 = "PUBLISH QoS 2 received, accepted"
    PUBLISH_QOS2_REFUSED = "PUBLISH QoS 2 received, refused (>= 0x80)"
    PUBLISH_OVER_RECEIVE_MAXIMUM = "new QoS > 0 PUBLISH beyond the Receive Maximum"
    PUBREL_OK = "PUBREL 0x00 received"
    PUBREL_NOT_FOUND = "PUBREL 0x92 received"
    RESUME = "reconnected, Clean Start 0, session present"
    CLEAN = "reconnected, Clean Start 1 or session expired"


class ReceiverAction50(enum.Enum):
    DELIVER = "deliver the message to the application"
    STORE = "store the message"
    DELIVER_STORED = "deliver the stored message"
    SEND_PUBACK = "send PUBACK 0x00"
    SEND_PUBACK_ERROR = "send PUBACK with the refusal's code (>= 0x80)"
    SEND_PUBREC = "send PUBREC 0x00"
    SEND_PUBREC_ERROR = "send PUBREC with the refusal's code (>= 0x80)"
    SEND_PUBCOMP = "send PUBCOMP 0x00"
    SEND_PUBCOMP_NOT_FOUND = "send PUBCOMP 0x92"
    DISCONNECT_RECEIVE_MAXIMUM = "send DISCONNECT 0x93 and close"


#: The Reason Code of the packet each action sends (an error action: the refusal's own).
ACTION_CODE: Mapping[SenderAction50 | ReceiverAction50, int] = MappingProxyType(
    {
        SenderAction50.SEND_PUBLISH: SUCCESS,
        SenderAction50.SEND_PUBREL: SUCCESS,
        SenderAction50.SEND_PUBREL_NOT_FOUND: PACKET_ID_NOT_FOUND,
        ReceiverAction50.SEND_PUBACK: SUCCESS,
        ReceiverAction50.SEND_PUBREC: SUCCESS,
        ReceiverAction50.SEND_PUBCOMP: SUCCESS,
        ReceiverAction50.SEND_PUBCOMP_NOT_FOUND: PACKET_ID_NOT_FOUND,
        ReceiverAction50.DISCONNECT_RECEIVE_MAXIMUM: RECEIVE_MAXIMUM_EXCEEDED,
    }
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Step50:
    """What one end does for one (state, input) pair of a 5.0 table."""

    actions: tuple[SenderAction50, ...] | tuple[ReceiverAction50, ...]
    next: SenderState | ReceiverState
    rules: tuple[str, ...]
    note: str = ""


S, SI, SA = SenderState, SenderInput50, SenderAction50
RS, RI, RA = ReceiverState, ReceiverInput50, ReceiverAction50


def _s(
    actions: tuple[SenderAction50, ...], nxt: SenderState, *rules: str, note: str = ""
) -> Step50:
    return Step50(actions=actions, next=nxt, rules=rules, note=note)


def _r(
    actions: tuple[ReceiverAction50, ...], nxt: ReceiverState, *rules: str, note: str = ""
) -> Step50:
    return Step50(actions=actions, next=nxt, rules=rules, note=note)


_RESEND = (SA.TAKE_QUOTA, SA.RESEND_PUBLISH)
_END = (SA.COMPLETE, SA.RELEASE_QUOTA)

SENDER50: Mapping[tuple[SenderState, SenderInput50], Step50] = MappingProxyType(
    {
        # [MQTT-4.3.2-1] "MUST assign an unused Packet Identifier each time it has a new
        # Application Message to publish." [MQTT-4.3.2-2] "MUST send a PUBLISH packet
        # containing this Packet Identifier with QoS 1 and DUP flag set to 0."
        # [MQTT-4.9.0-2] "... MUST NOT send a PUBLISH packet with QoS > 0 if the send quota
        # is zero": each one sent takes a unit.
        (S.FREE, SI.PUBLISH_QOS1): _s(
            (SA.TAKE_QUOTA, SA.SEND_PUBLISH), S.AWAIT_PUBACK,
            "MQTT-4.3.2-1", "MQTT-4.3.2-2", "MQTT-4.9.0-2",
        ),
        (S.FREE, SI.PUBLISH_QOS2): _s(
            (SA.TAKE_QUOTA, SA.SEND_PUBLISH), S.AWAIT_PUBREC,
            "MQTT-4.3.3-1", "MQTT-4.3.3-2", "MQTT-4.9.0-2",
        ),
        # [MQTT-4.3.2-3] "MUST treat the PUBLISH packet as 'unacknowledged' until it has
        # received the corresponding PUBACK packet from the receiver."  The send quota is
        # incremented "each time a PUBACK or PUBCOMP packet is received, regardless of
        # whether the PUBACK or PUBCOMP carried an error code" (4.9).
        (S.AWAIT_PUBACK, SI.PUBACK_OK): _s(_END, S.FREE, "MQTT-4.3.2-3", "MQTT-3.3.4-7"),
        # [MQTT-4.4.0-2] "If PUBACK or PUBREC is received containing a Reason Code of 0x80
        # or greater the corresponding PUBLISH packet is treated as acknowledged, and MUST
        # NOT be retransmitted."
        (S.AWAIT_PUBACK, SI.PUBACK_ERROR): _s(
            _END, S.FREE, "MQTT-4.4.0-2", "MQTT-4.3.2-3", "MQTT-3.3.4-7",
            note="an error ends the flow: the identifier is free, never re-sent",
        ),
        # [MQTT-4.3.3-4] "MUST send a PUBREL packet when it receives a PUBREC packet from
        # the receiver with a Reason Code value less than 0x80."  The quota is not released:
        # the message is unacknowledged until PUBCOMP [MQTT-3.3.4-7].
        (S.AWAIT_PUBREC, SI.PUBREC_OK): _s(
            (SA.SEND_PUBREL,), S.AWAIT_PUBCOMP, "MQTT-4.3.3-3", "MQTT-4.3.3-4"
        ),
        (S.AWAIT_PUBREC, SI.PUBREC_ERROR): _s(
            _END, S.FREE, "MQTT-4.4.0-2", "MQTT-4.3.3-3", "MQTT-3.3.4-7",
            note="an error ends the flow: no PUBREL, the identifier is free, never re-sent",
        ),
        (S.AWAIT_PUBCOMP, SI.PUBREC_OK): _s(
            (SA.SEND_PUBREL,), S.AWAIT_PUBCOMP, "MQTT-4.3.3-4",
            note="a repeated PUBREC (the receiver saw a duplicate PUBLISH): PUBREL again",
        ),
        # [MQTT-4.3.3-5] "MUST treat the PUBREL packet as 'unacknowledged' until it has
        # received the corresponding PUBCOMP packet from the receiver."
        (S.AWAIT_PUBCOMP, SI.PUBCOMP_OK): _s(_END, S.FREE, "MQTT-4.3.3-5", "MQTT-3.3.4-7"),
        (S.AWAIT_PUBCOMP, SI.PUBCOMP_NOT_FOUND): _s(
            _END, S.FREE, "MQTT-4.3.3-5", "MQTT-3.3.4-7",
            note="0x92: the receiver held no such flow; the flow ends all the same",
        ),
        # PUBREL 0x92 "Packet Identifier not found" (3.6.2.1): the answer to a PUBREC for
        # an identifier this end does not hold, so that the receiver frees it.
        (S.FREE, SI.PUBREC_OK): _s(
            (SA.SEND_PUBREL_NOT_FOUND,), S.FREE, "MQTT-3.6.2-1",
            note="PUBREC for an identifier not held: PUBREL 0x92",
        ),
        # [MQTT-4.4.0-1] "When a Client reconnects with Clean Start set to 0 and a session
        # is present, both the Client and Server MUST resend any unacknowledged PUBLISH
        # packets (where QoS > 0) and PUBREL packets using their original Packet
        # Identifiers. This is the only circumstance where a Client or Server is REQUIRED
        # to resend messages." [MQTT-3.3.1-1] DUP 1 on a re-delivery.  [MQTT-4.9.0-1] the
        # quota starts afresh with the connection: each flow still unacknowledged takes
        # its unit again (a PUBREL's flow awaits PUBCOMP [MQTT-3.3.4-7]).
        (S.AWAIT_PUBACK, SI.RESUME): _s(
            _RESEND, S.AWAIT_PUBACK, "MQTT-4.4.0-1", "MQTT-3.3.1-1", "MQTT-4.9.0-1"
        ),
        (S.AWAIT_PUBREC, SI.RESUME): _s(
            _RESEND, S.AWAIT_PUBREC, "MQTT-4.4.0-1", "MQTT-3.3.1-1", "MQTT-4.9.0-1"
        ),
        # [MQTT-4.3.3-6] "MUST NOT re-send the PUBLISH once it has sent the corresponding
        # PUBREL packet": the PUBREL, not the PUBLISH, is what is re-sent.
        (S.AWAIT_PUBCOMP, SI.RESUME): _s(
            (SA.TAKE_QUOTA, SA.SEND_PUBREL), S.AWAIT_PUBCOMP,
            "MQTT-4.4.0-1", "MQTT-4.9.0-1", "MQTT-4.3.3-6",
        ),
        (S.FREE, SI.RESUME): _s((), S.FREE, "MQTT-4.4.0-1"),
        # Clean Start 1, or a session that has expired: no state, nothing re-sent.
        **{(state, SI.CLEAN): _s((), S.FREE, "MQTT-4.4.0-1", "MQTT-4.1.0-2") for state in S},
    }
)  # fmt: skip

UNDEFINED_SENDER50: Mapping[SenderInput50, Undefined] = MappingProxyType(
    {
        SI.PUBLISH_QOS1: Undefined(
            verdict="violation", rules=("MQTT-4.3.2-1",),
            note="a new message on a packet identifier still in use",
        ),
        SI.PUBLISH_QOS2: Undefined(
            verdict="violation", rules=("MQTT-4.3.3-1",),
            note="a new message on a packet identifier still in use",
        ),
        SI.PUBACK_OK: Undefined(
            verdict="tolerated", rules=("MQTT-3.3.4-1",),
            note="PUBACK for an identifier not awaiting one: ignored",
        ),
        SI.PUBACK_ERROR: Undefined(
            verdict="tolerated", rules=("MQTT-3.3.4-1",),
            note="PUBACK for an identifier not awaiting one: ignored",
        ),
        SI.PUBREC_OK: Undefined(
            verdict="tolerated", rules=("MQTT-3.3.4-1",),
            note="PUBREC for an identifier awaiting PUBACK: ignored",
        ),
        SI.PUBREC_ERROR: Undefined(
            verdict="tolerated", rules=("MQTT-3.3.4-1",),
            note="PUBREC with an error for an identifier not awaiting PUBREC: ignored",
        ),
        SI.PUBCOMP_OK: Undefined(
            verdict="tolerated", rules=("MQTT-4.3.3-5",),
            note="PUBCOMP for an identifier not awaiting one: ignored",
        ),
        SI.PUBCOMP_NOT_FOUND: Undefined(
            verdict="tolerated", rules=("MQTT-4.3.3-5",),
            note="PUBCOMP for an identifier not awaiting one: ignored",
        ),
    }
)  # fmt: skip

RECEIVER50_COMMON: Mapping[tuple[ReceiverState, ReceiverInput50], Step50] = MappingProxyType(
    {
        # QoS 0: delivered, no response [MQTT-3.3.4-1].
        **{(st, RI.PUBLISH_QOS0): _r((RA.DELIVER,), st, "MQTT-3.3.4-1") for st in RS},
        # [MQTT-4.3.2-4] "MUST respond with a PUBACK packet containing the Packet Identifier
        # from the incoming PUBLISH packet, having accepted ownership of the Application
        # Message." [MQTT-4.3.2-5] a later PUBLISH on the identifier is a new publication.
        (RS.FREE, RI.PUBLISH_QOS1): _r(
            (RA.DELIVER, RA.SEND_PUBACK), RS.FREE, "MQTT-4.3.2-4", "MQTT-4.3.2-5"
        ),
        (RS.FREE, RI.PUBLISH_QOS1_REFUSED): _r(
            (RA.SEND_PUBACK_ERROR,), RS.FREE, "MQTT-4.3.2-4", "MQTT-3.4.2-1",
            note="refused: PUBACK with an error, nothing delivered",
        ),
        # [MQTT-4.3.3-9] "If it has sent a PUBREC with a Reason Code of 0x80 or greater, the
        # receiver MUST treat any subsequent PUBLISH packet that contains that Packet
        # Identifier as being a new Application Message."
        (RS.FREE, RI.PUBLISH_QOS2_REFUSED): _r(
            (RA.SEND_PUBREC_ERROR,), RS.FREE, "MQTT-4.3.3-8", "MQTT-4.3.3-9",
            note="refused: PUBREC with an error, the identifier free at once",
        ),
        # More than Receive Maximum unacknowledged QoS 1 and 2 PUBLISH: DISCONNECT 0x93
        # (3.3.4: "If it receives more than Receive Maximum QoS 1 and QoS 2 PUBLISH packets
        # where it has not sent a PUBACK or PUBCOMP in response, the Server uses a
        # DISCONNECT packet with Reason Code 0x93 (Receive Maximum exceeded)").
        (RS.FREE, RI.PUBLISH_OVER_RECEIVE_MAXIMUM): _r(
            (RA.DISCONNECT_RECEIVE_MAXIMUM,), RS.FREE, "MQTT-3.3.4-7", "MQTT-3.3.4-9",
        ),
        # [MQTT-4.3.3-11] "MUST respond to a PUBREL packet by sending a PUBCOMP packet
        # containing the same Packet Identifier as the PUBREL"; 0x92 when it holds none.
        (RS.FREE, RI.PUBREL_OK): _r(
            (RA.SEND_PUBCOMP_NOT_FOUND,), RS.FREE, "MQTT-4.3.3-11", "MQTT-3.7.2-1",
            note="PUBREL for an identifier not held: PUBCOMP 0x92",
        ),
        (RS.FREE, RI.PUBREL_NOT_FOUND): _r(
            (RA.SEND_PUBCOMP_NOT_FOUND,), RS.FREE, "MQTT-4.3.3-11", "MQTT-3.7.2-1",
            note="neither end holds the identifier: PUBCOMP 0x92",
        ),
        **{(st, RI.RESUME): _r((), st, "MQTT-4.1.0-1") for st in RS},
        **{(st, RI.CLEAN): _r((), RS.FREE, "MQTT-4.1.0-2") for st in RS},
    }
)  # fmt: skip


def _held(
    state: ReceiverState, release: tuple[ReceiverAction50, ...]
) -> dict[tuple[ReceiverState, ReceiverInput50], Step50]:
    """The entries of a state that holds an incoming QoS 2 flow (STORED or ID_HELD)."""
    again = _r(
        (RA.SEND_PUBREC,),
        state,
        "MQTT-4.3.3-10",
        note="duplicate before PUBREL: PUBREC again, nothing delivered",
    )
    return {
        (state, RI.PUBLISH_QOS2): again,
        # The message was accepted when it first came: a duplicate cannot be refused now.
        (state, RI.PUBLISH_QOS2_REFUSED): again,
        # A PUBREL releases the flow whatever its code: 0x92 says the sender holds no flow
        # (it already ended it), so the message the receiver owns is passed on now.
        (state, RI.PUBREL_OK): _r(release, RS.FREE, "MQTT-4.3.3-11", "MQTT-4.3.3-12"),
        (state, RI.PUBREL_NOT_FOUND): _r(
            release, RS.FREE, "MQTT-4.3.3-11", "MQTT-4.3.3-12",
            note="PUBREL 0x92: the sender holds no flow; released all the same",
        ),
    }  # fmt: skip


RECEIVER50_METHOD: Mapping[Method, Mapping[tuple[ReceiverState, ReceiverInput50], Step50]] = (
    MappingProxyType(
        {
            Method.A: MappingProxyType(
                {
                    # [MQTT-4.3.3-8] "MUST respond with a PUBREC containing the Packet
                    # Identifier from the incoming PUBLISH packet, having accepted ownership
                    # of the Application Message."
                    (RS.FREE, RI.PUBLISH_QOS2): _r(
                        (RA.STORE, RA.SEND_PUBREC), RS.STORED, "MQTT-4.3.3-8"
                    ),
                    **_held(RS.STORED, (RA.DELIVER_STORED, RA.SEND_PUBCOMP)),
                }
            ),
            Method.B: MappingProxyType(
                {
                    (RS.FREE, RI.PUBLISH_QOS2): _r(
                        (RA.DELIVER, RA.SEND_PUBREC), RS.ID_HELD, "MQTT-4.3.3-8"
                    ),
                    **_held(RS.ID_HELD, (RA.SEND_PUBCOMP,)),
                }
            ),
        }
    )
)

_QOS1_ON_HELD = Undefined(
    verdict="violation",
    rules=("MQTT-4.3.3-1",),
    note="a QoS 1 PUBLISH on an identifier the sender still holds for a QoS 2 flow",
)
UNDEFINED_RECEIVER50: Mapping[ReceiverInput50, Undefined] = MappingProxyType(
    {
        RI.PUBLISH_QOS1: _QOS1_ON_HELD,
        RI.PUBLISH_QOS1_REFUSED: _QOS1_ON_HELD,
        RI.PUBLISH_OVER_RECEIVE_MAXIMUM: Undefined(
            verdict="violation",
            rules=("MQTT-3.3.4-7",),
            note="never an input on a held identifier: a PUBLISH on it is a duplicate",
        ),
    }
)

RECEIVER_STATES50: Mapping[Method, tuple[ReceiverState, ...]] = MappingProxyType(
    {Method.A: (RS.FREE, RS.STORED), Method.B: (RS.FREE, RS.ID_HELD)}
)


def receiver_table50(method: Method) -> dict[tuple[ReceiverState, ReceiverInput50], Step50]:
    """The whole 5.0 receiver table for one QoS 2 method (its own states only)."""
    states = RECEIVER_STATES50[method]
    common = {key: step for key, step in RECEIVER50_COMMON.items() if key[0] in states}
    return {**common, **RECEIVER50_METHOD[method]}


def sender_step50(state: SenderState, event: SenderInput50) -> Step50 | Undefined:
    return SENDER50.get((state, event)) or UNDEFINED_SENDER50[event]


def receiver_step50(
    method: Method, state: ReceiverState, event: ReceiverInput50
) -> Step50 | Undefined:
    if state not in RECEIVER_STATES50[method]:
        raise ValueError(f"Method {method.value} has no state {state.name}")
    step = RECEIVER50_METHOD[method].get((state, event)) or RECEIVER50_COMMON.get((state, event))
    return step or UNDEFINED_RECEIVER50[event]


#: Which tables each edition uses: "3.x" (:mod:`pubproof.model.flows`) or "5.0" (here).
TABLES_BY_EDITION: Mapping[Edition, str] = MappingProxyType(
    {Edition.V31: "3.x", Edition.V311: "3.x", Edition.V50: "5.0"}
)
METHODS_BY_EDITION50: tuple[Method, ...] = (Method.A, Method.B)
