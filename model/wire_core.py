"""What every edition's wire decoder shares: verdicts, the byte stream being judged, and
the checks of the encodings MQTT borrows from elsewhere (UTF-8, Unicode's code points),
and the two PUBLISH fields that every edition reads alike (the topic name's length and the
packet identifier).

:mod:`pubproof.model.wire` reads packets with these; :mod:`pubproof.model.wire50` reads the
MQTT 5.0 bodies with them. Nothing here knows a packet type.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition, Limits
from pubproof.model.rules import INCOMPLETE, Rule
from pubproof.model.trace import P

MAX_REMAINING_LENGTH = 268_435_455
WILDCARDS = {"+", "#"}


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
    """The first rule a byte stream breaks."""

    rule: str  # the rule id in the edition used, or "incomplete"
    kind: str  # "malformed", "violation" or "incomplete"
    offset: int
    message: str
    #: MQTT 5.0: the DISCONNECT Reason Code the receiver sends (None in 3.1 and 3.1.1, and
    #: for an incomplete stream)
    reason_code: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """What the model makes of a byte stream: the packets before any failure, and the failure."""

    packets: list[P] = field(default_factory=list)
    failure: Failure | None = None

    @property
    def verdict(self) -> str:
        return "ok" if self.failure is None else self.failure.kind


class Fail(Exception):
    """Raised inside the decoder at the first rule broken; ``decode`` turns it into a verdict."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


class Context:
    """The edition, readings, the receiver's limits and the byte stream being read."""

    def __init__(
        self, data: bytes, edition: Edition, readings: Mapping[str, str], limits: Limits
    ) -> None:
        self.data = data
        self.edition = edition
        self.readings = readings
        self.limits = limits
        self.packet_start = 0

    def fail(self, rule: Rule, offset: int, message: str) -> Fail:
        return Fail(
            Failure(
                rule=rule.id_for(self.edition),
                kind=rule.kind_in(self.edition).value,
                offset=offset,
                message=message,
                reason_code=rule.reason_code_in(self.edition),
            )
        )

    def take(self, offset: int, count: int) -> bytes:
        """The ``count`` bytes at ``offset``; a stream that ends first is incomplete."""
        if offset + count > len(self.data):
            missing = offset + count - len(self.data)
            raise Fail(
                Failure(
                    rule=INCOMPLETE,
                    kind=INCOMPLETE,
                    offset=self.packet_start,
                    message=f"the stream ends inside the packet that starts at offset "
                    f"{self.packet_start}: {missing} more byte(s) needed at least",
                )
            )
        return self.data[offset : offset + count]

    def reading(self, name: str) -> str | None:
        return self.readings.get(name)


def topic_name_length(ctx: Context, body: int, remaining: int) -> int:
    """The topic name's length prefix at ``body``, judged against the Remaining Length."""
    if remaining < 2:
        raise ctx.fail(
            R.PUBLISH_RL_COVERS,
            body,
            f"Remaining Length {remaining} leaves no room for the topic name's length",
        )
    prefix = ctx.take(body, 2)
    length = prefix[0] * 256 + prefix[1]
    if body + 2 + length > body + remaining:
        raise ctx.fail(
            R.PUBLISH_RL_COVERS,
            body,
            f"topic name of {length} bytes does not fit in the {remaining - 2} bytes "
            "the Remaining Length leaves",
        )
    return length


def packet_identifier(ctx: Context, qos: int, position: int, end: int) -> tuple[int | None, int]:
    """A PUBLISH's packet identifier at ``position`` (QoS 1 and 2 only): (it, what follows)."""
    if qos == 0:
        return None, position
    # 3.1.1: "This field is only present for messages of QoS 1 and QoS 2"; 5.0: "The Packet
    # Identifier field is only present in PUBLISH packets where the QoS level is 1 or 2."
    if position + 2 > end:
        raise ctx.fail(
            R.PUBLISH_RL_COVERS,
            position,
            f"QoS {qos} PUBLISH has no room for its packet identifier in the Remaining Length",
        )
    identifier = ctx.take(position, 2)
    packet_id = identifier[0] * 256 + identifier[1]
    if packet_id == 0:
        # [MQTT-2.3.1-1] "... MUST contain a non-zero 16-bit Packet Identifier"; [MQTT-2.2.1-3]
        # "... it MUST assign it a non-zero Packet Identifier"
        raise ctx.fail(R.PACKET_ID_NONZERO, position, "packet identifier 0 is not allowed")
    return packet_id, position + 2


@dataclass(frozen=True, slots=True, kw_only=True)
class StringRules:
    """The rules a string field answers to: ill-formed UTF-8, U+0000, and (topic names
    only) wildcards. Disallowed code points answer to the reading discouraged-code-points."""

    ill_formed: Rule
    nul: Rule | None  # None: U+0000 is allowed (MQTT 3.1, reading topic-rules)
    wildcards: Rule | None = None


def variable_byte_integer(
    ctx: Context,
    start: int,
    *,
    bound: int | None = None,
    past_bound: Rule | None = None,
    at: int = 0,
    what: str = "Variable Byte Integer",
) -> tuple[int, int]:
    """A Variable Byte Integer at ``start`` (3.1.1 2.2.3, 5.0 1.5.5): (value, where it
    ends). A byte it needs at or past ``bound`` breaks ``past_bound`` (judged at ``at``);
    without a bound (the Remaining Length) only the stream's end stops it."""
    value = 0
    for index in range(4):
        if bound is not None and start + index >= bound:
            assert past_bound is not None
            raise ctx.fail(past_bound, at, f"the {what} runs past its bounds")
        (byte,) = ctx.take(start + index, 1)
        value += (byte & 0x7F) << (7 * index)
        if not byte & 0x80:
            length = index + 1
            break
    else:
        # "The maximum number of bytes in the Variable Byte Integer field is four."
        raise ctx.fail(
            R.RL_MAX_BYTES,
            start + 3,
            f"the fourth byte of the {what} has its continuation bit set (at most four "
            "bytes, 268,435,455)",
        )
    if ctx.reading("rl-encoding") == "strict" and length > shortest_length(value):
        # [MQTT-1.5.5-1] (5.0) "The encoded value MUST use the minimum number of bytes
        # necessary to represent the value"; in 3.1 and 3.1.1 only under rl-encoding=strict
        raise ctx.fail(
            R.RL_MINIMAL,
            start,
            f"the {what} {value} is encoded in {length} bytes; {shortest_length(value)} suffice",
        )
    return value, start + length


def well_formed(ctx: Context, offset: int, raw: bytes, rule: Rule, what: str) -> str:
    """The text of a string whose bytes start at ``offset``, if they are well-formed UTF-8."""
    bad = first_ill_formed_utf8(raw)
    if bad is not None:
        # [MQTT-1.5.3-1] / [MQTT-1.5.4-1] "The character data in a UTF-8 Encoded String MUST
        # be well-formed UTF-8 ... MUST NOT include encodings of code points between U+D800
        # and U+DFFF" (5.0: "it is a Malformed Packet")
        raise ctx.fail(
            rule,
            offset + bad,
            f"the {what} is not well-formed UTF-8 at byte {bad} (0x{raw[bad]:02x})",
        )
    return raw.decode("utf-8")


def judge_characters(ctx: Context, offset: int, text: str, rules: StringRules, what: str) -> None:
    """Each character of a well-formed string, left to right: U+0000, the wildcards (where
    ``rules`` name them), then the discouraged code points (reading discouraged-code-points)."""
    reject_discouraged = ctx.reading("discouraged-code-points") == "reject"
    if rules.nul is None and rules.wildcards is None and not reject_discouraged:
        return
    position = offset
    for char in text:
        if rules.nul is not None and char == "\x00":
            # [MQTT-1.5.3-2] / [MQTT-1.5.4-2] "MUST NOT include an encoding of the null
            # character U+0000"
            raise ctx.fail(rules.nul, position, f"the {what} contains U+0000")
        if rules.wildcards is not None and char in WILDCARDS:
            # [MQTT-3.3.2-2] / [MQTT-3.3.2-14] "MUST NOT contain wildcard characters"
            raise ctx.fail(rules.wildcards, position, f"the {what} contains the wildcard {char!r}")
        if reject_discouraged and is_discouraged(char):
            # 3.1.1 1.5.3 "MAY close the Network Connection"; 5.0 1.5.4 "MAY treat it as a
            # Malformed Packet"
            raise ctx.fail(
                R.TOPIC_DISCOURAGED,
                position,
                f"the {what} contains U+{ord(char):04X}, a control character or "
                "non-character it SHOULD NOT contain",
            )
        position += len(char.encode("utf-8"))


def string(ctx: Context, offset: int, raw: bytes, rules: StringRules, what: str) -> str:
    """A UTF-8 Encoded String (5.0 section 1.5.4) whose bytes start at ``offset``:
    ill-formed UTF-8 first, then each character left to right."""
    text = well_formed(ctx, offset, raw, rules.ill_formed, what)
    judge_characters(ctx, offset, text, rules, what)
    return text


def shortest_length(value: int) -> int:
    """How many bytes the shortest Variable Byte Integer encoding of ``value`` takes."""
    length = 1
    while value >= 128**length:
        length += 1
    return length


def encode_remaining_length(value: int) -> bytes:
    """The shortest encoding of a Variable Byte Integer, as section 2.2.3's algorithm (5.0:
    1.5.5) produces it."""
    out = bytearray()
    while True:
        digit, value = value % 128, value // 128
        out.append(digit | (0x80 if value > 0 else 0))
        if value == 0:
            return bytes(out)


def first_ill_formed_utf8(data: bytes) -> int | None:
    """Index of the first byte that does not start a well-formed UTF-8 sequence, or None.

    Written out from Table 3-7 ("Well-Formed UTF-8 Byte Sequences") of the Unicode
    standard, which RFC 3629 restates; it excludes overlong forms, surrogates
    (ED A0..BF) and code points above U+10FFFF.
    """
    tail = (0x80, 0xBF)
    index = 0
    while index < len(data):
        lead = data[index]
        follow: list[tuple[int, int]]
        if lead <= 0x7F:
            follow = []
        elif 0xC2 <= lead <= 0xDF:
            follow = [tail]
        elif lead == 0xE0:
            follow = [(0xA0, 0xBF), tail]
        elif 0xE1 <= lead <= 0xEC or 0xEE <= lead <= 0xEF:
            follow = [tail, tail]
        elif lead == 0xED:
            follow = [(0x80, 0x9F), tail]
        elif lead == 0xF0:
            follow = [(0x90, 0xBF), tail, tail]
        elif 0xF1 <= lead <= 0xF3:
            follow = [tail, tail, tail]
        elif lead == 0xF4:
            follow = [(0x80, 0x8F), tail, tail]
        else:
            return index
        for step, (low, high) in enumerate(follow, start=1):
            if index + step >= len(data) or not low <= data[index + step] <= high:
                return index
        index += 1 + len(follow)
    return None


def is_discouraged(char: str) -> bool:
    """MQTT 3.1.1 section 1.5.3 (5.0: 1.5.4, the Disallowed Unicode code points): control
    characters and non-characters."""
    code = ord(char)
    return (
        0x0001 <= code <= 0x001F
        or 0x007F <= code <= 0x009F
        or 0xFDD0 <= code <= 0xFDEF
        or (code & 0xFFFE) == 0xFFFE
    )


class EncodeError(ValueError):
    """A packet the sender must not send, with the rule it would break."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule
        self.message = message
