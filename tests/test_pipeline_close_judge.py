"""[MQTT-4.8.0-1] on captures: the receiver of a packet the model rejects must close the
connection; an answer to that packet, or to a request sent after it, shows it read on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.pipeline_builder import (
    CONNACK,
    Conn,
    Outcome,
    ack,
    connect,
    ether,
    mqtt,
    pcap,
    publish,
    run_check,
)

from pubproof.judge.close import answer_of, request_of

PINGREQ, PINGRESP = mqtt(0xC0, b""), mqtt(0xD0, b"")
WILDCARD_QOS1 = publish("a/+", b"x", qos=1, packet_id=7)  # [MQTT-3.3.2-2] broken
FIRST = 6  # the frame of the first packet after CONNECT (4) and CONNACK (5)


def _run(
    tmp_path: Path, *packets: tuple[str, bytes], level: int = 4, close: bool = True
) -> Outcome:
    conn = Conn()
    frames = [
        *conn.handshake(),
        conn.segment("c2s", connect("cli", level=level)),
        conn.segment("s2c", CONNACK),
        *(conn.segment(direction, data) for direction, data in packets),
    ]
    if close:
        frames += conn.close()
    outcome = run_check(tmp_path, {"c.pcap": pcap([ether(f) for f in frames])})
    assert outcome.reconciliation["ok"] is True
    return outcome


def _closing(outcome: Outcome) -> list[dict[str, object]]:
    return [r for r in outcome.tables["violations"] if r["rule"] == "MQTT-4.8.0-1"]


def test_a_server_that_acknowledges_the_offending_publish_read_on(tmp_path: Path) -> None:
    outcome = _run(tmp_path, ("c2s", WILDCARD_QOS1), ("s2c", ack("PUBACK", 7)))
    (row,) = _closing(outcome)
    assert (row["kind"], row["role"], row["direction"], row["frame"]) == (
        "violation", "server", "s2c", FIRST + 1,
    )  # fmt: skip
    # the server owes the close; the wildcard is the client's fault, not the server's
    assert str(row["rules"]) == "MQTT-4.8.0-1"
    assert str(row["provoked"]).split(",") == ["MQTT-3.3.2-2", "MQTT-4.7.1-1"]
    assert "the PUBLISH of frame 6, which the model rejects" in str(row["message"])
    assert str(row["message"]).endswith("it answered that packet itself")
    evidence = json.loads(str(row["evidence"]))
    assert [(e["dir"], e["frame"]) for e in evidence] == [("c2s", FIRST), ("s2c", FIRST + 1)]
    assert evidence[0]["error"]["rule"] == "MQTT-3.3.2-2"
    assert (evidence[1]["type"], evidence[1]["packet_id"]) == ("PUBACK", 7)
    # the sender's own violation is still there, about the client
    (own,) = outcome.rows("violations", rule="MQTT-3.3.2-2")
    assert own["role"] == "client"
    # the later FIN (after the client's) does not excuse the answer
    assert outcome.tables["connections"][0]["closed"] == "fin"


def test_an_answer_to_a_later_request_shows_it_too(tmp_path: Path) -> None:
    outcome = _run(
        tmp_path,
        ("c2s", publish("a/#", b"x")),  # QoS 0: nothing to answer
        ("c2s", PINGREQ),
        ("s2c", PINGRESP),
        ("c2s", publish("b", b"y", qos=2, packet_id=3)),
        ("s2c", ack("PUBREC", 3)),
    )
    (row,) = _closing(outcome)
    assert row["frame"] == FIRST + 2  # the PINGRESP: the first answer to a later request
    assert "answered the PINGREQ of frame 7, sent after it" in str(row["message"])


def test_a_receiver_that_closes_without_answering_passes(tmp_path: Path) -> None:
    outcome = _run(tmp_path, ("c2s", WILDCARD_QOS1), ("c2s", PINGREQ))
    assert _closing(outcome) == []
    assert [r["rule"] for r in outcome.tables["violations"]] == ["MQTT-3.3.2-2"]


def test_an_answer_owed_before_the_offence_proves_nothing(tmp_path: Path) -> None:
    outcome = _run(
        tmp_path,
        ("c2s", publish("ok", b"1", qos=1, packet_id=5)),
        ("c2s", PINGREQ),
        ("c2s", publish("a/+", b"x")),  # the offence (QoS 0: nothing to answer)
        ("c2s", publish("ok", b"1", qos=1, packet_id=5, dup=True)),  # asks PUBACK 5 again
        ("c2s", PINGREQ),
        ("s2c", ack("PUBACK", 5)),  # first owed, first paid: the PUBLISH before the offence
        ("s2c", PINGRESP),  # the PINGREQ before it
    )
    assert _closing(outcome) == []
    # one more answer of each is an answer to the requests after the offence
    more = _run(
        tmp_path / "..",
        ("c2s", publish("ok", b"1", qos=1, packet_id=5)),
        ("c2s", publish("a/+", b"x")),
        ("c2s", publish("ok", b"1", qos=1, packet_id=5, dup=True)),
        ("s2c", ack("PUBACK", 5)),
        ("s2c", ack("PUBACK", 5)),
    )
    (row,) = _closing(more)
    assert row["frame"] == FIRST + 4


def test_a_client_receiver_is_judged_the_same(tmp_path: Path) -> None:
    outcome = _run(tmp_path, ("s2c", WILDCARD_QOS1), ("c2s", ack("PUBACK", 7)))
    (row,) = _closing(outcome)
    assert (row["role"], row["endpoint"]) == ("client", "cli")


def test_mqtt_31_names_no_receiver_action(tmp_path: Path) -> None:
    dup0 = publish("a", b"x", qos=1, packet_id=0)  # [MQTT-2.3.1-1] in both editions
    outcome = _run(tmp_path, ("c2s", dup0), ("c2s", PINGREQ), ("s2c", PINGRESP), level=3)
    assert outcome.tables["violations"] and _closing(outcome) == []


def test_a_reading_that_accepts_the_packet_makes_it_tolerated(tmp_path: Path) -> None:
    outcome = _run(
        tmp_path, ("c2s", publish("a", b"x", dup=True)), ("c2s", PINGREQ), ("s2c", PINGRESP)
    )
    (row,) = _closing(outcome)
    assert row["kind"] == "tolerated" and "dup-qos0=ignore" in str(row["message"])


@pytest.mark.parametrize(
    ("packet", "asks"),
    [
        (publish("t", b"p", qos=1, packet_id=9), ("PUBACK", 9)),
        (publish("t", b"p", qos=2, packet_id=9), ("PUBREC", 9)),
        (publish("t", b"p"), None),
        (ack("PUBREL", 4), ("PUBCOMP", 4)),
        (PINGREQ, ("PINGRESP", None)),
        (publish("t", b"", qos=1, packet_id=9)[:-2], None),  # no room for the identifier
        (bytes((0x32, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F)), None),  # a Remaining Length too long
    ],
)
def test_requests(packet: bytes, asks: tuple[str, int | None] | None) -> None:
    assert request_of(packet) == asks


def test_answers() -> None:
    assert answer_of(ack("PUBCOMP", 2)) == ("PUBCOMP", 2)
    assert answer_of(PINGRESP) == ("PINGRESP", None)
    assert answer_of(ack("PUBREL", 2)) is None  # a request, not an answer
