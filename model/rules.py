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
from dataclasses import dataclass, field
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
    #: a rule of the flows (:mod:`pubproof.model.flow_rules`): broken by a sequence of
    #: packets (an answer missing, a packet out of turn), never by the bytes of one
    FLOW = "flow"
    #: a rule of distribution (:mod:`pubproof.model.distribution_rules`): what a server does
    #: with a message across sessions (subscriptions, topic filters, the retained store,
    #: forwarding, queues, ordering), broken by what it sends to whom, never by one flow
    DISTRIBUTION = "distribution"


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
    #: The kind in an edition where it differs from ``kind`` (5.0 names a Malformed Packet
    #: and a Protocol Error where 3.1.1 only says "close the Network Connection").
    kinds: Mapping[Edition, Kind] = field(default_factory=lambda: MappingProxyType({}))
    #: MQTT 5.0: the DISCONNECT Reason Code a receiver sends when the rule is broken, where
    #: the standard names one more specific than 0x81 (Malformed Packet) or 0x82 (Protocol
    #: Error).
    reason_code: int | None = None

    def id_for(self, edition: Edition) -> str:
        try:
            return self.ids[edition]
        except KeyError:
            raise KeyError(f"rule {self.key!r} does not exist in edition {edition.value}") from None

    @property
    def editions(self) -> tuple[Edition, ...]:
        return tuple(self.ids)

    def kind_in(self, edition: Edition) -> Kind:
        """What breaking the rule makes of the bytes in ``edition``."""
        return self.kinds.get(edition, self.kind)

    def reason_code_in(self, edition: Edition) -> int | None:
        """MQTT 5.0: the DISCONNECT Reason Code of a receiver that finds the rule broken
        (0x81 Malformed Packet, 0x82 Protocol Error, or the more specific code the standard
        gives); None in the editions without Reason Codes."""
        if edition.value != "5.0":
            return None
        if self.reason_code is not None:
            return self.reason_code
        return MALFORMED_PACKET if self.kind_in(edition) is Kind.MALFORMED else PROTOCOL_ERROR


class RuleRegistry(Mapping[str, Rule]):
    """All rules, with look-up by id.

    An id names one rule within an edition. Across editions the standard reuses a few
    numbers for other statements (3.1.1's MQTT-2.2.2-1 is about reserved flags, 5.0's about
    the Property Length), so a look-up by id alone prefers 3.1.1, then 3.1, then 5.0, and
    ``by_id(rule_id, edition)`` is exact.

    The registry holds the wire rules (what the codec and the model's decoder judge, by
    key: the mapping itself, which the corpus, the docs and the proofs enumerate), the
    flow rules (``Kind.FLOW``, :mod:`pubproof.model.flow_rules`: what the flow tables and
    the judges cite, by key: :meth:`flow`, all of them: :meth:`flows`) and the distribution
    rules (``Kind.DISTRIBUTION``, :mod:`pubproof.model.distribution_rules`: what the
    distribution model cites, by key: :meth:`distribution`, all of them:
    :meth:`distributions`). All are found by id alike, so a finding cites any as an object.
    """

    def __init__(self) -> None:
        self._by_key: dict[str, Rule] = {}
        self._flows: dict[str, Rule] = {}
        self._distribution: dict[str, Rule] = {}
        self._by_id: dict[str, Rule] = {}
        self._by_edition_id: dict[tuple[Edition, str], Rule] = {}

    def add(self, rule: Rule) -> Rule:
        if rule.key in self._by_key or rule.key in self._flows or rule.key in self._distribution:
            raise ValueError(f"duplicate rule key {rule.key!r}")
        for edition, rule_id in rule.ids.items():
            other = self._by_edition_id.get((edition, rule_id))
            if other is not None and other.key != rule.key:
                raise ValueError(
                    f"rule id {rule_id!r} used by {other.key!r} and {rule.key!r} in "
                    f"edition {edition.value}"
                )
            self._by_edition_id[edition, rule_id] = rule
            known = self._by_id.get(rule_id)
            if known is None or _PREFERENCE[edition] < min(
                _PREFERENCE[e] for e, i in known.ids.items() if i == rule_id
            ):
                self._by_id[rule_id] = rule
        if rule.kind is Kind.FLOW:
            self._flows[rule.key] = rule
        elif rule.kind is Kind.DISTRIBUTION:
            self._distribution[rule.key] = rule
        else:
            self._by_key[rule.key] = rule
        return rule

    def flow(self, key: str) -> Rule:
        """The flow rule registered under ``key``."""
        return self._flows[key]

    def flows(self) -> tuple[Rule, ...]:
        """Every flow rule, in the order registered."""
        return tuple(self._flows.values())

    def distribution(self, key: str) -> Rule:
        """The distribution rule registered under ``key``."""
        return self._distribution[key]

    def distributions(self) -> tuple[Rule, ...]:
        """Every distribution rule, in the order registered."""
        return tuple(self._distribution.values())

    def __getitem__(self, key: str) -> Rule:
        return self._by_key[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_key)

    def __len__(self) -> int:
        return len(self._by_key)

    def by_id(self, rule_id: str, edition: Edition | None = None) -> Rule:
        if edition is not None:
            return self._by_edition_id[edition, rule_id]
        return self._by_id[rule_id]

    def ids(self, edition: Edition) -> list[str]:
        return [r.ids[edition] for r in self._by_key.values() if edition in r.ids]


_PREFERENCE = {Edition.V311: 0, Edition.V31: 1, Edition.V50: 2}

RULES = RuleRegistry()

#: MQTT 5.0 section 4.13.1: "The Reason Codes used for Malformed Packet and Protocol Errors"
MALFORMED_PACKET = 0x81
PROTOCOL_ERROR = 0x82

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
    kinds: dict[Edition, Kind] | None = None,
    reason_code: int | None = None,
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
            kinds=MappingProxyType(kinds or {}),
            reason_code=reason_code,
        )
    )
