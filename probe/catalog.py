"""The catalogs: every check of an edition, in the order a run reports them.

MQTT 3.1 and 3.1.1 share one catalog (:data:`CHECKS`); MQTT 5.0 has its own
(:data:`CHECKS50`). A check id names a check within its edition's catalog.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Protocol, TypeVar

from pubproof.model.editions import Edition
from pubproof.probe import (
    checks50_flows,
    checks50_forward,
    checks50_session,
    checks50_wire,
    checks_distribution,
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
    *checks_distribution.CHECKS,
    *checks_session.CHECKS,
    *checks_ids.CHECKS,
)
BY_ID: Mapping[str, Check] = MappingProxyType({c.id: c for c in CHECKS})
assert len(BY_ID) == len(CHECKS), "check ids are unique"

#: the MQTT 5.0 catalog
CHECKS50: tuple[Check, ...] = (
    *checks50_wire.CHECKS,
    *checks50_flows.CHECKS,
    *checks50_forward.CHECKS,
    *checks_distribution.CHECKS,
    *checks50_session.CHECKS,
)
BY_ID50: Mapping[str, Check] = MappingProxyType({c.id: c for c in CHECKS50})
assert len(BY_ID50) == len(CHECKS50), "check ids are unique"


def catalog(edition: Edition) -> tuple[Check, ...]:
    """The checks of ``edition``, in order."""
    return CHECKS50 if edition is Edition.V50 else CHECKS


def by_id(edition: Edition) -> Mapping[str, Check]:
    """The checks of ``edition`` by id."""
    return BY_ID50 if edition is Edition.V50 else BY_ID


class Selectable(Protocol):
    """What a selection reads of a check (a broker check or a client check)."""

    @property
    def id(self) -> str: ...

    def rules_for(self, edition: Edition) -> tuple[str, ...]: ...


AnyCheck = TypeVar("AnyCheck", bound=Selectable)


def pick(checks: Sequence[AnyCheck], only: Sequence[str], edition: Edition) -> list[AnyCheck]:
    """The checks a selection names: a check id, a group (the id's first part) or a rule id
    the check rests on. No selection: every check."""
    if not only:
        return list(checks)
    wanted = set(only)
    return [
        c
        for c in checks
        if c.id in wanted
        or c.id.split(".")[0] in wanted
        or wanted.intersection(c.rules_for(edition))
    ]


def select(only: Sequence[str], edition: Edition) -> list[Check]:
    """The checks a selection names: a check id, a group (``wire``, ``retain``, ...) or a
    rule id the check rests on. No selection: every check of the edition."""
    return pick(catalog(edition), only, edition)
