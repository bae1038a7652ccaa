"""What a broker does not support, and the checks it therefore cannot run.

Some brokers implement a part of MQTT only: RabbitMQ's MQTT plugin (3.x) has no QoS 2 (it
downgrades a QoS 2 subscription to QoS 1 and does not answer a QoS 2 PUBLISH with PUBREC).
Told so (``pubproof probe --max-qos 1``), the probe reports a check whose evidence shows it
publishing at QoS 2 (or sending PUBREL) as ``not-applicable`` (the reason in its message),
never as a failure. The decision is a function of the evidence and the declared maximum,
like every verdict.
"""

from __future__ import annotations

from collections.abc import Sequence

from pubproof.probe.evidence import TO_BROKER, Entry


def beyond(entries: Sequence[Entry], max_qos: int) -> str | None:
    """Why the check is beyond a broker supporting QoS up to ``max_qos``, if it is: it
    published at a higher QoS (not counting the case of a wire check)."""
    if max_qos >= 2:
        return None
    for entry in entries:
        if entry.get("dir") != TO_BROKER or entry.get("case"):
            continue
        qos = entry.get("qos") if entry.get("type") == "PUBLISH" else None
        if entry.get("type") == "PUBREL":
            qos = 2  # PUBREL exists in the QoS 2 flow only
        if isinstance(qos, int) and qos > max_qos:
            return (
                f"the check needs QoS {qos} ({entry['type']}); the broker supports QoS up to "
                f"{max_qos} only (declared with --max-qos)"
            )
    return None
