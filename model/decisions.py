"""Decision graphs: a flowchart as data, and the one walker that follows it.

Rules / theory of operation
---------------------------
A graph is a mapping from node keys to nodes. A *question* node has a ``yes`` and a ``no``
successor, an *action* node one successor (``then``), an *outcome* node none. Each node
names the rules that decide it, per edition. :func:`walk` follows a graph from a start
node for one case: it asks each question with the predicate registered under the node's
key, applies each action's function the same way, and stops at an outcome, returning the
outcome's key, the case as the actions left it, and the trail (every node passed, the
answer given and the ids of the rules cited). A question node that does not apply in the
edition (no rules there) is answered "no" without asking.

The same graphs are drawn by :mod:`.distribution_diagrams`, so the flowchart a reader sees
is the one the model follows: nothing is restated by hand.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TypeVar

from pubproof.model.distribution_rules import cite
from pubproof.model.editions import Edition
from pubproof.model.rules import Rule

CaseT = TypeVar("CaseT")
EDITIONS = tuple(Edition)


class NodeKind(enum.Enum):
    QUESTION = "question"
    ACTION = "action"
    OUTCOME = "outcome"


@dataclass(frozen=True, slots=True, kw_only=True)
class Node:
    """One box of a flowchart."""

    key: str
    kind: NodeKind
    text: str
    rules: Mapping[Edition, tuple[Rule, ...]]  # the rules that decide it, per edition
    yes: str | None = None
    no: str | None = None
    then: str | None = None

    def applies(self, edition: Edition) -> bool:
        return bool(self.rules.get(edition))

    def successors(self) -> tuple[str, ...]:
        return tuple(k for k in (self.yes, self.no, self.then) if k is not None)


@dataclass(frozen=True, slots=True, kw_only=True)
class Passed:
    """A node on the trail of one walk."""

    key: str
    answer: bool | None  # a question's answer; None for an action or the outcome
    rule_ids: tuple[str, ...]


def rules_by_edition(
    every: tuple[Rule, ...] = (),
    *,
    v31: tuple[Rule, ...] | None = None,
    v311: tuple[Rule, ...] | None = None,
    v50: tuple[Rule, ...] | None = None,
) -> Mapping[Edition, tuple[Rule, ...]]:
    """The rules of a node: ``every`` edition's, or those given for one edition."""
    given = {Edition.V31: v31, Edition.V311: v311, Edition.V50: v50}
    return MappingProxyType(
        {e: rules for e in EDITIONS if (rules := given[e] if given[e] is not None else every)}
    )


def question(
    key: str, text: str, rules: Mapping[Edition, tuple[Rule, ...]], yes: str, no: str
) -> Node:
    return Node(key=key, kind=NodeKind.QUESTION, text=text, rules=rules, yes=yes, no=no)


def action(key: str, text: str, rules: Mapping[Edition, tuple[Rule, ...]], then: str) -> Node:
    return Node(key=key, kind=NodeKind.ACTION, text=text, rules=rules, then=then)


def outcome(key: str, text: str, rules: Mapping[Edition, tuple[Rule, ...]] | None = None) -> Node:
    return Node(key=key, kind=NodeKind.OUTCOME, text=text, rules=rules or MappingProxyType({}))


def graph(*nodes: Node) -> Mapping[str, Node]:
    """A graph of ``nodes`` (the first is the start), checked to be closed: every successor
    is a node of the graph."""
    by_key = {n.key: n for n in nodes}
    if len(by_key) != len(nodes):
        raise ValueError("two nodes share a key")
    for node in nodes:
        for successor in node.successors():
            if successor not in by_key:
                raise ValueError(f"{node.key} leads to {successor!r}, which is not a node")
    return MappingProxyType(by_key)


def walk(
    nodes: Mapping[str, Node],
    case: CaseT,
    edition: Edition,
    ask: Mapping[str, Callable[[CaseT], bool]],
    do: Mapping[str, Callable[[CaseT], CaseT]],
    start: str | None = None,
) -> tuple[str, CaseT, tuple[Passed, ...]]:
    """Follow ``nodes`` from ``start`` (the first node) for ``case`` in ``edition``."""
    steps = _steps(nodes, edition)
    key = start if start is not None else next(iter(nodes))
    trail: list[Passed] = []
    for _ in range(len(nodes) + 1):
        step = steps[key]
        if step is None:  # a rule of the node has no id in the edition: cite's KeyError
            step = _step(nodes[key], edition)
        if step.kind is NodeKind.OUTCOME:
            trail.append(step.no)
            return key, case, tuple(trail)
        if step.kind is NodeKind.ACTION:
            case = do[key](case)
            trail.append(step.no)
            key = step.then
            continue
        # a question that does not apply in the edition is answered "no" without asking
        if step.yes is not None and ask[key](case):
            trail.append(step.yes)
            key = step.then
        else:
            trail.append(step.no)
            key = step.otherwise
    raise ValueError("the walk did not reach an outcome: the graph has a cycle")


@dataclass(frozen=True, slots=True)
class _Step:
    """What a walk passes at one node in one edition, made once (the ids its rules are
    cited by): the trail's entry ``no`` (an outcome's, an action's, or a question's "no"
    answer) and ``yes`` (a question's "yes"; None where it does not apply), and the
    successor ``then`` (an action's, or a question's "yes") and ``otherwise`` ("no")."""

    kind: NodeKind
    no: Passed
    yes: Passed | None
    then: str
    otherwise: str


#: the steps of each graph in each edition, keyed by the graph's identity; the graph is
#: kept with them, so that identity is never another graph's
_STEPS: dict[tuple[int, Edition], tuple[Mapping[str, Node], dict[str, _Step | None]]] = {}


def _steps(nodes: Mapping[str, Node], edition: Edition) -> dict[str, _Step | None]:
    made = _STEPS.get((id(nodes), edition))
    if made is not None and made[0] is nodes:
        return made[1]
    if len(_STEPS) > 256:  # graphs made on the fly (tests): the cache stays bounded
        _STEPS.clear()
    steps: dict[str, _Step | None] = {}
    for key, node in nodes.items():
        try:
            steps[key] = _step(node, edition)
        except KeyError:
            steps[key] = None  # raised again if a walk reaches it
    _STEPS[id(nodes), edition] = (nodes, steps)
    return steps


def _step(node: Node, edition: Edition) -> _Step:
    """The step of ``node`` in ``edition`` (:func:`cite`'s KeyError where one of its rules
    has no id there)."""
    ids = tuple(cite(r, edition) for r in node.rules.get(edition, ()))
    if node.kind is not NodeKind.QUESTION:
        entry = Passed(key=node.key, answer=None, rule_ids=ids)
        return _Step(kind=node.kind, no=entry, yes=None, then=node.then or "", otherwise="")
    applies = node.applies(edition)
    assert node.yes is not None and node.no is not None
    return _Step(
        kind=node.kind,
        no=Passed(key=node.key, answer=False, rule_ids=ids if applies else ()),
        yes=Passed(key=node.key, answer=True, rule_ids=ids) if applies else None,
        then=node.yes,
        otherwise=node.no,
    )
