"""The summary table: per implementation endpoint and rule, the count and the first
example, chosen by the smallest (capture, frame, offset) and then the rest of the row, so
the choice never depends on which worker saw what first.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pubproof.pipeline.tables import VIOLATIONS, index

_V = index(VIOLATIONS)
#: the example's order: these columns of the violation row, in this order
EXAMPLE_ORDER = (
    "capture", "frame", "offset", "connection", "direction", "message", "evidence", "source",
)  # fmt: skip
#: the example's columns in the summary row (``example_`` + each)
EXAMPLE_COLUMNS = ("capture", "connection", "frame", "offset", "message", "evidence", "source")
GROUP = ("role", "endpoint", "rule", "kind")


def example_key(row: Sequence[Any]) -> tuple[Any, ...]:
    """The order in which examples are chosen (nulls first, as Spark orders them)."""
    values = (row[_V[c]] for c in EXAMPLE_ORDER)
    return tuple((v is not None, v if v is not None else 0) for v in values)


def summarize(violations: Iterable[Sequence[Any]]) -> list[tuple[Any, ...]]:
    """Summary rows from violation rows."""
    groups: dict[tuple[Any, ...], list[Any]] = {}
    for row in violations:
        key = tuple(row[_V[c]] for c in GROUP)
        entry = groups.get(key)
        if entry is None:
            groups[key] = [1, {row[_V["connection"]]}, row]
            continue
        entry[0] += 1
        entry[1].add(row[_V["connection"]])
        if example_key(row) < example_key(entry[2]):
            entry[2] = row
    return [
        (
            *key,
            count,
            len(connections),
            *(example[_V[c]] for c in EXAMPLE_COLUMNS),
        )
        for key, (count, connections, example) in groups.items()
    ]
