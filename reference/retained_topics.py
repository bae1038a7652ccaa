"""The retained-topic index: which stored topic names a topic filter matches.

The question a server asks when a subscription is made (3.1.1 [MQTT-3.3.1-6], 5.0
[MQTT-3.3.1-9]): every retained message whose topic name matches the new filter. The
index keeps the topic names in a trie of levels, each node holding its children by level
and, when a stored topic name ends there, that name and its value. A filter is walked
level by level (:mod:`pubproof.reference.topics` says how levels match):

* a plain level follows the one child of that name (no scan);
* ``+`` follows every child of the node: the whole level is listed, nothing deeper;
* ``#`` takes the node it stands at (the parent level, ``a/#`` matches ``a``) and every
  stored topic name below it, found by walking that subtree; the trie keeps no empty node,
  so the subtree holds no more nodes than levels of the names it yields.
* a filter starting with ``#`` or ``+`` skips the first levels that start with ``$``
  [MQTT-4.7.2-1].

The values are opaque to the index (the retained message, or whatever the store keeps);
the store decides what a zero-length retained payload deletes ([MQTT-3.3.1-10] and 5.0
[MQTT-3.3.1-6]) and calls :meth:`RetainedTopics.discard`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final, Generic, TypeVar

from pubproof.model.editions import Edition
from pubproof.reference.topics import (
    MULTI_LEVEL,
    SEPARATOR,
    SINGLE_LEVEL,
    check_topic_filter,
    check_topic_name,
)

V = TypeVar("V")
V50: Final = Edition.V50


class _Node(Generic[V]):
    """A level of the trie: its children and, if a stored topic name ends here, that
    name with its value (``entry``, None otherwise)."""

    __slots__ = ("children", "entry")

    def __init__(self) -> None:
        self.children: dict[str, _Node[V]] = {}
        self.entry: tuple[str, V] | None = None


def _subtree(node: _Node[V], out: list[tuple[str, V]], *, skip_dollar: bool) -> None:
    """Every stored (topic name, value) at ``node`` and below it; ``skip_dollar``: not
    the children whose level starts with ``$`` (``node`` is the root)."""
    stack = [node]
    while stack:
        here = stack.pop()
        if here.entry is not None:
            out.append(here.entry)
        if skip_dollar and here is node:
            stack.extend(c for level, c in here.children.items() if not level.startswith("$"))
        else:
            stack.extend(here.children.values())


def _find(root: _Node[V], levels: list[str], out: list[tuple[str, V]]) -> None:
    """Collect the stored names that match the filter ``levels``. The nodes still to visit
    wait on a stack with the index of the filter's level they are at (no recursion: a filter
    may have 32,768 levels)."""
    stack: list[tuple[_Node[V], int]] = [(root, 0)]
    while stack:
        node, i = stack.pop()
        if i == len(levels):
            if node.entry is not None:
                out.append(node.entry)
            continue
        level = levels[i]
        if level == MULTI_LEVEL:
            # [4.7.1.2] "The multi-level wildcard represents the parent and any number of
            # child levels"; [MQTT-4.7.2-1] at the first level, no name starting with '$'
            _subtree(node, out, skip_dollar=i == 0)
        elif level == SINGLE_LEVEL:
            for name, child in node.children.items():
                # [MQTT-4.7.2-1] "MUST NOT match Topic Filters starting with a wildcard
                # character (# or +) with Topic Names beginning with a $ character"
                if i == 0 and name.startswith("$"):
                    continue
                stack.append((child, i + 1))
        else:
            found = node.children.get(level)
            if found is not None:
                stack.append((found, i + 1))


class RetainedTopics(Generic[V]):
    """Stored topic names with a value each, indexed for :meth:`match`."""

    __slots__ = ("_count", "_root")

    def __init__(self) -> None:
        self._root: _Node[V] = _Node()
        self._count = 0

    def set(self, topic_name: str, value: V, edition: Edition = V50) -> None:
        """Store ``value`` under ``topic_name`` (replacing what was there). Raises
        :class:`InvalidTopic` for an invalid topic name."""
        check_topic_name(topic_name, edition)
        node = self._root
        for level in topic_name.split(SEPARATOR):
            child = node.children.get(level)
            if child is None:
                child = node.children[level] = _Node()
            node = child
        if node.entry is None:
            self._count += 1
        node.entry = (topic_name, value)

    def _entry(self, topic_name: str) -> tuple[str, V] | None:
        node: _Node[V] | None = self._root
        for level in topic_name.split(SEPARATOR):
            assert node is not None
            node = node.children.get(level)
            if node is None:
                return None
        assert node is not None
        return node.entry

    def get(self, topic_name: str) -> V | None:
        """The value stored under ``topic_name``, or None."""
        entry = self._entry(topic_name)
        return None if entry is None else entry[1]

    def __contains__(self, topic_name: object) -> bool:
        return type(topic_name) is str and self._entry(topic_name) is not None

    def discard(self, topic_name: str) -> V | None:
        """Remove ``topic_name`` and return its value (None if it was not stored); the
        nodes left empty go with it."""
        levels = topic_name.split(SEPARATOR)
        path = [self._root]
        for level in levels:
            child = path[-1].children.get(level)
            if child is None:
                return None
            path.append(child)
        entry = path[-1].entry
        if entry is None:
            return None
        path[-1].entry = None
        self._count -= 1
        for depth in range(len(levels), 0, -1):
            here = path[depth]
            if here.entry is not None or here.children:
                break
            del path[depth - 1].children[levels[depth - 1]]
        return entry[1]

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[str]:
        """The stored topic names."""
        found: list[tuple[str, V]] = []
        _subtree(self._root, found, skip_dollar=False)
        return iter([name for name, _ in found])

    def match(self, topic_filter: str, edition: Edition = V50) -> list[tuple[str, V]]:
        """Every stored (topic name, value) whose name ``topic_filter`` matches, in no
        promised order. ``topic_filter`` is a plain filter (for a 5.0 Shared Subscription,
        its ``{filter}``; ``$share/`` is not read here). Raises :class:`InvalidTopic` for an
        invalid filter."""
        check_topic_filter(topic_filter, edition)
        out: list[tuple[str, V]] = []
        _find(self._root, topic_filter.split(SEPARATOR), out)
        return out

    def node_count(self) -> int:
        """How many trie nodes the index holds, the root included (for the tests: no
        empty node is kept)."""
        count = 0
        stack = [self._root]
        while stack:
            count += 1
            stack.extend(stack.pop().children.values())
        return count
