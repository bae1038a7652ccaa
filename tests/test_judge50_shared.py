"""The capture pipeline's BothEnds (:mod:`pubproof.pipeline.fast.ends`) in MQTT 5.0
resolves each PUBLISH once, through the Topic Alias map its two judges share for the
direction, and hands each acknowledgement and PUBREL to the judges'
per-kind methods without their dispatch: the same findings, topics, offences and judge
states as two LinkJudge50 fed apart, each resolving through its own map (``peer_sent``
and ``judged_sent``, the probe's way). Random streams of faulty traffic: aliases out of
bounds and unknown, QoS above Maximum QoS, RETAIN without Retain Available, Receive
Maximum exceeded, error Reason Codes, reconnections with and without a session; and each
mutant of the shared path fails them."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import pytest
from support.builds import pure_only
from support.streams import C2S, Packet, state, stream

from pubproof.judge.findings import Finding
from pubproof.model.editions import Edition
from pubproof.pipeline.fast import ends
from pubproof.pipeline.fast.ends import BothEnds
from pubproof.pipeline.fast.link50 import LinkJudge50


def _apart(
    server: LinkJudge50, client: LinkJudge50, direction: str, fields: Mapping[str, Any]
) -> tuple[list[Finding], LinkJudge50]:
    """The two judges fed one packet apart, each resolving a PUBLISH itself."""
    kind = fields["type"]
    found: list[Finding] = []
    if kind in ends.JUDGED:
        sender, receiver = (client, server) if direction == C2S else (server, client)
        receiver.peer_sent(kind, fields)
        sender.judged_sent(kind, fields, found)
        return found, sender
    return found, server


def same_as_apart(packets: list[Packet]) -> None:
    both = BothEnds(edition=Edition.V50)
    server = LinkJudge50("server", "server", server=True)
    client = LinkJudge50("client", "client", server=False)
    for i, (direction, fields) in enumerate(packets):
        found = both.feed(direction, fields)
        expected, sender = _apart(server, client, direction, fields)
        assert found == expected, (i, fields)
        if fields["type"] in ends.JUDGED:
            assert (both.topic, both.offence) == (sender.topic, sender.offence), (i, fields)
        assert state(both.of_server) == state(server), (i, fields)
        assert state(both.of_client) == state(client), (i, fields)


SEEDS = range(300)


def test_both_ends_equal_two_judges_fed_apart() -> None:
    findings = offences = 0
    for seed in SEEDS:
        same_as_apart(stream(seed))
        both = BothEnds(edition=Edition.V50)
        for direction, fields in stream(seed):
            findings += len(both.feed(direction, fields))
            offences += both.offence is not None
    assert findings > 1000 and offences > 500  # the streams are faulty enough to tell


def test_the_judges_share_each_directions_map() -> None:
    both = BothEnds(edition=Edition.V50)
    server, client = both.of_server, both.of_client
    assert isinstance(server, LinkJudge50) and isinstance(client, LinkJudge50)
    assert client.judged_aliases is server.peer_aliases  # c2s
    assert client.peer_aliases is server.judged_aliases  # s2c
    assert server.peer_aliases is not server.judged_aliases


# -- mutants of the shared path ---------------------------------------------------------------


@contextmanager
def maps_not_shared() -> Iterator[None]:
    edition: property = BothEnds.__dict__["edition"]
    setter = edition.fset
    assert setter is not None and edition.fget is not None

    def unshared(self: BothEnds, value: Edition) -> None:
        setter(self, value)
        if isinstance(self.of_client, LinkJudge50):
            self.of_client.judged_aliases = type(self.of_client.judged_aliases)()
            self.of_client.peer_aliases = type(self.of_client.peer_aliases)()

    with patched(BothEnds, "edition", property(edition.fget, unshared)):
        yield


@contextmanager
def resolved_by_the_receiver() -> Iterator[None]:
    # the receiver's judge resolving as the sender (its own map of the other direction)
    original = LinkJudge50.resolve50

    def resolve50(self: LinkJudge50, fields: dict[str, Any], by_judged: bool) -> Any:
        twin = _TWINS.get(id(self))
        return original(twin if twin is not None else self, fields, by_judged)

    feed = BothEnds.feed

    def feeding(self: BothEnds, direction: str, fields: Mapping[str, Any]) -> list[Finding]:
        _TWINS[id(self.of_client)], _TWINS[id(self.of_server)] = self.of_server, self.of_client
        return feed(self, direction, fields)

    with patched(LinkJudge50, "resolve50", resolve50), patched(BothEnds, "feed", feeding):
        yield
    _TWINS.clear()


_TWINS: dict[int, Any] = {}  # a judge of BothEnds -> the other


def receiver_offence_kept(kinds: frozenset[str]) -> Callable[[], Any]:
    """The shared path does not clear the receiver's offence of an earlier packet when it
    is handed one of ``kinds``."""

    @contextmanager
    def mutant() -> Iterator[None]:
        feed = BothEnds.feed

        def feeding(self: BothEnds, direction: str, fields: Mapping[str, Any]) -> list[Finding]:
            receiver = self.of_server if direction == C2S else self.of_client
            assert isinstance(receiver, LinkJudge50)
            kept = receiver.offence
            found = feed(self, direction, fields)
            if fields["type"] in kinds and receiver.offence is None:
                receiver.offence = kept
            return found

        with patched(BothEnds, "feed", feeding):
            yield

    return mutant


@contextmanager
def patched(owner: Any, name: str, value: object) -> Iterator[None]:
    saved = owner.__dict__[name]
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, saved)


MUTANTS: dict[str, Callable[[], Any]] = {
    "each judge its own map, one resolution": maps_not_shared,
    "the receiver's judge resolves as the sender": resolved_by_the_receiver,
    "the receiver's offence not cleared by a PUBLISH": receiver_offence_kept(
        frozenset({"PUBLISH"})
    ),
    "the receiver's offence not cleared by an acknowledgement or PUBREL": receiver_offence_kept(
        frozenset({"PUBACK", "PUBREC", "PUBREL", "PUBCOMP"})
    ),
}


#: the mutants that replace a method compiled code calls directly (BothEnds.edition's
#: setter, LinkJudge50.resolve50): they run in the pure pass
PATCH_COMPILED_CODE = {
    "each judge its own map, one resolution",
    "the receiver's judge resolves as the sender",
}


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pure_only) if n in PATCH_COMPILED_CODE else n for n in sorted(MUTANTS)],
)
def test_each_mutant_of_the_shared_path_is_caught(name: str) -> None:
    with MUTANTS[name](), pytest.raises(AssertionError):
        for seed in SEEDS:
            same_as_apart(stream(seed))
