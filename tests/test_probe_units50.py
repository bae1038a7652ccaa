"""``pubproof probe --edition 5.0`` without a real broker: the 5.0 catalog, its control
packets, and its judges on evidence written by hand (each with the mutant it kills)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from support.fake_broker import FAST, FakeBroker

from pubproof.judge import packets
from pubproof.judge.close import reason_code_verdict
from pubproof.judge.limits import declared as declared_by
from pubproof.judge.packets import disconnect
from pubproof.model.editions import Edition, Limits, resolve_readings
from pubproof.model.normative_index import table_b
from pubproof.model.rules import RULES
from pubproof.model.trace import PublishP
from pubproof.model.wire import encode
from pubproof.probe import (
    BY_ID,
    BY_ID50,
    CHECKS,
    CHECKS50,
    Target,
    catalog,
    probe,
    rejudge,
    select,
)
from pubproof.probe.checks50_flows import in_flight
from pubproof.probe.checks50_wire import BUILDS, alias, publish50_bytes
from pubproof.probe.client import Subscription
from pubproof.probe.frames import describe_bytes
from pubproof.probe.judge50 import case_expectation, frame_findings50
from pubproof.probe.view import View

V50 = Edition.V50
DEFAULTS = resolve_readings(V50)
#: what mosquitto declares with scripts/probe-mosquitto --edition 5.0
BROKER = {"receive_maximum": 10, "topic_alias_maximum": 10, "maximum_packet_size": 4096}
#: 5.0 ids the checks cite outside the rule registry and the rows of Table B: the
#: standard's labels (MQTT-4.7.3-1 is in the index's range row "MQTT-4.7.3-1..4")
OUTSIDE_INDEX = frozenset({"MQTT-3.1.2-23", "MQTT-3.2.2-3", "MQTT-3.8.3-3", "MQTT-4.7.3-1"})


def connect(client_id: str, *, clean: bool, properties: dict[str, Any] | None = None) -> bytes:
    """A 5.0 CONNECT."""
    return packets.connect(client_id, clean=clean, edition=V50, properties=properties)


def subscribe(packet_id: int, subscriptions: list[Subscription]) -> bytes:
    """A 5.0 SUBSCRIBE."""
    return packets.subscribe(packet_id, [s.fields for s in subscriptions], edition=V50)


def packet(
    direction: str, client: str, data: bytes, *, limits: Limits | None = None, case: bool = False
) -> dict[str, Any]:
    """An evidence entry for ``data``, as the probe records it (the PUBLISH family decoded
    with the receiver's ``limits``)."""
    fields, _ = describe_bytes(data, V50, DEFAULTS, limits)
    entry = {**fields, "dir": direction, "client": client, "hex": data.hex(), "t": 0.0}
    return {**entry, "case": True} if case else entry


def connect_entries(
    client: str = "pub", theirs: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """CONNECT (the client's name as its identifier) and the broker's CONNACK, recorded as
    the probe records them."""
    hello = connect(client, clean=True)
    connack_props = packets.encode_properties("CONNACK", theirs or {})
    ack = bytes((0x20, 2 + len(connack_props), 0, 0)) + connack_props
    return [packet("to-broker", client, hello), packet("from-broker", client, ack)]


# -- the catalog ------------------------------------------------------------------------------


def test_the_50_catalog_is_its_own_and_the_3x_one_is_unchanged() -> None:
    assert len(CHECKS50) >= 40 and len(BY_ID50) == len(CHECKS50)
    assert catalog(V50) == CHECKS50 and catalog(Edition.V311) == CHECKS
    assert len(CHECKS) == 66 and next(iter(BY_ID)) == "wire.publish-qos3"
    assert [c.id for c in select([], V50)] == list(BY_ID50)
    assert {c.id for c in select(["forward"], V50)} == {
        c.id for c in CHECKS50 if c.id.startswith("forward.")
    }
    assert [c.id for c in select(["MQTT-3.3.4-9"], V50)] == [
        "flow.client-receive-maximum-qos1", "flow.client-receive-maximum-qos2",
    ]  # fmt: skip
    assert not select(["MQTT-3.3.4-9"], Edition.V311)


def test_every_50_rule_id_is_known() -> None:
    index = table_b()
    for check in CHECKS50:
        assert check.rules_for(V50), check.id
        for rule_id in check.rules_for(V50):
            try:
                RULES.by_id(rule_id, V50)
            except KeyError:
                assert rule_id in index or rule_id in OUTSIDE_INDEX, (check.id, rule_id)


@pytest.mark.parametrize("check_id", sorted(BUILDS))
def test_each_wire_case_breaks_the_rule_its_check_names(check_id: str) -> None:
    """The model's verdict on each case (with the broker's declared limits) names the
    check's first rule, or (under the defaults) accepts the packet only where the check is
    about a reading."""
    build = BUILDS[check_id]
    data = build(f"pubproof/r/{check_id}/t", declared_by(BROKER))
    limits = declared_by(BROKER).wire_limits()
    entries = [
        *connect_entries(theirs=BROKER),
        packet("to-broker", "pub", data, limits=limits, case=True),
    ]
    exp = case_expectation(View(entries, V50, DEFAULTS), 2)
    assert exp.close and exp.rule == BY_ID50[check_id].rules_for(V50)[0], (check_id, exp)
    assert exp.reason_code in (0x81, 0x82, 0x94, 0x95, 0x99), exp


def test_a_case_within_the_limits_is_valid() -> None:
    """The mutant that judges aliases without the broker's limits: alias 1 with a broker
    that declared Topic Alias Maximum 10 is fine, with one that declared none it is not."""
    data = publish50_bytes(0x30, b"a/b", properties=alias(1))
    limits = declared_by(BROKER).wire_limits()
    entries = [
        *connect_entries(theirs=BROKER),
        packet("to-broker", "pub", data, limits=limits, case=True),
    ]
    assert not case_expectation(View(entries, V50, DEFAULTS), 2).close
    entries = [*connect_entries(theirs={}), packet("to-broker", "pub", data, case=True)]
    exp = case_expectation(View(entries, V50, DEFAULTS), 2)
    assert exp.close and exp.rule == "PP50-3.3.4-topic-alias-maximum" and exp.reason_code == 0x94


# -- the case's outcome and the DISCONNECT Reason Code ----------------------------------------


def case_run(after: list[dict[str, Any]]) -> dict[str, Any]:
    """The evidence of wire.topic-alias-zero with ``after`` following the case; its
    judgement as JSON-like fields."""
    data = BUILDS["wire.topic-alias-zero"]("t/a", declared_by(BROKER))
    limits = declared_by(BROKER).wire_limits()
    entries = [
        *connect_entries(theirs=BROKER),
        packet("to-broker", "pub", data, limits=limits, case=True),
    ]
    entries += [packet("to-broker", "pub", bytes.fromhex("c000")), *after]
    judged = rejudge("wire.topic-alias-zero", entries, V50)
    return {
        "verdict": judged.verdict, "message": judged.message, "rules": judged.rules,
        "rule_verdicts": dict(judged.rule_verdicts), "provoked": judged.provoked,
    }  # fmt: skip


def closed(code: int | None) -> list[dict[str, Any]]:
    out = []
    if code is not None:
        data = disconnect(code) if code else bytes.fromhex("e000")
        out.append(packet("from-broker", "pub", data))
    return [*out, {"event": "closed", "client": "pub", "how": "end of stream", "t": 0.1}]


def test_the_disconnect_reason_code_is_judged() -> None:
    assert case_run(closed(0x94))["verdict"] == "pass"
    generic = case_run(closed(0x81))
    assert (
        generic["verdict"] == "tolerated"
        and "0x81 where the model calls for 0x94" in generic["message"]
    )
    # 4.13.1 "it SHOULD send a DISCONNECT packet containing the Reason Code": another code,
    # or none, is a deviation from a SHOULD, never a violation
    wrong = case_run(closed(0x87))  # Not authorized: not the fault
    assert wrong["verdict"] == "deviation"
    assert wrong["rule_verdicts"]["PP50-4.13.1-disconnect-reason-code"] == "deviation"
    assert wrong["rule_verdicts"]["MQTT-4.13.1-1"] == "pass"  # it did close
    assert case_run(closed(None))["verdict"] == "deviation"  # closed, no DISCONNECT
    pong = packet("from-broker", "pub", bytes.fromhex("d000"))
    kept = case_run([pong, {"event": "quiet", "client": None, "seconds": 0.3, "t": 0.2}])
    assert kept["verdict"] == "violation" and "MQTT-4.13.1-1" in kept["rules"]


def test_reason_code_verdict() -> None:
    assert reason_code_verdict(0x94, 0x94) == "pass"
    assert reason_code_verdict(0x94, 0x82) == "tolerated"
    assert reason_code_verdict(0x81, 0x82) == "tolerated"  # a general code for another
    assert reason_code_verdict(0x82, 0x00) == "deviation"


# -- what the broker sends, with the client's limits ------------------------------------------


def test_frames_are_decoded_with_the_limits_the_client_declared() -> None:
    ack = bytes.fromhex("2003000000")  # CONNACK, no properties
    aliased = publish50_bytes(0x30, b"a/b", properties=alias(3))
    for declared, verdicts in ((2, ["violation"]), (3, [])):
        hello = connect("c1", clean=True, properties={"topic_alias_maximum": declared})
        limits = Limits(topic_alias_maximum=declared)
        entries = [
            packet("to-broker", "sub", hello),
            packet("from-broker", "sub", ack),
            packet("from-broker", "sub", aliased, limits=limits),
        ]
        findings = frame_findings50(View(entries, V50, DEFAULTS))
        assert [f.verdict for f in findings] == verdicts, declared
        if verdicts:
            assert findings[0].rules == ("PP50-3.3.4-topic-alias-maximum",)


# -- flow control: what the broker has in flight ---------------------------------------------


def test_in_flight_counts_until_puback_pubcomp_or_an_error_pubrec() -> None:
    def pub(packet_id: int) -> dict[str, Any]:
        return {"dir": "from-broker", "client": "sub", "type": "PUBLISH", "qos": 1,
                "packet_id": packet_id}  # fmt: skip

    def ack(kind: str, packet_id: int, code: int = 0) -> dict[str, Any]:
        return {"dir": "to-broker", "client": "sub", "type": kind, "packet_id": packet_id,
                "reason_code": code}  # fmt: skip

    entries = [pub(1), pub(2), ack("PUBACK", 1), pub(3), pub(4), ack("PUBREC", 2, 0x80)]
    entries += [ack("PUBREC", 3), ack("PUBCOMP", 3), {"type": "CONNECT", "client": "sub",
                                                        "dir": "to-broker"}, pub(5)]  # fmt: skip
    assert in_flight(View(entries, V50, DEFAULTS), "sub") == [1, 2, 1, 2, 3, 2, 2, 1, 1]


# -- the forwarding, retain, session and error-ack judges on hand-written evidence -------------


def pub50(
    topic: str, payload: bytes, qos: int = 1, packet_id: int | None = 1, **props: Any
) -> bytes:
    """A 5.0 PUBLISH with the reference encoder (properties by P's keys)."""
    p: PublishP = {
        "type": "PUBLISH", "dup": bool(props.pop("dup", False)), "qos": qos,
        "retain": bool(props.pop("retain", False)), "topic": topic,
        "packet_id": packet_id if qos else None, "payload_hex": payload.hex(),
        "properties": props,  # type: ignore[typeddict-item]
    }  # fmt: skip
    return encode(p, V50)


def conversation(*steps: tuple[str, str, bytes]) -> list[dict[str, Any]]:
    """Entries for (client, direction, bytes), each client's CONNECT and CONNACK first."""
    entries: list[dict[str, Any]] = []
    for client in dict.fromkeys(client for client, _, _ in steps):
        entries += connect_entries(client)
    for client, direction, data in steps:
        if direction == "dropped":
            entries.append({"event": "dropped", "client": client, "t": 0.5})
        else:
            entries.append(packet(direction, client, data))
    return [*entries, {"event": "quiet", "client": None, "seconds": 0.3, "t": 1.0}]


def subscribed(
    client: str = "sub", topic: str = "t", qos: int = 1, **options: Any
) -> list[tuple[str, str, bytes]]:
    """The steps of ``client`` subscribing to ``topic`` (SUBSCRIBE 1, SUBACK granting it)."""
    wanted = subscribe(1, [Subscription(filter=topic, qos=qos, **options)])
    return [(client, "to-broker", wanted), (client, "from-broker", bytes((0x90, 4, 0, 1, 0, qos)))]


def verdict_of(check_id: str, entries: list[dict[str, Any]]) -> str:
    return rejudge(check_id, entries, V50).verdict


def test_forwarded_properties_must_be_unchanged() -> None:
    sent = pub50("t", b"ct", content_type="text/plain")
    same = pub50("t", b"ct", content_type="text/plain")
    changed = pub50("t", b"ct", content_type="text/html")
    for forwarded, verdict in ((same, "pass"), (changed, "violation")):
        entries = conversation(
            *subscribed(),
            ("pub", "to-broker", sent), ("pub", "from-broker", bytes.fromhex("40020001")),
            ("sub", "from-broker", forwarded), ("sub", "to-broker", bytes.fromhex("40020001")),
        )  # fmt: skip
        assert verdict_of("forward.content-type", entries) == verdict
    order = [["z", "1"], ["a", "2"]]
    sent = pub50("t", b"up", user_properties=order)
    swapped = pub50("t", b"up", user_properties=order[::-1])
    entries = conversation(
        *subscribed(),
        ("pub", "to-broker", sent), ("pub", "from-broker", bytes.fromhex("40020001")),
        ("sub", "from-broker", swapped), ("sub", "to-broker", bytes.fromhex("40020001")),
    )  # fmt: skip
    assert verdict_of("forward.user-properties", entries) == "violation"


def test_retain_handling_counts_the_copies_after_each_subscribe() -> None:
    def run(copies: tuple[int, int]) -> str:
        steps: list[tuple[str, str, bytes]] = [
            ("pub", "to-broker", pub50("t", b"retained", 1, 1, retain=True)),
            ("pub", "from-broker", bytes.fromhex("40020001")),
        ]
        for number, count in enumerate(copies):
            wanted = [Subscription(filter="t", qos=0, retain_handling=1)]
            steps.append(("sub", "to-broker", subscribe(number + 1, wanted)))
            steps.append(("sub", "from-broker", bytes((0x90, 4, 0, number + 1, 0, 0))))
            for _ in range(count):
                steps.append(("sub", "from-broker", pub50("t", b"retained", 0, None, retain=True)))
        return verdict_of("retain.handling-1", conversation(*steps))

    assert run((1, 0)) == "pass"
    assert run((1, 1)) == "violation"  # sent again to an existing subscription
    assert run((0, 0)) == "violation"  # not sent to a new one


def test_the_forwarded_message_expiry_is_reduced_by_the_wait() -> None:
    def run(forwarded: int, waited: float) -> str:
        entries = conversation(
            *subscribed(),
            ("pub", "to-broker", pub50("t", b"expiring", message_expiry_interval=60)),
            ("pub", "from-broker", bytes.fromhex("40020001")),
            ("sub", "from-broker", pub50("t", b"expiring", message_expiry_interval=forwarded)),
            ("sub", "to-broker", bytes.fromhex("40020001")),
        )  # fmt: skip
        entries[-3]["t"] = waited  # the forwarded PUBLISH, after the wait
        return verdict_of("forward.message-expiry-reduced", entries)

    assert run(59, 1.2) == "pass"
    assert run(58, 1.2) == "pass"  # a clock of whole seconds may have ticked twice
    assert run(60, 0.5) == "pass"  # ... or not at all
    assert run(60, 1.2) == "violation"  # the interval as sent, after a second and more
    assert run(50, 1.2) == "violation"


def test_an_expired_session_must_not_be_resumed() -> None:
    def run(session_present: bool) -> str:
        entries = conversation(
            ("sub", "to-broker", subscribe(1, [Subscription(filter="t", qos=1)])),
            ("sub", "from-broker", bytes.fromhex("9004000100 01".replace(" ", ""))),
            ("pub", "to-broker", pub50("t", b"while-away")),
            ("pub", "from-broker", bytes.fromhex("40020001")),
        )
        hello = connect("sub", clean=False)
        ack = bytes((0x20, 3, int(session_present), 0, 0))
        entries += [packet("to-broker", "sub", hello), packet("from-broker", "sub", ack)]
        return verdict_of("session.expiry-passed", entries)

    assert run(False) == "pass"
    assert run(True) == "violation"


def test_an_error_acknowledgement_ends_the_flow() -> None:
    def run(resent: bool) -> str:
        steps = [
            *subscribed(),
            ("pub", "to-broker", pub50("t", b"refused")),
            ("pub", "from-broker", bytes.fromhex("40020001")),
            ("pub", "to-broker", pub50("t", b"kept", packet_id=2)),
            ("pub", "from-broker", bytes.fromhex("40020002")),
            ("sub", "from-broker", pub50("t", b"refused", packet_id=5)),
            ("sub", "from-broker", pub50("t", b"kept", packet_id=6)),
            ("sub", "to-broker", bytes.fromhex("4003000580")),
            # the subscriber's connection drops; it resumes its session
            ("sub", "dropped", b""),
            ("sub", "to-broker", connect("sub", clean=False)),
            ("sub", "from-broker", bytes.fromhex("2003010000")),
            ("sub", "from-broker", pub50("t", b"kept", packet_id=6, dup=True)),
            ("sub", "to-broker", bytes.fromhex("40020006")),
        ]
        if resent:
            steps.append(("sub", "from-broker", pub50("t", b"refused", packet_id=5, dup=True)))
        entries = conversation(*steps)
        # the subscriber's session outlives its connection (Session Expiry Interval 60): it
        # can resume, and the CONNACK's Session Present 1 is owed [MQTT-3.2.2-3]
        lasting = connect("sub", clean=True, properties={"session_expiry_interval": 60})
        first = next(i for i, e in enumerate(entries) if e.get("client") == "sub")
        entries[first] = packet("to-broker", "sub", lasting)
        return verdict_of("flow.puback-error-ends-flow", entries)

    assert run(False) == "pass"
    assert run(True) == "violation"


# -- bounded against fake brokers -------------------------------------------------------------


@pytest.fixture
def silent_broker() -> Iterator[FakeBroker]:
    broker = FakeBroker(lambda frame: b"")
    yield broker
    broker.stop()


@pytest.fixture
def connack_only_broker() -> Iterator[FakeBroker]:
    """Answers CONNECT (a 5.0 CONNACK), PINGREQ and SUBSCRIBE, and nothing else."""

    def answer(frame: bytes) -> bytes:
        kind = frame[0] >> 4
        if kind == 1:
            return bytes.fromhex("2003000000")
        if kind == 12:
            return bytes.fromhex("d000")
        if kind == 8:
            return bytes.fromhex("9004") + frame[2:4] + b"\x00\x01"
        return b""

    broker = FakeBroker(answer)
    yield broker
    broker.stop()


def test_a_silent_broker_gives_no_answer_in_bounded_time_in_50(silent_broker: FakeBroker) -> None:
    target = Target("127.0.0.1", silent_broker.port)
    only = ["wire.topic-alias-zero", "flow.qos1", "session.expiry-passed", "forward.no-local"]
    started = time.monotonic()
    report = probe(target, edition=V50, only=only, timing=FAST, jobs=4)
    elapsed = time.monotonic() - started
    assert [c.verdict for c in report.checks] == ["no-answer"] * 4
    # the expiry check's own wait is added to its deadline
    extra = max(c.extra for c in CHECKS50 if c.id in only)
    assert elapsed < 2 * (FAST.check + extra + 2 * FAST.liveness + 2 * FAST.answer + 0.5)


def test_a_broker_that_keeps_a_case_open_is_in_violation_in_50(
    connack_only_broker: FakeBroker,
) -> None:
    target = Target("127.0.0.1", connack_only_broker.port)
    report = probe(target, edition=V50, only=["wire.topic-alias-zero", "flow.qos1"], timing=FAST)
    verdicts = {c.id: c for c in report.checks}
    alias = verdicts["wire.topic-alias-zero"]
    assert alias.verdict == "violation" and "kept the connection open" in alias.message
    # the broker owes the close; the Topic Alias 0 is what the probe sent on purpose
    assert alias.rules == ("MQTT-4.13.1-1",) and alias.provoked == ("MQTT-3.3.2-8",)
    qos1 = verdicts["flow.qos1"]
    assert qos1.verdict == "violation" and "PUBACK 1" in qos1.message  # the link judge's
    for check in report.checks:
        assert rejudge(check.id, list(check.evidence), V50).verdict == "violation"


def test_the_50_usage() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pubproof", "probe", "mqtt://127.0.0.1:1", "--edition", "5.0",
         "--only", "packet-id", "--quiet"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2 and "selects no check" in result.stderr  # no 5.0 group


def test_an_alias_does_not_outlive_its_connection() -> None:
    """The mutant that carries alias mappings over to the next connection would find the
    alias-only PUBLISH valid; [MQTT-3.3.2-7] makes it unknown (DISCONNECT 0x82)."""
    limits = declared_by(BROKER).wire_limits()
    setting = publish50_bytes(0x30, b"a/b", properties=alias(1))
    using = publish50_bytes(0x30, b"", properties=alias(1))
    same = [*connect_entries(theirs=BROKER), packet("to-broker", "pub", setting, limits=limits)]
    entries = [*same, packet("to-broker", "pub", using, limits=limits, case=True)]
    assert not case_expectation(View(entries, V50, DEFAULTS), len(entries) - 1).close
    entries = [
        *same, {"event": "dropped", "client": "pub", "t": 0.1},
        *connect_entries(theirs=BROKER),
        packet("to-broker", "pub", using, limits=limits, case=True),
    ]  # fmt: skip
    exp = case_expectation(View(entries, V50, DEFAULTS), len(entries) - 1)
    assert exp.close and exp.reason_code == 0x82
    assert exp.rule == "PP50-3.3.2-topic-alias-unknown"


def test_a_50_check_that_stopped_short_is_an_error_not_a_pass() -> None:
    """The mutant that lets a check with nothing to judge pass: a connection and no more."""
    judged = rejudge("forward.content-type", connect_entries("pub"), V50)
    assert judged.verdict == "error" and "stopped before" in judged.message
    # 3.1.1 keeps its verdict on the same (empty) question
    assert rejudge("flow.qos0", [], Edition.V311).verdict == "pass"


def test_a_control_packet_over_the_clients_maximum_packet_size_is_a_violation() -> None:
    hello = connect("c1", clean=True, properties={"maximum_packet_size": 8})
    small = bytes.fromhex("2003000000")
    large = packets.connack(
        session_present=False, return_code=0, edition=V50,
        properties={"reason_string": "a reason longer than eight bytes"},
    )  # fmt: skip
    for ack, verdicts in ((small, []), (large, ["violation"])):
        entries = [packet("to-broker", "sub", hello), packet("from-broker", "sub", ack)]
        findings = frame_findings50(View(entries, V50, DEFAULTS))
        assert [f.verdict for f in findings] == verdicts
        if verdicts:
            assert "MQTT-3.1.2-24" in findings[0].rules
