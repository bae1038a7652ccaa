"""pubproof.reference: the fast, sans-IO reference codec.

>>> from pubproof.reference import Decoder, Publish, encode
>>> encode(Publish(topic="a/b", qos=1, packet_id=10, payload=b"hi")).hex()
'32090003612f62000a6869'
"""

from pubproof.reference.codec import NEED_DATA, Decoder, decode_all, encode
from pubproof.reference.errors import (
    IncompleteStream,
    InvalidPacket,
    MalformedPacket,
    ProtocolError,
    ProtocolViolation,
)
from pubproof.reference.jsonform import from_p, to_p
from pubproof.reference.packets import Ack, Packet, PubAck, PubComp, Publish, PubRec, PubRel
from pubproof.reference.properties import AckProperties, PublishProperties

__all__ = [
    "NEED_DATA",
    "Ack",
    "AckProperties",
    "Decoder",
    "IncompleteStream",
    "InvalidPacket",
    "MalformedPacket",
    "Packet",
    "ProtocolError",
    "ProtocolViolation",
    "PubAck",
    "PubComp",
    "PubRec",
    "PubRel",
    "Publish",
    "PublishProperties",
    "decode_all",
    "encode",
    "from_p",
    "to_p",
]
