"""Hand-written runs of the distribution model that witness the ambiguity catalog's
distribution entries (data: ``[[ambiguity.scenarios]]`` in ``texts/ambiguities.toml``).

Rules / theory of operation
---------------------------
An entry whose reading is one of :data:`pubproof.model.distribution_readings.
DISTRIBUTION_READINGS` shows what the choice changes by a *scenario*: an edition, the
server's configuration (``config``: fields of
:class:`pubproof.model.subscriptions.ServerConfig`, such as its ``unordered_topics``), and a
list of events, each a table with one operation:

- ``connect`` (a client identifier; ``clean``, default true; ``expiry``, 5.0's Session
  Expiry Interval in seconds, default 0) and ``disconnect`` (a client identifier);
- ``subscribe`` (a client identifier and ``filters``: tables of ``filter`` and ``qos``,
  with 5.0's ``no_local``, ``retain_as_published``, ``retain_handling`` when wanted);
- ``publish`` (a publisher's client identifier, ``topic``, ``qos``, ``retain``,
  ``payload`` in hex, default ``"01"``; 5.0's ``expiry``, the Message Expiry Interval);
- ``advance`` (milliseconds on the model's clock) and ``send`` (a client identifier: the
  server starts its first copy owed);
- ``order`` (a client identifier and ``copies``: the model's numbers of copies in the order
  a server sent them), which :func:`pubproof.model.ordering.ordering_problems` judges.

:func:`outcome` runs the events under one value of the reading and says what the server
does, one line per thing it owes or decides, in order; the scenario's ``expect`` gives
those lines for every value of the reading, and :func:`scenario_problems` holds the model
to them. A copy is written ``#<n> <client>: <topic> qos=<q> retain=<0|1>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from pubproof.model.distribution import DistributionModel
from pubproof.model.distribution_readings import DISTRIBUTION_READINGS
from pubproof.model.distribution_state import DistributionError
from pubproof.model.editions import Edition, ReadingError
from pubproof.model.messages import Copy, Properties, Publication
from pubproof.model.ordering import ordering_problems
from pubproof.model.subscriptions import RetainHandling, ServerConfig, SubscriptionOptions

#: The operations a step can name, and the keys each takes beside its own.
OPERATIONS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "connect": frozenset({"clean", "expiry"}),
        "disconnect": frozenset(),
        "subscribe": frozenset({"filters"}),
        "publish": frozenset({"topic", "qos", "retain", "payload", "expiry"}),
        "advance": frozenset(),
        "send": frozenset(),
        "order": frozenset({"copies"}),
    }
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    """A run of the distribution model and, for each value of the entry's reading, the
    lines :func:`outcome` must give."""

    note: str
    edition: Edition
    steps: tuple[Mapping[str, Any], ...]
    expect: Mapping[str, tuple[str, ...]]
    #: the server's configuration: ServerConfig's fields (its Unordered Topics, for reading
    #: ``unordered-topics=configured``; wildcard support; ...), its defaults for the rest
    config: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def server_config(self) -> ServerConfig:
        """The configuration as the model takes it (a list becomes a tuple)."""
        given: dict[str, Any] = {
            k: tuple(v) if isinstance(v, list) else v for k, v in self.config.items()
        }
        return ServerConfig(**given)


def load_scenario(raw: Mapping[str, Any]) -> Scenario:
    """A scenario from its TOML table."""
    return Scenario(
        note=raw["note"],
        edition=Edition.parse(raw["edition"]),
        steps=tuple(MappingProxyType(dict(step)) for step in raw["steps"]),
        expect=MappingProxyType({k: tuple(v) for k, v in raw["expect"].items()}),
        config=MappingProxyType(dict(raw.get("config", {}))),
    )


def _copy(copy: Copy) -> str:
    where = f"#{copy.copy_id} {copy.client_id}: {copy.topic}"
    return f"{where} qos={copy.qos} retain={int(copy.retain)}"


def _options(raw: Mapping[str, Any]) -> SubscriptionOptions:
    return SubscriptionOptions(
        qos=int(raw["qos"]),
        no_local=bool(raw.get("no_local", False)),
        retain_as_published=bool(raw.get("retain_as_published", False)),
        retain_handling=RetainHandling(int(raw.get("retain_handling", 0))),
    )


def _step(model: DistributionModel, step: Mapping[str, Any], seen: dict[int, Copy]) -> list[str]:
    """What one event makes the server do, in lines."""
    (op,) = [k for k in step if k in OPERATIONS]
    unknown = set(step) - {op} - OPERATIONS[op]
    if unknown:
        raise ValueError(f"{op}: unknown keys {sorted(unknown)}")
    who = step[op]
    lines: list[str] = []

    def owe(label: str, copies: tuple[Copy, ...]) -> None:
        for copy in copies:
            seen[copy.copy_id] = copy
            lines.append(f"{label} {_copy(copy)}")

    if op == "connect":
        done = model.connect(
            who, clean=bool(step.get("clean", True)), session_expiry_interval=step.get("expiry", 0)
        )
        lines.append(f"connect {who}: session present {int(done.session_present)}")
        owe("owed", done.owed)
        owe("optional", done.optional)
    elif op == "disconnect":
        lines.append(f"disconnect {who}: session ended {int(model.disconnect(who).session_ended)}")
    elif op == "subscribe":
        requests = [(f["filter"], _options(f)) for f in step["filters"]]
        out = model.subscribe(who, 1, requests)
        if out.closed is not None:
            lines.append(f"subscribe {who}: the server closes the connection [{out.closed}]")
        else:
            lines.append(f"subscribe {who}: SUBACK {' '.join(f'0x{c:02X}' for c in out.codes)}")
        for found in out.filters:
            owe("retained", found.retained)
    elif op == "publish":
        expiry = step.get("expiry")
        published = model.publish(
            Publication(
                publisher=who,
                topic=step["topic"],
                qos=int(step.get("qos", 0)),
                retain=bool(step.get("retain", False)),
                payload=bytes.fromhex(step.get("payload", "01")),
                properties=Properties(message_expiry_interval=expiry),
            )
        )
        change = published.retained
        if change is not None and change.before is not change.after:
            held = "deleted" if change.after is None else "stored"
            lines.append(f"retained {change.topic}: {held} [{' '.join(change.rule_ids)}]")
        owe("copy", published.copies)
        owe("optional", published.optional)
    elif op == "advance":
        clock = model.advance(int(who))
        for copy in clock.expired:
            lines.append(f"expired {_copy(copy)}")
    elif op == "send":
        copy, interval = model.send(who)
        seen[copy.copy_id] = copy
        lines.append(f"sent {_copy(copy)}" + ("" if interval is None else f" expiry={interval}"))
    else:  # order
        sent = [seen[n] for n in step["copies"]]
        problems = ordering_problems(sent, model.edition, model.readings, model.config)
        said = "; ".join(p.rule_id for p in problems) or "ok"
        lines.append(f"order {who} {list(step['copies'])}: {said}")
    return lines


def outcome(scenario: Scenario, reading: str, value: str) -> tuple[str, ...]:
    """What the distribution model does with the scenario's events when ``reading`` has
    ``value`` (the other readings at the edition's defaults), one line per decision."""
    return run(scenario, {reading: value})


def run(
    scenario: Scenario, readings: Mapping[str, str], edition: Edition | None = None
) -> tuple[str, ...]:
    """What the distribution model does with the scenario's events in ``edition`` (the
    scenario's own when None) under ``readings`` (the edition's defaults for the rest), one
    line per decision: the same events run in two editions show what changed between them."""
    model = DistributionModel(edition or scenario.edition, readings, scenario.server_config())
    seen: dict[int, Copy] = {}
    lines: list[str] = []
    for step in scenario.steps:
        lines += _step(model, step, seen)
    return tuple(lines)


def scenario_problems(name: str, reading: str | None, scenario: Scenario) -> list[str]:
    """Everything wrong with one scenario of the entry ``name``, in words: a reading that
    is not a distribution reading, an expectation for a value the reading lacks, a run that
    does not go through, lines the model does not give."""
    where = f"ambiguity {name!r}: scenario {scenario.note!r}"
    if reading is None or reading not in DISTRIBUTION_READINGS:
        return [f"{where}: the entry's reading {reading!r} is not a distribution reading"]
    values = DISTRIBUTION_READINGS[reading].values
    found = [
        f"{where}: {v!r} is not a value of {reading}" for v in scenario.expect if v not in values
    ]
    for value, stated in scenario.expect.items():
        if value not in values:
            continue
        try:
            actual = outcome(scenario, reading, value)
        except (DistributionError, ReadingError, ValueError, KeyError, TypeError) as error:
            # a step the model refuses, a configuration it cannot take
            found.append(f"{where}: does not run under {reading}={value}: {error!r}")
            continue
        if actual != stated:
            found.append(
                f"{where}: under {reading}={value} the model gives {list(actual)!r}, the catalog "
                f"{list(stated)!r}"
            )
    return found
