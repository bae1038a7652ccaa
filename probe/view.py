"""A check's evidence as its judge reads it: per-client flows, deliveries, the case."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property

from pubproof.judge.describe import as_p
from pubproof.model.editions import Edition
from pubproof.model.trace import PublishP
from pubproof.probe.evidence import LIVENESS_CLIENT, Entry, is_packet, received, sent
from pubproof.probe.judge_link import WAIT_EVENTS, ClientLink


class View:
    """Read-only questions about one check's evidence."""

    def __init__(
        self, entries: Sequence[Entry], edition: Edition, readings: Mapping[str, str]
    ) -> None:
        self.entries = list(entries)
        self.edition = edition
        self.readings = readings

    @cached_property
    def clients(self) -> list[str]:
        """The clients of the check, in order of appearance (not the liveness probe)."""
        names = [e.get("client") for e in self.entries]
        return [n for n in dict.fromkeys(names) if isinstance(n, str) and n != LIVENESS_CLIENT]

    @cached_property
    def links(self) -> dict[str, ClientLink]:
        """The flow judgement of each client, over the whole evidence."""
        v311 = self.edition is Edition.V311
        judges = {name: ClientLink(name, v311=v311, edition=self.edition) for name in self.clients}
        for index, entry in enumerate(self.entries):
            for judge in judges.values():
                judge.feed(index, entry)
        for judge in judges.values():
            judge.finish()
        return judges

    def deliveries(self, client: str, topic: str | None = None) -> list[PublishP]:
        """What a well-behaved client delivers of what the broker sent ``client``."""
        judge = self.links.get(client)
        if judge is None:
            return []
        return [p for p in judge.deliveries if topic is None or p["topic"] == topic]  # type: ignore[misc]

    def published(self, client: str) -> list[PublishP]:
        """The messages ``client`` published (first sends: not the case, not DUP)."""
        out: list[PublishP] = []
        for entry in self.entries:
            if (
                sent(entry)
                and entry.get("client") == client
                and entry["type"] == "PUBLISH"
                and "error" not in entry
                and not entry.get("case")
                and not entry["dup"]
            ):
                out.append(as_p(entry))  # type: ignore[arg-type]
        return out

    def packets(self, client: str, kind: str, direction: str = "from-broker") -> list[Entry]:
        """The packets of one type that went one way on ``client``'s connections."""
        return [
            e
            for e in self.entries
            if is_packet(e)
            and e["client"] == client
            and e["type"] == kind
            and e["dir"] == direction
        ]

    def granted(self, client: str) -> list[int]:
        """The QoS values the broker granted ``client``, over all its SUBACKs."""
        return [
            g
            for e in self.packets(client, "SUBACK")
            for g in (e["granted"] if "granted" in e else e.get("reason_codes", []))
        ]

    def case(self) -> tuple[int, Entry] | None:
        """The packet the check is about, and its index."""
        for index, entry in enumerate(self.entries):
            if entry.get("case"):
                return index, entry
        return None

    @cached_property
    def broker_alive(self) -> bool:
        """After the probe's last wait that ran out, did the broker send anything at all?"""
        last = -1
        for index, entry in enumerate(self.entries):
            if entry.get("event") in WAIT_EVENTS and entry["event"] != "quiet":
                last = index
        if last < 0:
            return True
        return any(received(e) for e in self.entries[last + 1 :])
