"""The broker checks both catalogs have are built once: a check of the 5.0 catalog whose id
the 3.x catalog has too is made from the same definition (a wire case of
:data:`pubproof.probe.checks_wire.SHARED`), or is the very same check (the end-to-end flows,
the session re-sends, the distribution checks); and each edition's case is what the model
rejects under that edition's id of the case's rule."""

from __future__ import annotations

import pytest

from pubproof.judge.close import expectation
from pubproof.judge.limits import declared
from pubproof.model.editions import Edition, resolve_readings
from pubproof.probe import BY_ID, BY_ID50, checks_distribution
from pubproof.probe.checks50_wire import ACK_BUILDS
from pubproof.probe.checks50_wire import BUILDS as BUILDS50
from pubproof.probe.checks_flows import END_TO_END
from pubproof.probe.checks_session import RESEND_PUBLISH_QOS1, RESEND_PUBREL, persistent
from pubproof.probe.checks_wire import BUILDS, SHARED, AckCase, PublishCase, publish_bytes
from pubproof.probe.judge50 import case_findings50
from pubproof.probe.judge_wire import case_findings

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50
TOPIC = "pubproof/0a1b2c/wire/t"
#: the checks that are one object in both catalogs (same title, run and judge in each)
SAME_OBJECT = {c.id: c for c in (*END_TO_END, RESEND_PUBLISH_QOS1, RESEND_PUBREL)}
#: a broker that declared nothing (the shared cases need no limits)
NOTHING_DECLARED = declared({})


def test_every_check_both_catalogs_have_is_built_once() -> None:
    both = BY_ID.keys() & BY_ID50.keys()
    distribution = {c.id for c in checks_distribution.CHECKS}
    named_alike = {cid for cid, case in SHARED.items() if not case.id50}
    assert both == named_alike | SAME_OBJECT.keys() | distribution
    for cid in both - named_alike:
        assert BY_ID[cid] is BY_ID50[cid], cid
    for cid in SAME_OBJECT:
        assert BY_ID[cid] is SAME_OBJECT[cid], cid
    for cid, case in SHARED.items():
        cid50 = case.id_for(V50)
        assert case.id_for(V31) == case.id_for(V311) == cid
        assert cid50 == (case.id50 or cid) and (cid50 == cid or cid50 not in BY_ID), cid
        assert BY_ID[cid] is case.check(V311) is case.check(V31), cid
        assert BY_ID50[cid50] is case.check(V50), cid
        for edition in (V31, V311, V50):
            check = case.check(edition)
            assert check.rules_for(edition)[0] == case.rule.id_for(edition), (cid, edition)
        assert BY_ID[cid].judge is case_findings and BY_ID50[cid50].judge is case_findings50
        assert BY_ID50[cid50].title == f"{BY_ID[cid].title} ({case.reason50})"


def test_the_shared_checks_keep_their_rules_per_edition() -> None:
    """The rule ids each edition's catalog gave these checks before they were shared."""
    expected = {
        "session.resend-publish-qos1": (
            ("MQTT-4.4.0-1", "MQTT-3.1.2-4", "MQTT-3.2.2-2", "MQTT-3.3.1-1"),
            ("MQTT-4.4.0-1", "MQTT-3.3.1-1"),
        ),
        "session.resend-pubrel": (
            ("MQTT-4.4.0-1", "MQTT-3.1.2-4", "MQTT-3.2.2-2", "MQTT-4.3.3-1"),
            ("MQTT-4.4.0-1", "MQTT-4.3.3-6"),
        ),
        "wire.publish-qos3": (("MQTT-3.3.1-4",), ("MQTT-3.3.1-4", "MQTT-4.13.1-1")),
        "wire.puback-flags": (("MQTT-2.2.2-1",), ("MQTT-2.1.3-1", "MQTT-4.13.1-1")),
        "wire.topic-wildcard-plus": (
            ("MQTT-3.3.2-2", "MQTT-4.7.1-1", "MQTT-4.8.0-1"),
            ("MQTT-3.3.2-2", "MQTT-4.13.1-1"),
        ),
    }
    for cid, (v311, v50) in expected.items():
        cid50 = SHARED[cid].id_for(V50) if cid in SHARED else cid
        assert BY_ID[cid].rules_for(V311)[: len(v311)] == v311, cid
        assert BY_ID50[cid50].rules_for(V50) == v50, cid


def _bytes(cid: str, edition: Edition, topic: str = TOPIC) -> bytes:
    """The case as the edition's catalog sends it (through the catalog's own record)."""
    case = SHARED[cid]
    if isinstance(case, AckCase):
        if edition is V50:
            kind, build = ACK_BUILDS[case.id_for(V50)]
            assert kind == case.kind
            return build(7)
        return case.build(7)
    assert isinstance(case, PublishCase)
    if edition is V50:
        return BUILDS50[case.id_for(V50)](topic, NOTHING_DECLARED)
    return BUILDS[cid](topic)


#: the bytes each catalog sent for a shared case (3.x, 5.0; topic name "a/b", packet
#: identifier 7) before the cases were shared, from the two catalogs' own builds then
SENT_BEFORE = {
    "wire.packet-id-zero": ("32080003612f62000078", "32090003612f6200000078"),
    "wire.puback-flags": ("42020007", "42020007"),
    "wire.publish-dup-qos0": ("38060003612f6278", "38070003612f620078"),
    "wire.publish-qos3": ("36080003612f62000178", "36090003612f6200010078"),
    "wire.pubrel-flags": ("60020007", "60020007"),
    "wire.rl-five-bytes": ("30ffffffff7f", "30ffffffff7f"),
    "wire.rl-non-minimal": ("3086000003612f6278", "3087000003612f620078"),
    "wire.topic-ill-formed-utf8": ("30080005612f622fff78", "30090005612f622fff0078"),
    "wire.topic-nul": ("30080005612f622f0078", "30090005612f622f000078"),
    "wire.topic-wildcard-plus": ("30080005612f622f2b78", "30090005612f622f2b0078"),
}


def test_each_catalog_sends_what_it_sent_before_the_sharing() -> None:
    assert SENT_BEFORE.keys() == SHARED.keys()
    for cid, before in SENT_BEFORE.items():
        now = (_bytes(cid, V311, "a/b").hex(), _bytes(cid, V50, "a/b").hex())
        assert now == before, cid


@pytest.mark.parametrize("edition", [V31, V311, V50])
@pytest.mark.parametrize("cid", sorted(SHARED))
def test_each_editions_case_is_rejected_under_its_rule(cid: str, edition: Edition) -> None:
    """The model rejects the edition's bytes of a shared case with the edition's id of the
    case's rule, under the defaults or under the one reading that the check is about; in
    5.0 the Reason Code its title names is the one the model calls for."""
    case = SHARED[cid]
    data = _bytes(cid, edition)
    readings = resolve_readings(edition)
    exp = expectation(data, edition, readings)
    if not exp.close:
        rejecting = [(name, value) for name, value, close in exp.alternatives if close]
        assert len(rejecting) == 1, (cid, edition, exp)
        name, value = rejecting[0]
        exp = expectation(data, edition, {**readings, name: value})
    assert exp.close and exp.failure is not None, (cid, edition, exp)
    assert exp.failure.rule == case.rule.id_for(edition), (cid, edition, exp.failure)
    if edition is V50 and case.reason50.startswith("0x"):
        assert exp.failure.reason_code == int(case.reason50[:4], 16), (cid, exp.failure)


def test_the_layouts_differ_only_by_the_property_section() -> None:
    """A shared PUBLISH case in 5.0 is its 3.x bytes with a Property Length of 0 after the
    variable header (and the Remaining Length one more)."""
    assert publish_bytes(0x32, b"a/b", 7).hex() == "32080003612f62000778"
    assert publish_bytes(0x32, b"a/b", 7, edition=V50).hex() == "32090003612f6200070078"
    assert publish_bytes(0x30, b"a", length_bytes=2).hex() == "30840000016178"
    assert publish_bytes(0x30, b"a", edition=V50, length_bytes=3).hex() == "308580000001610078"
    with pytest.raises(ValueError, match="no property section"):
        publish_bytes(0x30, b"a", properties=b"\x01\x01")
    with pytest.raises(ValueError, match="does not fit"):
        publish_bytes(0x30, b"a" * 200, length_bytes=1)


def _split(data: bytes) -> tuple[int, int, bytes]:
    """(first byte, width of the Remaining Length, the rest) of a packet."""
    width = 1
    while data[width] & 0x80:
        width += 1
    return data[0], width, data[1 + width :]


@pytest.mark.parametrize("cid", sorted(c.id for c in SHARED.values() if isinstance(c, PublishCase)))
def test_the_50_catalog_sends_the_50_layout(cid: str) -> None:
    """What each catalog sends: the 5.0 bytes are the 3.x bytes with an empty property
    section before the payload, the Remaining Length one more in as many bytes (the case
    with no body, five bytes of Remaining Length, is the same in both)."""
    three, five = _bytes(cid, V311), _bytes(cid, V50)
    assert _bytes(cid, V31) == three
    if cid == "wire.rl-five-bytes":
        assert five == three == bytes.fromhex("30ffffffff7f")
        return
    first3, width3, body3 = _split(three)
    first5, width5, body5 = _split(five)
    assert (first5, width5) == (first3, width3), cid
    assert body3.endswith(b"x") and body5 == body3[:-1] + b"\x00x", cid
    assert five[1 : 1 + width5] != three[1 : 1 + width3], cid  # one more, same width


def test_a_resumed_session_is_asked_for_in_each_editions_words() -> None:
    """3.x: CleanSession 0; 5.0: a Session Expiry Interval above 0 (CleanSession 0 alone
    would end the session with the connection [MQTT-3.1.2-23])."""
    assert persistent(V31) == persistent(V311) == {"clean": False}
    five = persistent(V50)
    assert "clean" not in five and five["properties"]["session_expiry_interval"] > 0
