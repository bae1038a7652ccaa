"""The readings of distribution: named choices where the texts about a server's behaviour
across sessions are silent, leave the server a freedom, or disagree.

Rules / theory of operation
---------------------------
A reading here is the same thing as in :mod:`pubproof.model.editions` (a ``Reading``: a
name, a question, its values, a default per edition with its reason, and the passages that
make it necessary), kept in its own table, ``DISTRIBUTION_READINGS``, so that the wire
verdicts and what they print (``resolve_readings``) stay as they are; a distribution
verdict names the pair (edition, ``resolve_distribution_readings(edition)``).

Two sorts of question are readings here, and each says which it is:

- *interpretation* (the texts are silent or disagree): the value changes what the model
  allows, so an oracle and a judge must use the same value;
- *server's choice* (the text gives the server a MAY): the value picks what the oracle
  does, deterministically; the allowed set a judge checks always holds every alternative
  the text permits, whatever the value.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from pubproof.model.editions import Edition, Passage, Reading, resolve_in

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50
ALL = (V31, V311, V50)


def _reading(
    name: str,
    question: str,
    values: dict[str, str],
    defaults: dict[Edition, str],
    why_default: str,
    *passages: Passage,
) -> Reading:
    for value in defaults.values():
        if value not in values:
            raise ValueError(f"reading {name}: default {value!r} is not a value")
    return Reading(
        name=name,
        question=question,
        values=MappingProxyType(values),
        defaults=MappingProxyType(defaults),
        why_default=why_default,
        passages=passages,
    )


OVERLAPPING_COPIES = _reading(
    "overlapping-copies",
    "Server's choice. When several subscriptions of one session match a message, does the "
    "server send one copy at the highest of their QoS (5.0: carrying every Subscription "
    "Identifier) or one copy per matching subscription, each at its own QoS (5.0: each with "
    "its own identifier)?",
    {
        "one-copy": "one copy, at the lower of the published QoS and the highest granted QoS",
        "per-subscription": "one copy for each matching subscription, each at its own QoS",
    },
    dict.fromkeys(ALL, "one-copy"),
    "3.1.1 and 5.0 require one delivery at the maximum QoS and allow further copies, one "
    "for each additional matching subscription [MQTT-3.3.5-1] [MQTT-3.3.4-2]; the judge "
    "accepts either (and the copies for any subset of the other subscriptions beside the "
    "one at the maximum QoS). MQTT 3.1 says nothing of overlapping subscriptions; the model "
    "allows it what 3.1.1 allows. The oracle sends one copy, the smallest conforming answer.",
    Passage(
        source="MQTT 3.1.1 section 3.3.5",
        text="In this case the Server MUST deliver the message to the Client respecting the "
        "maximum QoS of all the matching subscriptions [MQTT-3.3.5-1]. In addition, the "
        "Server MAY deliver further copies of the message, one for each additional matching "
        "subscription and respecting the subscription’s QoS in each case.",
    ),
    Passage(
        source="MQTT 5.0 section 3.3.4",
        text="If the Server sends a single copy of the message it MUST include in the PUBLISH "
        "packet the Subscription Identifiers for all matching subscriptions which have a "
        "Subscription Identifiers, their order is not significant [MQTT-3.3.4-4]. If the "
        "Server sends multiple PUBLISH packets it MUST send, in each of them, the "
        "Subscription Identifier of the matching subscription if it has a Subscription "
        "Identifier [MQTT-3.3.4-5].",
    ),
)

RETAINED_QOS_31 = _reading(
    "retained-qos-31",
    "Interpretation. Under MQTT 3.1, at which QoS is a retained message sent to a new "
    "subscription?",
    {
        "granted": "the lower of the QoS it was published with and the QoS granted, like "
        "every other message to that subscription",
        "as-published": "the QoS it was published with, even above the QoS granted",
    },
    {V31: "granted"},
    "The PUBLISH excerpt says the Retained value goes out 'with the same QoS with which it "
    "was originally published'; the 3.1 SUBSCRIBE section says a client 'receives PUBLISH "
    "messages at less than or equal to' the granted level and that 'The QoS of a message "
    "is never upgraded'. Read together, the excerpt keeps the publication's QoS as the "
    "upper bound and the grant still applies; 3.1.1 says so [MQTT-3.8.4-6].",
    Passage(
        source="publish.en.txt",
        text="The Retained value is published from the broker to the subscriber with the "
        "RETAIN flag set, and with the same QoS with which it was originally published, and "
        "so will be subject to the usual QoS delivery assurances.",
    ),
    Passage(
        source="MQTT V3.1 section 3.8",
        text="Assuming that the requested QoS level is granted, the client receives PUBLISH "
        "messages at less than or equal to this level, depending on the QoS level of the "
        "original message from the publisher.",
    ),
)

RETAINED_EMPTY_31 = _reading(
    "retained-empty-31",
    "Interpretation. Under MQTT 3.1, what does a retained PUBLISH with a zero-length "
    "payload do to the topic's retained message?",
    {
        "may-delete": "the server may delete it or keep the empty message as the retained "
        "one (the oracle deletes)",
        "delete": "it deletes it, as 3.1.1 requires [MQTT-3.3.1-10]",
    },
    {V31: "may-delete"},
    "The 3.1 text says 'may delete'; 3.1.1 made it a MUST and OASIS issue MQTT-19 records "
    "that 3.1 left the behaviour optional. The default keeps 3.1's words.",
    Passage(
        source="MQTT V3.1 section 2.1",
        text="A server may delete a retained message if it receives a message with a "
        "zero-length payload and the Retain flag set on the same topic.",
    ),
)

QUEUE_QOS0 = _reading(
    "queue-qos0",
    "Server's choice. Does the server keep QoS 0 messages for a session that is not "
    "connected, and send them when it reconnects?",
    {"drop": "no: only QoS 1 and QoS 2 messages are kept", "queue": "yes, like QoS 1 and 2"},
    {V311: "drop", V50: "drop"},
    "3.1.1 and 5.0 make it optional ('MAY also store QoS 0 messages', 'OPTIONALLY QoS 0 "
    "messages pending transmission'), so the judge accepts both; the oracle keeps only what "
    "it must. MQTT 3.1 is not a reading: 'QoS 0 messages are never stored'.",
    Passage(
        source="MQTT 3.1.1 section 3.1.2.4",
        text="It MAY also store QoS 0 messages that meet the same criteria.",
    ),
    Passage(
        source="MQTT 5.0 section 4.1",
        text="QoS 1 and QoS 2 messages pending transmission to the Client and OPTIONALLY QoS 0 "
        "messages pending transmission to the Client.",
    ),
    Passage(
        source="MQTT V3.1 section 3.1",
        text="QoS 0 messages are never stored, since they are delivered on a best efforts basis.",
    ),
)

UNORDERED_TOPICS = _reading(
    "unordered-topics",
    "Server's choice. Which topics does the server treat as Unordered Topics?",
    {
        "none": "none: every topic is an Ordered Topic",
        "configured": "the topics matching the server's configured Unordered Topic filters",
    },
    dict.fromkeys(ALL, "none"),
    "Every topic is ordered by default [MQTT-4.6.0-5] (5.0: [MQTT-4.6.0-6], on Non-shared "
    "Subscriptions); an administrative mechanism MAY make some unordered, which the model "
    "represents by a list of topic filters in the server's configuration. MQTT 3.1 has no "
    "ordering section; the model applies 3.1.1's.",
    Passage(
        source="MQTT 3.1.1 section 4.6",
        text='A Server MUST by default treat each Topic as an "Ordered Topic". It MAY provide '
        "an administrative or other mechanism to allow one or more Topics to be treated as an "
        '"Unordered Topic" [MQTT-4.6.0-5].',
    ),
)

ORDERING_QOS = _reading(
    "ordering-qos",
    "Interpretation. Ordering applies to PUBLISH packets 'for the same Topic and QoS': the "
    "QoS they were published with, or the QoS of the copies sent?",
    {
        "published": "messages of one publisher on one topic published at the same QoS",
        "outgoing": "copies to one subscriber on one topic sent at the same QoS",
    },
    dict.fromkeys(ALL, "published"),
    "The sentence speaks of the packets 'received from any given Client', and the "
    "non-normative comment after it says order across different QoS levels is kept only by "
    "an in-flight window of one, so the QoS is the publication's. Two messages published at "
    "QoS 2 and QoS 1 that both go out at QoS 1 are not ordered under 'published'.",
    Passage(
        source="MQTT 3.1.1 section 4.6",
        text="In addition it MUST send PUBLISH packets to consumers (for the same Topic and "
        "QoS) in the order that they were received from any given Client [MQTT-4.6.0-6].",
    ),
    Passage(
        source="MQTT 3.1.1 section 4.6 (non-normative comment)",
        text="Setting an in-flight window of 1 also means that order will be preserved even "
        "if the publisher sends a sequence of messages with different QoS levels on the same "
        "topic.",
    ),
)

ORDERING_RETAINED = _reading(
    "ordering-retained",
    "Interpretation. Does the order of an Ordered Topic bind retained messages sent for a new "
    "subscription, or only messages forwarded live?",
    {
        "live-only": "only copies forwarded to established subscriptions are ordered",
        "all": "a retained message must also precede later messages of the same publisher",
    },
    dict.fromkeys(ALL, "live-only"),
    "4.6 speaks of the order 'that they were received from any given Client', a property of "
    "a stream of forwarded messages; a retained message sent because of a new subscription "
    "is a separate delivery (3.3.1.3 sets it apart with RETAIN 1), and the server 'is "
    "permitted to start sending PUBLISH packets matching the Subscription before' the SUBACK "
    "(3.8.4) without any word on its place among the live ones.",
    Passage(
        source="MQTT 3.1.1 section 3.8.4",
        text="The Server is permitted to start sending PUBLISH packets matching the "
        "Subscription before the Server sends the SUBACK Packet.",
    ),
)

DOLLAR_TOPICS = _reading(
    "dollar-topics",
    "Interpretation. Under MQTT 3.1, does a topic filter starting with a wildcard match a "
    "topic name starting with '$'?",
    {
        "plain": "yes: 3.1 has no exception, '#' matches every topic",
        "as-3.1.1": "no, as 3.1.1 requires [MQTT-4.7.2-1]",
    },
    {V31: "plain"},
    "3.1 describes the wildcards (Appendix A) with no word about '$'; the exception is new "
    "in 3.1.1.",
    Passage(
        source="MQTT V3.1 Appendix A",
        text="The number sign (#) is a wildcard character that matches any number of levels "
        "within a topic.",
    ),
)

EXPIRY_BOUNDARY = _reading(
    "expiry-boundary",
    "Interpretation. When has a Message Expiry Interval 'passed': once the whole interval "
    "has elapsed, or only after more than it?",
    {
        "at": "expired once the time waited reaches the interval",
        "after": "expired only once the time waited exceeds the interval",
    },
    {V50: "at"},
    "An interval is a lifetime in seconds; at its end the forwarded interval would be 0, "
    "which gives the receiver no lifetime at all, so the oracle deletes the copy then. The "
    "judge accepts either at the exact instant.",
    Passage(
        source="MQTT 5.0 section 3.3.2.3.3",
        text="If present, the Four Byte value is the lifetime of the Application Message in "
        "seconds. If the Message Expiry Interval has passed and the Server has not managed to "
        "start onward delivery to a matching subscriber, then it MUST delete the copy of the "
        "message for that subscriber [MQTT-3.3.2-5].",
    ),
)

EXPIRY_ROUNDING = _reading(
    "expiry-rounding",
    "Interpretation. The forwarded Message Expiry Interval is 'the received value minus the "
    "time that the Application Message has been waiting': whole seconds, so which way is a "
    "fraction of a second rounded?",
    {"down": "the whole seconds left, rounded down", "up": "rounded up"},
    {V50: "down"},
    "The field is a whole number of seconds and the text says nothing of fractions. "
    "Rounding down never lengthens a message's life; the judge accepts either.",
    Passage(
        source="MQTT 5.0 section 3.3.2.3.3",
        text="The PUBLISH packet sent to a Client by the Server MUST contain a Message Expiry "
        "Interval set to the received value minus the time that the Application Message has "
        "been waiting in the Server [MQTT-3.3.2-6].",
    ),
)

INVALID_FILTER = _reading(
    "invalid-filter",
    "Interpretation. What does a server do with a SUBSCRIBE whose topic filter breaks the "
    "topic filter rules (a misplaced '#' or '+', an empty filter, U+0000)?",
    {
        "close": "a protocol violation (5.0: a Malformed Packet): close the connection",
        "refuse": "refuse that subscription with a failure code, keep the connection",
    },
    {V311: "close", V50: "close"},
    "The rules bind the client, and the text names no answer: 3.1.1 closes on any protocol "
    "violation unless stated otherwise [MQTT-4.8.0-1]; 5.0 keeps its failure code 0x8F "
    "(Topic Filter invalid) for a filter that 'is correctly formed but is not allowed for "
    "this Client', so a filter that is not correctly formed is a Malformed Packet. MQTT 3.1 "
    "has no failure return code at all, so it is not a reading there: the model closes.",
    Passage(
        source="MQTT 3.1.1 section 4.8",
        text="Unless stated otherwise, if either the Server or Client encounters a protocol "
        "violation, it MUST close the Network Connection on which it received that Control "
        "Packet which caused the protocol violation [MQTT-4.8.0-1].",
    ),
    Passage(
        source="MQTT 5.0 section 3.9.3",
        text="143 0x8F Topic Filter invalid: The Topic Filter is correctly formed but is not "
        "allowed for this Client.",
    ),
)

DISTRIBUTION_READINGS: Mapping[str, Reading] = MappingProxyType(
    {
        r.name: r
        for r in (
            OVERLAPPING_COPIES,
            RETAINED_QOS_31,
            RETAINED_EMPTY_31,
            QUEUE_QOS0,
            UNORDERED_TOPICS,
            ORDERING_QOS,
            ORDERING_RETAINED,
            DOLLAR_TOPICS,
            EXPIRY_BOUNDARY,
            EXPIRY_ROUNDING,
            INVALID_FILTER,
        )
    }
)


def resolve_distribution_readings(
    edition: Edition, chosen: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Every distribution reading that applies to ``edition``, with ``chosen`` overriding
    the defaults (an unknown name, a reading of another edition or an unknown value is a
    ``ReadingError``)."""
    return resolve_in(DISTRIBUTION_READINGS, edition, chosen, "distribution reading")
