"""How a judge names a packet in its messages, and what makes two PUBLISH one message."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pubproof.model.trace import P, PublishP

#: the fields of ``P`` (what ``pubproof decode`` prints for a PUBLISH)
P_FIELDS = ("type", "dup", "qos", "retain", "topic", "packet_id", "payload_hex")
#: what a 5.0 ``P`` adds: an acknowledgement's Reason Code, and the properties
P50_FIELDS = ("reason_code", "properties")


def as_p(entry: Mapping[str, Any]) -> P:
    """The ``P`` of a packet entry (without dir, client, hex and the like; a 5.0 entry
    keeps its Reason Code and properties, which a 3.x entry does not have)."""
    p: Any = {k: entry[k] for k in (*P_FIELDS, *P50_FIELDS) if k in entry}
    return p  # type: ignore[no-any-return]


def describe(p: Mapping[str, Any]) -> str:
    """``PUBLISH 3 (QoS 1, DUP) on a/b`` or ``PUBREC 3``, for messages."""
    if p["type"] != "PUBLISH" or "error" in p:
        ident = p.get("packet_id")
        return p["type"] if ident is None else f"{p['type']} {ident}"
    flags = (
        [f"QoS {p['qos']}"] + (["DUP"] if p["dup"] else []) + (["RETAIN"] if p["retain"] else [])
    )
    ident = "" if p["packet_id"] is None else f" {p['packet_id']}"
    return f"PUBLISH{ident} ({', '.join(flags)}) on {p['topic']}"


def same_message(a: Mapping[str, Any], b: Mapping[str, Any] | PublishP) -> bool:
    """Same topic, payload and QoS (the packet identifier and flags aside)."""
    return (a["topic"], a["payload_hex"], a["qos"]) == (b["topic"], b["payload_hex"], b["qos"])
