"""What the distribution theorems share: the editions, rule ids, results and witnesses.

Rules / theory of operation
---------------------------
A distribution theorem rests on rules of ``Kind.DISTRIBUTION`` (:mod:`pubproof.model.
distribution_rules`, :mod:`pubproof.model.distribution_rules50`); :func:`rule_ids` lists
each rule's id in every edition the theorem covers. Its evidence is a trace of the server
model (:mod:`.distribution_run`): :func:`pair_trace` shows a subscriber with one topic
filter and a publication to one topic name, with the copies the model sends; and
:func:`compare_trace` shows one scenario under two readings, the copies of each run tagged
with the reading that made them (``"reading": "name=value"``), so the difference is there
to read.

A proved theorem is checked for *vacuity* too (:func:`non_vacuous`): its premises must
hold of some case, or the proof says nothing; a check whose premises nothing meets is
"failed", with the case that should have met them as evidence.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pubproof.model.distribution_state import DistributionError
from pubproof.model.editions import Edition
from pubproof.model.rules import Rule
from pubproof.proofs.distribution_run import (
    Action,
    Connect,
    Entry,
    Publish,
    Run,
    Send,
    Subscribe,
    copies_p,
    options,
)
from pubproof.proofs.registry import Result

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50
ALL = (V31, V311, V50)
SUBSCRIBER, PUBLISHER = "sub", "pub"


def rule_ids(rules: Iterable[Rule], editions: Sequence[Edition] = ALL) -> list[str]:
    """The ids of ``rules`` in each of ``editions`` that has them, each once."""
    found: dict[str, None] = {}
    for rule in rules:
        for edition in editions:
            if edition in rule.ids:
                found.setdefault(rule.ids[edition])
    return list(found)


def drain(run: Run, client: str = SUBSCRIBER) -> Run:
    """The server sends the client every copy it owes, in its own order."""
    while client in run.model.sessions and run.owed(client):
        run.do(Send(client))
    return run


def pair_trace(
    topic_filter: str,
    topic: str,
    edition: Edition,
    readings: Mapping[str, str] | None = None,
    *,
    qos: int = 0,
) -> list[Entry]:
    """A subscriber with ``topic_filter``, a PUBLISH to ``topic``, and the copies the
    model sends (a topic name the model refuses ends the trace at the PUBLISH)."""
    run = Run(edition, dict(readings or {}))
    run.do(Connect(SUBSCRIBER))
    run.do(Subscribe(SUBSCRIBER, ((topic_filter, options(qos)),)))
    try:
        run.do(Publish(PUBLISHER, topic, qos=qos))
    except DistributionError:
        return run.trace
    return drain(run).trace


def _to_subscriber(entry: Entry) -> bool:
    return bool(copies_p([entry], SUBSCRIBER))


def compare_trace(
    actions: Sequence[Action],
    edition: Edition,
    name: str,
    values: tuple[str, str],
    readings: Mapping[str, str] | None = None,
) -> tuple[list[Entry], list[list[Entry]]]:
    """``actions`` then every owed copy sent, under reading ``name`` = each of ``values``:
    the trace (the first run's, then the second run's copies to the subscriber), each
    copy tagged with its reading, and the copies of each run."""
    traces, copies = [], []
    for value in values:
        run = drain(Run(edition, {**(readings or {}), name: value}).run(actions))
        tag = f"{name}={value}"
        tagged = [{**e, "reading": tag} if _to_subscriber(e) else e for e in run.trace]
        traces.append(tagged)
        copies.append([e for e in tagged if _to_subscriber(e)])
    return traces[0] + copies[1], copies


def non_vacuous(
    result: Result, satisfied: Sequence[tuple[str, bool]], example: Sequence[Entry]
) -> Result:
    """``result`` (a proof) if every premise named in ``satisfied`` holds of some case;
    else "failed", with ``example`` (a case the premise speaks of) as the evidence."""
    missing = [name for name, found in satisfied if not found]
    if result.status != "proved" or not missing:
        return result
    return Result(
        status="failed",
        counterexample=list(example),
        details=f"vacuous: no case meets {missing[0]}"
        + (f" (nor {len(missing) - 1} more)" if len(missing) > 1 else "")
        + f", so the proof says nothing (yet the example does); {result.details}",
    )


__all__ = [
    "ALL",
    "PUBLISHER",
    "SUBSCRIBER",
    "compare_trace",
    "drain",
    "non_vacuous",
    "pair_trace",
    "rule_ids",
]
