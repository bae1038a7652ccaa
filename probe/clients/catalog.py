"""The client catalog: every client check, in the order a run reports them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from pubproof.model.editions import Edition
from pubproof.probe.clients import checks_receiver, checks_sender, checks_wire
from pubproof.probe.clients.check import ClientCheck

CHECKS: tuple[ClientCheck, ...] = (
    *checks_sender.CHECKS,
    *checks_receiver.CHECKS,
    *checks_wire.CHECKS,
)
BY_ID: Mapping[str, ClientCheck] = MappingProxyType({c.id: c for c in CHECKS})
assert len(BY_ID) == len(CHECKS), "client check ids are unique"


def select(only: Sequence[str], edition: Edition) -> list[ClientCheck]:
    """The checks a selection names: a check id, a group (``send``, ``receive``, ``wire``)
    or a rule id the check rests on. No selection: every check."""
    if not only:
        return list(CHECKS)
    wanted = set(only)
    return [
        c
        for c in CHECKS
        if c.id in wanted
        or c.id.split(".")[0] in wanted
        or wanted.intersection(c.rules_for(edition))
    ]
