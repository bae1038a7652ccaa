"""The client catalogs: every client check of an edition, in the order a run reports them.

MQTT 3.1 and 3.1.1 share one catalog (:data:`CHECKS`); MQTT 5.0 has its own
(:data:`CHECKS50`). A check id names a check within its edition's catalog.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from pubproof.model.editions import Edition
from pubproof.probe.catalog import pick
from pubproof.probe.clients import (
    checks50_receiver,
    checks50_sender,
    checks50_wire,
    checks_receiver,
    checks_sender,
    checks_wire,
)
from pubproof.probe.clients.check import ClientCheck

CHECKS: tuple[ClientCheck, ...] = (
    *checks_sender.CHECKS,
    *checks_receiver.CHECKS,
    *checks_wire.CHECKS,
)
BY_ID: Mapping[str, ClientCheck] = MappingProxyType({c.id: c for c in CHECKS})
assert len(BY_ID) == len(CHECKS), "client check ids are unique"

#: the MQTT 5.0 client catalog
CHECKS50: tuple[ClientCheck, ...] = (
    *checks50_sender.CHECKS,
    *checks50_receiver.CHECKS,
    *checks50_wire.CHECKS,
)
BY_ID50: Mapping[str, ClientCheck] = MappingProxyType({c.id: c for c in CHECKS50})
assert len(BY_ID50) == len(CHECKS50), "5.0 client check ids are unique"


def catalog(edition: Edition) -> tuple[ClientCheck, ...]:
    """The client checks of ``edition``, in order."""
    return CHECKS50 if edition is Edition.V50 else CHECKS


def by_id(edition: Edition) -> Mapping[str, ClientCheck]:
    """The client checks of ``edition`` by id."""
    return BY_ID50 if edition is Edition.V50 else BY_ID


def select(only: Sequence[str], edition: Edition) -> list[ClientCheck]:
    """The checks a selection names: a check id, a group (``send``, ``receive``, ``wire``)
    or a rule id the check rests on. No selection: every check of the edition."""
    return pick(catalog(edition), only, edition)
