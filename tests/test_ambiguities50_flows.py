"""The 5.0 flow entries of the ambiguity catalog: their traces, replayed by the model's 5.0
sessions, do what the catalog says, and the check catches a trace that does not."""

from __future__ import annotations

import re
from dataclasses import replace
from types import MappingProxyType

from pubproof.model.ambiguities import (
    AMBIGUITIES,
    BY_ID,
    Ambiguity,
    example_problems,
    trace_outcome,
    trace_problems,
)
from pubproof.model.rules import RULES
from pubproof.proofs.catalog import load as load_theorems

FLOW_ENTRIES = (
    "v5-resend-with-topic-alias",
    "v5-pubrel-resend-quota",
    "v5-puback-error-then-resend",
)
NEW_50 = (*FLOW_ENTRIES, "v5-retained-message-expiry", "v5-disconnect-code-several-faults")


def _replaced(new: Ambiguity) -> tuple[Ambiguity, ...]:
    return tuple(new if new.id == a.id else a for a in AMBIGUITIES)


def test_the_new_5_0_entries_are_in_the_catalog_and_hold() -> None:
    assert set(NEW_50) <= set(BY_ID)
    assert trace_problems(AMBIGUITIES) == []
    assert example_problems(AMBIGUITIES) == []
    # a wire rule, a flow rule or (since the distribution model) a distribution rule
    other_keys = {r.key for r in (*RULES.flows(), *RULES.distributions())}
    for entry_id in NEW_50:
        entry = BY_ID[entry_id]
        assert all(k in RULES or k in other_keys for k in entry.rules), entry_id
        assert entry.examples or entry.traces, entry_id


def test_each_flow_entry_has_two_traces_whose_outcomes_part_the_readings() -> None:
    """The model's reading and the other one, each a trace: they end differently (one
    delivers or waits where the other closes the connection or re-sends nothing)."""
    for entry_id in FLOW_ENTRIES:
        entry = BY_ID[entry_id]
        assert len(entry.traces) == 2 and len(entry.readings) >= 2, entry_id
        first, second = (trace_outcome(t) for t in entry.traces)
        assert first != second, entry_id
        for trace in entry.traces:
            assert set(trace.expect) <= set(first) and trace.expect, entry_id


def test_the_other_reading_of_a_resent_alias_is_a_protocol_error() -> None:
    entry = BY_ID["v5-resend-with-topic-alias"]
    model, other = (trace_outcome(t) for t in entry.traces)
    assert model["disconnects"] == ()
    assert other["disconnects"] == ("0x82 PP50-3.3.2-topic-alias-unknown",)
    # the model's sender re-sends the first PUBLISH of a topic with its name and an alias
    assert "PUBLISH id=1 qos=1 dup=1 topic='t' alias=1" in model["sent"]


def test_a_resent_pubrel_takes_the_quota_and_the_other_reading_exceeds_receive_maximum() -> None:
    entry = BY_ID["v5-pubrel-resend-quota"]
    model, other = (trace_outcome(t) for t in entry.traces)
    assert model["waits"] == ("MQTT-4.9.0-2",) and model["sent"].count("PUBREL id=1 rc=0x00") == 2
    assert other["disconnects"] == ("0x93 MQTT-3.3.4-7",)


def test_a_refused_message_resent_after_a_lost_puback_is_delivered() -> None:
    entry = BY_ID["v5-puback-error-then-resend"]
    lost, arrived = (trace_outcome(t) for t in entry.traces)
    assert lost["delivered"] == ("t 01",) and "PUBACK id=1 rc=0x87" in lost["sent"]
    assert arrived["delivered"] == () and len(arrived["sent"]) == 2  # nothing re-sent


def test_a_trace_with_a_wrong_outcome_is_caught() -> None:
    entry = BY_ID["v5-pubrel-resend-quota"]
    trace = entry.traces[1]
    wrong = replace(trace, expect=MappingProxyType({"disconnects": ("0x82 MQTT-3.3.4-7",)}))
    found = trace_problems(_replaced(replace(entry, traces=(entry.traces[0], wrong))))
    assert len(found) == 1 and "disconnects" in found[0] and "0x93" in found[0]
    # a limit changed: at Receive Maximum 2 the new message does not wait
    looser = replace(entry.traces[0], receive_maximum=2)
    found = trace_problems(_replaced(replace(entry, traces=(looser, entry.traces[1]))))
    assert any("waits" in p for p in found)
    # an expectation the outcome does not have
    stray = replace(trace, expect=MappingProxyType({"bounced": ()}))
    found = trace_problems(_replaced(replace(entry, traces=(stray,))))
    assert found and "bounced" in found[0]


def test_the_theorems_the_entries_name_exist() -> None:
    """The 5.0 flow entries name protocol theorems in words (their traces are their
    witness): each named one is registered, and a refuted one is expected refuted."""
    theorems = {t.id: t for t in load_theorems()}
    named = 0
    for entry_id in NEW_50:
        entry = BY_ID[entry_id]
        for theorem_id in re.findall(r"proto\.v5\.[\w.-]*\w", entry.model):
            named += 1
            assert theorem_id in theorems, (entry_id, theorem_id)
            if ".refute." in theorem_id:
                assert theorems[theorem_id].expected == "refuted", theorem_id
        if entry.witness is not None:
            assert theorems[entry.witness].expected == "refuted", entry_id
    assert named >= 2
