"""What the project says a rule id means, in one line, for a person reading a report.

A report cites wire-format ids (the codec's errors: :data:`pubproof.model.rules.RULES`)
and flow ids (the flow tables, :mod:`pubproof.model.flows`, and the judges built on them).
Each id's line comes from the first of the project's registries that has it:

1. the rule registry: the title of the rule whose id it is, in any edition;
2. the normative index (:mod:`pubproof.model.normative_index`): the paraphrase of the
   MQTT 3.1.1 statement;
3. the flow tables: what the entries citing the id do, in the tables' own words;
4. the normative index's MQTT 5.0 table (the 5.0 rules cite 5.0 statements in ``also``),
   last, so that no 3.1.1 id reads as the 5.0 statement of the same number.

Nothing here words a statement itself: an id none of them holds has no title (None).
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass

from pubproof.model import flows
from pubproof.model.normative_index import table_a, table_b
from pubproof.model.rules import RULES


class Source(enum.Enum):
    """Where a title was taken from."""

    REGISTRY = "the rule registry"
    INDEX = "the normative index (a paraphrase, not a quotation)"
    FLOWS = "the flow tables"


@dataclass(frozen=True, slots=True, kw_only=True)
class Title:
    """An id's one line and where it comes from."""

    text: str
    source: Source


def title(rule_id: str) -> Title | None:
    """The line the project's registries give ``rule_id``, or None when none holds it."""
    try:
        return Title(text=RULES.by_id(rule_id).title, source=Source.REGISTRY)
    except KeyError:
        pass
    entry = table_a().get(rule_id)
    if entry is not None:
        return Title(text=entry.paraphrase, source=Source.INDEX)
    cited = list(dict.fromkeys(_flow_entries(rule_id)))
    if cited:
        return Title(text="; ".join(cited), source=Source.FLOWS)
    entry = table_b().get(rule_id)
    if entry is not None:
        return Title(text=entry.paraphrase, source=Source.INDEX)
    return None


def _flow_entries(rule_id: str) -> Iterator[str]:
    """Each table entry citing ``rule_id`` as ``input: actions -> next state`` (the state it
    leaves is left out, so entries that differ only there read as one), and each undefined
    input citing it as ``input: note (verdict)``."""
    steps: list[tuple[enum.Enum, flows.Step]] = [
        *((event, step) for (_, event), step in flows.SENDER.items()),
        *((event, step) for (_, event), step in flows.RECEIVER_COMMON.items()),
        *(
            (event, step)
            for table in flows.RECEIVER_METHOD.values()
            for (_, event), step in table.items()
        ),
    ]
    for event, step in steps:
        if rule_id in step.rules:
            actions = ", ".join(action.value for action in step.actions)
            did = f"{event.value}: {actions}" if actions else event.value
            yield f"{did} -> {step.next.value}"
    undefined: list[tuple[enum.Enum, flows.Undefined]] = [
        *flows.UNDEFINED_SENDER.items(),
        *flows.UNDEFINED_RECEIVER.items(),
    ]
    for event, entry in undefined:
        if rule_id in entry.rules:
            yield f"{event.value}: {entry.note} ({entry.verdict})"
