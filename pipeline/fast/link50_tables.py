"""The 5.0 flow tables of the compiled 5.0 link judge (:mod:`pubproof.pipeline.fast.link50`),
read once, at import, from the model's (:mod:`pubproof.model.flows50`).

Each (state, input) of the model's sender and receiver tables (Method B, the one a capture
judges) becomes a frozen typed entry that says only what the judge acts on: the next
state as its position in its enum, the quota taken or released, the PUBREL or answers owed,
the verdict and rules of an undefined step. ``SENDER50[input][state]`` and
``RECEIVER50[input][state]`` hold them all; the tables by input below are the ones the
per-packet path reads (:mod:`pubproof.pipeline.fast.layout`, "Tables compiled to typed
entries"). ``tests/test_judge_twins.py`` holds every entry equal to the model's step.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from pubproof.model.flows import Method, ReceiverState, SenderState
from pubproof.model.flows50 import (
    ACTION_CODE,
    RECEIVER_STATES50,
    ReceiverAction50,
    ReceiverInput50,
    SenderAction50,
    SenderInput50,
    Step50,
    receiver_step50,
    sender_step50,
)
from pubproof.pipeline.fast.link import RECEIVER_STATES_ALL, SENDER_STATES

METHOD = Method.B


@dataclass(frozen=True, slots=True)
class SenderEntry50:
    """A 5.0 sender's table entry for one (state, input)."""

    defined: bool
    next: int  # the next state's position in SenderState (-1 when undefined)
    takes_quota: bool
    releases_quota: bool
    pubrel_code: int | None  # the PUBREL it sends, by its Reason Code
    resends_publish: bool
    verdict: str
    rules: tuple[str, ...]
    note: str


@dataclass(frozen=True, slots=True)
class ReceiverEntry50:
    """A 5.0 receiver's table entry for one (state, input)."""

    defined: bool
    next: int
    replies: tuple[tuple[str, int | None], ...]  # (type, code; None: the refusal's own)
    delivers: bool
    disconnect: int | None  # the DISCONNECT Reason Code it sends
    verdict: str
    rules: tuple[str, ...]
    note: str


_S_INDEX = {state: i for i, state in enumerate(SENDER_STATES)}
_R_INDEX = {state: i for i, state in enumerate(RECEIVER_STATES_ALL)}
SA, SI, RA, RI = SenderAction50, SenderInput50, ReceiverAction50, ReceiverInput50
_PUBREL = {SA.SEND_PUBREL, SA.SEND_PUBREL_NOT_FOUND}
_REPLY = {
    RA.SEND_PUBACK: "PUBACK", RA.SEND_PUBACK_ERROR: "PUBACK",
    RA.SEND_PUBREC: "PUBREC", RA.SEND_PUBREC_ERROR: "PUBREC",
    RA.SEND_PUBCOMP: "PUBCOMP", RA.SEND_PUBCOMP_NOT_FOUND: "PUBCOMP",
}  # fmt: skip


def _sender(state: SenderState, event: SenderInput50) -> SenderEntry50:
    step = sender_step50(state, event)
    if isinstance(step, Step50):
        assert isinstance(step.next, SenderState)
        actions = step.actions
        pubrel = next((ACTION_CODE[a] for a in actions if a in _PUBREL), None)
        return SenderEntry50(
            True, _S_INDEX[step.next], SA.TAKE_QUOTA in actions, SA.RELEASE_QUOTA in actions,
            pubrel, SA.RESEND_PUBLISH in actions, "", step.rules, step.note,
        )  # fmt: skip
    return SenderEntry50(False, -1, False, False, None, False, step.verdict, step.rules, step.note)


def _receiver(state: ReceiverState, event: ReceiverInput50) -> ReceiverEntry50 | None:
    if state not in RECEIVER_STATES50[METHOD]:
        return None
    step = receiver_step50(METHOD, state, event)
    if isinstance(step, Step50):
        assert isinstance(step.next, ReceiverState)
        actions = step.actions
        replies = tuple((_REPLY[a], ACTION_CODE.get(a)) for a in actions if a in _REPLY)
        disconnect = next(
            (ACTION_CODE[a] for a in actions if a is RA.DISCONNECT_RECEIVE_MAXIMUM), None
        )
        return ReceiverEntry50(
            True, _R_INDEX[step.next], replies, RA.DELIVER in actions, disconnect, "",
            step.rules, step.note,
        )  # fmt: skip
    return ReceiverEntry50(False, -1, (), False, None, step.verdict, step.rules, step.note)


#: SENDER50[input][state]
SENDER50: Final[Mapping[SenderInput50, tuple[SenderEntry50, ...]]] = {
    event: tuple(_sender(state, event) for state in SENDER_STATES) for event in SI
}
#: RECEIVER50[input][state] (None for a state Method B does not use)
RECEIVER50: Final[Mapping[ReceiverInput50, tuple[ReceiverEntry50 | None, ...]]] = {
    event: tuple(_receiver(state, event) for state in RECEIVER_STATES_ALL) for event in RI
}
#: the tables the per-packet path reads, by input: [qos][state]
TX_PUBLISH: Final = {1: SENDER50[SI.PUBLISH_QOS1], 2: SENDER50[SI.PUBLISH_QOS2]}
#: the sender's input for an acknowledgement: [kind][code >= 0x80]
TX_ACK: Final = {
    "PUBACK": (SENDER50[SI.PUBACK_OK], SENDER50[SI.PUBACK_ERROR]),
    "PUBREC": (SENDER50[SI.PUBREC_OK], SENDER50[SI.PUBREC_ERROR]),
    "PUBCOMP": (SENDER50[SI.PUBCOMP_OK], SENDER50[SI.PUBCOMP_NOT_FOUND]),
}
RX_PUBLISH: Final = {
    0: RECEIVER50[RI.PUBLISH_QOS0], 1: RECEIVER50[RI.PUBLISH_QOS1],
    2: RECEIVER50[RI.PUBLISH_QOS2],
}  # fmt: skip
RX_REFUSED: Final = {
    1: RECEIVER50[RI.PUBLISH_QOS1_REFUSED],
    2: RECEIVER50[RI.PUBLISH_QOS2_REFUSED],
}
RX_OVER: Final = RECEIVER50[RI.PUBLISH_OVER_RECEIVE_MAXIMUM]
RX_PUBREL: Final = (RECEIVER50[RI.PUBREL_OK], RECEIVER50[RI.PUBREL_NOT_FOUND])
#: the acknowledgements the 5.0 judge's ``peer_acks`` and ``judged_acks`` take
ACKS: Final = frozenset(TX_ACK)
