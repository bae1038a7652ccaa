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
