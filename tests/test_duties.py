"""Duties: a verdict charges the judged end only with what it owed, and a SHOULD is not a
MUST (:mod:`pubproof.model.duties`, :func:`pubproof.judge.close.close_charges`, the probe's
and the client probe's case judges, the matrix).

Each test names the mutant it kills: a judge that charges the receiver with the rule its
sender broke, one that charges a Client with a Server's rule, one that calls a SHOULD a
violation.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.builds import pure_only

from pubproof.judge import close as close_judge
from pubproof.judge.close import (
    CLIENT_SHOULD_CLOSE,
    CLOSE_ON_VIOLATION,
    CLOSE_WITH_REASON,
    DISCONNECT_REASON,
    close_charges,
    reason_code_verdict,
)
from pubproof.judge.findings import DEVIATION, PASS, TOLERATED, VIOLATION
from pubproof.model.duties import (
    Duty,
    Party,
    binds_only_others,
    binds_receiver,
    duties,
    duty_of,
)
from pubproof.model.editions import Edition
from pubproof.probe.findings import VERDICTS, conclude, passed, violation

from conftest import ROOT

V31, V311, V5 = Edition.V31, Edition.V311, Edition.V50
C, SV, S, R = Party.CLIENT, Party.SERVER, Party.SENDER, Party.RECEIVER


# -- the duty data ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule_id", "edition", "parties"),
    [
        # "sender (Client or Server)": a wildcard in a topic name is the sender's fault
        ("MQTT-3.3.2-2", V311, {(S, None)}),
        ("MQTT-4.7.1-1", V311, {(S, None)}),
        # the registry groups 2.2.2-1 (sender) and 2.2.2-2 (receiver) as one rule
        ("MQTT-2.2.2-1", V311, {(S, None)}),
        ("MQTT-2.2.2-2", V311, {(R, None)}),
        # "sender; receiver (Client or Server)": both parts
        ("MQTT-3.3.1-4", V311, {(S, None), (R, None)}),
        # "sender; Server (as receiver)": only a Server must close on bad PUBREL flags
        ("MQTT-3.6.1-1", V311, {(S, None), (R, SV)}),
        # 5.0 [MQTT-4.13.1-1] "When a Server detects ... it MUST close"
        ("MQTT-4.13.1-1", V5, {(R, SV)}),
        ("MQTT-3.3.2-9", V5, {(C, None)}),
        # 5.0's MQTT-2.2.2-1 is the Property Length, the sender's (not 3.1.1's statement)
        ("MQTT-2.2.2-1", V5, {(S, None)}),
        # 3.1 cites 3.1.1 ids
        ("MQTT-4.3.2-2", V31, {(R, None)}),
    ],
)
def test_the_parties_each_statement_binds(
    rule_id: str, edition: Edition, parties: set[tuple[Party, Party | None]]
) -> None:
    assert {(d.party, d.role) for d in duties(rule_id, edition)} == parties


def test_a_should_is_not_a_must() -> None:
    assert duties(CLIENT_SHOULD_CLOSE, V5) == (Duty(party=C, must=False),)
    assert duties(DISCONNECT_REASON, V5) == (Duty(party=R, must=False),)
    # the 3.1.1 discouraged code points: "SHOULD NOT" (a project id of the registry)
    assert not duties("PP311-1.5.3-discouraged-code-points", V311)[0].must


def test_a_format_definition_binds_the_end_that_makes_the_packet() -> None:
    # "definition" statements the registry says bind sender and receiver: what the
    # receiver owes a packet that breaks one is the close rule's
    assert {d.party for d in duties("PP311-3.4.1-remaining-length", V311)} == {S}


def test_an_id_no_source_knows_binds_everyone() -> None:
    assert duties("MQTT-9.9.9-9", V311) == ()
    assert duty_of("MQTT-9.9.9-9", V311, role=C) == Duty(party=C)
    assert binds_receiver("MQTT-9.9.9-9", V311, role=SV)


def test_roles_and_positions() -> None:
    assert binds_only_others("MQTT-4.13.1-1", V5, role=C)
    assert not binds_only_others("MQTT-4.13.1-1", V5, role=SV)
    assert binds_only_others("MQTT-3.3.4-7", V5, role=SV)  # the Client's Receive Maximum
    assert duty_of("MQTT-3.6.1-1", V311, role=C, position=R) is None
    assert duty_of("MQTT-3.6.1-1", V311, role=SV, position=R) == Duty(party=R, role=SV)
    with pytest.raises(ValueError, match="not a role"):
        Duty(party=S).binds(S, None)
    with pytest.raises(ValueError, match="restricts a position"):
        Duty(party=C, role=SV)


# -- the close judge's charges ------------------------------------------------------------


def test_a_provoking_sender_rule_charges_the_receiver_only_with_its_own_duty() -> None:
    # pubproof's server sends a PUBLISH whose topic holds '+': the client owes the close,
    # the wildcard rules bind the sender
    charges = close_charges("MQTT-3.3.2-2", V311, "client")
    assert charges.charged == (CLOSE_ON_VIOLATION,)
    assert set(charges.provoked) == {"MQTT-3.3.2-2", "MQTT-4.7.1-1"}
    # reserved flags: 2.2.2-1 is the sender's, 2.2.2-2 ("MUST close") the receiver's
    flags = close_charges("MQTT-2.2.2-1", V311, "server")
    assert flags.charged == ("MQTT-2.2.2-2", CLOSE_ON_VIOLATION)
    assert flags.provoked == ("MQTT-2.2.2-1",)
    # QoS 3: the receiver's part of MQTT-3.3.1-4 ("MUST close") is its own
    assert close_charges("MQTT-3.3.1-4", V311, "server").charged == (
        "MQTT-3.3.1-4", CLOSE_ON_VIOLATION
    )  # fmt: skip


def test_in_5_0_a_client_owes_a_should_and_a_server_a_must() -> None:
    # 4.13.1: a Client SHOULD close, any receiver SHOULD send DISCONNECT with the code
    assert CLIENT_SHOULD_CLOSE == "PP50-4.13.1-client-close"
    assert DISCONNECT_REASON == "PP50-4.13.1-disconnect-reason-code"
    server = close_charges("PP50-2.2.2-property-length", V5, "server")
    client = close_charges("PP50-2.2.2-property-length", V5, "client")
    assert server.charged == (CLOSE_WITH_REASON,) and not server.should
    assert client.charged == (CLIENT_SHOULD_CLOSE,) and client.should
    assert "MQTT-4.13.1-1" not in client.charged
    # a Client's own MUST NOT as a sender (Topic Alias above the Server's maximum) is not
    # what the Client owes when the Server sends it one
    alias = close_charges("PP50-3.3.4-topic-alias-maximum", V5, "client")
    assert "MQTT-3.3.2-9" in alias.provoked and "MQTT-3.3.2-9" not in alias.charged


def test_3_1_names_no_receiver_action() -> None:
    assert close_charges("PP31-3.3-topic-wildcards", V31, "server").charged == ()


@pytest.mark.parametrize(
    ("expected", "sent", "verdict"),
    [
        (0x81, 0x81, PASS), (0x94, 0x82, TOLERATED), (0x81, 0x00, DEVIATION),
        (0x94, 0x93, DEVIATION),
    ],
)  # fmt: skip
def test_a_reason_code_is_a_should(expected: int, sent: int, verdict: str) -> None:
    # 4.13.1 "it SHOULD send a DISCONNECT packet containing the Reason Code": a wrong code
    # is never a violation (mutant: DEVIATION -> VIOLATION in reason_code_verdict)
    assert reason_code_verdict(expected, sent) == verdict


def test_a_deviation_ranks_between_a_toleration_and_a_violation() -> None:
    assert VERDICTS.index(TOLERATED) < VERDICTS.index(DEVIATION) < VERDICTS.index(VIOLATION)


# -- the probe's conclusions ----------------------------------------------------------------


def test_conclude_sets_apart_what_the_probe_broke_and_the_other_roles_rules() -> None:
    found = [
        violation("kept the connection open", CLOSE_ON_VIOLATION, source="close"),
    ]
    found = [f.with_rules(f.rules) for f in found]
    judged = conclude(
        found, ("MQTT-3.3.2-2", "MQTT-4.7.1-1", CLOSE_ON_VIOLATION), broker_alive=True,
        role="client", edition=V311, provoked=("MQTT-3.3.2-2", "MQTT-4.7.1-1"),
    )  # fmt: skip
    assert dict(judged.rule_verdicts) == {CLOSE_ON_VIOLATION: VIOLATION}
    assert judged.provoked == ("MQTT-3.3.2-2", "MQTT-4.7.1-1")
    # a Server-only rule in a client check is never the client's
    judged = conclude(
        [passed("ok", CLIENT_SHOULD_CLOSE, source="close")],
        ("MQTT-4.13.1-1", CLIENT_SHOULD_CLOSE), broker_alive=True, role="client", edition=V5,
    )  # fmt: skip
    assert "MQTT-4.13.1-1" not in judged.rule_verdicts
    assert "MQTT-4.13.1-1" not in judged.provoked  # nobody broke it: it is not the client's


@pure_only
def test_the_mutant_that_charges_the_sender_rule_is_killed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The mutant: close_charges keeps every rule of the offence as the receiver's."""
    monkeypatch.setattr(close_judge, "binds_receiver", lambda *a, **k: True)
    charges = close_judge.close_charges("MQTT-3.3.2-2", V311, "client")
    assert "MQTT-3.3.2-2" in charges.charged  # the mutant is live ...
    with pytest.raises(AssertionError):  # ... and the test above fails on it
        test_a_provoking_sender_rule_charges_the_receiver_only_with_its_own_duty()


# -- the committed matrix ------------------------------------------------------------------


def _rows() -> list[dict[str, object]]:
    results: dict[str, list[dict[str, object]]] = json.loads(
        (Path(ROOT) / "docs" / "matrix" / "results.json").read_text(encoding="utf-8")
    )
    return results["results"]


def test_no_row_of_the_matrix_charges_the_other_end() -> None:
    """No implementation is charged with a rule that binds only the other role, nor with
    a rule its row says pubproof broke on purpose."""
    wrong = []
    for row in _rows():
        edition = Edition(str(row["edition"]))
        role = C if row["kind"] == "client" else SV
        verdicts = row.get("rule_verdicts") or {}
        assert isinstance(verdicts, dict)
        provoked = row.get("provoked") or []
        assert isinstance(provoked, list)
        for rule, verdict in verdicts.items():
            if verdict in (PASS, TOLERATED, "not-applicable"):
                continue
            if binds_only_others(rule, edition, role=role) or rule in provoked:
                wrong.append(f"{row['implementation']}/{row['edition']}/{row['check']}: {rule}")
    assert not wrong, wrong


def test_no_client_is_charged_with_a_server_only_rule() -> None:
    for row in _rows():
        if row["kind"] != "client":
            continue
        verdicts = row.get("rule_verdicts") or {}
        assert isinstance(verdicts, dict)
        charged = {r for r, v in verdicts.items() if v not in (PASS, "not-applicable")}
        assert "MQTT-4.13.1-1" not in charged, row["check"]


def test_a_5_0_client_closing_with_disconnect_0x00_after_a_malformed_packet() -> None:
    """Eclipse Paho C answers a PUBLISH whose Property Length runs past the packet with
    DISCONNECT 0x00 and closes (the matrix's evidence, pinned in tests/conversations): it
    closed, as a Client SHOULD, and did not send the Reason Code 4.13.1 says it SHOULD send.
    That is a deviation, never a violation, and never of the Server's MQTT-4.13.1-1."""
    from pubproof.probe.clients import rejudge_client

    pinned = "paho-c-5.0--wire.receive-property-length-past-packet.json"
    check = json.loads((Path(ROOT) / "tests" / "conversations" / pinned).read_text("utf-8"))
    judged = rejudge_client(check["check"], check["evidence"], V5, check["readings"])
    assert judged.verdict == DEVIATION, judged.message
    assert dict(judged.rule_verdicts) == {
        CLIENT_SHOULD_CLOSE: PASS, DISCONNECT_REASON: DEVIATION,
    }  # fmt: skip
    assert judged.provoked == ("PP50-2.2.2-property-length",)
    assert "DISCONNECT 0x00" in judged.message
