"""The probe's link judge (:class:`pubproof.probe.judge_link.ClientLink` over
:class:`pubproof.judge.link.LinkJudge` with ``keep=True``) against the readable oracle over
SessionModel (``tests/link_oracle.py``): the same findings (verdict, rules, message, in
order) and the same deliveries, on random evidence of one client: packets both ways, waits,
closed and dropped connections, the probe's cases, unreadable packets and other clients."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from link_oracle import LinkJudge as Oracle
from test_judge_ends import packet

from pubproof.judge.findings import Source
from pubproof.model.flows import Method, ReceiverInput, ReceiverState, receiver_step
from pubproof.probe.judge_link import ClientLink

DIRS = {"c2s": "to-broker", "s2c": "from-broker"}


@st.composite
def entry(draw: st.DrawFn) -> dict[str, Any]:
    choice = draw(st.sampled_from(["packet"] * 8 + ["event", "case", "error", "other"]))
    if choice == "event":
        event = draw(st.sampled_from(["quiet", "timeout", "deadline", "closed", "dropped"]))
        return {"event": event, "client": draw(st.sampled_from(["c", "c", None, "o"]))}
    direction, fields = draw(packet())
    found = {**fields, "dir": DIRS[direction], "client": "o" if choice == "other" else "c"}
    if found["type"] == "PUBLISH" and found["qos"] == 3:
        found["qos"] = 2  # the probe's decoder never hands over QoS 3 (3.1.1 rejects it)
    if choice == "case":
        found["case"] = True
    if choice == "error":
        found["error"] = {"rule": None, "offset": 0, "message": "unreadable"}
    return found


def _key(findings: list[Any]) -> list[tuple[str, tuple[str, ...], str]]:
    return [(f.verdict, f.rules, f.message) for f in findings]


@settings(max_examples=1500, deadline=None)
@given(st.lists(entry(), max_size=40), st.booleans())
def test_same_findings_and_deliveries_as_the_oracle(
    entries: list[dict[str, Any]], v311: bool
) -> None:
    oracle, link = Oracle("c", v311=v311), ClientLink("c", v311=v311)
    for index, item in enumerate(entries):
        oracle.feed(index, item)
        link.feed(index, item)
        assert _key(link.findings) == _key(oracle.findings), item
    oracle.finish()
    link.finish()
    assert _key(link.findings) == _key(oracle.findings)
    assert link.deliveries == oracle.deliveries
    assert all(f.source == Source.LINK and f.role == "broker" for f in link.findings)


def test_an_answer_owed_before_a_wait_is_missing_and_cites_the_table() -> None:
    """The differential test cannot pass on two judges that find nothing: this one does."""
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
