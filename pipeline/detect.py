"""Which connections are MQTT, and which end is the client.

- the server port is one of ``ports`` (default 1883): MQTT. If the client's first bytes
  are not the start of a CONNECT (protocol name MQTT or MQIsdp) the connection gets status
  ``not-mqtt`` and its bytes are unparsed with that reason;
- the server port is one of ``tls_ports`` (8883): status ``encrypted-tls``, every byte
  unparsed with that reason, nothing parsed;
- any other port: MQTT when the client's first bytes start a CONNECT (which needs the
  handshake, so the connection's start, in the capture); otherwise its frames go to
  quarantine with reason ``tcp-not-mqtt`` (one row per connection).

Until the client's first bytes are there (or ``HOLD_SEGMENTS`` segments went by) the
segments are held, so nothing is framed before the decision. Roles: the end that sent the
SYN is the client; without one, the end on a known server port is the server.
"""

from __future__ import annotations

from pubproof.judge.packets import PROTOCOL, RL_MAX_BYTES, RL_MORE, PacketType
from pubproof.pipeline.dissect import ACK, SYN, Segment

HOLD_SEGMENTS = 64
#: CONNECT's first byte: type 1, flags 0 (3.1.1 section 3.1.1)
CONNECT_FIRST = PacketType.CONNECT << 4
#: the protocol names a CONNECT starts with, as its bytes: length and name
PROTOCOL_NAMES = tuple(
    len(name).to_bytes(2, "big") + name.encode("ascii") for name, _ in PROTOCOL.values()
)
Endpoint = tuple[str, int]


def is_connect_start(data: bytes) -> bool:
    """Whether ``data`` starts like a CONNECT: type 1, flags 0, a Remaining Length, and the
    protocol name "MQTT" (3.1.1) or "MQIsdp" (3.1). Only the bytes there are checked."""
    if not data or data[0] != CONNECT_FIRST:
        return False
    pos = 1
    while pos < len(data) and data[pos] & RL_MORE:
        pos += 1
        if pos > RL_MAX_BYTES:
            return False
    pos += 1
    rest = data[pos:]
    return any(rest[: len(expected)] == expected[: len(rest)] for expected in PROTOCOL_NAMES)


def connect_level(data: bytes) -> int | None:
    """The protocol level of a whole CONNECT packet (the byte after the protocol name), or
    None when its bytes do not reach it."""
    pos = 1
    while pos < len(data) and data[pos] & RL_MORE:
        pos += 1
    pos += 1
    if pos + 2 > len(data):
        return None
    at = pos + 2 + (data[pos] << 8 | data[pos + 1])
    return data[at] if at < len(data) else None


def roles(
    first: Segment, ports: frozenset[int], tls_ports: frozenset[int]
) -> tuple[Endpoint, Endpoint]:
    """(client, server) from a connection's first segment: the end that sent the SYN is the
    client; without one, the end on a known server port is the server."""
    if first.flags & SYN:
        to_client = bool(first.flags & ACK)  # a SYN-ACK goes to the client
    else:
        known = ports | tls_ports
        to_client = first.sport in known and first.dport not in known
    if to_client:
        return (first.dst, first.dport), (first.src, first.sport)
    return (first.src, first.sport), (first.dst, first.dport)


def mode(port: int, ports: frozenset[int], tls_ports: frozenset[int]) -> str:
    """What the server port says before any byte is seen: ``tls``, ``mqtt`` or ``?``."""
    return "tls" if port in tls_ports else "mqtt" if port in ports else "?"


def verdict(
    mode: str, handshake: bool, first: bytes | None, *, final: bool, held: int
) -> str | None:
    """The decision from the client's first bytes (``first``, None while they are not
    there): ``tls``, ``mqtt``, ``not-mqtt`` or ``other``; None to hold on. ``handshake``:
    the client's SYN is in the capture; ``held``: the segments held so far."""
    if mode == "tls":
        return "tls"
    if not handshake:
        # no handshake: the client's first bytes are not in the capture
        return "mqtt" if mode == "mqtt" else "other"
    if first is None and not final and held < HOLD_SEGMENTS:
        return None
    if first is not None and is_connect_start(first):
        return "mqtt"
    if mode == "mqtt":
        return "mqtt" if first is None else "not-mqtt"
    return "other"
