"""Wire checks for a client: each PUBLISH and acknowledgement the model rejects (or judges
only under a reading), sent by pubproof's server. The client must close the connection
exactly when the model says [MQTT-4.8.0-1], and its application must never be handed a
PUBLISH the model rejects.

The PUBLISH cases are the broker probe's (:data:`pubproof.probe.checks_wire.BUILDS`), with
the same rules; here pubproof's server sends them to a subscribed client. The
acknowledgements come where the client's own flow calls for them: PUBACK and PUBREC
after its PUBLISH, PUBREL after its PUBREC, PUBCOMP after its PUBREL.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from functools import partial
from typing import TypeVar

from pubproof.judge.findings import Finding
from pubproof.probe.catalog import BY_ID
from pubproof.probe.check import Check
from pubproof.probe.checks_wire import BUILDS, Build
from pubproof.probe.clients.check import ClientCheck, Run
from pubproof.probe.clients.context import ClientContext
from pubproof.probe.clients.judge import ClientView
from pubproof.probe.clients.server import Conn, Stalled
from pubproof.reference.packets import Publish, PubRec, PubRel

#: how long the client has to close the connection after the case
OBSERVE = 1.5
#: the case's bytes, made once the client is connected (its CONNECT is in ``conn``)
Case = Callable[[ClientContext, Conn], bytes]
#: a broker check's way of building its case (3.x: from the topic; 5.0: and the limits)
AnyBuild = TypeVar("AnyBuild")


def nothing_more(view: ClientView) -> list[Finding]:
    """A wire check's own judge: nothing (the close judge,
    :func:`pubproof.probe.clients.judge.case_findings`, decides)."""
    return []


def observe(ctx: ClientContext, conn: Conn) -> None:
    """Wait until the client closes the connection, or ``OBSERVE`` seconds."""
    with contextlib.suppress(Stalled):  # it kept the connection open: the evidence says so
        ctx.wait_for("the client's close", lambda: conn.closed, OBSERVE)
    ctx.quiet(0.2)


def publish_case(case: Case, limits: Mapping[str, int] | None = None) -> Run:
    """A subscribed client (MQTT 5.0: declaring ``limits``) is sent the case."""

    def run(ctx: ClientContext) -> None:
        conn = ctx.start(subscribe=[(ctx.topic_filter(), 2)], limits=limits)
        conn.send_raw(case(ctx, conn), case=True)
        observe(ctx, conn)

    return run


def _ack_bytes(first: int, length: int, packet_id: int) -> bytes:
    return bytes((first, length)) + packet_id.to_bytes(2, "big") + bytes(length - 2)


def ack_case(
    kind: str, build: Callable[[int], bytes], limits: Mapping[str, int] | None = None
) -> Run:
    """The case is an acknowledgement (``build``: its bytes for a packet identifier), sent
    where the client's own flow calls for it: PUBACK and PUBREC after its PUBLISH, PUBREL
    after its PUBREC, PUBCOMP after its PUBREL."""

    def run(ctx: ClientContext) -> None:
        if kind == "PUBREL":  # pubproof publishes QoS 2; its PUBREL is the case
            conn = ctx.start(subscribe=[(ctx.topic_filter(), 2)], limits=limits)
            conn.hold = lambda p: isinstance(p, PubRec)
            message = conn.publish(ctx.topic(), b"ack", qos=2)
            ctx.wait_for("PUBREC", lambda: bool(conn.held))
            assert message.packet_id is not None
            conn.send_raw(build(message.packet_id), case=True)
            observe(ctx, conn)
            return
        qos = 1 if kind == "PUBACK" else 2
        conn = ctx.start(publish=[(ctx.topic(), qos, b"ack", False)], limits=limits)
        if kind == "PUBCOMP":
            conn.hold = lambda p: isinstance(p, PubRel)
        else:
            conn.hold = lambda p: isinstance(p, Publish)
        ctx.wait_for("PUBREL" if kind == "PUBCOMP" else "PUBLISH", lambda: bool(conn.held))
        packet_id = conn.held[0].packet_id
        assert packet_id is not None
        conn.send_raw(build(packet_id), case=True)
        observe(ctx, conn)

    return run


def _topic_case(build: Build) -> Case:
    return lambda ctx, conn: build(ctx.topic())


def receive_checks(
    builds: Mapping[str, AnyBuild],
    broker_checks: Mapping[str, Check],
    case: Callable[[AnyBuild], Case],
    limits: Mapping[str, int] | None = None,
) -> list[ClientCheck]:
    """The broker probe's PUBLISH cases (``builds`` by check id), each sent to a subscribed
    client as ``wire.receive-...`` with the broker check's title and rules."""
    checks = []
    for cid, build in builds.items():
        broker = broker_checks[cid]
        name = "receive-" + cid.removeprefix("wire.")
        checks.append(
            ClientCheck(f"wire.{name}", broker.title + ", to the client", broker.rules,
                        publish_case(case(build), limits), nothing_more)
        )  # fmt: skip
    return checks


_ACK_TYPE = {"PUBACK": 0x40, "PUBREC": 0x50, "PUBREL": 0x62, "PUBCOMP": 0x70}


#: the cases as data, by check id (what ``pubproof serve --misbehave`` sends too): a PUBLISH
#: to a subscribed client, built from a topic name
RECEIVE_CASES: dict[str, Build] = {
    "wire.receive-" + cid.removeprefix("wire."): build for cid, build in BUILDS.items()
}
#: an acknowledgement where the client's own flow calls for one: (its type, its bytes for a
#: packet identifier)
ACK_CASES: dict[str, tuple[str, Callable[[int], bytes]]] = {}


def _checks() -> list[ClientCheck]:
    checks = receive_checks(BUILDS, BY_ID, _topic_case)
    for kind, first in _ACK_TYPE.items():
        wrong = (first & 0xF0) | (0x0 if kind == "PUBREL" else 0x2)
        for cid, case_first, length, title in (
            (f"wire.{kind.lower()}-flags", wrong, 2, f"{kind} with flags {wrong & 0xF:04b}"),
            (f"wire.{kind.lower()}-length", first, 3, f"{kind} with Remaining Length 3"),
        ):
            build = partial(_ack_bytes, case_first, length)
            ACK_CASES[cid] = (kind, build)
            checks.append(
                ClientCheck(cid, title + ", to the client", BY_ID[cid].rules,
                            ack_case(kind, build), nothing_more)
            )  # fmt: skip
    return checks


CHECKS: tuple[ClientCheck, ...] = tuple(_checks())
