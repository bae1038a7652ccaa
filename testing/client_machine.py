"""Exploring a client library: the server's moves as a Hypothesis state machine.

Rules / theory of operation
---------------------------
:func:`client_machine_class` is :func:`pubproof.testing.machine.machine_class` for a
client library (:mod:`.client_world`): the initialize rule starts the driver with a plan
(a clean session or not, one subscription, the messages the application publishes at
once: a CONNECT move), and each rule is one move of the server (publish to the client,
re-send, withhold and acknowledge, drop the connection, an unused packet identifier, one
invalid packet per example, wait). What is enabled is :class:`ServerPlan`'s to say, from
the moves alone (the driver reconnects whenever the server drops it: the client is always
there to move on); a failure raises a class of its own per rule, so shrinking keeps it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from pubproof.model.editions import Edition
from pubproof.probe.evidence import Entry
from pubproof.testing.client_world import ClientExample, ClientWorld, judge_client_example
from pubproof.testing.machine import Run, failure_class
from pubproof.testing.moves import FILTERS, STRAY_KINDS, TOPICS, Move, MoveKind
from pubproof.testing.verdicts import Failure, Verdict

#: the invalid packets a server sends a client (the broker's own are the client's moves)
CLIENT_INVALID = ("publish-qos3", "packet-id-zero", "topic-wildcard", "dup-qos0",
                  "puback-flags", "pubrel-flags")  # fmt: skip


@dataclass(slots=True)
class ServerPlan:
    """The server's side of a client example, as the moves so far leave it."""

    started: bool = False
    withholding: bool = False
    unacknowledged: int = 0  # QoS 1 and 2 messages published while withholding
    invalid_made: bool = False

    def enabled(self, kind: MoveKind) -> bool:
        """Whether the server can make a move of ``kind`` now."""
        if kind is MoveKind.CONNECT:
            return not self.started
        if not self.started:
            return False
        if kind is MoveKind.RESEND:
            return self.withholding and self.unacknowledged > 0
        if kind is MoveKind.WITHHOLD:
            return not self.withholding
        if kind is MoveKind.ACKNOWLEDGE:
            return self.withholding
        if kind is MoveKind.INVALID:
            return not self.invalid_made
        return kind in _SERVER_MOVES

    def apply(self, move: Move) -> None:
        """The state after ``move`` (``ValueError`` if it is not enabled)."""
        if not self.enabled(move.kind):
            raise ValueError(f"not enabled now: {move.describe()}")
        kind = move.kind
        if kind is MoveKind.CONNECT:
            self.started = True
        elif kind is MoveKind.WITHHOLD:
            self.withholding = True
        elif kind in (MoveKind.ACKNOWLEDGE, MoveKind.DROP, MoveKind.INVALID):
            self.withholding, self.unacknowledged = False, 0
            self.invalid_made = self.invalid_made or kind is MoveKind.INVALID
        elif kind is MoveKind.PUBLISH and move.qos and self.withholding:
            self.unacknowledged += 1


_SERVER_MOVES = frozenset({MoveKind.PUBLISH, MoveKind.DROP, MoveKind.STRAY, MoveKind.WAIT})


@dataclass(slots=True, kw_only=True)
class ClientExploration(Run):
    """A run against a client library, through its driver (``argv``)."""

    argv: tuple[str, ...]

    def world(self) -> ClientWorld:
        self.examples += 1
        example = ClientExample(
            argv=self.argv, edition=self.edition, readings=self.readings, run_id=self.run_id,
            number=self.examples,
        )  # fmt: skip
        return ClientWorld(example)

    def verdict(self, entries: list[Entry], *, final: bool) -> Verdict:
        return judge_client_example(entries, self.edition, self.readings, final=final)

    def feasible(self, moves: Sequence[Move]) -> bool:
        plan = ServerPlan()
        try:
            for move in moves:
                plan.apply(move)
        except ValueError:
            return False
        return True


def client_machine_class(run: ClientExploration) -> type[RuleBasedStateMachine]:
    """The state machine of ``run``'s examples."""

    class ExploreClient(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.plan = ServerPlan()
            self.world: ClientWorld | None = None if run.idle() else run.world()
            self.invalid_ok = False
            self.failure: Failure | None = None
            self.judged_at = 0

        def move(self, move: Move) -> None:
            self.plan.apply(move)
            world = self.world
            if world is None or self.failure is not None:
                return
            world.make(move)
            run.moves += 1
            seen = len(world.entries)
            if run.each_move and seen > self.judged_at:
                self.judged_at = seen
                self.check(final=False)

        def check(self, *, final: bool) -> None:
            world = self.world
            assert world is not None
            entries = world.end() if final else world.entries
            verdict = run.judge(world, entries, final=final)
            failure = verdict.first(skip=tuple(run.known))
            if failure is None:
                return
            if not final:
                entries = world.end()
                run.judge(world, entries, final=True)
            self.failure = failure
            run.failed(world, entries, failure)

        @initialize(
            gate=st.integers(0, 99), clean=st.booleans(), topic=st.sampled_from(FILTERS),
            qos=st.integers(0, 2), published=st.lists(st.integers(0, 2), max_size=2),
        )  # fmt: skip
        def begin(self, gate: int, clean: bool, topic: str, qos: int,
                  published: list[int]) -> None:  # fmt: skip
            """The driver starts: a clean session or not, one subscription, and the
            messages (their QoS) its application publishes at once."""
            self.invalid_ok = gate < run.invalid_percent
            what = "".join(str(q) for q in published)
            self.move(Move(kind=MoveKind.CONNECT, clean=clean, topic=topic, qos=qos, what=what))

        @precondition(lambda self: self.plan.enabled(MoveKind.PUBLISH))
        @rule(topic=st.sampled_from(TOPICS), qos=st.integers(0, 2), retain=st.booleans())
        def publish(self, topic: str, qos: int, retain: bool) -> None:
            self.move(Move(kind=MoveKind.PUBLISH, topic=topic, qos=qos, retain=retain))

        @precondition(lambda self: self.plan.enabled(MoveKind.RESEND))
        @rule()
        def resend(self) -> None:
            self.move(Move(kind=MoveKind.RESEND))

        @precondition(lambda self: self.plan.enabled(MoveKind.WITHHOLD))
        @rule()
        def withhold(self) -> None:
            self.move(Move(kind=MoveKind.WITHHOLD))

        @precondition(lambda self: self.plan.enabled(MoveKind.ACKNOWLEDGE))
        @rule()
        def acknowledge(self) -> None:
            self.move(Move(kind=MoveKind.ACKNOWLEDGE))

        @precondition(lambda self: self.plan.enabled(MoveKind.DROP))
        @rule()
        def drop(self) -> None:
            self.move(Move(kind=MoveKind.DROP))

        @precondition(lambda self: self.plan.enabled(MoveKind.STRAY))
        @rule(what=st.sampled_from(STRAY_KINDS))
        def stray(self, what: str) -> None:
            self.move(Move(kind=MoveKind.STRAY, what=what))

        @precondition(lambda self: self.invalid_ok and self.plan.enabled(MoveKind.INVALID))
        @rule(what=st.sampled_from(CLIENT_INVALID))
        def invalid(self, what: str) -> None:
            self.move(Move(kind=MoveKind.INVALID, what=what))

        @precondition(lambda self: self.plan.enabled(MoveKind.WAIT))
        @rule()
        def wait(self) -> None:
            self.move(Move(kind=MoveKind.WAIT, seconds=0.05))

        def teardown(self) -> None:
            if self.world is None:
                return
            if self.failure is None:
                self.check(final=True)
            self.world.end()
            if self.failure is not None:
                raise failure_class(self.failure.id)(f"{self.failure.id}: {self.failure.message}")

    return ExploreClient


def client_run(argv: Sequence[str], edition: Edition, readings: Mapping[str, str],
               run_id: str, **options: Any) -> ClientExploration:  # fmt: skip
    """A run against the client library that ``argv`` drives."""
    return ClientExploration(argv=tuple(argv), edition=edition, readings=readings,
                             run_id=run_id, **options)  # fmt: skip
