"""The broker's distribution: the sans-IO distribution of pubproof behind one switch, with
the edition mapping of ``--edition any`` and the broker's own bound on queued copies.

Rules / theory of operation
---------------------------
:data:`ENGINE` is the class that decides, for every message the broker takes ownership
of, which sessions are owed a copy, at which QoS, with which RETAIN, properties and
Subscription Identifiers; which retained messages a new subscription is owed; what a
session keeps while its client is away and when it ends (:class:`pubproof.model.
distribution.DistributionModel`, and the reference distribution core when it lands: the
same methods, arguments and outcome fields). Nothing here decides any of that again.

One engine serves every connection, so a message crosses editions: a broker serving one
edition runs the engine of that edition; ``--edition any`` runs the 5.0 engine, and a 3.x
session is a 5.0 one whose Session Expiry Interval says what CleanSession says (0: the
session ends with the connection, as 3.1.1 [MQTT-3.1.2-6] "This Session lasts as long as
the Network Connection"; CleanSession 0: 0xFFFFFFFF, never expires, as [MQTT-3.1.2-4]
keeps it "after the Client and Server are disconnected") with the 3.x subscription
options (the defaults of 5.0's, which are 3.1.1's behaviour).

The bound: a session keeps at most ``max_queued`` copies it has not been sent. A further
copy makes the broker drop the oldest it owes (a server "might" discard Session state to
stay within its storage, MQTT 5.0 section 4.1; 3.1.1 4.1 likewise); the broker says so in
a notice, and the count goes in the summary. A connected session's copy is dropped through
the engine's own methods (started, then its flow completed unsent); a session that is away
cannot start a copy, so :meth:`Engine._trim_away` takes the oldest from its queue: the one
place serve touches the engine's state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pubproof.model import subscriptions as model_subscriptions
from pubproof.model.editions import Edition
from pubproof.model.messages import NO_PROPERTIES, Properties, Publication

# -- the switch: the distribution core (the model's twin, tested equal to it step by step);
# -- ``from pubproof.model.distribution import DistributionModel as ENGINE`` and the
# -- outcomes of ``pubproof.model.distribution_state`` run the readable model instead
from pubproof.reference.distribution import DistributionCore as ENGINE
from pubproof.reference.distribution_state import (
    ClockOutcome,
    CompleteOutcome,
    ConnectOutcome,
    Copy,
    DisconnectOutcome,
    Message,
    Options,
    PublishOutcome,
    ServerConfig,
    SubscribeOutcome,
    UnsubscribeOutcome,
)
from pubproof.reference.packets import Publish

__all__ = [
    "ENGINE", "Copy", "Engine", "Message", "PublishOutcome", "message_properties", "publication",
]  # fmt: skip

V50 = Edition.V50
#: "If the Session Expiry Interval is 0xFFFFFFFF (UINT_MAX), the Session does not expire."
NEVER = 0xFFFF_FFFF


def publication(publisher: str, message: Publish) -> Publication:
    """The message of a PUBLISH (its Topic Alias resolved) as the distribution takes it:
    the model's ``Publication``, which both the model and the core read."""
    props = message.properties
    properties = NO_PROPERTIES if props is None else Properties(
        payload_format_indicator=props.payload_format_indicator,
        message_expiry_interval=props.message_expiry_interval,
        content_type=props.content_type,
        response_topic=props.response_topic,
        correlation_data=props.correlation_data,
        user_properties=props.user_properties,
    )  # fmt: skip
    return Publication(
        publisher=publisher, topic=message.topic, payload=message.payload,
        qos=message.qos, retain=message.retain, properties=properties,
    )  # fmt: skip


def message_properties(message: Message) -> Properties:
    """The properties of a message the broker took (always a :func:`publication`'s)."""
    published = message.publication
    assert isinstance(published, Publication)
    return published.properties


class Engine:
    """The distribution of one broker (see the module docstring)."""

    def __init__(
        self,
        edition: Edition | None,
        readings: Mapping[str, str],
        config: model_subscriptions.ServerConfig,
        *,
        max_queued: int,
    ) -> None:
        self.edition = edition or V50
        own = ServerConfig(
            maximum_qos=config.maximum_qos, wildcard_subscriptions=config.wildcard_subscriptions,
            shared_subscriptions=config.shared_subscriptions,
            subscription_identifiers=config.subscription_identifiers,
        )  # fmt: skip
        self.core = ENGINE(self.edition, readings, own)
        self.max_queued = max_queued
        self.dropped = 0  # copies dropped to keep within max_queued
        self.announced = 0  # of them, those the broker has said it dropped

    # -- sessions ------------------------------------------------------------------------

    def connect(
        self, client_id: str, edition: Edition, *, clean: bool, expiry: int = 0
    ) -> ConnectOutcome:
        """A CONNECT accepted on a connection of ``edition`` (``expiry``: 5.0's Session
        Expiry Interval as the broker took it)."""
        if self.edition is V50 and edition is not V50:
            expiry = 0 if clean else NEVER
        return self.core.connect(
            client_id, clean=clean, session_expiry_interval=expiry if self.edition is V50 else 0
        )

    def disconnect(self, client_id: str, expiry: int | None = None) -> DisconnectOutcome:
        return self.core.disconnect(client_id, session_expiry_interval=expiry)

    def has_session(self, client_id: str) -> bool:
        return client_id in self.core.sessions

    def connected(self, client_id: str) -> bool:
        session = self.core.sessions.get(client_id)
        return session is not None and session.connected

    # -- subscriptions ---------------------------------------------------------------------

    def subscribe(
        self,
        client_id: str,
        packet_id: int,
        requests: Sequence[tuple[str, Options]],
        identifier: int | None,
    ) -> SubscribeOutcome:
        return self.core.subscribe(
            client_id, packet_id, requests, subscription_identifier=identifier
        )

    def unsubscribe(
        self, client_id: str, packet_id: int, filters: Sequence[str]
    ) -> UnsubscribeOutcome:
        return self.core.unsubscribe(client_id, packet_id, filters)

    # -- messages ------------------------------------------------------------------------

    def publish(self, message: Publication) -> PublishOutcome:
        """The broker took ownership of ``message``; the sessions that went over the bound
        are trimmed."""
        outcome = self.core.publish(message)
        owed: dict[str, int] = {}
        for copy in outcome.copies:
            owed[copy.client_id] = owed.get(copy.client_id, 0) + 1
        for client_id in owed:
            self._bound(client_id)
        return outcome

    def owed(self, client_id: str) -> tuple[Copy, ...]:
        """The copies the session is owed and has not been sent, oldest first."""
        return self.core.owed(client_id)

    def send(self, client_id: str, copy_id: int) -> tuple[Copy, int | None]:
        return self.core.send(client_id, copy_id)

    def complete(self, client_id: str, copy_id: int, reason_code: int = 0) -> CompleteOutcome:
        return self.core.complete(client_id, copy_id, reason_code)

    @property
    def now(self) -> int:
        """The engine's clock, milliseconds."""
        return self.core.now

    def advance_to(self, milliseconds: int) -> ClockOutcome | None:
        """Move the clock to ``milliseconds`` (never back)."""
        moved = milliseconds - self.core.now
        return self.core.advance(moved) if moved > 0 else None

    # -- the bound -----------------------------------------------------------------------

    def _bound(self, client_id: str) -> None:
        session = self.core.sessions.get(client_id)
        if session is None or len(session.pending) + len(session.optional) <= self.max_queued:
            return  # within the bound: the common case, two lengths read
        if session.connected:
            owed = self.core.owed(client_id)
            for copy in owed[: max(0, len(owed) - self.max_queued)]:
                # dropped through the engine's own methods: started, completed unsent
                self.core.send(client_id, copy.copy_id)
                if copy.qos:
                    self.core.complete(client_id, copy.copy_id)
                self.dropped += 1
        else:
            self._trim_away(client_id)

    def _trim_away(self, client_id: str) -> None:
        """A session that is away keeps its newest ``max_queued`` copies (the optional QoS
        0 ones go first)."""
        session = self.core.sessions[client_id]
        over = len(session.pending) + len(session.optional) - self.max_queued
        if over <= 0:
            return
        optional = min(over, len(session.optional))
        del session.optional[:optional]
        del session.pending[: over - optional]
        self.dropped += over
        if hasattr(session, "expiring"):
            # the core counts the copies waiting with a Message Expiry Interval
            waiting = (*session.pending, *session.optional)
            session.expiring = sum(1 for c in waiting if c.message.expires_at is not None)
