"""The synthetic generator's MQTT 5.0 connections: the packets of one 5.0 conversation.

A 5.0 connection of :mod:`.generate` is the 3.1.1 one in 5.0 clothes, and stays valid
throughout (it never yields a finding): CONNECT names level 5 and declares the client's
Receive Maximum, Topic Alias Maximum and Maximum Packet Size; CONNACK the server's; the
SUBSCRIBE carries a Subscription Identifier and options. Each PUBLISH carries properties,
as an application sets them per topic (each sender draws, at a topic's first message, its
User Properties in some order, whether it has a Content Type, a Message Expiry Interval, a
Payload Format Indicator of 0; the server's forwarded messages also carry the
subscription's identifier), and a Topic Alias: each sender assigns aliases 1, 2, ... to
topic names as it first sends them, up to its receiver's Topic Alias Maximum
[MQTT-3.3.2-9, MQTT-3.3.2-11], sends the name with its alias the first time and, most
times after that, the alias alone (an empty topic name). Acknowledgements carry success
Reason Codes (0x00, and 0x10 No matching subscribers for a PUBACK or PUBREC), sometimes a
Reason String. DISCONNECT is the normal one (0x00). The bursts of :mod:`.generate` keep at
most three messages in flight per direction, below either end's Receive Maximum, and every
packet is far below either end's Maximum Packet Size.
"""

from __future__ import annotations

import random
from typing import Any

from pubproof.judge import packets as control
from pubproof.model.editions import Edition
from pubproof.pipeline.synth.pcapwrite import C2S, S2C, Direction
from pubproof.reference import Publish, encode
from pubproof.reference.packets import ACK_CLASSES
from pubproof.reference.properties import AckProperties, PublishProperties

V50 = Edition.V50
#: what the client declares in CONNECT (binds what the server sends)
CLIENT_DECLARES: dict[str, Any] = {
    "receive_maximum": 20, "topic_alias_maximum": 6, "maximum_packet_size": 1 << 20,
}  # fmt: skip
#: what the server declares in CONNACK (binds what the client sends)
SERVER_DECLARES: dict[str, Any] = {"receive_maximum": 50, "topic_alias_maximum": 10}
SUBSCRIPTION_IDENTIFIER = 1
#: the User Properties a PUBLISH may carry (a draw takes some of them, in some order)
USER_PROPERTIES = (("app", "synth"), ("unit", "°C"), ("trace", "0af7651916cd43dd"))
CONTENT_TYPES = ("application/octet-stream", "application/json", "text/plain; charset=utf-8")
#: how often a PUBLISH to a topic that has an alias sends the alias alone
ALIAS_ONLY = 0.8
#: success Reason Codes of PUBACK and PUBREC: 0x00 Success, 0x10 No matching subscribers
ACK_SUCCESS = (0x00, 0x00, 0x00, 0x10)


class Session5:
    """The packets of one 5.0 connection, with each sender's Topic Aliases."""

    __slots__ = ("aliases", "maximum", "profiles", "rng")

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        #: per direction, the sender's topic name -> alias (one Network Connection)
        self.aliases: dict[Direction, dict[str, int]] = {C2S: {}, S2C: {}}
        #: per direction, the sender's properties of each topic (all but the alias)
        self.profiles: dict[Direction, dict[str, dict[str, Any]]] = {C2S: {}, S2C: {}}
        #: per direction, its receiver's Topic Alias Maximum
        self.maximum = {
            C2S: SERVER_DECLARES["topic_alias_maximum"],
            S2C: CLIENT_DECLARES["topic_alias_maximum"],
        }

    @staticmethod
    def connect(client_id: str) -> bytes:
        return control.connect(
            client_id, clean=True, keep_alive=60, edition=V50, properties=CLIENT_DECLARES
        )

    @staticmethod
    def connack() -> bytes:
        return control.connack(
            session_present=False, return_code=0, edition=V50, properties=SERVER_DECLARES
        )

    @staticmethod
    def subscribe(
        packet_id: int, topic_filter: str, qos: int, identifier: int = SUBSCRIPTION_IDENTIFIER
    ) -> bytes:
        options = {"filter": topic_filter, "qos": qos, "no_local": False,
                   "retain_as_published": False, "retain_handling": 0}  # fmt: skip
        properties = {"subscription_identifiers": [identifier]}
        return control.subscribe(packet_id, [options], edition=V50, properties=properties)

    @staticmethod
    def suback(packet_id: int, qos: int) -> bytes:
        return control.suback(packet_id, [qos], edition=V50)

    def disconnect(self) -> bytes:
        return control.disconnect(0)

    def publish(
        self,
        direction: Direction,
        *,
        topic: str,
        qos: int,
        packet_id: int | None,
        payload: bytes,
        retain: bool,
        dup: bool = False,
        expiry: int | None = None,
    ) -> bytes:
        """A 5.0 PUBLISH with properties and, where the receiver allows one, an alias
        (``expiry``: a Message Expiry Interval for this one, whatever the topic's)."""
        rng = self.rng
        aliases = self.aliases[direction]
        alias = aliases.get(topic)
        sent = topic
        if alias is None:
            if len(aliases) < self.maximum[direction]:
                alias = aliases[topic] = len(aliases) + 1  # sent with its topic name
        elif rng.random() < ALIAS_ONLY:
            sent = ""
        profile = self.profiles[direction].get(topic)
        if profile is None:
            users = rng.sample(USER_PROPERTIES, rng.randint(0, len(USER_PROPERTIES)))
            profile = self.profiles[direction][topic] = {
                "payload_format_indicator": 0 if rng.random() < 0.1 else None,
                "message_expiry_interval": rng.choice((60, 3600)) if rng.random() < 0.3 else None,
                "user_properties": tuple(users),
                "subscription_identifiers": (SUBSCRIPTION_IDENTIFIER,) if direction is S2C else (),
                "content_type": rng.choice(CONTENT_TYPES) if rng.random() < 0.5 else None,
            }  # fmt: skip
        if expiry is not None:  # this message's own (the topic's profile unchanged)
            profile = {**profile, "message_expiry_interval": expiry}
        properties = PublishProperties(topic_alias=alias, **profile)
        packet = Publish(topic=sent, qos=qos, packet_id=packet_id, payload=payload,
                         retain=retain, properties=properties, dup=dup)  # fmt: skip
        return encode(packet, edition=V50)

    def profile(self, direction: Direction, topic: str) -> dict[str, Any]:
        """The properties (all but the alias) ``direction``'s sender gives ``topic``."""
        return self.profiles[direction][topic]

    def forward(
        self,
        *,
        topic: str,
        qos: int,
        packet_id: int | None,
        payload: bytes,
        retain: bool,
        dup: bool,
        properties: dict[str, Any],
        identifiers: tuple[int, ...],
        expiry: int | None,
        content_type: str | None = None,
    ) -> bytes:
        """A copy the server sends: the message's properties (``properties``: its
        sender's profile, ``None`` for a 3.1.1 message), its Message Expiry Interval as
        reduced (``expiry``), the subscriptions' identifiers, and an alias of the server's
        own (as :meth:`publish` assigns them)."""
        aliases = self.aliases[S2C]
        alias = aliases.get(topic)
        sent = topic
        if alias is None:
            if len(aliases) < self.maximum[S2C]:
                alias = aliases[topic] = len(aliases) + 1
        elif self.rng.random() < ALIAS_ONLY:
            sent = ""
        kept = {k: v for k, v in properties.items() if k != "subscription_identifiers"}
        kept["message_expiry_interval"] = expiry
        if content_type is not None:
            kept["content_type"] = content_type
        props = PublishProperties(topic_alias=alias, subscription_identifiers=identifiers, **kept)
        packet = Publish(topic=sent, qos=qos, packet_id=packet_id, payload=payload,
                         retain=retain, properties=props, dup=dup)  # fmt: skip
        return encode(packet, edition=V50)

    def ack(self, kind: str, packet_id: int) -> bytes:
        """A 5.0 acknowledgement with a success Reason Code, sometimes a Reason String."""
        rng = self.rng
        code = rng.choice(ACK_SUCCESS) if kind in ("PUBACK", "PUBREC") else 0
        properties = AckProperties(reason_string="ok" if rng.random() < 0.05 else None)
        packet = ACK_CLASSES[kind](packet_id=packet_id, reason_code=code, properties=properties)
        return encode(packet, edition=V50)
