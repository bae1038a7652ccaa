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

from pubproof.model.editions import Edition
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


def title(rule_id: str, edition: Edition | None = None) -> Title | None:
    """The line the registry (or, for an id only cited in ``also``, the normative index)
    gives ``rule_id`` in ``edition``, or None when neither holds it.

    Without an edition, 3.1.1 (and 3.1) come first, whole: the registry's rules of those
    editions, then Table A's paraphrase of an id they cite only in ``also``; the 5.0
    registry and Table B only after, since 5.0 numbers its statements afresh (5.0's
    MQTT-4.7.1-1 is about '#', 3.1.1's about wildcards in a topic name)."""
    if edition is not None:
        found = _registered(rule_id, (edition,))
        if found is not None:
            return found
        table = table_b() if edition is Edition.V50 else table_a()
        entry = table.get(rule_id)
        return Title(text=entry.paraphrase, source=Source.INDEX) if entry else None
    found = _registered(rule_id, (Edition.V311, Edition.V31))
    if found is not None:
        return found
    entry = table_a().get(rule_id)
    if entry is not None:
        return Title(text=entry.paraphrase, source=Source.INDEX)
    found = _registered(rule_id, (Edition.V50,))
    if found is not None:
        return found
    entry = table_b().get(rule_id)
    if entry is not None:
        return Title(text=entry.paraphrase, source=Source.INDEX)
    try:  # a project id with no edition of its own in the look-ups above
        return Title(text=RULES.by_id(rule_id).title, source=Source.REGISTRY)
    except KeyError:
        return None


def _registered(rule_id: str, editions: tuple[Edition, ...]) -> Title | None:
    for edition in editions:
        try:
            return Title(text=RULES.by_id(rule_id, edition).title, source=Source.REGISTRY)
        except KeyError:
            continue
    return None
