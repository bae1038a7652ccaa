"""Message ordering (4.6): which order a server must keep towards each subscriber.

Rules / theory of operation
---------------------------
"A Server MUST by default treat each Topic as an "Ordered Topic"" [MQTT-4.6.0-5] (5.0:
[MQTT-4.6.0-6], when forwarding on Non-shared Subscriptions), and on an Ordered Topic "it
MUST send PUBLISH packets to consumers (for the same Topic and QoS) in the order that they
were received from any given Client" [MQTT-4.6.0-6] (5.0: [MQTT-4.6.0-5]). So two copies to
one subscriber must go out in the order the server took ownership of their messages when
the messages came from the same client, on the same topic, at the same QoS (reading
``ordering-qos``: the QoS published, or the QoS of the copies), on an Ordered Topic
(reading ``unordered-topics``), for a 5.0 Non-shared Subscription, and (reading
``ordering-retained``) both were forwarded live rather than sent for a new subscription.
Nothing else is ordered: messages of different publishers, topics or QoS may overtake each
other. The distribution model keeps every session's copies in one order, which satisfies
this; :func:`ordering_problems` judges an order a server actually used.

The client's rules 4.6.0-1..4 (re-sending and acknowledging in order), which 3.1.1
[MQTT-4.6.0-6] also puts on the server towards each subscriber, are the flows' to judge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pubproof.model import distribution_rules as D
from pubproof.model.distribution_rules import cite
from pubproof.model.editions import Edition
from pubproof.model.forwarding import Problem
from pubproof.model.messages import Cause, Copy
from pubproof.model.subscriptions import ServerConfig
from pubproof.model.topic_filters import matches, parse_shared, reading


def ordered_topic(
    topic: str, edition: Edition, readings: Mapping[str, str] | None, config: ServerConfig
) -> bool:
    """Whether ``topic`` is an Ordered Topic: all are by default [MQTT-4.6.0-5]; under
    reading ``unordered-topics=configured`` not those the configuration makes Unordered."""
    if reading(readings, edition, "unordered-topics") == "none":
        return True
    return not any(matches(f, topic) for f in config.unordered_topics)


def order_groups(
    sent: Sequence[Copy],
    edition: Edition,
    readings: Mapping[str, str] | None = None,
    config: ServerConfig | None = None,
) -> list[tuple[str, str, int] | None]:
    """The order group of each copy of ``sent``: the copies it must keep its order with
    (those of the same group, by their messages' order), its publisher, topic and QoS
    (published or sent, as reading ``ordering-qos`` says); None for a copy that takes part
    in no order."""
    config = config or ServerConfig()
    by_published = reading(readings, edition, "ordering-qos") == "published"
    live_only = reading(readings, edition, "ordering-retained") == "live-only"
    v50 = edition is Edition.V50
    topics: dict[str, bool] = {}  # topic -> whether it is an Ordered Topic
    groups: list[tuple[str, str, int] | None] = []
    for copy in sent:
        topic = copy.topic
        ordered = topics.get(topic)
        if ordered is None:
            ordered = topics[topic] = ordered_topic(topic, edition, readings, config)
        if (
            not ordered
            or (live_only and copy.cause is not Cause.LIVE)
            # [MQTT-4.6.0-6] (5.0) "when it is forwarding messages on Non-shared ..."
            or (v50 and any(parse_shared(f, edition) for f in copy.topic_filters))
        ):
            groups.append(None)
            continue
        qos = copy.message.qos if by_published else copy.qos
        groups.append((copy.message.publisher, topic, qos))
    return groups


def ordering_problems(
    sent: Sequence[Copy],
    edition: Edition,
    readings: Mapping[str, str] | None = None,
    config: ServerConfig | None = None,
) -> list[Problem]:
    """The pairs of ``sent`` (the first transmissions to one session, in the order the
    server sent them) that break the order of 4.6."""
    config = config or ServerConfig()
    rule_id = cite(D.ORDER_PER_PUBLISHER, edition)
    problems = []
    last: dict[tuple[str, str, int], Copy] = {}
    for copy, key in zip(sent, order_groups(sent, edition, readings, config), strict=True):
        if key is None:
            continue
        qos = key[2]
        before = last.get(key)
        if before is not None and before.message.seq > copy.message.seq:
            problems.append(
                Problem(
                    rule_id=rule_id,
                    message=f"message {copy.message.seq} from {key[0]!r} on {copy.topic!r} at "
                    f"QoS {qos} was sent after message {before.message.seq}, received later",
                )
            )
        if before is None or before.message.seq < copy.message.seq:
            last[key] = copy
    return problems


def ordering_rules(edition: Edition) -> tuple[str, str]:
    """The ids of the two ordering rules in ``edition``: every topic Ordered by default,
    and the order kept on an Ordered Topic."""
    return cite(D.ORDERED_BY_DEFAULT, edition), cite(D.ORDER_PER_PUBLISHER, edition)
