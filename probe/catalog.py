"""The catalog: every check, in the order a run reports them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from pubproof.model.editions import Edition
from pubproof.probe import (
    checks_flows,
    checks_ids,
    checks_retain,
    checks_session,
    checks_subscribe,
    checks_wire,
)
from pubproof.probe.check import Check

CHECKS: tuple[Check, ...] = (
    *checks_wire.CHECKS,
    *checks_flows.CHECKS,
    *checks_retain.CHECKS,
    *checks_subscribe.CHECKS,
    *checks_session.CHECKS,
    *checks_ids.CHECKS,
)
BY_ID: Mapping[str, Check] = MappingProxyType({c.id: c for c in CHECKS})
assert len(BY_ID) == len(CHECKS), "check ids are unique"


def select(only: Sequence[str], edition: Edition) -> list[Check]:
    """The checks a selection names: a check id, a group (``wire``, ``retain``, ...) or a
    rule id the check rests on. No selection: every check."""
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
