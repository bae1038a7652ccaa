"""Refutations of forwarding claims the texts do not make: the witnesses of two readings.

- ``dist.reading-irrelevant.overlapping-copies``: the two values of ``overlapping-copies``
  give a session the same copies (expected refuted). Z3 looks, on the encoding of the
  session graph, for a message and subscriptions on which the two readings send another
  number of copies, preferring two overlapping subscriptions with different granted QoS;
  the model then runs the SUBSCRIBE and the PUBLISH under both readings in every edition,
  and their copies must differ. The trace shows the packets and each run's copies, tagged
  with their reading.
- ``dist.refute.retained-qos-31-as-published``: under MQTT 3.1 with
  ``retained-qos-31=as-published`` no copy goes above the QoS granted (expected refuted):
  Z3 finds a retained message above the subscription's grant, and the model sends it at its
  own QoS.
"""

from __future__ import annotations

from pubproof.model import distribution_rules as D
from pubproof.model import distribution_rules50 as D50
from pubproof.model.editions import Edition
from pubproof.proofs.distribution_common import (
    ALL,
    SUBSCRIBER,
    compare_trace,
    drain,
    rule_ids,
)
from pubproof.proofs.distribution_forwarding import TOPIC, Forwarding, scenario
from pubproof.proofs.distribution_graphs import (
    MODEL,
    CopySlot,
    Encoding,
    Offer,
    Setting,
    retained_copy,
    session_copies,
)
from pubproof.proofs.distribution_run import Entry, Run, copies_p
from pubproof.proofs.registry import Broken, Result, theorem
from pubproof.proofs.z3env import Expr, search, z3

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50
OVERLAP = ("one-copy", "per-subscription")


def _count(slots: list[CopySlot]) -> Expr:
    return sum((z3.If(s.sent, 1, 0) for s in slots), z3.IntVal(0))


def _plain(offer: Offer) -> Expr:
    """No option set: the smallest witness a reader can follow."""
    return z3.And(
        z3.Not(offer.same_client),
        *[z3.And(z3.Not(s.shared), z3.Not(s.no_local), z3.Not(s.rap)) for s in offer.subs],
    )


def _described(copies: list[Entry]) -> str:
    shown = [f"QoS {c['qos']}" for c in copies]
    return f"{len(copies)} cop{'y' if len(copies) == 1 else 'ies'} ({', '.join(shown)})"


@theorem(
    id="dist.reading-irrelevant.overlapping-copies",
    statement="Reading overlapping-copies makes no difference: one-copy and per-subscription "
    "give a session the same copies of every message (expected refuted: two overlapping "
    "subscriptions with different granted QoS get one copy at the higher QoS, or one copy "
    "each).",
    rules=rule_ids([D.OVERLAP, D50.SUBSCRIPTION_IDS_ONE_COPY, D50.SUBSCRIPTION_IDS_PER_COPY]),
    editions=ALL,
    readings=("overlapping-copies",),
    method="z3-witness on the session graph, confirmed by the model in every edition",
    expected="refuted",
    model=MODEL,
    mutants=[
        Broken("per-subscription-as-one-copy", "the graph's 'one or many' action sends one "
               "copy under either reading",
               Encoding(broken=frozenset({"per-subscription-as-one"}))),
    ],
)  # fmt: skip
def overlapping_copies(encoding: Encoding) -> Result:
    said: list[str] = []
    shown: list[Entry] | None = None
    for edition in (V311, V31, V50):
        offer = Offer.fresh(2)
        one, per = (session_copies(encoding, Setting(edition, v), offer) for v in OVERLAP)
        telling = z3.And(_plain(offer), offer.qos == 2, offer.subs[0].granted == 1,
                         offer.subs[1].granted == 0)  # fmt: skip
        answer = search(_count(one) != _count(per), given=[offer.domain()], prefer=[telling])
        if answer.outcome == "unknown":
            return Result(status="unknown", details=f"{edition.value}: {answer.reason}")
        if answer.model is None:
            return Result(
                status="proved",
                details=f"in {edition.value} the readings give every session the same number "
                "of copies",
            )
        actions = scenario(Setting(edition), offer, answer.model, None)
        trace, copies = compare_trace(actions, edition, "overlapping-copies", OVERLAP)
        if [(c["qos"], c["retain"]) for c in copies[0]] == [
            (c["qos"], c["retain"]) for c in copies[1]
        ]:
            return Result(
                status="failed",
                counterexample=trace,
                details=f"{edition.value}: Z3 says the readings part, the model sends the "
                "same copies under both",
            )
        filters = [f"{s['filter']!r} QoS {s['qos']}" for s in _subscriptions(trace)]
        said.append(
            f"{edition.value}: SUBSCRIBE {', '.join(filters)}; "
            + "; ".join(f"{v} sends {_described(c)}" for v, c in zip(OVERLAP, copies, strict=True))
        )
        shown = shown or trace
    return Result(
        status="refuted",
        counterexample=shown,
        details="confirmed by the model: " + " | ".join(said),
    )


def _subscriptions(trace: list[Entry]) -> list[dict[str, object]]:
    return [s for e in trace if e.get("type") == "SUBSCRIBE" for s in e["subscriptions"]]


AS_PUBLISHED = Forwarding(settings=(Setting(V31, retained_qos_31="as-published"),))


@theorem(
    id="dist.refute.retained-qos-31-as-published",
    statement="Under MQTT 3.1 with retained-qos-31=as-published, no copy goes above the QoS "
    "granted to its subscription (expected refuted: a retained message sent to a new "
    "subscription keeps the QoS it was published with, above a lower grant).",
    rules=rule_ids([D.MIN_QOS_31, D.RETAIN_ON_SUBSCRIBE_31], (V31,)),
    editions=(V31,),
    readings=("retained-qos-31",),
    method="z3-witness on the retained graph, confirmed by the model",
    expected="refuted",
    model=AS_PUBLISHED,
    mutants=[
        Broken("granted", "the same check under retained-qos-31=granted",
               Forwarding(settings=(Setting(V31, retained_qos_31="granted"),))),
    ],
)  # fmt: skip
def retained_above_granted(case: Forwarding) -> Result:
    for setting in case.settings:
        offer = Offer.fresh(1)
        retained_qos = z3.Int("retained_qos")
        kept = retained_copy(case.encoding, setting, retained_qos, offer.subs[0])
        given = z3.And(offer.domain(), retained_qos >= 0, retained_qos <= 2)
        small = z3.And(_plain(offer), retained_qos == 1, offer.subs[0].granted == 0)
        answer = search(z3.And(kept.sent, kept.qos > offer.subs[0].granted), given=[given],
                        prefer=[small])  # fmt: skip
        if answer.outcome == "unknown":
            return Result(status="unknown", details=answer.reason)
        if answer.model is None:
            continue
        run = Run(setting.edition, setting.readings())
        run.run(scenario(setting, offer, answer.model, retained_qos))
        trace = drain(run).trace
        granted = int(answer.model.eval(offer.subs[0].granted, model_completion=True).as_long())
        above = [c for c in copies_p(trace, SUBSCRIBER) if c["retain"] and c["qos"] > granted]
        if not above:
            return Result(status="failed", counterexample=trace,
                          details=f"{setting.describe()}: Z3 finds a retained copy above the "
                          "grant, the model sends none")  # fmt: skip
        return Result(
            status="refuted",
            counterexample=trace,
            details=f"confirmed by the model under {setting.describe()}: a retained message of "
            f"QoS {above[0]['qos']} on {TOPIC!r} goes at QoS {above[0]['qos']} to a "
            f"subscription granted QoS {granted}",
        )
    return Result(
        status="proved",
        details="no retained copy goes above the QoS granted under "
        + ", ".join(s.describe() for s in case.settings),
    )


WITNESS_THEOREMS = [overlapping_copies, retained_above_granted]

__all__ = ["WITNESS_THEOREMS"]
