"""Message sequence charts of pubproof traces as inline SVG, for the theorem pages.

The notebooks draw charts with matplotlib (``docs/notebooks/msc.py``); the theorem pages
draw dozens of them at every build, so these are plain SVG written here: crisp at any size,
their labels selectable and found by the browser's search, and no element id in them (a
page holds many charts). The sender is the left lifeline, the receiver the right one;
time runs down, one row per trace entry: packets as arrows, the application's publish as
a note, a lost connection as a red dashed line, a reconnect as a green one. ``notes``
puts what the model's ``replay(trace)`` made of a row beside it. ``failure`` marks the row
after which a refuted theorem's property is false (a refutation's counterexample run through
the system it refutes): a tinted band across the chart, a bar on its left edge and a label
in words, in a colour of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

TO_RECEIVER = frozenset({"to-receiver", "c2s"})
TO_SENDER = frozenset({"to-sender", "s2c"})
WIDTH = 900
LEFT, RIGHT = 230, 610
ROW = 34
TOP = 40

Entry = Mapping[str, Any]


def packet_label(packet: Entry) -> str:
    """A packet in a few words: type, QoS, identifier, the flags set, the Reason Code."""
    kind = str(packet.get("type", "?"))
    words = [kind]
    if kind == "PUBLISH":
        words.append(f"QoS {packet.get('qos')}")
    if packet.get("packet_id") is not None:
        words.append(f"id {packet['packet_id']}")
    if packet.get("dup"):
        words.append("DUP")
    if packet.get("retain"):
        words.append("RETAIN")
    if packet.get("reason_code"):
        words.append(f"0x{int(packet['reason_code']):02X}")
    alias = (packet.get("properties") or {}).get("topic_alias")
    if kind == "PUBLISH":
        topic = str(packet.get("topic", ""))
        words.append(repr(topic if len(topic) <= 12 else topic[:11] + "…"))
    if alias is not None:
        words.append(f"alias {alias}")
    if packet.get("payload_hex"):
        words.append(f"payload {packet['payload_hex']}")
    if packet.get("refuse"):
        words.append(f"(refused 0x{int(packet['refuse']):02X})")
    return " ".join(words)


def event_label(entry: Entry) -> str:
    """A trace event (not a packet) in a few words."""
    event = entry.get("event")
    if event == "app-publish":
        message = f"message {entry['msg']}" if "msg" in entry else "a message"
        payload = f" ({entry['payload_hex']})" if entry.get("payload_hex") else ""
        return f"app publishes {message}{payload} at QoS {entry.get('qos', '?')}"
    if event == "connection-lost":
        extra = f"; packets in flight {entry['in-flight']}" if "in-flight" in entry else ""
        return f"connection {entry.get('conn', '')} lost{extra}"
    if event == "reconnect":
        return f"reconnect: connection {entry.get('conn', '')}, session {entry.get('session', '?')}"
    if event == "deliveries":
        parts = [f"{k}: {v}" for k, v in entry.items() if k != "event"]
        return "deliveries " + "; ".join(parts)
    return str(event or "?")


def _text(x: float, y: float, text: str, *, anchor: str = "middle", css: str = "") -> str:
    return (
        f'<text x="{x:.0f}" y="{y:.0f}" text-anchor="{anchor}" class="{css}">{escape(text)}</text>'
    )


def _arrow(x1: float, x2: float, y: float, label: str) -> list[str]:
    y2 = y + ROW * 0.55
    head = -10 if x2 > x1 else 10
    return [
        f'<line x1="{x1}" y1="{y:.0f}" x2="{x2}" y2="{y2:.0f}" class="pp-msc-packet"/>',
        f'<polygon points="{x2},{y2:.0f} {x2 + head},{y2 - 6:.0f} {x2 + head},{y2 + 2:.0f}" '
        'class="pp-msc-head"/>',
        _text((x1 + x2) / 2, y - 4, label, css="pp-msc-label"),
    ]


def _failure(index: int, label: str) -> list[str]:
    y = TOP + ROW * index + 12
    return [
        f'<rect x="4" y="{y - 16}" width="{WIDTH - 8}" height="{ROW + 12}" rx="4" '
        'class="pp-msc-failband"/>',
        f'<line x1="5" y1="{y - 14}" x2="5" y2="{y + ROW - 6}" class="pp-msc-fail"/>',
        # the right margin is free on a row's first line (notes sit on its second)
        _text(WIDTH - 10, y + 9, f"\u2717 {label}", anchor="end", css="pp-msc-fail"),
    ]


def svg(
    trace: Sequence[Entry],
    *,
    notes: Mapping[int, str] | None = None,
    title: str = "",
    failure: tuple[int, str] | None = None,
) -> str:
    """The chart of ``trace`` as an ``<svg>`` element (one line of HTML); ``failure`` is the
    row where a property fails and a short label saying which."""
    notes = notes or {}
    if failure is not None and not 0 <= failure[0] < len(trace):
        raise ValueError(f"the failure's row {failure[0]} is not a row of the trace")
    height = TOP + ROW * (len(trace) + 1)
    out = [
        f'<svg class="pp-msc" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" '
        f'role="img" aria-label="{escape(title or "message sequence chart")}" '
        'xmlns="http://www.w3.org/2000/svg">',
        _text(LEFT, 18, "sender (client)", css="pp-msc-end"),
        _text(RIGHT, 18, "receiver (server)", css="pp-msc-end"),
        f'<line x1="{LEFT}" y1="26" x2="{LEFT}" y2="{height - 6}" class="pp-msc-life"/>',
        f'<line x1="{RIGHT}" y1="26" x2="{RIGHT}" y2="{height - 6}" class="pp-msc-life"/>',
    ]
    if failure is not None:  # drawn first: the band lies under the row it marks
        out += _failure(*failure)
    for index, entry in enumerate(trace):
        y = TOP + ROW * index + 12
        direction = entry.get("dir")
        event = entry.get("event")
        if direction in TO_RECEIVER or direction in TO_SENDER:
            start, end = (LEFT, RIGHT) if direction in TO_RECEIVER else (RIGHT, LEFT)
            out += _arrow(start, end, y, packet_label(entry))
        elif event in ("connection-lost", "reconnect"):
            css = "pp-msc-lost" if event == "connection-lost" else "pp-msc-reconnect"
            out.append(f'<line x1="{LEFT - 20}" y1="{y + 8}" x2="{RIGHT + 20}" y2="{y + 8}" '
                       f'class="{css}"/>')  # fmt: skip
            out.append(_text((LEFT + RIGHT) / 2, y + 3, event_label(entry), css=css))
        elif event == "app-publish":
            label = event_label(entry)
            box = 7.0 * len(label) + 12
            out.append(f'<rect x="{LEFT + 6}" y="{y - 6}" width="{box:.0f}" '
                       f'height="22" rx="5" class="pp-msc-note"/>')  # fmt: skip
            out.append(_text(LEFT + 12, y + 9, label, anchor="start", css="pp-msc-notetext"))
        else:
            out.append(_text((LEFT + RIGHT) / 2, y + 9, event_label(entry), css="pp-msc-event"))
        if index in notes:
            at_right = direction in TO_RECEIVER
            x, anchor = (RIGHT + 10, "start") if at_right else (LEFT - 10, "end")
            if event == "app-publish" or event in ("connection-lost", "reconnect"):
                x, anchor = RIGHT + 10, "start"
            out.append(_text(x, y + 24, notes[index], anchor=anchor, css="pp-msc-replay"))
    out.append("</svg>")
    return "".join(out)
