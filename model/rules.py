"""The rule: the unit of the specification, and the one registry that holds every rule.

A rule has a stable key (what code refers to), one id per edition it belongs to (the
standard's ``MQTT-x.y.z-n`` where the standard labels the statement; otherwise a project
id, ``PP311-<section>-<slug>`` for unlabelled 3.1.1 text and ``PP31-<section>-<slug>`` for
MQTT 3.1, which has no labels at all), the quoted clause(s), its strength and whom it binds.

Every other part of pubproof (the model's checks, the reference's errors, the vector corpus,
the theorems, the pipeline's violations, the docs' traceability) refers to rules by these
ids and to nothing else. The reference implementation may import this module (ids and texts)
but none of the model's logic.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from pubproof.model.editions import Edition


class Strength(enum.Enum):
    MUST = "MUST"
    MUST_NOT = "MUST NOT"
    SHOULD = "SHOULD"
    SHOULD_NOT = "SHOULD NOT"
    MAY = "MAY"
    DEFINITION = "definition"  # a statement of the format with no RFC 2119 keyword


class Binds(enum.Enum):
    SENDER = "sender"
    RECEIVER = "receiver"
    SENDER_AND_RECEIVER = "sender and receiver"
    CLIENT = "client"
    SERVER = "server"


class Kind(enum.Enum):
    """What breaking the rule makes of the bytes, as the decoder reports it."""

    MALFORMED = "malformed"  # the bytes are not a packet of this kind
    VIOLATION = "violation"  # a well-formed packet that breaks an obligation
    ACCEPT = "accept"  # a rule that only says what is valid (nothing to break on the wire)
    SENDER_ONLY = "sender-only"  # an obligation that the bytes of one packet cannot show


@dataclass(frozen=True, slots=True, kw_only=True)
class Quote:
    """A clause as one source text words it."""

    lang: str  # "en", "de", "ja", "es", "zh"
    source: str  # file or section the words come from
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """One normative statement (or a tightly bound group of them) about the wire format."""

    key: str
    title: str
    ids: Mapping[Edition, str]
    also: tuple[str, ...]  # further ids that say the same thing (3.1.1 often says it twice)
    strength: Strength
    binds: Binds
    kind: Kind
    quotes: tuple[Quote, ...]
    reading: str | None = None  # the reading that switches the rule, if any

    def id_for(self, edition: Edition) -> str:
        try:
            return self.ids[edition]
        except KeyError:
            raise KeyError(f"rule {self.key!r} does not exist in edition {edition.value}") from None

    @property
    def editions(self) -> tuple[Edition, ...]:
        return tuple(self.ids)


class RuleRegistry(Mapping[str, Rule]):
    """All rules by key, with look-up by id."""

    def __init__(self) -> None:
        self._by_key: dict[str, Rule] = {}
        self._by_id: dict[str, Rule] = {}

    def add(self, rule: Rule) -> Rule:
        if rule.key in self._by_key:
            raise ValueError(f"duplicate rule key {rule.key!r}")
        for rule_id in rule.ids.values():
            other = self._by_id.get(rule_id)
            if other is not None and other.key != rule.key:
                raise ValueError(f"rule id {rule_id!r} used by {other.key!r} and {rule.key!r}")
            self._by_id[rule_id] = rule
        self._by_key[rule.key] = rule
        return rule

    def __getitem__(self, key: str) -> Rule:
        return self._by_key[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_key)

    def __len__(self) -> int:
        return len(self._by_key)

    def by_id(self, rule_id: str) -> Rule:
        return self._by_id[rule_id]

    def ids(self, edition: Edition) -> list[str]:
        return [r.ids[edition] for r in self._by_key.values() if edition in r.ids]


RULES = RuleRegistry()

#: The pseudo-rule of a byte stream that ends inside a packet.
INCOMPLETE = "incomplete"


def rule(
    key: str,
    title: str,
    *,
    ids: dict[Edition, str],
    strength: Strength,
    binds: Binds,
    kind: Kind,
    quotes: tuple[Quote, ...],
    also: tuple[str, ...] = (),
    reading: str | None = None,
) -> Rule:
    """Define and register a rule."""
    return RULES.add(
        Rule(
            key=key,
            title=title,
            ids=MappingProxyType(ids),
            also=also,
            strength=strength,
            binds=binds,
            kind=kind,
            quotes=quotes,
            reading=reading,
        )
    )
