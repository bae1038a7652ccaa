"""Topic matching in Z3: topic names and topic filters as bounded sequences of levels.

Rules / theory of operation
---------------------------
Matching (4.7) looks at a topic name and a topic filter level by level and asks of a level
only whether two of them are the same string, and of the topic name only whether its first
character is ``$``. So the encoding gives each level an integer (equal integers: the same
string, any other difference unseen) and the topic name one Boolean, ``dollar``; a filter
level is a literal (with its integer), ``+`` or ``#`` (a wildcard occupies a whole level:
[MQTT-4.7.1-2] [MQTT-4.7.1-3]), and ``#`` only as the last level. A topic name has 1 to
``levels`` levels, a filter as many; the integers are unbounded, so a proof covers every
pair of strings with at most ``levels`` levels.

:func:`matches` reads the pair from the first level on, as 4.7.1 describes: ``#`` ends the
match with success (it stands for its parent level and every level below), a topic name
that runs out of levels first fails, ``+`` takes any one level, a literal level must equal
the topic's level, and a filter that ends needs the topic name to end with it. A filter
whose first level is a wildcard never matches a topic name that starts with ``$``
[MQTT-4.7.2-1] where the rule holds (3.1.1, 5.0; 3.1 under reading ``dollar-topics=as-3.1.1``).
A :class:`Matching` holds the choices a mutant may break.

:func:`drift` cross-checks the encoding with the model's own function,
:func:`pubproof.model.topic_filters.subscription_matches`, on every pair of a small domain
(every valid filter and topic name of up to three levels over the empty level, a name and
``$``) under each edition and reading of ``dollar-topics``: the encoding, evaluated on the
pair's values, must give the model's answer. :func:`strings` turns a Z3 model back into a filter and
a topic name a person can read.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from pubproof.model.distribution_readings import DISTRIBUTION_READINGS
from pubproof.model.editions import Edition
from pubproof.model.topic_filters import (
    MULTI,
    SEPARATOR,
    SINGLE,
    is_valid_filter,
    subscription_matches,
)
from pubproof.proofs.z3env import Expr, Model, evaluate, z3

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50
LITERAL, PLUS, HASH = 0, 1, 2
KIND_OF = {SINGLE: PLUS, MULTI: HASH}
DOLLAR = "$"


@dataclass(frozen=True, slots=True, kw_only=True)
class Matching:
    """What the encoding says of matching; each field is a choice a mutant may break."""

    levels: int = 4  # the bound on the levels of a topic name and a filter
    hash_offset: int = 1  # "#" stands at depth filter_levels - 1: it is the last level
    hash_takes_parent: bool = True  # "sport/#" matches "sport" (4.7.1.2)
    plus_takes_one: bool = True  # a last "+" takes exactly one level, not the rest
    exact_length: bool = True  # a filter that ends needs the topic name to end with it
    #: the wildcards that, as the first level, never match a "$" topic name [MQTT-4.7.2-1]
    dollar_wildcards: frozenset[int] = frozenset({PLUS, HASH})


MODEL = Matching()


@dataclass(frozen=True, slots=True)
class Config:
    """An edition and the value of reading ``dollar-topics`` (3.1 only)."""

    edition: Edition
    dollar_topics: str | None = None

    @property
    def readings(self) -> dict[str, str]:
        return {} if self.dollar_topics is None else {"dollar-topics": self.dollar_topics}

    @property
    def dollar_rule(self) -> bool:
        """Whether [MQTT-4.7.2-1] holds: 3.1.1 and 5.0, and 3.1 under ``as-3.1.1``."""
        return self.edition is not V31 or self.dollar_topics == "as-3.1.1"

    def describe(self) -> str:
        reading = f" dollar-topics={self.dollar_topics}" if self.dollar_topics else ""
        return f"{self.edition.value}{reading}"


def configs() -> tuple[Config, ...]:
    """Every edition, and 3.1 under each value of ``dollar-topics``."""
    values = tuple(DISTRIBUTION_READINGS["dollar-topics"].values)
    return (*(Config(V31, v) for v in values), Config(V311), Config(V50))


@dataclass(frozen=True, slots=True)
class Pair:
    """A symbolic topic filter and topic name."""

    filter_levels: Expr  # how many levels the filter has
    kinds: tuple[Expr, ...]  # LITERAL, PLUS or HASH per level
    words: tuple[Expr, ...]  # a literal level's string, as an integer
    topic_levels: Expr
    topic: tuple[Expr, ...]
    dollar: Expr  # the topic name starts with "$"

    def well_formed(self, bound: int, hash_offset: int = 1) -> Expr:
        """The pairs the encoding speaks of: a valid filter and a topic name of 1 to
        ``bound`` levels ("#" only last: [MQTT-4.7.1-2])."""
        last = hash_offset
        return z3.And(
            self.filter_levels >= 1, self.filter_levels <= bound,
            self.topic_levels >= 1, self.topic_levels <= bound,
            *[z3.And(k >= 0, k <= HASH) for k in self.kinds],
            *[z3.Implies(k == HASH, self.filter_levels == d + last)
              for d, k in enumerate(self.kinds)],
        )  # fmt: skip

    def literal(self, depth: int) -> Expr:
        return self.kinds[depth] == LITERAL

    def wildcard_free(self) -> Expr:
        """No wildcard in the filter's levels."""
        return z3.And(*[z3.Implies(d < self.filter_levels, self.literal(d))
                        for d in range(len(self.kinds))])  # fmt: skip

    def same_levels(self, first: int | Expr, last: Expr, skip: Expr | None = None) -> Expr:
        """The filter's literal levels ``first`` .. ``last - 1`` (but ``skip``) are the topic
        name's."""
        return z3.And(*[
            z3.Implies(z3.And(first <= d, d < last, *([] if skip is None else [d != skip])),
                       self.words[d] == self.topic[d])
            for d in range(len(self.words))
        ])  # fmt: skip


def pair(bound: int, tag: str = "") -> Pair:
    """Fresh symbols for a filter and a topic name of up to ``bound`` levels."""
    return Pair(
        filter_levels=z3.Int(f"filter_levels{tag}"),
        kinds=tuple(z3.Int(f"kind{d}{tag}") for d in range(bound)),
        words=tuple(z3.Int(f"word{d}{tag}") for d in range(bound)),
        topic_levels=z3.Int(f"topic_levels{tag}"),
        topic=tuple(z3.Int(f"level{d}{tag}") for d in range(bound)),
        dollar=z3.Bool(f"dollar{tag}"),
    )


def matches(p: Pair, dollar_rule: bool, how: Matching = MODEL) -> Expr:
    """Whether the filter matches the topic name, as ``how`` reads 4.7."""
    bound = len(p.kinds)
    end = p.topic_levels == bound if how.exact_length else p.topic_levels >= bound
    result: Expr = end
    for depth in reversed(range(bound)):
        ended = p.topic_levels == depth if how.exact_length else p.topic_levels >= depth
        # 4.7.1.2: "#" stands for the parent level and any number of child levels
        multi = z3.BoolVal(True) if how.hash_takes_parent else p.topic_levels > depth
        # 4.7.1.3: "+" matches one level (the mutant: a last "+" takes the rest as well)
        single = result if how.plus_takes_one else z3.Or(p.filter_levels == depth + 1, result)
        step = z3.If(
            p.kinds[depth] == HASH,
            multi,
            z3.If(
                p.topic_levels <= depth,
                z3.BoolVal(False),  # the topic name ran out of levels first
                z3.If(
                    p.kinds[depth] == PLUS,
                    single,
                    z3.And(p.words[depth] == p.topic[depth], result),  # [MQTT-4.7.3-4]
                ),
            ),
        )
        result = z3.If(p.filter_levels == depth, ended, step)
    if not dollar_rule:
        return result
    # [MQTT-4.7.2-1] "The Server MUST NOT match Topic Filters starting with a wildcard
    # character (# or +) with Topic Names beginning with a $ character"
    first = z3.Or(*[p.kinds[0] == k for k in sorted(how.dollar_wildcards)])
    return z3.And(z3.Not(z3.And(p.dollar, first)), result)


# -- from a Z3 model back to strings -------------------------------------------------------

NAMES = "abcdefgh"


def strings(p: Pair, model: Model) -> tuple[str, str]:
    """The filter and topic name of a Z3 model: each integer a letter, in order of first
    use, the topic name's first level prefixed with "$" when ``dollar`` holds."""

    def number(term: Expr) -> int:
        return int(model.eval(term, model_completion=True).as_long())

    filter_levels, topic_levels = number(p.filter_levels), number(p.topic_levels)
    kinds = [number(k) for k in p.kinds[:filter_levels]]
    used = [number(w) for d, w in enumerate(p.words[:filter_levels]) if kinds[d] == LITERAL]
    topic = [number(t) for t in p.topic[:topic_levels]]
    names: dict[int, str] = {}
    for n in (*topic, *used):
        names.setdefault(n, NAMES[len(names) % len(NAMES)])
    if z3.is_true(model.eval(p.dollar, model_completion=True)):
        names[topic[0]] = DOLLAR + names[topic[0]]
    levels = [
        SINGLE if k == PLUS else MULTI if k == HASH else names[number(p.words[d])]
        for d, k in enumerate(kinds)
    ]
    return SEPARATOR.join(levels), SEPARATOR.join(names[n] for n in topic)


# -- the cross-check with the model ---------------------------------------------------------

#: the level strings of the cross-check's domain: the empty level, a name, and "$" (a
#: "$" topic name when first, an ordinary level below)
TOPIC_WORDS = ("", "a", DOLLAR)
FILTER_WORDS = ("", "a", DOLLAR, SINGLE, MULTI)
CROSS_LEVELS = 3


@cache
def domain() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The filters and topic names of the cross-check: every valid filter and every topic
    name of up to three levels over the words above."""

    def joined(words: Sequence[str]) -> list[str]:
        return [
            SEPARATOR.join(levels)
            for n in range(1, CROSS_LEVELS + 1)
            for levels in itertools.product(words, repeat=n)
        ]

    filters = tuple(f for f in joined(FILTER_WORDS) if is_valid_filter(f, V311, None))
    return filters, tuple(dict.fromkeys(joined(TOPIC_WORDS)))


def _word_number(word: str) -> int:
    words = tuple(dict.fromkeys((*TOPIC_WORDS, *FILTER_WORDS)))
    return words.index(word)


@dataclass(frozen=True, slots=True)
class Drift:
    """A pair on which the encoding and the model disagree."""

    config: Config
    topic_filter: str
    topic: str
    model_says: bool

    def describe(self) -> str:
        verb = "matches" if self.model_says else "does not match"
        return (
            f"the Z3 encoding and the model disagree under {self.config.describe()}: in the "
            f"model {self.topic_filter!r} {verb} {self.topic!r}, in the encoding not"
        )


def _filter_values(p: Pair, topic_filter: str) -> list[tuple[Expr, Expr]]:
    levels = topic_filter.split(SEPARATOR)
    found = [(p.filter_levels, z3.IntVal(len(levels)))]
    for depth in range(len(p.kinds)):
        word = levels[depth] if depth < len(levels) else ""
        found.append((p.kinds[depth], z3.IntVal(KIND_OF.get(word, LITERAL))))
        found.append((p.words[depth], z3.IntVal(_word_number(word))))
    return found


def _topic_values(p: Pair, topic: str) -> list[tuple[Expr, int]]:
    levels = topic.split(SEPARATOR)
    found = [(p.topic_levels, len(levels)), (p.dollar, int(topic[:1] == DOLLAR))]
    for depth in range(len(p.topic)):
        word = levels[depth] if depth < len(levels) else ""
        found.append((p.topic[depth], _word_number(word)))
    return found


@cache
def drift(how: Matching = MODEL) -> Drift | None:
    """The first pair of the domain on which the encoding under ``how`` and the model's
    ``subscription_matches`` disagree, under any edition and reading; None if none.

    The encoding is evaluated on each pair by substituting its values into the Z3 term
    (the filter first, then each topic name) and simplifying to a constant."""
    filters, topics = domain()
    p = pair(CROSS_LEVELS, "_x")
    rules = (False, True)
    encoded = {rule: matches(p, rule, how) for rule in rules}
    for topic_filter in filters:
        fixed = {r: z3.substitute(encoded[r], *_filter_values(p, topic_filter)) for r in rules}
        for topic in topics:
            values = _topic_values(p, topic)
            says = {r: bool(evaluate(fixed[r], values)) for r in rules}
            for config in configs():
                said = subscription_matches(topic_filter, topic, config.edition, config.readings)
                if says[config.dollar_rule] != said:
                    return Drift(config, topic_filter, topic, said)
    return None


def domain_size() -> int:
    filters, topics = domain()
    return len(filters) * len(topics) * len(configs())


__all__ = [
    "HASH",
    "LITERAL",
    "MODEL",
    "PLUS",
    "Config",
    "Drift",
    "Matching",
    "Pair",
    "configs",
    "domain",
    "domain_size",
    "drift",
    "matches",
    "pair",
    "strings",
]
