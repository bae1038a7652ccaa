"""One subscription as the subscription index keeps it
(:mod:`pubproof.reference.subscriptions`).

A module of its own, kept out of the mypyc build: mypyc cannot compile a generic dataclass
(mypyc/mypyc#827, "Dataclass + Generic fails"), and nothing reads a subscription on the
path that matching takes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from pubproof.model.editions import Edition
from pubproof.reference.errors import InvalidTopic
from pubproof.reference.topics import RULE_IDS, SEPARATOR, SHARE_PREFIX

Opts = TypeVar("Opts")


@dataclass(frozen=True, slots=True, kw_only=True)
class Subscription(Generic[Opts]):
    """One subscription of one client, as the index keeps it."""

    client_id: str
    #: the topic filter as the client sent it (its identity for UNSUBSCRIBE)
    topic_filter: str
    #: the filter matched against topic names: ``topic_filter`` itself, or the ``{filter}``
    #: of a 5.0 ``$share/{ShareName}/{filter}``
    filter: str
    #: the ShareName of a 5.0 Shared Subscription, else None
    share_name: str | None
    #: what the server granted and asked for (opaque to the index)
    options: Opts

    def __post_init__(self) -> None:
        whole = (
            self.filter
            if self.share_name is None
            else f"{SHARE_PREFIX}{self.share_name}{SEPARATOR}{self.filter}"
        )
        if whole != self.topic_filter:
            raise InvalidTopic(
                RULE_IDS["share-form"][Edition.V50],
                f"topic filter {self.topic_filter!r} is not ShareName {self.share_name!r} "
                f"and filter {self.filter!r}",
                edition=Edition.V50.value,
            )
