"""Distribution scenarios run on the model, and the traces they leave.

Rules / theory of operation
---------------------------
Every witness and counterexample of the distribution theorems is a run of the server
model (:class:`~pubproof.model.distribution.DistributionModel`) or is drawn as one:
clients connect, subscribe, publish and lose their connection, the server sends the
copies it owes and the clock moves. A scenario is a sequence of *actions* (frozen data, so
an explorer can keep paths of them); :class:`Run` carries each out on the model and
records the trace in the project's evidence form:

- first, the event ``server``: the edition and the readings the model ran under (every
  verdict is relative to that pair);
- packets ``P`` with ``dir`` ("c2s" from a client, "s2c" from the server) and ``conn``,
  which names the link: ``"<client>:<n>"``, the n-th connection of that client;
- the control packets in the fields the judge's packet descriptions use: CONNECT
  ``protocol``, ``level``, ``client_id`` and ``clean_session`` (5.0 ``clean_start``),
  CONNACK ``session_present``, SUBSCRIBE ``packet_id`` and ``subscriptions`` (``filter``,
  ``qos``; 5.0 the options too), SUBACK ``granted`` (5.0 ``reason_codes``);
- events for what no packet shows: ``connection-lost``, ``retained-discarded`` (the server
  uses its freedom to drop a retained message [MQTT-3.3.1-7]) and ``clock``.

A publication is taken over as its flow says (QoS 0 on receipt, QoS 1 with the PUBACK,
QoS 2 with the PUBREC: Method B); the copies go out in the order :class:`Send` asks (the
first owed by default: the model's own order) with packet identifiers the server picks,
the lowest free one; a resumed session re-sends what was under way with DUP 1
[MQTT-4.4.0-1]. The trace is then what this model server did, readable as any capture.

A theorem may add *notes* to a run (entries with ``by``, or the events
``retained-store``, ``copies-under-test``, ``not-taken``: what a table under test holds or
sends), and may tag the copies of two runs with the reading that made them
(``"reading": "name=value"``). :func:`replay` runs a trace again on a fresh model (the
clients' packets, the events, and each copy the server sent first, which the model must
owe then); a trace that is a run of the model comes back the same, notes and tags aside
(:func:`plain`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pubproof.model.distribution import DistributionModel
from pubproof.model.editions import Edition
from pubproof.model.messages import Copy, Properties, Publication
from pubproof.model.subscriptions import SubscriptionOptions

Entry = dict[str, Any]
V50 = Edition.V50
#: 5.0: the Session Expiry Interval a client that keeps its session asks for (seconds)
KEEP = 3600
#: the protocol name and level a CONNECT carries (3.1 section 3.1, 3.1.1 and 5.0 3.1.2.1-2)
PROTOCOL = {Edition.V31: ("MQIsdp", 3), Edition.V311: ("MQTT", 4), Edition.V50: ("MQTT", 5)}


@dataclass(frozen=True, slots=True)
class Connect:
    """A client connects: ``clean`` is CleanSession (3.x) or Clean Start (5.0); a client
    that does not ask for a clean session keeps it (5.0: for an hour)."""

    client: str
    clean: bool = True


@dataclass(frozen=True, slots=True)
class Subscribe:
    """A SUBSCRIBE with topic filters and their options (5.0: and an identifier)."""

    client: str
    filters: tuple[tuple[str, SubscriptionOptions], ...]
    identifier: int | None = None


@dataclass(frozen=True, slots=True)
class Publish:
    """A client publishes; the server takes ownership at the end of the flow's first half."""

    client: str
    topic: str
    qos: int = 0
    retain: bool = False
    payload: bytes = b"m"
    expiry: int | None = None  # 5.0: the Message Expiry Interval, seconds


@dataclass(frozen=True, slots=True)
class Send:
    """The server sends a copy it owes ``client``: the ``pick``-th owed (0: the first, the
    model's order; -1: the last; past the end: the last)."""

    client: str
    pick: int = 0


@dataclass(frozen=True, slots=True)
class Ack:
    """The client acknowledges the oldest copy under way (PUBACK, or PUBREC/PUBREL/PUBCOMP)."""

    client: str


@dataclass(frozen=True, slots=True)
class Lost:
    """The client's connection is lost."""

    client: str


@dataclass(frozen=True, slots=True)
class Discard:
    """The server drops a topic's retained message, as the text lets it."""

    topic: str


@dataclass(frozen=True, slots=True)
class Advance:
    """Time passes on the model's clock."""

    milliseconds: int


Action = Connect | Subscribe | Publish | Send | Ack | Lost | Discard | Advance


def options(qos: int, **flags: Any) -> SubscriptionOptions:
    """Subscription options asking for ``qos`` (and 5.0's flags)."""
    return SubscriptionOptions(qos=qos, **flags)


@dataclass(slots=True)
class Run:
    """A distribution model and the trace of what was done to it and what it sent."""

    edition: Edition
    readings: Mapping[str, str] = field(default_factory=dict)
    record: bool = True
    model: DistributionModel = field(init=False)
    trace: list[Entry] = field(default_factory=list)
    #: the first transmissions to each client, in the order sent
    sent: dict[str, list[Copy]] = field(default_factory=dict)
    _links: dict[str, int] = field(default_factory=dict)  # client -> connections made
    _up: set[str] = field(default_factory=set)
    _ids: dict[int, int] = field(default_factory=dict)  # copy_id -> packet identifier
    _next_subscribe: int = 1

    def __post_init__(self) -> None:
        self.model = DistributionModel(self.edition, dict(self.readings))
        # the trace says which server it is a run of: every verdict is relative to an
        # (edition, readings) pair
        self._log({"event": "server", "edition": self.edition.value,
                   "readings": dict(self.readings)}, None, None)  # fmt: skip

    # -- the trace -------------------------------------------------------------------------

    def conn(self, client: str) -> str:
        return f"{client}:{self._links.get(client, 0)}"

    def _log(self, entry: Entry, direction: str | None, client: str | None) -> None:
        if not self.record:
            return
        if direction is not None:
            entry = {**entry, "dir": direction}
        if client is not None:
            entry = {**entry, "conn": self.conn(client)}
        self.trace.append(entry)

    def _publish_p(self, copy: Copy, packet_id: int | None, dup: bool) -> Entry:
        packet: Entry = dict(copy.to_p(self.model.now, packet_id=packet_id))
        packet["dup"] = dup
        if self.edition is not V50:
            packet.pop("properties", None)  # 3.1 and 3.1.1 packets have none
        return packet

    # -- actions ---------------------------------------------------------------------------

    def do(self, action: Action) -> None:
        """Carry out one action on the model, recording what it shows."""
        if isinstance(action, Connect):
            self.connect(action.client, clean=action.clean)
        elif isinstance(action, Subscribe):
            self.subscribe(action.client, action.filters, action.identifier)
        elif isinstance(action, Publish):
            self.publish(action)
        elif isinstance(action, Send):
            self.send(action.client, action.pick)
        elif isinstance(action, Ack):
            self.ack(action.client)
        elif isinstance(action, Lost):
            self.lost(action.client)
        elif isinstance(action, Discard):
            self.model.retained.discard(action.topic)
            self._log({"event": "retained-discarded", "topic": action.topic}, None, None)
        else:
            self.model.advance(action.milliseconds)
            self._log({"event": "clock", "advance_ms": action.milliseconds}, None, None)

    def run(self, actions: Sequence[Action]) -> Run:
        for action in actions:
            self.do(action)
        return self

    def _ensure(self, client: str) -> None:
        if client not in self._up:
            self.connect(client, clean=True)

    def connect(self, client: str, *, clean: bool) -> None:
        self._links[client] = self._links.get(client, 0) + 1
        self._up.add(client)
        v5 = self.edition is V50
        expiry = 0 if clean or not v5 else KEEP
        outcome = self.model.connect(client, clean=clean, session_expiry_interval=expiry)
        name, level = PROTOCOL[self.edition]
        packet: Entry = {"type": "CONNECT", "protocol": name, "level": level, "client_id": client}
        packet["clean_start" if v5 else "clean_session"] = clean
        if v5:
            packet["properties"] = {"session_expiry_interval": expiry} if expiry else {}
        self._log(packet, "c2s", client)
        answer: Entry = {"type": "CONNACK", "session_present": outcome.session_present}
        answer["reason_code" if v5 else "return_code"] = 0
        self._log(answer, "s2c", client)
        for copy in outcome.resend:  # [MQTT-4.4.0-1] re-sent with DUP 1
            self._log(self._publish_p(copy, self._ids.get(copy.copy_id), True), "s2c", client)

    def lost(self, client: str) -> None:
        self._log({"event": "connection-lost"}, None, client)
        self._up.discard(client)
        self.model.disconnect(client)

    def subscribe(
        self,
        client: str,
        filters: Sequence[tuple[str, SubscriptionOptions]],
        identifier: int | None = None,
    ) -> None:
        self._ensure(client)
        packet_id, v5 = self._next_subscribe, self.edition is V50
        self._next_subscribe += 1
        asked: list[Entry] = []
        for topic_filter, wanted in filters:
            one: Entry = {"filter": topic_filter, "qos": wanted.qos}
            if v5:
                one |= {"no_local": wanted.no_local,
                        "retain_as_published": wanted.retain_as_published,
                        "retain_handling": int(wanted.retain_handling)}  # fmt: skip
            asked.append(one)
        packet: Entry = {"type": "SUBSCRIBE", "packet_id": packet_id, "subscriptions": asked}
        if v5:
            packet["subscription_identifier"] = identifier
        self._log(packet, "c2s", client)
        outcome = self.model.subscribe(
            client, packet_id, list(filters), subscription_identifier=identifier
        )
        answer: Entry = {"type": "SUBACK", "packet_id": packet_id}
        answer["reason_codes" if v5 else "granted"] = list(outcome.codes)
        self._log(answer, "s2c", client)

    def publish(self, action: Publish) -> None:
        client = action.client
        self._ensure(client)
        packet_id = 1 if action.qos else None
        packet: Entry = {"type": "PUBLISH", "dup": False, "qos": action.qos,
                         "retain": action.retain, "topic": action.topic,
                         "packet_id": packet_id, "payload_hex": action.payload.hex()}  # fmt: skip
        if self.edition is V50:
            expiry = action.expiry
            packet["properties"] = {} if expiry is None else {"message_expiry_interval": expiry}
        self._log(packet, "c2s", client)
        if action.qos:  # ownership with the PUBACK (QoS 1) or the PUBREC (QoS 2, Method B)
            self._log({"type": "PUBACK" if action.qos == 1 else "PUBREC",
                       "packet_id": packet_id}, "s2c", client)  # fmt: skip
        self.model.publish(
            Publication(
                publisher=client,
                topic=action.topic,
                payload=action.payload,
                qos=action.qos,
                retain=action.retain,
                properties=Properties(message_expiry_interval=action.expiry),
            )
        )
        if action.qos == 2:
            self._log({"type": "PUBREL", "packet_id": packet_id}, "c2s", client)
            self._log({"type": "PUBCOMP", "packet_id": packet_id}, "s2c", client)

    def owed(self, client: str) -> tuple[Copy, ...]:
        """What the server may send the client now: owed, then optional (the model's order)."""
        session = self.model.sessions[client]
        return (*session.pending, *session.optional)

    def send(self, client: str, pick: int = 0) -> Copy:
        owed = self.owed(client)
        chosen = owed[pick] if pick < len(owed) else owed[-1]
        copy, _ = self.model.send(client, chosen.copy_id)
        packet_id = None
        if copy.qos:
            taken = {self._ids[c] for c in self.model.sessions[client].under_way if c in self._ids}
            packet_id = min(set(range(1, len(taken) + 2)) - taken)
            self._ids[copy.copy_id] = packet_id
        self.sent.setdefault(client, []).append(copy)
        self._log(self._publish_p(copy, packet_id, False), "s2c", client)
        return copy

    def ack(self, client: str) -> None:
        session = self.model.sessions[client]
        copy = next(iter(session.under_way.values()))
        packet_id = self._ids.pop(copy.copy_id)
        if copy.qos == 1:
            self._log({"type": "PUBACK", "packet_id": packet_id}, "c2s", client)
        else:
            self._log({"type": "PUBREC", "packet_id": packet_id}, "c2s", client)
            self._log({"type": "PUBREL", "packet_id": packet_id}, "s2c", client)
            self._log({"type": "PUBCOMP", "packet_id": packet_id}, "c2s", client)
        self.model.complete(client, copy.copy_id)


def run(
    actions: Sequence[Action], edition: Edition, readings: Mapping[str, str] | None = None
) -> Run:
    """The run of ``actions`` on a fresh model of ``edition`` under ``readings``."""
    return Run(edition, dict(readings or {})).run(actions)


def copies_p(trace: Sequence[Entry], client: str) -> list[Entry]:
    """The PUBLISH packets the server sent ``client`` in a trace."""
    return [
        e
        for e in trace
        if e.get("type") == "PUBLISH" and e.get("dir") == "s2c" and
        str(e.get("conn", "")).startswith(f"{client}:")
    ]  # fmt: skip


# -- replaying a trace ---------------------------------------------------------------------

#: events that say something about a run without being part of it
NOTES = frozenset({"retained-store", "copies-under-test", "not-taken"})


def _client(entry: Mapping[str, Any]) -> str:
    return str(entry["conn"]).rpartition(":")[0]


def _is_note(entry: Mapping[str, Any]) -> bool:
    """An entry a theorem adds to a run: an annotation, or what a table under test (not
    the model) would send (``"by"``)."""
    return entry.get("event") in NOTES or "by" in entry


def _from_client(entry: Mapping[str, Any]) -> Action | None:
    """The action of a client whose first packet is ``entry`` (None: a packet that ends a
    flow the run renders itself, PUBREL and PUBCOMP)."""
    client, kind = _client(entry), entry["type"]
    if kind == "CONNECT":
        return Connect(client, clean=bool(entry.get("clean_session", entry.get("clean_start"))))
    if kind == "SUBSCRIBE":
        flags = ("no_local", "retain_as_published", "retain_handling")
        wanted = tuple(
            (s["filter"], options(s["qos"], **{f: s[f] for f in flags if f in s}))
            for s in entry["subscriptions"]
        )
        return Subscribe(client, wanted, entry.get("subscription_identifier"))
    if kind == "PUBLISH":
        expiry = entry.get("properties", {}).get("message_expiry_interval")
        return Publish(client, entry["topic"], entry["qos"], entry["retain"],
                       bytes.fromhex(entry["payload_hex"]), expiry)  # fmt: skip
    if kind in ("PUBACK", "PUBREC"):  # a subscriber acknowledges a copy
        return Ack(client)
    return None


def _event(entry: Mapping[str, Any]) -> Action:
    event = entry["event"]
    if event == "connection-lost":
        return Lost(_client(entry))
    if event == "retained-discarded":
        return Discard(entry["topic"])
    if event == "clock":
        return Advance(entry["advance_ms"])
    raise ValueError(f"an event the distribution model does not know: {event!r}")


def actions_of(run: Run, entry: Mapping[str, Any]) -> list[Action]:
    """The actions whose trace may begin with ``entry``, from where ``run`` is: a client's
    packet or an event says its action; a copy the server sends first may be any it owes
    that client (the caller compares what each records). Notes and the server's other
    packets begin no action."""
    if _is_note(entry) or entry.get("event") == "server":
        return []
    if "event" in entry:
        return [_event(entry)]
    if entry.get("dir") == "c2s":
        action = _from_client(entry)
        return [] if action is None else [action]
    if entry.get("type") == "PUBLISH" and not entry.get("dup"):
        client = _client(entry)
        if client in run.model.sessions:
            return [Send(client, i) for i in range(len(run.owed(client)))]
    return []


def replay(trace: Sequence[Mapping[str, Any]], reading: str | None = None) -> Run:
    """Run ``trace`` again on a fresh model of the server its first entry names: what the
    clients sent and the events, and the copies the server sent first (each must be one the
    model owes then). With ``reading`` ("name=value"), only the copies tagged with that
    reading count, and the server reads so. The run's trace is the trace again (without
    notes and tags) exactly when the trace is a run of the model."""
    server = trace[0]
    if server.get("event") != "server":
        raise ValueError("a trace of the distribution model opens with the server it ran on")
    readings = dict(server["readings"])
    if reading is not None:
        name, _, value = reading.partition("=")
        readings[name] = value
    run = Run(Edition(server["edition"]), readings)
    for entry in trace[1:]:
        if _is_note(entry) or entry.get("reading", reading) != reading:
            continue
        if "event" in entry:
            run.do(_event(entry))
        elif entry.get("dir") == "c2s":
            if (action := _from_client(entry)) is not None:
                run.do(action)
        elif entry.get("dir") == "s2c" and entry.get("type") == "PUBLISH" and not entry["dup"]:
            client = _client(entry)
            owed = run.owed(client)
            index = next((i for i, c in enumerate(owed) if _same(c, entry)), None)
            if index is None:
                raise ValueError(f"the server sent a copy the model does not owe: {entry}")
            run.do(Send(client, index))
    return run


def _same(copy: Copy, entry: Mapping[str, Any]) -> bool:
    return (copy.topic, copy.message.publication.payload.hex(), copy.qos, copy.retain) == (
        entry["topic"], entry["payload_hex"], entry["qos"], entry["retain"],
    )  # fmt: skip


def plain(trace: Sequence[Mapping[str, Any]], reading: str | None = None) -> list[Entry]:
    """The entries of ``trace`` that are the run itself (no notes; with ``reading``, only
    that reading's copies, and the server's readings with it), without their tags."""
    found = [
        {k: v for k, v in e.items() if k != "reading"}
        for e in trace
        if not _is_note(e) and e.get("reading", reading) == reading
    ]
    if reading is not None and found and found[0].get("event") == "server":
        name, _, value = reading.partition("=")
        found[0] = {**found[0], "readings": {**found[0]["readings"], name: value}}
    return found


__all__ = [
    "Ack",
    "Action",
    "Advance",
    "Connect",
    "Discard",
    "Entry",
    "Lost",
    "Publish",
    "Run",
    "Send",
    "Subscribe",
    "actions_of",
    "copies_p",
    "options",
    "plain",
    "replay",
    "run",
]
