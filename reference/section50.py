"""MQTT 5.0 in the reference decoder: the property section, read and judged property by
property, left to right, as its bytes arrive (docs/guides/mqtt5-wire.md, "the property
section").

The property identifiers and what the decoder reads each as are taken from the model's
table of facts (Table 2-4, :mod:`pubproof.model.properties50`) at import and held against
it, so that the two cannot part silently. :class:`SectionReader50` is the judging path's
reader (the first of the 5.0 classes :class:`pubproof.reference.codec.Decoder` inherits,
see :mod:`pubproof.reference.decode50`): each property's identifier, then its value's
bounds against the declared lengths, then what the value means (once-only properties,
Payload Format Indicator, Topic Alias against the receiver's maximum, Subscription
Identifier). :func:`judge_string` judges a UTF-8 Encoded String, for the decoder and the
encoder (:mod:`pubproof.reference.encode50`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from pubproof.model import wire_rules as R
from pubproof.model.properties50 import ACKS, PROPERTIES, DataType, identifiers
from pubproof.model.rules import Rule
from pubproof.reference.common import ACK_NAMES, DISCOURAGED, DecoderState, _Pending
from pubproof.reference.errors import ProtocolError

#: imported names the per-packet path reads, as this module's own Final names: the
#: compiled build reads those as C statics, not from the module's dict at every use
_ACK_NAMES: Final = ACK_NAMES
_DISCOURAGED: Final = DISCOURAGED

# Property identifiers (MQTT 5.0 section 2.2.2.2, Table 2-4), and which a packet may carry:
# read from the model's table of facts (pubproof.model.properties50) at import, into the
# plain constants and tables the per-packet paths use.
_ID = {row.key: row.identifier for row in PROPERTIES}
_PFI: Final = _ID["payload_format_indicator"]
_MEI: Final = _ID["message_expiry_interval"]
_CONTENT_TYPE: Final = _ID["content_type"]
_RESPONSE_TOPIC: Final = _ID["response_topic"]
_CORRELATION: Final = _ID["correlation_data_hex"]
_SUB_ID: Final = _ID["subscription_identifiers"]
_REASON_STRING: Final = _ID["reason_string"]
_TOPIC_ALIAS: Final = _ID["topic_alias"]
_USER: Final = _ID["user_properties"]
_PUBLISH_IDS = identifiers("PUBLISH")
_ACK_IDS = identifiers(ACKS[0])
_ROWS = [row for row in PROPERTIES if row.identifier in _PUBLISH_IDS | _ACK_IDS]
#: What the code below assumes of each property, held against the table at import so that
#: the two cannot part silently: the value type it reads it as (the fast paths read each
#: type's bytes inline) and (next) which may repeat.
_READ_AS = {
    _PFI: DataType.BYTE,
    _MEI: DataType.FOUR_BYTE_INTEGER,
    _TOPIC_ALIAS: DataType.TWO_BYTE_INTEGER,
    _CONTENT_TYPE: DataType.UTF8_ENCODED_STRING,
    _RESPONSE_TOPIC: DataType.UTF8_ENCODED_STRING,
    _CORRELATION: DataType.BINARY_DATA,
    _SUB_ID: DataType.VARIABLE_BYTE_INTEGER,
    _REASON_STRING: DataType.UTF8_ENCODED_STRING,
    _USER: DataType.UTF8_STRING_PAIR,
}
#: The properties a packet may carry more than once, and those the reading pfi-mei-once
#: decides (``Config.pfi_mei_once``), as the judging path tests them.
_REPEATABLE = frozenset((_USER, _SUB_ID))
_ONCE_BY_READING = frozenset((_PFI, _MEI))
if (
    {row.identifier: row.type for row in _ROWS} != _READ_AS
    or {r.identifier for r in _ROWS if {"PUBLISH", *ACKS} & set(r.repeatable_in)} != _REPEATABLE
    or {row.identifier for row in _ROWS if row.once_reading == "pfi-mei-once"} != _ONCE_BY_READING
):
    raise RuntimeError(
        "the 5.0 decoder reads the properties of PUBLISH and its acknowledgements otherwise "
        "than Table 2-4 (pubproof.model.properties50) says: see _READ_AS, _REPEATABLE, "
        "_ONCE_BY_READING"
    )
#: The fixed-size values: identifier -> size (Byte, Four Byte Integer, Two Byte Integer).
_FIXED_SIZE = {row.identifier: row.type.size for row in _ROWS if row.type.size is not None}
#: UTF-8 Encoded String values: identifier -> (the rule for ill-formed UTF-8 and U+0000,
#: the rule for wildcards or None).
_STRING_RULES: dict[int, tuple[Rule, Rule | None]] = {
    _CONTENT_TYPE: (R.CONTENT_TYPE_STRING, None),
    _RESPONSE_TOPIC: (R.RESPONSE_TOPIC_STRING, R.RESPONSE_TOPIC_WILDCARDS),
    _REASON_STRING: (R.STRING_UTF8, None),
}
_PROPERTY_NAMES = {row.identifier: row.name for row in _ROWS}
_WILDCARD_BYTES = re.compile(rb"[+#]")


def _vbi_size(value: int) -> int:
    """The bytes of the shortest Variable Byte Integer encoding of ``value``."""
    return 1 if value < 128 else 2 if value < 16_384 else 3 if value < 2_097_152 else 4


def judge_string(
    raw: bytes | bytearray,
    start: int,
    utf8: Rule,
    nul: Rule,
    wildcards: Rule | None,
    name: str,
    reject_discouraged: bool,
    fail: Callable[[Rule, int, str], ProtocolError],
) -> str:
    """The UTF-8 Encoded String ``raw`` (at offset ``start``): well-formed, then its first
    offending character (U+0000, a wildcard when ``wildcards`` names a rule, a Disallowed
    code point under the reading); ``fail`` makes the error."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise fail(
            utf8,
            start + error.start,
            f"the {name} is not well-formed UTF-8 at byte {error.start} (0x{raw[error.start]:02x})",
        ) from None
    limit = len(raw)
    found_nul = raw.find(0)
    at_nul = limit if found_nul < 0 else found_nul
    at_wildcard = limit
    if wildcards is not None:
        wildcard = _WILDCARD_BYTES.search(raw)
        if wildcard is not None:
            at_wildcard = wildcard.start()
    at_discouraged = limit
    if reject_discouraged:
        discouraged = _DISCOURAGED.search(text)
        if discouraged is not None:
            at_discouraged = len(text[: discouraged.start()].encode("utf-8"))
    first = min(at_nul, at_wildcard, at_discouraged)
    if first == limit:
        return text
    if first == at_nul:
        raise fail(nul, start + first, f"the {name} contains U+0000")
    if first == at_wildcard:
        assert wildcards is not None
        raise fail(
            wildcards, start + first, f"the {name} contains the wildcard {chr(raw[first])!r}"
        )
    char = text[len(raw[:first].decode("utf-8"))]
    raise fail(
        R.TOPIC_DISCOURAGED,
        start + first,
        f"the {name} contains U+{ord(char):04X}, a Disallowed Unicode code point",
    )


class SectionReader50(DecoderState):
    """The judging path's reader of a 5.0 property section (see the module's docstring):
    the first of the 5.0 classes of :class:`pubproof.reference.codec.Decoder`."""

    __slots__ = ()

    def _properties(self, pending: _Pending) -> bool:
        """Judge the properties from ``pending.cursor``, left to right; False when the
        next one has not all arrived (``cursor`` then names it)."""
        config = self._config
        buf = self._buf
        size = len(buf)
        base = self._base
        at = pending.cursor - base
        stop = pending.section_end - base
        publish = pending.first >> 4 == 3
        valid = _PUBLISH_IDS if publish else _ACK_IDS
        seen = pending.seen
        while at < stop:
            if at >= size:
                pending.cursor = base + at
                return False
            ident = buf[at]
            if ident not in valid:
                raise self._fail(
                    R.PROPERTY_IDENTIFIER,
                    at,
                    f"0x{ident:02X} is not a property identifier of "
                    f"{'PUBLISH' if publish else _ACK_NAMES[pending.first >> 4]}",
                )
            name = _PROPERTY_NAMES[ident]
            v = at + 1
            value: object
            # The value's bounds, judged against the declared lengths first.
            fixed = _FIXED_SIZE.get(ident)
            if fixed is not None:
                nxt = v + fixed
                if nxt > stop:
                    raise self._value_past(at, name)
                if nxt > size:
                    pending.cursor = base + at
                    return False
                number = int.from_bytes(buf[v:nxt], "big")
                value = number
            elif ident == _SUB_ID:
                j = v
                number = shift = 0
                while True:
                    if j >= stop:
                        raise self._value_past(at, name)
                    if j >= size:
                        pending.cursor = base + at
                        return False
                    byte = buf[j]
                    if j - v == 3 and byte & 0x80:
                        raise self._fail(
                            R.RL_MAX_BYTES,
                            j,
                            "the fourth byte of the Subscription Identifier has its "
                            "continuation bit set",
                        )
                    number |= (byte & 0x7F) << shift
                    j += 1
                    if not byte & 0x80:
                        break
                    shift += 7
                if config.strict_rl and j - v > _vbi_size(number):
                    raise self._fail(
                        R.RL_MINIMAL,
                        v,
                        f"Subscription Identifier {number} is encoded in {j - v} bytes; "
                        f"{_vbi_size(number)} suffice",
                    )
                nxt = j
                value = number
            else:
                # A string or Binary Data: its length prefix, then the length it declares,
                # then (a string) its content. A User Property is two strings, the name
                # judged before the value's prefix is read.
                texts: list[str] = []
                j = v
                for _ in range(2 if ident == _USER else 1):
                    if j + 2 > stop:
                        raise self._value_past(at, name)
                    if j + 2 > size:
                        pending.cursor = base + at
                        return False
                    k = j + 2 + (buf[j] << 8 | buf[j + 1])
                    if k > stop:
                        raise self._value_past(at, name)
                    if k > size:
                        pending.cursor = base + at
                        return False
                    if ident == _USER:
                        # [MQTT-1.5.7-1] "Both strings MUST comply with the requirements for
                        # UTF-8 Encoded Strings"
                        texts.append(
                            self._string(j + 2, k, R.STRING_PAIR, R.STRING_PAIR, None, name)
                        )
                    elif ident == _CORRELATION:
                        value = bytes(buf[j + 2 : k])
                    else:
                        rule, wildcards = _STRING_RULES[ident]
                        nul = R.STRING_NUL if ident == _REASON_STRING else rule
                        value = self._string(j + 2, k, rule, nul, wildcards, name)
                    j = k
                nxt = j
                if ident == _USER:
                    value = (texts[0], texts[1])
            # Then what the value means.
            if (
                ident in seen
                and ident != _USER
                and ident != _SUB_ID
                and (config.pfi_mei_once or (ident != _PFI and ident != _MEI))
            ):
                raise self._fail(R.PROPERTY_ONCE, at, f"the {name} appears more than once")
            seen.add(ident)
            if ident == _PFI:
                if number > 1:
                    raise self._fail(
                        R.PAYLOAD_FORMAT_VALUE,
                        at,
                        f"Payload Format Indicator {number}; it is 0 or 1",
                    )
                pending.pfi = number
            elif ident == _MEI:
                pending.mei = number
            elif ident == _TOPIC_ALIAS:
                if number == 0:
                    # [MQTT-3.3.2-8] "A sender MUST NOT send a PUBLISH packet containing a
                    # Topic Alias which has the value 0"
                    raise self._fail(R.TOPIC_ALIAS_ZERO, at, "Topic Alias 0 is not permitted")
                if number > self._alias_max:
                    # 3.3.4: "A Topic Alias value of 0 or greater than the Maximum Topic
                    # Alias is a Protocol Error"
                    raise self._fail(
                        R.TOPIC_ALIAS_MAXIMUM,
                        at,
                        f"Topic Alias {number} is above the receiver's Topic Alias Maximum "
                        f"{self._alias_max}",
                    )
                pending.alias = number
            elif ident == _SUB_ID:
                if number == 0:
                    # 3.3.2.3.8: "It is a Protocol Error if the Subscription Identifier has
                    # a value of 0."
                    raise self._fail(
                        R.SUBSCRIPTION_ID_ZERO, at, "Subscription Identifier 0 is not permitted"
                    )
                pending.sub_ids.append(number)
            elif ident == _USER:
                pending.user.append(value)  # type: ignore[arg-type]
            elif ident == _CONTENT_TYPE:
                pending.content_type = value  # type: ignore[assignment]
            elif ident == _RESPONSE_TOPIC:
                pending.response_topic = value  # type: ignore[assignment]
            elif ident == _CORRELATION:
                pending.correlation = value  # type: ignore[assignment]
            else:
                pending.reason_string = value  # type: ignore[assignment]
            at = nxt
        return True

    def _value_past(self, at: int, name: str) -> ProtocolError:
        return self._fail(
            R.PROPERTY_VALUE, at, f"the {name}'s value runs past the end of the property section"
        )

    def _string(
        self,
        start: int,
        stop: int,
        utf8: Rule,
        nul: Rule,
        wildcards: Rule | None,
        name: str,
    ) -> str:
        """The UTF-8 Encoded String at ``buf[start:stop]``, judged (see judge_string)."""
        return judge_string(
            self._buf[start:stop],
            start,
            utf8,
            nul,
            wildcards,
            name,
            self._config.reject_discouraged,
            self._fail,
        )
