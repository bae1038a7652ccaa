"""MQTT 5.0 Topic Alias, as transition tables: per connection, per direction, per alias.

Rules / theory of operation
---------------------------
A Topic Alias (section 3.3.2.3.4) stands for a topic name on one Network Connection in
one direction. The **receiver** keeps, per alias, UNSET or SET (to a topic name): a
PUBLISH with a topic name and an alias sets the mapping (or replaces it), one with an
empty topic name and an alias is resolved through it. An alias the receiver holds no
mapping for is a Protocol Error (DISCONNECT 0x82); an alias of 0 or above the receiver's
Topic Alias Maximum is 0x94 (Topic Alias invalid; the wire format's
``PP50-3.3.4-topic-alias-maximum`` and [MQTT-3.3.2-8]). Every mapping is dropped with the
connection [MQTT-3.3.2-7].

The **sender** keeps, per topic name, NONE or ALIASED. pubproof's sender assigns aliases
1, 2, ... to topic names in the order it first sends them, up to the receiver's Topic
Alias Maximum [MQTT-3.3.2-9, MQTT-3.3.2-11] (0: no aliases [MQTT-3.1.2-27,
MQTT-3.2.2-18]), sends the topic name with the alias the first time on a connection and
the alias alone afterwards, and sends the topic name alone once the aliases are used
up (the standard leaves the choice of aliases to the sender). It forgets them all with
the connection, as the receiver does: a sender that kept them would send an alias alone
that the new connection's receiver never heard.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


class AliasIn(enum.Enum):
    """The receiver's state of one alias."""

    UNSET = "no mapping"
    SET = "mapped to a topic name"


class AliasInInput(enum.Enum):
    TOPIC_AND_ALIAS = "PUBLISH with a topic name and the alias"
    ALIAS_ONLY = "PUBLISH with an empty topic name and the alias"
    ALIAS_INVALID = "PUBLISH with alias 0 or above the Topic Alias Maximum"
    NEW_CONNECTION = "a new Network Connection"


class AliasInAction(enum.Enum):
    SET_MAPPING = "map the alias to the topic name"
    RESOLVE = "read the topic name from the mapping"
    DISCONNECT_PROTOCOL_ERROR = "send DISCONNECT 0x82 and close"
    DISCONNECT_ALIAS_INVALID = "send DISCONNECT 0x94 and close"
    FORGET = "drop the mapping"


class AliasOut(enum.Enum):
    """The sender's state of one topic name."""

    NONE = "no alias"
    ALIASED = "has an alias on this connection"


class AliasOutInput(enum.Enum):
    SEND_ALIAS_FREE = "send a PUBLISH, an alias still free"
    SEND_ALIASES_USED = "send a PUBLISH, every alias used"
    NEW_CONNECTION = "a new Network Connection"


class AliasOutAction(enum.Enum):
    ASSIGN = "take the next alias for the topic name"
    SEND_TOPIC = "send the topic name, no alias"
    SEND_TOPIC_AND_ALIAS = "send the topic name and its alias"
    SEND_ALIAS_ONLY = "send an empty topic name and the alias"
    FORGET = "drop the alias"


@dataclass(frozen=True, slots=True, kw_only=True)
class AliasStep:
    actions: tuple[AliasInAction, ...] | tuple[AliasOutAction, ...]
    next: AliasIn | AliasOut
    rules: tuple[str, ...]
    note: str = ""


IN, II, IA = AliasIn, AliasInInput, AliasInAction
OUT, OI, OA = AliasOut, AliasOutInput, AliasOutAction

UNKNOWN_ALIAS = "PP50-3.3.2-topic-alias-unknown"
ALIAS_ABOVE_MAXIMUM = "PP50-3.3.4-topic-alias-maximum"

RECEIVER_ALIAS: Mapping[tuple[AliasIn, AliasInInput], AliasStep] = MappingProxyType(
    {
        # [MQTT-3.3.2-10] / [MQTT-3.3.2-12] "MUST accept all Topic Alias values greater
        # than 0 and less than or equal to the Topic Alias Maximum value that it sent."
        # 3.3.2.3.4: "If the Topic Name has a length ... and a Topic Alias ... the receiver
        # ... sets the mapping"; a new topic name replaces the old one.
        **{
            (st, II.TOPIC_AND_ALIAS): AliasStep(
                actions=(IA.SET_MAPPING,), next=IN.SET, rules=("MQTT-3.3.2-10", "MQTT-3.3.2-12")
            )
            for st in IN
        },
        (IN.SET, II.ALIAS_ONLY): AliasStep(
            actions=(IA.RESOLVE,), next=IN.SET, rules=("MQTT-3.3.2-10", "MQTT-3.3.2-12")
        ),
        # 3.3.2.3.4: "It is a Protocol Error if the Topic Name is zero length and there
        # is no Topic Alias" mapping established on this connection.
        (IN.UNSET, II.ALIAS_ONLY): AliasStep(
            actions=(IA.DISCONNECT_PROTOCOL_ERROR,), next=IN.UNSET, rules=(UNKNOWN_ALIAS,),
            note="an alias the receiver holds no mapping for: DISCONNECT 0x82",
        ),
        **{
            (st, II.ALIAS_INVALID): AliasStep(
                actions=(IA.DISCONNECT_ALIAS_INVALID,), next=st,
                rules=("MQTT-3.3.2-8", ALIAS_ABOVE_MAXIMUM),
                note="DISCONNECT 0x94 (Topic Alias invalid)",
            )
            for st in IN
        },
        # [MQTT-3.3.2-7] "A receiver MUST NOT carry forward any Topic Alias mappings from
        # one Network Connection to another."
        **{
            (st, II.NEW_CONNECTION): AliasStep(
                actions=(IA.FORGET,) if st is IN.SET else (), next=IN.UNSET, rules=("MQTT-3.3.2-7",)
            )
            for st in IN
        },
    }
)  # fmt: skip

SENDER_ALIAS: Mapping[tuple[AliasOut, AliasOutInput], AliasStep] = MappingProxyType(
    {
        # [MQTT-3.3.2-9] / [MQTT-3.3.2-11] "MUST NOT send a Topic Alias ... greater than
        # the Topic Alias Maximum value returned by the Server in the CONNACK" / "sent by
        # the Client in the CONNECT"; an alias is assigned only while one is free.
        (OUT.NONE, OI.SEND_ALIAS_FREE): AliasStep(
            actions=(OA.ASSIGN, OA.SEND_TOPIC_AND_ALIAS), next=OUT.ALIASED,
            rules=("MQTT-3.3.2-9", "MQTT-3.3.2-11"),
        ),
        (OUT.NONE, OI.SEND_ALIASES_USED): AliasStep(
            actions=(OA.SEND_TOPIC,), next=OUT.NONE, rules=("MQTT-3.3.2-9", "MQTT-3.3.2-11"),
            note="every alias up to the maximum is taken: the topic name alone",
        ),
        **{
            (OUT.ALIASED, event): AliasStep(
                actions=(OA.SEND_ALIAS_ONLY,), next=OUT.ALIASED,
                rules=("MQTT-3.3.2-9", "MQTT-3.3.2-11"),
            )
            for event in (OI.SEND_ALIAS_FREE, OI.SEND_ALIASES_USED)
        },
        # The sender's map is the receiver's: it too lasts one connection [MQTT-3.3.2-7].
        **{
            (st, OI.NEW_CONNECTION): AliasStep(
                actions=(OA.FORGET,) if st is OUT.ALIASED else (), next=OUT.NONE,
                rules=("MQTT-3.3.2-7",),
            )
            for st in OUT
        },
    }
)  # fmt: skip
