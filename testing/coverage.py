"""Coverage: which entries of the model's flow tables, and which distribution rules, a run
exercised.

Rules / theory of operation
---------------------------
The flow tables (:mod:`pubproof.model.flows` for 3.1 and 3.1.1, :mod:`pubproof.model.flows50`
for 5.0) say, per packet identifier, what a sender and a receiver do for each (state,
input) pair. :class:`Coverage` follows each client's links through its evidence, as the
link judges do (one state per packet identifier and per end, Method B for the QoS 2
receivers, the session kept across a resumed connection), and counts every (state,
input) pair taken, at each end: the **broker**'s (the judged end: what the clients made
it receive) and the **client**'s (what the broker made the well-behaved client receive).
The next state is the table's (an undefined pair leaves the state as it was). An input is
counted when the evidence shows it:

- a PUBLISH of QoS 1 or 2 at its receiver when the receiver answers it (5.0: accepted or
  refused, by the answer's Reason Code), QoS 0 when it is sent; a PUBREL when it is sent
  (5.0: by its Reason Code); an acknowledgement at its sender when it is sent;
- a new PUBLISH at its sender when it is sent (a DUP re-send after a resumed session is
  the RESUME entry's action, not an input);
- RESUME or CLEAN at every flow in progress (and at FREE) when a reconnection's CONNACK
  says which (3.1.1 and 5.0: Session Present; 3.1: the CONNECT's clean flag);
- 5.0: a QoS 2 PUBLISH over the server's Receive Maximum, the explorer's invalid move.

The distribution rules a run exercised are those the distribution judge named, in a
finding or a pass. :meth:`Coverage.table` lists every entry with its counts,
:meth:`Coverage.unreached` those the broker never took with why a client cannot drive
it there (:data:`CANNOT`), where that is known.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from pubproof.judge.findings import Source
from pubproof.model import flows as f3
from pubproof.model import flows50 as f5
from pubproof.model.editions import Edition
from pubproof.model.flows import Method, ReceiverState, SenderState
from pubproof.model.rules import RULES
from pubproof.probe.evidence import Entry

SS, RS = SenderState, ReceiverState
BROKER, CLIENT = "broker", "client"
SENDER, RECEIVER = "sender", "receiver"


@dataclass(frozen=True, slots=True)
class Row:
    """One (state, input) entry of a table, and how often each end took it."""

    table: str  # sender or receiver
    state: str
    input: str
    defined: str  # "defined", or the undefined entry's verdict
    broker: int
    client: int


def _tables(edition: Edition) -> tuple[list[tuple[Any, Any]], list[tuple[Any, Any]]]:
    """The (state, input) pairs of the sender and (Method B) receiver tables."""
    if edition is Edition.V50:
        s_in: Iterable[Enum] = f5.SenderInput50
        r_in: Iterable[Enum] = f5.ReceiverInput50
    else:
        s_in, r_in = f3.SenderInput, f3.ReceiverInput
    sender = [(s, i) for s in SS for i in s_in]
    receiver = [(r, i) for r in f3.RECEIVER_STATES[Method.B] for i in r_in]
    return sender, receiver


def _next(edition: Edition, table: str, state: Enum, event: Enum) -> tuple[Enum, str]:
    """The table's next state for (state, input), and "defined" or the verdict."""
    if edition is Edition.V50:
        step: Any = (
            f5.sender_step50(state, event)  # type: ignore[arg-type]
            if table == SENDER
            else f5.receiver_step50(Method.B, state, event)  # type: ignore[arg-type]
        )
    else:
        step = (
            f3.sender_step(state, event)  # type: ignore[arg-type]
            if table == SENDER
            else f3.receiver_step(Method.B, state, event)  # type: ignore[arg-type]
        )
    if isinstance(step, f3.Undefined):
        return state, step.verdict
    nxt: Enum = step.next
    return nxt, "defined"


#: why a client cannot drive the broker to an entry (by table, state name, input name);
#: an undefined sender entry with a new PUBLISH is the broker breaking a rule: reaching it
#: is a failure, never a goal
CANNOT: Mapping[tuple[str, str, str], str] = {
    **{
        (RECEIVER, state, name): "the broker refuses a message only for reasons of its own "
        "(authorization, a quota it sets): no move of a client makes it"
        for state in ("FREE", "ID_HELD")
        for name in ("PUBLISH_QOS1_REFUSED", "PUBLISH_QOS2_REFUSED")
    },
    (RECEIVER, "ID_HELD", "PUBLISH_QOS0"): "a QoS 0 PUBLISH has no packet identifier: it "
    "is counted at FREE (the table gives every state the same step)",
    (RECEIVER, "ID_HELD", "PUBLISH_QOS1"): "a QoS 1 PUBLISH on an identifier held for QoS 2 "
    "breaks the client's own rule [MQTT-2.3.1-2]; the model names no answer to judge",
    (RECEIVER, "ID_HELD", "PUBLISH_OVER_RECEIVE_MAXIMUM"): "never an input: a PUBLISH on a "
    "held identifier is a duplicate, not a new message",
    (RECEIVER, "ID_HELD", "PUBREL_NOT_FOUND"): "a client sends PUBREL 0x92 only for a PUBREC "
    "it holds no flow for, and then the broker holds the identifier only if it broke a rule",
    (RECEIVER, "FREE", "PUBREL_NOT_FOUND"): "a well-behaved client sends PUBREL 0x92 only in "
    "answer to a PUBREC for an identifier it does not hold",
    **{
        (SENDER, state.name, f"PUBLISH_QOS{q}"): "a new message on an identifier in use: the "
        "broker reaching it breaks a rule (a failure, not a goal)"
        for state in (SS.AWAIT_PUBACK, SS.AWAIT_PUBREC, SS.AWAIT_PUBCOMP)
        for q in (1, 2)
    },
}


def _number(value: Any) -> int:
    """A packet identifier of the evidence (0 where it has none)."""
    return int(value or 0)


class _Link:
    """The flow state of one client's links (across reconnections), both ends."""

    def __init__(self) -> None:
        # (end, table) -> packet identifier -> state
        self.state: dict[tuple[str, str], dict[int, Enum]] = {
            (end, table): {} for end in (BROKER, CLIENT) for table in (SENDER, RECEIVER)
        }
        self.pending = ""  # "resume" or "clean", applied at CONNACK
        self.persistent = False
        self.connections = 0
        #: the broker as receiver, awaiting its answer: packet id -> (state, QoS)
        self.answering: dict[int, tuple[Enum, int]] = {}


class Coverage:
    """The (state, input) entries and distribution rules a run exercised."""

    def __init__(self, edition: Edition, *, judged: str = BROKER) -> None:
        if judged not in (BROKER, CLIENT):
            raise ValueError(f"the judged end is {BROKER!r} or {CLIENT!r}, not {judged!r}")
        self.edition = edition
        self.v50 = edition is Edition.V50
        #: the judged end: a broker (the probe's evidence, its clients' links), or a client
        #: library (the client probe's: pubproof's server sends ``to-client``, and every
        #: connection is the one client's)
        self.judged = judged
        self.sender, self.receiver = _tables(edition)
        self.counts: Counter[tuple[str, str, str, str]] = Counter()  # (end, table, state, input)
        self.rules: Counter[str] = Counter()
        self.examples = 0

    # -- feeding -------------------------------------------------------------------------

    def observe(self, world: object, entries: list[Entry], verdict: Any) -> None:
        """An example's evidence and verdict (the run's observer)."""
        self.feed(entries)
        for finding in verdict.findings:
            if finding.source == Source.DISTRIBUTION:
                self.rules.update(finding.rules)

    def feed(self, entries: Iterable[Entry]) -> None:
        """Follow every client's links through one example's evidence."""
        self.examples += 1
        links: dict[str, _Link] = {}
        to_server = "to-broker" if self.judged == BROKER else "from-client"
        for entry in entries:
            client, direction = entry.get("client"), entry.get("dir")
            if not isinstance(client, str) or direction is None or "error" in entry:
                continue
            link = links.setdefault(client if self.judged == BROKER else CLIENT, _Link())
            if direction == to_server:
                self._from_client(link, entry)
            else:
                self._from_broker(link, entry)

    def _take(self, link: _Link, end: str, table: str, packet_id: int, event: Enum) -> Enum:
        """Count (state, input) at one end's table for ``packet_id``; the next state."""
        flows = link.state[end, table]
        state = flows.get(packet_id, SS.FREE if table == SENDER else RS.FREE)
        self.counts[end, table, state.name, event.name] += 1
        nxt, _ = _next(self.edition, table, state, event)
        if nxt.name == "FREE":
            flows.pop(packet_id, None)
        else:
            flows[packet_id] = nxt
        return nxt

    def _inputs(self) -> tuple[Any, Any]:
        return (
            (f5.SenderInput50, f5.ReceiverInput50)
            if self.v50
            else (f3.SenderInput, f3.ReceiverInput)
        )

    def _publish_input(self, qos: int, receiver: bool, refused: bool = False) -> Enum:
        s_in, r_in = self._inputs()
        name = f"PUBLISH_QOS{qos}" + ("_REFUSED" if refused and self.v50 else "")
        return r_in[name] if receiver else s_in[name]  # type: ignore[no-any-return]

    def _ack_input(self, kind: str, code: int) -> Enum:
        s_in, _ = self._inputs()
        if not self.v50:
            return s_in[kind]  # type: ignore[no-any-return]
        if kind == "PUBCOMP":
            return s_in["PUBCOMP_NOT_FOUND" if code == 0x92 else "PUBCOMP_OK"]  # type: ignore[no-any-return]
        return s_in[f"{kind}_{'ERROR' if code >= 0x80 else 'OK'}"]  # type: ignore[no-any-return]

    def _pubrel_input(self, code: int) -> Enum:
        _, r_in = self._inputs()
        if not self.v50:
            return r_in["PUBREL"]  # type: ignore[no-any-return]
        return r_in["PUBREL_NOT_FOUND" if code == 0x92 else "PUBREL_OK"]  # type: ignore[no-any-return]

    def _from_client(self, link: _Link, entry: Entry) -> None:
        kind, packet_id = entry.get("type"), entry.get("packet_id")
        code = int(entry.get("reason_code") or 0)
        if kind == "CONNECT":
            link.connections += 1
            clean = bool(entry.get("clean_session", entry.get("clean_start")))
            link.pending = "resume" if link.persistent and not clean else "clean"
            expiry = (entry.get("properties") or {}).get("session_expiry_interval", 0)
            # 5.0: a session with no Session Expiry Interval ends with the connection
            link.persistent = bool(expiry) if self.v50 else not clean
        elif kind == "PUBLISH":
            qos = int(entry.get("qos", 0))
            if qos == 0:
                self._take(link, BROKER, RECEIVER, -1, self._publish_input(0, True))
                return
            if entry.get("case") and self.v50:  # over the server's Receive Maximum
                _, r_in = self._inputs()
                over = r_in.PUBLISH_OVER_RECEIVE_MAXIMUM
                self._take(link, BROKER, RECEIVER, _number(packet_id), over)
                return
            if not entry.get("dup") and packet_id not in link.state[CLIENT, SENDER]:
                event = self._publish_input(qos, False)
                self._take(link, CLIENT, SENDER, _number(packet_id), event)
            state = link.state[BROKER, RECEIVER].get(_number(packet_id), RS.FREE)
            link.answering[_number(packet_id)] = (state, qos)
        elif kind == "PUBREL":
            self._take(link, BROKER, RECEIVER, _number(packet_id), self._pubrel_input(code))
        elif kind in ("PUBACK", "PUBREC", "PUBCOMP"):
            self._take(link, BROKER, SENDER, _number(packet_id), self._ack_input(kind, code))

    def _from_broker(self, link: _Link, entry: Entry) -> None:
        kind, packet_id = entry.get("type"), entry.get("packet_id")
        code = int(entry.get("reason_code") or 0)
        if kind == "CONNACK":
            self._connack(link, entry)
        elif kind == "PUBLISH":
            qos = int(entry.get("qos", 0))
            if qos == 0:
                self._take(link, CLIENT, RECEIVER, -1, self._publish_input(0, True))
                return
            pid = _number(packet_id)
            if not (entry.get("dup") and pid in link.state[BROKER, SENDER]):
                self._take(link, BROKER, SENDER, pid, self._publish_input(qos, False))
            self._take(link, CLIENT, RECEIVER, pid, self._publish_input(qos, True))
        elif kind == "PUBREL":
            self._take(link, CLIENT, RECEIVER, _number(packet_id), self._pubrel_input(code))
        elif kind in ("PUBACK", "PUBREC", "PUBCOMP"):
            pid = _number(packet_id)
            answered = link.answering.pop(pid, None)
            if answered is not None and (kind == "PUBACK") == (answered[1] == 1):
                state, qos = answered
                event = self._publish_input(qos, True, refused=code >= 0x80)
                link.state[BROKER, RECEIVER][pid] = state
                self._take(link, BROKER, RECEIVER, pid, event)
            self._take(link, CLIENT, SENDER, pid, self._ack_input(kind, code))

    def _connack(self, link: _Link, entry: Entry) -> None:
        pending, link.pending = link.pending, ""
        code = int(entry.get("return_code", entry.get("reason_code", 0)) or 0)
        if not pending or code != 0 or link.connections < 2:
            return
        resume = pending == "resume"
        if self.edition is not Edition.V31:
            resume = resume and bool(entry.get("session_present"))
        s_in, r_in = self._inputs()
        for end in (BROKER, CLIENT):
            for table, inputs in ((SENDER, s_in), (RECEIVER, r_in)):
                event = inputs.RESUME if resume else inputs.CLEAN
                flows = link.state[end, table]
                for packet_id in list(flows) or [-1]:
                    self._take(link, end, table, packet_id, event)
        link.answering.clear()

    # -- reading -------------------------------------------------------------------------

    def table(self) -> list[Row]:
        """Every entry of the edition's tables, with how often each end took it."""
        rows = []
        for table, pairs in ((SENDER, self.sender), (RECEIVER, self.receiver)):
            for state, event in pairs:
                _, defined = _next(self.edition, table, state, event)
                key = (table, state.name, event.name)
                rows.append(Row(
                    table=table, state=state.name, input=event.name, defined=defined,
                    broker=self.counts[(BROKER, *key)], client=self.counts[(CLIENT, *key)],
                ))  # fmt: skip
        return rows

    def unreached(self) -> list[tuple[Row, str]]:
        """The entries the broker never took, each with why a client cannot drive it there
        ("" where a longer run may)."""
        if self.judged == CLIENT:
            return [(row, "") for row in self.table() if row.client == 0]
        return [
            (row, CANNOT.get((row.table, row.state, row.input), ""))
            for row in self.table()
            if row.broker == 0
        ]

    def distribution_rules(self) -> list[tuple[str, int]]:
        """Every distribution rule of the edition, with how often the judge named it."""
        ids = [r.ids[self.edition] for r in RULES.distributions() if self.edition in r.ids]
        return [(rule_id, self.rules[rule_id]) for rule_id in dict.fromkeys(ids)]

    def to_json(self) -> dict[str, Any]:
        """The coverage as JSON."""
        return {
            "edition": self.edition.value,
            "examples": self.examples,
            "entries": [
                {
                    "table": r.table,
                    "state": r.state,
                    "input": r.input,
                    "defined": r.defined,
                    "broker": r.broker,
                    "client": r.client,
                }
                for r in self.table()
            ],
            "unreached": [
                {"table": r.table, "state": r.state, "input": r.input, "why": why}
                for r, why in self.unreached()
            ],
            "distribution_rules": dict(self.distribution_rules()),
        }

    def summary(self) -> str:
        """The coverage as text: the tables' entries, then those never reached."""
        rows = self.table()
        judged = self.judged
        reached = sum(1 for r in rows if (r.broker if judged == BROKER else r.client))
        lines = [f"flow table entries the {judged} took: {reached} of {len(rows)} "
                 f"(MQTT {self.edition.value}, Method B receivers)"]  # fmt: skip
        server = "broker" if judged == BROKER else "server"
        lines.append(f"  {'table':9} {'state':14} {'input':30} {server:>7} {'client':>7}")
        for r in rows:
            mark = "" if r.defined == "defined" else f"  ({r.defined} if reached)"
            lines.append(
                f"  {r.table:9} {r.state:14} {r.input:30} {r.broker:>7} {r.client:>7}{mark}"
            )
        lines.append(f"never reached by the {judged}:")
        for r, why in self.unreached():
            lines.append(f"  {r.table} {r.state} {r.input}: {why or 'not reached in this run'}")
        if judged == CLIENT:
            return "\n".join(lines) + "\n"
        rules = self.distribution_rules()
        named = [rule for rule, n in rules if n]
        lines.append(f"distribution rules the judge named: {len(named)} of {len(rules)}")
        lines.append("  " + " ".join(named))
        lines.append("  never: " + " ".join(rule for rule, n in rules if not n))
        return "\n".join(lines) + "\n"
