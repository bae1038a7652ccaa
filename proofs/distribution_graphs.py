"""The forwarding graphs in Z3: what copies a session is owed, for symbolic messages and
subscriptions.

Rules / theory of operation
---------------------------
:mod:`pubproof.model.forwarding` decides with decision graphs (``SUBSCRIPTION_GRAPH``,
``SESSION_GRAPH``, ``RETAINED_GRAPH``): nodes with their successors and, per edition, the
rules that decide them. :func:`walk` follows a graph *symbolically*: from the first node,
a question the edition has no rule for is answered "no" (as the model's walker does), any
other question splits the path in two on its Z3 meaning, an action applies its meaning to
the case; every path that reaches an outcome comes back with its condition and the case as
the actions left it. The graphs are the model's, node for node and edge for edge; only the
meaning of each node (what a question asks of a message and a subscription, what an action
does to the copy) is given here, in :data:`SUBSCRIPTION_MEANING`, :data:`SESSION_MEANING`
and :data:`RETAINED_MEANING`, by the node's key. A node without a meaning is an error, so a
node added to a graph cannot be passed over.

The inputs are symbolic: a message (its QoS, its RETAIN, whether the session is the
publisher's) and ``K`` subscriptions of one session (QoS granted, whether the filter
matches, No Local, Retain As Published, Shared, whether the Shared Subscription gave the
message to another member). :func:`session_copies` gives the copies the session is owed
as slots: one per subscription (its own copy) and one for the single copy that stands for
several, each with whether it is sent, its QoS, its RETAIN and which subscriptions it
stands for; :func:`retained_copy` the copy of a retained message sent to a subscription
just made (the walk of ``RETAINED_GRAPH``, then the shape the model's ``retained_shape``
gives). An :class:`Encoding` patches edges of the graphs or replaces a node's meaning by a
broken one (:data:`BROKEN`): that is what a mutant is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from pubproof.model.decisions import Node, NodeKind
from pubproof.model.editions import Edition
from pubproof.model.forwarding import RETAINED_GRAPH, SESSION_GRAPH, SUBSCRIPTION_GRAPH
from pubproof.model.subscriptions import RetainHandling
from pubproof.proofs.z3env import Expr, z3

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50
Case = Mapping[str, Expr]
Meaning = Mapping[str, Callable[["Setting", Case], Expr | Case]]
GRAPHS: Mapping[str, Mapping[str, Node]] = MappingProxyType({
    "subscription": SUBSCRIPTION_GRAPH, "session": SESSION_GRAPH, "retained": RETAINED_GRAPH,
})  # fmt: skip


@dataclass(frozen=True, slots=True)
class Setting:
    """An edition and the readings the meanings depend on."""

    edition: Edition
    overlapping_copies: str = "one-copy"
    retained_qos_31: str = "granted"

    def readings(self) -> dict[str, str]:
        found = {"overlapping-copies": self.overlapping_copies}
        if self.edition is V31:
            found["retained-qos-31"] = self.retained_qos_31
        return found

    def describe(self) -> str:
        return self.edition.value + "".join(f" {k}={v}" for k, v in self.readings().items())


def _min(a: Expr, b: Expr) -> Expr:
    return z3.If(a <= b, a, b)


def _max(a: Expr, b: Expr) -> Expr:
    return z3.If(a >= b, a, b)


@dataclass(frozen=True, slots=True)
class Sub:
    """One subscription of the session, symbolic."""

    granted: Expr
    match: Expr
    no_local: Expr
    rap: Expr  # Retain As Published
    shared: Expr
    other_member: Expr  # a Shared Subscription gave the message to another member
    handling: Expr  # Retain Handling, 0..2
    existed: Expr  # the subscription replaced one with the same filter

    @classmethod
    def fresh(cls, tag: str) -> Sub:
        return cls(*(z3.Int(f"{n}{tag}") if n in ("granted", "handling") else z3.Bool(f"{n}{tag}")
                     for n in ("granted", "match", "no_local", "rap", "shared", "other_member",
                               "handling", "existed")))  # fmt: skip

    def domain(self) -> Expr:
        return z3.And(self.granted >= 0, self.granted <= 2, self.handling >= 0, self.handling <= 2)


@dataclass(frozen=True, slots=True)
class Offer:
    """A message offered to one session with ``K`` subscriptions, symbolic."""

    qos: Expr
    retain: Expr
    same_client: Expr  # the session's ClientID is the publisher's
    subs: tuple[Sub, ...]

    @classmethod
    def fresh(cls, k: int, tag: str = "") -> Offer:
        return cls(z3.Int(f"qos{tag}"), z3.Bool(f"retain{tag}"), z3.Bool(f"same_client{tag}"),
                   tuple(Sub.fresh(f"{i}{tag}") for i in range(k)))  # fmt: skip

    def domain(self) -> Expr:
        return z3.And(self.qos >= 0, self.qos <= 2, *[s.domain() for s in self.subs])


@dataclass(frozen=True, slots=True)
class CopySlot:
    """A copy the session may be owed: whether it is, its QoS, RETAIN, whom it stands for."""

    sent: Expr
    qos: Expr
    retain: Expr
    stands_for: tuple[Expr, ...]  # per subscription


# -- the meanings of the nodes --------------------------------------------------------------

#: SUBSCRIPTION_GRAPH, for one message and one subscription (the case: the inputs, and the
#: copy's "qos" and "retain" as the actions set them)
SUBSCRIPTION_MEANING: Meaning = MappingProxyType({
    "match": lambda s, c: c["match"],
    # [MQTT-3.8.3-3] No Local: not to a connection with the publisher's ClientID
    "no-local": lambda s, c: z3.And(c["no_local"], c["same_client"]),
    "shared": lambda s, c: z3.And(c["shared"], c["other_member"]),
    "rap": lambda s, c: c["rap"],
    # [MQTT-3.8.4-6] "the minimum of the QoS of the originally published message and the
    # maximum QoS granted by the Server"
    "qos": lambda s, c: {**c, "qos": _min(c["pub_qos"], c["granted"])},
    "retain-as-published": lambda s, c: {**c, "retain": c["pub_retain"]},
    "retain-0": lambda s, c: {**c, "retain": z3.BoolVal(False)},
})  # fmt: skip


def _one_copy(setting: Setting, c: Case) -> Case:
    """One copy at the highest QoS, with the RETAIN of the first candidate at that QoS (the
    model's choice), standing for every candidate; or, by reading, one per candidate."""
    if setting.overlapping_copies != "one-copy":
        return {**c, "shape": "per-subscription"}
    return {**c, "shape": "one-copy"}


SESSION_MEANING: Meaning = MappingProxyType({
    "any-copy": lambda s, c: c["count"] >= 1,
    "overlap": lambda s, c: c["count"] > 1,
    "one-or-many": _one_copy,
    "single": lambda s, c: {**c, "shape": "per-subscription"},
})  # fmt: skip

RETAINED_MEANING: Meaning = MappingProxyType({
    "rs-shared": lambda s, c: c["shared"],
    "rs-existed": lambda s, c: c["existed"],
    # [MQTT-3.8.4-3] (3.1.1) re-sent; 5.0: only with Retain Handling 0 [MQTT-3.8.4-4]
    "rs-again": lambda s, c: z3.BoolVal(True) if s.edition is not V50
    else c["handling"] == int(RetainHandling.SEND),
    "rs-new": lambda s, c: z3.BoolVal(True) if s.edition is not V50
    else c["handling"] != int(RetainHandling.DONT_SEND),
    "rs-send": lambda s, c: c,
})  # fmt: skip

#: broken meanings, by name: (graph, node key, the meaning put in its place)
BROKEN: Mapping[str, tuple[str, str, Callable[[Setting, Case], Expr | Case]]] = MappingProxyType({
    "qos-max": ("subscription", "qos",
                lambda s, c: {**c, "qos": _max(c["pub_qos"], c["granted"])}),
    "per-subscription-as-one": ("session", "one-or-many",
                                lambda s, c: {**c, "shape": "one-copy"}),
})  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class Encoding:
    """The model's graphs with ``edges`` patched (graph, node, "yes"/"no"/"then",
    successor), the meanings with ``broken`` ones (names in :data:`BROKEN`) in place, and
    the shape of a retained copy as ``retained`` says (a mutant: "published", "retain-0")."""

    edges: tuple[tuple[str, str, str, str], ...] = ()
    broken: frozenset[str] = frozenset()
    retained: str = "model"

    def graph(self, name: str) -> Mapping[str, Node]:
        nodes = dict(GRAPHS[name])
        for graph_name, key, edge, successor in self.edges:
            if graph_name != name:
                continue
            node = nodes[key]
            if edge == "yes":
                nodes[key] = dataclasses.replace(node, yes=successor)
            elif edge == "no":
                nodes[key] = dataclasses.replace(node, no=successor)
            else:
                nodes[key] = dataclasses.replace(node, then=successor)
        return nodes

    def meaning(self, name: str) -> dict[str, Callable[[Setting, Case], Expr | Case]]:
        base = {"subscription": SUBSCRIPTION_MEANING, "session": SESSION_MEANING,
                "retained": RETAINED_MEANING}[name]  # fmt: skip
        found = dict(base)
        for broken in self.broken:
            graph_name, key, meaning = BROKEN[broken]
            if graph_name == name:
                found[key] = meaning
        return found


MODEL = Encoding()


def walk(
    encoding: Encoding, name: str, setting: Setting, case: Case
) -> list[tuple[str, Expr, Case]]:
    """Every path through graph ``name`` for ``case``: (outcome, condition, case there)."""
    nodes, meaning = encoding.graph(name), encoding.meaning(name)
    missing = [k for k, n in nodes.items() if n.kind is not NodeKind.OUTCOME and k not in meaning]
    if missing:
        raise KeyError(f"the encoding gives no meaning to the {name} graph's nodes {missing}")
    found: list[tuple[str, Expr, Case]] = []

    def visit(key: str, condition: Expr, here: Case, depth: int) -> None:
        if depth > len(nodes):
            raise ValueError(f"the {name} graph has a cycle through {key}")
        node = nodes[key]
        if node.kind is NodeKind.OUTCOME:
            found.append((key, condition, here))
        elif node.kind is NodeKind.ACTION:
            assert node.then is not None
            changed = meaning[key](setting, here)
            assert isinstance(changed, Mapping)
            visit(node.then, condition, changed, depth + 1)
        else:
            assert node.yes is not None and node.no is not None
            if not node.applies(setting.edition):  # no rule in this edition: "no"
                visit(node.no, condition, here, depth + 1)
                return
            answer = meaning[key](setting, here)
            visit(node.yes, z3.And(condition, answer), here, depth + 1)
            visit(node.no, z3.And(condition, z3.Not(answer)), here, depth + 1)

    visit(next(iter(nodes)), z3.BoolVal(True), case, 0)
    return found


def _pick(paths: list[tuple[str, Expr, Case]], field: str, default: Expr) -> Expr:
    """The value of ``field`` on whichever path is taken."""
    value = default
    for _, condition, case in paths:
        if field in case:
            value = z3.If(condition, case[field], value)
    return value


def _reached(paths: list[tuple[str, Expr, Case]], outcome: str) -> Expr:
    return z3.Or(*[c for key, c, _ in paths if key == outcome], z3.BoolVal(False))


def subscription_copy(
    encoding: Encoding, setting: Setting, offer: Offer, sub: Sub
) -> tuple[Expr, Expr, Expr]:
    """Whether ``sub`` makes a copy of the message, and its QoS and RETAIN."""
    case = {"pub_qos": offer.qos, "pub_retain": offer.retain, "same_client": offer.same_client,
            "granted": sub.granted, "match": sub.match, "no_local": sub.no_local,
            "rap": sub.rap, "shared": sub.shared, "other_member": sub.other_member}  # fmt: skip
    paths = walk(encoding, "subscription", setting, case)
    return (
        _reached(paths, "copy"),
        _pick(paths, "qos", z3.IntVal(-1)),
        _pick(paths, "retain", z3.BoolVal(False)),
    )


def session_copies(encoding: Encoding, setting: Setting, offer: Offer) -> list[CopySlot]:
    """The copies the session is owed: a slot per subscription, then the single copy."""
    made = [subscription_copy(encoding, setting, offer, s) for s in offer.subs]
    count = sum((z3.If(m, 1, 0) for m, _, _ in made), z3.IntVal(0))
    paths = walk(encoding, "session", setting, {"count": count})
    one = z3.Or(*[c for key, c, case in paths if key == "shaped" and case["shape"] == "one-copy"],
                z3.BoolVal(False))  # fmt: skip
    many = z3.Or(*[c for key, c, case in paths
                   if key == "shaped" and case["shape"] == "per-subscription"],
                 z3.BoolVal(False))  # fmt: skip
    slots = [
        CopySlot(
            sent=z3.And(many, m),
            qos=qos,
            retain=retain,
            stands_for=tuple(z3.BoolVal(i == j) for j in range(len(made))),
        )
        for i, (m, qos, retain) in enumerate(made)
    ]
    # the single copy: the highest QoS of the candidates; the RETAIN of the first candidate
    # at that QoS; it stands for every candidate
    highest: Expr = z3.IntVal(-1)
    for m, qos, _ in made:
        highest = z3.If(z3.And(m, qos > highest), qos, highest)
    retain: Expr = z3.BoolVal(False)
    for m, qos, own in reversed(made):
        retain = z3.If(z3.And(m, qos == highest), own, retain)
    slots.append(CopySlot(sent=one, qos=highest, retain=retain,
                          stands_for=tuple(m for m, _, _ in made)))  # fmt: skip
    return slots


def retained_copy(encoding: Encoding, setting: Setting, message_qos: Expr, sub: Sub) -> CopySlot:
    """The copy of a retained message of ``message_qos`` sent to ``sub`` just made (when
    its filter matches the message's topic name: the store's ``matching``)."""
    case = {"shared": sub.shared, "existed": sub.existed, "handling": sub.handling}
    paths = walk(encoding, "retained", setting, case)
    sent = z3.And(sub.match, _reached(paths, "rs-sent"))
    # the model's retained_shape: [MQTT-3.8.4-6] the lower of its QoS and the QoS granted
    # (3.1: reading retained-qos-31), RETAIN 1 [MQTT-3.3.1-8]
    qos = _min(message_qos, sub.granted)
    as_published = setting.edition is V31 and setting.retained_qos_31 == "as-published"
    if as_published or encoding.retained == "published":
        qos = message_qos
    retain = z3.BoolVal(encoding.retained != "retain-0")
    return CopySlot(sent=sent, qos=qos, retain=retain, stands_for=(z3.BoolVal(True),))


__all__ = [
    "BROKEN",
    "MODEL",
    "CopySlot",
    "Encoding",
    "Offer",
    "Setting",
    "Sub",
    "retained_copy",
    "session_copies",
    "subscription_copy",
    "walk",
]
