"""The probe's link judge (:class:`pubproof.probe.judge_link.ClientLink` over the readable
:class:`pubproof.judge.link.LinkJudge` with ``keep=True``): an answer owed before a wait is
missing, with the rules of the table's entry that made it owed. (The compiled twin is held
equal to the readable judge on random evidence, findings and deliveries, by
``tests/test_judge_twins.py``.)"""

from __future__ import annotations

from typing import Any

from pubproof.model.flows import Method, ReceiverInput, ReceiverState, receiver_step
from pubproof.probe.judge_link import ClientLink


def test_an_answer_owed_before_a_wait_is_missing_and_cites_the_table() -> None:
    """The differential tests cannot pass on two judges that find nothing: this one does."""
    publish = {"type": "PUBLISH", "dup": False, "qos": 1, "retain": False, "topic": "a",
               "payload_hex": "00", "packet_id": 1}  # fmt: skip
    link = ClientLink("c")
    evidence: list[dict[str, Any]] = [
        {"type": "CONNECT", "clean_session": True, "dir": "to-broker", "client": "c"},
        {"type": "CONNACK", "session_present": False, "return_code": 0, "dir": "from-broker",
         "client": "c"},
        {**publish, "dir": "to-broker", "client": "c"},
        {"event": "quiet", "client": None},
    ]  # fmt: skip
    for index, item in enumerate(evidence):
        link.feed(index, item)
    link.finish()
    (found,) = link.findings
    step = receiver_step(Method.B, ReceiverState.FREE, ReceiverInput.PUBLISH_QOS1)
    assert found.verdict == "missing" and found.rules == step.rules
    assert found.message == "c: no PUBACK 1 (the answer to PUBLISH 1 (QoS 1) on a)"
    assert found.source == "link" and found.role == "broker"


def test_what_a_client_sends_after_its_connection_closed_is_owed_nothing() -> None:
    """mosquitto closed a connection while the client wrote four PUBLISHes of one
    identifier at once (exploring 3.1.1 found it): the three written after the probe saw
    the close never reached the broker, which owes them no PUBACK. The connection's next
    CONNECT ends that."""
    publish = {"type": "PUBLISH", "dup": False, "qos": 1, "retain": False, "topic": "b/a",
               "payload_hex": "39", "packet_id": 2, "dir": "to-broker", "client": "c"}  # fmt: skip
    connect: list[dict[str, Any]] = [
        {"type": "CONNECT", "clean_session": True, "dir": "to-broker", "client": "c"},
        {"type": "CONNACK", "session_present": False, "return_code": 0, "dir": "from-broker",
         "client": "c"},
    ]  # fmt: skip
    evidence: list[dict[str, Any]] = [
        *connect,
        {"event": "quiet", "client": None},
        publish,
        {"event": "closed", "client": "c"},
        *[{**publish, "dup": True}] * 3,
        {"event": "quiet", "client": None},
    ]
    link = ClientLink("c")
    for index, item in enumerate(evidence):
        link.feed(index, item)
    link.finish()
    assert link.findings == []
    # connected again, the same PUBLISH is owed its PUBACK as ever
    again = ClientLink("c")
    for index, item in enumerate(
        [*evidence, *connect, publish, {"event": "quiet", "client": None}]
    ):
        again.feed(index, item)
    again.finish()
    (found,) = again.findings
    assert found.verdict == "missing" and found.message.startswith("c: no PUBACK 2")
