"""Protocol theorems: what the QoS flows guarantee, under which channel assumptions, and
which table entries each guarantee rests on.

Every theorem is checked twice: unboundedly by Z3 (Spacer finds an inductive invariant, or
shows a bad state reachable) on the one-message system of :mod:`.protocol_z3`, and by the
explicit-state explorer within its bounds. The two must agree, or the theorem *fails*.
A refutation's counterexample is the explorer's shortest trace: packets with ``dir`` and
``conn``, and events, replayable step by step.

Each proved theorem has mutants (a table entry changed) that it must refute; each expected
refutation has as its "mutant" the unbroken model, which it must *not* refute, so the
refutation is shown to come from the fault it names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

import z3

from pubproof.model.editions import Edition
from pubproof.model.explore import (
    Environment,
    Explorer,
    Mutations,
    World,
    at_least_once,
    at_most_once,
    delivered_when_quiet,
    pubrel_after_pubrec,
    unique_ids,
)
from pubproof.model.flows import (
    Method,
    ReceiverAction,
    ReceiverInput,
    ReceiverState,
    SenderAction,
    SenderInput,
    SenderState,
    Step,
)
from pubproof.proofs.identifiers_z3 import check_identifiers
from pubproof.proofs.protocol_z3 import NAMES, State, System, check_safety
from pubproof.proofs.registry import Broken, Result, theorem

RA, RI, RS = ReceiverAction, ReceiverInput, ReceiverState
SA, SI, SS = SenderAction, SenderInput, SenderState
BOTH = (Edition.V31, Edition.V311)


@dataclass(frozen=True, slots=True, kw_only=True)
class Claim:
    """A safety property, stated for Z3 (bad states) and for the explorer (worlds)."""

    bad: Callable[[State], z3.BoolRef]
    holds: Mapping[str, Callable[[World], bool]]
    disconnects: int = 2
    max_depth: int = 40
    messages: int = 1
    explicit_only: bool = False  # no single-message Z3 encoding exists for this claim
    extra: Mapping[str, str] = field(default_factory=dict)


def _quiet_undelivered(x: State) -> z3.BoolRef:
    """Connection up, nothing in flight, the message published and never delivered."""
    in_flight = [x[n] for n in NAMES if n.startswith("n_")]
    return z3.And(x["conn"] == 1, x["pub"] == 1, x["d"] == 0, *[c == 0 for c in in_flight])


def _lost_after_completion(x: State) -> z3.BoolRef:
    return z3.And(x["done"] == 1, x["d"] == 0)


AT_MOST_ONCE = Claim(bad=lambda x: x["d"] > 1, holds={"at most once": at_most_once}, max_depth=14)


def _at_least(qos: int) -> Claim:
    return Claim(
        bad=lambda x: z3.Or(_lost_after_completion(x), _quiet_undelivered(x)),
        holds={
            "at least once": at_least_once,
            "delivered when quiet": delivered_when_quiet((qos,)),
        },
    )


def _exactly(qos: int = 2) -> Claim:
    return Claim(
        bad=lambda x: z3.Or(x["d"] > 1, _lost_after_completion(x), _quiet_undelivered(x)),
        holds={
            "at most once": at_most_once,
            "at least once": at_least_once,
            "delivered when quiet": delivered_when_quiet((qos,)),
        },
    )


PUBREL_AFTER_PUBREC = Claim(
    bad=lambda x: z3.And(x["n_pubrel"] > 0, x["rec_seen"] == 0),
    holds={"PUBREL only after PUBREC": pubrel_after_pubrec},
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    """What a protocol theorem checks: a system and a claim about it."""

    system: System
    claim: Claim


def explorer_of(case: Case) -> Explorer:
    """The explicit-state explorer of a case: its system's flows (mutated or not) under its
    environment, with as many messages and connection losses as its claim asks."""
    system, claim = case.system, case.claim
    env = replace(system.env, qos=(system.qos,) * claim.messages, disconnects=claim.disconnects)
    return Explorer(env, system.mutations)


def check(case: Case) -> Result:
    """Z3 (unbounded) and the explorer (bounded) on the same case; they must agree."""
    system, claim = case.system, case.claim
    explorer = explorer_of(case)
    worlds, findings, _ = explorer.search(claim.holds, max_depth=claim.max_depth)
    explicit: Literal["proved", "refuted"] = "refuted" if findings else "proved"
    trace = findings[0].trace if findings else None
    bound = f"{worlds} worlds, {claim.disconnects} connection losses, depth {claim.max_depth}"
    if claim.explicit_only:
        return Result(
            status=explicit,
            counterexample=trace,
            details=f"explicit-state search over {bound}"
            + (f"; broken: {findings[0].prop}" if findings else "; no property broken"),
        )
    status, details = check_safety(system, claim.bad)
    if status != "unknown" and status != explicit:
        return Result(
            status="failed",
            counterexample=trace,
            details=f"engines disagree: Z3 says {status}, the explorer ({bound}) says {explicit}",
        )
    if status == "refuted" and trace is None:
        return Result(
            status="failed", details="Z3 refutes but the explorer found no trace in its bound"
        )
    return Result(
        status=status, counterexample=trace, details=f"{details}; explorer agrees ({bound})"
    )


def _s(actions: tuple[SenderAction, ...], nxt: SenderState) -> Step:
    return Step(actions=actions, next=nxt, rules=("mutant",))


def _r(actions: tuple[ReceiverAction, ...], nxt: ReceiverState) -> Step:
    return Step(actions=actions, next=nxt, rules=("mutant",))


NO_RESEND_PUBLISH = Mutations(
    sender={
        (SS.AWAIT_PUBACK, SI.RESUME): _s((), SS.AWAIT_PUBACK),
        (SS.AWAIT_PUBREC, SI.RESUME): _s((), SS.AWAIT_PUBREC),
    }
)
NO_RESEND_PUBREL = Mutations(sender={(SS.AWAIT_PUBCOMP, SI.RESUME): _s((), SS.AWAIT_PUBCOMP)})
B_FORGETS_ON_PUBREC = Mutations(
    receiver={(RS.FREE, RI.PUBLISH_QOS2): _r((RA.DELIVER, RA.SEND_PUBREC), RS.FREE)}
)
B_DELIVERS_DUPLICATE = Mutations(
    receiver={(RS.ID_HELD, RI.PUBLISH_QOS2): _r((RA.DELIVER, RA.SEND_PUBREC), RS.ID_HELD)}
)
A_DELIVERS_EARLY = Mutations(
    receiver={(RS.FREE, RI.PUBLISH_QOS2): _r((RA.DELIVER, RA.STORE, RA.SEND_PUBREC), RS.STORED)}
)
QOS1_NOT_DELIVERED = Mutations(
    receiver={(RS.FREE, RI.PUBLISH_QOS1): _r((RA.SEND_PUBACK,), RS.FREE)}
)
PUBREL_EARLY = Mutations(
    sender={(SS.FREE, SI.PUBLISH_QOS2): _s((SA.SEND_PUBLISH, SA.SEND_PUBREL), SS.AWAIT_PUBREC)}
)
COMPLETE_ON_PUBREC = Mutations(sender={(SS.AWAIT_PUBREC, SI.PUBREC): _s((SA.COMPLETE,), SS.FREE)})
REUSE_EARLY = Mutations(reuse_ids_early=True)

QOS0 = System(qos=0, env=Environment())
QOS1 = System(qos=1, env=Environment())
QOS2_A = System(qos=2, env=Environment(method=Method.A))
QOS2_B = System(qos=2, env=Environment(method=Method.B))


def _with(system: System, mutations: Mutations) -> System:
    return replace(system, mutations=mutations)


def _case(system: System, claim: Claim) -> Case:
    return Case(system=system, claim=claim)


qos0_at_most_once = theorem(
    id="proto.qos0-at-most-once",
    statement="A QoS 0 message reaches the application at most once, over any number of "
    "connection losses, on an in-order channel.",
    rules=["MQTT-4.3.1-1", "MQTT-3.3.1-2"],
    editions=BOTH,
    method="z3-spacer + explicit",
    model=_case(QOS0, AT_MOST_ONCE),
    mutants=[
        Broken(
            "channel duplicates",
            "the network delivers a packet twice",
            _case(replace(QOS0, env=Environment(duplicate=True)), AT_MOST_ONCE),
        ),
    ],
)(check)

qos1_at_least_once = theorem(
    id="proto.qos1-at-least-once",
    statement="A QoS 1 message that the sender has discarded (PUBACK received) was delivered, "
    "and once the connection is up with nothing in flight every published message has been "
    "delivered: over any number of connection losses, reconnecting with the session.",
    rules=[
        "MQTT-4.3.2-1",
        "MQTT-4.3.2-2",
        "MQTT-4.4.0-1",
        "MQTT-4.1.0-1",
        "MQTT-3.3.1-1",
        "MQTT-2.3.1-3",
    ],
    editions=BOTH,
    method="z3-spacer + explicit",
    model=_case(QOS1, _at_least(1)),
    mutants=[
        Broken(
            "no re-send on resume",
            "the sender does not re-send the PUBLISH on reconnect",
            _case(_with(QOS1, NO_RESEND_PUBLISH), _at_least(1)),
        ),
        Broken(
            "receiver does not deliver",
            "the receiver acknowledges without delivering",
            _case(_with(QOS1, QOS1_NOT_DELIVERED), _at_least(1)),
        ),
    ],
)(check)

qos2_exactly_once_a = theorem(
    id="proto.qos2-exactly-once-method-a",
    statement="With Method A (store, deliver on PUBREL), a QoS 2 message reaches the "
    "application exactly once: never twice, and surely once the sender has completed or the "
    "connection is quiet; over any number of losses, with the session resumed, in order.",
    rules=[
        "MQTT-4.3.3-1",
        "MQTT-4.3.3-2",
        "MQTT-4.4.0-1",
        "MQTT-4.1.0-1",
        "MQTT-3.3.1-1",
        "MQTT-2.3.1-3",
    ],
    editions=BOTH,
    method="z3-spacer + explicit",
    model=_case(QOS2_A, _exactly()),
    mutants=[
        Broken(
            "deliver on PUBLISH too",
            "Method A that also delivers when it stores",
            _case(_with(QOS2_A, A_DELIVERS_EARLY), _exactly()),
        ),
        Broken(
            "no PUBREL re-send",
            "the sender does not re-send PUBREL on reconnect",
            _case(_with(QOS2_A, NO_RESEND_PUBREL), _exactly()),
        ),
        Broken(
            "complete on PUBREC",
            "the sender discards the message on PUBREC",
            _case(_with(QOS2_A, COMPLETE_ON_PUBREC), _exactly()),
        ),
    ],
)(check)

qos2_exactly_once_b = theorem(
    id="proto.qos2-exactly-once-method-b",
    statement="With Method B (deliver on PUBLISH, hold the packet identifier until PUBREL), "
    "a QoS 2 message reaches the application exactly once; over any number of losses, with "
    "the session resumed, in order.",
    rules=[
        "MQTT-4.3.3-1",
        "MQTT-4.3.3-2",
        "MQTT-4.4.0-1",
        "MQTT-4.1.0-1",
        "MQTT-3.3.1-1",
        "MQTT-2.3.1-3",
    ],
    editions=(Edition.V311,),
    method="z3-spacer + explicit",
    model=_case(QOS2_B, _exactly()),
    mutants=[
        Broken(
            "forget on PUBREC",
            "the receiver drops the identifier when it sends PUBREC",
            _case(_with(QOS2_B, B_FORGETS_ON_PUBREC), _exactly()),
        ),
        Broken(
            "deliver duplicates",
            "the receiver delivers a duplicate PUBLISH",
            _case(_with(QOS2_B, B_DELIVERS_DUPLICATE), _exactly()),
        ),
        Broken(
            "no PUBLISH re-send",
            "the sender does not re-send the PUBLISH on reconnect",
            _case(_with(QOS2_B, NO_RESEND_PUBLISH), _exactly()),
        ),
    ],
)(check)

pubrel_only_after_pubrec = theorem(
    id="proto.pubrel-only-after-pubrec",
    statement="The sender sends PUBREL for a message only after it has received that "
    "message's PUBREC (for either receiver method, over any number of losses).",
    rules=["MQTT-4.3.3-1"],
    editions=BOTH,
    method="z3-spacer + explicit",
    model=_case(QOS2_A, PUBREL_AFTER_PUBREC),
    mutants=[
        Broken(
            "PUBREL with PUBLISH",
            "the sender sends PUBREL right after PUBLISH",
            _case(_with(QOS2_A, PUBREL_EARLY), PUBREL_AFTER_PUBREC),
        ),
    ],
)(check)

UNIQUE = Claim(
    bad=lambda x: x["d"] < 0,
    holds={"unique packet identifiers": unique_ids},
    messages=3,
    disconnects=1,
    explicit_only=True,
)


def check_unique_identifiers(case: Case) -> Result:
    """Spacer on the counter abstraction (unbounded messages), and the explorer (three
    messages over two identifiers); they must agree."""
    explicit = check(case)
    status, details = check_identifiers(case.system)
    if status == "unknown":
        return Result(status="unknown", counterexample=explicit.counterexample, details=details)
    if status != explicit.status:
        return Result(
            status="failed",
            counterexample=explicit.counterexample,
            details=f"engines disagree: Z3 says {status}, the explorer says {explicit.status}",
        )
    return Result(
        status=explicit.status,
        counterexample=explicit.counterexample,
        details=f"{details}; explorer agrees ({explicit.details})",
    )


unique_packet_ids = theorem(
    id="proto.unique-packet-identifiers",
    statement="The sender never has two in-flight messages with one packet identifier, "
    "however many messages it sends (counter abstraction per identifier; the explorer "
    "checks three messages over two identifiers).",
    rules=["MQTT-2.3.1-2", "MQTT-2.3.1-3"],
    editions=BOTH,
    method="z3-spacer + explicit",
    model=_case(replace(QOS2_A, env=Environment(method=Method.A, packet_ids=2)), UNIQUE),
    mutants=[
        Broken(
            "reuse before PUBCOMP",
            "identifiers are reused once PUBREC has arrived",
            _case(
                replace(
                    QOS2_A, env=Environment(method=Method.A, packet_ids=2), mutations=REUSE_EARLY
                ),
                UNIQUE,
            ),
        ),
    ],
)(check_unique_identifiers)

# --- expected refutations ---------------------------------------------------------------

REORDERING = replace(QOS2_B, env=Environment(method=Method.B, reorder=True))

exactly_once_fails_with_reordering = theorem(
    id="proto.refute.exactly-once-with-reordering",
    statement="Exactly once FAILS when the channel may reorder (a PUBLISH of an earlier "
    "connection arrives after the PUBREL that released its identifier).",
    rules=["MQTT-4.3.3-2"],
    editions=(Edition.V311,),
    method="z3-spacer + explicit",
    expected="refuted",
    model=_case(REORDERING, _exactly()),
    mutants=[
        Broken(
            "in-order channel",
            "the same flows over TCP's in-order channel",
            _case(QOS2_B, _exactly()),
        )
    ],
)(check)

exactly_once_fails_forgetting_on_pubrec = theorem(
    id="proto.refute.exactly-once-forgetting-on-pubrec",
    statement="Exactly once FAILS when a Method B receiver forgets the packet identifier on "
    "sending PUBREC instead of on receiving PUBREL.",
    rules=["MQTT-4.3.3-2"],
    editions=(Edition.V311,),
    method="z3-spacer + explicit",
    expected="refuted",
    model=_case(_with(QOS2_B, B_FORGETS_ON_PUBREC), _exactly()),
    mutants=[
        Broken("forget on PUBREL", "the receiver as the table has it", _case(QOS2_B, _exactly()))
    ],
)(check)

EXACTLY_TWO = Claim(
    bad=lambda x: x["d"] < 0,
    holds={"at most once": at_most_once, "at least once": at_least_once},
    messages=2,
    disconnects=1,
    explicit_only=True,
)

exactly_once_fails_reusing_ids = theorem(
    id="proto.refute.exactly-once-reusing-ids-before-pubcomp",
    statement="Exactly once FAILS when the sender reuses a packet identifier before PUBCOMP "
    "(two QoS 2 messages, one identifier).",
    rules=["MQTT-2.3.1-2", "MQTT-2.3.1-3"],
    editions=BOTH,
    method="explicit",
    expected="refuted",
    model=_case(
        replace(QOS2_A, env=Environment(method=Method.A, packet_ids=1), mutations=REUSE_EARLY),
        EXACTLY_TWO,
    ),
    mutants=[
        Broken(
            "reuse after PUBCOMP",
            "identifiers freed only on PUBCOMP",
            _case(replace(QOS2_A, env=Environment(method=Method.A, packet_ids=1)), EXACTLY_TWO),
        )
    ],
)(check)

at_least_once_fails_without_resend = theorem(
    id="proto.refute.at-least-once-without-retransmission",
    statement="At least once FAILS when the sender does not re-send on reconnect.",
    rules=["MQTT-4.4.0-1"],
    editions=BOTH,
    method="z3-spacer + explicit",
    expected="refuted",
    model=_case(_with(QOS1, NO_RESEND_PUBLISH), _at_least(1)),
    mutants=[
        Broken("re-send on resume", "the sender as the table has it", _case(QOS1, _at_least(1)))
    ],
)(check)
