"""MQTT 5.0 Topic Alias: one direction's receiver map, driven by the model's table.

A receiver keeps, per alias, UNSET or SET to a topic name
(:data:`pubproof.model.topic_alias.RECEIVER_ALIAS`); :class:`TopicAliases` is that state for
one direction of one connection, so a judge can name the topic of a PUBLISH that carries
an alias alone, and say what the receiver must do with an alias it cannot resolve. The
actions carried out are the table's, read at every PUBLISH: map, resolve, or the
DISCONNECT the receiver sends (0x82 Protocol Error for an alias with no mapping, 0x94 Topic
Alias invalid for 0 or above the receiver's Topic Alias Maximum); every mapping goes with
the connection [MQTT-3.3.2-7].
"""

from __future__ import annotations

from dataclasses import dataclass

from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition
from pubproof.model.flows50 import PROTOCOL_ERROR, TOPIC_ALIAS_INVALID
from pubproof.model.topic_alias import (
    ALIAS_ABOVE_MAXIMUM,
    RECEIVER_ALIAS,
    AliasIn,
    AliasInAction,
    AliasInInput,
    AliasStep,
)

V50 = Edition.V50
#: [MQTT-3.3.2-8] "A sender MUST NOT send a PUBLISH packet containing a Topic Alias which
#: has the value 0"
ALIAS_ZERO = R.TOPIC_ALIAS_ZERO.id_for(V50)
#: "It is a Protocol Error if the Topic Name is zero length and there is no Topic Alias."
TOPIC_OR_ALIAS = R.TOPIC_OR_ALIAS.id_for(V50)
#: the DISCONNECT Reason Code of each action that closes the connection
DISCONNECT_CODE = {
    AliasInAction.DISCONNECT_PROTOCOL_ERROR: PROTOCOL_ERROR,
    AliasInAction.DISCONNECT_ALIAS_INVALID: TOPIC_ALIAS_INVALID,
}


@dataclass(frozen=True, slots=True)
class AliasResult:
    """What the receiver makes of one PUBLISH's topic name and alias: the topic name it
    stands for, or (``topic`` None) the DISCONNECT Reason Code the receiver sends, with
    the rules the table cites and its note."""

    topic: str | None
    rules: tuple[str, ...] = ()
    reason_code: int | None = None
    note: str = ""


class TopicAliases:
    """One direction's Topic Alias map (the receiver's), for one connection at a time."""

    def __init__(self) -> None:
        #: alias -> the topic name it is SET to (UNSET: no entry)
        self.mapping: dict[int, str] = {}

    def reset(self) -> None:
        """A new Network Connection: the table's NEW_CONNECTION entry for every alias."""
        for alias in list(self.mapping):
            step = RECEIVER_ALIAS[AliasIn.SET, AliasInInput.NEW_CONNECTION]
            if AliasInAction.FORGET in step.actions:
                del self.mapping[alias]

    def receive(self, topic: str, alias: int | None, maximum: int) -> AliasResult:
        """A PUBLISH with ``topic`` (possibly empty) and ``alias`` (None: no Topic Alias)
        arrives at a receiver whose Topic Alias Maximum is ``maximum``."""
        if alias is None:
            return AliasResult(topic) if topic else refusal(None, maximum, None)
        if not 1 <= alias <= maximum:
            event = AliasInInput.ALIAS_INVALID
        elif topic:
            event = AliasInInput.TOPIC_AND_ALIAS
        else:
            event = AliasInInput.ALIAS_ONLY
        state = AliasIn.SET if alias in self.mapping else AliasIn.UNSET
        step = RECEIVER_ALIAS[state, event]
        resolved = topic
        for action in step.actions:
            if action is AliasInAction.SET_MAPPING:
                self.mapping[alias] = topic
            elif action is AliasInAction.RESOLVE:
                resolved = self.mapping[alias]
            elif action in DISCONNECT_CODE:
                return refusal(alias, maximum, step)
        return AliasResult(resolved, step.rules)


def refusal(alias: int | None, maximum: int, step: AliasStep | None) -> AliasResult:
    """Why a PUBLISH makes its receiver close, the table's ``step`` for its ``alias``
    refusing it (None: no alias, and an empty topic name): the DISCONNECT Reason Code, the
    rule it breaks, a note."""
    if alias is None or step is None:
        note = "an empty topic name and no Topic Alias"
        return AliasResult(None, (TOPIC_OR_ALIAS,), PROTOCOL_ERROR, note)
    reason_code = next(DISCONNECT_CODE[a] for a in step.actions if a in DISCONNECT_CODE)
    rules = step.rules
    if not 1 <= alias <= maximum:
        # the table cites both bounds; the finding cites the one broken
        rules = (ALIAS_ZERO,) if alias == 0 else (ALIAS_ABOVE_MAXIMUM,)
    if alias == 0:
        note = "the Topic Alias is 0"
    elif alias > maximum:
        note = f"the Topic Alias {alias} is above the receiver's maximum {maximum}"
    else:
        note = "an empty topic name with an alias the receiver has no mapping for"
    return AliasResult(None, rules, reason_code, note)
