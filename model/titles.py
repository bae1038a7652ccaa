"""What the project says a rule id means, in one line, for a person reading a report.

A report cites the ids of the rule registry (:data:`pubproof.model.rules.RULES`): the wire
rules the codec names and the flow rules the flow tables and the judges cite
(:mod:`pubproof.model.flow_rules`). Each has its title there. A rule's further ids (its
``also``, the statements that say the same thing again) read as the normative index's
paraphrase (:mod:`pubproof.model.normative_index`): of the MQTT 3.1.1 statement (Table A),
else of the MQTT 5.0 one (Table B; the 5.0 rules cite 5.0 statements in ``also``), looked
up last so that no 3.1.1 id reads as the 5.0 statement of the same number.

Nothing here words a statement itself: an id none of them holds has no title (None).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from pubproof.model.normative_index import table_a, table_b
from pubproof.model.rules import RULES


class Source(enum.Enum):
    """Where a title was taken from."""

    REGISTRY = "the rule registry"
    INDEX = "the normative index (a paraphrase, not a quotation)"


@dataclass(frozen=True, slots=True, kw_only=True)
class Title:
    """An id's one line and where it comes from."""

    text: str
    source: Source


def title(rule_id: str) -> Title | None:
    """The line the registry (or, for an id only cited in ``also``, the normative index)
    gives ``rule_id``, or None when neither holds it."""
    try:
        return Title(text=RULES.by_id(rule_id).title, source=Source.REGISTRY)
    except KeyError:
        pass
    entry = table_a().get(rule_id) or table_b().get(rule_id)
    if entry is not None:
        return Title(text=entry.paraphrase, source=Source.INDEX)
    return None
