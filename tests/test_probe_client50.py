"""pubproof probe-client --edition 5.0: pubproof plays a 5.0 server (the reference Session50,
a CONNACK declaring the server's limits), a driver makes a real client library act, and
the 5.0 judges (the link judge with the client judged, the wire format with the server's
limits, the close judge with the client's) judge what the client sends and what its
application receives. Each invariant of the judging has a mutant it must kill."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from typing import Any

import pytest

from pubproof.judge import packets as control
from pubproof.model.editions import Edition, Limits
from pubproof.probe.clients import BY_ID50, CHECKS, CHECKS50, rejudge_client, select
from pubproof.probe.clients.context import ClientContext
from pubproof.probe.clients.driver import Message, Plan
from pubproof.probe.clients.judge import judge_client
from pubproof.probe.frames import describe_bytes
from pubproof.reference.codec import encode
from pubproof.reference.packets import PubAck, Publish, PubRec, PubRel
from pubproof.reference.properties import AckProperties, PublishProperties

V50 = Edition.V50
WIDE = Limits(topic_alias_maximum=0xFFFF)
NO_PROPS = PublishProperties()


def _packet(
    direction: str, data: bytes, t: float, conn: str = "conn1", **extra: Any
) -> dict[str, Any]:
    fields, _ = describe_bytes(data, V50, {}, WIDE)
    return {**fields, "dir": direction, "client": conn, "hex": data.hex(), "t": t, **extra}


def _from(data: bytes, t: float, conn: str = "conn1") -> dict[str, Any]:
    return _packet("from-client", data, t, conn)


def _to(data: bytes, t: float, conn: str = "conn1", **extra: Any) -> dict[str, Any]:
    return _packet("to-client", data, t, conn, **extra)


def _connected(
    declare: dict[str, Any] | None = None, client: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The evidence up to a 5.0 CONNACK declaring ``declare`` (the client's CONNECT with
    ``client``'s properties)."""
    connect = control.connect("c", clean=True, edition=V50, properties=client or {})
    connack = control.connack(
        session_present=False, return_code=0, edition=V50, properties=declare or {}
    )
    return [
        {"event": "driver-start", "client": "driver", "argv": ["x"], "plan": {}, "t": 0.0},
        {"event": "accepted", "client": "conn1", "t": 0.1},
        _from(connect, 0.1),
        _to(connack, 0.1),
    ]


def _publish(qos: int, packet_id: int | None, *, topic: str = "t", payload: bytes = b"x",
             retain: bool = False, props: PublishProperties = NO_PROPS) -> bytes:  # fmt: skip
    return encode(
        Publish(topic=topic, payload=payload, qos=qos, packet_id=packet_id, retain=retain,
                properties=props),
        edition=V50,
    )  # fmt: skip


def _ack(cls: type[PubAck | PubRec | PubRel], packet_id: int, code: int = 0) -> bytes:
    return encode(
        cls(packet_id=packet_id, reason_code=code, properties=AckProperties()), edition=V50
    )


QUIET = {"event": "quiet", "client": None, "seconds": 1.0, "t": 9.0}


def _judge(check_id: str, evidence: list[dict[str, Any]]) -> Any:
    check = BY_ID50[check_id]
    return judge_client(check.judge, check.rules_for(V50), evidence, V50, {})


# -- the catalog -----------------------------------------------------------------------------


def test_the_50_catalog_has_thirty_checks_each_naming_rules_and_its_own_ids() -> None:
    assert len(select([], V50)) == len(CHECKS50) >= 30
    assert select([], Edition.V311) == list(CHECKS)
    for check in CHECKS50:
        assert check.rules_for(V50), check.id
    groups = {c.id.split(".")[0] for c in CHECKS50}
    assert groups == {"send", "receive", "wire"}
    for wanted in ("send.receive-maximum-qos1", "send.topic-alias-none",
                   "send.maximum-packet-size", "send.pubrec-error-ends-flow",
                   "receive.topic-alias", "wire.receive-maximum-exceeded"):  # fmt: skip
        assert wanted in BY_ID50
    assert [c.id for c in select(["MQTT-3.3.4-7"], V50)] == [
        "send.receive-maximum-qos1", "send.receive-maximum-qos2",
    ]  # fmt: skip


def test_the_plan_has_the_50_keys_only_in_50() -> None:
    plan = Plan(url="mqtt://h:1", client_id="c", edition="3.1.1",
                publish=(Message("t", 1, b"x"),))  # fmt: skip
    assert set(plan.to_json()) == {
        "url", "client_id", "edition", "clean_session", "keepalive", "subscribe", "publish",
        "reconnect",
    }  # fmt: skip
    assert "properties" not in plan.to_json()["publish"][0]
    plan50 = Plan(
        url="mqtt://h:1", client_id="c", edition="5.0", clean_session=False,
        publish=(Message("t", 1, b"x", False, {"content_type": "a"}),),
        session_expiry_interval=300, limits={"receive_maximum": 2},
    )  # fmt: skip
    data = plan50.to_json()
    assert data["session_expiry_interval"] == 300 and data["limits"] == {"receive_maximum": 2}
    assert data["publish"][0]["properties"] == {"content_type": "a"}


# -- the server ------------------------------------------------------------------------------


def _server_connect(
    ctx: ClientContext, number: int, properties: dict[str, Any], clean: bool
) -> dict[str, Any]:
    sock = socket.create_connection(("127.0.0.1", ctx.port))
    sock.sendall(control.connect("c", clean=clean, edition=V50, properties=properties))
    conn = ctx.connection(number, 2.0)
    sock.settimeout(2.0)
    data = sock.recv(1024)
    fields, _ = describe_bytes(data, V50, {})
    conn.drop("test")
    sock.close()
    return fields


def test_the_50_server_declares_its_limits_and_resumes_only_a_session_kept() -> None:
    ctx = ClientContext(argv=["x"], edition=V50, readings={}, seconds=10, answer=1,
                        run_id="t", check_id="c", check_no=0)  # fmt: skip
    try:
        ctx.declare = {"receive_maximum": 2, "topic_alias_maximum": 3, "maximum_qos": 1}
        first = _server_connect(ctx, 1, {"receive_maximum": 5}, clean=False)
        assert first["type"] == "CONNACK" and not first["session_present"]
        assert first["properties"] == ctx.declare
        assert ctx.session.peer_receive_maximum == 5 and ctx.session.receive_maximum == 2
        # no Session Expiry Interval on the first connection: its session ended with it
        second = _server_connect(ctx, 2, {"session_expiry_interval": 60}, clean=False)
        assert not second["session_present"]
        # the second kept it: Clean Start 0 resumes it (the mutant: Session Present 0)
        third = _server_connect(ctx, 3, {}, clean=False)
        assert third["session_present"]
        # the server that lost its sessions says so
        ctx.forget_sessions = True
        fourth = _server_connect(ctx, 4, {"session_expiry_interval": 60}, clean=False)
        assert not fourth["session_present"]
    finally:
        ctx.close()


# -- the client as sender -------------------------------------------------------------------


def test_more_publish_than_the_servers_receive_maximum_is_a_violation() -> None:
    head = _connected({"receive_maximum": 2})
    three = [_from(_publish(1, i, payload=f"rm{i - 1}".encode()), 0.2 + i / 100) for i in (1, 2, 3)]
    bad = [*head, *three, QUIET]
    judged = _judge("send.receive-maximum-qos1", bad)
    assert judged.verdict == "violation"
    assert judged.rule_verdicts["MQTT-3.3.4-7"] == "violation"
    # the mutant: a PUBACK before the third (two unacknowledged at most)
    acked = [*head, *three[:2], _to(_ack(PubAck, 1), 0.215), three[2],
             _to(_ack(PubAck, 2), 0.24), _to(_ack(PubAck, 3), 0.25)]  # fmt: skip
    rest = [_from(_publish(1, 3 + i, payload=f"rm{i}".encode()), 0.3 + i / 100) for i in (3, 4)]
    good = [*acked, *rest, _to(_ack(PubAck, 6), 0.4), _to(_ack(PubAck, 7), 0.41), QUIET]
    assert _judge("send.receive-maximum-qos1", good).verdict == "pass"


def test_a_topic_alias_the_server_did_not_allow_is_a_violation() -> None:
    head = _connected({})  # no Topic Alias Maximum: 0
    aliased = _from(_publish(0, None, props=PublishProperties(topic_alias=1)), 0.2)
    judged = _judge("send.topic-alias-none", [*head, aliased, QUIET])
    assert judged.verdict == "violation" and judged.rule_verdicts["MQTT-3.2.2-18"] == "violation"
    plain = _from(_publish(0, None), 0.2)
    assert _judge("send.topic-alias-none", [*head, plain, QUIET]).verdict == "pass"
    # within the server's maximum: a pass; above it: a violation
    head2 = _connected({"topic_alias_maximum": 2})
    two = _from(_publish(0, None, props=PublishProperties(topic_alias=2)), 0.2)
    assert _judge("send.topic-alias-maximum", [*head2, two, QUIET]).verdict == "pass"
    three = _from(_publish(0, None, props=PublishProperties(topic_alias=3)), 0.2)
    assert _judge("send.topic-alias-maximum", [*head2, three, QUIET]).verdict == "violation"


def test_qos_above_the_servers_maximum_and_retain_when_unavailable_are_violations() -> None:
    head = _connected({"maximum_qos": 1})
    qos2 = _from(_publish(2, 1, payload=b"maxqos"), 0.2)
    judged = _judge("send.maximum-qos-1", [*head, qos2, QUIET])
    assert judged.verdict == "violation" and judged.rule_verdicts["MQTT-3.2.2-11"] == "violation"
    qos1 = _from(_publish(1, 1, payload=b"maxqos"), 0.2)
    good = [*head, qos1, _to(_ack(PubAck, 1), 0.21), QUIET]
    assert _judge("send.maximum-qos-1", good).verdict == "pass"
    head = _connected({"retain_available": 0})
    retained = _from(_publish(0, None, payload=b"retained", retain=True), 0.2)
    assert _judge("send.retain-not-available", [*head, retained, QUIET]).verdict == "violation"
    plain = _from(_publish(0, None, payload=b"retained"), 0.2)
    assert _judge("send.retain-not-available", [*head, plain, QUIET]).verdict == "pass"


def test_a_packet_over_the_servers_maximum_packet_size_is_a_violation() -> None:
    head = _connected({"maximum_packet_size": 256})
    big = _from(_publish(1, 1, payload=b"L" * 400), 0.2)
    small = _from(_publish(1, 2, payload=b"small"), 0.3)
    bad = [*head, big, small, _to(_ack(PubAck, 2), 0.31), QUIET]
    judged = _judge("send.maximum-packet-size", bad)
    assert judged.verdict == "violation" and judged.rule_verdicts["MQTT-3.2.2-15"] == "violation"
    good = [*head, small, _to(_ack(PubAck, 2), 0.31), QUIET]
    assert _judge("send.maximum-packet-size", good).verdict == "pass"


def test_pubrel_after_an_error_pubrec_is_a_violation() -> None:
    head = _connected()
    flow = [_from(_publish(2, 1, payload=b"refused"), 0.2), _to(_ack(PubRec, 1, 0x80), 0.21)]
    bad = [*head, *flow, _from(_ack(PubRel, 1), 0.22), QUIET]
    judged = _judge("send.pubrec-error-ends-flow", bad)
    assert judged.verdict == "violation" and judged.rule_verdicts["MQTT-4.3.3-4"] == "violation"
    assert _judge("send.pubrec-error-ends-flow", [*head, *flow, QUIET]).verdict == "pass"


# -- the client as receiver, and the cases ------------------------------------------------


def _message(payload: bytes, t: float, **extra: Any) -> dict[str, Any]:
    return {"event": "app", "client": "app", "what": "message", "topic": "t", "qos": 1,
            "retain": False, "payload_hex": payload.hex(), "t": t, **extra}  # fmt: skip


def test_properties_lost_on_the_way_to_the_application_are_named() -> None:
    from pubproof.probe.clients.checks50_receiver import _REFERENCE, PROPERTIES

    head = _connected()
    sent = _to(_publish(1, 1, payload=b"rx1", props=_REFERENCE), 0.2)
    ack = _from(_ack(PubAck, 1), 0.21)
    whole = _message(b"rx1", 0.22, properties=dict(PROPERTIES))
    assert _judge("receive.qos1", [*head, sent, ack, whole, QUIET]).verdict == "pass"
    reordered = {**PROPERTIES, "user_properties": [["b", "2"], ["b", "3"], ["a", "1"]]}
    judged = _judge(
        "receive.qos1", [*head, sent, ack, _message(b"rx1", 0.22, properties=reordered), QUIET]
    )
    assert judged.verdict == "tolerated" and "user_properties" in judged.message


def _case_evidence(case: bytes, after: list[dict[str, Any]]) -> list[dict[str, Any]]:
    head = _connected(client={"topic_alias_maximum": 4})
    return [*head, _to(case, 0.2, case=True), *after]


def test_a_50_case_must_close_with_the_models_reason_code() -> None:
    from pubproof.probe.checks50_wire import alias, publish50_bytes

    case = publish50_bytes(0x30, b"t", properties=alias(0))  # alias 0: 0x94
    cid = "wire.receive-topic-alias-zero"
    closed = {"event": "closed", "client": "conn1", "how": "end of stream", "t": 0.3}
    with_code = _case_evidence(case, [_from(control.disconnect(0x94), 0.25), closed])
    assert _judge(cid, with_code).verdict == "pass"
    bare = _case_evidence(case, [closed])
    # DISCONNECT with its Reason Code is a SHOULD of 4.13.1: a deviation (issue 39)
    assert _judge(cid, bare).verdict == "deviation"
    kept = _case_evidence(case, [QUIET])
    # 4.13.1: a Server MUST close, a Client SHOULD (as the close judge of captures says): a
    # Client that reads on deviates from a SHOULD, it breaks no MUST
    judged = _judge(cid, kept)
    assert judged.verdict == "deviation" and "a Client SHOULD" in judged.message
    assert judged.rule_verdicts == {"PP50-4.13.1-client-close": "deviation"}
    # handing the packet on is named in the message; the duty it breaks is still the SHOULD
    # to close ([MQTT-3.3.2-8] binds the sender, not this receiver)
    handed = _case_evidence(case, [_message(b"x", 0.21), closed])
    judged = _judge(cid, handed)
    assert judged.verdict == "deviation" and "handed" in judged.message
    assert judged.rule_verdicts["PP50-4.13.1-client-close"] == "deviation"


def test_a_message_handed_on_is_tolerated_only_where_a_reading_keeps_the_packet() -> None:
    from pubproof.probe.checks50_wire import alias, publish50_bytes

    # Payload Format Indicator 1 with an FF payload: the receiver "MAY validate"
    # (payload-utf8=accept keeps the packet), so handing it on is what that receiver does
    case = publish50_bytes(0x30, b"t", properties=b"\x01\x01", payload=b"\xff")
    handed = _case_evidence(case, [_message(b"\xff", 0.21), QUIET])
    judged = _judge("wire.receive-payload-not-utf8", handed)
    assert judged.verdict == "tolerated" and "payload-utf8=accept" in judged.message
    # no reading keeps an alias of 0: handing it on is not tolerated but a deviation from
    # the Client's SHOULD close of 4.13.1 (issue 39: the duty of the party judged)
    zero = publish50_bytes(0x30, b"t", properties=alias(0))
    judged = _judge(
        "wire.receive-topic-alias-zero", _case_evidence(zero, [_message(b"x", 0.21), QUIET])
    )
    assert judged.verdict == "deviation" and "handed" in judged.message


def test_a_publish_beyond_the_clients_receive_maximum_must_close_it_0x93() -> None:
    head = _connected(client={"receive_maximum": 2})
    flows = [
        _to(_publish(2, 1, payload=b"rm0"), 0.2), _to(_publish(2, 2, payload=b"rm1"), 0.2),
        _from(_ack(PubRec, 1), 0.21), _from(_ack(PubRec, 2), 0.21),
    ]  # fmt: skip
    case = _to(_publish(2, 3, payload=b"one too many"), 0.3, case=True)
    closed = {"event": "closed", "client": "conn1", "how": "end of stream", "t": 0.4}
    good = [*head, *flows, case, _from(control.disconnect(0x93), 0.35), closed]
    assert _judge("wire.receive-maximum-exceeded", good).verdict == "pass"
    kept = [*head, *flows, case, _from(_ack(PubRec, 3), 0.31), QUIET]
    judged = _judge("wire.receive-maximum-exceeded", kept)
    # reading on deviates from a 5.0 Client's SHOULD close (4.13.1); the maximum itself
    # binds the sender, which the probe is
    assert judged.verdict == "deviation"
    assert judged.rule_verdicts["PP50-4.13.1-client-close"] == "deviation"
    # the mutant: a PUBCOMP freed a unit before the third, which is then within the maximum
    freed = [*head, *flows, _to(_ack(PubRel, 1), 0.22), _from(encode_pubcomp(1), 0.23),
             case, _from(_ack(PubRec, 3), 0.31), QUIET]  # fmt: skip
    assert _judge("wire.receive-maximum-exceeded", freed).verdict == "pass"


def encode_pubcomp(packet_id: int) -> bytes:
    from pubproof.reference.packets import PubComp

    return encode(
        PubComp(packet_id=packet_id, reason_code=0, properties=AckProperties()), edition=V50
    )


def test_unsupported_is_not_applicable_never_a_pass() -> None:
    head = _connected()
    told = {"event": "app", "client": "app", "what": "unsupported", "message": "no", "t": 0.05}
    judged = _judge("send.topic-alias-maximum", [head[0], told, *head[1:], QUIET])
    assert judged.verdict == "not-applicable"


# -- a real client -------------------------------------------------------------------------


def _run(*args: str) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-m", "pubproof", "probe-client", "--json", "--quiet", "--edition",
         "5.0", *args],
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    report: dict[str, Any] = json.loads(result.stdout)
    return report


@pytest.mark.parametrize("driver", ["paho-mqtt", "mosquitto-clients"])
def test_a_real_client_in_50_is_judged_and_every_verdict_replays(driver: str) -> None:
    only = [
        "send.qos2", "send.receive-maximum-qos1", "send.maximum-packet-size",
        "send.pubrec-error-ends-flow", "receive.qos1", "receive.pubrel-unknown-id",
        "wire.receive-topic-alias-zero", "wire.receive-maximum-exceeded",
    ]  # fmt: skip
    report = _run("--driver", driver, "--only", *only)
    assert report["edition"] == "5.0" and report["target"].split()[-1][0].isdigit()
    assert [c["id"] for c in report["checks"]] == only
    verdicts = {c["id"]: c["verdict"] for c in report["checks"]}
    # what every library does here, whatever else it does
    assert verdicts["send.qos2"] == "pass"
    assert verdicts["receive.qos1"] == "pass"
    assert verdicts["wire.receive-topic-alias-zero"] in ("pass", "tolerated", "deviation")
    assert verdicts["receive.pubrel-unknown-id"] in ("pass", "tolerated")
    for check in report["checks"]:
        assert check["rule_verdicts"] and check["evidence"]
        connect = next(e for e in check["evidence"] if e.get("type") == "CONNECT")
        assert connect["level"] == 5
        again = rejudge_client(check["id"], check["evidence"], V50)
        assert again.verdict == check["verdict"], check["id"]
        assert dict(again.rule_verdicts) == check["rule_verdicts"], check["id"]
