"""MQTT 5.0: what a well-behaved client makes of what the broker sent one probe client.

A :class:`ClientLink50` plays the model client (:class:`pubproof.model.session50.
SessionModel50`, driven by the 5.0 flow and Topic Alias tables) on the receiving side of
one client's connections: it takes the limits the client declared in CONNECT and the
broker in CONNACK, resumes the session when CONNACK says Session Present after Clean
Start 0 (else starts it afresh), and hands it every PUBLISH-family packet the broker sent.
Its deliveries carry the resolved topic name and the properties; a packet the model client
must answer with DISCONNECT (an alias it holds no mapping for, more QoS 1 and 2 messages
than its Receive Maximum) is a violation of the rules the tables cite.

Packets after the probe's own case are not fed (the case judge reads them), as in
:mod:`pubproof.probe.judge_link`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pubproof.judge.findings import VIOLATION, Finding, Source
from pubproof.model.session50 import SessionModel50
from pubproof.probe.evidence import TO_BROKER, Entry

FLOW_TYPES = frozenset({"PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP"})
ENTRY_KEYS = frozenset({"dir", "client", "hex", "t", "case"})
DEFAULT_RECEIVE_MAXIMUM = 65535


class ClientLink50:
    """Feed it the entries of a check in order; read its findings and deliveries."""

    __slots__ = ("after_case", "clean_start", "client", "deliveries", "findings", "model", "own")

    def __init__(self, client: str) -> None:
        self.client = client
        self.model: SessionModel50 | None = None
        self.own: Mapping[str, Any] = {}
        self.clean_start = True
        self.findings: list[Finding] = []
        self.deliveries: list[Mapping[str, Any]] = []
        self.after_case = False

    def feed(self, index: int, entry: Entry) -> None:
        """Judge the next entry of the check."""
        if "event" in entry or entry.get("client") != self.client:
            return
        if entry.get("case") or entry.get("type") == "CONNECT":
            self.after_case = bool(entry.get("case"))
        if "error" in entry or self.after_case:
            return
        kind = entry["type"]
        if kind == "CONNECT":
            self.own = entry.get("properties", {})
            self.clean_start = bool(entry.get("clean_start"))
            return
        if entry["dir"] == TO_BROKER:
            return
        if kind == "CONNACK":
            self._connack(entry)
        elif kind in FLOW_TYPES and self.model is not None:
            self._received({k: v for k, v in entry.items() if k not in ENTRY_KEYS})

    def _connack(self, entry: Entry) -> None:
        theirs = entry.get("properties", {})
        limits = {
            "receive_maximum": self.own.get("receive_maximum", DEFAULT_RECEIVE_MAXIMUM),
            "topic_alias_maximum": self.own.get("topic_alias_maximum", 0),
            "peer_receive_maximum": theirs.get("receive_maximum", DEFAULT_RECEIVE_MAXIMUM),
            "peer_topic_alias_maximum": theirs.get("topic_alias_maximum", 0),
        }
        resume = not self.clean_start and bool(entry.get("session_present"))
        if self.model is None or not resume:
            self.model = SessionModel50(**limits)
            return
        for key, value in limits.items():
            setattr(self.model, key, value)
        self.model.reconnect(resume=True)

    def _received(self, packet: dict[str, Any]) -> None:
        assert self.model is not None
        for output in self.model.receive(packet):  # type: ignore[arg-type]
            if output.kind == "deliver" and output.packet is not None:
                self.deliveries.append(output.packet)
            elif output.kind == "disconnect":
                code = f"0x{output.reason_code or 0:02X}"
                message = f"{self.client}: {output.note or 'the model client closes'}"
                self.findings.append(
                    Finding(
                        verdict=VIOLATION, rules=output.rules, source=Source.LINK,
                        message=f"{message} (DISCONNECT {code})", role="broker",
                    )
                )  # fmt: skip
                self.model = None  # the model client closed the connection

    def finish(self) -> None:
        """The evidence ends."""
