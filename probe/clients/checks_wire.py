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

from pubproof.judge.findings import Finding
from pubproof.probe.catalog import BY_ID
from pubproof.probe.checks_wire import BUILDS, Build
from pubproof.probe.clients.check import ClientCheck, Run
from pubproof.probe.clients.context import ClientContext
from pubproof.probe.clients.judge import ClientView
from pubproof.probe.clients.server import Conn, Stalled
from pubproof.reference.packets import Publish, PubRec, PubRel

#: how long the client has to close the connection after the case
OBSERVE = 1.5


def _nothing_more(view: ClientView) -> list[Finding]:
    return []  # the close judge (pubproof.probe.clients.judge.case_findings) decides


def _observe(ctx: ClientContext, conn: Conn) -> None:
    """Wait until the client closes the connection, or ``OBSERVE`` seconds."""
    with contextlib.suppress(Stalled):  # it kept the connection open: the evidence says so
        ctx.wait_for("the client's close", lambda: conn.closed, OBSERVE)
    ctx.quiet(0.2)


def _publish_case(build: Build) -> Run:
    def run(ctx: ClientContext) -> None:
        conn = ctx.start(subscribe=[(ctx.topic_filter(), 2)])
        conn.send_raw(build(ctx.topic()), case=True)
        _observe(ctx, conn)

    return run


def _ack_bytes(first: int, length: int, packet_id: int) -> bytes:
    return bytes((first, length)) + packet_id.to_bytes(2, "big") + bytes(length - 2)


def _ack_case(kind: str, first: int, length: int) -> Run:
    def run(ctx: ClientContext) -> None:
        if kind == "PUBREL":  # pubproof publishes QoS 2; its PUBREL is the case
            conn = ctx.start(subscribe=[(ctx.topic_filter(), 2)])
            conn.hold = lambda p: isinstance(p, PubRec)
            message = conn.publish(ctx.topic(), b"ack", qos=2)
            ctx.wait_for("PUBREC", lambda: bool(conn.held))
            assert message.packet_id is not None
            conn.send_raw(_ack_bytes(first, length, message.packet_id), case=True)
            _observe(ctx, conn)
            return
        qos = 1 if kind == "PUBACK" else 2
        conn = ctx.start(publish=[(ctx.topic(), qos, b"ack", False)])
        if kind == "PUBCOMP":
            conn.hold = lambda p: isinstance(p, PubRel)
        else:
            conn.hold = lambda p: isinstance(p, Publish)
        ctx.wait_for("PUBREL" if kind == "PUBCOMP" else "PUBLISH", lambda: bool(conn.held))
        packet_id = conn.held[0].packet_id
        assert packet_id is not None
        conn.send_raw(_ack_bytes(first, length, packet_id), case=True)
        _observe(ctx, conn)

    return run


_ACK_TYPE = {"PUBACK": 0x40, "PUBREC": 0x50, "PUBREL": 0x62, "PUBCOMP": 0x70}


def _checks() -> list[ClientCheck]:
    checks = []
    for cid, build in BUILDS.items():
        broker = BY_ID[cid]
        name = "receive-" + cid.removeprefix("wire.")
        checks.append(
            ClientCheck(f"wire.{name}", broker.title + ", to the client", broker.rules,
                        _publish_case(build), _nothing_more)
        )  # fmt: skip
    for kind, first in _ACK_TYPE.items():
        wrong = (first & 0xF0) | (0x0 if kind == "PUBREL" else 0x2)
        for cid, case_first, length, title in (
            (f"wire.{kind.lower()}-flags", wrong, 2, f"{kind} with flags {wrong & 0xF:04b}"),
            (f"wire.{kind.lower()}-length", first, 3, f"{kind} with Remaining Length 3"),
        ):
            checks.append(
                ClientCheck(cid, title + ", to the client", BY_ID[cid].rules,
                            _ack_case(kind, case_first, length), _nothing_more)
            )  # fmt: skip
    return checks


CHECKS: tuple[ClientCheck, ...] = tuple(_checks())
