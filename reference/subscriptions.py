"""The subscription index of a server: which subscriptions a topic name matches, fast.

Theory of operation:

* A subscription is a client identifier, the topic filter as the client sent it, and an
  options object the index keeps and never reads (granted QoS; in 5.0 No Local, Retain As
  Published, Retain Handling, Subscription Identifier). A client has at most one
  subscription per topic filter: subscribing again to an identical filter replaces it
  (3.1.1 [MQTT-3.8.4-3], 5.0 [MQTT-3.8.4-3]); UNSUBSCRIBE deletes the subscription whose
  filter is character for character the one given (3.1.1 and 5.0 [MQTT-3.10.4-1]).
* A 5.0 Shared Subscription ``$share/{ShareName}/{filter}`` is indexed by its filter, with
  its ShareName kept on the subscription: :attr:`Matches.shared` groups the members of each
  Shared Subscription, of which the server gives each message to one.
* The filters are kept in a trie of levels (:mod:`pubproof.reference.topics` says how
  levels match). A node holds the subscriptions whose filter ends there (``here``), those
  whose filter ends with a ``#`` level below it (``hash``), its children by plain level and
  its ``+`` child. Matching a topic name walks its levels once, following the plain child of
  each level and, from a stack, every ``+`` child, and collects ``hash`` at every node
  passed (``#`` matches its parent level too) and ``here`` at the node where the levels
  end. A topic name starting with ``$`` skips the root's ``+`` and ``#`` [MQTT-4.7.2-1].
* A match cache maps topic names to their :class:`Matches`. A change to a filter without
  wildcards can only change the answer for the topic name it spells, so it drops that one
  entry; a change to a filter with a wildcard drops the whole cache. The cache holds at
  most ``cache_size`` entries and is emptied when full: a *generation* ends. Where topic
  names seldom repeat the cache only costs (a look-up, an insertion, answers kept alive: a
  fifth of the rate on such traffic), so a generation whose entries were asked for again
  fewer than one time in four stops the caching for the next ``BYPASS`` generations' worth
  of answers (looked up, never stored), after which a generation is cached again to see
  whether the traffic changed. This decides only what is kept, never what is answered.
* Every topic name and topic filter is checked (:mod:`pubproof.reference.topics`); on any
  strings the index raises :class:`pubproof.reference.errors.InvalidTopic` and nothing else.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from itertools import chain
from typing import Any, Final, Generic, TypeVar

from pubproof.model.editions import Edition
from pubproof.reference.subscription_record import Subscription
from pubproof.reference.topics import (
    MULTI_LEVEL,
    SEPARATOR,
    SINGLE_LEVEL,
    check_topic_name,
    has_wildcard,
    split_shared,
)

Opts = TypeVar("Opts")
V50: Final = Edition.V50
#: how many topic names the match cache holds by default
CACHE_SIZE: Final = 65536
#: after a generation of the cache that did not pay, how many generations' worth of
#: answers are not stored
BYPASS: Final = 16


class Matches(Generic[Opts]):
    """The subscriptions that match one topic name (shared by every call that asks for
    that topic name until a subscription changes: read-only). It is built from the
    subscription tuples of the trie nodes that matched and flattens them on first use."""

    __slots__ = ("_chunks", "_flat", "_per_client", "_shared")

    def __init__(self, chunks: list[tuple[Subscription[Opts], ...]]) -> None:
        self._chunks = chunks
        self._flat: tuple[Subscription[Opts], ...] | None = None
        self._per_client: dict[str, tuple[Subscription[Opts], ...]] | None = None
        self._shared: dict[tuple[str, str], tuple[Subscription[Opts], ...]] | None = None

    @property
    def subscriptions(self) -> tuple[Subscription[Opts], ...]:
        """Every matching subscription, shared ones too, each once, in no promised order."""
        flat = self._flat
        if flat is None:
            chunks = self._chunks
            flat = self._flat = chunks[0] if len(chunks) == 1 else tuple(chain(*chunks))
        return flat

    def __len__(self) -> int:
        return len(self.subscriptions)

    def __bool__(self) -> bool:
        return bool(self._chunks)

    def __iter__(self) -> Iterator[Subscription[Opts]]:
        return iter(self.subscriptions)

    @property
    def per_client(self) -> Mapping[str, tuple[Subscription[Opts], ...]]:
        """The matching non-shared subscriptions by client identifier: a client with
        several (overlapping subscriptions, 5.0 [MQTT-3.3.4-2]) has them all here."""
        if self._per_client is None:
            self._group()
        assert self._per_client is not None
        return self._per_client

    @property
    def shared(self) -> Mapping[tuple[str, str], tuple[Subscription[Opts], ...]]:
        """The matching 5.0 Shared Subscriptions by (ShareName, filter), each with the
        subscriptions of its members."""
        if self._shared is None:
            self._group()
        assert self._shared is not None
        return self._shared

    def _group(self) -> None:
        per_client: dict[str, list[Subscription[Opts]]] = {}
        shared: dict[tuple[str, str], list[Subscription[Opts]]] = {}
        for sub in self.subscriptions:
            if sub.share_name is None:
                per_client.setdefault(sub.client_id, []).append(sub)
            else:
                shared.setdefault((sub.share_name, sub.filter), []).append(sub)
        self._per_client = {k: tuple(v) for k, v in per_client.items()}
        self._shared = {k: tuple(v) for k, v in shared.items()}


class _Slot(Generic[Opts]):
    """The subscriptions of one filter (several clients, several ShareNames), by
    (client identifier, topic filter), and the tuple of them that matching hands out
    (``chunk``, made on first use after a change)."""

    __slots__ = ("chunk", "members")

    def __init__(self) -> None:
        self.members: dict[tuple[str, str], Subscription[Opts]] = {}
        self.chunk: tuple[Subscription[Opts], ...] | None = None

    def freeze(self) -> tuple[Subscription[Opts], ...]:
        chunk = self.chunk = tuple(self.members.values())
        return chunk


class _Node(Generic[Opts]):
    """A level of the trie (see the module's docstring)."""

    __slots__ = ("children", "hash", "here", "plus")

    def __init__(self) -> None:
        self.children: dict[str, _Node[Opts]] = {}
        self.plus: _Node[Opts] | None = None
        #: the filters that end here, and those that end with '#' right below; None: none
        self.here: _Slot[Opts] | None = None
        self.hash: _Slot[Opts] | None = None

    def empty(self) -> bool:
        return not self.children and self.plus is None and self.here is None and self.hash is None


def _collect(root: _Node[Opts], topic_name: str) -> list[tuple[Subscription[Opts], ...]]:
    """The tuples of the subscriptions in the trie at ``root`` whose filter matches
    ``topic_name`` (a valid topic name), one tuple per filter. Walks down the plain child
    of each level and keeps the ``+`` children met on a stack, to walk them after (no
    recursion: a topic name may have 32,768 levels)."""
    levels = topic_name.split(SEPARATOR)
    n = len(levels)
    out: list[tuple[Subscription[Opts], ...]] = []
    stack: list[tuple[_Node[Opts], int]] = []
    node = root
    i = 0
    if topic_name[0] == "$":
        # [MQTT-4.7.2-1] "The Server MUST NOT match Topic Filters starting with a wildcard
        # character (# or +) with Topic Names beginning with a $ character": the root's '#'
        # and '+' are skipped, its plain children are not
        child = root.children.get(levels[0])
        if child is None:
            return out
        node = child
        i = 1
    while True:
        slot = node.hash
        if slot is not None:
            # [4.7.1.2] "The multi-level wildcard represents the parent and any number of
            # child levels": collected whether levels remain or not
            chunk = slot.chunk
            out.append(chunk if chunk is not None else slot.freeze())
        if i == n:
            slot = node.here
            if slot is not None:
                chunk = slot.chunk
                out.append(chunk if chunk is not None else slot.freeze())
        else:
            plus = node.plus
            if plus is not None:
                # [4.7.1.3] "The single-level wildcard ... matches only one topic level":
                # any level, the empty one included
                stack.append((plus, i + 1))
            child = node.children.get(levels[i])
            if child is not None:
                node = child
                i += 1
                continue
        if not stack:
            return out
        node, i = stack.pop()


_NO_MATCHES: Final[Matches[Any]] = Matches([])


class SubscriptionIndex(Generic[Opts]):
    """Every subscription of a server, indexed for :meth:`match`. ``Opts`` is the type of
    the options object each subscription carries."""

    __slots__ = (
        "_bypassed",
        "_cache",
        "_cache_size",
        "_clients",
        "_count",
        "_hits",
        "_inserted",
        "_root",
        "_storing",
    )

    def __init__(self, *, cache_size: int = CACHE_SIZE) -> None:
        """``cache_size``: how many topic names' answers are kept (0: no cache)."""
        self._root: _Node[Opts] = _Node()
        self._clients: dict[str, dict[str, Subscription[Opts]]] = {}
        self._cache: dict[str, Matches[Opts]] = {}
        self._cache_size = max(0, cache_size)
        self._count = 0
        #: whether answers are stored; hits and insertions of this generation; answers
        #: not stored since the last generation that did not pay
        self._storing = self._cache_size > 0
        self._hits = 0
        self._inserted = 0
        self._bypassed = 0

    # --- the questions ----------------------------------------------------------------

    def match(self, topic_name: str, edition: Edition = V50) -> Matches[Opts]:
        """The subscriptions whose filter matches ``topic_name`` ([4.7]; 3.1.1 and 5.0
        [MQTT-4.5.0-1] "every Client with a matching subscription"). Raises
        :class:`InvalidTopic` (naming ``edition``'s rule) for an invalid topic name."""
        found = self._cache.get(topic_name)
        if found is not None:
            self._hits += 1
            return found
        check_topic_name(topic_name, edition)
        chunks = _collect(self._root, topic_name)
        result: Matches[Opts] = Matches(chunks) if chunks else _NO_MATCHES
        if self._storing:
            if len(self._cache) >= self._cache_size:
                self._end_generation()
            if self._storing:
                self._cache[topic_name] = result
                self._inserted += 1
        elif self._cache_size:
            self._bypassed += 1
            if self._bypassed >= BYPASS * self._cache_size:
                self._storing = True
                self._bypassed = 0
        return result

    def _end_generation(self) -> None:
        """The cache is full: empty it, and store no answers for a while unless at least
        one in four of the answers stored in this generation was asked for again."""
        self._storing = self._hits * 4 >= self._inserted
        self._cache.clear()
        self._hits = 0
        self._inserted = 0
        self._bypassed = 0

    def clear_cache(self) -> None:
        """Forget every cached answer (they are found again as they are asked for) and
        what the cache learnt of the traffic: the cache starts again as new."""
        self._cache.clear()
        self._storing = self._cache_size > 0
        self._hits = 0
        self._inserted = 0
        self._bypassed = 0

    def cached(self) -> int:
        """How many answers the match cache holds."""
        return len(self._cache)

    def get(self, client_id: str, topic_filter: str) -> Subscription[Opts] | None:
        """The subscription of ``client_id`` to ``topic_filter`` (as sent), if any."""
        own = self._clients.get(client_id)
        return None if own is None else own.get(topic_filter)

    def subscriptions_of(self, client_id: str) -> tuple[Subscription[Opts], ...]:
        """Every subscription of ``client_id``, in the order they were first made."""
        own = self._clients.get(client_id)
        return () if own is None else tuple(own.values())

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Subscription[Opts]]:
        for own in self._clients.values():
            yield from own.values()

    # --- the changes ------------------------------------------------------------------

    def subscribe(
        self, client_id: str, topic_filter: str, options: Opts, *, edition: Edition = V50
    ) -> Subscription[Opts] | None:
        """Add the subscription of ``client_id`` to ``topic_filter`` with ``options``, or
        replace the one it has with the identical filter; returns the replaced one (None
        when it is new). Raises :class:`InvalidTopic` for an invalid filter (in 5.0, a
        ``$share/`` filter is a Shared Subscription)."""
        share_name, filter_ = split_shared(topic_filter, edition)
        sub = Subscription(
            client_id=client_id,
            topic_filter=topic_filter,
            filter=filter_,
            share_name=share_name,
            options=options,
        )
        own = self._clients.get(client_id)
        if own is None:
            own = self._clients[client_id] = {}
        old = own.get(topic_filter)
        if old is not None and (old.filter != filter_ or old.share_name != share_name):
            # the same string subscribed under another edition ($share/ in 3.1.1 and 5.0)
            self._detach(old)
            old_filter: str | None = old.filter
        else:
            old_filter = None
        own[topic_filter] = sub
        if old is None:
            self._count += 1
        # [MQTT-3.8.4-3] "that existing Subscription MUST be replaced by a new Subscription"
        node, is_hash = self._node(filter_, create=True)
        assert node is not None
        slot = node.hash if is_hash else node.here
        if slot is None:
            slot = _Slot()
            if is_hash:
                node.hash = slot
            else:
                node.here = slot
        slot.members[(client_id, topic_filter)] = sub
        slot.chunk = None
        self._invalidate(filter_)
        if old_filter is not None:
            self._invalidate(old_filter)
        return old

    def unsubscribe(self, client_id: str, topic_filter: str) -> Subscription[Opts] | None:
        """Delete the subscription of ``client_id`` whose filter is ``topic_filter``
        character for character ([MQTT-3.10.4-1]; wildcards taken literally); returns it,
        or None when there was none (5.0: Reason Code 0x11 No subscription existed)."""
        own = self._clients.get(client_id)
        if own is None:
            return None
        old = own.pop(topic_filter, None)
        if old is None:
            return None
        if not own:
            del self._clients[client_id]
        self._count -= 1
        self._detach(old)
        self._invalidate(old.filter)
        return old

    def remove_client(self, client_id: str) -> tuple[Subscription[Opts], ...]:
        """Delete every subscription of ``client_id`` (its session ended); returns them."""
        own = self._clients.pop(client_id, None)
        if own is None:
            return ()
        wildcard = False
        for sub in own.values():
            self._detach(sub)
            if has_wildcard(sub.filter):
                wildcard = True
            else:
                self._cache.pop(sub.filter, None)
        if wildcard:
            self._cache.clear()
        self._count -= len(own)
        return tuple(own.values())

    # --- the trie ---------------------------------------------------------------------

    def _node(self, filter_: str, *, create: bool) -> tuple[_Node[Opts] | None, bool]:
        """The node that holds the subscriptions of ``filter_`` and whether they are in
        its ``hash`` (the filter ends with ``#``) or its ``here``."""
        levels = filter_.split(SEPARATOR)
        is_hash = levels[-1] == MULTI_LEVEL
        if is_hash:
            levels.pop()
        node = self._root
        for level in levels:
            if level == SINGLE_LEVEL:
                child = node.plus
                if child is None:
                    if not create:
                        return None, is_hash
                    child = node.plus = _Node()
            else:
                child = node.children.get(level)
                if child is None:
                    if not create:
                        return None, is_hash
                    child = node.children[level] = _Node()
            node = child
        return node, is_hash

    def _detach(self, sub: Subscription[Opts]) -> None:
        """Take ``sub`` out of the trie and drop the nodes left empty."""
        levels = sub.filter.split(SEPARATOR)
        is_hash = levels[-1] == MULTI_LEVEL
        if is_hash:
            levels.pop()
        path: list[_Node[Opts]] = [self._root]
        node: _Node[Opts] | None = self._root
        for level in levels:
            assert node is not None
            node = node.plus if level == SINGLE_LEVEL else node.children.get(level)
            if node is None:
                return
            path.append(node)
        assert node is not None
        key = (sub.client_id, sub.topic_filter)
        slot = node.hash if is_hash else node.here
        if slot is not None:
            slot.members.pop(key, None)
            slot.chunk = None
            if not slot.members:
                if is_hash:
                    node.hash = None
                else:
                    node.here = None
        for depth in range(len(levels), 0, -1):
            child = path[depth]
            if not child.empty():
                break
            parent = path[depth - 1]
            if levels[depth - 1] == SINGLE_LEVEL:
                parent.plus = None
            else:
                del parent.children[levels[depth - 1]]

    def _invalidate(self, filter_: str) -> None:
        """Drop the cached answers a change to a subscription with ``filter_`` may alter."""
        if has_wildcard(filter_):
            self._cache.clear()
        else:
            # a filter without wildcards matches only the topic name it spells [MQTT-4.7.3-4]
            self._cache.pop(filter_, None)

    def node_count(self) -> int:
        """How many trie nodes the index holds, the root included (for the tests: no
        empty node is kept)."""
        count = 0
        stack = [self._root]
        while stack:
            node = stack.pop()
            count += 1
            stack.extend(node.children.values())
            if node.plus is not None:
                stack.append(node.plus)
        return count
