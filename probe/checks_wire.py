"""Wire checks: each PUBLISH and acknowledgement the model rejects (or judges only under a
reading), sent to the broker. Must the broker close the connection?

A check sends one *case* (marked ``"case": true`` in the evidence), then PINGREQ, and
reads until PINGRESP or the end of the connection. :func:`case_findings` judges the
outcome against the model's decoding of the case under every reading.

The cases every edition has are defined once (:class:`PublishCase`, :class:`AckCase`):
the same fault, laid out for the edition (MQTT 5.0 adds the property section, empty here),
the same rule (its id in each edition) and the same run; what differs is each edition's
title and judge (5.0: :func:`~pubproof.probe.judge50.case_findings50`, which also judges
the DISCONNECT Reason Code the title names). A definition carries its check for each
catalog (:meth:`SharedCase.check`); the 5.0 catalog (:mod:`pubproof.probe.checks50_wire`)
takes its own from :data:`SHARED`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from pubproof.judge.close import close_rules
from pubproof.judge.limits import Declared
from pubproof.judge.limits import declared as declared_by
from pubproof.model import wire_rules as R
from pubproof.model.editions import Edition
from pubproof.model.rules import Rule
from pubproof.model.wire import encode_remaining_length
from pubproof.probe.check import Check, Judge, Rules, Run
from pubproof.probe.context import CheckContext
from pubproof.probe.judge50 import case_findings50
from pubproof.probe.judge_wire import case_findings
from pubproof.probe.steps import connected, observe, subscriber
from pubproof.reference.packets import Publish, PubRec, PubRel

V3, V50 = Edition.V311, Edition.V50
Build = Callable[[str], bytes]  # topic name -> the bytes of the case
#: (topic name, the broker's declarations) -> the bytes of the case (what a run sends)
DeclaredBuild = Callable[[str, Declared], bytes]
#: (topic name, edition) -> the bytes of a case every edition has
EditionBuild = Callable[[str, Edition], bytes]
AckBuild = Callable[[int], bytes]  # packet identifier -> the bytes of the case


def _vbi(value: int, width: int | None = None) -> bytes:
    """A Variable Byte Integer, in ``width`` bytes if given (more than needed: the
    continuation bit set on all but the last, which is 0)."""
    minimal = encode_remaining_length(value)
    if width is None or width == len(minimal):
        return minimal
    if width < len(minimal):
        raise ValueError(f"{value} does not fit in {width} bytes")
    return bytes(b | 0x80 for b in minimal) + b"\x80" * (width - len(minimal) - 1) + b"\x00"


def publish_bytes(
    first: int,
    topic: bytes,
    packet_id: int | None = None,
    payload: bytes = b"x",
    *,
    edition: Edition = V3,
    properties: bytes = b"",
    property_length: bytes | None = None,
    remaining_length: bytes | None = None,
    length_bytes: int | None = None,
) -> bytes:
    """A PUBLISH laid out field by field, faults and all. MQTT 5.0 puts the property
    section after the packet identifier: its Property Length (``property_length`` as given,
    else the length of ``properties``), then ``properties``. The Remaining Length is
    ``remaining_length`` as given, else the true length (in ``length_bytes`` bytes if
    given: more than needed is a non-minimal encoding)."""
    body = len(topic).to_bytes(2, "big") + topic
    if packet_id is not None:
        body += packet_id.to_bytes(2, "big")
    if edition is V50:
        body += (_vbi(len(properties)) if property_length is None else property_length) + properties
    elif properties or property_length is not None:
        raise ValueError(f"a PUBLISH of MQTT {edition.value} has no property section")
    body += payload
    length = _vbi(len(body), length_bytes) if remaining_length is None else remaining_length
    return bytes((first,)) + length + body


def _rules(*rules: Rule) -> Rules:
    """The first rule that the edition has, and the rules that make the receiver close."""

    def ids(edition: Edition) -> tuple[str, ...]:
        for rule in rules:
            if edition in rule.ids:
                return close_rules(rule.id_for(edition), edition)
        return ()

    return ids


def publish_case(build: DeclaredBuild) -> Run:
    """The publisher sends the case, built with what the broker's CONNACK declared (MQTT
    5.0: its Topic Alias Maximum and Maximum Packet Size; 3.x declares nothing)."""

    def run(ctx: CheckContext) -> None:
        pub = connected(ctx, "pub")
        assert pub.connack is not None
        theirs = declared_by(pub.connack.get("properties", {}))
        pub.send_raw(build(ctx.topic(), theirs), case=True)
        observe(ctx, pub)

    return run


def ack_case(kind: str, build: AckBuild) -> Run:
    """The subscriber answers a forwarded message (PUBACK, PUBREC, PUBCOMP), or the
    publisher releases its own (PUBREL), with the case."""

    def run(ctx: CheckContext) -> None:
        topic = ctx.topic()
        if kind == "PUBREL":
            pub = connected(ctx, "pub")
            pub.hold = lambda p: isinstance(p, PubRec)
            message = pub.publish(topic, b"ack", qos=2)
            ctx.wait_for(pub, "PUBREC", lambda: bool(pub.held))
            assert message.packet_id is not None
            pub.send_raw(build(message.packet_id), case=True)
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
        sub.send_raw(build(packet_id), case=True)
        observe(ctx, sub)

    return run


def ack_bytes(first: int, *rest: int) -> AckBuild:
    """An acknowledgement: first byte, Remaining Length, packet identifier, then ``rest``."""
    return lambda packet_id: (
        bytes((first, 2 + len(rest))) + packet_id.to_bytes(2, "big") + bytes(rest)
    )


# -- the cases every edition has: one definition, a check for each catalog ---------------


def case_judge(edition: Edition) -> Judge:
    """The edition's judge of a case (5.0's also judges the DISCONNECT Reason Code)."""
    return case_findings50 if edition is V50 else case_findings


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class SharedCase:
    """A wire check both catalogs have. The id, the case, the run and the rule (its id in
    each edition) are one; the 5.0 check's title adds ``reason50`` (the DISCONNECT Reason
    Code the broker owes, or the reading that rejects the case) and its judge is 5.0's."""

    id: str
    title: str
    reason50: str
    rule: Rule
    #: the check's id in the 5.0 catalog where that names it otherwise (kept: the matrix's
    #: rows and evidence are keyed by it)
    id50: str = ""
    #: the check in the MQTT 3.1 and 3.1.1 catalog and in the 5.0 one (made from the above)
    v3: Check = field(init=False, repr=False)
    v50: Check = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.id.startswith("wire.") or not self.title or not self.reason50:
            raise ValueError(f"a shared wire case needs an id, a title and a 5.0 note: {self}")
        if self.id50 and not self.id50.startswith("wire."):
            raise ValueError(f"a shared wire case's 5.0 id is a wire check's: {self.id50!r}")
        for name, edition in (("v3", V3), ("v50", V50)):
            check = Check(
                id=self.id_for(edition), title=self.title_for(edition), rules=_rules(self.rule),
                run=self.sends(edition), judge=case_judge(edition),
            )  # fmt: skip
            object.__setattr__(self, name, check)

    def id_for(self, edition: Edition) -> str:
        """The check's id in ``edition``'s catalog."""
        return self.id50 or self.id if edition is V50 else self.id

    def title_for(self, edition: Edition) -> str:
        """The check's title in ``edition``'s catalog."""
        return f"{self.title} ({self.reason50})" if edition is V50 else self.title

    def check(self, edition: Edition) -> Check:
        """The check in ``edition``'s catalog."""
        return self.v50 if edition is V50 else self.v3

    def sends(self, edition: Edition) -> Run:
        """How the check sends its case in ``edition``."""
        raise NotImplementedError


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class PublishCase(SharedCase):
    """A PUBLISH case both catalogs have; ``build`` lays it out for the edition."""

    build: EditionBuild

    def built(self, edition: Edition) -> DeclaredBuild:
        """The case's bytes in ``edition`` (the broker's declarations are not needed)."""
        return lambda topic, theirs: self.build(topic, edition)

    def sends(self, edition: Edition) -> Run:
        return publish_case(self.built(edition))


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class AckCase(SharedCase):
    """An acknowledgement case both catalogs have, the same bytes in each: ``kind`` sent
    where the flow calls for it."""

    kind: str
    build: AckBuild

    def sends(self, edition: Edition) -> Run:
        return ack_case(self.kind, self.build)


def _t(topic: str) -> bytes:
    return topic.encode("utf-8")


PUBLISH_QOS3 = PublishCase(
    id="wire.publish-qos3", title="PUBLISH with both QoS bits set", reason50="0x81",
    rule=R.QOS_RESERVED, build=lambda t, e: publish_bytes(0x36, _t(t), 1, edition=e),
)  # fmt: skip
PUBLISH_DUP_QOS0 = PublishCase(
    id="wire.publish-dup-qos0", title="PUBLISH QoS 0 with DUP set",
    reason50="0x82; reading dup-qos0", rule=R.DUP_QOS0,
    build=lambda t, e: publish_bytes(0x38, _t(t), edition=e),
)  # fmt: skip
TOPIC_PLUS = PublishCase(
    id="wire.topic-wildcard-plus", id50="wire.topic-wildcard", title="PUBLISH topic name with '+'",
    reason50="0x82", rule=R.TOPIC_NO_WILDCARDS,
    build=lambda t, e: publish_bytes(0x30, _t(t + "/+"), edition=e),
)  # fmt: skip
TOPIC_NUL = PublishCase(
    id="wire.topic-nul", title="PUBLISH topic name with U+0000", reason50="0x81",
    rule=R.TOPIC_NUL, build=lambda t, e: publish_bytes(0x30, _t(t) + b"/\x00", edition=e),
)  # fmt: skip
TOPIC_ILL_FORMED = PublishCase(
    id="wire.topic-ill-formed-utf8", title="PUBLISH topic name with byte FF", reason50="0x81",
    rule=R.TOPIC_UTF8, build=lambda t, e: publish_bytes(0x30, _t(t) + b"/\xff", edition=e),
)  # fmt: skip
PACKET_ID_ZERO = PublishCase(
    id="wire.packet-id-zero", title="PUBLISH QoS 1 with packet identifier 0", reason50="0x82",
    rule=R.PACKET_ID_NONZERO, build=lambda t, e: publish_bytes(0x32, _t(t), 0, edition=e),
)  # fmt: skip
RL_NON_MINIMAL = PublishCase(
    id="wire.rl-non-minimal", title="PUBLISH with a Remaining Length in more bytes than needed",
    reason50="reading rl-encoding", rule=R.RL_MINIMAL,
    build=lambda t, e: publish_bytes(0x30, _t(t), edition=e, length_bytes=2),
)  # fmt: skip
RL_FIVE_BYTES = PublishCase(
    id="wire.rl-five-bytes", title="a Remaining Length of five bytes", reason50="0x81",
    rule=R.RL_MAX_BYTES, build=lambda t, e: bytes.fromhex("30ffffffff7f"),
)  # fmt: skip

#: the acknowledgements' first byte, flags as the standard fixes them
ACK_TYPE: Mapping[str, int] = MappingProxyType(
    {"PUBACK": 0x40, "PUBREC": 0x50, "PUBREL": 0x62, "PUBCOMP": 0x70}
)


def _flags_case(kind: str) -> AckCase:
    """The acknowledgement with its reserved flags wrong (PUBREL: 0000, others: 0010)."""
    first = ACK_TYPE[kind]
    wrong = (first & 0xF0) | (0x0 if kind == "PUBREL" else 0x2)
    return AckCase(
        id=f"wire.{kind.lower()}-flags", title=f"{kind} with flags {wrong & 0xF:04b}",
        reason50="0x81", rule=R.ACK_FLAGS[kind], kind=kind, build=ack_bytes(wrong),
    )  # fmt: skip


#: each acknowledgement with wrong flags (the 5.0 catalog has PUBACK's and PUBREL's)
ACK_FLAGS: Mapping[str, AckCase] = MappingProxyType({kind: _flags_case(kind) for kind in ACK_TYPE})

#: the cases both catalogs have, by check id (the 3.x catalog's)
SHARED: Mapping[str, SharedCase] = MappingProxyType({
    c.id: c for c in (PUBLISH_QOS3, PUBLISH_DUP_QOS0, TOPIC_PLUS, TOPIC_NUL, TOPIC_ILL_FORMED,
                      PACKET_ID_ZERO, RL_NON_MINIMAL, RL_FIVE_BYTES, ACK_FLAGS["PUBACK"],
                      ACK_FLAGS["PUBREL"])
})  # fmt: skip


# -- the MQTT 3.1 and 3.1.1 catalog -------------------------------------------------------

#: check id -> how it builds its case from a topic name
BUILDS: dict[str, Build] = {}


def _take(case: PublishCase) -> Check:
    """A shared case's 3.x check, its build recorded."""
    BUILDS[case.id] = lambda topic: case.build(topic, V3)
    return case.v3


def _case(cid: str, title: str, rules: Rules, build: Build) -> Check:
    BUILDS[cid] = build
    run = publish_case(lambda topic, theirs: build(topic))
    return Check(id=cid, title=title, rules=rules, run=run, judge=case_findings)


PUBLISH_CHECKS: tuple[Check, ...] = (
    _take(PUBLISH_QOS3),
    _take(PUBLISH_DUP_QOS0),
    _take(TOPIC_PLUS),
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
    _take(TOPIC_NUL),
    _take(TOPIC_ILL_FORMED),
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
    _take(PACKET_ID_ZERO),
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
    _take(RL_NON_MINIMAL),
    _take(RL_FIVE_BYTES),
)


# -- acknowledgements: each sent where the flow calls for it, with a fault --------------


def _ack_checks() -> list[Check]:
    checks = []
    for kind, first in ACK_TYPE.items():
        checks.append(ACK_FLAGS[kind].v3)
        checks.append(
            Check(
                id=f"wire.{kind.lower()}-length",
                title=f"{kind} with Remaining Length 3",
                rules=_rules(R.ACK_RL[kind]),
                run=ack_case(kind, ack_bytes(first, 0x00)),
                judge=case_findings,
            )
        )
    return checks


CHECKS: tuple[Check, ...] = (*PUBLISH_CHECKS, *_ack_checks())
