"""The QoS 1 and QoS 2 publish/acknowledge flows, as transition tables.

Rules / theory of operation
---------------------------
One flow is one application message travelling from a *sender* to a *receiver* (a client
publishing to the server, or the server forwarding to a subscribing client: the rules are
the same in both directions, MQTT 3.1.1 section 4.3). Each end keeps, per packet
identifier, one state; the tables below say, for every (state, input) pair the protocol
defines, which actions the end takes and which state the identifier moves to. A pair that
is not in a table is not defined by the protocol: the session reports it as a violation or
as tolerated, as the pair's entry in ``UNDEFINED_*`` says.

Sender (per packet identifier)::

    FREE --app publish QoS 1--> AWAIT_PUBACK --PUBACK--> FREE            [MQTT-4.3.2-1]
    FREE --app publish QoS 2--> AWAIT_PUBREC --PUBREC/send PUBREL--> AWAIT_PUBCOMP
                                              --PUBCOMP--> FREE           [MQTT-4.3.3-1]
    on reconnect with the session: re-send PUBLISH with DUP=1 (AWAIT_PUBACK, AWAIT_PUBREC)
    or PUBREL (AWAIT_PUBCOMP) [MQTT-4.4.0-1]; on a clean session every state is dropped.

Receiver (per packet identifier), QoS 2 in one of the two methods of 3.1.1 section 4.3.3::

    Method A: FREE --PUBLISH/store, PUBREC--> STORED --PUBREL/deliver, PUBCOMP--> FREE
    Method B: FREE --PUBLISH/deliver, PUBREC--> ID_HELD --PUBREL/PUBCOMP--> FREE
    a duplicate PUBLISH before PUBREL: PUBREC again, nothing delivered  [MQTT-4.3.3-2]
    a PUBREL for an identifier it does not hold: PUBCOMP                [MQTT-4.3.3-2]

QoS 0 and QoS 1 at the receiver hold no state: deliver (and PUBACK for QoS 1).

MQTT 3.1's PUBLISH and PUBREL sections describe Method A ("log the message to persistent
storage, but not yet make it available to interested parties"; on PUBREL "the server makes
the original message available to interested subscribers"); 3.1.1 allows both. (Secondary
accounts of 3.1's QoS 2 flow figure, section 4.1, give Method B too; the ambiguity catalog's
entry qos2-method-a-only says what was checked.)

The tables are data: the bounded explorer (:mod:`pubproof.model.explore`), the Z3
encodings (:mod:`pubproof.proofs`) and the generated diagrams all read them; nothing
restates them by hand.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from pubproof.model.editions import Edition


class Method(enum.Enum):
    """The receiver's QoS 2 method (MQTT 3.1.1 section 4.3.3, Figure 4.3)."""

    A = "A"  # store the message, deliver on PUBREL
    B = "B"  # deliver on PUBLISH, hold the packet identifier until PUBREL


METHODS_BY_EDITION: Mapping[Edition, tuple[Method, ...]] = MappingProxyType(
    {Edition.V31: (Method.A,), Edition.V311: (Method.A, Method.B)}
)


class SenderState(enum.Enum):
    FREE = "free"
    AWAIT_PUBACK = "await PUBACK"
    AWAIT_PUBREC = "await PUBREC"
    AWAIT_PUBCOMP = "await PUBCOMP"


class SenderInput(enum.Enum):
    PUBLISH_QOS1 = "app publishes at QoS 1"
    PUBLISH_QOS2 = "app publishes at QoS 2"
    PUBACK = "PUBACK received"
    PUBREC = "PUBREC received"
    PUBCOMP = "PUBCOMP received"
    RESUME = "reconnected, session resumed"
    CLEAN = "reconnected, clean session"


class SenderAction(enum.Enum):
    SEND_PUBLISH = "send PUBLISH (DUP=0)"
    RESEND_PUBLISH = "send PUBLISH again (DUP=1)"
    SEND_PUBREL = "send PUBREL"
    COMPLETE = "message complete: identifier free"


class ReceiverState(enum.Enum):
    FREE = "free"
    STORED = "message stored (Method A)"
    ID_HELD = "identifier held (Method B)"


class ReceiverInput(enum.Enum):
    PUBLISH_QOS0 = "PUBLISH QoS 0 received"
    PUBLISH_QOS1 = "PUBLISH QoS 1 received"
    PUBLISH_QOS2 = "PUBLISH QoS 2 received"
    PUBREL = "PUBREL received"
    RESUME = "reconnected, session resumed"
    CLEAN = "reconnected, clean session"


class ReceiverAction(enum.Enum):
    DELIVER = "deliver the message to the application"
    STORE = "store the message"
    DELIVER_STORED = "deliver the stored message"
    SEND_PUBACK = "send PUBACK"
    SEND_PUBREC = "send PUBREC"
    SEND_PUBCOMP = "send PUBCOMP"


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """What one end does for one (state, input) pair."""

    actions: tuple[SenderAction, ...] | tuple[ReceiverAction, ...]
    next: SenderState | ReceiverState
    rules: tuple[str, ...]
    note: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Undefined:
    """A (state, input) pair the protocol does not define, and how the session judges it."""

    verdict: str  # "violation" (the peer broke a rule) or "tolerated" (silent: ignored)
    rules: tuple[str, ...]
    note: str


S, SI, SA = SenderState, SenderInput, SenderAction
RS, RI, RA = ReceiverState, ReceiverInput, ReceiverAction


def _s(actions: tuple[SenderAction, ...], nxt: SenderState, *rules: str, note: str = "") -> Step:
    return Step(actions=actions, next=nxt, rules=rules, note=note)


def _r(
    actions: tuple[ReceiverAction, ...], nxt: ReceiverState, *rules: str, note: str = ""
) -> Step:
    return Step(actions=actions, next=nxt, rules=rules, note=note)


SENDER: Mapping[tuple[SenderState, SenderInput], Step] = MappingProxyType(
    {
        # [MQTT-4.3.2-1] "MUST assign an unused Packet Identifier each time it has a new
        # Application Message ... MUST send a PUBLISH Packet containing this Packet
        # Identifier with QoS=1, DUP=0 ... MUST treat the PUBLISH Packet as
        # 'unacknowledged' until it has received the corresponding PUBACK packet from the
        # receiver."
        (S.FREE, SI.PUBLISH_QOS1): _s(
            (SA.SEND_PUBLISH,), S.AWAIT_PUBACK, "MQTT-4.3.2-1", "MQTT-2.3.1-2"
        ),
        (S.AWAIT_PUBACK, SI.PUBACK): _s((SA.COMPLETE,), S.FREE, "MQTT-4.3.2-1", "MQTT-2.3.1-3"),
        # [MQTT-4.3.3-1] "... MUST send a PUBREL packet when it receives a PUBREC packet
        # from the receiver ... MUST NOT re-send the PUBLISH once it has sent the
        # corresponding PUBREL packet."
        (S.FREE, SI.PUBLISH_QOS2): _s(
            (SA.SEND_PUBLISH,), S.AWAIT_PUBREC, "MQTT-4.3.3-1", "MQTT-2.3.1-2"
        ),
        (S.AWAIT_PUBREC, SI.PUBREC): _s((SA.SEND_PUBREL,), S.AWAIT_PUBCOMP, "MQTT-4.3.3-1"),
        (S.AWAIT_PUBCOMP, SI.PUBREC): _s(
            (SA.SEND_PUBREL,),
            S.AWAIT_PUBCOMP,
            "MQTT-4.3.3-1",
            note="a repeated PUBREC (the receiver saw a duplicate PUBLISH): PUBREL again",
        ),
        (S.AWAIT_PUBCOMP, SI.PUBCOMP): _s((SA.COMPLETE,), S.FREE, "MQTT-4.3.3-1", "MQTT-2.3.1-3"),
        # [MQTT-4.4.0-1] "When a Client reconnects with CleanSession set to 0, both the
        # Client and Server MUST re-send any unacknowledged PUBLISH Packets (where QoS > 0)
        # and PUBREL Packets using their original Packet Identifiers."
        # [MQTT-3.3.1-1] "The DUP flag MUST be set to 1 by the Client or Server when it
        # attempts to re-deliver a PUBLISH Packet."
        (S.AWAIT_PUBACK, SI.RESUME): _s(
            (SA.RESEND_PUBLISH,), S.AWAIT_PUBACK, "MQTT-4.4.0-1", "MQTT-3.3.1-1"
        ),
        (S.AWAIT_PUBREC, SI.RESUME): _s(
            (SA.RESEND_PUBLISH,), S.AWAIT_PUBREC, "MQTT-4.4.0-1", "MQTT-3.3.1-1"
        ),
        (S.AWAIT_PUBCOMP, SI.RESUME): _s((SA.SEND_PUBREL,), S.AWAIT_PUBCOMP, "MQTT-4.4.0-1"),
        (S.FREE, SI.RESUME): _s((), S.FREE, "MQTT-4.4.0-1"),
        # A clean session discards the session state (3.1.1 section 3.1.2.4).
        **{(state, SI.CLEAN): _s((), S.FREE, "MQTT-3.1.2-6") for state in S},
    }
)

RECEIVER_COMMON: Mapping[tuple[ReceiverState, ReceiverInput], Step] = MappingProxyType(
    {
        # [MQTT-4.3.1-1] QoS 0: delivered at most once, no response.
        **{
            (state, RI.PUBLISH_QOS0): _r((RA.DELIVER,), state, "MQTT-4.3.1-1", "MQTT-3.3.4-1")
            for state in RS
        },
        # [MQTT-4.3.2-2] "MUST respond with a PUBACK Packet containing the Packet Identifier
        # from the incoming PUBLISH Packet, having accepted ownership of the Application
        # Message. After it has sent a PUBACK Packet the Receiver MUST treat any incoming
        # PUBLISH packet that contains the same Packet Identifier as being a new publication,
        # irrespective of the setting of its DUP flag."
        (RS.FREE, RI.PUBLISH_QOS1): _r(
            (RA.DELIVER, RA.SEND_PUBACK), RS.FREE, "MQTT-4.3.2-2", "MQTT-3.3.4-1"
        ),
        # [MQTT-4.3.3-2] "MUST respond with a PUBCOMP packet containing the same Packet
        # Identifier as the incoming PUBREL packet."  (also for an identifier not held)
        (RS.FREE, RI.PUBREL): _r(
            (RA.SEND_PUBCOMP,), RS.FREE, "MQTT-4.3.3-2", note="PUBREL for an identifier not held"
        ),
        **{(state, RI.RESUME): _r((), state, "MQTT-4.1.0-1") for state in RS},
        **{(state, RI.CLEAN): _r((), RS.FREE, "MQTT-3.1.2-6") for state in RS},
    }
)

RECEIVER_METHOD: Mapping[Method, Mapping[tuple[ReceiverState, ReceiverInput], Step]] = (
    MappingProxyType(
        {
            # Method A: "Store message ... Send PUBREC ... [on PUBREL] Initiate onward delivery
            # of the Application Message ... Send PUBCOMP" (3.1.1 Figure 4.3, first method;
            # 3.1: "log the message to persistent storage, but not yet make it available").
            Method.A: MappingProxyType(
                {
                    (RS.FREE, RI.PUBLISH_QOS2): _r(
                        (RA.STORE, RA.SEND_PUBREC), RS.STORED, "MQTT-4.3.3-2", "MQTT-3.3.4-1"
                    ),
                    (RS.STORED, RI.PUBLISH_QOS2): _r(
                        (RA.SEND_PUBREC,),
                        RS.STORED,
                        "MQTT-4.3.3-2",
                        note="duplicate before PUBREL: acknowledge again, do not deliver",
                    ),
                    (RS.STORED, RI.PUBREL): _r(
                        (RA.DELIVER_STORED, RA.SEND_PUBCOMP), RS.FREE, "MQTT-4.3.3-2"
                    ),
                }
            ),
            # Method B: "Initiate onward delivery of the Application Message ... Store <Packet
            # Identifier> then Send PUBREC ... [on PUBREL] Discard <Packet Identifier> then Send
            # PUBCOMP" (3.1.1 Figure 4.3, second method).
            Method.B: MappingProxyType(
                {
                    (RS.FREE, RI.PUBLISH_QOS2): _r(
                        (RA.DELIVER, RA.SEND_PUBREC), RS.ID_HELD, "MQTT-4.3.3-2", "MQTT-3.3.4-1"
                    ),
                    (RS.ID_HELD, RI.PUBLISH_QOS2): _r(
                        (RA.SEND_PUBREC,),
                        RS.ID_HELD,
                        "MQTT-4.3.3-2",
                        note="duplicate before PUBREL: acknowledge again, do not deliver",
                    ),
                    (RS.ID_HELD, RI.PUBREL): _r((RA.SEND_PUBCOMP,), RS.FREE, "MQTT-4.3.3-2"),
                }
            ),
        }
    )
)

#: Sender pairs the protocol leaves undefined.
UNDEFINED_SENDER: Mapping[SenderInput, Undefined] = MappingProxyType(
    {
        SI.PUBLISH_QOS1: Undefined(
            verdict="violation",
            rules=("MQTT-2.3.1-2",),
            note="a new message on a packet identifier still in use",
        ),
        SI.PUBLISH_QOS2: Undefined(
            verdict="violation",
            rules=("MQTT-2.3.1-2",),
            note="a new message on a packet identifier still in use",
        ),
        SI.PUBACK: Undefined(
            verdict="tolerated",
            rules=("MQTT-3.3.4-1",),
            note="PUBACK for an identifier not awaiting one (unknown, or a QoS 2 flow): ignored",
        ),
        SI.PUBREC: Undefined(
            verdict="tolerated",
            rules=("MQTT-3.3.4-1",),
            note="PUBREC for an identifier not awaiting one: ignored",
        ),
        SI.PUBCOMP: Undefined(
            verdict="tolerated",
            rules=("MQTT-4.3.3-2",),
            note="PUBCOMP for an identifier not awaiting one: ignored",
        ),
    }
)

#: Receiver pairs the protocol leaves undefined.
UNDEFINED_RECEIVER: Mapping[ReceiverInput, Undefined] = MappingProxyType(
    {
        RI.PUBLISH_QOS1: Undefined(
            verdict="violation",
            rules=("MQTT-2.3.1-2", "MQTT-4.3.3-1"),
            note="a QoS 1 PUBLISH on an identifier the sender still holds for a QoS 2 flow",
        ),
    }
)


#: The receiver states each method uses.
RECEIVER_STATES: Mapping[Method, tuple[ReceiverState, ...]] = MappingProxyType(
    {Method.A: (RS.FREE, RS.STORED), Method.B: (RS.FREE, RS.ID_HELD)}
)


def receiver_table(method: Method) -> dict[tuple[ReceiverState, ReceiverInput], Step]:
    """The whole receiver table for one QoS 2 method (its own states only)."""
    states = RECEIVER_STATES[method]
    common = {key: step for key, step in RECEIVER_COMMON.items() if key[0] in states}
    return {**common, **RECEIVER_METHOD[method]}


def sender_step(state: SenderState, event: SenderInput) -> Step | Undefined:
    return SENDER.get((state, event)) or UNDEFINED_SENDER[event]


def receiver_step(method: Method, state: ReceiverState, event: ReceiverInput) -> Step | Undefined:
    if state not in RECEIVER_STATES[method]:
        raise ValueError(f"Method {method.value} has no state {state.name}")
    step = RECEIVER_METHOD[method].get((state, event)) or RECEIVER_COMMON.get((state, event))
    return step or UNDEFINED_RECEIVER[event]
