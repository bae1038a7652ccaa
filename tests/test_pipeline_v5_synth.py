"""The synthetic generator's MQTT 5.0 mode (``--mqtt5 P``): a capture mixing 3.1.1 and 5.0
connections, with properties and Topic Aliases and what a capture of real TCP shows,
decoded by tshark as the generator counted it, and checked by ``pubproof check`` (both
engines) with exactly the injected faults' findings (on the 3.1.1 connections) and none on
the 5.0 ones, every alias-only PUBLISH's topic resolved."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from support.builds import pure_only
from support.pipeline_builder import read_tables
from support.tshark_decode import fields, preferences, split

from pubproof.pipeline import describe as D
from pubproof.pipeline.run import Job, check
from pubproof.pipeline.synth import SynthConfig, generate
from pubproof.pipeline.synth.check import compare_packets, compare_violations
from pubproof.pipeline.synth.faults import Fault
from pubproof.reference import fast50

MIXED = SynthConfig(
    seed=21, frames=8_000, connections=30, concurrent=10, split=0.25, split_headers=False,
    retransmit=0.03, reorder=0.02, ipv6=0.3, mqtt5=0.6,
    inject=tuple((f.value, 2) for f in Fault),
    payload_sizes=((0, 1.0), (30, 4.0), (400, 3.0), (3000, 1.0)),
)  # fmt: skip


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    path = tmp_path_factory.mktemp("synth5") / "mixed.pcap"
    return path, generate(MIXED, path)


@pytest.fixture(scope="module")
def tables(
    mixed: tuple[Path, dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, list[dict[str, Any]]]:
    out = tmp_path_factory.mktemp("synth5-out")
    check(Job(paths=[str(mixed[0])], out=str(out), engine="python"))
    return read_tables(str(out))


def test_both_editions_are_there(mixed: tuple[Path, dict[str, Any]]) -> None:
    _, expected = mixed
    by_edition = expected["connections_by_edition"]
    assert by_edition["5.0"] >= 5 and by_edition["3.1.1"] >= len(Fault) * 2


def test_tshark_decodes_what_the_generator_counted(mixed: tuple[Path, dict[str, Any]]) -> None:
    path, expected = mixed
    rows = fields(path, ["mqtt.msgtype", "mqtt.ver"], options=preferences())
    names = {1: "CONNECT", 2: "CONNACK", 3: "PUBLISH", 4: "PUBACK", 5: "PUBREC", 6: "PUBREL",
             7: "PUBCOMP", 8: "SUBSCRIBE", 9: "SUBACK", 12: "PINGREQ", 13: "PINGRESP",
             14: "DISCONNECT"}  # fmt: skip
    found = Counter(names[int(t)] for r in rows for t in split(r[0]))
    assert dict(found) == expected["packets"]
    levels = Counter(v for r in rows for v in split(r[1]))
    assert levels == {"4": expected["connections_by_edition"]["3.1.1"],
                      "5": expected["connections_by_edition"]["5.0"]}  # fmt: skip


def test_a_section_is_shown_once_and_as_itself(
    tables: dict[str, list[dict[str, Any]]],
) -> None:
    """What the pipeline showed of a property section is kept with the codec's memory of
    it (``Section.shown``): after a check every kept one is the section's own JSON and
    dict, and the ``properties`` column holds those texts."""
    shown = [
        section
        for memory in (*fast50._PUBLISH_SECTIONS, *fast50._ACK_SECTIONS)
        for section in memory.values()
        if section.shown is not None
    ]
    assert len(shown) > 20
    for section in shown:
        assert section.shown == D.show_properties(section.properties)
    # the memories are shared by the process (other tests' sections are kept too)
    texts = {r["properties"] for r in tables["packets"] if r["edition"] == "5.0"}
    assert len(texts & {section.shown[0] for section in shown if section.shown}) > 20


def test_check_finds_the_faults_and_nothing_on_5_0(
    mixed: tuple[Path, dict[str, Any]], tables: dict[str, list[dict[str, Any]]]
) -> None:
    _, expected = mixed
    assert compare_packets(expected, [r["type"] for r in tables["packets"]]) == []
    assert compare_violations(expected, tables["violations"]).problems == []
    editions = {r["connection"]: r["edition"] for r in tables["connections"]}
    assert Counter(editions.values()) == expected["connections_by_edition"]
    assert not [v for v in tables["violations"] if editions[v["connection"]] == "5.0"]
    publishes = [r for r in tables["packets"] if r["type"] == "PUBLISH" and r["edition"] == "5.0"]
    aliased = [r for r in publishes if r["topic_alias"] is not None]
    assert len(aliased) > len(publishes) // 2
    assert all(r["topic"] for r in publishes)  # every alias resolved
    assert all(json.loads(r["properties"]) is not None for r in publishes)


@pytest.mark.heavy  # starts Spark: left out of the quick loop
def test_both_engines_write_the_same_tables(
    mixed: tuple[Path, dict[str, Any]],
    tables: dict[str, list[dict[str, Any]]],
    tmp_path: Path,
) -> None:
    check(Job(paths=[str(mixed[0])], out=str(tmp_path / "spark"), engine="spark"))
    spark = read_tables(str(tmp_path / "spark"))
    for name in ("packets", "violations", "connections"):
        assert spark[name] == tables[name], name


@pure_only
@pytest.mark.parametrize(("seed", "share"), [(5, 1.0), (6, 0.5)])
def test_the_fast_path_writes_the_general_paths_rows(
    tmp_path: Path, seed: int, share: float
) -> None:
    """``Connection.FAST`` on 5.0 traffic: the shorter way (the codec straight into rows,
    the alias resolved and the properties read inline) writes what the general way
    (:func:`pubproof.pipeline.describe.describe`) writes, faults and all."""
    from support.fast_path import both_paths, keyed_capture

    faults = tuple((f.value, 1) for f in Fault) if share < 1 else ()
    config = SynthConfig(seed=seed, frames=4000, connections=20, concurrent=6, mqtt5=share,
                         split=0.5, retransmit=0.05, reorder=0.05, inject=faults)  # fmt: skip
    generate(config, tmp_path / "s.pcap")
    rows = both_paths(keyed_capture(tmp_path / "s.pcap"))
    editions = Counter(row[16] for row in rows["packets"])
    assert editions["5.0"] > 500
    assert (editions["3.1.1"] > 0) == (share < 1)
    assert bool(rows["violations"]) == (share < 1)  # the faults, on 3.1.1 connections
