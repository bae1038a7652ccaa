"""The ambiguity catalog (data: ``texts/ambiguities.toml``).

Every place where the five PUBLISH excerpts disagree with each other or with the later
editions, where one is silent, where a translation is wrong, incomplete or garbled, or
where an example does not match its own figure. Each entry quotes the passages exactly
(``quotes``: substrings of ``texts/publish.<lang>.txt``), states the possible readings in
words, says what pubproof does about it (``model``; the reading in
:data:`pubproof.model.editions.READINGS` that switches it, when one exists) and names the
theorem whose counterexample separates the readings (``witness``), when one exists.

MQTT 5.0 is in none of the five excerpts. An entry about 5.0 quotes the standard with a
``source`` ("MQTT 5.0 section 3.3.2.1"); such a quote is held to the project's record of
the 5.0 wording (:func:`record_50`: the rules' and the readings' 5.0 quotes, and the
catalog's own ``[[standard]]`` passages for the few sentences no rule quotes). Its
``examples`` are bytes written by hand from the wire contract
(``docs/guides/mqtt5-wire.md``) with the verdict each configuration must give; the model's
decoder confirms them (:func:`example_problems`). An entry about the 5.0 flows shows
``traces`` instead: packets and events written by hand in the form of the protocol
theorems' counterexamples, with what the model's 5.0 sessions must do with them
(:func:`trace_outcome`), which :func:`example_problems` has
:func:`pubproof.model.replay.replay` confirm.
"""

from __future__ import annotations

import enum
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Any

from pubproof.model.clauses import BY_ID as CLAUSES_BY_ID
from pubproof.model.clauses import LANGUAGES, lines
from pubproof.model.editions import READINGS, Edition, Limits, ReadingError, resolve_readings
from pubproof.model.rules import RULES


class Kind(enum.Enum):
    """What sort of difference an entry records."""

    DISAGREEMENT = "disagreement"  # the texts say different things
    SILENCE = "silence"  # one text is silent where others speak
    MISTRANSLATION = "mistranslation"  # a translation says something else than its source
    INCOMPLETE = "incomplete"  # a sentence, table or heading is missing
    GARBLED = "garbled"  # typos, broken words or grammar, capture damage
    EXAMPLE_MISMATCH = "example-mismatch"  # an example disagrees with its own figure
    LATER_EDITION = "later-edition"  # 3.1.1 or 5.0 says something else
    TERMINOLOGY = "terminology"  # the same thing under different names
    NUMBERING = "numbering"  # labels and ids printed wrongly


class Severity(enum.Enum):
    """What depends on the choice between the readings."""

    WIRE = "changes-wire-verdict"  # the verdict on some bytes
    FLOW = "changes-flow-behaviour"  # what an end does in a flow (no single packet shows it)
    EDITORIAL = "editorial"  # nothing a peer can observe


@dataclass(frozen=True, slots=True, kw_only=True)
class Quote:
    """An exact passage of one excerpt, with an English gloss for the translations; or,
    with a ``source``, of the MQTT 5.0 standard ("MQTT 5.0 section 3.3.2.1")."""

    lang: str
    text: str
    note: str | None = None
    source: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Passage:
    """A sentence of the MQTT 5.0 standard that the catalog quotes and no rule records."""

    source: str
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Expected:
    """The verdict one configuration must give on an example's bytes."""

    edition: Edition
    readings: Mapping[str, str]  # the readings set away from the edition's defaults
    limits: Limits  # the receiver's, in 5.0
    verdict: str  # "ok", or "<kind> <rule id> at offset <n>" and, in 5.0, " (0x<code>)"

    @property
    def label(self) -> str:
        """The configuration in words: "5.0, pfi-mei-once=accept", "5.0, defaults"."""
        parts = [self.edition.value, *(f"{k}={v}" for k, v in self.readings.items())]
        if self.limits.topic_alias_maximum:
            parts.append(f"topic_alias_maximum={self.limits.topic_alias_maximum}")
        if self.limits.maximum_packet_size is not None:
            parts.append(f"maximum_packet_size={self.limits.maximum_packet_size}")
        return ", ".join(parts) if len(parts) > 1 else f"{self.edition.value}, defaults"


@dataclass(frozen=True, slots=True, kw_only=True)
class Example:
    """Bytes that show the question, written by hand from the wire contract, with the
    verdict each configuration must give (checked against the model's decoder)."""

    hex: str
    note: str
    verdicts: tuple[Expected, ...]

    @property
    def data(self) -> bytes:
        return bytes.fromhex(self.hex)


@dataclass(frozen=True, slots=True, kw_only=True)
class FlowExample:
    """A 5.0 trace (the protocol theorems' form: packets ``P`` with ``dir`` and ``conn``,
    events ``app-publish``, ``connection-lost``, ``reconnect``) written by hand, with the
    receiving end's limits and what the model's sessions must do with it: for each key of
    ``expect`` ("sent", "delivered", "disconnects", "judged", "waits"), the list
    :func:`trace_outcome` gives."""

    note: str
    entries: tuple[Mapping[str, Any], ...]
    expect: Mapping[str, tuple[str, ...]]
    receive_maximum: int = 65535
    topic_alias_maximum: int = 0  # the receiving end's: none, unless the trace sets one
    method: str = "B"


@dataclass(frozen=True, slots=True, kw_only=True)
class Ambiguity:
    """One entry of the catalog."""

    id: str
    title: str
    clause: str  # a clause id of pubproof.model.clauses
    kinds: tuple[Kind, ...]
    severity: Severity
    summary: str
    quotes: tuple[Quote, ...]
    readings: tuple[str, ...]  # the possible readings, in words
    model: str  # what pubproof does about it
    reading: str | None = None  # the name in READINGS that switches it
    witness: str | None = None  # the theorem whose counterexample separates the readings
    rules: tuple[str, ...] = ()  # keys of RULES that embody the choice
    examples: tuple[Example, ...] = ()  # hand-written bytes and their verdicts (5.0)
    traces: tuple[FlowExample, ...] = ()  # hand-written 5.0 traces and their outcomes


def _expected(row: Mapping[str, Any]) -> Expected:
    limits = row.get("limits", {})
    return Expected(
        edition=Edition.parse(row["edition"]),
        readings=MappingProxyType(dict(row.get("readings", {}))),
        limits=Limits(**limits),
        verdict=row["verdict"],
    )


def _example(entry: Mapping[str, Any]) -> Example:
    return Example(
        hex=entry["hex"],
        note=entry["note"],
        verdicts=tuple(_expected(row) for row in entry["verdicts"]),
    )


def _entry(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    """A trace entry as the sessions take it: TOML has no null, so a PUBLISH without a
    ``packet_id`` (QoS 0) gets None, and every packet its (empty) properties."""
    entry = dict(raw)
    if entry.get("type") == "PUBLISH":
        entry.setdefault("packet_id", None)
        entry.setdefault("retain", False)
    if "type" in entry:
        entry.setdefault("properties", {})
    return MappingProxyType(entry)


def _flow_example(raw: Mapping[str, Any]) -> FlowExample:
    limits = raw.get("limits", {})
    return FlowExample(
        note=raw["note"],
        entries=tuple(_entry(e) for e in raw["entries"]),
        expect=MappingProxyType({k: tuple(v) for k, v in raw["expect"].items()}),
        receive_maximum=int(limits.get("receive_maximum", 65535)),
        topic_alias_maximum=int(limits.get("topic_alias_maximum", 0)),
        method=str(raw.get("method", "B")),
    )


def _ambiguity(entry: Mapping[str, Any]) -> Ambiguity:
    return Ambiguity(
        id=entry["id"],
        title=entry["title"],
        clause=entry["clause"],
        kinds=tuple(Kind(k) for k in entry["kinds"]),
        severity=Severity(entry["severity"]),
        summary=entry["summary"],
        quotes=tuple(
            Quote(lang=q["lang"], text=q["text"], note=q.get("note"), source=q.get("source"))
            for q in entry["quotes"]
        ),
        readings=tuple(entry["readings"]),
        model=entry["model"],
        reading=entry.get("reading"),
        witness=entry.get("witness"),
        rules=tuple(entry.get("rules", ())),
        examples=tuple(_example(e) for e in entry.get("examples", ())),
        traces=tuple(_flow_example(e) for e in entry.get("traces", ())),
    )


def load(data: Mapping[str, Any]) -> tuple[Ambiguity, ...]:
    """The entries of a parsed catalog, in file order."""
    return tuple(_ambiguity(entry) for entry in data["ambiguity"])


def load_standard(data: Mapping[str, Any]) -> tuple[Passage, ...]:
    """The catalog's ``[[standard]]`` passages: 5.0 sentences it quotes that no rule does."""
    return tuple(Passage(source=p["source"], text=p["text"]) for p in data.get("standard", ()))


_SECTION_50 = re.compile(r"MQTT 5\.0 (?:\(OASIS\), )?section (\d+(?:\.\d+)*)$")
_ID_50 = re.compile(r"MQTT 5\.0 \[MQTT-(\d+(?:\.\d+)*)-\d+\]$")


def _section_50(source: str) -> str | None:
    """The section a 5.0 source names ("MQTT 5.0 section 3.3.2.1", "MQTT 5.0 [MQTT-1.5.5-1]")."""
    match = _SECTION_50.match(source) or _ID_50.match(source)
    return match.group(1) if match else None


def _squeeze(text: str) -> str:
    return " ".join(text.split())


def record_50(standard: tuple[Passage, ...] = ()) -> dict[str, list[str]]:
    """The project's record of the MQTT 5.0 standard's wording, by section: every 5.0 quote
    of the rules (wire and flow rules), every 5.0 passage of the readings, and
    ``standard`` (the catalog's own)."""
    found: dict[str, list[str]] = {}
    sources = [(q.source, q.text) for r in (*RULES.values(), *RULES.flows()) for q in r.quotes]
    sources += [(p.source, p.text) for r in READINGS.values() for p in r.passages]
    sources += [(p.source, p.text) for p in standard]
    for source, text in sources:
        section = _section_50(source)
        if section is not None:
            found.setdefault(section, []).append(_squeeze(text))
    return found


def judge(data: bytes, expected: Expected) -> str:
    """The model's verdict on ``data`` in the configuration of ``expected``, in the form the
    catalog writes it."""
    from pubproof.model.wire import decode  # the decoder imports the registries, not this

    verdict = decode(data, expected.edition, expected.readings, expected.limits)
    failure = verdict.failure
    if failure is None:
        return "ok"
    text = f"{failure.kind} {failure.rule} at offset {failure.offset}"
    return text + (f" (0x{failure.reason_code:02X})" if failure.reason_code is not None else "")


def _shown(packet: Mapping[str, Any]) -> str:
    """A sent packet in one line: ``PUBLISH id=1 qos=1 dup=0 topic='t' alias=1``,
    ``PUBACK id=1 rc=0x87``."""
    kind = packet["type"]
    if kind == "PUBLISH":
        alias = packet.get("properties", {}).get("topic_alias")
        return (
            f"PUBLISH id={packet.get('packet_id')} qos={packet['qos']} "
            f"dup={int(bool(packet.get('dup')))} topic={packet['topic']!r}"
            + (f" alias={alias}" if alias is not None else "")
        )
    return f"{kind} id={packet['packet_id']} rc=0x{int(packet.get('reason_code', 0)):02X}"


def trace_outcome(example: FlowExample) -> dict[str, tuple[str, ...]]:
    """What the model's 5.0 sessions do with the trace (:func:`pubproof.model.replay.replay`,
    the sending end the client, the receiving end with the example's limits): every packet
    either end sends, every message delivered (``topic payload_hex``), every DISCONNECT
    (``0x<code> <rule>``), every judgement of the peer (``<verdict> <rule>``) and every
    message that waits for send quota (``<rule>``), each in order."""
    from pubproof.model.flows import Method
    from pubproof.model.replay import replay

    run = replay(
        example.entries,
        method=Method(example.method),
        edition=Edition.V50,
        receive_maximum=example.receive_maximum,
        topic_alias_maximum=example.topic_alias_maximum,
    )
    found: dict[str, list[str]] = {
        "sent": [], "delivered": [], "disconnects": [], "judged": [], "waits": []
    }  # fmt: skip
    for _, outputs in run.steps:
        for out in outputs:
            packet: Mapping[str, Any] = out.packet or {}
            if out.kind == "send":
                found["sent"].append(_shown(packet))
            elif out.kind == "deliver":
                found["delivered"].append(f"{packet['topic']} {packet['payload_hex']}")
            elif out.kind == "disconnect":
                code = getattr(out, "reason_code", None) or 0
                found["disconnects"].append(f"0x{code:02X} {out.rules[0]}")
            elif out.kind == "wait":
                found["waits"].append(out.rules[0])
            else:
                found["judged"].append(f"{out.kind} {out.rules[0]}")
    return {k: tuple(v) for k, v in found.items()}


def trace_problems(entries: tuple[Ambiguity, ...]) -> list[str]:
    """Every hand-written trace whose stated outcome is not the model's, in words."""
    found: list[str] = []
    for entry in entries:
        for example in entry.traces:
            unknown = set(example.expect) - {"sent", "delivered", "disconnects", "judged", "waits"}
            if unknown or not example.expect:
                found.append(f"ambiguity {entry.id!r}: trace {example.note!r}: expects "
                             f"{sorted(unknown) or 'nothing'}")  # fmt: skip
                continue
            try:
                actual = trace_outcome(example)
            except (KeyError, TypeError, ValueError) as error:
                found.append(f"ambiguity {entry.id!r}: trace {example.note!r} does not run: "
                             f"{error!r}")  # fmt: skip
                continue
            for key, stated in example.expect.items():
                if actual[key] != stated:
                    found.append(
                        f"ambiguity {entry.id!r}: trace {example.note!r}: {key}: the model "
                        f"gives {list(actual[key])!r}, the catalog {list(stated)!r}"
                    )
    return found


def example_problems(entries: tuple[Ambiguity, ...]) -> list[str]:
    """Every example whose stated verdict is not the model's, and every trace whose stated
    outcome is not the model's sessions', in words (empty when all hold)."""
    found: list[str] = trace_problems(entries)
    for entry in entries:
        for example in entry.examples:
            try:
                data = example.data
            except ValueError:
                found.append(f"ambiguity {entry.id!r}: example {example.hex!r} is not hex")
                continue
            if not example.verdicts:
                found.append(f"ambiguity {entry.id!r}: example {example.hex} states no verdict")
            for expected in example.verdicts:
                try:
                    resolve_readings(expected.edition, expected.readings)
                except ReadingError as error:
                    found.append(f"ambiguity {entry.id!r}: example {example.hex}: {error}")
                    continue
                actual = judge(data, expected)
                if actual != expected.verdict:
                    found.append(
                        f"ambiguity {entry.id!r}: example {example.hex} under {expected.label}: "
                        f"the model says {actual!r}, the catalog {expected.verdict!r}"
                    )
    return found


def problems(
    entries: tuple[Ambiguity, ...], standard: tuple[Passage, ...] | None = None
) -> list[str]:
    """Everything wrong with a catalog, in words (empty when it holds).

    Ids are unique; every quote is an exact substring of its excerpt and every translated
    quote has an English gloss, and every quote of the 5.0 standard (with a ``source``) is
    in the project's record of that section (:func:`record_50`); the clause, the reading
    and the rule keys exist; an entry states at least two readings; an entry with a reading
    says, in ``model``, the reading's default in every edition it applies to; an example's
    configurations exist and its bytes give the stated verdicts
    (:func:`example_problems`). (That the witness theorems exist is checked by the tests:
    the model does not import the proofs.)
    """
    found: list[str] = []
    record = record_50(STANDARD if standard is None else standard)
    ids = [e.id for e in entries]
    found += [
        f"ambiguity id {i!r} is used twice" for i in sorted({i for i in ids if ids.count(i) > 1})
    ]
    texts = {lang: "\n".join(lines(lang)) for lang in LANGUAGES}
    for entry in entries:
        where = f"ambiguity {entry.id!r}"
        if entry.clause not in CLAUSES_BY_ID:
            found.append(f"{where}: unknown clause {entry.clause!r}")
        if not entry.kinds:
            found.append(f"{where}: no kinds")
        if not entry.quotes:
            found.append(f"{where}: no quotes")
        if len(entry.readings) < 2:
            found.append(f"{where}: fewer than two readings")
        flow_keys = {r.key for r in RULES.flows()}
        found += [
            f"{where}: unknown rule key {k!r}"
            for k in entry.rules
            if k not in RULES and k not in flow_keys
        ]
        for quote in entry.quotes:
            if quote.source is not None:
                section = _section_50(quote.source)
                if section is None or quote.lang != "en":
                    found.append(f"{where}: a quote's source is 'MQTT 5.0 section <n>' in en: "
                                 f"{quote.source!r}")  # fmt: skip
                elif not quote.text or not any(
                    _squeeze(quote.text) in text for text in record.get(section, ())
                ):
                    found.append(
                        f"{where}: not in the project's record of MQTT 5.0 section {section}: "
                        f"{quote.text!r}"
                    )
                continue
            if quote.lang not in texts:
                found.append(f"{where}: unknown language {quote.lang!r}")
            elif not quote.text or quote.text not in texts[quote.lang]:
                found.append(f"{where}: not in publish.{quote.lang}.txt: {quote.text!r}")
            if quote.lang != "en" and not (quote.note or "").strip():
                found.append(f"{where}: the {quote.lang} quote {quote.text[:20]!r} has no gloss")
        if entry.reading is not None:
            reading = READINGS.get(entry.reading)
            if reading is None:
                found.append(f"{where}: unknown reading {entry.reading!r}")
                continue
            for edition, value in reading.defaults.items():
                if f"{edition.value}: {value}" not in entry.model:
                    found.append(
                        f"{where}: model does not state the default '{edition.value}: {value}'"
                    )
    found += example_problems(entries)
    return found


def _read() -> dict[str, Any]:
    source = resources.files("pubproof.model.texts") / "ambiguities.toml"
    return tomllib.loads(source.read_text(encoding="utf-8"))


_DATA = _read()
AMBIGUITIES: tuple[Ambiguity, ...] = load(_DATA)

#: The 5.0 passages the catalog quotes that no rule or reading records.
STANDARD: tuple[Passage, ...] = load_standard(_DATA)

#: Entries by id.
BY_ID: Mapping[str, Ambiguity] = MappingProxyType({a.id: a for a in AMBIGUITIES})

__all__ = [
    "AMBIGUITIES",
    "BY_ID",
    "STANDARD",
    "Ambiguity",
    "Example",
    "Expected",
    "FlowExample",
    "Kind",
    "Passage",
    "Quote",
    "Severity",
    "example_problems",
    "judge",
    "load",
    "load_standard",
    "problems",
    "record_50",
    "trace_outcome",
    "trace_problems",
]
