"""Whatever the bytes, the pipeline never crashes and always reconciles: random damage to
valid captures (flipped, cut, duplicated and inserted bytes) and random frames."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.pipeline_builder import (
    CONNACK,
    Conn,
    ack,
    connect,
    ether,
    pcap,
    pcapng,
    publish,
    run_check,
)

from pubproof.pipeline.dissect import dissect


def _valid(fmt: str) -> bytes:
    conn = Conn()
    frames = [
        *conn.handshake(),
        conn.segment("c2s", connect("f")),
        conn.segment("s2c", CONNACK),
        conn.segment("c2s", publish("a/b", b"x" * 40, qos=1, packet_id=3)),
        conn.segment("s2c", ack("PUBACK", 3)),
        conn.segment("c2s", publish("q", b"y" * 10, qos=2, packet_id=4)),
        conn.segment("s2c", ack("PUBREC", 4)),
        conn.segment("c2s", ack("PUBREL", 4)),
        *conn.close(),
    ]
    return (
        pcap([ether(f) for f in frames])
        if fmt == "pcap"
        else pcapng([(0, ether(f)) for f in frames])
    )


_damage = st.lists(
    st.tuples(
        st.sampled_from(["flip", "cut", "insert", "repeat"]),
        st.integers(0, 10**6),
        st.binary(min_size=1, max_size=8),
    ),
    min_size=1,
    max_size=4,
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(fmt=st.sampled_from(["pcap", "pcapng"]), damage=_damage)
def test_damaged_captures_never_crash_and_reconcile(
    tmp_path: Path, fmt: str, damage: list[tuple[str, int, bytes]]
) -> None:
    data = bytearray(_valid(fmt))
    for op, where, chunk in damage:
        at = where % (len(data) + 1)
        if op == "flip" and at < len(data):
            data[at] ^= chunk[0] or 1
        elif op == "cut":
            del data[at:]
        elif op == "insert":
            data[at:at] = chunk
        elif op == "repeat":
            data[at:at] = data[at : at + 64]
    outcome = run_check(tmp_path, {f"d.{fmt}": bytes(data)})
    rec = outcome.reconciliation
    assert rec["ok"] is True
    count = outcome.count
    assert count("frames_in") == count("frames_used") + count("frames_quarantined")


@settings(max_examples=2000, deadline=None)
@given(
    linktype=st.sampled_from([0, 1, 101, 108, 113, 228, 229, 276, 147]),
    data=st.binary(max_size=120),
)
def test_dissect_never_raises(linktype: int, data: bytes) -> None:
    result = dissect(linktype, data)
    assert isinstance(result, str) or len(result.payload) <= result.payload_len
