"""Wire checks: each PUBLISH and acknowledgement the model rejects (or judges only under a
reading), sent to the broker. Must the broker close the connection?

A check sends one *case* (marked ``"case": true`` in the evidence), then PINGREQ, and
reads until PINGRESP or the end of the connection. :func:`case_findings` judges the
outcome against the model's decoding of the case under every reading.
"""

from __future__ import annotations

from collections.abc import Callable

from pubproof.judge.close import close_rules
from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition
from pubproof.model.rules import Rule
from pubproof.model.wire import encode_remaining_length
from pubproof.probe.check import Check, Rules, Run
from pubproof.probe.context import CheckContext
from pubproof.probe.judge_wire import case_findings
from pubproof.probe.steps import connected, observe, subscriber
from pubproof.reference.packets import Publish, PubRec, PubRel

Build = Callable[[str], bytes]  # topic name -> the bytes of the case


def publish_bytes(
    first: int,
    topic: bytes,
    packet_id: int | None = None,
    payload: bytes = b"x",
    *,
    remaining_length: bytes | None = None,
) -> bytes:
    """A PUBLISH laid out field by field, faults and all."""
    body = len(topic).to_bytes(2, "big") + topic
    if packet_id is not None:
        body += packet_id.to_bytes(2, "big")
    body += payload
    length = encode_remaining_length(len(body)) if remaining_length is None else remaining_length
    return bytes((first,)) + length + body


def _rules(*rules: Rule) -> Rules:
    """The first rule that the edition has, and the rules that make the receiver close."""

    def ids(edition: Edition) -> tuple[str, ...]:
        for rule in rules:
            if edition in rule.ids:
                return close_rules(rule.id_for(edition), edition)
        return ()

    return ids


def _publish_case(build: Build) -> Run:
    def run(ctx: CheckContext) -> None:
        pub = connected(ctx, "pub")
        pub.send_raw(build(ctx.topic()), case=True)
        observe(ctx, pub)

    return run


def _t(topic: str) -> bytes:
    return topic.encode("utf-8")


#: check id -> how it builds its case from a topic name
BUILDS: dict[str, Build] = {}


def _case(cid: str, title: str, rules: Rules, build: Build) -> Check:
    BUILDS[cid] = build
    return Check(id=cid, title=title, rules=rules, run=_publish_case(build), judge=case_findings)


PUBLISH_CHECKS: tuple[Check, ...] = (
    _case(
        "wire.publish-qos3",
        "PUBLISH with both QoS bits set",
        _rules(R.QOS_RESERVED),
        lambda t: publish_bytes(0x36, _t(t), 1),
    ),
    _case(
        "wire.publish-dup-qos0",
        "PUBLISH QoS 0 with DUP set",
        _rules(R.DUP_QOS0),
        lambda t: publish_bytes(0x38, _t(t)),
    ),
    _case(
        "wire.topic-wildcard-plus",
        "PUBLISH topic name with '+'",
        _rules(R.TOPIC_NO_WILDCARDS),
        lambda t: publish_bytes(0x30, _t(t + "/+")),
    ),
    _case(
        "wire.topic-wildcard-hash",
        "PUBLISH topic name with '#'",
        _rules(R.TOPIC_NO_WILDCARDS),
        lambda t: publish_bytes(0x30, _t(t + "/#")),
    ),
    _case(
        "wire.topic-empty",
        "PUBLISH with an empty topic name",
        _rules(R.TOPIC_NOT_EMPTY),
        lambda t: publish_bytes(0x30, b""),
    ),
    _case(
        "wire.topic-nul",
        "PUBLISH topic name with U+0000",
        _rules(R.TOPIC_NUL),
        lambda t: publish_bytes(0x30, _t(t) + b"/\x00"),
    ),
    _case(
        "wire.topic-ill-formed-utf8",
        "PUBLISH topic name with byte FF",
        _rules(R.TOPIC_UTF8),
        lambda t: publish_bytes(0x30, _t(t) + b"/\xff"),
    ),
    _case(
        "wire.topic-surrogate",
        "PUBLISH topic name with an encoded surrogate (ED A0 80)",
        _rules(R.TOPIC_UTF8),
        lambda t: publish_bytes(0x30, _t(t) + b"/\xed\xa0\x80"),
    ),
    _case(
        "wire.topic-discouraged",
        "PUBLISH topic name with U+0001 (SHOULD NOT; the receiver MAY close)",
        _rules(R.TOPIC_DISCOURAGED, R.TOPIC_UTF8),
        lambda t: publish_bytes(0x30, _t(t) + b"/\x01"),
    ),
    _case(
        "wire.topic-32768-characters",
        "PUBLISH topic name of 32,768 characters (MQTT 3.1 allows 32,767; 3.1.1 65,535 bytes)",
        _rules(R.TOPIC_MAX_31, R.TOPIC_MAX_BYTES),
        lambda t: publish_bytes(0x30, _t(t + "/" + "a" * (32_767 - len(t)))),
    ),
    _case(
        "wire.packet-id-zero",
        "PUBLISH QoS 1 with packet identifier 0",
        _rules(R.PACKET_ID_NONZERO),
        lambda t: publish_bytes(0x32, _t(t), 0),
    ),
    _case(
        "wire.topic-longer-than-packet",
        "PUBLISH whose topic length runs past the packet",
        _rules(R.PUBLISH_RL_COVERS),
        lambda t: bytes.fromhex("3003000561"),
    ),
    _case(
        "wire.no-room-for-packet-id",
        "PUBLISH QoS 1 with no room for its packet identifier",
        _rules(R.PUBLISH_RL_COVERS),
        lambda t: publish_bytes(0x32, _t(t), payload=b""),
    ),
    _case(
        "wire.rl-non-minimal",
        "PUBLISH with a Remaining Length in more bytes than needed",
        _rules(R.RL_MINIMAL),
        lambda t: publish_bytes(0x30, _t(t), remaining_length=bytes((len(t) + 3 | 0x80, 0x00))),
    ),
    _case(
        "wire.rl-five-bytes",
        "a Remaining Length of five bytes",
        _rules(R.RL_MAX_BYTES),
        lambda t: bytes.fromhex("30ffffffff7f"),
    ),
)


# -- acknowledgements: each sent where the flow calls for it, with a fault --------------


def _ack_bytes(first: int, length: int, packet_id: int) -> bytes:
    return bytes((first, length)) + packet_id.to_bytes(2, "big") + bytes(length - 2)


def _ack_case(kind: str, first: int, length: int) -> Run:
    """The subscriber answers a forwarded message (PUBACK, PUBREC, PUBCOMP), or the
    publisher releases its own (PUBREL), with ``first`` and ``length``."""

    def run(ctx: CheckContext) -> None:
        topic = ctx.topic()
        if kind == "PUBREL":
            pub = connected(ctx, "pub")
            pub.hold = lambda p: isinstance(p, PubRec)
            message = pub.publish(topic, b"ack", qos=2)
            ctx.wait_for(pub, "PUBREC", lambda: bool(pub.held))
            assert message.packet_id is not None
            pub.send_raw(_ack_bytes(first, length, message.packet_id), case=True)
            observe(ctx, pub)
            return
        qos = 1 if kind == "PUBACK" else 2
        sub = subscriber(ctx, "sub", (topic, qos))
        if kind == "PUBCOMP":
            sub.hold = lambda p: isinstance(p, PubRel)
        else:
            sub.hold = lambda p: isinstance(p, Publish)
        pub = connected(ctx, "pub")
        pub.publish(topic, b"ack", qos=qos)
        ctx.wait_for(sub, "PUBREL" if kind == "PUBCOMP" else "PUBLISH", lambda: bool(sub.held))
        packet_id = sub.held[0].packet_id
        assert packet_id is not None
        sub.send_raw(_ack_bytes(first, length, packet_id), case=True)
        observe(ctx, sub)

    return run


_ACK_TYPE = {"PUBACK": 0x40, "PUBREC": 0x50, "PUBREL": 0x62, "PUBCOMP": 0x70}


def _ack_checks() -> list[Check]:
    checks = []
    for kind, first in _ACK_TYPE.items():
        wrong = (first & 0xF0) | (0x0 if kind == "PUBREL" else 0x2)
        flags_rule = R.ACK_FLAGS[kind]
        checks.append(
            Check(
                id=f"wire.{kind.lower()}-flags",
                title=f"{kind} with flags {wrong & 0xF:04b}",
                rules=_rules(flags_rule),
                run=_ack_case(kind, wrong, 2),
                judge=case_findings,
            )
        )
        checks.append(
            Check(
                id=f"wire.{kind.lower()}-length",
                title=f"{kind} with Remaining Length 3",
                rules=_rules(R.ACK_RL[kind]),
                run=_ack_case(kind, first, 3),
                judge=case_findings,
            )
        )
    return checks


CHECKS: tuple[Check, ...] = (*PUBLISH_CHECKS, *_ack_checks())
