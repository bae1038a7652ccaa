"""pubproof.reference: the fast, sans-IO reference codec, session engines, and the topic
indexes of distribution.

>>> from pubproof.reference import Decoder, Publish, encode
>>> encode(Publish(topic="a/b", qos=1, packet_id=10, payload=b"hi")).hex()
'32090003612f62000a6869'
>>> from pubproof.reference import SubscriptionIndex
>>> index = SubscriptionIndex[int]()
>>> index.subscribe("sensor-app", "site/+/temp", 1)
>>> [s.client_id for s in index.match("site/7/temp")]
['sensor-app']
"""

from pubproof.reference.codec import NEED_DATA, Decoder, decode_all, encode
from pubproof.reference.errors import (
    IncompleteStream,
    InvalidPacket,
    InvalidTopic,
    MalformedPacket,
    ProtocolError,
    ProtocolViolation,
)
from pubproof.reference.jsonform import from_p, to_p
from pubproof.reference.packets import Ack, Packet, PubAck, PubComp, Publish, PubRec, PubRel
from pubproof.reference.properties import AckProperties, PublishProperties
from pubproof.reference.retained_topics import RetainedTopics
from pubproof.reference.subscription_record import Subscription
from pubproof.reference.subscriptions import Matches, SubscriptionIndex

__all__ = [
    "NEED_DATA",
    "Ack",
    "AckProperties",
    "Decoder",
    "IncompleteStream",
    "InvalidPacket",
    "InvalidTopic",
    "MalformedPacket",
    "Matches",
    "Packet",
    "ProtocolError",
    "ProtocolViolation",
    "PubAck",
    "PubComp",
    "PubRec",
    "PubRel",
    "Publish",
    "PublishProperties",
    "RetainedTopics",
    "Subscription",
    "SubscriptionIndex",
    "decode_all",
    "encode",
    "from_p",
    "to_p",
]
