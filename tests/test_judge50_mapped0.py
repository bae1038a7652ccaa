"""``BothEnds.mapped0`` (the capture pipeline's, :mod:`pubproof.pipeline.fast.ends`): the
QoS 0 PUBLISH the capture pipeline leaves unjudged (a topic name and a Topic Alias its
receiver's map holds for it already) changes nothing in the judges and makes them find
nothing. Two BothEnds on random 5.0 traffic (aliases mapped and re-mapped, then
``streams.stream``'s faults), one fed every packet, the other not those ``mapped0``
names: the same findings on every packet fed, none on each one left out, and the same
judge states throughout; each mutant of ``mapped0`` fails that."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from support.streams import Packet, state, stream

from pubproof.model.editions import Edition
from pubproof.pipeline.fast.ends import BothEnds

SEEDS = range(300)


def _alias(fields: dict[str, Any]) -> int | None:
    alias = (fields.get("properties") or {}).get("topic_alias")
    return alias if type(alias) is int else None


def _declared(seed: int) -> list[Packet]:
    """A CONNECT and a CONNACK that allow Topic Aliases (the server's Retain Available
    either way), PUBLISH packets that map and re-map a few aliases (some beyond the
    maximum) and their acknowledgements, then the shared tests' random faulty traffic."""
    r = random.Random(seed)
    connect = {"type": "CONNECT", "clean_start": True, "properties": {"topic_alias_maximum": 3}}
    connack = {
        "type": "CONNACK", "session_present": False, "reason_code": 0,
        "properties": {"topic_alias_maximum": 3, "retain_available": seed % 2},
    }  # fmt: skip
    packets: list[Packet] = [("c2s", connect), ("s2c", connack)]
    for _ in range(80):
        direction = r.choice(["c2s", "s2c"])
        qos = r.choice([0, 0, 0, 1, 2])
        packet_id = r.randint(1, 3) if qos else None
        packets.append((direction, {
            "type": "PUBLISH", "dup": False, "qos": qos, "retain": r.random() < 0.2,
            "topic": r.choice(["a", "b", ""]), "packet_id": packet_id, "payload_hex": "00",
            "properties": {"topic_alias": r.randint(1, 4)} if r.random() < 0.8 else {},
        }))  # fmt: skip
        if qos and r.random() < 0.7:
            back = "s2c" if direction == "c2s" else "c2s"
            kind = "PUBACK" if qos == 1 else "PUBREC"
            packets.append((back, {"type": kind, "packet_id": packet_id, "reason_code": 0}))
    return packets + stream(seed)


def _left_out(packets: list[Packet]) -> int:
    """Feeds ``packets`` to both; returns how many were left out (fails on a difference)."""
    every, some = BothEnds(edition=Edition.V50), BothEnds(edition=Edition.V50)
    left_out = 0
    for i, (direction, fields) in enumerate(packets):
        alias = _alias(fields)
        found = every.feed(direction, fields)
        if (
            fields["type"] == "PUBLISH"
            and fields["qos"] == 0
            and fields["topic"]
            and alias is not None
            and some.mapped0(direction, fields["topic"], alias, fields["retain"])
        ):
            left_out += 1
            assert found == [], (i, fields)
        else:
            assert some.feed(direction, fields) == found, (i, fields)
        # the judges' states but their topic and offence (the last packet's, read only
        # right after a packet fed)
        assert state(some.of_server)[:-2] == state(every.of_server)[:-2], (i, fields)
        assert state(some.of_client)[:-2] == state(every.of_client)[:-2], (i, fields)
    return left_out


def test_what_mapped0_leaves_out_changes_nothing() -> None:
    assert sum(_left_out(_declared(seed)) for seed in SEEDS) > 500


def _alias_only(self: BothEnds, direction: str, topic: str, alias: int, retain: bool) -> bool:
    return alias in self.sender50(direction).judged_aliases.mapping


def _no_maximum(self: BothEnds, direction: str, topic: str, alias: int, retain: bool) -> bool:
    return self.sender50(direction).judged_aliases.mapping.get(alias) == topic


def _no_retain(self: BothEnds, direction: str, topic: str, alias: int, retain: bool) -> bool:
    return _MAPPED0(self, direction, topic, alias, False)


_MAPPED0 = BothEnds.mapped0
MUTANTS: dict[str, Callable[..., bool]] = {
    "the topic not compared": _alias_only,
    "the alias maximum not read": _no_maximum,
    "RETAIN not read": _no_retain,
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_each_mutant_of_mapped0_is_caught(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setattr(BothEnds, "mapped0", MUTANTS[name])
    with pytest.raises(AssertionError):
        for seed in SEEDS:
            _left_out(_declared(seed))
