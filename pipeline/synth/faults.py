"""The violations :mod:`pubproof.pipeline.synth` injects, and the rule ids each one breaks.

Only faults whose count is unambiguous for an oracle are here:

* **wire faults** leave the framing intact (the fixed header and Remaining Length are
  right) and break one rule of one packet: QoS 3, a wildcard in the topic name, DUP=1 on
  QoS 0, packet identifier 0, PUBREL with bad flags. Every one ends the receiver's
  reading of that direction (the codec's errors are final; a receiver closes the
  connection), so the generator sends it as the last packet of its direction and then
  closes the connection, and injects at most one per connection.
* **flow faults** are well-formed packets the flow tables call a violation: a QoS 1
  PUBLISH on a packet identifier its sender still holds for a QoS 2 flow (after PUBREC,
  before PUBCOMP). The tables judge it at both ends: the receiver's
  (:data:`pubproof.model.flows.UNDEFINED_RECEIVER`, what :func:`replay` reports) and the
  sender's own (a new message on an identifier in use,
  :data:`pubproof.model.flows.UNDEFINED_SENDER`); :func:`flow_findings` gives both.

The rule ids are never written here: each injected packet is decoded with the project's
codec (:class:`pubproof.reference.Decoder`), and each flow fault is replayed with
:func:`pubproof.model.replay.replay`; the rules they name are what the generator expects.
A fault that the codec accepts, or a flow the model does not judge a violation, is a bug
in this module and raises :class:`FaultError`.
"""

from __future__ import annotations

import enum
from typing import Any

from pubproof.model.flows import SenderInput, SenderState, Undefined, sender_step
from pubproof.model.replay import replay
from pubproof.model.trace import ack, publish
from pubproof.model.wire import encode_remaining_length
from pubproof.reference import Decoder, ProtocolError


class FaultError(AssertionError):
    """An injected fault does not break the rule the generator meant it to break."""


class Fault(enum.Enum):
    """The violations the generator can inject (the CLI's ``--inject NAME=COUNT``)."""

    QOS3 = "qos3"  # PUBLISH with both QoS bits set
    WILDCARD = "wildcard"  # '+' or '#' in a PUBLISH topic name
    DUP_QOS0 = "dup-qos0"  # DUP=1 on a QoS 0 PUBLISH
    PACKET_ID_0 = "packet-id-0"  # a QoS 1 or 2 PUBLISH with packet identifier 0
    PUBREL_FLAGS = "pubrel-flags"  # PUBREL whose fixed-header flags are not 0010
    QOS1_ON_HELD_ID = "qos1-on-held-id"  # QoS 1 PUBLISH on an identifier in a QoS 2 flow

    @property
    def is_wire(self) -> bool:
        return self is not Fault.QOS1_ON_HELD_ID


def _string(text: str) -> bytes:
    data = text.encode("utf-8")
    return len(data).to_bytes(2, "big") + data


def _publish_bytes(first: int, topic: str, packet_id: int | None, payload: bytes) -> bytes:
    body = _string(topic) + (packet_id.to_bytes(2, "big") if packet_id is not None else b"")
    body += payload
    return bytes((first,)) + encode_remaining_length(len(body)) + body


def wire_fault_bytes(fault: Fault, *, topic: str, packet_id: int, payload: bytes) -> bytes:
    """The bytes of one faulty packet, built by hand (the codec refuses to encode them).

    ``topic`` must be a valid topic name; ``packet_id`` is 1..65535 (used where the
    packet carries one).
    """
    if fault is Fault.QOS3:
        # [MQTT-3.3.1-4] "A PUBLISH Packet MUST NOT have both QoS bits set to 1."
        return _publish_bytes(0x36, topic, packet_id, payload)
    if fault is Fault.WILDCARD:
        # [MQTT-3.3.2-2] "The Topic Name in the PUBLISH Packet MUST NOT contain wildcard
        # characters."
        wild = topic.rsplit("/", 1)[0] + ("/+" if packet_id % 2 else "/#")
        return _publish_bytes(0x30, wild, None, payload)
    if fault is Fault.DUP_QOS0:
        # [MQTT-3.3.1-2] "The DUP flag MUST be set to 0 for all QoS 0 messages."
        return _publish_bytes(0x38, topic, None, payload)
    if fault is Fault.PACKET_ID_0:
        # [MQTT-2.3.1-1] "... MUST contain a non-zero 16-bit Packet Identifier."
        return _publish_bytes(0x32 if packet_id % 2 else 0x34, topic, 0, payload)
    if fault is Fault.PUBREL_FLAGS:
        # [MQTT-3.6.1-1] "Bits 3,2,1 and 0 of the fixed header in the PUBREL Control Packet
        # are reserved and MUST be set to 0,0,1 and 0 respectively."
        flags = (0x0, 0x3, 0x8, 0xA)[packet_id % 4]
        return bytes((0x60 | flags, 2)) + packet_id.to_bytes(2, "big")
    raise ValueError(f"{fault.value} is not a wire fault")


def wire_rule(data: bytes) -> str:
    """The rule id the project's codec gives for the (single, faulty) packet ``data``."""
    decoder = Decoder()
    decoder.feed(data)
    try:
        packets = list(decoder)
        decoder.close()
    except ProtocolError as error:
        if error.offset is None or not 0 <= error.offset < len(data):
            raise FaultError(f"{data.hex()}: error outside the packet: {error}") from None
        return error.rule
    raise FaultError(f"the codec accepts {data.hex()} as {packets}")


def checked_wire_fault(fault: Fault, **fields: Any) -> tuple[bytes, str]:
    """A faulty packet and the rule id the codec gives it."""
    data = wire_fault_bytes(fault, **fields)
    return data, wire_rule(data)


def flow_rules(topic: str, packet_id: int, *, sender: str = "c2s") -> tuple[str, ...]:
    """The rules the model names for the injected flow: QoS 2 PUBLISH, PUBREC, then a QoS 1
    PUBLISH on the same packet identifier, PUBREL, PUBCOMP (``sender`` is the direction the
    PUBLISH packets travel). Raises :class:`FaultError` unless the model finds exactly one
    violation, at the QoS 1 PUBLISH."""
    back = "s2c" if sender == "c2s" else "c2s"
    trace: list[dict[str, Any]] = [
        {**publish(topic=topic, qos=2, packet_id=packet_id, payload=b"m"), "dir": sender},
        {**ack("PUBREC", packet_id), "dir": back},
        {**publish(topic=topic, qos=1, packet_id=packet_id, payload=b"x"), "dir": sender},
        {**ack("PUBREL", packet_id), "dir": sender},
        {**ack("PUBCOMP", packet_id), "dir": back},
    ]
    # replay() takes c2s to the receiving end; a flow from the server is the mirror image
    if sender == "s2c":
        trace = [{**entry, "dir": "c2s" if entry["dir"] == "s2c" else "s2c"} for entry in trace]
    result = replay(trace)
    violations = [
        (index, output)
        for index, (_, outputs) in enumerate(result.steps)
        for output in outputs
        if output.kind == "violation"
    ]
    if len(violations) != 1 or violations[0][0] != 2:
        raise FaultError(
            f"the model does not judge the injected flow as one violation: {violations}"
        )
    return violations[0][1].rules


def flow_findings(
    topic: str, packet_id: int, *, sender: str = "c2s"
) -> tuple[tuple[str, ...], ...]:
    """The rule ids of each finding the flow tables make on the injected QoS 1 PUBLISH: the
    receiver's (checked by :func:`flow_rules`) and the sender's (its identifier is in state
    AWAIT_PUBCOMP when its application publishes anew)."""
    receiver = flow_rules(topic, packet_id, sender=sender)
    step = sender_step(SenderState.AWAIT_PUBCOMP, SenderInput.PUBLISH_QOS1)
    if not isinstance(step, Undefined) or step.verdict != "violation":
        raise FaultError(f"the sender's table does not call the injected flow a violation: {step}")
    return receiver, step.rules
