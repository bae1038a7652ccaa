"""What a broker says while it runs: each finding on one line as it is found, a trace of
every connection for the findings' evidence, and the count per client for the summary.

Rules / theory of operation
---------------------------
A finding is a :class:`pubproof.judge.findings.Finding` from one of the judges (wire,
link, close, distribution) or from serve's own rules of the control packets, with where it
was found: the client identifier, the connection, the time (seconds since the broker
started) and the packet. :class:`Reporter` prints it at once, one line per finding on
standard error::

    12.345 sensor-7 c3 violation MQTT-3.3.1-4 "A PUBLISH Packet MUST NOT have both QoS
    bits set to 1 ..." PUBLISH with QoS 3 (both QoS bits set) [36030003612f62]

or, with ``--json``, one JSON object per line (``t``, ``client_id``, ``conn``,
``verdict``, ``rules``, ``words``, ``message``, ``source``, ``packet``, ``hex``). A pass
is never printed.

The trace of a connection (:class:`Trace`) keeps its last :data:`TRACE_PACKETS` packets as
raw bytes with their direction and time (an entry of the probe's evidence format is built
only when a finding asks for it, so a broker at full speed keeps bytes, not dicts); each
finding keeps a copy of the trace up to itself, and the broker keeps at most
:data:`KEPT_FINDINGS` findings for the report (the count per rule keeps counting).
"""

from __future__ import annotations

import json
import sys
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from pubproof.judge.findings import PASS, Finding
from pubproof.model.editions import Edition
from pubproof.probe.serve.rules import words

FROM_CLIENT = "from-client"
TO_CLIENT = "to-client"
#: the packets of one connection its findings show before them
TRACE_PACKETS = 48
#: the findings a broker keeps for its report (every one is printed and counted)
KEPT_FINDINGS = 2000
#: how many bytes of a packet a finding line shows
LINE_HEX = 96

#: how a trace turns bytes into the probe's evidence fields (the broker's describer)
Describe = Callable[[bytes, str], dict[str, Any]]


@dataclass(slots=True)
class Trace:
    """The last packets of one connection: (time, direction, bytes), and its events."""

    conn: str
    items: deque[tuple[float, str, bytes | str]] = field(
        default_factory=lambda: deque(maxlen=TRACE_PACKETS)
    )
    #: the packet a misbehaviour sent as its case (its time and bytes), if any
    case: tuple[float, bytes] | None = None
    case_at: int = 0

    def packet(self, t: float, direction: str, data: bytes) -> None:
        self.items.append((t, direction, data))

    def mark_case(self) -> None:
        """The packet just traced is the case."""
        t, _, data = self.items[-1]
        assert isinstance(data, bytes)
        self.case = (t, data)

    def event(self, t: float, what: str) -> None:
        """An event (``accepted``, ``closed``, ...) among the packets."""
        self.items.append((t, "event", what))

    def entries(self, describe: Describe) -> tuple[dict[str, Any], ...]:
        """The trace as entries of the probe's evidence (what its HTML report shows)."""
        out: list[dict[str, Any]] = []
        for t, direction, data in self.items:
            if isinstance(data, str):
                out.append({"event": data, "client": self.conn, "t": round(t, 4)})
                continue
            fields = describe(data, direction)
            entry = {**fields, "dir": direction, "client": self.conn, "hex": data.hex(),
                     "t": round(t, 4)}  # fmt: skip
            if self.case is not None and self.case == (t, data):
                entry["case"] = True
            out.append(entry)
        return tuple(out)


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveFinding:
    """A finding where it was found."""

    t: float
    client_id: str  # "" before the CONNECT named one; "(server)" for findings about serve
    conn: str
    edition: Edition | None
    finding: Finding
    packet: bytes  # the packet it is about (b"" when none)
    trace: tuple[dict[str, Any], ...] = ()

    @property
    def rule(self) -> str:
        return self.finding.rules[0] if self.finding.rules else ""

    def words(self) -> str:
        return words(self.rule, self.edition) if self.rule else ""

    def line(self) -> str:
        """The one line of text of this finding."""
        said = self.words()
        quoted = f' "{said}"' if said else ""
        hexed = self.packet.hex()
        shown = hexed if len(hexed) <= LINE_HEX else hexed[:LINE_HEX] + "..."
        packet = f" [{shown}]" if shown else ""
        rules = ",".join(self.finding.rules) or "-"
        who = self.client_id or "?"
        return (
            f"{self.t:.3f} {who} {self.conn} {self.finding.verdict} {rules}{quoted} "
            f"{self.finding.message}{packet}"
        )

    def to_json(self) -> dict[str, Any]:
        """The JSON Lines form of this finding."""
        return {
            "t": round(self.t, 4),
            "client_id": self.client_id,
            "conn": self.conn,
            "edition": self.edition.value if self.edition is not None else None,
            "verdict": self.finding.verdict,
            "rules": list(self.finding.rules),
            "words": self.words(),
            "message": self.finding.message,
            "source": self.finding.source,
            "provoked": list(self.finding.provoked),
            "hex": self.packet.hex(),
        }


@dataclass(slots=True)
class ClientTally:
    """What one client identifier did: packets each way and findings by (verdict, rule)."""

    client_id: str
    connections: int = 0
    packets_in: int = 0
    packets_out: int = 0
    findings: Counter[tuple[str, str]] = field(default_factory=Counter)

    def to_json(self) -> dict[str, Any]:
        return {
            "client_id": self.client_id,
            "connections": self.connections,
            "packets_in": self.packets_in,
            "packets_out": self.packets_out,
            "findings": [
                {"verdict": v, "rule": r, "count": n} for (v, r), n in sorted(self.findings.items())
            ],
        }


class Reporter:
    """Prints findings as they come (text or JSON Lines) and keeps the tallies."""

    def __init__(self, stream: TextIO | None = None, *, as_json: bool = False,
                 quiet: bool = False) -> None:  # fmt: skip
        self.stream = stream if stream is not None else sys.stderr
        self.as_json = as_json
        self.quiet = quiet
        self.kept: list[LiveFinding] = []
        self.tallies: dict[str, ClientTally] = {}
        self.notices: Counter[str] = Counter()
        self.total: Counter[str] = Counter()  # verdict -> count

    def tally(self, client_id: str) -> ClientTally:
        found = self.tallies.get(client_id)
        if found is None:
            found = self.tallies[client_id] = ClientTally(client_id)
        return found

    def report(self, live: LiveFinding) -> None:
        """One finding: counted, kept (up to :data:`KEPT_FINDINGS`), printed."""
        verdict = live.finding.verdict
        self.total[verdict] += 1
        counts = self.tally(live.client_id).findings
        counts[verdict, live.rule or "-"] += 1
        if verdict == PASS:
            return
        if len(self.kept) < KEPT_FINDINGS:
            self.kept.append(live)
        if self.quiet:
            return
        line = json.dumps(live.to_json(), ensure_ascii=False) if self.as_json else live.line()
        self._write(line)

    def notice(self, key: str, message: str) -> None:
        """Something the broker did to keep within its limits (not a finding about a
        client): printed the first time ``key`` comes, counted every time."""
        self.notices[key] += 1
        if self.notices[key] == 1 and not self.quiet:
            if self.as_json:
                self._write(json.dumps({"notice": key, "message": message}))
            else:
                self._write(f"notice {key}: {message}")

    def say(self, message: str) -> None:
        """A line about the broker itself (listening, stopping)."""
        if self.as_json:
            self._write(json.dumps({"serve": message}))
        else:
            self._write(message)

    def _write(self, line: str) -> None:
        try:
            self.stream.write(line + "\n")
            self.stream.flush()
        except (OSError, ValueError):
            pass  # a closed standard error must not stop the broker
