"""Evidence of pubproof explore built by hand, as the probe records it: packets from
their bytes (described as the probe describes them) and events; the explorer's tests
share it (test_explore_units, test_explore_answers)."""

from __future__ import annotations

from typing import Any

from pubproof.model.editions import Edition, resolve_readings
from pubproof.probe.frames import describe_bytes

V311 = Edition.V311
R311 = resolve_readings(V311, {})
TOKEN = "abc123"


class Evidence:
    """Entries in the probe's format, from bytes (described as the probe describes them)."""

    def __init__(self, edition: Edition = V311) -> None:
        self.edition = edition
        self.entries: list[dict[str, Any]] = []

    def sent(self, client: str, hexed: str, **extra: Any) -> Evidence:
        return self._packet("to-broker", client, hexed, extra)

    def got(self, client: str, hexed: str) -> Evidence:
        return self._packet("from-broker", client, hexed, {})

    def _packet(self, direction: str, client: str, hexed: str, extra: dict[str, Any]) -> Evidence:
        fields, _ = describe_bytes(bytes.fromhex(hexed), self.edition, R311)
        t = len(self.entries) * 0.001
        self.entries.append({**fields, "dir": direction, "client": client, "hex": hexed,
                             "t": t, **extra})  # fmt: skip
        return self

    def event(self, name: str, client: str | None = None, **details: Any) -> Evidence:
        self.entries.append({"event": name, "client": client, **details,
                             "t": len(self.entries) * 0.001})  # fmt: skip
        return self


def connect(client_id: str, clean: bool = True) -> str:
    body = b"\x00\x04MQTT\x04" + bytes((2 if clean else 0,)) + b"\x00\x3c"
    body += len(client_id).to_bytes(2, "big") + client_id.encode()
    return (bytes((0x10, len(body))) + body).hex()


def subscribe(packet_id: int, topic_filter: str, qos: int) -> str:
    body = packet_id.to_bytes(2, "big") + len(topic_filter).to_bytes(2, "big")
    body += topic_filter.encode() + bytes((qos,))
    return (bytes((0x82, len(body))) + body).hex()


def publish(topic: str, payload: bytes, qos: int = 0, packet_id: int = 1,
            retain: bool = False) -> str:  # fmt: skip
    body = len(topic).to_bytes(2, "big") + topic.encode()
    body += packet_id.to_bytes(2, "big") if qos else b""
    body += payload
    return (bytes((0x30 | qos << 1 | int(retain), len(body))) + body).hex()


def ack(kind: int, packet_id: int) -> str:
    return (bytes((kind, 2)) + packet_id.to_bytes(2, "big")).hex()


CONNACK = "20020000"
PUBACK, PUBREC, PUBREL, PUBCOMP = 0x40, 0x50, 0x62, 0x70
T = f"pubproof/{TOKEN}/e1/a"
