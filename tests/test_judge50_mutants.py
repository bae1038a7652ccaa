"""Every 5.0 judgement of pubproof.judge has a mutant its test kills.

A mutant is a small, plausible bug in the 5.0 judges (a table entry that forgets the quota,
an alias bound not checked, a limit not read, a DISCONNECT code not compared). Each must
make the named test of tests/test_judge50_link.py or tests/test_judge50_close.py fail, so
that no judgement passes its test by being absent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import pytest
import test_judge50_close as C
import test_judge50_link as L
import test_judge50_packets as PK
from builds import pure_only

from pubproof.judge import aliases, close, limits, link50, packets, properties
from pubproof.judge.describe import same_message
from pubproof.judge.findings import PASS
from pubproof.model import wire50
from pubproof.model.flows50 import SenderInput50
from pubproof.model.topic_alias import RECEIVER_ALIAS, AliasIn, AliasInInput

SI = SenderInput50


@contextmanager
def patched(owner: Any, name: str, value: object) -> Iterator[None]:
    original = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, original)


def _entries(table: Any, **changes: Any) -> Any:
    return tuple(e if e is None else replace(e, **changes) for e in table)


def quota_never_taken() -> Any:
    tx = {qos: _entries(t, takes_quota=False) for qos, t in link50._TX_PUBLISH.items()}
    return patched(link50, "_TX_PUBLISH", tx)


def quota_never_released() -> Any:
    tx = {
        kind: tuple(_entries(t, releases_quota=False) for t in pair)
        for kind, pair in link50._TX_ACK.items()
    }
    return patched(link50, "_TX_ACK", tx)


def receive_maximum_off_by_one() -> Any:
    original = limits.declared

    def declared(properties: Any) -> limits.Declared:
        got = original(properties)
        return replace(got, receive_maximum=min(got.receive_maximum + 1, 0xFFFF))

    return patched(limits, "declared", declared)


def pubrec_error_as_success() -> Any:
    tx = dict(link50._TX_ACK)
    tx["PUBREC"] = (tx["PUBREC"][0], tx["PUBREC"][0])
    return patched(link50, "_TX_ACK", tx)


def error_codes_ignored() -> Any:
    return patched(link50, "is_error", lambda code: False)


def alias_maximum_not_checked() -> Any:
    table = dict(RECEIVER_ALIAS)
    for state in AliasIn:
        table[state, AliasInInput.ALIAS_INVALID] = RECEIVER_ALIAS[
            state, AliasInInput.TOPIC_AND_ALIAS
        ]
    return patched(aliases, "STEPS", aliases.by_input(table))


def unknown_alias_accepted() -> Any:
    table = dict(RECEIVER_ALIAS)
    table[AliasIn.UNSET, AliasInInput.ALIAS_ONLY] = RECEIVER_ALIAS[
        AliasIn.UNSET, AliasInInput.TOPIC_AND_ALIAS
    ]
    return patched(aliases, "STEPS", aliases.by_input(table))


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
    table = dict(link50.SENDER50)
    table[SI.CLEAN] = table[SI.RESUME]
    return patched(link50, "SENDER50", table)


def pubcomp_0x92_not_owed() -> Any:
    pubrel = tuple(
        tuple(
            e if e is None else replace(e, replies=tuple((k, 0) for k, _ in e.replies))
            for e in table
        )
        for table in link50._RX_PUBREL
    )
    return patched(link50, "_RX_PUBREL", pubrel)


def refusal_keeps_the_identifier() -> Any:
    return patched(link50, "_RX_REFUSED", {1: link50._RX_PUBLISH[1], 2: link50._RX_PUBLISH[2]})


def resend_on_the_same_connection_allowed() -> Any:
    # the judge forgets that 5.0 forbids a re-send at any other time: the DUP re-send of a
    # flow in progress passes as its first sending
    original = link50.LinkJudge50._judged_flow50

    def judged_flow(self: Any, fields: Any, packet_id: int, found: list[Any]) -> bool:
        flow = self.judged_tx.get(packet_id)
        if flow is not None and fields["dup"] and same_message(fields, flow.message):
            return False
        return bool(original(self, fields, packet_id, found))

    return patched(link50.LinkJudge50, "_judged_flow50", judged_flow)


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
#: the mutants that replace a function or method of a compiled module (judge.link50,
#: judge.close), which its compiled callers call directly: they run in the pure pass
PATCH_COMPILED_CODE = {
    "a re-send on the same connection allowed",
    "one Topic Alias map for both directions",  # compiled link50 makes its maps directly
    "the DISCONNECT code not judged",
    "the receiver's limits ignored",
}


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pure_only) if n in PATCH_COMPILED_CODE else n for n in sorted(MUTANTS)],
)
def test_each_mutant_is_killed(name: str) -> None:
    make, test = MUTANTS[name]
    test()  # the test passes on the judge as it is
    # the test fails: an assertion, or unpacking or looking up what the judge no longer gives
    with make(), pytest.raises((AssertionError, ValueError, KeyError)):
        test()
