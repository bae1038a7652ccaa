"""Captures of many situations at once (sessions, faults, TCP trouble, other traffic,
damage), for the tests that hold the Spark engine to the python engine."""

from __future__ import annotations

from support.pipeline_builder import (
    CONNACK,
    Conn,
    ack,
    connect,
    ether,
    other_block,
    pcap,
    pcapng,
    publish,
    sll,
)


def many_captures() -> dict[str, bytes]:
    """Many situations at once: sessions, faults, TCP trouble, other traffic, damage."""
    files: dict[str, bytes] = {}
    frames: list[bytes] = []
    for i in range(12):
        conn = Conn(client=(f"10.0.0.{i + 1}", 40000 + i), isn={"c2s": 1000 * i, "s2c": 77 * i})
        frames += conn.handshake()
        frames.append(conn.segment("c2s", connect(f"client-{i}")))
        frames.append(conn.segment("s2c", CONNACK))
        for k in range(1, 6):
            qos = k % 3
            packet_id = k if qos else None
            frames.append(
                conn.segment(
                    "c2s", publish(f"t/{i}/{k}", b"v" * k * 40, qos=qos, packet_id=packet_id)
                )
            )
            if qos == 1:
                frames.append(conn.segment("s2c", ack("PUBACK", k)))
            elif qos == 2:
                frames.append(conn.segment("s2c", ack("PUBREC", k)))
                frames.append(conn.segment("c2s", ack("PUBREL", k)))
        if i % 4 == 1:
            frames.append(conn.segment("c2s", publish("bad/+", b"x")))
        if i % 4 == 2:
            frames.append(conn.segment("s2c", ack("PUBACK", 999)))
        if i % 4 == 3:
            frames.append(conn.segment("c2s", ack("PUBREL", 500)))
            conn.segment("c2s", publish("lost", b"l" * 30))
            frames.append(conn.segment("c2s", publish("after-gap", b"g")))
        frames += conn.close()
    # interleave the connections' frames deterministically (a stride walk)
    order = sorted(range(len(frames)), key=lambda n: (n % 7, n))
    files["many.pcap"] = pcap([ether(frames[n]) for n in order])
    reuse = Conn(client=("10.9.9.9", 5555))
    again = Conn(client=("10.9.9.9", 5555), isn={"c2s": 123456, "s2c": 654321})
    both = [
        *reuse.handshake(),
        reuse.segment("c2s", connect("r")),
        *reuse.close(),
        *again.handshake(),
        again.segment("c2s", connect("r")),
        again.segment("c2s", publish("x", b"", qos=3 << 0, first=0x36, packet_id=1)),
    ]
    files["reuse.pcapng"] = pcapng(
        [(n % 2, ether(f) if n % 2 == 0 else sll(f)) for n, f in enumerate(both)],
        interfaces=((1, 65535), (113, 65535)),
        extra=other_block(),
    )
    tls = Conn(server=("10.0.0.2", 8883))
    web = Conn(server=("10.0.0.3", 80))
    files["other.pcap"] = pcap(
        [
            ether(f)
            for f in [
                *tls.handshake(),
                tls.segment("c2s", b"\x16\x03\x01hello"),
                *web.handshake(),
                web.segment("c2s", b"GET /"),
                *web.close(),
            ]
        ],
        snaplen=60,
        endian=">",
    )
    files["broken.pcap"] = files["many.pcap"][:-7]
    return files
