"""Packet streams between a client and a server, faults included, in both editions: what
the tests feed the link judges (the readable ones of :mod:`pubproof.judge` and their
compiled twins in :mod:`pubproof.pipeline.fast`).

- 3.x: :data:`SEQUENCES` (Hypothesis), packets both ways with few packet identifiers
  (collisions are the point): every type, duplicates, DUP flags, unknown identifiers,
  reconnections with and without a clean session, refused and session-losing CONNACKs,
  QoS 0 and 3, other types; :func:`entry` is one entry of a probe's evidence around them
  (waits, closed and dropped connections, the probe's cases, unreadable packets, other
  clients).
- 5.0: :func:`stream` (a seed's random stream) and :data:`SEQUENCES50` (Hypothesis) of
  faulty 5.0 traffic: aliases out of bounds and unknown, QoS above Maximum QoS, RETAIN
  without Retain Available, Receive Maximum exceeded, error and 0x92 Reason Codes,
  reconnections with and without a session, a refused CONNACK; :func:`entry50` as
  :func:`entry`.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st

C2S, S2C = "c2s", "s2c"
Packet = tuple[str, dict[str, Any]]

# -- MQTT 3.1 and 3.1.1 -----------------------------------------------------------------------

IDS = st.integers(min_value=1, max_value=3)  # few identifiers: collisions are the point
TOPICS = st.sampled_from(["a", "b"])
PAYLOADS = st.sampled_from(["", "00", "ff"])


@st.composite
def packet(draw: st.DrawFn) -> Packet:
    """One 3.x packet, its direction mostly the usual one."""
    kind = draw(
        st.sampled_from(
            ["PUBLISH"] * 4 + ["PUBACK", "PUBREC", "PUBREL", "PUBCOMP"] * 2
            + ["CONNECT", "CONNACK"] * 2 + ["PINGREQ", "SUBSCRIBE"]
        )
    )  # fmt: skip
    # CONNECT is the client's and CONNACK the server's, mostly: reconnects are the point
    usual = {"CONNECT": [C2S] * 5 + [S2C], "CONNACK": [S2C] * 5 + [C2S]}
    direction = draw(st.sampled_from(usual.get(kind, [C2S, S2C])))
    if kind == "PUBLISH":
        qos = draw(st.sampled_from([0, 1, 1, 2, 2, 3]))
        fields: dict[str, Any] = {
            "type": kind, "dup": draw(st.booleans()), "qos": qos, "retain": draw(st.booleans()),
            "topic": draw(TOPICS), "packet_id": draw(IDS) if qos else None,
            "payload_hex": draw(PAYLOADS),
        }  # fmt: skip
    elif kind == "CONNECT":
        fields = {"type": kind, "clean_session": draw(st.booleans()), "client_id": "c"}
    elif kind == "CONNACK":
        fields = {
            "type": kind,
            "session_present": draw(st.booleans()),
            "return_code": draw(st.sampled_from([0, 0, 0, 5])),
        }
    elif kind in ("PINGREQ", "SUBSCRIBE"):
        fields = {"type": kind}
    else:
        fields = {"type": kind, "packet_id": draw(IDS)}
    return direction, fields


@st.composite
def reconnect(draw: st.DrawFn) -> list[Packet]:
    """A CONNECT and its CONNACK, resuming or not, accepted or refused."""
    connect = {"type": "CONNECT", "clean_session": draw(st.booleans()), "client_id": "c"}
    connack = {
        "type": "CONNACK",
        "session_present": draw(st.booleans()),
        "return_code": draw(st.sampled_from([0, 0, 0, 5])),
    }
    return [(C2S, connect), (S2C, connack)]


@st.composite
def flow(draw: st.DrawFn) -> list[Packet]:
    """A QoS 1 or 2 PUBLISH and some of what may follow it on its identifier: the
    acknowledgements either way, a PUBREL, the same message again (DUP or not)."""
    sender = draw(st.sampled_from([C2S, S2C]))
    other = S2C if sender == C2S else C2S
    packet_id, qos = draw(IDS), draw(st.sampled_from([1, 2]))
    message = {
        "type": "PUBLISH", "dup": False, "qos": qos, "retain": False, "topic": draw(TOPICS),
        "packet_id": packet_id, "payload_hex": draw(PAYLOADS),
    }  # fmt: skip
    follow = st.sampled_from(
        [(other, "PUBACK"), (other, "PUBREC"), (other, "PUBCOMP"), (sender, "PUBREL"),
         (sender, "PUBLISH"), (sender, "DUP")]
    )  # fmt: skip
    packets = [(sender, message)]
    for direction, kind in draw(st.lists(follow, max_size=5)):
        if kind in ("PUBLISH", "DUP"):
            packets.append((direction, {**message, "dup": kind == "DUP"}))
        else:
            packets.append((direction, {"type": kind, "packet_id": packet_id}))
    return packets


SEQUENCES = st.lists(
    st.one_of(packet().map(lambda p: [p]), reconnect(), flow()), min_size=1, max_size=40
).map(lambda blocks: [p for block in blocks for p in block])


def stream3(seed: int, length: int = 60) -> list[Packet]:
    """Random 3.x traffic, faults included, both ways (as :data:`SEQUENCES`, from a seed)."""
    r = random.Random(seed)
    ids = range(1, r.choice([2, 3, 4]) + 1)
    packets: list[Packet] = []
    for _ in range(length):
        x, direction = r.random(), r.choice([C2S, S2C])
        if x < 0.06:
            fields = {"type": "CONNECT", "clean_session": r.random() < 0.5, "client_id": "c"}
            packets.append((C2S if r.random() < 0.85 else S2C, fields))
        elif x < 0.12:
            fields = {"type": "CONNACK", "session_present": r.random() < 0.5,
                      "return_code": r.choice([0, 0, 0, 5])}  # fmt: skip
            packets.append((S2C if r.random() < 0.85 else C2S, fields))
        elif x < 0.55:
            qos = r.choice([0, 1, 1, 2, 2, 3])
            packets.append((direction, {
                "type": "PUBLISH", "dup": r.random() < 0.3, "qos": qos,
                "retain": r.random() < 0.2, "topic": r.choice(["a", "b"]),
                "packet_id": r.choice(ids) if qos else None,
                "payload_hex": r.choice(["", "00", "ff"]),
            }))  # fmt: skip
        elif x < 0.96:
            kind = r.choice(["PUBACK", "PUBREC", "PUBREL", "PUBCOMP"])
            packets.append((direction, {"type": kind, "packet_id": r.choice(ids)}))
        else:
            packets.append((direction, {"type": r.choice(["PINGREQ", "SUBSCRIBE"])}))
    return packets


#: the probe's direction names
DIRS = {C2S: "to-broker", S2C: "from-broker"}


def evidence(packets: list[Packet], *, v50: bool) -> list[dict[str, Any]]:
    """``packets`` as a probe's evidence of the client ``c``: a wait after every seventh
    packet, the connection closed after every 23rd (3.x: QoS 3 as QoS 2, as the probe's
    decoder hands it over)."""
    entries: list[dict[str, Any]] = []
    for i, (direction, fields) in enumerate(packets):
        found = {**fields, "dir": DIRS[direction], "client": "c"}
        if not v50 and found["type"] == "PUBLISH" and found["qos"] == 3:
            found["qos"] = 2
        entries.append(found)
        if i % 7 == 6:
            entries.append({"event": "quiet", "client": None})
        if i % 23 == 22:
            entries.append({"event": "closed", "client": "c"})
    return entries


def _entry(draw: st.DrawFn, packets: st.SearchStrategy[Packet], v50: bool) -> dict[str, Any]:
    choice = draw(st.sampled_from(["packet"] * 8 + ["event", "case", "error", "other"]))
    if choice == "event":
        event = draw(st.sampled_from(["quiet", "timeout", "deadline", "closed", "dropped"]))
        return {"event": event, "client": draw(st.sampled_from(["c", "c", None, "o"]))}
    direction, fields = draw(packets)
    found = {**fields, "dir": DIRS[direction], "client": "o" if choice == "other" else "c"}
    if found["type"] == "PUBLISH" and found["qos"] == 3 and not v50:
        found["qos"] = 2  # the probe's decoder never hands over QoS 3 (3.1.1 rejects it)
    if choice == "case":
        found["case"] = True
    if choice == "error":
        found["error"] = {"rule": None, "offset": 0, "message": "unreadable"}
    return found


@st.composite
def entry(draw: st.DrawFn) -> dict[str, Any]:
    """One entry of a 3.x probe's evidence for the client ``c``."""
    return _entry(draw, packet(), v50=False)


# -- MQTT 5.0 ---------------------------------------------------------------------------------


def _properties(r: random.Random, server: bool) -> dict[str, int]:
    chosen = {}
    if r.random() < 0.7:
        chosen["receive_maximum"] = r.choice([1, 2, 3, 65535])
    if r.random() < 0.7:
        chosen["topic_alias_maximum"] = r.choice([0, 1, 2, 3])
    if server and r.random() < 0.3:
        chosen["maximum_qos"] = r.choice([0, 1])
    if server and r.random() < 0.3:
        chosen["retain_available"] = r.choice([0, 1])
    return chosen


def packet50(r: random.Random, ids: range) -> Packet:
    """One random 5.0 packet, faults included."""
    x, direction = r.random(), r.choice([C2S, S2C])
    if x < 0.03:
        fields: dict[str, Any] = {"type": "CONNECT", "clean_start": r.random() < 0.5}
        return C2S, {**fields, "properties": _properties(r, False)}
    if x < 0.06:
        fields = {"type": "CONNACK", "session_present": r.random() < 0.6}
        fields["reason_code"] = r.choice([0, 0, 0, 0x80])
        return S2C, {**fields, "properties": _properties(r, True)}
    if x < 0.5:
        qos = r.choice([0, 1, 1, 2, 2])
        properties = {"topic_alias": r.choice([0, 1, 2, 3, 4])} if r.random() < 0.6 else {}
        return direction, {
            "type": "PUBLISH", "dup": r.random() < 0.3, "qos": qos,
            "retain": r.random() < 0.15, "topic": r.choice(["a", "b/c", "", "d"]),
            "packet_id": r.choice(ids) if qos else None,
            "payload_hex": r.choice(["00", "01"]), "properties": properties,
        }  # fmt: skip
    if x < 0.97:
        kind = r.choice(["PUBACK", "PUBREC", "PUBREL", "PUBCOMP"])
        code = r.choice([0, 0, 0, 0x10, 0x80, 0x92]) if r.random() < 0.5 else 0
        return direction, {"type": kind, "packet_id": r.choice(ids), "reason_code": code}
    return direction, {"type": r.choice(["DISCONNECT", "PINGREQ"])}


def stream(seed: int, length: int = 120) -> list[Packet]:
    """Random 5.0 traffic, faults included, both ways."""
    r = random.Random(seed)
    ids = range(1, r.choice([2, 4, 8]) + 1)
    return [packet50(r, ids) for _ in range(length)]


#: 5.0 traffic as Hypothesis draws it (each packet from a drawn seed: Hypothesis shrinks a
#: failing stream by dropping packets and by simpler seeds)
SEQUENCES50 = st.builds(
    lambda few, seeds: [packet50(random.Random(s), range(1, few + 1)) for s in seeds],
    st.sampled_from([2, 4, 8]),
    st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=60),
)


@st.composite
def entry50(draw: st.DrawFn) -> dict[str, Any]:
    """One entry of a 5.0 probe's evidence for the client ``c``."""
    packets = st.builds(
        lambda few, s: packet50(random.Random(s), range(1, few + 1)),
        st.sampled_from([2, 4]),
        st.integers(0, 2**32 - 1),
    )
    return _entry(draw, packets, v50=True)


def state(judge: Any) -> tuple[Any, ...]:
    """What a 5.0 link judge holds (either implementation: the attributes are named
    alike), its alias maps by content: to compare two judges of one implementation."""
    return (
        judge.judged_rx, judge.peer_rx,
        {k: (flow.state, flow.message) for k, flow in judge.judged_tx.items()},
        judge.peer_tx, judge.owed, judge.connections, judge.pending, judge.negotiated,
        judge.judged_aliases.mapping, judge.peer_aliases.mapping, judge.judged_quota,
        judge.peer_quota, judge.ended, judge.refusable, judge.peer_refusable, judge.topic,
        judge.offence,
    )  # fmt: skip
