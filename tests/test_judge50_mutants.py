"""Every 5.0 judgement of pubproof.judge has a mutant its test kills.

A mutant is a small, plausible bug in the readable 5.0 judges (a table entry that forgets
the quota, an alias bound not checked, a limit not read, a DISCONNECT code not compared).
Each must make the named test of tests/test_judge50_link.py, tests/test_judge50_close.py
or tests/test_judge50_packets.py fail, so that no judgement passes its test by being
absent. The mutants patch the readable judges, which read the model's tables at every
packet; the same faults put in the capture pipeline's compiled twins are killed by the
differential tests (``tests/test_judge_twins.py``, ``FAST_MUTANTS``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from support.builds import patched
from support.suites import suite

from pubproof.judge import aliases, close, limits, link50, packets, properties
from pubproof.judge.describe import same_message
from pubproof.judge.findings import PASS
from pubproof.model import wire50
from pubproof.model.flows50 import (
    ReceiverAction50,
    ReceiverInput50,
    SenderAction50,
    SenderInput50,
    Step50,
    receiver_step50,
    sender_step50,
)
from pubproof.model.topic_alias import RECEIVER_ALIAS, AliasIn, AliasInInput

SA, SI, RA, RI = SenderAction50, SenderInput50, ReceiverAction50, ReceiverInput50
#: the test files whose tests kill the mutants
C, L, PK = suite("test_judge50_close"), suite("test_judge50_link"), suite("test_judge50_packets")


def _step_without(step_of: Callable[..., Any], *dropped: Any) -> Callable[..., Any]:
    """The table's step function, with ``dropped`` taken out of every step's actions."""

    def step(*args: Any) -> Any:
        found = step_of(*args)
        if isinstance(found, Step50):
            kept: Any = tuple(a for a in found.actions if a not in dropped)
            return replace(found, actions=kept)
        return found

    return step


def quota_never_taken() -> Any:
    return patched(link50, "sender_step50", _step_without(sender_step50, SA.TAKE_QUOTA))


def quota_never_released() -> Any:
    return patched(link50, "sender_step50", _step_without(sender_step50, SA.RELEASE_QUOTA))


def receive_maximum_off_by_one() -> Any:
    original = limits.declared

    def declared(properties: Any) -> limits.Declared:
        got = original(properties)
        return replace(got, receive_maximum=min(got.receive_maximum + 1, 0xFFFF))

    return patched(limits, "declared", declared)


def pubrec_error_as_success() -> Any:
    inputs = {**link50.ACK_RECEIVED, ("PUBREC", True): SI.PUBREC_OK}
    return patched(link50, "ACK_RECEIVED", inputs)


def error_codes_ignored() -> Any:
    return patched(link50, "is_error", lambda code: False)


def alias_maximum_not_checked() -> Any:
    table = dict(RECEIVER_ALIAS)
    for state in AliasIn:
        table[state, AliasInInput.ALIAS_INVALID] = RECEIVER_ALIAS[
            state, AliasInInput.TOPIC_AND_ALIAS
        ]
    return patched(aliases, "RECEIVER_ALIAS", table)


def unknown_alias_accepted() -> Any:
    table = dict(RECEIVER_ALIAS)
    table[AliasIn.UNSET, AliasInInput.ALIAS_ONLY] = RECEIVER_ALIAS[
        AliasIn.UNSET, AliasInInput.TOPIC_AND_ALIAS
    ]
    return patched(aliases, "RECEIVER_ALIAS", table)


def aliases_carried_over() -> Any:
    table = dict(RECEIVER_ALIAS)
    for state in AliasIn:
        step = RECEIVER_ALIAS[state, AliasInInput.NEW_CONNECTION]
        table[state, AliasInInput.NEW_CONNECTION] = replace(step, actions=(), next=state)
    return patched(aliases, "RECEIVER_ALIAS", table)


def _connack_ignoring(key: str) -> Any:
    original = limits.Negotiated.with_connack

    def with_connack(self: limits.Negotiated, fields: Any) -> limits.Negotiated:
        properties = dict(fields.get("properties") or {})
        properties.pop(key, None)
        return original(self, {**fields, "properties": properties})

    return patched(limits.Negotiated, "with_connack", with_connack)


def maximum_qos_not_read() -> Any:
    return _connack_ignoring("maximum_qos")


def retain_available_not_read() -> Any:
    return _connack_ignoring("retain_available")


def resume_without_session_present() -> Any:
    def step(state: Any, event: Any) -> Any:
        return sender_step50(state, SI.RESUME if event is SI.CLEAN else event)

    return patched(link50, "sender_step50", step)


def pubcomp_0x92_not_owed() -> Any:
    def step(method: Any, state: Any, event: Any) -> Any:
        found = receiver_step50(method, state, event)
        if isinstance(found, Step50):
            actions: Any = tuple(
                RA.SEND_PUBCOMP if a is RA.SEND_PUBCOMP_NOT_FOUND else a for a in found.actions
            )
            return replace(found, actions=actions)
        return found

    return patched(link50, "receiver_step50", step)


def refusal_keeps_the_identifier() -> Any:
    accepted = {"PUBACK": RI.PUBLISH_QOS1, "PUBREC": RI.PUBLISH_QOS2}
    return patched(link50, "REFUSED", accepted)


def resend_on_the_same_connection_allowed() -> Any:
    # the judge forgets that 5.0 forbids a re-send at any other time: the DUP re-send of a
    # flow in progress passes as its first sending
    original = link50.LinkJudge50._on_flow

    def on_flow(self: Any, fields: Any, flow: Any, found: list[Any]) -> None:
        if fields["dup"] and same_message(fields, flow.message):
            return
        original(self, fields, flow, found)

    return patched(link50.LinkJudge50, "_on_flow", on_flow)


def disconnect_code_not_judged() -> Any:
    return patched(close, "reason_code_verdict", lambda expected, sent: PASS)


def close_limits_ignored() -> Any:
    original = close._rejects

    def rejects(data: bytes, edition: Any, readings: Any, limits: Any = None) -> Any:
        return original(data, edition, readings, None)

    return patched(close, "_rejects", rejects)


def auth_reserved_in_5_0() -> Any:
    return patched(packets, "TYPE_NAMES_V50", packets.TYPE_NAMES)


def repeats_not_judged() -> Any:
    return patched(wire50, "_judge_property", lambda *args: None)


def will_read_as_connect() -> Any:
    tables = dict(properties.TABLES)
    tables["WILL"] = tables["CONNECT"]
    return patched(properties, "TABLES", tables)


def one_alias_map_for_both_directions() -> Any:
    shared = aliases.TopicAliases()
    return patched(link50, "TopicAliases", lambda: shared)


#: mutant -> (its factory, the test that kills it)
MUTANTS: dict[str, tuple[Callable[[], Any], Callable[[], None]]] = {
    "the quota is never taken": (quota_never_taken, L.test_receive_maximum_each_way),
    "the quota is never released": (
        quota_never_released, L.test_the_quota_is_released_by_each_ack_the_table_names,
    ),
    "Receive Maximum off by one": (receive_maximum_off_by_one, L.test_receive_maximum_each_way),
    "PUBREC >= 0x80 taken for success": (
        pubrec_error_as_success, L.test_error_acknowledgements_end_the_flow,
    ),
    "error codes ignored": (error_codes_ignored, L.test_error_acknowledgements_end_the_flow),
    "alias maximum not checked": (
        alias_maximum_not_checked, L.test_topic_alias_resolution_and_faults,
    ),
    "unknown alias accepted": (unknown_alias_accepted, L.test_topic_alias_resolution_and_faults),
    "aliases carried to the next connection": (
        aliases_carried_over, L.test_topic_alias_resolution_and_faults,
    ),
    "Maximum QoS not read": (
        maximum_qos_not_read, L.test_what_the_server_declared_binds_the_client,
    ),
    "Retain Available not read": (
        retain_available_not_read, L.test_what_the_server_declared_binds_the_client,
    ),
    "resume without Session Present": (
        resume_without_session_present,
        lambda: L.test_session_present_0_is_a_clean_session_not_a_finding(False),
    ),
    "PUBCOMP 0x92 not owed": (
        pubcomp_0x92_not_owed, L.test_pubrel_for_an_unknown_identifier_is_owed_pubcomp_0x92,
    ),
    "a refusal keeps the identifier": (
        refusal_keeps_the_identifier, L.test_a_refused_qos2_message_frees_the_identifier,
    ),
    "a re-send on the same connection allowed": (
        resend_on_the_same_connection_allowed, L.test_a_resend_only_on_a_resumed_session,
    ),
    "the DISCONNECT code not judged": (
        disconnect_code_not_judged,
        lambda: C.test_the_disconnect_reason_code_is_judged(0x00, "deviation"),
    ),
    "AUTH reserved in 5.0": (auth_reserved_in_5_0, PK.test_protocol_levels_and_auth),
    "property repeats not judged": (
        repeats_not_judged,
        lambda: PK.test_property_errors_name_the_model_rule(
            0x20, bytes.fromhex("0000" "06" "21000a21000b"), "PP50-2.2.2-property-once", 6
        ),
    ),
    "Will Properties read as CONNECT's": (
        will_read_as_connect, PK.test_connect_round_trip_with_will_and_properties,
    ),
    "one Topic Alias map for both directions": (
        one_alias_map_for_both_directions, L.test_topic_alias_resolution_and_faults,
    ),
    "the receiver's limits ignored": (
        close_limits_ignored, C.test_a_server_that_reads_on_after_a_5_0_offence,
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_each_mutant_is_killed(name: str) -> None:
    make, test = MUTANTS[name]
    test()  # the test passes on the judge as it is
    # the test fails: an assertion, or unpacking or looking up what the judge no longer gives
    with make(), pytest.raises((AssertionError, ValueError, KeyError)):
        test()
