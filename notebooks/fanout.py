"""Tables and drawings of a server's distribution, for notebook 07 (retained messages, topic
filters and overlapping subscriptions).

Everything shown is computed by the distribution model (``pubproof.model.distribution``,
``pubproof.model.topic_filters``, ``pubproof.model.retained``); these helpers only lay it
out: a table of topic filters against topic names, a fan-out drawing of one message and the
copies each subscriber gets, and a timeline of one topic's retained message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
from matplotlib.axes import Axes

from pubproof.model.editions import Edition
from pubproof.model.messages import Copy
from pubproof.model.topic_filters import filter_problem, subscription_matches

MATCH, NO_MATCH = "✓", "·"


def match_table(
    filters: Sequence[str],
    topics: Sequence[str],
    edition: Edition = Edition.V311,
    readings: Mapping[str, str] | None = None,
) -> list[dict[str, str]]:
    """Topic filters (rows) against topic names (columns): ✓ where the filter matches; a
    row per filter, for ``pandas.DataFrame(...).set_index("topic filter")``."""
    return [
        {
            "topic filter": topic_filter,
            **{
                t: MATCH if subscription_matches(topic_filter, t, edition, readings) else NO_MATCH
                for t in topics
            },
        }
        for topic_filter in filters
    ]


def validity_table(filters: Sequence[str]) -> list[dict[str, str]]:
    """Each topic filter in each edition: ok, or the rule it breaks and where; a row per
    filter, for ``pandas.DataFrame(...).set_index("topic filter")``."""
    rows = []
    for topic_filter in filters:
        row: dict[str, str] = {"topic filter": repr(topic_filter)}
        for edition in Edition:
            problem = filter_problem(topic_filter, edition)
            row[edition.value] = (
                "ok" if problem is None else f"{problem.rule_id} at offset {problem.offset}"
            )
        rows.append(row)
    return rows


def copy_label(copy: Copy) -> str:
    """A copy in a few words: QoS, RETAIN, and the filters (and 5.0 identifiers) it is for."""
    words = [f"QoS {copy.qos}", f"RETAIN {int(copy.retain)}"]
    if copy.subscription_identifiers:
        words.append("ids " + ",".join(str(i) for i in copy.subscription_identifiers))
    return " ".join(words) + "  for " + " ".join(copy.topic_filters)


def fanout(
    topic: str,
    qos: int,
    copies: Sequence[Copy],
    subscribers: Sequence[str],
    *,
    title: str = "",
    ax: Axes | None = None,
) -> Axes:
    """One message from the publisher through the server to each subscriber: an arrow per
    copy the server owes, labelled with what the copy is; a subscriber with none is grey."""
    if ax is None:
        _, ax = plt.subplots(figsize=(9.5, 1.1 * max(len(subscribers), 2) + 0.8))
    rows = {name: -1.4 * i for i, name in enumerate(subscribers)}
    middle = (min(rows.values()) + max(rows.values())) / 2
    ax.annotate("", xy=(3.5, middle), xytext=(1.4, middle),
                arrowprops={"arrowstyle": "->", "color": "#1d3557"})  # fmt: skip
    ax.text(0.0, middle, "publisher", ha="left", va="center", weight="bold")
    ax.text(2.45, middle + 0.2, f"PUBLISH {topic!r}\nQoS {qos}", ha="center", va="bottom",
            fontsize=9)  # fmt: skip
    ax.text(4.1, middle, "server", ha="center", va="center", weight="bold",
            bbox={"boxstyle": "round", "facecolor": "#f1f3f5", "edgecolor": "#495057"})  # fmt: skip
    box = {"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "none"}
    for name, y in rows.items():
        mine = [c for c in copies if c.client_id == name]
        colour = "#1d3557" if mine else "#adb5bd"
        ax.text(9.0, y, name, ha="left", va="center", weight="bold", color=colour)
        if not mine:
            ax.plot([4.7, 8.8], [middle, y], color=colour, linestyle=":", linewidth=1)
            ax.text(7.2, middle + 0.6 * (y - middle), "no copy", ha="center", va="center",
                    fontsize=9, color=colour, bbox=box)  # fmt: skip
        for index, copy in enumerate(mine):
            shift = 0.7 * (index - (len(mine) - 1) / 2)
            ax.annotate("", xy=(8.8, y + shift), xytext=(4.7, middle),
                        arrowprops={"arrowstyle": "->", "color": colour})  # fmt: skip
            ax.text(7.2, middle + 0.6 * (y + shift - middle), copy_label(copy), ha="center",
                    va="center", fontsize=8.5, color=colour, bbox=box)  # fmt: skip
    ax.set_xlim(-0.2, 10.2)
    ax.set_ylim(min(rows.values()) - 0.7, max(rows.values()) + 0.7)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10)
    return ax


def timeline(
    steps: Sequence[Mapping[str, str]], *, title: str = "", ax: Axes | None = None
) -> Axes:
    """A topic's retained message through a run: one column per step with the event above
    (``event``) and what the store holds after it below (``holds``, empty for nothing), a
    new subscriber's copy (``new subscriber gets``) in between when there is one."""
    if ax is None:
        _, ax = plt.subplots(figsize=(11, 3.2))
    for x, step in enumerate(steps):
        event_box = {"boxstyle": "round", "facecolor": "#e9ecef", "edgecolor": "#adb5bd"}
        ax.text(x, 2.0, step["event"], ha="center", va="center", fontsize=8.5, bbox=event_box)
        holds = step.get("holds", "")
        ax.text(x, 0.0, holds or "(nothing)", ha="center", va="center", fontsize=8.5,
                color="#1d3557" if holds else "#868e96",
                bbox={"boxstyle": "round", "facecolor": "#d0ebff" if holds else "white",
                      "edgecolor": "#74c0fc" if holds else "#ced4da"})  # fmt: skip
        got = step.get("new subscriber gets")
        if got:
            ax.text(x, 1.0, f"new subscriber gets:\n{got}", ha="center", va="center",
                    fontsize=8, color="#2b8a3e")  # fmt: skip
        if x:
            ax.annotate("", xy=(x - 0.45, 0.0), xytext=(x - 0.55, 0.0),
                        arrowprops={"arrowstyle": "->", "color": "#74c0fc"})  # fmt: skip
    ax.text(-0.75, 2.0, "event", ha="right", va="center", weight="bold", fontsize=9)
    ax.text(-0.75, 0.0, "the store\nholds", ha="right", va="center", weight="bold", fontsize=9)
    ax.set_xlim(-1.4, len(steps) - 0.5)
    ax.set_ylim(-0.6, 2.6)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10)
    return ax
