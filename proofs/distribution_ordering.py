"""Theorems on ordering (4.6): the order the server must keep, kept for every interleaving;
and where the texts do not promise an order, the shortest trace that shows it.

Each is checked by the explorer of :mod:`.distribution_explore` on a small world: two
publishers on two topics, at QoS 0, 1 and 2 (one message retained), one subscriber that
keeps its session, subscribes with two overlapping filters, loses its connection once and
comes back (and, where it matters, subscribes again), and the server sending what it owes
in its own order. Every interleaving is searched; the copies sent are judged after every
move by :func:`pubproof.model.ordering.ordering_problems` under the readings in question
(or, for a claim beyond the texts, by that claim).

- ``dist.order.kept``: the model keeps the order of 4.6 in every edition, under every value
  of ``ordering-qos`` and ``queue-qos0`` (``ordering-retained=live-only``; the oracle's one
  copy for overlapping subscriptions);
- ``dist.refute.order-across-qos``: a publisher's messages on a topic reach a subscriber in
  the order published whatever their QoS (expected refuted: 4.6 orders "the same Topic
  and QoS" only, and a server may keep a QoS 0 copy for a session that is away, or not);
- ``dist.refute.order-retained-all``: under ``ordering-retained=all``, a server that
  re-sends the retained messages on a repeated SUBSCRIBE [MQTT-3.8.4-3] keeps the order
  (expected refuted: the retained message re-sent comes after a later message of its
  publisher that has already gone, so no server can keep it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import product

from pubproof.model import distribution_rules as D
from pubproof.model import distribution_rules50 as D50
from pubproof.model.distribution_readings import DISTRIBUTION_READINGS
from pubproof.model.editions import Edition
from pubproof.model.forwarding import Problem
from pubproof.model.messages import Cause, Copy
from pubproof.model.ordering import ordering_problems
from pubproof.proofs.distribution_common import ALL, rule_ids
from pubproof.proofs.distribution_explore import Judge, Outcome, Premise, Scene, explore
from pubproof.proofs.distribution_run import Run, Send, Subscribe
from pubproof.proofs.registry import Broken, Result, theorem

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50

#: two publishers, two topics, three QoS levels; p1's first message is retained
SCRIPTS = (
    ("p1", (("a", 1, True), ("a", 0, False), ("a", 1, False))),
    ("p2", (("b", 2, False),)),
)
FILTERS = (("#", 1), ("a", 0))


@dataclass(frozen=True, slots=True, kw_only=True)
class Ordering:
    """What an ordering theorem explores: scenes (an edition and the readings that change
    the server's moves), and for each the readings its judges apply."""

    scenes: tuple[Scene, ...]
    judged: tuple[tuple[tuple[str, str], ...], ...]  # the judges' readings
    claim: str = "text"  # "text": ordering_problems; "across-qos": the stronger claim


def across_qos(sent: Sequence[Copy]) -> list[Problem]:
    """The claim beyond the texts: copies forwarded live from one publisher on one topic go
    out in the order the server received their messages, whatever their QoS."""
    last: dict[tuple[str, str], int] = {}
    problems = []
    for copy in sent:
        if copy.cause is not Cause.LIVE:
            continue
        key = (copy.message.publisher, copy.topic)
        if last.get(key, 0) > copy.message.seq:
            problems.append(
                Problem(
                    rule_id="",  # no rule says so: the claim goes beyond 4.6
                    message=f"message {copy.message.seq} "
                    f"from {key[0]!r} on {key[1]!r} after message {last[key]}",
                )
            )
        last[key] = max(last.get(key, 0), copy.message.seq)
    return problems


def _judge(scene: Scene, readings: Mapping[str, str], claim: str) -> Judge:
    if claim == "across-qos":
        return across_qos
    return lambda sent: ordering_problems(sent, scene.edition, readings)


def judges(case: Ordering, scene: Scene) -> dict[str, Judge]:
    """What ``case`` judges the copies sent in ``scene`` by: one judge per reading it judges
    under, named by that reading ("defaults": the scene's own)."""
    return {
        _label(judged): _judge(scene, {**dict(scene.readings), **dict(judged)}, case.claim)
        for judged in case.judged
    }


def _label(readings: Sequence[tuple[str, str]]) -> str:
    return " ".join(f"{k}={v}" for k, v in readings) or "defaults"


def _pair_sent(sent: Sequence[Copy]) -> bool:
    """Two live copies of one publisher's messages on one topic at one QoS have gone: the
    order has something to judge."""
    keys = [(c.message.publisher, c.topic, c.message.qos) for c in sent if c.cause is Cause.LIVE]
    return len(keys) > len(set(keys))


def _retained_after_live(sent: Sequence[Copy]) -> bool:
    """A retained copy has gone after a live one of its topic."""
    live = {c.topic for c in sent[:-1] if c.cause is Cause.LIVE}
    return bool(sent) and sent[-1].cause is Cause.RETAINED and sent[-1].topic in live


def _premises(scene: Scene) -> dict[str, Premise]:
    found: dict[str, Premise] = {"an ordered pair sent": _pair_sent}
    if scene.resubscribes:
        found["a retained copy sent after live ones"] = _retained_after_live
    return found


def check_order(case: Ordering) -> Result:
    """Explore every scene with every judge; the first wrong order is the counterexample.
    Every scene must also meet its premises (or the claim holds of nothing: "failed")."""
    said = []
    for scene in case.scenes:
        premises = _premises(scene)
        outcomes = explore(scene, judges(case, scene), premises)
        for name, outcome in outcomes.items():
            if outcome.problems:
                return _refuted(scene, name, outcome)
        first = next(iter(outcomes.values()))
        missing = sorted(set(premises) - first.met)
        if missing:
            return Result(
                status="failed",
                counterexample=list(Run(scene.edition, dict(scene.readings)).run(
                    scene.prologue()).trace),
                details=f"vacuous under {scene.describe()}: no interleaving has "
                f"{', '.join(missing)}",
            )  # fmt: skip
        said.append(f"{scene.describe()}: {first.states} states")
    judged = "; ".join(_label(j) for j in case.judged)
    return Result(
        status="proved",
        details=f"every interleaving keeps the order ({_claimed(case)}, judged under "
        f"{judged}): " + ", ".join(said) + "; in each, ordered pairs (and retained copies "
        "after live ones, where the subscriber subscribes again) are sent",
    )


def _claimed(case: Ordering) -> str:
    return "4.6" if case.claim == "text" else "the claim"


def _refuted(scene: Scene, judged: str, outcome: Outcome) -> Result:
    forced = ""
    path = outcome.path
    resubscribed = [i for i, a in enumerate(path) if isinstance(a, Subscribe)]
    if resubscribed:
        before = sum(isinstance(a, Send) for a in path[: resubscribed[-1]])
        forced = (f"; the later message had gone before the repeated SUBSCRIBE ({before} "
                  "copies sent), so no server that re-sends the retained message keeps the "
                  "order")  # fmt: skip
    problem = outcome.problems[0]
    rule = f" [{problem.rule_id}]" if problem.rule_id else ""
    return Result(
        status="refuted",
        counterexample=list(outcome.trace),
        details=f"under {scene.describe()} (judged: {judged}), after {len(path)} moves "
        f"({outcome.states} states searched): {problem.message}{rule}{forced}",
    )


def _values(name: str, edition: Edition) -> tuple[str, ...]:
    reading = DISTRIBUTION_READINGS[name]
    return tuple(reading.values) if edition in reading.defaults else ()


def scenes(
    names: Sequence[str] = ("queue-qos0",),
    editions: Sequence[Edition] = ALL,
    *,
    disconnects: int = 1,
    resubscribes: int = 0,
) -> tuple[Scene, ...]:
    """A scene per edition and per combination of the readings ``names`` (those of the
    edition) that change the server's moves."""
    found = []
    for edition in editions:
        present = [n for n in names if _values(n, edition)]
        for values in product(*(_values(n, edition) for n in present)):
            found.append(
                Scene(
                    edition=edition,
                    readings=tuple(zip(present, values, strict=True)),
                    scripts=SCRIPTS,
                    filters=FILTERS,
                    disconnects=disconnects,
                    resubscribes=resubscribes,
                )
            )
    return tuple(found)


ORDERING_QOS = tuple((("ordering-qos", v), ("ordering-retained", "live-only"))
                     for v in DISTRIBUTION_READINGS["ordering-qos"].values)  # fmt: skip
KEPT = Ordering(scenes=scenes(resubscribes=1), judged=ORDERING_QOS)


def _picking(case: Ordering, pick: int) -> Ordering:
    """The same worlds, the server sending the ``pick``-th copy it owes."""
    return replace(case, scenes=tuple(replace(s, pick=pick) for s in case.scenes))


order_kept = theorem(
    id="dist.order.kept",
    statement="For every interleaving of two publishers (two topics, QoS 0, 1 and 2, one "
    "message retained) and a subscriber that keeps its session, subscribes with two "
    "overlapping filters, loses its connection once and subscribes again, the copies the "
    "model's server sends keep the order of 4.6: a publisher's messages on a topic at one "
    "QoS in the order received. In every edition, under both values of ordering-qos and "
    "of queue-qos0, with ordering-retained=live-only and the oracle's one copy for "
    "overlapping subscriptions.",
    rules=rule_ids([D.ORDERED_BY_DEFAULT, D.ORDER_PER_PUBLISHER, D.QUEUE_OFFLINE,
                    D50.PENDING_QOS0_OPTIONAL]),
    editions=ALL,
    readings=("ordering-qos", "ordering-retained", "queue-qos0", "overlapping-copies"),
    method="explicit (every interleaving, breadth first)",
    model=KEPT,
    mutants=[
        Broken("newest-first", "the server sends the copy it owes last first",
               _picking(KEPT, -1)),
        Broken("second-first", "the server sends the second copy it owes before the first",
               _picking(KEPT, 1)),
    ],
)(check_order)  # fmt: skip

ACROSS = Ordering(scenes=scenes(editions=(V311, V50), disconnects=1), judged=((),),
                  claim="across-qos")  # fmt: skip

order_across_qos = theorem(
    id="dist.refute.order-across-qos",
    statement="A publisher's messages on one topic reach a subscriber in the order the server "
    "received them, whatever their QoS (expected refuted: 4.6 orders copies 'for the same "
    "Topic and QoS' only; a server that may keep QoS 0 copies for a session that is away, "
    "and sends them after the QoS 1 ones it must keep, puts a QoS 0 message after a later "
    "QoS 1 one).",
    rules=rule_ids([D.ORDER_PER_PUBLISHER, D.QUEUE_OFFLINE, D50.PENDING_QOS0_OPTIONAL],
                   (V311, V50)),
    editions=(V311, V50),
    readings=("ordering-qos", "queue-qos0"),
    method="explicit (every interleaving, breadth first)",
    expected="refuted",
    model=ACROSS,
    mutants=[
        Broken("qos0-queued", "the same world with queue-qos0=queue: the QoS 0 copies wait "
               "in line with the others",
               replace(ACROSS, scenes=tuple(s for s in ACROSS.scenes
                                            if ("queue-qos0", "queue") in s.readings))),
    ],
)(check_order)  # fmt: skip

RETAINED_ALL = Ordering(scenes=scenes(names=(), resubscribes=1, disconnects=0),
                        judged=((("ordering-retained", "all"),),))  # fmt: skip

order_retained_all = theorem(
    id="dist.refute.order-retained-all",
    statement="Under ordering-retained=all, a server that re-sends the retained messages on a "
    "repeated SUBSCRIBE keeps the order of 4.6 (expected refuted: the retained message "
    "re-sent [MQTT-3.8.4-3] comes after a later message of its publisher that has already "
    "gone, so no server can keep it).",
    rules=rule_ids([D.ORDER_PER_PUBLISHER, D.REPLACE_311, D50.REPLACE_RETAINED]),
    editions=ALL,
    readings=("ordering-retained",),
    method="explicit (every interleaving, breadth first)",
    expected="refuted",
    model=RETAINED_ALL,
    mutants=[
        Broken("live-only", "the same world judged under ordering-retained=live-only",
               replace(RETAINED_ALL, judged=((("ordering-retained", "live-only"),),))),
    ],
)(check_order)  # fmt: skip

ORDERING_THEOREMS = [order_kept, order_across_qos, order_retained_all]

__all__ = ["ORDERING_THEOREMS", "Ordering", "across_qos", "check_order", "judges", "scenes"]
