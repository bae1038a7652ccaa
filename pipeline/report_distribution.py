"""The report's section on distribution: per server and per topic, the messages in, the
copies out, the findings and the delivery latency (a plot of its median and 99th
percentile), what became of every message, and each finding with its trace across the
connections involved.

Everything is read back from the written tables: ``deliveries`` (its four columns the
section needs, counted by Arrow; the latencies of the (server, topic)s shown are sorted to
take their percentiles) and the ``violations`` of source ``distribution``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

from pubproof.pipeline.output import batches, files

#: findings shown with their traces (the rest are counted)
MAX_TRACES = 100
#: (server, topic) rows shown, the busiest first
MAX_TOPICS = 60
#: columns of a trace entry shown in their own cells
TRACE_KEYS = ("conn", "t", "frame", "dir", "type", "packet_id", "qos", "dup", "retain", "topic")


@dataclass(slots=True)
class _Topic:
    messages: int = 0
    copies: int = 0
    findings: int = 0
    latencies: list[float] = field(default_factory=list)


def percentile(values: Sequence[float], share: float) -> float:
    """The ``share`` percentile of sorted ``values`` (nearest rank)."""
    if not values:
        return 0.0
    rank = max(0, min(len(values) - 1, round(share * len(values) + 0.5) - 1))
    return values[rank]


def section(out: str, reconciliation: dict[str, Any]) -> str:
    """The HTML of the section (an empty capture's: a line saying so)."""
    topics, latencies = _counted(out)
    findings = _findings(out)
    for row in findings:
        key = (row["endpoint"], _topic_of(row))
        topics.setdefault(key, _Topic()).findings += 1
    spread = reconciliation.get("distribution", {})
    if not topics:
        return "<h2>Distribution</h2><p>No PUBLISH a server received or sent.</p>"
    busiest = sorted(topics.items(), key=lambda kv: (-kv[1].messages - kv[1].copies, kv[0]))
    shown = busiest[:MAX_TOPICS]
    latencies([key for key, _ in shown])
    parts = [
        "<h2>Distribution: every message from its publisher to each subscriber</h2>",
        f"<p>{spread.get('servers', 0)} server(s), {spread.get('topics', 0)} topic(s): "
        f"{spread.get('messages_in', 0):,} messages in, {spread.get('copies_out', 0):,} "
        f"copies out, {len(findings):,} distribution finding(s). A server is an address and "
        "port, judged alone; each topic of it is judged with the sessions of its server.</p>",
        _outcomes(spread),
        _latency_plot(shown),
        _topic_table(shown, findings),
        f"<h3>Distribution findings (first {MAX_TRACES}, each with its trace)</h3>",
        *(_trace(i, row) for i, row in enumerate(findings[:MAX_TRACES])),
    ]
    if len(topics) > MAX_TOPICS:
        parts.insert(3, f"<p>The {MAX_TOPICS} busiest of {len(topics):,} (server, topic).</p>")
    return "\n".join(parts)


def _counted(out: str) -> tuple[dict[tuple[str, str], _Topic], Callable[[list[Any]], None]]:
    """Each (server, topic)'s messages in and copies out, counted by Arrow (a Python loop
    over the rows was a tenth of the stage's cost on a real capture), and a function that
    gives the (server, topic)s it is handed their copies' latencies, sorted."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    names = ["server", "topic", "direction", "latency"]
    read = [pq.read_table(path, columns=names) for path in files(out, "deliveries")]
    table = pa.concat_tables(read) if read else pa.table({n: [] for n in names})
    topics: dict[tuple[str, str], _Topic] = {}
    counted = table.group_by(names[:3]).aggregate([([], "count_all")])
    for server, topic, way, count in zip(
        *(counted[c].to_pylist() for c in (*names[:3], "count_all")), strict=True
    ):
        entry = topics.setdefault((server, topic), _Topic())
        if way == "in":
            entry.messages += count
        else:
            entry.copies += count

    def latencies(keys: list[Any]) -> None:
        """The latencies of each (server, topic) of ``keys``, sorted, in its entry."""
        if not keys or not table.num_rows:
            return
        copies = table.filter(
            pc.and_(pc.equal(table["direction"], "out"), pc.is_valid(table["latency"]))
        )
        key = pc.binary_join_element_wise(copies["server"], copies["topic"], "\x00")
        wanted = pa.array([f"{server}\x00{topic}" for server, topic in keys])
        # Arrow only: numpy is hidden from pyarrow in a check's process (optional_imports)
        which = pa.table({"which": pc.index_in(key, value_set=wanted), "t": copies["latency"]})
        which = which.filter(pc.is_valid(which["which"]))
        which = which.sort_by([("which", "ascending"), ("t", "ascending")])
        held: dict[int, list[float]] = {}
        for i, value in zip(which["which"].to_pylist(), which["t"].to_pylist(), strict=True):
            held.setdefault(i, []).append(value)
        for i, wanted_key in enumerate(keys):
            topics[wanted_key].latencies = held.get(i, [])

    return topics, latencies


def _findings(out: str) -> list[dict[str, Any]]:
    names = ("capture", "connection", "frame", "rule", "kind", "endpoint", "message", "evidence",
             "source")  # fmt: skip
    rows: list[dict[str, Any]] = []
    for batch in batches(out, "violations", names):
        for values in zip(*(batch[n] for n in names), strict=True):
            row = dict(zip(names, values, strict=True))
            if row["source"] == "distribution":
                rows.append(row)
    return rows


def _topic_of(row: dict[str, Any]) -> str:
    """A finding's topic: the topic name of its trace's PUBLISH packets."""
    for entry in json.loads(row["evidence"]):
        topic = entry.get("topic")
        if topic:
            return str(topic)
    return ""


def _outcomes(spread: dict[str, Any]) -> str:
    """What became of every message in and copy out, by outcome."""
    rows = []
    for what, key in (("messages in", "messages_by_outcome"), ("copies out", "copies_by_outcome")):
        for outcome, count in sorted(spread.get(key, {}).items()):
            rows.append(
                f"<tr><td>{what}</td><td><code>{escape(outcome)}</code></td>"
                f"<td class=n>{count:,}</td></tr>"
            )
    head = "<tr><th></th><th>outcome</th><th>count</th></tr>"
    return f"<table>{head}{''.join(rows)}</table>"


def _latency_plot(shown: Iterable[tuple[tuple[str, str], _Topic]]) -> str:
    """An SVG dot plot: per (server, topic), the median (filled) and 99th percentile
    (ring) delivery latency, on a logarithmic scale of milliseconds."""
    import math

    measured = [(key, t) for key, t in shown if t.latencies]
    if not measured:
        return "<p>No copy of a message seen: no latency to plot.</p>"
    row_height, label_width, width = 18, 330, 420
    lows = [max(percentile(t.latencies, 0.5) * 1000, 0.001) for _, t in measured]
    highs = [max(percentile(t.latencies, 0.99) * 1000, 0.001) for _, t in measured]
    low, high = math.log10(min(lows)), math.log10(max(highs))
    span = max(high - low, 1.0)

    def x(ms: float) -> float:
        return label_width + width * (math.log10(max(ms, 0.001)) - low) / span

    marks = []
    for i, ((server, topic), _) in enumerate(measured):
        y = 5 + i * row_height + row_height / 2
        label = escape(f"{server} {topic}")
        median, tail = lows[i], highs[i]
        marks.append(
            f'<text x="{label_width - 6}" y="{y + 4}" text-anchor="end" font-size="11">'
            f"{label}</text>"
            f'<line x1="{x(median):.1f}" x2="{x(tail):.1f}" y1="{y}" y2="{y}" stroke="#999"/>'
            f'<circle cx="{x(median):.1f}" cy="{y}" r="4" fill="#2f6db5">'
            f"<title>{label}: median {median:.3f} ms</title></circle>"
            f'<circle cx="{x(tail):.1f}" cy="{y}" r="4" fill="none" stroke="#c0392b">'
            f"<title>{label}: 99th percentile {tail:.3f} ms</title></circle>"
        )
    height = 30 + row_height * len(measured)
    axis = (
        f'<text x="{label_width}" y="{height - 4}" font-size="11">{10**low:.3g} ms</text>'
        f'<text x="{label_width + width}" y="{height - 4}" font-size="11" text-anchor="end">'
        f"{10 ** (low + span):.3g} ms</text>"
    )
    total = label_width + width + 40
    return (
        "<p>Delivery latency (capture time from a message's PUBLISH to each copy): "
        "median (filled) and 99th percentile (ring), logarithmic.</p>"
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="{height}" '
        f'role="img" aria-label="delivery latency per topic">{"".join(marks)}{axis}</svg>'
    )


def _topic_table(
    shown: Iterable[tuple[tuple[str, str], _Topic]], findings: Sequence[dict[str, Any]]
) -> str:
    first: dict[tuple[str, str], int] = {}
    for i, row in enumerate(findings[:MAX_TRACES]):
        first.setdefault((row["endpoint"], _topic_of(row)), i)
    rows = []
    for key, entry in shown:
        server, topic = key
        found = f"{entry.findings:,}"
        if key in first:
            found = f'<a href="#distribution-{first[key]}">{found}</a>'
        median = percentile(entry.latencies, 0.5) * 1000
        tail = percentile(entry.latencies, 0.99) * 1000
        rows.append(
            f"<tr><td><code>{escape(server)}</code></td><td><code>{escape(topic)}</code></td>"
            f"<td class=n>{entry.messages:,}</td><td class=n>{entry.copies:,}</td>"
            f"<td class=n>{found}</td><td class=n>{median:.3f}</td>"
            f"<td class=n>{tail:.3f}</td></tr>"
        )
    head = (
        "<tr><th>server</th><th>topic</th><th>messages in</th><th>copies out</th>"
        "<th>findings</th><th>latency median (ms)</th><th>latency p99 (ms)</th></tr>"
    )
    return f"<table>{head}{''.join(rows)}</table>"


def _trace(index: int, row: dict[str, Any]) -> str:
    entries = json.loads(row["evidence"])
    lines = []
    for entry in entries:
        cells = "".join(f"<td>{escape(_show(entry.get(k)))}</td>" for k in TRACE_KEYS)
        rest = {k: v for k, v in entry.items() if k not in TRACE_KEYS}
        lines.append(
            f"<tr>{cells}<td class=hex>{escape(json.dumps(rest, ensure_ascii=False))}</td></tr>"
        )
    head = "".join(f"<th>{k}</th>" for k in (*TRACE_KEYS, "more"))
    return (
        f'<h4 id="distribution-{index}"><code>{escape(row["rule"] or "-")}</code> '
        f"({escape(row['kind'])}), server <code>{escape(row['endpoint'])}</code></h4>"
        f"<p>{escape(row['message'])}<br>at <code>{escape(row['connection'])}</code>, "
        f"frame {row['frame']}</p>"
        f'<table class="evidence"><tr>{head}</tr>{"".join(lines)}</table>'
    )


def _show(value: Any) -> str:
    return "" if value is None else str(value)
