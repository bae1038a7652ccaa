"""Wrong acknowledgements: the answers a client may give a copy the server sent it, other
than its session's, as the model's flow tables name them.

Rules / theory of operation
---------------------------
A copy the server sent a client that holds back its answers (the WITHHOLD move) leaves
the server's flow on its packet identifier in one state of the sender table: a QoS 1
PUBLISH awaits PUBACK, a QoS 2 PUBLISH awaits PUBREC, a PUBREL awaits PUBCOMP. The wrong
answers at each of those states (:func:`misanswers`) are the acknowledgement inputs of
the edition's sender table (3.x: PUBACK, PUBREC, PUBCOMP; 5.0 by Reason Code as well:
PUBACK and PUBREC with 0x80 Unspecified error, PUBCOMP with 0x92 Packet Identifier not
found) but the one the session sends there (the right kind; 5.0: success). A MISANSWER
move names the acknowledgement (:data:`ANSWERS`) and answers with it the first copy held
back that it is a wrong answer for (:func:`wrong_at`: the move is made whenever the
client holds back any copy but one the answer is right for, so the example need not
guess which copy it holds). The table's entry for (state, input) is what the server may
do, and the judges hold it to that:

- a *defined* entry (5.0: an error Reason Code ends the flow [MQTT-4.4.0-2]; PUBCOMP 0x92
  ends it; a PUBREC while PUBCOMP is awaited is answered with PUBREL again) is a step the
  server must take, as any other;
- an *undefined* one is ``tolerated``: the server ignores it. The client then broke its
  own rule, the receiver's step for that copy (the QoS 1 receiver "MUST respond with a
  PUBACK" [MQTT-4.3.2-2] in 3.1.1, [MQTT-4.3.2-4] in 5.0, and so on): the packet carries
  those rules (``breaks``), and the server may as well close the connection for the
  protocol violation (the close judge accepts it, :func:`pubproof.probe.check.close_findings`).

The copy stays held: when the client acknowledges, its session answers it as it should,
and that answer meets the server's flow in whatever state the wrong one left it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from pubproof.model import flows as f3
from pubproof.model import flows50 as f5
from pubproof.model.editions import Edition
from pubproof.model.flows import Method, ReceiverState, SenderState, Undefined

#: the server's flow state a copy leaves, and the copy: its type and QoS (PUBREL: 0)
COPIES: Mapping[str, tuple[str, int]] = {
    SenderState.AWAIT_PUBACK.name: ("PUBLISH", 1),
    SenderState.AWAIT_PUBREC.name: ("PUBLISH", 2),
    SenderState.AWAIT_PUBCOMP.name: ("PUBREL", 0),
}
#: the first byte of each acknowledgement
FIRST_BYTE: Mapping[str, int] = {"PUBACK": 0x40, "PUBREC": 0x50, "PUBCOMP": 0x70}
#: 5.0: the Reason Code of each kind of acknowledgement input (OK: none, the short form)
REASON: Mapping[str, int | None] = {"OK": None, "ERROR": 0x80, "NOT_FOUND": 0x92}


@dataclass(frozen=True, slots=True, kw_only=True)
class Misanswer:
    """One wrong answer: the server's flow state it meets, the sender table's input, and
    what the table says of the pair."""

    awaiting: str  # the sender state's name: AWAIT_PUBACK, AWAIT_PUBREC, AWAIT_PUBCOMP
    input: str  # the sender input's name: PUBREC, PUBACK_ERROR, PUBCOMP_NOT_FOUND, ...
    kind: str  # the acknowledgement's type
    reason: int | None  # 5.0: its Reason Code (None: the short form, success)
    verdict: str  # "defined", or the undefined entry's verdict
    #: the client's own rules it breaks (an undefined entry: the receiver's step's rules)
    breaks: tuple[str, ...]

    def __post_init__(self) -> None:
        if self.awaiting not in COPIES or self.kind not in FIRST_BYTE:
            raise ValueError(f"a wrong answer meets a flow awaiting an acknowledgement: {self!r}")

    @property
    def name(self) -> str:
        """The move's ``what``: the table's state and input (``AWAIT_PUBACK PUBREC``)."""
        return f"{self.awaiting} {self.input}"

    def packet(self, packet_id: int) -> bytes:
        """The acknowledgement's bytes for ``packet_id``."""
        body = packet_id.to_bytes(2, "big")
        if self.reason is not None:  # 5.0: a Reason Code, no properties
            body += bytes((self.reason,))
        return bytes((FIRST_BYTE[self.kind], len(body))) + body


def _sender_step(edition: Edition, state: SenderState, event: Enum) -> Any:
    if edition is Edition.V50:
        return f5.sender_step50(state, event)  # type: ignore[arg-type]
    return f3.sender_step(state, event)  # type: ignore[arg-type]


def _receiver_rules(edition: Edition, awaiting: str) -> tuple[str, ...]:
    """The rules of the receiver's step for the copy (what its session answers)."""
    v50 = edition is Edition.V50
    r_in: Any = f5.ReceiverInput50 if v50 else f3.ReceiverInput
    state, event = {
        "AWAIT_PUBACK": (ReceiverState.FREE, r_in.PUBLISH_QOS1),
        "AWAIT_PUBREC": (ReceiverState.FREE, r_in.PUBLISH_QOS2),
        "AWAIT_PUBCOMP": (ReceiverState.ID_HELD, r_in["PUBREL_OK" if v50 else "PUBREL"]),
    }[awaiting]
    step: Any = (
        f5.receiver_step50(Method.B, state, event) if v50
        else f3.receiver_step(Method.B, state, event)
    )  # fmt: skip
    return tuple(step.rules)


@functools.cache
def misanswers(edition: Edition) -> Mapping[str, Misanswer]:
    """The wrong answers of ``edition``, by name: every acknowledgement input of its sender
    table at each state a held copy leaves, but the session's own answer there."""
    v50 = edition is Edition.V50
    inputs: Any = f5.SenderInput50 if v50 else f3.SenderInput
    out: dict[str, Misanswer] = {}
    for awaiting in COPIES:
        state = SenderState[awaiting]
        own = awaiting.removeprefix("AWAIT_") + ("_OK" if v50 else "")
        for event in inputs:
            kind, _, code = event.name.partition("_")
            if kind not in FIRST_BYTE or event.name == own:
                continue
            step = _sender_step(edition, state, event)
            undefined = isinstance(step, Undefined)
            answer = Misanswer(
                awaiting=awaiting, input=event.name, kind=kind,
                reason=REASON[code] if v50 else None,
                verdict=step.verdict if undefined else "defined",
                breaks=_receiver_rules(edition, awaiting) if undefined else (),
            )  # fmt: skip
            out[answer.name] = answer
    return out


def answers(edition: Edition) -> tuple[str, ...]:
    """The acknowledgements a MISANSWER move of ``edition`` may send: the sender table's
    inputs that are a wrong answer somewhere (``PUBREC``, ``PUBACK_ERROR``, ...)."""
    return tuple(dict.fromkeys(m.input for m in misanswers(edition).values()))


def wrong_at(edition: Edition, answer: str) -> tuple[str, ...]:
    """The states (by name) of the server's flow where ``answer`` is a wrong answer."""
    return tuple(m.awaiting for m in misanswers(edition).values() if m.input == answer)


#: every acknowledgement a MISANSWER move may send, of any edition (its ``what``)
ANSWERS = frozenset(name for e in Edition for name in answers(e))
