"""The link judges take a packet's fields as any Mapping, not only a dict: the compiled
judges read a dict's keys directly (``pipeline.fast.layout.as_dict`` at their entry points),
so a read-only mapping (``types.MappingProxyType``) must give the findings, topics,
offences and judge states a dict gives, packet for packet, in 3.x and in 5.0 (with the 5.0
properties read-only too), for the readable judges and their compiled twins. In the
compiled build an entry point that took the mapping for a dict unchecked would fail
here."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from support.streams import C2S, SEQUENCES, state, stream

from pubproof.judge import ends, link50
from pubproof.judge.findings import Finding
from pubproof.model.editions import Edition
from pubproof.pipeline.fast import ends as fast_ends
from pubproof.pipeline.fast import link50 as fast_link50
from pubproof.pipeline.fast.layout import as_dict

#: the readable judges and their compiled twins: (BothEnds, LinkJudge50)
JUDGES: dict[str, tuple[Any, Any]] = {
    "readable": (ends.BothEnds, link50.LinkJudge50),
    "fast": (fast_ends.BothEnds, fast_link50.LinkJudge50),
}


def _read_only(fields: dict[str, Any]) -> Mapping[str, Any]:
    properties = fields.get("properties")
    if isinstance(properties, dict):
        fields = {**fields, "properties": MappingProxyType(properties)}
    return MappingProxyType(fields)


def _key(findings: list[Finding]) -> list[tuple[str, tuple[str, ...], str]]:
    return [(f.verdict, f.rules, f.message) for f in findings]


def test_as_dict_hands_back_a_dict_itself_and_copies_any_other_mapping() -> None:
    fields = {"type": "PUBACK", "packet_id": 1}
    assert as_dict(fields) is fields
    copied = as_dict(MappingProxyType(fields))
    assert type(copied) is dict and copied == fields


@pytest.mark.parametrize("judges", sorted(JUDGES))
@settings(max_examples=300, deadline=None)
@given(packets=SEQUENCES)
def test_3x_read_only_fields_judged_as_a_dict(
    judges: str, packets: list[tuple[str, dict[str, Any]]]
) -> None:
    both_ends = JUDGES[judges][0]
    with_dicts, read_only = both_ends(v311=True), both_ends(v311=True)
    for direction, fields in packets:
        expected = _key(with_dicts.feed(direction, fields))
        assert _key(read_only.feed(direction, _read_only(fields))) == expected, fields


@pytest.mark.parametrize("judges", sorted(JUDGES))
@pytest.mark.parametrize("seed", range(40))
def test_5_0_read_only_fields_judged_as_a_dict(judges: str, seed: int) -> None:
    packets = stream(seed)
    both_ends = JUDGES[judges][0]
    with_dicts, read_only = both_ends(edition=Edition.V50), both_ends(edition=Edition.V50)
    found = 0
    for i, (direction, fields) in enumerate(packets):
        expected = _key(with_dicts.feed(direction, fields))
        assert _key(read_only.feed(direction, _read_only(fields))) == expected, (i, fields)
        assert (read_only.topic, read_only.offence) == (with_dicts.topic, with_dicts.offence)
        assert state(read_only.of_server) == state(with_dicts.of_server), (i, fields)
        assert state(read_only.of_client) == state(with_dicts.of_client), (i, fields)
        found += len(expected)
    assert found or seed % 2  # the streams are faulty: most find something


@pytest.mark.parametrize("judges", sorted(JUDGES))
def test_5_0_entry_points_of_one_judge_take_read_only_fields(judges: str) -> None:
    """LinkJudge50.peer_sent and judged_sent (the probe's way), not only BothEnds."""
    link_judge50 = JUDGES[judges][1]
    runs = []
    for wrap in (dict, _read_only):
        server = link_judge50("server", "server", server=True)
        client = link_judge50("client", "client", server=False)
        found: list[Finding] = []
        for direction, fields in stream(3):
            kind = fields["type"]
            sender, receiver = (client, server) if direction == C2S else (server, client)
            receiver.peer_sent(kind, wrap(fields))
            sender.judged_sent(kind, wrap(fields), found)
        runs.append((_key(found), state(server), state(client)))
    assert runs[0][0]  # the stream is faulty: the judges find something
    assert runs[1] == runs[0]
