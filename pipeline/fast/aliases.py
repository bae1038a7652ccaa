"""MQTT 5.0 Topic Alias: one direction's receiver map, driven by the model's table.

A receiver keeps, per alias, UNSET or SET to a topic name
(:data:`pubproof.model.topic_alias.RECEIVER_ALIAS`); :class:`TopicAliases` is that state for
one direction of one connection, so a judge can name the topic of a PUBLISH that carries
an alias alone, and say what the receiver must do with an alias it cannot resolve. The
actions carried out are the table's: map, resolve, or the DISCONNECT the receiver sends
(0x82 Protocol Error for an alias with no mapping, 0x94 Topic Alias invalid for 0 or above
the receiver's Topic Alias Maximum); every mapping goes with the connection
[MQTT-3.3.2-7].
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

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
_CODE: Final = {
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


#: RECEIVER_ALIAS by input (in AliasInInput's order), each a pair (the UNSET step, the SET
#: step): an alias's state is whether the map holds it, so a PUBLISH costs no look-up keyed
#: by enum members (whose hash is a Python call)
Steps = tuple[tuple[AliasStep, AliasStep], ...]


def by_input(table: Mapping[tuple[AliasIn, AliasInInput], AliasStep]) -> Steps:
    """The receiver's table, indexed for :meth:`TopicAliases.resolve`."""
    return tuple((table[AliasIn.UNSET, event], table[AliasIn.SET, event]) for event in AliasInInput)


#: the table read once (the tests' mutants replace it with a mutated table's: so not
#: Final, which the compiled build would read as a C static, past the patched module)
STEPS = by_input(RECEIVER_ALIAS)
_INPUT = {event: i for i, event in enumerate(AliasInInput)}
_TOPIC_AND_ALIAS: Final = _INPUT[AliasInInput.TOPIC_AND_ALIAS]
_ALIAS_ONLY: Final = _INPUT[AliasInInput.ALIAS_ONLY]
_ALIAS_INVALID: Final = _INPUT[AliasInInput.ALIAS_INVALID]
_SET_MAPPING: Final = AliasInAction.SET_MAPPING
_RESOLVE: Final = AliasInAction.RESOLVE


class TopicAliases:
    """One direction's Topic Alias map (the receiver's), for one connection at a time."""

    __slots__ = ("mapping",)

    def __init__(self) -> None:
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
        resolved, step = self.resolve(topic, alias, maximum)
        if resolved is None:
            return self.refusal(topic, alias, maximum, step)
        return AliasResult(resolved, () if step is None else step.rules)

    def resolve(
        self, topic: str, alias: int | None, maximum: int
    ) -> tuple[str | None, AliasStep | None]:
        """:meth:`receive` without its result: the topic name the PUBLISH stands for (None:
        the receiver must close, :meth:`refusal` says why) and the table's step (None: no
        Topic Alias). The judges call it once per PUBLISH."""
        if alias is None:
            return topic or None, None
        if not 1 <= alias <= maximum:
            event = _ALIAS_INVALID
        elif topic:
            event = _TOPIC_AND_ALIAS
        else:
            event = _ALIAS_ONLY
        mapping = self.mapping
        step = STEPS[event][alias in mapping]
        resolved = topic
        for action in step.actions:
            if action is _SET_MAPPING:
                mapping[alias] = topic
            elif action is _RESOLVE:
                resolved = mapping[alias]
            elif action in _CODE:
                return None, step
        return resolved, step

    @staticmethod
    def refusal(topic: str, alias: int | None, maximum: int, step: AliasStep | None) -> AliasResult:
        """Why a PUBLISH :meth:`resolve` resolved to None makes its receiver close: the
        DISCONNECT Reason Code of the table's ``step``, the rules, a note."""
        if alias is None or step is None:
            return AliasResult(
                None, (TOPIC_OR_ALIAS,), PROTOCOL_ERROR,
                "an empty topic name and no Topic Alias",
            )  # fmt: skip
        action = next(a for a in step.actions if a in _CODE)
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
        return AliasResult(None, rules, _CODE[action], note)
