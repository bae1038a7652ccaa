"""Which modules hold theorems, and loading them.

A theorem module registers its theorems when imported; this list is the one place that
names the modules, so that ``pubproof prove`` and the tests see every theorem: the wire
format's, then the QoS flows'. A new family of theorems slots in by adding its module.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from pubproof.proofs.registry import THEOREMS, Theorem

THEOREM_MODULES = ("pubproof.proofs.wire", "pubproof.proofs.protocol")


class UnknownTheorem(ValueError):
    """A theorem id that no module registers."""


def load(ids: Sequence[str] = ()) -> list[Theorem]:
    """Every registered theorem in registration order, or those named by ``ids``."""
    for module in THEOREM_MODULES:
        importlib.import_module(module)
    if not ids:
        return list(THEOREMS.values())
    missing = [i for i in ids if i not in THEOREMS]
    if missing:
        raise UnknownTheorem(", ".join(missing))
    return [THEOREMS[i] for i in dict.fromkeys(ids)]


__all__ = ["THEOREM_MODULES", "UnknownTheorem", "load"]
