"""An inductive invariant that Spacer found, as predicates a person reads.

Spacer reports the invariant of the relation ``Reach(x0, ..., xn)`` over de Bruijn
variables (``And(Not(Var(12) <= -1), Or(...))``): ``Var(i)`` is the relation's ``i``-th
argument, the ``i``-th state variable of the encoding. :func:`clauses` parses that text and
gives one predicate per conjunct over the variables' names: a negated comparison flipped
(``Not(d >= 2)`` is ``d ≤ 1``), a disjunction of negations read as what never holds
together (``never: s = 2 and n_pubrel ≥ 1``), a state index shown with its state's name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

PREFIX = "inductive invariant found by Spacer: "


@dataclass(frozen=True, slots=True)
class Node:
    op: str  # "And", "Or", "Not" or "atom"
    args: tuple[Node, ...] = ()
    atom: str = ""


def _split_args(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def parse(text: str) -> Node:
    """The expression tree of Z3's printed formula (``And``, ``Or``, ``Not`` and atoms)."""
    text = " ".join(text.split())
    for op in ("And", "Or", "Not"):
        if text.startswith(op + "(") and _closes_at_end(text, len(op)):
            inner = text[len(op) + 1 : -1]
            return Node(op, tuple(parse(a) for a in _split_args(inner)))
    return Node("atom", atom=text)


def _closes_at_end(text: str, open_at: int) -> bool:
    depth = 0
    for index in range(open_at, len(text)):
        if text[index] == "(":
            depth += 1
        elif text[index] == ")":
            depth -= 1
            if depth == 0:
                return index == len(text) - 1
    return False


_COMPARE = re.compile(r"^(.+?) (<=|>=|==|<|>) (-?\d+)$")
_FLIP = {"<=": ">", ">=": "<", "==": "!=", "<": ">=", ">": "<="}
_SHOW = {"<=": "≤", ">=": "≥", "==": "=", "!=": "≠", "<": "<", ">": ">"}


def _names(atom: str, names: Sequence[str]) -> str:
    out = re.sub(r"Var\((\d+)\)", lambda m: names[int(m.group(1))], atom)
    out = re.sub(r"\+ -1\*", "- ", out)
    return out


def _compare(lhs: str, op: str, value: int, states: Mapping[str, Sequence[str]]) -> str:
    # integers: x > k is x >= k + 1, x < k is x <= k - 1
    if op == ">":
        op, value = ">=", value + 1
    elif op == "<":
        op, value = "<=", value - 1
    shown = str(value)
    if lhs in states and op in ("==", "!=") and 0 <= value < len(states[lhs]):
        shown = f"{value} ({states[lhs][value]})"
    return f"{lhs} {_SHOW[op]} {shown}"


def predicate(
    node: Node, names: Sequence[str], states: Mapping[str, Sequence[str]], negate: bool = False
) -> str:
    """One predicate in words and symbols."""
    if node.op == "Not":
        return predicate(node.args[0], names, states, not negate)
    if node.op == "atom":
        atom = _names(node.atom, names)
        match = _COMPARE.match(atom)
        if match:
            lhs, op, value = match.group(1), match.group(2), int(match.group(3))
            return _compare(lhs, _FLIP[op] if negate else op, value, states)
        return f"not ({atom})" if negate else atom
    if node.op == "Or" and not negate and all(a.op == "Not" for a in node.args):
        inner = [predicate(a.args[0], names, states) for a in node.args]
        return "never: " + " and ".join(inner)
    joiner = " or " if (node.op == "Or") != negate else " and "
    parts = [predicate(a, names, states, negate) for a in node.args]
    return "(" + joiner.join(parts) + ")" if len(parts) > 1 else parts[0]


def clauses(
    text: str, names: Sequence[str], states: Mapping[str, Sequence[str]] | None = None
) -> list[str]:
    """The invariant's conjuncts as readable predicates over ``names``."""
    tree = parse(text)
    conjuncts = tree.args if tree.op == "And" else (tree,)
    return [predicate(c, names, states or {}) for c in conjuncts]


def split_details(details: str) -> tuple[str, str] | None:
    """(the invariant's text, the rest of the details) when ``details`` reports a Spacer
    invariant, else None."""
    if not details.startswith(PREFIX):
        return None
    body = details[len(PREFIX) :]
    # the invariant is one balanced expression; what follows it ("; explorer agrees ...")
    depth = 0
    for index, char in enumerate(body):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == ";" and depth == 0:
            return body[:index].strip(), body[index + 1 :].strip()
    return body.strip(), ""
