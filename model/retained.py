"""The retained store: at most one retained message per topic name, as a transition table.

Rules / theory of operation
---------------------------
Per topic name the store is in one of two states, NONE or HELD (a message). The inputs are
the messages the server takes ownership of (RETAIN 1 with a payload, RETAIN 1 with a
zero-byte payload, RETAIN 0) and three things that happen to a held message (the server
discards it, its Message Expiry Interval runs out, a Session ends)::

    any   --RETAIN 1, payload--> HELD (this message)  [MQTT-3.3.1-5] (QoS 0: [MQTT-3.3.1-7])
    any   --RETAIN 1, empty----> NONE                 [MQTT-3.3.1-10] [MQTT-3.3.1-11]
    any   --RETAIN 0-----------> unchanged            [MQTT-3.3.1-12]
    HELD  --server discards----> NONE  only a QoS 0 message [MQTT-3.3.1-7] (3.1: any)
    HELD  --expires (5.0)------> NONE                 (3.3.1.3, unlabelled)
    HELD  --a Session ends-----> HELD                 [MQTT-3.1.2-7]

(5.0 numbers them 3.3.1-5, -6, -7, -8.) MQTT 3.1 says the server "should hold on to" a
retained message and "may delete" it on a zero-length one: under reading
``retained-empty-31=may-delete`` the empty message may instead be held like any other. An
entry's ``action`` is what the oracle does; ``alternatives`` are the other outcomes the
text allows, which a judge accepts.

``retained_table(edition, readings)`` is the table as data; :class:`RetainedStore` applies
it. A retained message sent to a new subscription goes out at the lower of its QoS and the
QoS granted (3.1: reading ``retained-qos-31``) with RETAIN 1 [MQTT-3.3.1-8]: that is
:mod:`.forwarding`'s work; the store only says what it holds.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from pubproof.model import distribution_rules as D
from pubproof.model import distribution_rules50 as D50
from pubproof.model.distribution_rules import cite
from pubproof.model.editions import Edition
from pubproof.model.messages import Message
from pubproof.model.rules import Rule
from pubproof.model.topic_filters import reading, subscription_matches

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50


class RetainedState(enum.Enum):
    NONE = "no retained message"
    HELD = "holds a retained message"


class RetainedInput(enum.Enum):
    RETAIN = "PUBLISH, RETAIN 1, with a payload"
    RETAIN_EMPTY = "PUBLISH, RETAIN 1, zero-byte payload"
    NOT_RETAINED = "PUBLISH, RETAIN 0"
    DISCARD = "the server discards it"
    EXPIRE = "its Message Expiry Interval passes"
    SESSION_ENDS = "a Session ends"


class RetainedAction(enum.Enum):
    STORE = "store this message (replacing any other)"
    DELETE = "remove the retained message"
    KEEP = "leave the store as it is"


@dataclass(frozen=True, slots=True, kw_only=True)
class RetainedStep:
    """One table entry: what the oracle does, what else the text allows, and why."""

    next: RetainedState
    action: RetainedAction
    rules: tuple[Rule, ...]
    alternatives: tuple[tuple[RetainedState, RetainedAction], ...] = ()


S, IN, A = RetainedState, RetainedInput, RetainedAction


def retained_table(
    edition: Edition, readings: Mapping[str, str] | None = None
) -> Mapping[tuple[RetainedState, RetainedInput], RetainedStep]:
    """The retained store's transitions in ``edition`` under ``readings``."""
    table: dict[tuple[RetainedState, RetainedInput], RetainedStep] = {}
    store: tuple[Rule, ...]
    empty_rules: tuple[Rule, ...]
    if edition is V31:
        store = (D.RETAIN_STORE_31,)
        may_delete = reading(readings, edition, "retained-empty-31") == "may-delete"
        empty_rules = (D.RETAIN_EMPTY_MAY_DELETE_31,) if may_delete else (D.RETAIN_EMPTY_DELETES,)
        empty_alt = ((S.HELD, A.STORE),) if may_delete else ()
        untouched: tuple[Rule, ...] = (D.RETAIN_FLAG0_UNTOUCHED,)  # 3.1.1's, as 3.1 is silent
        discard: tuple[Rule, ...] = (D.RETAIN_STORE_31,)  # "should hold on": may be lost
    else:
        store = (D.RETAIN_STORE,)
        empty_rules = (D.RETAIN_EMPTY_DELETES, D.RETAIN_EMPTY_NOT_STORED)
        empty_alt = ()
        untouched = (D.RETAIN_FLAG0_UNTOUCHED,)
        discard = (D.RETAIN_QOS0,) if edition is V311 else (D50.RETAIN_QOS0,)
    ends = (D.RETAIN_NOT_SESSION_STATE,) if edition is not V50 else (D50.RETAINED_NOT_SESSION,)
    for state in RetainedState:
        # [MQTT-3.3.1-5] "the Server MUST store the Application Message and its QoS"
        table[state, IN.RETAIN] = RetainedStep(next=S.HELD, action=A.STORE, rules=store)
        # [MQTT-3.3.1-10] "any existing retained message with the same topic name MUST be
        # removed"; [MQTT-3.3.1-11] "A zero byte retained message MUST NOT be stored"
        table[state, IN.RETAIN_EMPTY] = RetainedStep(
            next=S.NONE, action=A.DELETE, rules=empty_rules, alternatives=empty_alt
        )
        # [MQTT-3.3.1-12] "MUST NOT store the message and MUST NOT remove or replace any
        # existing retained message"
        table[state, IN.NOT_RETAINED] = RetainedStep(next=state, action=A.KEEP, rules=untouched)
        # [MQTT-3.1.2-7] "they MUST NOT be deleted when the Session ends"
        table[state, IN.SESSION_ENDS] = RetainedStep(next=state, action=A.KEEP, rules=ends)
    # [MQTT-3.3.1-7] "It SHOULD store the new QoS 0 message ..., but MAY choose to discard it
    # at any time" (the store checks that the message held is QoS 0; 3.1: any)
    table[S.HELD, IN.DISCARD] = RetainedStep(next=S.NONE, action=A.DELETE, rules=discard)
    if edition is V50:
        # 3.3.1.3: "If the current retained message for a Topic expires, it is discarded"
        table[S.HELD, IN.EXPIRE] = RetainedStep(
            next=S.NONE, action=A.DELETE, rules=(D50.RETAIN_EXPIRES,)
        )
    return MappingProxyType(table)


@dataclass(frozen=True, slots=True, kw_only=True)
class RetainedChange:
    """What one input did to one topic's retained message."""

    topic: str
    input: RetainedInput
    step: RetainedStep
    before: Message | None
    after: Message | None
    rule_ids: tuple[str, ...]


def input_of(message: Message) -> RetainedInput:
    """The store's input for a message the server took ownership of."""
    if not message.publication.retain:
        return IN.NOT_RETAINED
    return IN.RETAIN if message.publication.payload else IN.RETAIN_EMPTY


class RetainedStore:
    """The retained messages of one server, by topic name, driven by the table."""

    def __init__(self, edition: Edition, readings: Mapping[str, str] | None = None) -> None:
        self.edition = edition
        self.readings = dict(readings or {})
        self.table = retained_table(edition, readings)
        self._held: dict[str, Message] = {}

    def get(self, topic: str) -> Message | None:
        return self._held.get(topic)

    def snapshot(self) -> dict[str, Message]:
        """The retained message of each topic that has one."""
        return dict(self._held)

    def _step(self, topic: str, event: RetainedInput, message: Message | None) -> RetainedChange:
        before = self._held.get(topic)
        state = S.HELD if before is not None else S.NONE
        step = self.table.get((state, event))
        if step is None:
            raise ValueError(f"{event.value} is not defined when the topic {state.value}")
        if step.action is A.STORE:
            assert message is not None
            self._held[topic] = message
        elif step.action is A.DELETE:
            self._held.pop(topic, None)
        rules = step.rules
        if message is not None and event is IN.RETAIN and message.qos == 0 and self.edition is V311:
            rules = (*rules, D.RETAIN_QOS0)  # [MQTT-3.3.1-7] a QoS 0 one replaces it too
        ids = tuple(cite(r, self.edition) for r in rules)
        return RetainedChange(
            topic=topic,
            input=event,
            step=step,
            before=before,
            after=self._held.get(topic),
            rule_ids=ids,
        )

    def apply(self, message: Message) -> RetainedChange:
        """The store after the server takes ownership of ``message``."""
        return self._step(message.topic, input_of(message), message)

    def may_discard(self, topic: str) -> bool:
        """Whether the text lets the server drop the topic's retained message now: a QoS 0
        one [MQTT-3.3.1-7] (5.0 likewise, unlabelled); under 3.1 any ("should hold on")."""
        held = self._held.get(topic)
        return held is not None and (self.edition is V31 or held.qos == 0)

    def discard(self, topic: str) -> RetainedChange:
        """The server uses its freedom to drop the topic's retained message."""
        if not self.may_discard(topic):
            raise ValueError(f"the retained message of {topic!r} may not be discarded")
        return self._step(topic, IN.DISCARD, None)

    def expire(self, now: int, boundary: str = "at") -> list[RetainedChange]:
        """5.0: drop the retained messages whose Message Expiry Interval has passed."""
        if self.edition is not V50:
            return []
        gone = []
        for topic, held in list(self._held.items()):
            end = held.expires_at
            if end is not None and (now >= end if boundary == "at" else now > end):
                gone.append(self._step(topic, IN.EXPIRE, None))
        return gone

    def matching(self, topic_filter: str) -> list[Message]:
        """The retained messages a subscription with ``topic_filter`` matches, by topic name
        (the order of several is not the text's concern: the oracle sorts them)."""
        return [
            self._held[topic]
            for topic in sorted(self._held)
            if subscription_matches(topic_filter, topic, self.edition, self.readings)
        ]
