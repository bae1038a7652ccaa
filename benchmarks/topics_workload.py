"""The workload of ``bench_topics.py``: subscriptions and publications from a seeded generator.

Topic names look like an IoT fleet's, ``{tenant}/site{s}/dev{d}/{metric}`` (100 tenants, two
of them with non-ASCII names, 20 sites each, 500 devices a site, 16 metrics: 16 million
names), plus the server's ``$SYS/...`` names and, for 0.5% of publications, a device's name
with an empty last level (``tenant/site3/dev7/``).

Subscriptions (a client subscribes to at most one filter of each kind): 50% exact names,
15% ``.../dev{d}/+``, 8% ``.../site{s}/+/{metric}``, 5% ``{tenant}/+/+/{metric}``, 10%
``.../dev{d}/#``, 5% ``.../site{s}/#``, 2% ``{tenant}/#``, 1.5% ``+/site{s}/dev{d}/{metric}``,
1% under ``$SYS`` (``$SYS/#``, ``$SYS/broker/+``, exact), 2.5% 5.0 Shared Subscriptions
``$share/g{k}/{tenant}/site{s}/+/{metric}``, and a few monitors on ``#`` and ``+/#``. Half of
the device-level ones name a device that publishes in the ``repeats`` variant.

Publications: ``repeats`` draws them from 50,000 names with Zipf-like weights (a few names
carry much of the traffic, as real fleets do); ``fresh`` draws each from the whole space,
so almost none repeats.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

SEED = 20_250_34
METRICS = (
    "temp",
    "humidity",
    "pressure",
    "co2",
    "voc",
    "pm25",
    "noise",
    "lux",
    "battery",
    "rssi",
    "status",
    "power",
    "energy",
    "voltage",
    "current",
    "flow",
)
TENANTS = (*(f"tenant{t}" for t in range(98)), "café", "工厂")
SITES = 20
DEVICES = 500
SYS = tuple(
    f"$SYS/broker/{part}"
    for part in (
        "uptime",
        "version",
        "clients/connected",
        "clients/total",
        "load/messages/received/1min",
        "load/messages/sent/1min",
        "load/bytes/received/1min",
        "load/bytes/sent/1min",
        "messages/stored",
        "retained messages/count",
        "subscriptions/count",
        "heap/current",
    )
)
POOL = 50_000
ZIPF = 1.1
#: (kind, weight) of subscriptions; see the module's docstring
KINDS = (
    ("exact", 50.0),
    ("device+", 15.0),
    ("site+metric", 8.0),
    ("tenant++metric", 5.0),
    ("device#", 10.0),
    ("site#", 5.0),
    ("tenant#", 2.0),
    ("+device", 1.5),
    ("sys", 1.0),
    ("shared", 2.5),
)
MONITORS = ("#", "+/#")


@dataclass(frozen=True, slots=True, kw_only=True)
class Workload:
    """Subscriptions as (client identifier, topic filter as sent, filter matched) and the
    publications' topic names, in order."""

    subscriptions: list[tuple[str, str, str]]
    publications: list[str]
    variant: str


def _device(rng: random.Random) -> tuple[int, int, int]:
    return rng.randrange(len(TENANTS)), rng.randrange(SITES), rng.randrange(DEVICES)


def _name(tenant: int, site: int, device: int, metric: int) -> str:
    if metric < 0:
        return f"{TENANTS[tenant]}/site{site}/dev{device}/"
    return f"{TENANTS[tenant]}/site{site}/dev{device}/{METRICS[metric]}"


def _random_name(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.01:
        return rng.choice(SYS)
    t, s, d = _device(rng)
    return _name(t, s, d, -1 if roll < 0.015 else rng.randrange(len(METRICS)))


def _pool(seed: int) -> list[str]:
    rng = random.Random(seed)
    names: dict[str, None] = dict.fromkeys(SYS)
    while len(names) < POOL:
        names[_random_name(rng)] = None
    return list(names)


def _filter(rng: random.Random, kind: str, pool: list[str]) -> tuple[str, str]:
    """(topic filter as sent, filter matched) of one subscription of ``kind``."""
    if rng.random() < 0.5 and kind not in ("sys", "tenant#", "tenant++metric"):
        # a device that publishes in the repeats variant
        name = rng.choice(pool)
        while name.startswith("$"):
            name = rng.choice(pool)
        tenant_name, site, device, metric_name = name.split("/")
        t = TENANTS.index(tenant_name)
        s, d = int(site[4:]), int(device[3:])
        m = METRICS.index(metric_name) if metric_name else -1
    else:
        t, s, d = _device(rng)
        m = rng.randrange(len(METRICS))
    tenant, metric = TENANTS[t], (METRICS[m] if m >= 0 else "")
    plain = {
        "exact": _name(t, s, d, m),
        "device+": f"{tenant}/site{s}/dev{d}/+",
        "site+metric": f"{tenant}/site{s}/+/{metric}",
        "tenant++metric": f"{tenant}/+/+/{metric}",
        "device#": f"{tenant}/site{s}/dev{d}/#",
        "site#": f"{tenant}/site{s}/#",
        "tenant#": f"{tenant}/#",
        "+device": f"+/site{s}/dev{d}/{metric}",
    }
    if kind in plain:
        return plain[kind], plain[kind]
    if kind == "sys":
        roll = rng.random()
        one = "$SYS/#" if roll < 0.3 else "$SYS/broker/+" if roll < 0.5 else rng.choice(SYS)
        return one, one
    inner = f"{tenant}/site{s}/+/{metric or METRICS[0]}"
    return f"$share/g{rng.randrange(100)}/{inner}", inner


def workload(*, subscriptions: int, publications: int, variant: str, seed: int = SEED) -> Workload:
    """The subscriptions and publications of ``variant`` (``repeats`` or ``fresh``)."""
    rng = random.Random(seed)
    pool = _pool(seed + 1)
    clients = max(1, subscriptions // 4)
    kinds = [k for k, _ in KINDS]
    weights = [w for _, w in KINDS]
    seen: set[tuple[str, str]] = set()
    subs: list[tuple[str, str, str]] = []
    for index, monitor in enumerate(MONITORS * 10):
        client = f"monitor{index}"
        seen.add((client, monitor))
        subs.append((client, monitor, monitor))
    while len(subs) < subscriptions:
        kind = rng.choices(kinds, weights)[0]
        sent, inner = _filter(rng, kind, pool)
        client = f"client{rng.randrange(clients)}"
        if (client, inner) in seen:
            continue
        seen.add((client, inner))
        subs.append((client, sent, inner))
    pub_rng = random.Random(seed + 2)
    if variant == "repeats":
        cum: list[float] = []
        total = 0.0
        for rank in range(len(pool)):
            total += 1.0 / (rank + 1) ** ZIPF
            cum.append(total)
        order = pool[:]
        pub_rng.shuffle(order)
        names = pub_rng.choices(order, cum_weights=cum, k=publications)
    elif variant == "fresh":
        names = [_random_name(pub_rng) for _ in range(publications)]
    else:
        raise ValueError(f"unknown variant {variant!r} (repeats, fresh)")
    return Workload(subscriptions=subs[:subscriptions], publications=names, variant=variant)
