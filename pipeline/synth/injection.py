"""Where and how the synthetic capture generator injects its faults, and how it counts
them in the expected document.

Two kinds of fault: the per-connection ones (:class:`~pubproof.pipeline.synth.faults.Fault`:
a malformed packet, or a QoS 1 PUBLISH on an identifier still held), each carried by one
connection, and the distribution faults of the synthetic misbehaving broker
(:class:`~pubproof.pipeline.synth.broker.DistFault`: a copy dropped, duplicated, sent with
the wrong flags or after its expiry), each injected on the messages of one publishing
connection. :func:`fault_plan` and :func:`dist_plan` spread them evenly over the capture's
connections, deterministically; :func:`publish_fault` and :func:`fault_draws` choose what
a publishing turn that carries a distribution fault sends (an edition whose subscribers
would get it, its topic and QoS); :func:`record_fault` and :func:`record_link_fault` count
each fault's findings and write its record, which the generator completes with the frame
that carries its last byte. Every draw is made from the connection's own seeded random
generator, in a fixed order, so the same seed gives the same capture.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from pubproof.pipeline.synth.broker import Broker, DistFault, Member
from pubproof.pipeline.synth.broker import matches as filter_matches
from pubproof.pipeline.synth.config import Expected, SynthConfig
from pubproof.pipeline.synth.faults import Fault
from pubproof.pipeline.synth.pcapwrite import S2C, Direction


def fault_plan(config: SynthConfig) -> dict[int, Fault]:
    """Which connection (by index) carries which fault: spread evenly, deterministic."""
    known = {f.value for f in Fault}
    faults = [Fault(name) for name, count in config.inject if name in known for _ in range(count)]
    if not faults:
        return {}
    total = max(config.connections, len(faults))
    stride = total / len(faults)
    return {int(n * stride): fault for n, fault in enumerate(faults)}


def dist_plan(config: SynthConfig) -> dict[int, DistFault]:
    """Which connection (by index) injects which distribution fault: spread evenly over
    the connections, from the third on (the first have nobody to forward to yet)."""
    known = {f.value for f in DistFault}
    faults = [
        DistFault(name) for name, count in config.inject if name in known for _ in range(count)
    ]
    if not faults:
        return {}
    total = max(config.connections - 2, len(faults))
    stride = total / len(faults)
    return {2 + int(n * stride): fault for n, fault in enumerate(faults)}


def fault_topics(broker: Broker, member: Member, topics: Sequence[str]) -> list[str]:
    """The ``topics`` some other connection of ``member``'s edition subscribes to."""
    return [
        t for t in topics
        if any(
            filter_matches(s.topic_filter, t)
            for m in broker.members.values()
            if m.v5 == member.v5 and m.index != member.index
            for s in m.subscriptions
        )
    ]  # fmt: skip


def publish_fault(
    fault: DistFault | None, broker: Broker, member: Member, topics: Sequence[str], *, v5: bool
) -> tuple[DistFault | None, list[str]]:
    """The distribution fault a publishing turn injects (None: none yet) and the topics it
    may go to: ``fault`` unless it is made by a subscription (miss-retained), is for 5.0
    only on a 3.1.1 connection, or nobody of this edition subscribes yet (later, then)."""
    if fault is DistFault.MISS_RETAINED or (fault is not None and fault.v5_only and not v5):
        fault = None
    found = fault_topics(broker, member, topics) if fault is not None else []
    if fault is not None and not found:
        fault = None  # nobody of this edition would get it yet: later
    return fault, found


def fault_draws(
    rng: random.Random,
    fault: DistFault | None,
    qos_mix: tuple[float, float, float],
    topics: Sequence[str],
) -> tuple[int, str | None]:
    """The QoS and topic of a distribution fault's messages (drawn even without a fault,
    so that the draws that follow are the same): the pair's one QoS; QoS 2 (duplicate);
    1 or 2 (DUP: never 0, which has DUP 0 [MQTT-3.3.1-2]); as drawn for the rest."""
    qos = rng.choices((0, 1, 2), weights=qos_mix)[0]
    if fault is DistFault.DUPLICATE:
        qos = 2
    elif fault is DistFault.DUP:
        qos = rng.choice((1, 2))
    return qos, rng.choice(topics) if topics else None


def record_fault(
    expected: Expected,
    fault: Fault,
    connection: int,
    direction: Direction,
    client: str,
    findings: Sequence[Sequence[str]],
) -> dict[str, Any]:
    """Count an injected fault; the record (completed with its frame) for the JSON."""
    for finding in findings:  # each finding is one row of the violations table
        for rule in set(finding):
            expected.violations[rule] += 1
    expected.faults[fault.value] += 1
    record: dict[str, Any] = {
        "fault": fault.value, "connection": connection, "direction": direction.value,
        "client": client, "findings": [list(f) for f in findings], "frame": None,
    }  # fmt: skip
    expected.injected.append(record)
    return record


def record_link_fault(
    expected: Expected, dist: dict[str, Any], connection: int, client: str
) -> dict[str, Any]:
    """A distribution fault the link judge finds (3.1.1 [MQTT-3.3.1-3]): its record
    among the per-connection faults, whose frame the copy's segment gives."""
    rule = str(dist["rule"])
    expected.violations[rule] += 1
    record: dict[str, Any] = {
        "fault": dist["fault"], "connection": connection, "direction": S2C.value,
        "client": client, "findings": [[rule]], "frame": None,
    }  # fmt: skip
    expected.injected.append(record)
    return record
