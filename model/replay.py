"""``replay(trace)``: judge a trace with the model's sessions.

A trace is a list of entries: packets ``P`` with ``dir`` ("to-receiver" / "to-sender", or
"c2s" / "s2c") and ``conn``, and events (``app-publish``, ``connection-lost``,
``reconnect``). The sending end is the client; the receiving end the server. Each packet
is handed to the end it travels to, and what that end does is recorded: so a
counterexample from :mod:`pubproof.proofs` can be replayed against the real tables, and a
captured or probed exchange can be judged the same way.

An ``app-publish`` event (``qos``, and ``packet_id``, ``topic``, ``payload_hex`` when the
trace gives them) is the sending application publishing: the sending end takes up the
flow, so the acknowledgements that come back find it waiting for them. Without a
``packet_id`` the end allocates its own; with one it uses that one, and one still in use
is judged [MQTT-2.3.1-2]. A ``connection-lost`` event changes no end's state (what was in
flight is the network's); the ``reconnect`` that follows does.

An MQTT 5.0 trace (``edition=Edition.V50``, or any entry with ``reason_code`` or
``properties``) is judged by the 5.0 sessions (:class:`~pubproof.model.session50.
SessionModel50`) with the limits given (each end's Receive Maximum and Topic Alias
Maximum); a PUBLISH entry may carry ``refuse`` (a Reason Code of 0x80 or more: the
receiving application refuses the message), and the outputs add ``wait`` and
``disconnect`` (:meth:`Replay.disconnects`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pubproof.model.editions import Edition
from pubproof.model.flows import Method
from pubproof.model.session import Output, SessionModel
from pubproof.model.session50 import Output50, SessionModel50
from pubproof.model.trace import P

_TO_RECEIVER = {"to-receiver", "c2s"}
_TO_SENDER = {"to-sender", "s2c"}


@dataclass(slots=True)
class Replay:
    """What the two ends did, step by step."""

    steps: list[tuple[Mapping[str, Any], list[Output] | list[Output50]]] = field(
        default_factory=list
    )

    def deliveries(self, end: str = "receiver") -> list[P]:
        """Messages delivered to the application at one end."""
        out: list[P] = []
        for entry, outputs in self.steps:
            at = "receiver" if entry.get("dir") in _TO_RECEIVER else "sender"
            if at == end:
                out += [o.packet for o in outputs if o.kind == "deliver" and o.packet is not None]
        return out

    def judgements(self) -> list[Output | Output50]:
        return [
            o for _, outputs in self.steps for o in outputs if o.kind in ("violation", "tolerated")
        ]

    def disconnects(self) -> list[Output50]:
        """The DISCONNECTs either end sent (5.0), with their Reason Codes."""
        return [
            o
            for _, outputs in self.steps
            for o in outputs
            if isinstance(o, Output50) and o.kind == "disconnect"
        ]


def replay(
    trace: Iterable[Mapping[str, Any]],
    *,
    method: Method = Method.B,
    edition: Edition | None = None,
    receive_maximum: int = 65535,
    topic_alias_maximum: int = 65535,
) -> Replay:
    """Feed every packet of ``trace`` to the end it travels to; record what each end does.
    ``receive_maximum`` and ``topic_alias_maximum`` are the receiving end's (5.0)."""
    entries = list(trace)
    if edition is Edition.V50 or (
        edition is None and any("reason_code" in e or "properties" in e for e in entries)
    ):
        return _replay50(entries, method, receive_maximum, topic_alias_maximum)
    sender, receiver = SessionModel(method=method), SessionModel(method=method)
    result = Replay()
    for entry in entries:
        direction = entry.get("dir")
        packet = {k: v for k, v in entry.items() if k not in ("dir", "conn")}
        if direction in _TO_RECEIVER:
            result.steps.append((entry, receiver.receive(packet)))  # type: ignore[arg-type]
        elif direction in _TO_SENDER:
            result.steps.append((entry, sender.receive(packet)))  # type: ignore[arg-type]
        elif entry.get("event") == "app-publish":
            outputs = sender.publish(
                str(entry.get("topic", "")),
                bytes.fromhex(str(entry.get("payload_hex", ""))),
                int(entry.get("qos", 0)),
                bool(entry.get("retain", False)),
                packet_id=entry.get("packet_id"),
            )
            result.steps.append((entry, outputs))
        elif entry.get("event") == "reconnect":
            resume = entry.get("session", "resumed") == "resumed"
            outputs = sender.reconnect(resume=resume) + receiver.reconnect(resume=resume)
            result.steps.append((entry, outputs))
        else:
            result.steps.append((entry, []))
    return result


def _replay50(
    trace: list[Mapping[str, Any]], method: Method, receive_maximum: int, alias_maximum: int
) -> Replay:
    receiver = SessionModel50(
        method=method, receive_maximum=receive_maximum, topic_alias_maximum=alias_maximum
    )
    sender = SessionModel50(
        method=method, peer_receive_maximum=receive_maximum, peer_topic_alias_maximum=alias_maximum
    )
    result = Replay()
    for entry in trace:
        direction = entry.get("dir")
        packet = {k: v for k, v in entry.items() if k not in ("dir", "conn", "refuse")}
        if direction in _TO_RECEIVER:
            refuse = int(entry.get("refuse", 0))
            result.steps.append((entry, receiver.receive(packet, refuse=refuse)))  # type: ignore[arg-type]
        elif direction in _TO_SENDER:
            result.steps.append((entry, sender.receive(packet)))  # type: ignore[arg-type]
        elif entry.get("event") == "app-publish":
            outputs = sender.publish(
                str(entry.get("topic", "")),
                bytes.fromhex(str(entry.get("payload_hex", ""))),
                int(entry.get("qos", 0)),
                bool(entry.get("retain", False)),
            )
            result.steps.append((entry, outputs))
        elif entry.get("event") == "reconnect":
            resume = entry.get("session", "resumed") == "resumed"
            outputs = sender.reconnect(resume=resume) + receiver.reconnect(resume=resume)
            result.steps.append((entry, outputs))
        else:
            result.steps.append((entry, []))
    return result
