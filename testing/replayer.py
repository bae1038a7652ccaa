"""Replay a pubproof reproducer against an MQTT broker: the standard library only.

This file is the body of every reproducer script ``pubproof explore`` writes: the script
is this module followed by the reproducer's data (``DATA``) and a call of :func:`main`.
It needs nothing but Python 3.9 or later, so a broker's maintainers can run it as it is::

    python replay.py HOST PORT [--trace FILE] [--timeout SECONDS]

Theory of operation
-------------------
The data holds the *program*: the packets pubproof's clients sent, in order, and between
them what the broker had sent each client by then. The script opens a connection for a
client before its CONNECT, sends each packet as recorded (the run's token in client ids
and topic names replaced by a fresh one of the same length, so the bytes keep their
lengths), and before each send waits (at most ``--timeout`` seconds) until the broker has
sent each client as many packets as it had in the recording, or closed the connection.
An acknowledgement of a packet the broker numbered (a PUBACK or PUBREC of its PUBLISH, a
PUBCOMP of its PUBREL) takes the packet identifier the broker used this time. Waits
(``quiet``) are kept as recorded.

At the end the script compares what the broker sent each client, packet by packet
(packet identifiers the broker chose left out), with the recording: the same means the
broker did again what failed the rule (exit status 1: the failure stands); anything else
means it answered otherwise (exit status 0; ``pubproof replay`` judges whether the rule
still fails). ``--trace FILE`` writes every packet both ways and every event as JSON
lines, the evidence ``pubproof replay`` judges with the model.
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import socket
import sys
import time
from collections.abc import Sequence
from typing import Any

PUBLISH, PUBREL = 3, 6
TYPES = {1: "CONNECT", 2: "CONNACK", 3: "PUBLISH", 4: "PUBACK", 5: "PUBREC", 6: "PUBREL",
         7: "PUBCOMP", 8: "SUBSCRIBE", 9: "SUBACK", 10: "UNSUBSCRIBE", 11: "UNSUBACK",
         12: "PINGREQ", 13: "PINGRESP", 14: "DISCONNECT", 15: "AUTH"}  # fmt: skip


def frame(buffer: bytearray) -> bytes | None:
    """The first whole packet in ``buffer`` (taken out), or None."""
    length, multiplier, at = 0, 1, 1
    while True:
        if at >= len(buffer):
            return None
        byte = buffer[at]
        length += (byte & 0x7F) * multiplier
        multiplier *= 128
        at += 1
        if not byte & 0x80:
            break
        if at > 4:
            raise ValueError("a Remaining Length of more than four bytes")
    if len(buffer) < at + length:
        return None
    packet = bytes(buffer[: at + length])
    del buffer[: at + length]
    return packet


def body_start(packet: bytes) -> int:
    """Where the variable header starts (after the type byte and Remaining Length)."""
    at = 1
    while packet[at] & 0x80:
        at += 1
    return at + 1


def numbered(packet: bytes) -> int | None:
    """The packet identifier of a PUBLISH of QoS 1 or 2, or of a PUBREL, else None."""
    kind, at = packet[0] >> 4, body_start(packet)
    if kind == PUBREL:
        return int.from_bytes(packet[at : at + 2], "big")
    if kind == PUBLISH and (packet[0] >> 1) & 3:
        topic_length = int.from_bytes(packet[at : at + 2], "big")
        at += 2 + topic_length
        return int.from_bytes(packet[at : at + 2], "big")
    return None


def summary(packet: bytes, token: str) -> str:
    """A packet in words, for the comparison (``token``: the run's, replaced)."""
    kind, at = packet[0] >> 4, body_start(packet)
    name = TYPES.get(kind, f"type {kind}")
    if kind == PUBLISH:
        qos = (packet[0] >> 1) & 3
        topic_length = int.from_bytes(packet[at : at + 2], "big")
        topic = packet[at + 2 : at + 2 + topic_length].decode("utf-8", "replace")
        rest = packet[at + 2 + topic_length + (2 if qos else 0) :]
        flags = f"QoS {qos}" + (" DUP" if packet[0] & 8 else "")
        flags += " RETAIN" if packet[0] & 1 else ""
        return f"PUBLISH {flags} {topic.replace(token, '{run}')} {rest.hex()}"
    if kind == PUBREL:
        return "PUBREL " + packet[at + 2 :].hex()  # its identifier is the broker's
    return f"{name} {packet[at:].hex()}"


class Replay:
    """The clients' connections, what each received, and the trace."""

    def __init__(self, host: str, port: int, timeout: float, token: str, fresh: str) -> None:
        self.host, self.port, self.timeout = host, port, timeout
        self.token, self.fresh = token, fresh
        self.socks: dict[str, socket.socket] = {}
        self.buffers: dict[str, bytearray] = {}
        self.received: dict[str, list[bytes]] = {}
        self.numbered: dict[str, list[int]] = {}  # the identifiers the broker chose, in order
        self.trace: list[dict[str, Any]] = []
        self.t0 = time.monotonic()

    def note(self, **entry: Any) -> None:
        entry["t"] = round(time.monotonic() - self.t0, 4)
        self.trace.append(entry)

    def open(self, client: str) -> None:
        self.close(client, "")
        sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.socks[client], self.buffers[client] = sock, bytearray()

    def close(self, client: str, event: str = "dropped") -> None:
        sock = self.socks.pop(client, None)
        if sock is not None:
            sock.close()
            if event:
                self.note(event=event, client=client)

    def send(self, client: str, data: bytes, case: bool = False,
             breaks: Sequence[str] = ()) -> None:  # fmt: skip
        data = data.replace(self.token.encode(), self.fresh.encode())
        entry: dict[str, Any] = {"dir": "to-broker", "client": client, "hex": data.hex()}
        if case:
            entry["case"] = True
        if breaks:  # the client breaks these rules of its own on purpose (a wrong answer)
            entry["breaks"] = list(breaks)
        self.note(**entry)
        sock = self.socks.get(client)
        if sock is not None:
            try:
                sock.sendall(data)
            except OSError:
                self.close(client, "closed")

    def pump(self, seconds: float) -> bool:
        """Read every connection for up to ``seconds``; whether anything came."""
        if not self.socks:
            time.sleep(max(0.0, seconds))
            return False
        with selectors.DefaultSelector() as selector:
            for client, sock in self.socks.items():
                selector.register(sock, selectors.EVENT_READ, client)
            ready = selector.select(max(0.0, seconds))
        for key, _ in ready:
            self.read(key.data)
        return bool(ready)

    def read(self, client: str) -> None:
        sock = self.socks[client]
        try:
            data = sock.recv(65536)
        except OSError:
            data = b""
        if not data:
            self.close(client, "closed")
            return
        buffer = self.buffers[client]
        buffer += data
        while (packet := frame(buffer)) is not None:
            self.note(dir="from-broker", client=client, hex=packet.hex())
            self.received.setdefault(client, []).append(packet)
            identifier = numbered(packet)
            if identifier is not None:
                self.numbered.setdefault(client, []).append(identifier)

    def expect(self, counts: dict[str, int]) -> None:
        """Wait until each client has received as many packets as recorded (or closed)."""
        end = time.monotonic() + self.timeout

        def short() -> list[str]:
            return [c for c, n in counts.items()
                    if len(self.received.get(c, [])) < n and c in self.socks]  # fmt: skip

        while short():
            left = end - time.monotonic()
            if left <= 0:
                self.note(event="timeout", client=short()[0], waiting_for="the recorded packets",
                          seconds=self.timeout)  # fmt: skip
                return
            self.pump(left)

    def closed(self, client: str) -> None:
        """Wait until the broker closes the client's connection, as it did when recorded."""
        end = time.monotonic() + self.timeout
        while client in self.socks and (left := end - time.monotonic()) > 0:
            self.pump(left)
        if client in self.socks:
            self.note(event="timeout", client=client, waiting_for="the close",
                      seconds=self.timeout)  # fmt: skip

    def quiet(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            self.pump(left)
        self.note(event="quiet", client=None, seconds=seconds)

    def answer(self, client: str, data: bytes, index: int) -> bytes:
        """An acknowledgement of the broker's ``index``-th numbered packet, with the
        packet identifier the broker used this time."""
        chosen = self.numbered.get(client, [])
        if index >= len(chosen):
            return data
        at = body_start(data)
        return data[:at] + chosen[index].to_bytes(2, "big") + data[at + 2 :]


def run(data: dict[str, Any], host: str, port: int, timeout: float) -> Replay:
    """Replay the program of ``data``."""
    token = data["token"]
    replay = Replay(host, port, timeout, token, os.urandom(len(token) // 2 + 1).hex()[: len(token)])
    for action in data["program"]:
        what = action[0]
        if what == "step":
            replay.note(event="step", client=None, n=action[1], move=action[2])
        elif what == "expect":
            replay.expect(action[1])
        elif what == "open":
            replay.open(action[1])
        elif what == "send":
            client, hexed, index, case = action[1:5]
            packet = bytes.fromhex(hexed)
            if index is not None:
                packet = replay.answer(client, packet, index)
            replay.send(client, packet, case, action[5] if len(action) > 5 else ())
        elif what == "drop":
            replay.close(action[1])
        elif what == "closed":
            replay.closed(action[1])
        elif what == "quiet":
            replay.quiet(action[1])
    replay.quiet(data.get("quiet", 0.3))
    for client in list(replay.socks):
        replay.close(client, "")
    for topic in data.get("retained", []):  # clean up: the retained messages the steps left
        clear(host, port, timeout, topic.replace(token, replay.fresh), data["edition"])
    return replay


def clear(host: str, port: int, timeout: float, topic: str, edition: str) -> None:
    """Delete the retained message of ``topic`` (a QoS 0 PUBLISH of zero bytes, RETAIN)."""
    name, level = {"3.1": (b"MQIsdp", 3), "3.1.1": (b"MQTT", 4), "5.0": (b"MQTT", 5)}[edition]
    props = b"\x00" if edition == "5.0" else b""
    client_id = b"ppclean" + os.urandom(4).hex().encode()
    body = (len(name).to_bytes(2, "big") + name + bytes((level, 2)) + b"\x00\x3c" + props
            + len(client_id).to_bytes(2, "big") + client_id)  # fmt: skip
    topic_bytes = topic.encode()
    publish = len(topic_bytes).to_bytes(2, "big") + topic_bytes + props
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(bytes((0x10, len(body))) + body)
            sock.recv(64)
            sock.sendall(bytes((0x31, len(publish))) + publish + b"\xe0\x00")
            time.sleep(0.05)
    except OSError:
        pass


def compare(data: dict[str, Any], replay: Replay) -> list[str]:
    """What the broker sent a client that the recording does not show, or the other way
    round (client by client; the order of a client's packets aside: a PINGRESP may come
    before or after a copy the broker forwards at the same time)."""
    differences = []
    for client in sorted({*data["received"], *replay.received}):
        recorded = sorted(data["received"].get(client, []))
        now = sorted(summary(p, replay.fresh) for p in replay.received.get(client, []))
        for packet in recorded:
            if packet in now:
                now.remove(packet)
            else:
                differences.append(f"{client}: recorded {packet}; not sent now")
        differences += [f"{client}: sent now {packet}; not recorded" for packet in now]
    return differences


def main(data: dict[str, Any], argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=f"Replay: {data['rule']}")
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("--trace", help="write the trace (JSON lines) to this file")
    parser.add_argument("--timeout", type=float, default=2.0, help="seconds per wait")
    args = parser.parse_args(argv)
    say = sys.stdout.write
    say(f"MQTT {data['edition']}: {data['rule']}\n")
    say(f"expected: {data['expected']}\n")
    say(f"recorded: {data['observed']}\n")
    replay = run(data, args.host, args.port, args.timeout)
    if args.trace:
        with open(args.trace, "w", encoding="utf-8") as out:
            for entry in replay.trace:
                out.write(json.dumps(entry) + "\n")
    differences = compare(data, replay)
    if not differences:
        say("the broker did what the recording shows: the failure stands\n")
        return 1
    say("the broker answered otherwise than recorded (pubproof replay judges it):\n")
    for line in differences:
        say("  " + line + "\n")
    return 0
