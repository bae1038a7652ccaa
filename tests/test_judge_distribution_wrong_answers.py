"""A client's wrong answer to a copy ends no flow of the server's (the distribution judge).

A PUBACK to a QoS 2 copy, a PUBREC or PUBCOMP to a QoS 1 copy, or a PUBCOMP to a QoS 2
copy before its PUBREC, is the client's fault (its link judge charges it). The server's
flow goes on: on a resumed session it re-sends the copy [MQTT-4.4.0-1], which is not a
second delivery. Exploration found the judge counting it as one (mosquitto, 3.1.1, 8
moves: "got message 1 2 times", MQTT-4.3.3-2).

Mutants: the check removed (any acknowledgement ends a copy's flow) and the flow left
awaiting PUBREC after the PUBREC (so the right PUBCOMP ends nothing) are killed. A PUBREC
taken as QoS 1's answer survives and changes no finding: a QoS 1 copy may arrive more than
once, so its re-send is allowed whether its flow ended or not.
"""

from __future__ import annotations

import pytest
from support.distribution_server import V50, V311, Server, bad


def _resent_after(wrong: str, qos: int, level: int = V311, code: int = 0) -> Server:
    """A copy at ``qos`` answered with ``wrong``, the link lost, the session resumed, and
    the copy re-sent (DUP 1) and answered right."""
    server = Server(level)
    server.connect("sub", clean=False, expiry=60)
    server.subscribe("sub", ("a", qos))
    server.connect("pub")
    server.publish("pub", "a", b"m", qos)
    packet_id = server.deliver("sub", "a", b"m", qos, acknowledged=False)
    assert packet_id is not None
    server.acknowledge("sub", packet_id, wrong, code)
    server.close("sub")  # the server closes on the client's fault
    server.connect("sub", clean=False, expiry=60)
    server._at("sub", "s2c", {
        "type": "PUBLISH", "dup": True, "qos": qos, "retain": False, "topic": "a",
        "packet_id": packet_id, "payload_hex": b"m".hex(),
        **({"properties": {}} if level == V50 else {}),
    })  # fmt: skip
    if qos == 1:
        server.acknowledge("sub", packet_id, "PUBACK")
    else:
        server.acknowledge("sub", packet_id, "PUBREC")
        server._at("sub", "s2c", {"type": "PUBREL", "packet_id": packet_id})
        server.acknowledge("sub", packet_id, "PUBCOMP")
    return server


@pytest.mark.parametrize("level", [V311, V50])
@pytest.mark.parametrize(
    ("wrong", "qos"), [("PUBACK", 2), ("PUBCOMP", 1), ("PUBREC", 1), ("PUBCOMP", 2)]
)
def test_a_wrong_answer_leaves_the_copy_to_be_resent(wrong: str, qos: int, level: int) -> None:
    assert bad(_resent_after(wrong, qos, level).judge()) == []


def test_a_pubcomp_before_its_pubrec_ends_nothing_in_5() -> None:
    """5.0: a PUBCOMP 0x92 (Packet Identifier not found) to a QoS 2 copy still awaiting
    PUBREC (exploration's guided moves made it: the judge then charged the re-send on the
    resumed session as a second delivery, MQTT-4.3.3-10)."""
    assert bad(_resent_after("PUBCOMP", 2, V50, code=0x92).judge()) == []


def test_a_refusing_pubrec_to_a_qos_1_copy_ends_nothing_either() -> None:
    """5.0: a PUBREC with 0x80 ends a QoS 2 copy's flow, not a QoS 1 copy's."""
    assert bad(_resent_after("PUBREC", 1, V50, code=0x80).judge()) == []


def test_the_right_answer_ends_the_flow_so_a_resend_is_a_second_delivery() -> None:
    """The contrast: PUBREC, PUBREL, PUBCOMP end the QoS 2 copy's flow; sent again after
    that, with the same packet identifier, the copy is delivered twice [MQTT-4.3.3-2]."""
    server = Server(V311)
    server.connect("sub", clean=False)
    server.subscribe("sub", ("a", 2))
    server.connect("pub")
    server.publish("pub", "a", b"m", 2)
    packet_id = server.deliver("sub", "a", b"m", 2)
    server.close("sub")
    server.connect("sub", clean=False)
    server._at("sub", "s2c", {
        "type": "PUBLISH", "dup": True, "qos": 2, "retain": False, "topic": "a",
        "packet_id": packet_id, "payload_hex": b"m".hex(),
    })  # fmt: skip
    assert any("MQTT-4.3.3-2" in f.rules for f in bad(server.judge()))
