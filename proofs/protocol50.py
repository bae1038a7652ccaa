"""MQTT 5.0 protocol theorems: what the 5.0 flows guarantee (flow control, delivery for
flows that end in success, flows that end with an error, Topic Alias) and refutations
that show why each 5.0 rule is there.

Each theorem is checked by two engines on the system built from the 5.0 tables
(:mod:`pubproof.model.explore50`), which must agree:

- **flow control**: Z3 checks an inductive invariant of the counter abstraction
  (:func:`~pubproof.proofs.protocol50_z3.flow_control`: any number of messages, any number
  of connection losses, the Receive Maximum symbolic in 1..65,535), and the explicit
  search runs a few messages with Receive Maximum 1 and 2 over one in-order channel each
  way, which gives the shortest trace when the claim fails;
- **one message** (at least once, exactly once, flows that end with an error): the
  explicit search over every local state a message can reach
  (:func:`~pubproof.model.explore50.local_closure`: finite, since each loss empties the
  channels, so the search is exhaustive for any number of losses), and the search of one
  message's worlds for the shortest trace;
- **Topic Alias**: Spacer on one alias of a symbolic Topic Alias Maximum with symbolic
  topic names (:func:`~pubproof.proofs.protocol50_z3.topic_alias`), and the explicit
  search over two topics, Topic Alias Maximum 1 and 2 and two reconnects.

Every counterexample is a trace of 5.0 packets and events that
:func:`pubproof.model.replay.replay` judges with the 5.0 sessions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pubproof.model.editions import Edition
from pubproof.model.explore50 import (
    AliasExplorer,
    Explorer50,
    Flows50,
    Local,
    Mutations50,
    World50,
    local_closure,
    lockstep,
    quiet_states,
    quiet_undelivered,
    unacknowledged,
)
from pubproof.model.flows import Method, ReceiverState, SenderState
from pubproof.model.flows50 import (
    ReceiverAction50,
    ReceiverInput50,
    SenderAction50,
    SenderInput50,
    Step50,
)
from pubproof.model.topic_alias import AliasOut, AliasOutInput, AliasStep
from pubproof.proofs.protocol50_z3 import flow_control, topic_alias
from pubproof.proofs.registry import Broken, Result, Status, theorem

SA, SI, RA, RI = SenderAction50, SenderInput50, ReceiverAction50, ReceiverInput50
SS, RS = SenderState, ReceiverState
V50 = (Edition.V50,)


def _s(actions: tuple[SenderAction50, ...], nxt: SenderState) -> Step50:
    return Step50(actions=actions, next=nxt, rules=("mutant",))


def _r(actions: tuple[ReceiverAction50, ...], nxt: ReceiverState) -> Step50:
    return Step50(actions=actions, next=nxt, rules=("mutant",))


# -- mutants: a table entry changed ---------------------------------------------------------

PUBREC_FREES_QUOTA = Mutations50(
    sender={
        (SS.AWAIT_PUBREC, SI.PUBREC_OK): _s((SA.RELEASE_QUOTA, SA.SEND_PUBREL), SS.AWAIT_PUBCOMP)
    }
)
PUBREL_RESENT_WITHOUT_QUOTA = Mutations50(
    sender={(SS.AWAIT_PUBCOMP, SI.RESUME): _s((SA.SEND_PUBREL,), SS.AWAIT_PUBCOMP)}
)
PUBLISH_WITHOUT_QUOTA = Mutations50(
    sender={(SS.FREE, SI.PUBLISH_QOS1): _s((SA.SEND_PUBLISH,), SS.AWAIT_PUBACK)}
)
RESEND_AFTER_ERROR_PUBACK = Mutations50(
    sender={(SS.AWAIT_PUBACK, SI.PUBACK_ERROR): _s((SA.RELEASE_QUOTA,), SS.AWAIT_PUBACK)}
)
RESEND_AFTER_ERROR_PUBREC = Mutations50(
    sender={(SS.AWAIT_PUBREC, SI.PUBREC_ERROR): _s((SA.RELEASE_QUOTA,), SS.AWAIT_PUBREC)}
)
NO_RESEND_PUBLISH = Mutations50(
    sender={
        (SS.AWAIT_PUBACK, SI.RESUME): _s((SA.TAKE_QUOTA,), SS.AWAIT_PUBACK),
        (SS.AWAIT_PUBREC, SI.RESUME): _s((SA.TAKE_QUOTA,), SS.AWAIT_PUBREC),
    }
)
NO_RESEND_PUBREL = Mutations50(
    sender={(SS.AWAIT_PUBCOMP, SI.RESUME): _s((SA.TAKE_QUOTA,), SS.AWAIT_PUBCOMP)}
)
QOS1_NOT_DELIVERED = Mutations50(
    receiver={(RS.FREE, RI.PUBLISH_QOS1): _r((RA.SEND_PUBACK,), RS.FREE)}
)
B_FORGETS_ON_PUBREC = Mutations50(
    receiver={(RS.FREE, RI.PUBLISH_QOS2): _r((RA.DELIVER, RA.SEND_PUBREC), RS.FREE)}
)
A_DELIVERS_EARLY = Mutations50(
    receiver={(RS.FREE, RI.PUBLISH_QOS2): _r((RA.DELIVER, RA.STORE, RA.SEND_PUBREC), RS.STORED)}
)
REFUSED_THEN_DELIVERED = Mutations50(
    receiver={(RS.FREE, RI.PUBLISH_QOS2_REFUSED): _r((RA.DELIVER, RA.SEND_PUBREC_ERROR), RS.FREE)}
)
ALIASES_KEPT = Mutations50(
    alias_sender={
        (AliasOut.ALIASED, AliasOutInput.NEW_CONNECTION): AliasStep(
            actions=(), next=AliasOut.ALIASED, rules=("mutant",)
        )
    }
)


# -- the claims ------------------------------------------------------------------------------

LocalClaim = Callable[[Local], bool]
WorldClaim = Callable[[World50], bool]


@dataclass(frozen=True, slots=True, kw_only=True)
class Case50:
    """A system (the tables, mutated or not, under assumptions) and a claim about it."""

    kind: Literal["flow-control", "message", "alias"]
    flows: Flows50
    qos: tuple[int, ...] = (2,)
    local: dict[str, LocalClaim] | None = None  # per-message claims ("message")
    world: dict[str, WorldClaim] | None = None  # claims of the worlds of the explicit search
    receive_maximums: tuple[int, ...] = (1,)
    clean_reconnect: bool = False
    disconnects: int = 1
    quiet_delivers: bool = False  # also: a message quiet on an open connection was delivered


def _every_message(claim: LocalClaim) -> WorldClaim:
    return lambda w: all(claim(m) for m in w.msgs)


def _world_claims(local: dict[str, LocalClaim]) -> dict[str, WorldClaim]:
    return {name: _every_message(claim) for name, claim in local.items()}


def world_claims(case: Case50) -> dict[str, WorldClaim]:
    """The claims of a case as properties of the worlds of the explicit search."""
    claims = case.world or _world_claims(case.local or {})
    if case.quiet_delivers:
        claims = {**claims, "delivered when quiet": lambda w: not quiet_undelivered(w)}
    return claims


def explorers(case: Case50) -> list[Explorer50]:
    """The explicit searches of a case, one per Receive Maximum it tries."""
    return [
        Explorer50(
            case.flows,
            case.qos,
            receive_maximum=rm,
            disconnects=case.disconnects,
            clean_reconnect=case.clean_reconnect,
        )
        for rm in case.receive_maximums
    ]


def _explicit(case: Case50) -> tuple[int, str, list[dict[str, Any]] | None]:
    """The explicit search: (worlds, the broken claim or "", its shortest trace)."""
    claims = world_claims(case)
    worlds = 0
    for explorer in explorers(case):
        rm = explorer.receive_maximum
        count, found = explorer.search(claims)
        worlds += count
        for name in claims:
            if name in found:
                return worlds, f"{name} (Receive Maximum {rm})", found[name]
    return worlds, "", None


def _agree(
    unbounded: tuple[Status, str], worlds: int, broken: str, trace: list[dict[str, Any]] | None
) -> Result:
    status, details = unbounded
    explicit = "refuted" if trace is not None else "proved"
    bound = f"explicit search: {worlds} worlds" + (f", broken: {broken}" if broken else "")
    if status not in ("unknown", explicit):
        return Result(
            status="failed", counterexample=trace,
            details=f"engines disagree: {details}; the {bound} says {explicit}",
        )  # fmt: skip
    if explicit == "refuted":
        # a trace is a refutation whatever the unbounded engine could show
        return Result(status="refuted", counterexample=trace, details=f"{bound}; {details}")
    return Result(status=status, details=f"{details}; {bound}, no claim broken")


def check50(case: Case50) -> Result:
    """The unbounded engine and the explicit search on the same case; they must agree."""
    if case.kind == "alias":
        unbounded = topic_alias(case.flows)
        worlds, trace = 0, None
        for tam in (1, 2):
            count, found = AliasExplorer(case.flows, topic_alias_maximum=tam).search()
            worlds += count
            trace = trace or found
        broken = "a PUBLISH resolved to another topic or refused" if trace else ""
        return _agree(unbounded, worlds, broken, trace)
    if case.kind == "flow-control":
        verdict, details, states = flow_control(case.flows)
        worlds, broken, trace = _explicit(case)
        return _agree((verdict, f"{details} ({states} local states)"), worlds, broken, trace)
    # one message: every local state it can reach, for any number of losses
    claims = case.local or {}
    closure = local_closure(case.flows, case.qos, clean=case.clean_reconnect)
    failing = [name for name, claim in claims.items() if not all(claim(m) for m in closure)]
    if case.quiet_delivers and any(m.d == 0 for m in quiet_states(case.flows, closure)):
        failing.append("delivered when quiet")
    status: Status = "refuted" if failing else "proved"
    details = (
        f"exhaustive over the {len(closure)} local states one message reaches under any "
        "number of connection losses" + (f": {', '.join(failing)} broken" if failing else "")
    )
    worlds, broken, trace = _explicit(case)
    if status == "refuted" and trace is None:
        return Result(status="failed", details=f"{details}, but no trace within the search")
    return _agree((status, details), worlds, broken, trace)


def _at_most_once(m: Local) -> bool:
    return m.d <= 1


def _completed_delivered(m: Local) -> bool:
    """A message the sender has completed (its identifier free) was delivered."""
    return m.s is not SS.FREE or m.d >= 1


def _never_resent_after_error(m: Local) -> bool:
    return not m.late


def _not_delivered_after_error(m: Local) -> bool:
    return not m.d_after


def _qos2_error_delivers_nothing(m: Local) -> bool:
    return not (m.qos == 2 and m.err and m.d > 0)


SUCCESS_A = Flows50(method=Method.A)
SUCCESS_B = Flows50(method=Method.B)
REFUSING_B = Flows50(method=Method.B, refusals=True)
REFUSING_A = Flows50(method=Method.A, refusals=True)


def _flow_control(flows: Flows50, world: dict[str, WorldClaim] | None = None) -> Case50:
    claims = world or {
        "at most Receive Maximum unacknowledged": lambda w: unacknowledged(w) <= w.rm,
        "no DISCONNECT 0x93": lambda w: not w.over,
    }
    return Case50(
        kind="flow-control", flows=flows, qos=(2, 1, 2), world=claims,
        receive_maximums=(1, 2), clean_reconnect=True,
    )  # fmt: skip


def _with(flows: Flows50, mutations: Mutations50) -> Flows50:
    return replace(flows, mutations=mutations)


NO_0X93: dict[str, WorldClaim] = {"no DISCONNECT 0x93": lambda w: not w.over}

flow_control_bound = theorem(
    id="proto.v5.flow-control",
    statement="For every Receive Maximum from 1 to 65,535, any number of messages at QoS 1 "
    "and 2 and any number of connection losses (resumed or clean), a sender that follows "
    "the 5.0 tables never has more than Receive Maximum QoS 1 and 2 PUBLISH unacknowledged, "
    "and the receiver never has to send DISCONNECT 0x93; receivers may refuse messages.",
    rules=["MQTT-3.3.4-7", "MQTT-3.3.4-9", "MQTT-4.9.0-1", "MQTT-4.9.0-2", "MQTT-4.4.0-1",
           "MQTT-4.4.0-2"],
    editions=V50,
    method="z3 (inductive invariant, counter abstraction, symbolic Receive Maximum) + explicit",
    model=_flow_control(REFUSING_B),
    mutants=[
        Broken("PUBREC 0x00 frees quota", "a PUBREC below 0x80 gives the quota back, as a "
               "PUBCOMP does", _flow_control(_with(REFUSING_B, PUBREC_FREES_QUOTA))),
        Broken("re-sent PUBREL takes no quota", "on a resumed session a flow awaiting "
               "PUBCOMP does not take its unit again",
               _flow_control(_with(REFUSING_B, PUBREL_RESENT_WITHOUT_QUOTA))),
        Broken("QoS 1 PUBLISH takes no quota", "a new QoS 1 PUBLISH is sent without taking "
               "a unit of the send quota", _flow_control(_with(REFUSING_B, PUBLISH_WITHOUT_QUOTA))),
    ],
)(check50)  # fmt: skip

flow_control_fails_when_pubrec_frees_quota = theorem(
    id="proto.v5.refute.flow-control-when-pubrec-frees-quota",
    statement="Flow control FAILS when a PUBREC below 0x80 frees a unit of the send quota: "
    "the receiver, holding Receive Maximum QoS 2 flows, gets one more and must send "
    "DISCONNECT 0x93.",
    rules=["MQTT-3.3.4-7", "MQTT-3.3.4-9", "MQTT-4.3.3-5"],
    editions=V50,
    method="z3 (inductive invariant, counter abstraction) + explicit",
    expected="refuted",
    model=_flow_control(_with(REFUSING_B, PUBREC_FREES_QUOTA), NO_0X93),
    mutants=[
        Broken("PUBREC keeps the quota", "the sender as the table has it",
               _flow_control(REFUSING_B, NO_0X93)),
    ],
)(check50)  # fmt: skip


def _message(flows: Flows50, qos: int, claims: dict[str, LocalClaim]) -> Case50:
    return Case50(
        kind="message", flows=flows, qos=(qos,), local=claims, disconnects=2, quiet_delivers=True
    )


AT_LEAST: dict[str, LocalClaim] = {"a completed message was delivered": _completed_delivered}
EXACTLY: dict[str, LocalClaim] = {"at most once": _at_most_once, **AT_LEAST}

qos1_at_least_once = theorem(
    id="proto.v5.qos1-at-least-once",
    statement="In 5.0, a QoS 1 message whose flow ends in success (PUBACK below 0x80) was "
    "delivered: over any number of connection losses, with the session resumed, in order.",
    rules=["MQTT-4.3.2-1", "MQTT-4.3.2-2", "MQTT-4.3.2-3", "MQTT-4.3.2-4", "MQTT-4.4.0-1",
           "MQTT-3.3.1-1"],
    editions=V50,
    method="explicit (exhaustive over one message's local states)",
    model=_message(SUCCESS_B, 1, AT_LEAST),
    mutants=[
        Broken("no re-send on resume", "the sender does not re-send the PUBLISH",
               _message(_with(SUCCESS_B, NO_RESEND_PUBLISH), 1, AT_LEAST)),
        Broken("receiver does not deliver", "the receiver acknowledges without delivering",
               _message(_with(SUCCESS_B, QOS1_NOT_DELIVERED), 1, AT_LEAST)),
    ],
)(check50)  # fmt: skip

qos2_exactly_once_a = theorem(
    id="proto.v5.qos2-exactly-once-method-a",
    statement="In 5.0, with Method A, a QoS 2 message whose flow ends in success is "
    "delivered exactly once: never twice, and surely once the sender has completed; over "
    "any number of losses, with the session resumed, in order.",
    rules=["MQTT-4.3.3-2", "MQTT-4.3.3-4", "MQTT-4.3.3-5", "MQTT-4.3.3-8", "MQTT-4.3.3-10",
           "MQTT-4.3.3-11", "MQTT-4.4.0-1"],
    editions=V50,
    method="explicit (exhaustive over one message's local states)",
    model=_message(SUCCESS_A, 2, EXACTLY),
    mutants=[
        Broken("deliver on PUBLISH too", "Method A that also delivers when it stores",
               _message(_with(SUCCESS_A, A_DELIVERS_EARLY), 2, EXACTLY)),
        Broken("no PUBREL re-send", "the sender does not re-send PUBREL on reconnect",
               _message(_with(SUCCESS_A, NO_RESEND_PUBREL), 2, EXACTLY)),
    ],
)(check50)  # fmt: skip

qos2_exactly_once_b = theorem(
    id="proto.v5.qos2-exactly-once-method-b",
    statement="In 5.0, with Method B, a QoS 2 message whose flow ends in success is "
    "delivered exactly once; over any number of losses, with the session resumed, in order.",
    rules=["MQTT-4.3.3-2", "MQTT-4.3.3-4", "MQTT-4.3.3-8", "MQTT-4.3.3-10", "MQTT-4.3.3-11",
           "MQTT-4.4.0-1"],
    editions=V50,
    method="explicit (exhaustive over one message's local states)",
    model=_message(SUCCESS_B, 2, EXACTLY),
    mutants=[
        Broken("forget on PUBREC", "the receiver drops the identifier when it sends PUBREC",
               _message(_with(SUCCESS_B, B_FORGETS_ON_PUBREC), 2, EXACTLY)),
        Broken("no PUBLISH re-send", "the sender does not re-send the PUBLISH on reconnect",
               _message(_with(SUCCESS_B, NO_RESEND_PUBLISH), 2, EXACTLY)),
    ],
)(check50)  # fmt: skip

ERROR_ENDS: dict[str, LocalClaim] = {
    "never re-sent after an error": _never_resent_after_error,
    "never delivered after an error": _not_delivered_after_error,
    "a QoS 2 flow ended by an error delivered nothing": _qos2_error_delivers_nothing,
}


def _error_case(flows: Flows50, qos: int = 1) -> Case50:
    return Case50(kind="message", flows=flows, qos=(1, 2) if qos == 0 else (qos,),
                  local=ERROR_ENDS, disconnects=2)  # fmt: skip


error_ends_the_flow = theorem(
    id="proto.v5.error-ends-the-flow",
    statement="A flow that ends with an error (PUBACK or PUBREC of 0x80 or more) is never "
    "re-sent and its message is not delivered after it; a QoS 2 flow that ends with an "
    "error delivered nothing (at most once); over any number of losses, either method.",
    rules=["MQTT-4.4.0-2", "MQTT-4.4.0-1", "MQTT-4.3.3-4", "MQTT-4.3.3-9"],
    editions=V50,
    method="explicit (exhaustive over one message's local states)",
    model=_error_case(REFUSING_B, 0),
    mutants=[
        Broken("re-send after an error PUBACK", "a PUBACK of 0x80 or more leaves the message "
               "unacknowledged", _error_case(_with(REFUSING_B, RESEND_AFTER_ERROR_PUBACK), 1)),
        Broken("re-send after an error PUBREC", "a PUBREC of 0x80 or more leaves the QoS 2 "
               "message unacknowledged", _error_case(_with(REFUSING_A, RESEND_AFTER_ERROR_PUBREC),
                                                     2)),
        Broken("refused and delivered", "a receiver that refuses a QoS 2 message and "
               "delivers it all the same", _error_case(_with(REFUSING_B, REFUSED_THEN_DELIVERED),
                                                      2)),
    ],
)(check50)  # fmt: skip

AFTER_ERROR: dict[str, LocalClaim] = {"never delivered after an error": _not_delivered_after_error}

resend_after_error_breaks_at_most_once = theorem(
    id="proto.v5.refute.at-most-once-when-resending-after-an-error",
    statement="At most once FAILS for a refused message when the sender re-sends after an "
    "error PUBACK: the re-sent PUBLISH reaches the application although its flow ended.",
    rules=["MQTT-4.4.0-2"],
    editions=V50,
    method="explicit (exhaustive over one message's local states)",
    expected="refuted",
    model=Case50(kind="message", flows=_with(REFUSING_B, RESEND_AFTER_ERROR_PUBACK), qos=(1,),
                 local=AFTER_ERROR, disconnects=1),
    mutants=[
        Broken("no re-send after an error", "the sender as the table has it",
               Case50(kind="message", flows=REFUSING_B, qos=(1,), local=AFTER_ERROR,
                      disconnects=1)),
    ],
)(check50)  # fmt: skip

topic_alias_resolves = theorem(
    id="proto.v5.topic-alias-resolves",
    statement="Over an in-order channel, for any Topic Alias Maximum, every PUBLISH the "
    "receiver resolves through a Topic Alias carries the topic name the sender meant, and "
    "no alias reaches it unmapped, across any number of reconnects.",
    rules=["MQTT-3.3.2-7", "MQTT-3.3.2-9", "MQTT-3.3.2-10", "MQTT-3.3.2-11", "MQTT-3.3.2-12",
           "PP50-3.3.2-topic-alias-unknown"],
    editions=V50,
    method="z3-spacer (one alias, symbolic maximum and topics) + explicit",
    model=Case50(kind="alias", flows=Flows50()),
    mutants=[
        Broken("aliases kept across a reconnect", "the sender keeps its Topic Alias map "
               "from one Network Connection to the next",
               Case50(kind="alias", flows=Flows50(mutations=ALIASES_KEPT))),
    ],
)(check50)  # fmt: skip

topic_alias_kept_fails = theorem(
    id="proto.v5.refute.topic-alias-kept-across-reconnect",
    statement="Topic Alias resolution FAILS when the sender keeps its alias map across a "
    "reconnect: it sends an alias alone that the new connection's receiver never heard.",
    rules=["MQTT-3.3.2-7", "PP50-3.3.2-topic-alias-unknown"],
    editions=V50,
    method="z3-spacer (one alias, symbolic maximum and topics) + explicit",
    expected="refuted",
    model=Case50(kind="alias", flows=Flows50(mutations=ALIASES_KEPT)),
    mutants=[
        Broken("aliases reset", "the sender as the table has it",
               Case50(kind="alias", flows=Flows50())),
    ],
)(check50)  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class Methods50:
    """Method A and Method B receivers side by side on the same 5.0 runs."""

    qos: tuple[int, ...] = (2, 2, 2)
    a: Mutations50 = field(default_factory=Mutations50)
    refusals: bool = False
    disconnects: int = 2


def sides(case: Methods50) -> tuple[Explorer50, Explorer50]:
    """The Method A and the Method B receiver's searches the lockstep runs side by side."""

    def side(method: Method, mutations: Mutations50) -> Explorer50:
        flows = Flows50(method=method, refusals=case.refusals, mutations=mutations)
        return Explorer50(
            flows, case.qos, receive_maximum=3, disconnects=case.disconnects,
            track_deliveries=True,
        )  # fmt: skip

    return side(Method.A, case.a), side(Method.B, Mutations50())


def check_methods50(case: Methods50) -> Result:
    pairs, broke, trace = lockstep(*sides(case))
    bound = (
        f"lockstep over {pairs} pairs of worlds: {len(case.qos)} messages, Receive Maximum 3, "
        f"{case.disconnects} connection losses, resumed"
    )
    if trace is not None:
        return Result(status="refuted", counterexample=trace, details=f"{bound}; {broke}")
    return Result(status="proved", details=f"{bound}; A a prefix of B throughout, equal at the end")


methods_agree = theorem(
    id="proto.v5.methods-a-and-b-deliver-the-same-sequence",
    statement="In 5.0, for flows the receiver accepts, run for run Method A's deliveries are "
    "a prefix of Method B's, neither delivers twice, and once every message is complete the "
    "sequences are equal; both answer every packet alike.",
    rules=["MQTT-4.3.3-8", "MQTT-4.3.3-10", "MQTT-4.3.3-11", "MQTT-4.3.3-9"],
    editions=V50,
    method="explicit (lockstep, 3 QoS 2 messages, 2 losses)",
    model=Methods50(),
    mutants=[
        Broken("A delivers on PUBLISH too", "Method A that also delivers when it stores",
               Methods50(a=A_DELIVERS_EARLY)),
    ],
)(check_methods50)  # fmt: skip

methods_differ_with_mixed_qos = theorem(
    id="proto.v5.refute.methods-agree-with-mixed-qos",
    statement="Methods A and B deliver different sequences in 5.0 too when QoS 1 and QoS 2 "
    "are mixed: a QoS 1 message published after a QoS 2 one is delivered first by Method A.",
    rules=["MQTT-4.3.3-8", "MQTT-4.3.2-4"],
    editions=V50,
    method="explicit (lockstep, 2 messages)",
    expected="refuted",
    model=Methods50(qos=(2, 1), disconnects=1),
    mutants=[
        Broken("QoS 2 only", "the same run with both messages at QoS 2",
               Methods50(qos=(2, 2), disconnects=1)),
    ],
)(check_methods50)  # fmt: skip

methods_differ_after_a_reversed_refusal = theorem(
    id="proto.v5.refute.methods-agree-when-a-refusal-is-reversed",
    statement="Methods A and B deliver different sequences in 5.0 when the receiver refuses "
    "a QoS 2 message (PUBREC 0x80), the PUBREC is lost with the connection, and the re-sent "
    "PUBLISH is accepted: the refusal freed the identifier, so the re-send is a new message "
    "to the receiver and Method B delivers it after the messages accepted meanwhile, Method "
    "A in the sender's order.",
    rules=["MQTT-4.3.3-9", "MQTT-4.4.0-1", "MQTT-4.3.3-8"],
    editions=V50,
    method="explicit (lockstep, 3 QoS 2 messages, 2 losses)",
    expected="refuted",
    model=Methods50(refusals=True),
    mutants=[
        Broken("no refusals", "the same runs with a receiver that accepts every message",
               Methods50(refusals=False)),
    ],
)(check_methods50)  # fmt: skip

THEOREM_ORDER = (
    flow_control_bound,
    flow_control_fails_when_pubrec_frees_quota,
    qos1_at_least_once,
    qos2_exactly_once_a,
    qos2_exactly_once_b,
    error_ends_the_flow,
    resend_after_error_breaks_at_most_once,
    topic_alias_resolves,
    topic_alias_kept_fails,
    methods_agree,
    methods_differ_with_mixed_qos,
    methods_differ_after_a_reversed_refusal,
)
