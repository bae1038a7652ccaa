"""Actions several checks share."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pubproof.judge import packets as control
from pubproof.probe.client import Client, Subscription
from pubproof.probe.context import CheckContext


def connected(
    ctx: CheckContext, name: str, *, clean: bool = True, properties: Mapping[str, Any] | None = None
) -> Client:
    """A new client, connected (MQTT 5.0: with these CONNECT properties)."""
    client = ctx.client(name)
    client.properties.update(properties or {})
    client.connect(clean=clean)
    return client


def subscriber(
    ctx: CheckContext,
    name: str,
    *filters: tuple[str, int] | Subscription,
    clean: bool = True,
    properties: Mapping[str, Any] | None = None,
    identifier: int | None = None,
) -> Client:
    """A new client, connected and subscribed (MQTT 5.0: with subscription options and a
    Subscription Identifier if given)."""
    client = connected(ctx, name, clean=clean, properties=properties)
    client.subscribe(*filters, identifier=identifier)
    return client


def observe(ctx: CheckContext, client: Client) -> None:
    """After a case: PINGREQ, then read until PINGRESP or the connection closes; after
    PINGRESP listen a while longer (a broker that handles packets concurrently may answer
    PINGREQ before it closes the connection over the case)."""
    before = client.count("PINGRESP")
    client.send_raw(control.PINGREQ)
    ctx.wait_for(
        client,
        "PINGRESP or the connection closed",
        lambda: client.count("PINGRESP") > before,
        closed_ok=True,
    )
    if client.connected:
        ctx.quiet()


def clear_retained(ctx: CheckContext, topic: str) -> None:
    """At the end of a check (not evidence): delete the retained message of ``topic``."""

    def clear() -> None:
        cleaner = connected(ctx, "cleanup")
        cleaner.publish(topic, b"", qos=1, retain=True)
        ctx.wait_for(cleaner, "PUBACK", lambda: cleaner.settled)

    ctx.at_end(clear)


def end_session(ctx: CheckContext, client: Client) -> None:
    """At the end of a check (not evidence): discard the client's session on the broker."""

    def end() -> None:
        client.reconnect(clean=True)

    ctx.at_end(end)
