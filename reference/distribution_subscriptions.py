"""The subscriptions of the distribution core: every session's, for matching, and the
members of each Shared Subscription.

Rules / theory of operation
---------------------------
Every subscription goes into :class:`pubproof.reference.subscriptions.SubscriptionIndex`
with its :class:`.distribution_state.Grant` as the options; :meth:`Subscriptions.match`
gives the index's answer for a topic name: the matching non-shared subscriptions by client
identifier, and the matching 5.0 Shared Subscriptions by (ShareName, filter).

A Shared Subscription is a group of sessions, each with its own grant ("Each subscription
to a Shared Subscription is a separate subscription", 4.8.2); a session subscribing again
stays where it was in the group ("does not increase the number of times that the Session
is associated with the Shared Subscription"), one that unsubscribes or ends leaves it
("Sessions are also detached from the Shared Subscription when they terminate"), and a
group left empty goes. The groups keep the order their members joined, and the groups the
order they were formed: the core offers a message to the first connected member.

Two kinds of subscription the index does not answer for, both of MQTT 3.1 only, are kept
beside it and matched with :func:`.distribution_topics.plain_match`: a topic filter the
index refuses (under ``topic-rules=utf8-only`` an empty filter, or one with U+0000, which
only topic names the index also refuses can match), and, under ``dollar-topics=plain``, a
filter starting with a wildcard, which there matches a ``$`` topic name too (the index
always applies [MQTT-4.7.2-1], so for ``$`` names these are added to its answer).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pubproof.reference.distribution_state import Grant
from pubproof.reference.distribution_topics import TopicRules, plain_match, starts_with_wildcard
from pubproof.reference.errors import InvalidTopic
from pubproof.reference.subscription_record import Subscription
from pubproof.reference.subscriptions import SubscriptionIndex

Record = Subscription[Grant]
PerClient = Mapping[str, tuple[Record, ...]]
GroupKey = tuple[str, str]  # (ShareName, filter)


@dataclass(slots=True, kw_only=True)
class SharedGroup:
    """The members of one Shared Subscription ``$share/{ShareName}/{filter}``."""

    topic_filter: str  # the whole filter, as subscribed
    order: int  # when the group was formed
    members: dict[str, Grant] = field(default_factory=dict)  # by client id, in joining order


class Subscriptions:
    """Every subscription of one server."""

    __slots__ = (
        "_edition",
        "_groups",
        "_index",
        "_joined",
        "_order",
        "_refused",
        "_root_wild",
        "_rules",
    )

    def __init__(self, rules: TopicRules) -> None:
        self._rules = rules
        self._edition = rules.edition
        self._index: SubscriptionIndex[Grant] = SubscriptionIndex()
        #: 3.1: the subscriptions the index refuses, by (client identifier, filter)
        self._refused: dict[tuple[str, str], Record] = {}
        #: 3.1 dollar-topics=plain: those starting with a wildcard (in the index as well)
        self._root_wild: dict[tuple[str, str], Record] = {}
        self._groups: dict[GroupKey, SharedGroup] = {}
        #: the groups each client belongs to
        self._joined: dict[str, set[GroupKey]] = {}
        self._order = 0

    # -- the questions ---------------------------------------------------------------------

    def match(self, topic: str) -> tuple[PerClient, Mapping[GroupKey, tuple[Record, ...]]]:
        """The subscriptions matching the valid topic name ``topic``: the non-shared ones by
        client identifier, the Shared Subscriptions by (ShareName, filter). Raises
        :class:`InvalidTopic` for a name the index refuses (then see :meth:`scan`)."""
        found = self._index.match(topic, self._edition)
        if self._root_wild and topic[:1] == "$":
            return self._with_root_wildcards(found.per_client, topic), found.shared
        return found.per_client, found.shared

    def group(self, key: GroupKey) -> SharedGroup:
        return self._groups[key]

    def groups(self) -> Mapping[GroupKey, SharedGroup]:
        return self._groups

    def scan(self, topic: str) -> PerClient:
        """Every subscription matched one by one: for the 3.1 topic names the index
        refuses (rare by construction: empty, U+0000, a wildcard character)."""
        dollar = self._rules.dollar_rule
        out: dict[str, list[Record]] = {}
        for record in (*self._index, *self._refused.values()):
            if plain_match(record.filter, topic, dollar_rule=dollar):
                out.setdefault(record.client_id, []).append(record)
        return {client: tuple(records) for client, records in out.items()}

    def _with_root_wildcards(self, per_client: PerClient, topic: str) -> PerClient:
        """3.1 ``dollar-topics=plain``: the index's answer for a ``$`` name, with the
        filters starting with a wildcard that match it."""
        extra = [
            r for r in self._root_wild.values() if plain_match(r.filter, topic, dollar_rule=False)
        ]
        if not extra:
            return per_client
        merged = {client: list(records) for client, records in per_client.items()}
        for record in extra:
            merged.setdefault(record.client_id, []).append(record)
        return {client: tuple(records) for client, records in merged.items()}

    # -- the changes -----------------------------------------------------------------------

    def next_order(self) -> int:
        self._order += 1
        return self._order

    def add(self, client_id: str, grant: Grant) -> None:
        """Add or replace ``client_id``'s subscription with ``grant.topic_filter`` (valid in
        the edition); a Shared Subscription's member joins its group or keeps its place."""
        topic_filter = grant.topic_filter
        key = (client_id, topic_filter)
        try:
            self._index.subscribe(client_id, topic_filter, grant, edition=self._edition)
        except InvalidTopic:
            # a 3.1 filter the index refuses (empty, U+0000)
            self._refused[key] = Subscription(
                client_id=client_id,
                topic_filter=topic_filter,
                filter=topic_filter,
                share_name=None,
                options=grant,
            )
            return
        if not self._rules.dollar_rule and starts_with_wildcard(topic_filter):
            record = self._index.get(client_id, topic_filter)
            assert record is not None
            self._root_wild[key] = record
        if grant.share_name is not None:
            inner = topic_filter[len("$share/") + len(grant.share_name) + 1 :]
            group_key = (grant.share_name, inner)
            group = self._groups.get(group_key)
            if group is None:
                group = self._groups[group_key] = SharedGroup(
                    topic_filter=topic_filter, order=self.next_order()
                )
            group.members[client_id] = grant
            self._joined.setdefault(client_id, set()).add(group_key)

    def remove(self, client_id: str, topic_filter: str) -> Grant | None:
        """Delete ``client_id``'s subscription whose filter is ``topic_filter`` character
        for character [MQTT-3.10.4-1]; returns its grant (None: there was none)."""
        key = (client_id, topic_filter)
        refused = self._refused.pop(key, None)
        if refused is not None:
            return refused.options
        record = self._index.unsubscribe(client_id, topic_filter)
        if record is None:
            return None
        self._root_wild.pop(key, None)
        if record.share_name is not None:
            self._leave(client_id, (record.share_name, record.filter))
        return record.options

    def remove_client(self, client_id: str) -> None:
        """Delete every subscription of ``client_id`` (its session ended)."""
        for record in self._index.remove_client(client_id):
            self._root_wild.pop((client_id, record.topic_filter), None)
        for key in [k for k in self._refused if k[0] == client_id] if self._refused else ():
            del self._refused[key]
        for group_key in list(self._joined.get(client_id, ())):
            self._leave(client_id, group_key)

    def _leave(self, client_id: str, group_key: GroupKey) -> None:
        group = self._groups[group_key]
        del group.members[client_id]
        if not group.members:
            del self._groups[group_key]
        joined = self._joined[client_id]
        joined.discard(group_key)
        if not joined:
            del self._joined[client_id]
