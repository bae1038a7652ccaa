"""``pubproof explore``, ``explore-client`` and ``replay`` against real implementations on
loopback (heavy: brokers and a client library, each started as the matrix starts them).

The committed reproducers (``docs/matrix/reproducers/``, what exploration found on aedes
and amqtt) must each still fail the same rule when replayed against a fresh broker of the
same name, and be at most 10 moves. A short exploration of mosquitto, of aedes and of one
client library (paho-mqtt) must run to its budget without an error of the explorer's own,
judge every packet, and close every connection; the aedes one must find a fault on its
own. No test pins what a broker fails beyond the committed reproducers: versions differ.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from brokers import BROKERS, Running, started

from pubproof.model.editions import Edition
from pubproof.probe.clients.shipped import SHIPPED
from pubproof.testing.reproducer import load, replay

from conftest import ROOT, load_benchmark

REPRODUCERS = ROOT / "docs" / "matrix" / "reproducers"
FOLDERS = sorted(p for p in REPRODUCERS.iterdir() if (p / "reproducer.json").is_file())
#: the most moves a committed reproducer may have (the issue's bound)
MOST_MOVES = 10
#: replays of a committed reproducer before it is said to fail no more: some faults hang on
#: the broker's own timing (aedes's PUBREL identifiers when two PUBRECs come at once, its
#: duplicates before PUBREL) and show in most replays on a broker that has run the others,
#: not all; one replay that fails the same rule shows the fault stands
ATTEMPTS = 3
#: a short exploration's budget, and the most its run may take past it (shrinking, polish)
BUDGET = 8.0
BOUND = 120.0


def _implementation(folder: Path) -> str:
    return folder.name.split("-", 1)[0]


class _Brokers(dict[str, Running]):
    """The brokers a test asks for, each started the first time (stopped with the stack)."""

    def __init__(self, stack: ExitStack) -> None:
        super().__init__()
        self._stack = stack

    def __missing__(self, name: str) -> Running:
        why = BROKERS[name].available()
        if why is not None:
            pytest.skip(why)
        broker = self[name] = self._stack.enter_context(started(name))
        return broker


@pytest.fixture(scope="module")
def brokers() -> Iterator[dict[str, Running]]:
    with ExitStack() as stack:
        yield _Brokers(stack)


def test_there_are_reproducers_of_both_faulty_brokers() -> None:
    assert {_implementation(p) for p in FOLDERS} >= {"aedes", "amqtt"}


@pytest.mark.parametrize("folder", FOLDERS, ids=[p.name for p in FOLDERS])
def test_a_committed_reproducer_still_fails(folder: Path, brokers: dict[str, Running]) -> None:
    data = load(folder)
    assert len(data["moves"]) <= MOST_MOVES
    assert data["implementation"].split()[0] == _implementation(folder)
    broker = brokers[_implementation(folder)]
    tries = []
    for _ in range(ATTEMPTS):
        done = replay(folder, "127.0.0.1", broker.port)
        tries.append((done.verdict.keys, done.script_says))
        if done.still_fails:
            break
    assert done.still_fails, (done.rule, tries)


def test_pubproof_replay_says_so_in_its_exit_status(brokers: dict[str, Running]) -> None:
    folder = next(p for p in FOLDERS if _implementation(p) == "amqtt")
    url = brokers["amqtt"].url
    done = subprocess.run(
        [sys.executable, "-m", "pubproof", "replay", str(folder), "--target", url, "--json"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["still_fails"] is True and report["rule"] == load(folder)["rule"]


def _explore(*args: str) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "pubproof", *args, "--budget", str(BUDGET), "--seed", "1",
         "--json", "--quiet"],
        capture_output=True, text=True, timeout=BOUND, check=False,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-2000:]
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["errors"] == [], report["errors"]
    assert report["examples"] >= 1 and report["packets"] >= 1
    assert (done.returncode == 1) == bool(report["failures"])
    return done.returncode, report


def test_a_short_exploration_of_mosquitto(brokers: dict[str, Running]) -> None:
    _, report = _explore("explore", brokers["mosquitto"].url)
    reached = [e for e in report["coverage"]["entries"] if e["broker"]]
    # connects, QoS 0/1/2 publishes answered, acknowledgements: a few seconds reach these
    assert len(reached) >= 5, reached
    for failure in report["failures"]:
        assert failure["moves"] and failure["key"]


def test_a_short_exploration_of_aedes_finds_a_fault(
    brokers: dict[str, Running], tmp_path: Path
) -> None:
    status, report = _explore("explore", brokers["aedes"].url, "--out", str(tmp_path))
    assert status == 1 and report["failures"]
    for failure in report["failures"]:
        assert Path(failure["reproducer"], "replay.py").is_file()
        assert load(Path(failure["reproducer"]))["rule"] == failure["key"]


def test_invalid_moves_chosen_on_the_command_line_are_the_ones_drawn(
    brokers: dict[str, Running],
) -> None:
    """amqtt fails its other invalid moves first; with only the ill-formed topic name left to
    draw, a short run finds that one (the connection kept open, MQTT-1.5.3-1)."""
    status, report = _explore("explore", brokers["amqtt"].url, "--invalid", "90",
                              "--invalid-moves", "topic-ill-formed")  # fmt: skip
    assert status == 1
    invalid = {m["what"] for f in report["failures"] for m in f["moves"] if m["kind"] == "invalid"}
    assert invalid == {"topic-ill-formed"}, report["failures"]
    assert any("MQTT-1.5.3-1" in f["key"] for f in report["failures"])


def test_a_short_exploration_of_a_client_library() -> None:
    why = SHIPPED["paho-mqtt"].available()
    if why is not None:
        pytest.skip(why)
    _, report = _explore("explore-client", "--driver", "paho-mqtt")
    assert report["target"] == "driver paho-mqtt"


def test_a_reproducer_no_longer_fails_on_a_broker_without_the_fault(
    brokers: dict[str, Running],
) -> None:
    """amqtt keeps the connection open after a QoS 3 PUBLISH; mosquitto closes it, as the
    model says: the same reproducer against mosquitto no longer fails."""
    folder = next(p for p in FOLDERS if p.name.startswith("amqtt") and "3.3.1-4" in p.name)
    done = replay(folder, "127.0.0.1", brokers["mosquitto"].port)
    assert not done.still_fails, (done.verdict.keys, done.script_says)


def test_a_run_without_shrinking_counts_failures_by_rule(brokers: dict[str, Running]) -> None:
    """The benchmark's runs (``shrink=False``): aedes fails within a second, and the run
    counts each failing example by rule and goes on, keeping nothing to shrink."""
    bench = load_benchmark("bench_explore")
    run, outcome = bench.run_for(brokers["aedes"].url, Edition.V311, 5.0, 1, shrink=False,
                                 invalid=20)  # fmt: skip
    assert outcome.found == () and outcome.errors == ()
    assert run.failing and sum(run.failing.values()) <= outcome.examples
    assert outcome.seconds < 5.0 + 10.0  # the budget, and the last example's end
    assert 0 < run.judging < outcome.seconds


def test_an_empty_retained_publish_deletes_the_retained_message(
    brokers: dict[str, Running],
) -> None:
    """The PUBLISH move's empty payload: a zero-byte retained PUBLISH goes on the wire, and
    mosquitto, which deletes the retained message for it [MQTT-3.3.1-10], sends a new
    subscriber nothing; the judges agree (no failure)."""
    import dataclasses
    import secrets

    from pubproof.model.editions import resolve_readings
    from pubproof.probe.target import Target
    from pubproof.testing.machine import Exploration
    from pubproof.testing.moves import Move, MoveKind
    from pubproof.testing.world import Example

    base = Example(target=Target.parse(brokers["mosquitto"].url), edition=Edition.V311,
                   readings=resolve_readings(Edition.V311, {}), run_id=secrets.token_hex(3),
                   number=0)  # fmt: skip
    run = Exploration.of(base, budget=5.0, invalid_percent=0)
    publish = Move(kind=MoveKind.PUBLISH, client=0, topic="a", qos=1, retain=True)
    moves = [
        Move(kind=MoveKind.CONNECT, client=0),
        publish,
        dataclasses.replace(publish, empty=True),
        Move(kind=MoveKind.CONNECT, client=1),
        Move(kind=MoveKind.SUBSCRIBE, client=1, topic="a", qos=1),
    ]
    done = run.replay(moves)
    assert done is not None
    _, entries, verdict = done
    sent = [e for e in entries if e.get("type") == "PUBLISH" and e["dir"] == "to-broker"]
    assert [len(e["hex"]) for e in sent][1] < len(sent[0]["hex"])  # no payload at all
    assert bytes.fromhex(sent[1]["hex"]).endswith(b"/a\x00\x02")  # topic, identifier 2
    received = [e for e in entries if e.get("type") == "PUBLISH" and e["dir"] == "from-broker"]
    assert received == [] and verdict.first() is None, (received, verdict.keys)


#: the wrong answers a live example makes, and whether the client first lets its session
#: answer the QoS 2 copy (keeping the PUBREL back: the broker's flow awaits PUBCOMP)
WRONG_ANSWERS = [
    (Edition.V311, "AWAIT_PUBACK PUBREC", 1, False),
    (Edition.V311, "AWAIT_PUBCOMP PUBACK", 2, True),
    (Edition.V50, "AWAIT_PUBREC PUBREC_ERROR", 2, False),
    (Edition.V50, "AWAIT_PUBCOMP PUBCOMP_NOT_FOUND", 2, True),
]


@pytest.mark.parametrize(("edition", "what", "qos", "keep"), WRONG_ANSWERS)
def test_a_wrong_answer_reaches_its_entry_and_the_broker_is_not_charged_with_it(
    brokers: dict[str, Running], edition: Edition, what: str, qos: int, keep: bool
) -> None:
    """A subscriber holds back a copy and answers it wrongly (after its session answered
    the QoS 2 copy, when ``keep``): the broker's sender reaches the table's entry, and
    whatever mosquitto does (it closes after the wrong kind, the client's fault; it ends
    the flow after an error Reason Code) fails no rule."""
    from pubproof.probe.target import Target
    from pubproof.testing.answers import misanswers
    from pubproof.testing.coverage import Coverage
    from pubproof.testing.machine import Exploration
    from pubproof.testing.moves import Move, MoveKind
    from pubproof.testing.world import Example

    base = Example(target=Target.parse(brokers["mosquitto"].url), edition=edition,
                   readings={}, run_id="wrong", number=0, clients=2)  # fmt: skip
    run = Exploration.of(base)
    coverage = Coverage(edition)
    run.observers.append(coverage.observe)
    moves = [
        Move(kind=MoveKind.CONNECT, client=0), Move(kind=MoveKind.CONNECT, client=1),
        Move(kind=MoveKind.SUBSCRIBE, client=0, topic="a", qos=2),
        Move(kind=MoveKind.WITHHOLD, client=0),
        Move(kind=MoveKind.PUBLISH, client=1, topic="a", qos=qos),
        *([Move(kind=MoveKind.ACKNOWLEDGE, client=0, keep=True)] if keep else []),
        Move(kind=MoveKind.MISANSWER, client=0, what=what.split()[1]),
        Move(kind=MoveKind.ACKNOWLEDGE, client=0),
    ]  # fmt: skip
    done = run.replay(moves)
    assert done is not None
    _, entries, verdict = done
    skipped = [e["move"]["kind"] for e in entries if e.get("event") == "skipped"]
    assert "misanswer" not in skipped, "the copy was not held"
    assert verdict.failures == (), verdict.failures
    marked = [e["breaks"] for e in entries if e.get("breaks")]  # the client's own fault
    assert marked == ([list(misanswers(edition)[what].breaks)] if marked else [])
    assert bool(marked) is (misanswers(edition)[what].verdict != "defined")
    state, answer = what.split()
    reached = {(r.state, r.input) for r in coverage.table() if r.table == "sender" and r.broker}
    assert (state, answer) in reached


@pytest.mark.parametrize("edition", [Edition.V311, Edition.V50])
@pytest.mark.parametrize("clean", [False, True])
@pytest.mark.parametrize("keep", [False, True])
def test_a_new_connection_meets_the_flows_in_progress(
    brokers: dict[str, Running], edition: Edition, clean: bool, keep: bool
) -> None:
    """Both clients hold back their answers: the subscriber's copy of a QoS 2 message
    leaves the broker's sender awaiting PUBREC (or, when the subscriber's session answered
    it and the client kept holding back the PUBREL, awaiting PUBCOMP), the publisher's
    next QoS 2 message leaves the broker's receiver holding its identifier. Both
    connections are lost and both clients connect again, keeping their sessions or not:
    the broker meets RESUME or CLEAN at each of those states, and fails no rule. (A run
    reaches these entries only when its moves line up: this example shows they can be.)"""
    from pubproof.probe.target import Target
    from pubproof.testing.coverage import Coverage
    from pubproof.testing.machine import Exploration
    from pubproof.testing.moves import Move, MoveKind
    from pubproof.testing.world import Example

    base = Example(target=Target.parse(brokers["mosquitto"].url), edition=edition, readings={},
                   run_id="again", number=2 * int(clean) + int(keep), clients=2)  # fmt: skip
    run = Exploration.of(base)
    coverage = Coverage(edition)
    run.observers.append(coverage.observe)
    expiry = 60 if edition is Edition.V50 else 0
    moves = [
        Move(kind=MoveKind.CONNECT, client=0, clean=False, session_expiry=expiry),
        Move(kind=MoveKind.CONNECT, client=1, clean=False, session_expiry=expiry),
        Move(kind=MoveKind.SUBSCRIBE, client=0, topic="#", qos=2),
        Move(kind=MoveKind.WITHHOLD, client=0),
        Move(kind=MoveKind.PUBLISH, client=1, topic="a", qos=2),  # a copy for c0
        *([Move(kind=MoveKind.ACKNOWLEDGE, client=0, keep=True)] if keep else []),
        Move(kind=MoveKind.WITHHOLD, client=1),
        Move(kind=MoveKind.PUBLISH, client=1, topic="b", qos=2),  # its PUBREL held back
        Move(kind=MoveKind.DROP, client=0), Move(kind=MoveKind.DROP, client=1),
        Move(kind=MoveKind.CONNECT, client=0, clean=clean, session_expiry=expiry),
        Move(kind=MoveKind.CONNECT, client=1, clean=clean, session_expiry=expiry),
    ]  # fmt: skip
    done = run.replay(moves)
    assert done is not None
    _, _, verdict = done
    assert verdict.failures == (), verdict.failures
    event = "CLEAN" if clean else "RESUME"
    reached = {(r.table, r.state, r.input) for r in coverage.table() if r.broker}
    awaiting = "AWAIT_PUBCOMP" if keep else "AWAIT_PUBREC"
    assert {("sender", awaiting, event), ("receiver", "ID_HELD", event)} <= reached, reached


def test_a_client_ids_first_connect_is_not_listened_after(
    brokers: dict[str, Running], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client id's first CONNECT in an example finds no session, so the broker owes it
    nothing beyond the CONNACK and no one else anything: the world does not listen for
    the broker to fall quiet after it. A connection again (the session may be resumed,
    copies re-sent) and the moves that forward are listened after."""
    from pubproof.probe.target import Target
    from pubproof.testing.moves import Move, MoveKind
    from pubproof.testing.world import Example, World

    world = World(Example(target=Target.parse(brokers["mosquitto"].url), edition=Edition.V311,
                          readings={}, run_id="first", number=1, clients=2))  # fmt: skip
    settled: list[int] = []
    monkeypatch.setattr(world, "settle", lambda: settled.append(len(world.steps)))
    for move in (
        Move(kind=MoveKind.CONNECT, client=0), Move(kind=MoveKind.CONNECT, client=1),
        Move(kind=MoveKind.SUBSCRIBE, client=1, topic="a"),
        Move(kind=MoveKind.DISCONNECT, client=0), Move(kind=MoveKind.CONNECT, client=0),
    ):  # fmt: skip
        world.make(move)
    world.end()
    assert settled == [3, 5], settled
    assert [c.connack is not None for c in world.clients] == [True, True]


def test_a_stray_acknowledgement_of_the_wrong_kind_for_a_held_copy_is_the_clients_fault(
    brokers: dict[str, Running],
) -> None:
    """A client holding back a QoS 1 and a QoS 2 copy sends PUBCOMP for the first (STRAY,
    held): a wrong answer the table leaves undefined, so the packet carries the client's
    own rules it breaks. mosquitto closes the connection for it; neither the close nor the
    answers it then never gave are charged to it (the 10-minute run of 2026-11-29 reported
    them as MQTT-4.3.3-1 before)."""
    import secrets

    from pubproof.model.editions import resolve_readings
    from pubproof.probe.target import Target
    from pubproof.testing.machine import Exploration
    from pubproof.testing.moves import Move
    from pubproof.testing.world import Example

    base = Example(target=Target.parse(brokers["mosquitto"].url), edition=Edition.V311,
                   readings=resolve_readings(Edition.V311, {}), run_id=secrets.token_hex(3),
                   number=0)  # fmt: skip
    run = Exploration.of(base, budget=5.0, invalid_percent=0)
    moves = [Move.from_json(m) for m in MOVES_STRAY_HELD]
    done = run.replay(moves)
    assert done is not None
    _, entries, verdict = done
    (stray,) = [e for e in entries if e.get("type") == "PUBCOMP" and e["dir"] == "to-broker"]
    assert "MQTT-4.3.2-2" in stray.get("breaks", ())
    assert verdict.failures == (), verdict.keys


MOVES_STRAY_HELD = [
    {"kind": "connect", "client": 0},
    {"kind": "connect", "client": 3, "clean": False},
    {"kind": "subscribe", "client": 3, "topic": "#", "qos": 2},
    {"kind": "withhold", "client": 3},
    {"kind": "publish", "client": 0, "topic": "a", "qos": 1},
    {"kind": "publish", "client": 0, "topic": "a", "qos": 1},
    {"kind": "publish", "client": 0, "topic": "a", "qos": 2},
    {"kind": "stray", "client": 3, "what": "PUBCOMP", "held": True},
    {"kind": "acknowledge", "client": 3},
]
