"""MQTT 5.0 properties of PUBLISH and its acknowledgements, as frozen, typed values.

Construction checks what holds whatever the edition's readings and the receiver's limits:
each value's data type and range (a Byte, a Two or Four Byte Integer, a Variable Byte
Integer, a string UTF-8 can encode in 65,535 bytes). What a sender may not send although
the type can hold it (a Topic Alias of 0, a Payload Format Indicator of 2, a Subscription
Identifier of 0, U+0000 or wildcards in a string) is refused by
:func:`pubproof.reference.codec.encode`, which names the rule the decoder would break.
"""

from __future__ import annotations

from dataclasses import dataclass

from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition
from pubproof.model.rules import Rule
from pubproof.reference.errors import InvalidPacket
from pubproof.reference.layout import check_layout

_V50 = Edition.V50
#: The largest Variable Byte Integer (four bytes of seven bits).
MAX_VBI = 268_435_455


def _invalid(rule: Rule, message: str) -> InvalidPacket:
    # Properties exist in 5.0 only: the rules are named by their 5.0 ids.
    return InvalidPacket(rule.id_for(_V50), message, edition=_V50.value)


def _check_int(value: object, name: str, top: int, rule: Rule) -> None:
    if value is not None and (type(value) is not int or not 0 <= value <= top):
        raise _invalid(rule, f"{name} is an integer from 0 to {top:,}, not {value!r}")


def _check_string(value: object, name: str, rule: Rule) -> None:
    """A UTF-8 Encoded String: a str without surrogates, at most 65,535 bytes encoded."""
    if value is None:
        return
    if not isinstance(value, str):
        raise _invalid(rule, f"{name} must be a str, not {type(value).__name__}")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        # [MQTT-1.5.4-1] "MUST NOT include encodings of code points between U+D800 and U+DFFF"
        raise _invalid(rule, f"{name} contains a surrogate code point") from None
    if size > 0xFFFF:
        # 1.5.4: "the maximum size of a UTF-8 Encoded String is 65,535 bytes"; a longer
        # one cannot be written: its length prefix would not hold it.
        raise _invalid(R.PROPERTY_VALUE, f"{name} encodes to {size} bytes (at most 65,535)")


def _check_pairs(pairs: object) -> None:
    if type(pairs) is not tuple:
        raise _invalid(R.STRING_PAIR, "user_properties is a tuple of (name, value) tuples")
    for pair in pairs:
        if type(pair) is not tuple or len(pair) != 2:
            raise _invalid(R.STRING_PAIR, f"a user property is a (name, value) tuple, not {pair!r}")
        # [MQTT-1.5.7-1] "Both strings MUST comply with the requirements for UTF-8 Encoded
        # Strings"
        _check_string(pair[0], "a user property's name", R.STRING_PAIR)
        _check_string(pair[1], "a user property's value", R.STRING_PAIR)


@dataclass(frozen=True, slots=True, kw_only=True)
class PublishProperties:
    """The properties of a 5.0 PUBLISH (section 3.3.2.3); ``None`` or ``()`` when absent."""

    payload_format_indicator: int | None = None
    message_expiry_interval: int | None = None
    topic_alias: int | None = None
    response_topic: str | None = None
    correlation_data: bytes | None = None
    user_properties: tuple[tuple[str, str], ...] = ()
    subscription_identifiers: tuple[int, ...] = ()
    content_type: str | None = None

    def __post_init__(self) -> None:
        # Each integer within its data type: Byte, Four Byte Integer, Two Byte Integer.
        _check_int(self.payload_format_indicator, "payload_format_indicator", 0xFF,
                   R.PAYLOAD_FORMAT_VALUE)  # fmt: skip
        _check_int(self.message_expiry_interval, "message_expiry_interval", 0xFFFF_FFFF,
                   R.PROPERTY_VALUE)  # fmt: skip
        _check_int(self.topic_alias, "topic_alias", 0xFFFF, R.TOPIC_ALIAS_MAXIMUM)
        _check_string(self.response_topic, "response_topic", R.RESPONSE_TOPIC_STRING)
        _check_string(self.content_type, "content_type", R.CONTENT_TYPE_STRING)
        data = self.correlation_data
        if data is not None:
            if not isinstance(data, bytes):
                raise _invalid(R.PROPERTY_VALUE, "correlation_data must be bytes")
            if len(data) > 0xFFFF:
                # 1.5.6: Binary Data is "limited to the range of 0 to 65,535 Bytes"
                raise _invalid(R.PROPERTY_VALUE, f"correlation_data is {len(data)} bytes")
        _check_pairs(self.user_properties)
        ids = self.subscription_identifiers
        if type(ids) is not tuple:
            raise _invalid(R.SUBSCRIPTION_ID_ZERO, "subscription_identifiers is a tuple of int")
        for value in ids:
            if type(value) is not int or value < 0:
                raise _invalid(
                    R.SUBSCRIPTION_ID_ZERO, f"a subscription identifier is an int, not {value!r}"
                )
            if value > MAX_VBI:
                # A Variable Byte Integer holds at most 268,435,455: a larger one would need
                # a fourth byte with its continuation bit, which the decoder rejects.
                raise _invalid(R.RL_MAX_BYTES, f"subscription identifier {value:,} > {MAX_VBI:,}")


@dataclass(frozen=True, slots=True, kw_only=True)
class AckProperties:
    """The properties of a 5.0 PUBACK, PUBREC, PUBREL or PUBCOMP (sections 3.4.2.2 ff.)."""

    reason_string: str | None = None
    user_properties: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        _check_string(self.reason_string, "reason_string", R.STRING_UTF8)
        _check_pairs(self.user_properties)


class PublishPropertiesLayout:
    """Internal: the slots of :class:`PublishProperties`, for the decoder's trusted path
    (the layout swap: :mod:`pubproof.reference.layout`)."""

    # The order is that of PublishProperties' fields, which the layout check compares.
    __slots__ = (  # noqa: RUF023
        "payload_format_indicator",
        "message_expiry_interval",
        "topic_alias",
        "response_topic",
        "correlation_data",
        "user_properties",
        "subscription_identifiers",
        "content_type",
    )
    payload_format_indicator: int | None
    message_expiry_interval: int | None
    topic_alias: int | None
    response_topic: str | None
    correlation_data: bytes | None
    user_properties: tuple[tuple[str, str], ...]
    subscription_identifiers: tuple[int, ...]
    content_type: str | None


class AckPropertiesLayout:
    """Internal: the slots of :class:`AckProperties`."""

    __slots__ = ("reason_string", "user_properties")
    reason_string: str | None
    user_properties: tuple[tuple[str, str], ...]


def trusted_publish_properties(
    pfi: int | None,
    mei: int | None,
    alias: int | None,
    response_topic: str | None,
    correlation: bytes | None,
    user: tuple[tuple[str, str], ...],
    sub_ids: tuple[int, ...],
    content_type: str | None,
) -> PublishProperties:
    """A ``PublishProperties`` from values the decoder has already checked."""
    obj = PublishPropertiesLayout()
    obj.payload_format_indicator = pfi
    obj.message_expiry_interval = mei
    obj.topic_alias = alias
    obj.response_topic = response_topic
    obj.correlation_data = correlation
    obj.user_properties = user
    obj.subscription_identifiers = sub_ids
    obj.content_type = content_type
    # the layout swap (reference.layout)
    obj.__class__ = PublishProperties  # type: ignore[assignment]
    return obj  # type: ignore[return-value]


def trusted_ack_properties(
    reason_string: str | None, user: tuple[tuple[str, str], ...]
) -> AckProperties:
    """An ``AckProperties`` from values the decoder has already checked."""
    obj = AckPropertiesLayout()
    obj.reason_string = reason_string
    obj.user_properties = user
    # the layout swap (reference.layout)
    obj.__class__ = AckProperties  # type: ignore[assignment]
    return obj  # type: ignore[return-value]


#: The property sections without properties (immutable, so one object serves every packet).
NO_PUBLISH_PROPERTIES = PublishProperties()
NO_ACK_PROPERTIES = AckProperties()


def _check_layouts() -> None:
    check_layout(PublishPropertiesLayout, PublishProperties)
    check_layout(AckPropertiesLayout, AckProperties)
    made = trusted_publish_properties(1, 2, 3, "r", b"c", (("k", "v"),), (4,), "t")
    expected = PublishProperties(
        payload_format_indicator=1,
        message_expiry_interval=2,
        topic_alias=3,
        response_topic="r",
        correlation_data=b"c",
        user_properties=(("k", "v"),),
        subscription_identifiers=(4,),
        content_type="t",
    )
    if type(made) is not PublishProperties or made != expected or repr(made) != repr(expected):
        raise RuntimeError("trusted_publish_properties does not build a PublishProperties")
    ack = trusted_ack_properties("why", (("k", "v"),))
    if ack != AckProperties(reason_string="why", user_properties=(("k", "v"),)):
        raise RuntimeError("trusted_ack_properties does not build an AckProperties")


_check_layouts()
