"""Which modules hold theorems, and loading them.

A theorem module registers its theorems when imported; this list is the one place that
names the modules, so that ``pubproof prove`` and the tests see every theorem: the wire
format's, then the QoS flows', then distribution's. A new family of theorems slots in by
adding its module.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from pubproof.proofs.registry import THEOREMS, Theorem

THEOREM_MODULES = (
    "pubproof.proofs.wire",
    "pubproof.proofs.protocol",
    "pubproof.proofs.methods",
    "pubproof.proofs.protocol50",
    "pubproof.proofs.distribution",
)
#: The id prefix of each module's theorems, in the same order: the order of a run does not
#: depend on which module some other code happened to import first.
#: A theorem belongs to the family of the longest prefix it starts with (the MQTT 5.0
#: protocol theorems follow the 3.1 and 3.1.1 ones).
FAMILIES = ("wire.", "proto.", "proto.v5.", "dist.")


class UnknownTheorem(ValueError):
    """A theorem id that no module registers."""


def load(ids: Sequence[str] = ()) -> list[Theorem]:
    """Every registered theorem in registration order, or those named by ``ids``."""
    listed: dict[str, int] = {}
    for module in THEOREM_MODULES:
        # a module may list its theorems in the order of a run (``THEOREM_ORDER``), so that
        # the order does not depend on which of its parts some other code imported first
        for entry in getattr(importlib.import_module(module), "THEOREM_ORDER", ()):
            listed.setdefault(entry.id, len(listed))
    if not ids:

        def family(theorem: Theorem) -> tuple[int, int]:
            matches = [(len(p), i) for i, p in enumerate(FAMILIES) if theorem.id.startswith(p)]
            if matches:
                return max(matches)[1], listed.get(theorem.id, len(listed))
            return len(FAMILIES), len(listed)

        return sorted(THEOREMS.values(), key=family)  # stable: registration order within
    missing = [i for i in ids if i not in THEOREMS]
    if missing:
        raise UnknownTheorem(", ".join(missing))
    return [THEOREMS[i] for i in dict.fromkeys(ids)]


__all__ = ["THEOREM_MODULES", "UnknownTheorem", "load"]
