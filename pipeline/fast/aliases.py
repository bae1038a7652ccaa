"""The compiled twin of the Topic Alias map (:mod:`pubproof.judge.aliases`), for the capture
pipeline's link judges: one direction's receiver map, driven by the model's table.

The same map as the readable one (``tests/test_judge_twins.py``), with the table read once
into a tuple by input (:data:`STEPS`) and the resolution of a PUBLISH apart from the
result the readable map makes (:meth:`TopicAliases.resolve`): the judges call it once per
PUBLISH, and make a result only for a refusal (:mod:`pubproof.pipeline.fast.layout`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from pubproof.judge.aliases import AliasResult, refusal
from pubproof.model.flows50 import PROTOCOL_ERROR, TOPIC_ALIAS_INVALID
from pubproof.model.topic_alias import (
    RECEIVER_ALIAS,
    AliasIn,
    AliasInAction,
    AliasInInput,
    AliasStep,
)

_CODE: Final = {
    AliasInAction.DISCONNECT_PROTOCOL_ERROR: PROTOCOL_ERROR,
    AliasInAction.DISCONNECT_ALIAS_INVALID: TOPIC_ALIAS_INVALID,
}


#: RECEIVER_ALIAS by input (in AliasInInput's order), each a pair (the UNSET step, the SET
#: step): an alias's state is whether the map holds it, so a PUBLISH costs no look-up keyed
#: by enum members (whose hash is a Python call)
Steps = tuple[tuple[AliasStep, AliasStep], ...]


def by_input(table: Mapping[tuple[AliasIn, AliasInInput], AliasStep]) -> Steps:
    """The receiver's table, indexed for :meth:`TopicAliases.resolve`."""
    return tuple((table[AliasIn.UNSET, event], table[AliasIn.SET, event]) for event in AliasInInput)


#: the table read once
STEPS: Final = by_input(RECEIVER_ALIAS)
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

    def resolve(
        self, topic: str, alias: int | None, maximum: int
    ) -> tuple[str | None, AliasStep | None]:
        """The readable map's ``receive`` without its result: the topic name the PUBLISH
        stands for (None: the receiver must close, :meth:`refusal` says why) and the table's
        step (None: no Topic Alias). The judges call it once per PUBLISH."""
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
        """Why a PUBLISH :meth:`resolve` resolved to None makes its receiver close (the
        readable map's :func:`~pubproof.judge.aliases.refusal`)."""
        return refusal(alias, maximum, step)
