"""The rules the reference's topic checks cite, read from the model's registry: one table
for the subscription and retained-topic indexes (:mod:`.topics`) and for the distribution
core's topic rules (:mod:`.distribution_topics`), so that both name a fault alike and only
by ids the registry knows.

What topic names and topic filters share is a wire rule (as the codec cites it); what only
filters obey is a distribution rule. In MQTT 3.1 a rule the 3.1 text does not state is
cited by its 3.1.1 id, the rule the model applies there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from pubproof.model import wire_rules as W
from pubproof.model.editions import Edition
from pubproof.model.rules import RULES, Rule

V311: Final = Edition.V311
V50: Final = Edition.V50


def cite(found: Rule, edition: Edition) -> str:
    """``found``'s id in ``edition``; in 3.1, where the 3.1 text does not state it, its
    3.1.1 id."""
    ids = found.ids
    return ids[edition] if edition in ids else ids[V311]


def topic_rules(edition: Edition) -> Mapping[str, Rule]:
    """The topic rules by the names the checks use, in ``edition``."""
    dist = RULES.distribution
    return {
        "name-utf8": W.TOPIC_UTF8,
        "filter-utf8": dist("dist.filter.utf8"),
        "max-bytes": W.TOPIC_MAX_BYTES,
        "max-chars": W.TOPIC_MAX_31,
        # 5.0 states "at least one character long" of both in its own words
        "empty": dist("dist50.filter.not-empty") if edition is V50 else W.TOPIC_NOT_EMPTY,
        "nul": W.TOPIC_NUL,
        "name-wildcard": W.TOPIC_NO_WILDCARDS,
        "multi-level": dist("dist.filter.multi-level"),
        "single-level": dist("dist.filter.single-level"),
        "share-name": dist("dist50.shared.share-name"),
        "share-form": dist("dist50.shared.filter"),
    }


def topic_rule_ids() -> dict[str, dict[Edition, str]]:
    """Rule name -> its id in each edition that has the rule (a Shared Subscription's
    rules only in 5.0)."""
    table: dict[str, dict[Edition, str]] = {}
    for edition in Edition:
        for name, found in topic_rules(edition).items():
            if edition in found.ids or V311 in found.ids:
                table.setdefault(name, {})[edition] = cite(found, edition)
    return table
