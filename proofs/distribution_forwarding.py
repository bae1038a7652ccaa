"""Theorems on forwarding: the QoS and RETAIN of every copy, and what the reading of
overlapping subscriptions changes.

Each claim is checked by Z3 on the encoding of the model's decision graphs
(:mod:`.distribution_graphs`): a message of any QoS and RETAIN, three subscriptions of one
session with any granted QoS and (5.0) any No Local, Retain As Published, Shared and
Retain Handling, the publisher's session or another; in every edition and under every
value of the readings that bear on it. A proof is then cross-checked with the model's
own walks (:mod:`.distribution_graphs_check`) and its premises must be met: copies of each
kind are sent, and one below the published QoS among them.

A counterexample is a trace of the server model for the same message and subscriptions
(the session subscribes, the publisher publishes, the server sends what it owes), and an
entry ``copies-under-test`` with the copies the graphs under test owe instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from pubproof.model import distribution_rules as D
from pubproof.model import distribution_rules50 as D50
from pubproof.model.editions import Edition
from pubproof.model.subscriptions import RetainHandling
from pubproof.proofs.distribution_common import (
    ALL,
    PUBLISHER,
    SUBSCRIBER,
    drain,
    non_vacuous,
    rule_ids,
)
from pubproof.proofs.distribution_graphs import (
    MODEL,
    CopySlot,
    Encoding,
    Offer,
    Setting,
    Sub,
    retained_copy,
    session_copies,
)
from pubproof.proofs.distribution_graphs_check import drift
from pubproof.proofs.distribution_run import (
    Action,
    Connect,
    Entry,
    Publish,
    Run,
    Subscribe,
    options,
)
from pubproof.proofs.registry import Broken, Result, theorem
from pubproof.proofs.z3env import Expr, Model, search, z3

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50
#: subscriptions of the one session the claims speak of
K = 3
TOPIC = "a/b"
FILTERS = ("a/+", "a/#", "+/b")
UNMATCHED = ("c", "d", "e")


@dataclass(frozen=True, slots=True, kw_only=True)
class Forwarding:
    """What a forwarding theorem checks: the graphs (or a mutant's) in these settings."""

    encoding: Encoding = MODEL
    settings: tuple[Setting, ...]


def every_setting(retained_qos_31: Sequence[str] = ("granted",)) -> tuple[Setting, ...]:
    return tuple(
        Setting(edition, overlap, retained)
        for edition in ALL
        for overlap in ("one-copy", "per-subscription")
        for retained in (retained_qos_31 if edition is V31 else ("granted",))
    )


# -- the claims ----------------------------------------------------------------------------


def _highest_granted(offer: Offer, slot: CopySlot) -> Expr:
    found: Expr = z3.IntVal(-1)
    for sub, stands in zip(offer.subs, slot.stands_for, strict=True):
        found = z3.If(z3.And(stands, sub.granted > found), sub.granted, found)
    return found


def _lower(a: Expr, b: Expr) -> Expr:
    return z3.If(a <= b, a, b)


def qos_claim(setting: Setting, offer: Offer, live: list[CopySlot], kept: CopySlot,
              retained_qos: Expr) -> Expr:  # fmt: skip
    """Each copy's QoS is the lower of the published QoS and the (highest) QoS granted to
    the subscriptions it stands for; a retained copy's, of its QoS and the QoS granted."""
    return z3.And(
        *[z3.Implies(s.sent, s.qos == _lower(offer.qos, _highest_granted(offer, s)))
          for s in live],
        z3.Implies(kept.sent, kept.qos == _lower(retained_qos, offer.subs[0].granted)),
    )  # fmt: skip


def retain_claim(setting: Setting, offer: Offer, live: list[CopySlot], kept: CopySlot,
                 retained_qos: Expr) -> Expr:  # fmt: skip
    """A live copy has RETAIN 0 (5.0: as published under Retain As Published), a copy for
    several the RETAIN one of them gives; a retained copy has RETAIN 1."""
    v50 = z3.BoolVal(setting.edition is V50)

    def own(sub: Sub) -> Expr:
        return z3.And(v50, sub.rap, offer.retain)

    return z3.And(
        *[z3.Implies(s.sent, z3.Or(*[z3.And(stands, s.retain == own(sub))
                                     for sub, stands in zip(offer.subs, s.stands_for,
                                                            strict=True)]))
          for s in live],
        z3.Implies(kept.sent, kept.retain),
    )  # fmt: skip


Claim = Callable[[Setting, Offer, list[CopySlot], CopySlot, Expr], Expr]


# -- witnesses as traces ------------------------------------------------------------------


def _int(model: Model, term: Expr) -> int:
    return int(model.eval(term, model_completion=True).as_long())


def _bool(model: Model, term: Expr) -> bool:
    return bool(z3.is_true(model.eval(term, model_completion=True)))


def scenario(
    setting: Setting, offer: Offer, model: Model, retained_qos: Expr | None
) -> list[Action]:
    """The message and subscriptions of a Z3 model as a run: a retained message first (of
    ``retained_qos``, if given: the first subscription's copy of it), the session's
    SUBSCRIBE (each subscription's filter matches the topic name or not), then the message
    published."""
    v50 = setting.edition is V50
    same = v50 and _bool(model, offer.same_client)
    actions: list[Action] = [Connect(SUBSCRIBER, clean=True)]
    if retained_qos is not None:
        actions.append(Publish(PUBLISHER, TOPIC, qos=_int(model, retained_qos), retain=True,
                               payload=b"r"))  # fmt: skip
    filters = []
    for index, sub in enumerate(offer.subs):
        plain = FILTERS[index] if _bool(model, sub.match) else UNMATCHED[index]
        shared = v50 and _bool(model, sub.shared)
        flags = {}
        if v50:
            flags = {"no_local": _bool(model, sub.no_local) and not shared,
                     "retain_as_published": _bool(model, sub.rap),
                     "retain_handling": RetainHandling(_int(model, sub.handling))}  # fmt: skip
        wanted = options(_int(model, sub.granted), **flags)
        filters.append((f"$share/g/{plain}" if shared else plain, wanted))
    if retained_qos is not None and _bool(model, offer.subs[0].existed):
        actions.append(Subscribe(SUBSCRIBER, (filters[0],)))  # the one it replaces
    actions.append(Subscribe(SUBSCRIBER, tuple(filters)))
    publisher = SUBSCRIBER if same else PUBLISHER
    actions.append(Publish(publisher, TOPIC, qos=_int(model, offer.qos),
                           retain=_bool(model, offer.retain), payload=b"m"))  # fmt: skip
    return actions


def _slots_p(model: Model, offer: Offer, slots: Sequence[CopySlot]) -> list[Entry]:
    return [
        {"qos": _int(model, s.qos), "retain": _bool(model, s.retain),
         "filters": [FILTERS[i] for i, on in enumerate(s.stands_for) if _bool(model, on)]}
        for s in slots if _bool(model, s.sent)
    ]  # fmt: skip


def witness_trace(
    setting: Setting, offer: Offer, model: Model, retained_qos: Expr,
    live: Sequence[CopySlot], kept: CopySlot,
) -> list[Entry]:  # fmt: skip
    run = Run(setting.edition, setting.readings())
    run.run(scenario(setting, offer, model, retained_qos))
    trace = drain(run).trace
    note: Entry = {"event": "copies-under-test", "conn": run.conn(SUBSCRIBER),
                   "live": _slots_p(model, offer, live),
                   "retained": _slots_p(model, offer, [kept])}  # fmt: skip
    return [*trace, note]


# -- the check -----------------------------------------------------------------------------


def _premises(setting: Setting, offer: Offer, live: list[CopySlot], kept: CopySlot,
              given: Expr) -> list[tuple[str, bool]]:  # fmt: skip
    """The kinds of copies the claim speaks of, each sent in some case."""
    cases = [
        ("a copy of one subscription", z3.Or(*[s.sent for s in live[:-1]])),
        ("a copy below the published QoS", z3.Or(*[z3.And(s.sent, s.qos < offer.qos)
                                                    for s in live])),
        ("a retained copy", kept.sent),
    ]  # fmt: skip
    if setting.overlapping_copies == "one-copy":
        cases.append(("one copy for several subscriptions", live[-1].sent))
    return [
        (f"{name} under {setting.describe()}", search(z3.And(given, c)).model is not None)
        for name, c in cases
    ]


def check_claim(claim: Claim, name: str, case: Forwarding) -> Result:
    met: list[tuple[str, bool]] = []
    for setting in case.settings:
        offer = Offer.fresh(K)
        retained_qos = z3.Int("retained_qos")
        live = session_copies(case.encoding, setting, offer)
        kept = retained_copy(case.encoding, setting, retained_qos, offer.subs[0])
        given = z3.And(offer.domain(), retained_qos >= 0, retained_qos <= 2)
        plain = z3.And(*[z3.Not(s.shared) for s in offer.subs], z3.Not(offer.same_client))
        answer = search(
            z3.Not(claim(setting, offer, live, kept, retained_qos)), given=[given], prefer=[plain]
        )
        if answer.outcome == "unknown":
            return Result(status="unknown", details=f"{setting.describe()}: {answer.reason}")
        if answer.model is not None:
            return Result(
                status="refuted",
                counterexample=witness_trace(setting, offer, answer.model, retained_qos, live,
                                             kept),
                details=f"under {setting.describe()}: {name} fails for the message and "
                "subscriptions of the trace (copies-under-test: what the graphs under test "
                "owe)",
            )  # fmt: skip
        met += _premises(setting, offer, live, kept, given)
    proved = Result(
        status="proved",
        details=f"{name}: proved for every message and {K} subscriptions of a session, every "
        f"option, under {', '.join(s.describe() for s in case.settings)}; every kind of copy "
        f"occurs",
    )
    example = Run(V311).run([Connect(SUBSCRIBER),
                             Subscribe(SUBSCRIBER, ((TOPIC, options(0)),)),
                             Publish(PUBLISHER, TOPIC, qos=1)])  # fmt: skip
    checked = non_vacuous(proved, met, drain(example).trace)
    if checked.status != "proved":
        return checked
    found = drift(case.encoding)
    if found is not None:
        return Result(status="failed", counterexample=example.trace, details=found.describe())
    return replace(checked, details=f"{checked.details}; the graphs agree with the model's "
                   "walks on every case of the cross-check")  # fmt: skip


FORWARD_RULES = [D.MIN_QOS, D.MIN_QOS_31, D.OVERLAP, D50.SHARED_GRANTED_QOS,
                 D.RETAIN_FLAG_NEW, D50.RETAIN_FLAG_SUBSCRIBE]  # fmt: skip
EVERY = Forwarding(settings=every_setting())

copy_qos = theorem(
    id="dist.forward.copy-qos",
    statement="Every copy the server owes a session goes at the lower of the published QoS "
    "and the QoS granted to its subscription (one copy for overlapping subscriptions: the "
    "highest granted among them), so never above either; a retained message sent to a new "
    "subscription, at the lower of its QoS and the QoS granted. In every edition, both "
    "values of overlapping-copies, every option (No Local, Retain As Published, Shared, "
    "Retain Handling), for three subscriptions of one session.",
    rules=rule_ids(FORWARD_RULES),
    editions=ALL,
    readings=("overlapping-copies", "retained-qos-31"),
    method="z3 (the decision graphs walked symbolically) + cross-check with the model",
    model=EVERY,
    mutants=[
        Broken("max-qos", "the copy goes at the higher of the published and the granted QoS",
               replace(EVERY, encoding=Encoding(broken=frozenset({"qos-max"})))),
        Broken("retained-at-published-qos", "a retained message goes at its own QoS, above "
               "the QoS granted", replace(EVERY, encoding=Encoding(retained="published"))),
    ],
)(lambda case: check_claim(qos_claim, "the QoS of every copy", case))  # fmt: skip

copy_retain = theorem(
    id="dist.forward.copy-retain",
    statement="A copy forwarded to an established subscription has RETAIN 0 (5.0: the "
    "published RETAIN when the subscription asks Retain As Published; one copy for several "
    "subscriptions, the RETAIN one of them gives) and a retained message sent because of a "
    "new subscription has RETAIN 1. In every edition, every option, for three subscriptions.",
    rules=rule_ids([D.RETAIN_FLAG_LIVE, D.RETAIN_FLAG_LIVE_31, D.RETAIN_FLAG_NEW,
                    D50.RETAIN_AS_PUBLISHED_0, D50.RETAIN_AS_PUBLISHED_1,
                    D50.RETAIN_FLAG_SUBSCRIBE]),
    editions=ALL,
    readings=("overlapping-copies",),
    method="z3 (the decision graphs walked symbolically) + cross-check with the model",
    model=EVERY,
    mutants=[
        Broken("retain-kept-on-live-copies", "the graph's 'Retain As Published?' no-branch "
               "leads to 'RETAIN as received'",
               replace(EVERY, encoding=Encoding(
                   edges=(("subscription", "rap", "no", "retain-as-published"),)))),
        Broken("retained-copy-retain-0", "a retained message is sent with RETAIN 0",
               replace(EVERY, encoding=Encoding(retained="retain-0"))),
    ],
)(lambda case: check_claim(retain_claim, "the RETAIN of every copy", case))  # fmt: skip

FORWARDING_THEOREMS = [copy_qos, copy_retain]

__all__ = [
    "FORWARDING_THEOREMS",
    "Forwarding",
    "check_claim",
    "every_setting",
    "qos_claim",
    "retain_claim",
    "scenario",
]
