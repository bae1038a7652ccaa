"""Theorems on topic matching: the laws of 4.7, for every filter and topic name up to a bound.

Each law is proved by Z3 on the encoding of :mod:`.distribution_topics` (topic names and
filters of up to four levels, every level any string), under every edition and each value
of reading ``dollar-topics`` in 3.1; then the encoding is cross-checked with the model's
``subscription_matches`` on every pair of the small domain there. Each law's premise must
be met by some pair, matched and not matched, or the proof would say nothing (the check is
then "failed"). A counterexample is a trace of the server model: a subscriber with the
filter, a PUBLISH to the topic name, and what the model sends.

- literal: a filter without wildcards matches exactly the topic name that is itself;
- multi-level: ``p/#`` matches the topic names of ``p`` and below it, ``#`` every one,
  but (where [MQTT-4.7.2-1] holds) no topic name that starts with ``$``;
- single-level: a filter with one ``+`` matches exactly the topic names with any one level
  in its place, but a ``+`` first no ``$`` topic name (where the rule holds);
- and reading ``dollar-topics`` of 3.1 makes a difference (expected refuted: ``#`` and a
  ``$`` topic name).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from pubproof.model import distribution_rules as D
from pubproof.model.editions import Edition
from pubproof.proofs.distribution_common import (
    ALL,
    PUBLISHER,
    SUBSCRIBER,
    compare_trace,
    non_vacuous,
    pair_trace,
    rule_ids,
)
from pubproof.proofs.distribution_run import Action, Connect, Publish, Subscribe, options
from pubproof.proofs.distribution_topics import (
    HASH,
    MODEL,
    PLUS,
    Config,
    Matching,
    Pair,
    configs,
    domain_size,
    drift,
    matches,
    pair,
    strings,
)
from pubproof.proofs.registry import Broken, Result, theorem
from pubproof.proofs.z3env import Expr, search, z3

V31 = Edition.V31


@dataclass(frozen=True, slots=True, kw_only=True)
class Law:
    """A matching law: which pairs it speaks of, and what matching must be for them.

    ``premise`` and ``claim`` take the pair and ``at``, a free position (of the wildcard).
    """

    name: str
    premise: Callable[[Pair, Expr], Expr]
    claim: Callable[[Pair, Expr, bool], Expr]  # the third argument: [MQTT-4.7.2-1] holds
    example: tuple[str, str]  # a filter and topic name the law speaks of


def _at(p: Pair, at: Expr, kind: int) -> Expr:
    """The filter's level ``at`` is a ``kind`` wildcard."""
    return z3.Or(*[z3.And(at == d, k == kind) for d, k in enumerate(p.kinds)])


def _literal_except(p: Pair, at: Expr | None) -> Expr:
    """Every level of the filter is a literal, but the one ``at``."""
    return z3.And(*[
        z3.Implies(z3.And(d < p.filter_levels, *([] if at is None else [at != d])),
                   p.literal(d))
        for d in range(len(p.kinds))
    ])  # fmt: skip


def _no_dollar(p: Pair, at: Expr, rule: bool) -> Expr:
    """A first-level wildcard does not match a "$" topic name, where the rule holds."""
    return z3.Not(z3.And(rule, p.dollar, at == 0))


LITERAL_LAW = Law(
    name="a filter without wildcards",
    premise=lambda p, at: _literal_except(p, None),
    claim=lambda p, at, rule: z3.And(
        p.topic_levels == p.filter_levels, p.same_levels(0, p.filter_levels)
    ),
    example=("a/b", "a/b"),
)
MULTI_LAW = Law(
    name="a filter p/# (p without wildcards)",
    premise=lambda p, at: z3.And(
        p.filter_levels == at + 1, _at(p, at, HASH), _literal_except(p, at)
    ),
    claim=lambda p, at, rule: z3.And(
        p.topic_levels >= at, p.same_levels(0, at), _no_dollar(p, at, rule)
    ),
    example=("a/#", "a"),
)
SINGLE_LAW = Law(
    name="a filter with one '+' (and no other wildcard)",
    premise=lambda p, at: z3.And(
        at >= 0, at < p.filter_levels, _at(p, at, PLUS), _literal_except(p, at)
    ),
    claim=lambda p, at, rule: z3.And(
        p.topic_levels == p.filter_levels,
        p.same_levels(0, p.filter_levels, skip=at),
        _no_dollar(p, at, rule),
    ),
    example=("a/+", "a/b"),
)


def _small(p: Pair) -> list[Expr]:
    """Witnesses a person reads at a glance: few levels, each a different word."""
    distinct = z3.Distinct(*p.topic)
    return [
        z3.And(p.filter_levels <= 2, p.topic_levels <= 2, distinct),
        z3.And(p.filter_levels <= 3, p.topic_levels <= 3),
    ]


def _witness(config: Config, how: Matching, p: Pair, condition: Expr) -> tuple[str, str] | None:
    answer = search(condition, given=[p.well_formed(how.levels, how.hash_offset)], prefer=_small(p))
    return None if answer.model is None else strings(p, answer.model)


def check_law(law: Law, how: Matching) -> Result:
    """Z3 on every config; non-vacuity; the cross-check with the model."""
    p, at = pair(how.levels), z3.Int("at")
    met: dict[str, bool] = {}
    shown = ""
    for config in configs():
        given = [p.well_formed(how.levels, how.hash_offset), law.premise(p, at)]
        matched = matches(p, config.dollar_rule, how)
        expected = law.claim(p, at, config.dollar_rule)
        answer = search(matched != expected, given=given, prefer=_small(p))
        if answer.outcome == "unknown":
            return Result(status="unknown", details=f"{config.describe()}: {answer.reason}")
        if answer.model is not None:
            topic_filter, topic = strings(p, answer.model)
            says = z3.is_true(answer.model.eval(matched, model_completion=True))
            return Result(
                status="refuted",
                counterexample=pair_trace(topic_filter, topic, config.edition, config.readings),
                details=f"under {config.describe()}, {law.name}: the encoding says "
                f"{topic_filter!r} {'matches' if says else 'does not match'} {topic!r}; the "
                f"law says the opposite",
            )
        for side, condition in (("a match", matched), ("a miss", z3.Not(matched))):
            found = _witness(config, how, p, z3.And(*given, condition))
            key = f"{law.name} with {side} under {config.describe()}"
            met[key] = found is not None
            if found is not None and config == configs()[-1]:
                verb = "matches" if side == "a match" else "does not match"
                shown += f"{'; ' if shown else ''}{found[0]!r} {verb} {found[1]!r}"
    proved = Result(
        status="proved",
        details=f"{law.name}: proved for every filter and topic name of 1 to {how.levels} "
        f"levels under {', '.join(c.describe() for c in configs())} (premise met: {shown})",
    )
    example = pair_trace(*law.example, Edition.V311)
    checked = non_vacuous(proved, list(met.items()), example)
    if checked.status != "proved":
        return checked
    drifted = drift(how)
    if drifted is not None:
        return Result(
            status="failed",
            counterexample=pair_trace(
                drifted.topic_filter,
                drifted.topic,
                drifted.config.edition,
                drifted.config.readings,
            ),
            details=drifted.describe(),
        )
    return replace(
        checked, details=f"{checked.details}; agrees with the model on {domain_size()} pairs"
    )


# -- the laws ------------------------------------------------------------------------------

literal_matches_itself = theorem(
    id="dist.match.literal-matches-itself",
    statement="A topic filter without wildcards matches exactly one topic name: itself, "
    "compared level by level, character for character (no normalisation), for every filter "
    "and topic name of up to four levels, in every edition.",
    rules=rule_ids([D.NO_NORMALISATION, D.TOPIC_MATCHES_FILTER, D.TO_SUBSCRIBERS_31]),
    editions=ALL,
    method="z3-int (levels as integers) + cross-check with the model",
    model=(LITERAL_LAW, MODEL),
    mutants=[
        Broken("prefix-matches", "a filter matches every topic name that starts with it "
               "(the end of the filter is not checked)",
               (LITERAL_LAW, replace(MODEL, exact_length=False))),
    ],
)(lambda case: check_law(*case))  # fmt: skip

multi_level = theorem(
    id="dist.match.multi-level",
    statement="A filter p/# (p without wildcards) matches exactly the topic names of p's "
    "level and every level below it, and # alone every topic name; a '#' first never "
    "matches a topic name that starts with '$' where [MQTT-4.7.2-1] holds (3.1.1, 5.0, and "
    "3.1 under dollar-topics=as-3.1.1). For every filter and topic name of up to four levels.",
    rules=rule_ids([D.MULTI_LEVEL, D.DOLLAR_TOPICS, D.TOPIC_MATCHES_FILTER]),
    editions=ALL,
    readings=("dollar-topics",),
    method="z3-int (levels as integers) + cross-check with the model",
    model=(MULTI_LAW, MODEL),
    mutants=[
        Broken("hash-not-the-parent", "'#' needs at least one more level: sport/# does not "
               "match sport", (MULTI_LAW, replace(MODEL, hash_takes_parent=False))),
        Broken("hash-matches-dollar", "the '$' rule forgets '#'",
               (MULTI_LAW, replace(MODEL, dollar_wildcards=frozenset({PLUS})))),
        Broken("hash-never-last", "the encoding's well-formedness puts '#' one level past the "
               "end, so no filter has one and the law holds of nothing",
               (MULTI_LAW, replace(MODEL, hash_offset=0))),
    ],
)(lambda case: check_law(*case))  # fmt: skip

single_level = theorem(
    id="dist.match.single-level",
    statement="A filter with one '+' (and no other wildcard) matches exactly the topic names "
    "with as many levels that equal it everywhere but at the '+', where any one level "
    "(the empty one too) stands; a '+' first never matches a topic name that starts with "
    "'$' where [MQTT-4.7.2-1] holds. For every filter and topic name of up to four levels.",
    rules=rule_ids([D.SINGLE_LEVEL, D.DOLLAR_TOPICS, D.TOPIC_MATCHES_FILTER]),
    editions=ALL,
    readings=("dollar-topics",),
    method="z3-int (levels as integers) + cross-check with the model",
    model=(SINGLE_LAW, MODEL),
    mutants=[
        Broken("plus-takes-the-rest", "a last '+' matches the rest of the topic name, as '#'",
               (SINGLE_LAW, replace(MODEL, plus_takes_one=False))),
        Broken("plus-matches-dollar", "the '$' rule forgets '+'",
               (SINGLE_LAW, replace(MODEL, dollar_wildcards=frozenset({HASH})))),
    ],
)(lambda case: check_law(*case))  # fmt: skip


# -- reading dollar-topics ----------------------------------------------------------------

DOLLAR_VALUES = ("plain", "as-3.1.1")


@theorem(
    id="dist.reading-irrelevant.dollar-topics",
    statement="Under MQTT 3.1, reading dollar-topics makes no difference: plain and as-3.1.1 "
    "match every filter with every topic name alike (expected refuted: a filter starting "
    "with a wildcard and a topic name starting with '$').",
    rules=rule_ids([D.MULTI_LEVEL, D.SINGLE_LEVEL], (V31,)),  # 3.1 states no "$" rule
    editions=(V31,),
    readings=("dollar-topics",),
    method="z3-witness, confirmed by the model",
    expected="refuted",
    model=MODEL,
    mutants=[
        Broken("no-dollar-rule", "the encoding never applies the '$' rule",
               replace(MODEL, dollar_wildcards=frozenset())),
    ],
)  # fmt: skip
def dollar_topics_irrelevant(how: Matching) -> Result:
    p = pair(how.levels)
    plain, rule = (matches(p, on, how) for on in (False, True))
    answer = search(
        plain != rule,
        given=[p.well_formed(how.levels, how.hash_offset)],
        prefer=[z3.And(p.filter_levels == 1, p.topic_levels == 1)],
    )
    if answer.outcome == "unknown":
        return Result(status="unknown", details=answer.reason)
    if answer.model is None:
        return Result(
            status="proved",
            details=f"the readings agree on every filter and topic name of up to {how.levels} "
            "levels",
        )
    topic_filter, topic = strings(p, answer.model)
    actions: list[Action] = [
        Connect(SUBSCRIBER),
        Subscribe(SUBSCRIBER, ((topic_filter, options(0)),)),
        Publish(PUBLISHER, topic),
    ]
    trace, copies = compare_trace(actions, V31, "dollar-topics", DOLLAR_VALUES)
    counts = [len(c) for c in copies]
    if counts[0] == counts[1]:
        return Result(
            status="failed",
            counterexample=trace,
            details=f"Z3 says the readings part on {topic_filter!r} and {topic!r}; the model "
            f"sends {counts[0]} copies under both",
        )
    return Result(
        status="refuted",
        counterexample=trace,
        details=f"confirmed by the model: {topic_filter!r} and the topic name {topic!r}: "
        + ", ".join(
            f"{v} sends {n} cop{'y' if n == 1 else 'ies'}"
            for v, n in zip(DOLLAR_VALUES, counts, strict=True)
        ),
    )


MATCHING_THEOREMS = [literal_matches_itself, multi_level, single_level, dollar_topics_irrelevant]

__all__ = ["MATCHING_THEOREMS", "Law", "check_law"]
