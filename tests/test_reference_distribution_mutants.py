"""The stateful comparison of the distribution core bites: each mutant of the core is killed.

A mutant is a plausible bug made by one textual change to a module of the core, which is
then run as a module of its own and put in a core class (:func:`core_with`). The machine of
``test_reference_distribution_stateful.py``, in the settings the mutant concerns (an
edition, readings, server limits: an index into its ``CASES``), must find a difference
with the model for every mutant; the unmutated sources pass the same machine.
"""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import run_state_machine_as_test
from support.distribution_comparison import CASES, comparison_machine

from pubproof.reference import distribution_subscriptions as subs_module
from pubproof.reference import distribution_topics as topics_module
from pubproof.reference import retained_store as store_module
from pubproof.reference.distribution import DistributionCore
from pubproof.reference.distribution_citations import RetainedCitations
from pubproof.reference.distribution_subscribe import Subscribing

from conftest import ROOT

#: enough to kill every mutant (most die within a few examples); a kill needs no shrinking
QUICK = settings(
    max_examples=400,
    stateful_step_count=40,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    derandomize=True,  # the same programs on every run: a kill found once stays found
)
V31, V31_STRICT, V311, V311_OTHER, V311_LIMITS, V50, V50_OTHER, V50_LIMITS = range(8)

#: module -> {mutant: (text in the source, its replacement, the CASES it must die in)}
MUTANTS: dict[str, dict[str, tuple[str, str, tuple[int, ...]]]] = {
    "distribution": {
        "the QoS granted, not the lower of it and the published QoS": (
            "            qos = granted if granted < pub_qos else pub_qos",
            "            qos = granted",
            (V311, V50),
        ),
        "RETAIN kept on a live copy": (
            "                    pub_retain and grant.retain_as_published,",
            "                    pub_retain,",
            (V311, V50),
        ),
        "No Local ignored": (
            "            if grant.no_local and client_id == publisher:",
            "            if False:",
            (V50,),
        ),
        "the Message Expiry Interval sent as received": (
            "        return copy, copy.expiry_interval_at(self.now, self._rounding)",
            "        return copy, (copy.message.expires_at - copy.message.received_at) // 1000",
            (V50,),
        ),
        "QoS 0 queued for an offline 3.1 session": (
            '        self._queue_qos0 = resolved.get("queue-qos0") == "queue"',
            '        self._queue_qos0 = resolved.get("queue-qos0") != "drop"',
            (V31,),
        ),
        "QoS 0 for an offline session dropped, not kept as optional": (
            "        self._qos0_optional = edition is not V31 and not self._queue_qos0",
            "        self._qos0_optional = False",
            (V311, V50),
        ),
        "a QoS 1 copy for an offline session dropped": (
            "            if session.status is CONNECTED or qos or self._queue_qos0:",
            "            if session.status is CONNECTED or self._queue_qos0:",
            (V311, V50),
        ),
        "one copy per overlapping subscription under reading one-copy": (
            "        if len(shapes) == 1 or not self._one_copy:",
            "        if True:",
            (V311, V50),
        ),
        "one copy under reading per-subscription": (
            "        if len(shapes) == 1 or not self._one_copy:",
            "        if len(shapes) == 1:",
            (V311_OTHER, V50_OTHER),
        ),
        "the single copy carries one identifier only": (
            "            ids = tuple(sorted(i for _, _, g in shapes for i in "
            "g.subscription_identifiers))",
            "            ids = shapes[0][2].subscription_identifiers",
            (V50,),
        ),
        "a Shared Subscription's copy to its first member, connected or not": (
            "            chosen = next((c for c in members if sessions[c].status is "
            "CONNECTED), None)",
            "            chosen = None",
            (V50,),
        ),
        "a copy expires a millisecond late": (
            "                elif end <= now if at else end < now:",
            "                elif end < now if at else end < now:",
            (V50,),
        ),
        "a session never expires": (
            "        while waiting and waiting[0][0] <= now:",
            "        while False:",
            (V50,),
        ),
        "a takeover leaves the old connection's session as it was": (
            "            dropped = self.disconnect(client_id).dropped",
            "            dropped = ()",
            (V311, V50),
        ),
        "Clean Start or CleanSession 1 keeps the session": (
            "        if existing is not None and clean:",
            "        if False:",
            (V311, V50),
        ),
        "the DISCONNECT's Session Expiry Interval ignored": (
            "        if self._v50 and given is not None and "
            "(session.expiry_interval or not given):",
            "        if False:",
            (V50,),
        ),
    },
    "distribution_subscribe": {
        "the QoS requested, not capped by the server's maximum": (
            "        return min(options.qos, config.maximum_qos), None",
            "        return options.qos, None",
            (V31_STRICT, V311_LIMITS, V50_LIMITS),
        ),
        "retained messages sent whatever the Retain Handling": (
            "        return grant.retain_handling != RetainHandling.DONT_SEND",
            "        return True",
            (V50,),
        ),
        "Retain Handling 1 sends again to a subscription that existed": (
            "        return grant.retain_handling == RetainHandling.SEND",
            "        return grant.retain_handling != RetainHandling.DONT_SEND",
            (V50,),
        ),
        "retained messages sent to a Shared Subscription": (
            "        if grant.share_name is not None:\n            return False",
            "        if False:\n            return False",
            (V50,),
        ),
        "a retained copy at its published QoS": (
            "                if qos > code and not self._retained_as_published:",
            "                if False:",
            (V311, V50),
        ),
        "a replaced subscription goes to the end of its session's": (
            "            order=old.order if old is not None else self._subs.next_order(),",
            "            order=self._subs.next_order(),",
            (V50,),
        ),
        "UNSUBSCRIBE drops the copies queued for the subscription": (
            "        gone = set(deleted)\n",
            "        gone = set(deleted)\n"
            "        session.pending[:] = [c for c in session.pending if not gone.issuperset("
            "c.topic_filters)]\n",
            (V311, V50),
        ),
        "an invalid filter refused with a failure code under reading close": (
            "            if error is not None and not self._refuse_invalid:",
            "            if False:",
            (V311, V50),
        ),
        "No Local accepted on a Shared Subscription": (
            "            if options.no_local and shared:",
            "            if False:",
            (V50,),
        ),
    },
    "retained_store": {
        "a zero-byte retained message stored": (
            "        if publication.payload:",
            "        if True:",
            (V311, V50),
        ),
        "a 3.1 retained message of QoS 1 or 2 never missing": (
            "        return held is not None and (self.edition is Edition.V31 or held.qos == 0)",
            "        return held is not None and held.qos == 0",
            (V31,),
        ),
        "a retained message never expires": (
            "                heapq.heappush(self._expiring, "
            "(message.expires_at, message.seq, topic))",
            "                pass",
            (V50,),
        ),
    },
    "distribution_subscriptions": {
        "3.1 dollar-topics=plain: a filter starting with a wildcard misses '$' names": (
            '        if self._root_wild and topic[:1] == "$":',
            "        if False:",
            (V31,),
        ),
        "a member subscribing again goes to the end of its group": (
            "            group.members[client_id] = grant",
            "            group.members.pop(client_id, None)\n"
            "            group.members[client_id] = grant",
            (V50,),
        ),
    },
    "distribution_topics": {
        "the '$' rule in 3.1 whatever the reading": (
            '            dollar_rule=not v31 or readings.get("dollar-topics") == "as-3.1.1",',
            "            dollar_rule=True,",
            (V31,),
        ),
        "the plain matcher's '+' matches only a level spelled '+'": (
            "        if level != SINGLE and level != name[depth]:",
            "        if level != name[depth]:",
            (V31,),
        ),
    },
}


def mutant(module: str, name: str | None) -> types.ModuleType:
    """``reference/{module}.py`` with mutant ``name`` applied (None: unmutated), run as a
    module of its own."""
    path = ROOT / "reference" / f"{module}.py"
    source = path.read_text(encoding="utf-8")
    if name is not None:
        old, new, _ = MUTANTS[module][name]
        assert source.count(old) == 1, f"{name}: the text to mutate is not there once"
        source = source.replace(old, new)
    built = types.ModuleType(f"pubproof.reference.{module}_mutant")
    sys.modules[built.__name__] = built  # dataclasses look their module up by name
    exec(compile(source, str(path), "exec"), built.__dict__)
    return built


def core_with(module: str, built: types.ModuleType) -> type[Any]:
    """A core class running the module ``built`` (a mutant of ``module``) in its place."""
    if module == "distribution":
        core: type[Any] = built.DistributionCore
        return core
    if module == "distribution_subscribe":
        own = vars(Subscribing)
        methods = {k: v for k, v in vars(built.Subscribing).items() if callable(v) and k in own}
        return type("MutantCore", (DistributionCore,), methods)
    topics = built if module == "distribution_topics" else topics_module
    # the topic rules reach the matchers through the subscriptions and the retained store
    subs = built if module == "distribution_subscriptions" else _rebuilt(subs_module, topics)
    store = built if module == "retained_store" else _rebuilt(store_module, topics)

    class MutantCore(DistributionCore):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            self._topics = topics.TopicRules.of(self.edition, self.readings)
            self._subs = subs.Subscriptions(self._topics)
            cited = RetainedCitations.of(self.edition, self.readings)
            self.retained = store.RetainedStore(self._topics, cited)

    return MutantCore


def _rebuilt(module: types.ModuleType, topics: types.ModuleType) -> types.ModuleType:
    """``module`` run again with the names it took from the topic rules taken from
    ``topics`` (a mutant of them)."""
    built = types.ModuleType(module.__name__ + "_on_mutant")
    sys.modules[built.__name__] = built
    source = (ROOT / "reference" / f"{module.__name__.rpartition('.')[2]}.py").read_text("utf-8")
    exec(compile(source, module.__name__, "exec"), built.__dict__)
    for name in ("plain_match", "starts_with_wildcard", "TopicRules"):
        if name in built.__dict__:
            built.__dict__[name] = getattr(topics, name)
    return built


def _killed(core_class: type[Any], cases: tuple[int, ...]) -> bool:
    for index in cases:
        edition, readings, limits = CASES[index]
        machine = comparison_machine(edition, readings, limits, core_class)
        try:
            run_state_machine_as_test(machine, settings=QUICK)
        except AssertionError:
            return True
        except BaseExceptionGroup as group:
            if group.subgroup(AssertionError) is None:
                raise
            return True
    return False


ALL = [(module, name) for module, named in MUTANTS.items() for name in named]


@pytest.mark.parametrize(("module", "name"), ALL, ids=[f"{m}: {n}" for m, n in ALL])
def test_the_mutant_is_killed(module: str, name: str) -> None:
    cases = MUTANTS[module][name][2]
    assert _killed(core_with(module, mutant(module, name)), cases), f"{name} survived"


@pytest.mark.parametrize("module", list(MUTANTS))
def test_the_unmutated_modules_pass_the_same_machine(module: str) -> None:
    """The harness itself: each module, run as a module of its own, is not 'killed'."""
    cases = tuple(sorted({c for _, _, cs in MUTANTS[module].values() for c in cs}))
    short = settings(QUICK, max_examples=25)
    core_class = core_with(module, mutant(module, None))
    for index in cases:
        edition, readings, limits = CASES[index]
        run_state_machine_as_test(
            comparison_machine(edition, readings, limits, core_class), settings=short
        )
