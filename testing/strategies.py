"""Hypothesis strategies for implementers who test in Python: packets and move sequences,
each with the model's verdict.

Rules / theory of operation
---------------------------
:func:`packets` draws the bytes of one PUBLISH-family packet of an edition: most of them
valid (a ``P`` drawn field by field and laid out by the model's encoder,
:func:`pubproof.model.wire.encode`), the rest with one fault a receiver must detect (a
reserved flag, QoS 3, DUP on QoS 0, a wildcard, U+0000 or an ill-formed byte in the topic
name, packet identifier 0, a Remaining Length that says too much or too little, the packet
cut short, one byte changed). Whatever was drawn, the verdict is the model's: the bytes
are decoded by :func:`pubproof.model.wire.decode` under the edition and readings, and a
:class:`Judged` carries the packets it accepts or the rule it names with the byte offset.
A decoder under test agrees with the model when it accepts exactly what the model accepts
(:func:`pubproof.testing.fixtures.decoder_agrees`).

:func:`steps` draws a sequence of moves of a few clients of a server
(:class:`~pubproof.testing.moves.Move`), each enabled when it is drawn
(:class:`~pubproof.testing.moves.Plan`), with the model's verdict on each
(:mod:`.expectations`): the packet an invalid move sends and the rule it breaks (the
server must close the connection), the copies the distribution model owes each client for
a PUBLISH or a new subscription, Session Present on a CONNECT. The sequences are what
``pubproof explore`` makes against a live broker; a test makes them against its own
(:func:`pubproof.testing.fixtures.BrokerUnderTest.run`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from pubproof.model import wire
from pubproof.model.editions import Edition, Limits, resolve_readings
from pubproof.model.trace import ACK_TYPE_NAMES, P, ack, publish
from pubproof.testing.expectations import Expected, expect
from pubproof.testing.moves import (
    FILTERS,
    STRAY_KINDS,
    TOPICS,
    Move,
    MoveKind,
    Plan,
    invalid_moves,
)

#: the receiver's limits the 5.0 packets are judged with (a Topic Alias up to 10 is valid)
LIMITS50 = Limits(topic_alias_maximum=10)
#: topic names: plain levels, the characters the rules talk about mixed in
_LEVEL = st.text(st.sampled_from("ab09-_ é温"), min_size=1, max_size=6)
TOPIC_NAMES = st.lists(_LEVEL, min_size=1, max_size=4).map("/".join)


@dataclass(frozen=True, slots=True, kw_only=True)
class Judged:
    """The bytes of one packet and the model's verdict on them."""

    data: bytes
    edition: Edition
    readings: Mapping[str, str] = field(default_factory=dict)
    #: what the model decodes (the packets before any failure)
    packets: tuple[P, ...] = ()
    #: the rule the bytes break (None: the model accepts them), its offset and words
    rule: str | None = None
    offset: int | None = None
    message: str = ""
    #: the fault drawn on purpose ("" for a valid packet): what the strategy did
    fault: str = ""

    @property
    def accepted(self) -> bool:
        """Whether the model accepts the bytes as exactly one packet."""
        return self.rule is None and len(self.packets) == 1


def judged(data: bytes, edition: Edition, readings: Mapping[str, str] | None = None,
           fault: str = "") -> Judged:  # fmt: skip
    """The model's verdict on ``data`` (5.0: with :data:`LIMITS50`)."""
    resolved = resolve_readings(edition, readings)
    limits = LIMITS50 if edition is Edition.V50 else None
    verdict = wire.decode(data, edition, resolved, limits)
    failure = verdict.failure
    return Judged(
        data=data, edition=edition, readings=resolved, packets=tuple(verdict.packets),
        rule=failure.rule if failure else None, offset=failure.offset if failure else None,
        message=failure.message if failure else "", fault=fault,
    )  # fmt: skip


@st.composite
def valid_packets(draw: st.DrawFn, edition: Edition = Edition.V311) -> P:
    """A PUBLISH or acknowledgement ``P`` the model's encoder lays out in ``edition``."""
    if draw(st.integers(0, 3)) == 0:
        kind = draw(st.sampled_from(ACK_TYPE_NAMES))
        packet: Any = ack(kind, draw(st.integers(1, 65535)))
        if edition is Edition.V50 and draw(st.booleans()):
            codes = (0x00, 0x92) if kind in ("PUBREL", "PUBCOMP") else (0x00, 0x10, 0x80, 0x87)
            packet["reason_code"] = draw(st.sampled_from(codes))
        return packet  # type: ignore[no-any-return]
    qos = draw(st.integers(0, 2))
    message: Any = publish(
        topic=draw(TOPIC_NAMES), qos=qos, packet_id=draw(st.integers(1, 65535)) if qos else None,
        payload=draw(st.binary(max_size=40)), dup=bool(qos) and draw(st.booleans()),
        retain=draw(st.booleans()),
    )  # fmt: skip
    if edition is Edition.V50:
        message["properties"] = draw(_properties50())
    return message  # type: ignore[no-any-return]


@st.composite
def _properties50(draw: st.DrawFn) -> dict[str, Any]:
    chosen: dict[str, Any] = {}
    if draw(st.booleans()):
        chosen["message_expiry_interval"] = draw(st.integers(0, 2**32 - 1))
    if draw(st.booleans()):
        chosen["topic_alias"] = draw(st.integers(1, LIMITS50.topic_alias_maximum))
    if draw(st.booleans()):
        chosen["content_type"] = draw(st.sampled_from(("text/plain", "application/json")))
    if draw(st.booleans()):
        chosen["user_properties"] = [["k", draw(st.sampled_from(("v", "é", "")))]]
    if draw(st.booleans()):
        chosen["correlation_data_hex"] = draw(st.binary(max_size=4)).hex()
    return chosen


#: the faults :func:`packets` draws, each a change to valid bytes (how: :func:`_fault`)
FAULTS = ("flags", "qos3", "dup-qos0", "wildcard", "nul", "ill-formed", "packet-id-zero",
          "length-more", "length-less", "cut", "byte")  # fmt: skip


def _fault(name: str, data: bytes, draw: st.DrawFn) -> bytes:
    """``data`` (a valid packet) with the fault ``name`` drawn into it."""
    kind, start = data[0] >> 4, 1 + next(i for i, b in enumerate(data[1:5]) if b < 0x80) + 1
    if name == "flags":
        return bytes((data[0] ^ 0x04 if kind != 3 else data[0] | 0x06,)) + data[1:]
    if name == "qos3":
        return bytes((0x36 | (data[0] & 0x09),)) + data[1:] if kind == 3 else data
    if name == "dup-qos0":
        return bytes(((data[0] & 0xF1) | 0x08,)) + data[1:] if kind == 3 else data
    if name in ("wildcard", "nul", "ill-formed") and kind == 3:
        length = int.from_bytes(data[start : start + 2], "big")
        if length:
            at = start + 2 + draw(st.integers(0, length - 1))
            bad = {"wildcard": b"+", "nul": b"\x00", "ill-formed": b"\xff"}[name]
            return data[:at] + bad + data[at + 1 :]
    if name == "packet-id-zero" and kind == 3 and (data[0] >> 1) & 3:
        at = start + 2 + int.from_bytes(data[start : start + 2], "big")
        return data[:at] + b"\x00\x00" + data[at + 2 :]
    if name in ("length-more", "length-less") and data[1] < 0x7F:
        change = 1 if name == "length-more" else -1
        return data[:1] + bytes((max(0, data[1] + change),)) + data[2:]
    if name == "cut" and len(data) > 1:
        return data[: draw(st.integers(1, len(data) - 1))]
    at = draw(st.integers(0, len(data) - 1))
    return data[:at] + bytes((draw(st.integers(0, 255)),)) + data[at + 1 :]


@st.composite
def packets(
    draw: st.DrawFn,
    edition: Edition = Edition.V311,
    *,
    readings: Mapping[str, str] | None = None,
    faulty: float = 0.4,
) -> Judged:
    """The bytes of one PUBLISH-family packet of ``edition`` with the model's verdict: a
    valid packet, or (about ``faulty`` of the time) one with a fault of :data:`FAULTS`."""
    resolved = resolve_readings(edition, readings)
    packet = draw(valid_packets(edition))
    limits = LIMITS50 if edition is Edition.V50 else None
    data = wire.encode(packet, edition, resolved, limits)
    fault = ""
    if draw(st.integers(0, 99)) < faulty * 100:
        fault = draw(st.sampled_from(FAULTS))
        data = _fault(fault, data, draw)
    return judged(data, edition, resolved, fault)


@dataclass(frozen=True, slots=True, kw_only=True)
class Steps:
    """A sequence of moves of a few clients and the model's verdict on each."""

    edition: Edition
    clients: int
    moves: tuple[Move, ...]
    expected: tuple[Expected, ...]

    def describe(self) -> str:
        """The moves with their verdicts, one a line."""
        pairs = zip(self.moves, self.expected, strict=True)
        lines = [f"{n + 1}. {m.describe()}: {e.describe()}" for n, (m, e) in enumerate(pairs)]
        return "\n".join(lines)


#: the kinds of move a library sequence draws: a wrong answer (MISANSWER) is a fault of the
#: client's own, as an invalid move is, so neither is among them (``invalid``: the sequence
#: may end in one invalid move), nor the explorer's WAIT
STEP_KINDS = tuple(
    k for k in MoveKind if k not in (MoveKind.INVALID, MoveKind.MISANSWER, MoveKind.WAIT)
)


@st.composite
def steps(
    draw: st.DrawFn,
    edition: Edition = Edition.V311,
    *,
    clients: int = 2,
    max_moves: int = 12,
    invalid: bool = False,
) -> Steps:
    """A sequence of at most ``max_moves`` moves of ``clients`` clients (every client
    connects first), each enabled when drawn, with the model's verdict on each; with
    ``invalid``, it may end in one invalid move."""
    plan = Plan(edition, clients)
    made: list[Move] = []
    for client in range(clients):
        made.append(Move(kind=MoveKind.CONNECT, client=client, clean=draw(st.booleans())))
        plan.apply(made[-1])
    kinds = STEP_KINDS
    for _ in range(draw(st.integers(0, max(0, max_moves - clients)))):
        kind = draw(st.sampled_from([k for k in kinds if plan.able(k)]))
        move = Move(kind=kind, client=draw(st.sampled_from(plan.able(kind))),
                    **draw(_fields(kind, edition)))  # fmt: skip
        plan.apply(move)
        made.append(move)
    if invalid and plan.able(MoveKind.INVALID) and draw(st.booleans()):
        names = [n for n in invalid_moves(edition) if n != "over-receive-maximum"]
        made.append(Move(kind=MoveKind.INVALID, client=draw(st.sampled_from(plan.able(
            MoveKind.INVALID))), what=draw(st.sampled_from(names))))  # fmt: skip
    return Steps(edition=edition, clients=clients, moves=tuple(made),
                 expected=expect(made, edition))  # fmt: skip


def _fields(kind: MoveKind, edition: Edition) -> st.SearchStrategy[dict[str, Any]]:
    """The fields of a move of ``kind``."""
    v50 = edition is Edition.V50
    if kind is MoveKind.CONNECT:
        return st.fixed_dictionaries({
            "clean": st.booleans(),
            "session_expiry": st.sampled_from((0, 60)) if v50 else st.just(0),
        })  # fmt: skip
    if kind is MoveKind.PUBLISH:
        return st.fixed_dictionaries({
            "topic": st.sampled_from(TOPICS), "qos": st.integers(0, 2), "retain": st.booleans(),
        })  # fmt: skip
    if kind is MoveKind.SUBSCRIBE:
        return st.fixed_dictionaries({"topic": st.sampled_from(FILTERS), "qos": st.integers(0, 2)})
    if kind is MoveKind.UNSUBSCRIBE:
        return st.fixed_dictionaries({"topic": st.sampled_from(FILTERS)})
    if kind is MoveKind.STRAY:
        return st.fixed_dictionaries({"what": st.sampled_from(STRAY_KINDS)})
    return st.just({})
