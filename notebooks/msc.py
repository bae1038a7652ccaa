"""Message sequence charts of pubproof traces, drawn with matplotlib (used by the notebooks).

A trace is pubproof's one evidence format: packets ``P`` (as ``pubproof decode`` prints
them) with ``dir`` ("to-receiver"/"c2s" or "to-sender"/"s2c") and ``conn``, and events
(``app-publish``, ``connection-lost``, ``reconnect``). Theorem counterexamples, probe
evidence and the pipeline's connections are all traces, so one chart draws any of them.

The sender (the client, in a capture) is the left lifeline and the receiver (the server)
the right one; time runs down, one row per entry. Besides the trace's own events, the
notebooks add ``packet-lost`` (a packet that never arrived, drawn as an arrow that stops
half-way) and ``deliver`` (the application receives a message); ``notes`` puts a remark
beside any row, such as what the model's replay made of that packet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.axes import Axes

TO_RECEIVER = frozenset({"to-receiver", "c2s"})
TO_SENDER = frozenset({"to-sender", "s2c"})
LEFT, RIGHT = 0.0, 10.0
ROW = 1.0

Entry = Mapping[str, Any]


def label(packet: Entry) -> str:
    """A packet in a few words: type, QoS, packet identifier and the flags that are set."""
    kind = str(packet.get("type", "?"))
    if kind != "PUBLISH":
        packet_id = packet.get("packet_id")
        return kind if packet_id is None else f"{kind} id {packet_id}"
    words = [f"PUBLISH QoS {packet.get('qos')}"]
    if packet.get("packet_id") is not None:
        words.append(f"id {packet['packet_id']}")
    if packet.get("dup"):
        words.append("DUP")
    if packet.get("retain"):
        words.append("RETAIN")
    topic = packet.get("topic")
    if topic is not None:
        words.append(repr(topic) if len(str(topic)) <= 16 else repr(str(topic)[:15] + "…"))
    return " ".join(words)


def event_text(entry: Entry) -> str:
    """An event of a trace (not a packet) in a few words."""
    event = entry.get("event")
    if event == "app-publish":
        message = f"message {entry['msg']}" if "msg" in entry else "a message"
        return f"app publishes {message} at QoS {entry.get('qos', '?')}"
    if event == "connection-lost":
        extra = f", in-flight packets {entry['in-flight']}" if "in-flight" in entry else ""
        return f"connection {entry.get('conn', '')} lost{extra}"
    if event == "reconnect":
        return f"reconnect: connection {entry.get('conn', '')}, session {entry.get('session', '?')}"
    if event == "deliver":
        return f"delivered: {entry.get('what', '')}".rstrip(": ")
    return str(event)


def draw(
    trace: Sequence[Entry],
    *,
    notes: Mapping[int, str] | None = None,
    states: Mapping[int, tuple[str, str]] | None = None,
    left: str = "sender (client)",
    right: str = "receiver (server)",
    title: str = "",
    ax: Axes | None = None,
) -> Axes:
    """Draw ``trace`` as a message sequence chart and return the axes.

    ``notes`` puts a remark beside a row (on the side of the end the packet went to);
    ``states`` gives, for a row, the (sender, receiver) states after it, drawn under each
    lifeline where they change.
    """
    notes = notes or {}
    states = states or {}
    shown: tuple[str, str] = ("", "")
    rows = len(trace)
    if ax is None:
        _, ax = plt.subplots(figsize=(9.5, 0.55 * rows + 1.4))
    bottom = -rows * ROW - 0.5
    for x, name in ((LEFT, left), (RIGHT, right)):
        ax.plot([x, x], [0.3, bottom], color="#495057", linewidth=1.5)
        ax.text(x, 0.55, name, ha="center", va="bottom", fontsize=10, weight="bold")
    for index, entry in enumerate(trace):
        y = -index * ROW - 0.3
        direction = entry.get("dir")
        event = entry.get("event")
        if direction in TO_RECEIVER or direction in TO_SENDER:
            start, end = (LEFT, RIGHT) if direction in TO_RECEIVER else (RIGHT, LEFT)
            _arrow(ax, start, end, y, label(entry), "#1d3557")
        elif event == "packet-lost":
            start = LEFT if entry.get("toward") == "receiver" else RIGHT
            middle = (LEFT + RIGHT) / 2
            _arrow(ax, start, middle, y, label(entry) + " (lost)", "#adb5bd")
            ax.text(middle, y - 0.25, "\u2717", color="#c1121f", ha="center", va="center",
                    fontsize=14)  # fmt: skip
        elif event in ("connection-lost", "reconnect"):
            colour = "#c1121f" if event == "connection-lost" else "#2d6a4f"
            ax.plot([LEFT, RIGHT], [y - 0.2, y - 0.2], color=colour, linestyle="--", linewidth=1.2)
            ax.text((LEFT + RIGHT) / 2, y - 0.1, event_text(entry), ha="center", va="bottom",
                    fontsize=8.5, color=colour)  # fmt: skip
        elif event == "app-publish" or (event == "deliver" and entry.get("at") == "sender"):
            _note(ax, LEFT, y, event_text(entry), "right")
        elif event == "deliver":
            _note(ax, RIGHT, y, event_text(entry), "left")
        else:
            ax.text((LEFT + RIGHT) / 2, y - 0.2, event_text(entry), ha="center", fontsize=8.5)
        if index in notes:
            at_right = direction in TO_RECEIVER or entry.get("toward") == "receiver"
            ax.text(RIGHT + 0.3 if at_right else LEFT - 0.3, y - 0.32, notes[index],
                    ha="left" if at_right else "right", va="center", fontsize=8,
                    color="#6a040f")  # fmt: skip
        if index in states:
            for x, side, old, new in zip((LEFT, RIGHT), ("right", "left"), shown, states[index],
                                         strict=True):  # fmt: skip
                if new != old:
                    shift = -0.3 if side == "right" else 0.3
                    ax.text(x + shift, y - 0.72, new, ha=side, va="center", fontsize=7.5,
                            color="#6c757d", style="italic")  # fmt: skip
            shown = states[index]
    ax.set_xlim(LEFT - 6.5, RIGHT + 6.5)
    ax.set_ylim(bottom, 1.3)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=11)
    return ax


def _arrow(ax: Axes, start: float, end: float, y: float, text: str, colour: str) -> None:
    ax.annotate(
        "",
        xy=(end, y - 0.45),
        xytext=(start, y),
        arrowprops={"arrowstyle": "-|>", "color": colour, "linewidth": 1.4},
    )
    ax.text((start + end) / 2, y - 0.12, text, ha="center", va="bottom", fontsize=8.5,
            color=colour, rotation=0)  # fmt: skip


def _note(ax: Axes, x: float, y: float, text: str, side: str) -> None:
    offset = -0.3 if side == "right" else 0.3
    box = {"boxstyle": "round,pad=0.25", "facecolor": "#d8f3dc", "edgecolor": "#95d5b2"}
    ax.text(x + offset, y - 0.2, text, ha=side, va="center", fontsize=8.5, color="#2d6a4f",
            bbox=box)  # fmt: skip
