"""The ambiguity catalog (data: ``texts/ambiguities.toml``).

Every place where the five PUBLISH excerpts disagree with each other or with the later
editions, where one is silent, where a translation is wrong, incomplete or garbled, or
where an example does not match its own figure. Each entry quotes the passages exactly
(``quotes``: substrings of ``texts/publish.<lang>.txt``), states the possible readings in
words, says what pubproof does about it (``model``; the reading in
:data:`pubproof.model.editions.READINGS` that switches it, when one exists) and names the
theorem whose counterexample separates the readings (``witness``), when one exists.

MQTT 5.0 is in none of the five excerpts, nor is what 3.1 and 3.1.1 say outside PUBLISH.
An entry quotes such text with a ``source`` ("MQTT 5.0 section 3.3.2.1", "MQTT 3.1.1
section 4.6", "MQTT V3.1 section 2.1"); such a quote is held to the project's record of that
edition's wording (:func:`record`: the quotes of the rules, wire, flow and distribution
alike, the passages of the readings, wire and distribution alike, and the catalog's own
``[[standard]]`` passages for the few sentences neither quotes). An entry about 5.0's wire
format shows ``examples``: bytes written by hand from the wire contract
(``docs/guides/mqtt5-wire.md``) with the verdict each configuration must give; the model's
decoder confirms them (:func:`example_problems`). An entry about the 5.0 flows shows
``traces`` instead: packets and events written by hand in the form of the protocol
theorems' counterexamples, with what the model's 5.0 sessions must do with them
(:func:`trace_outcome`), which :func:`example_problems` has
:func:`pubproof.model.replay.replay` confirm. An entry about distribution (a server's
behaviour across sessions, its reading one of
:data:`pubproof.model.distribution_readings.DISTRIBUTION_READINGS`) shows ``scenarios``:
events written by hand, run through the distribution model under each value of the reading
(:mod:`pubproof.model.ambiguity_scenarios`), with what the model must do under each.
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

from pubproof.model.ambiguity_scenarios import Scenario, load_scenario, scenario_problems
from pubproof.model.clauses import BY_ID as CLAUSES_BY_ID
from pubproof.model.clauses import LANGUAGES, lines
from pubproof.model.distribution_readings import DISTRIBUTION_READINGS
from pubproof.model.distribution_rules import distribution_rules
from pubproof.model.editions import (
    READINGS,
    Edition,
    Limits,
    Reading,
    ReadingError,
    resolve_readings,
)
from pubproof.model.rules import RULES, Rule


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
    #: what a server sends to whom across sessions (no single flow shows it)
    DISTRIBUTION = "changes-distribution"
    EDITORIAL = "editorial"  # nothing a peer can observe


@dataclass(frozen=True, slots=True, kw_only=True)
class Quote:
    """An exact passage of one excerpt, with an English gloss for the translations; or,
    with a ``source``, of a text the excerpts do not hold ("MQTT 5.0 section 3.3.2.1",
    "MQTT 3.1.1 section 4.6", "MQTT V3.1 section 2.1"; a non-normative comment adds
    " (non-normative comment)")."""

    lang: str
    text: str
    note: str | None = None
    source: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Passage:
    """A sentence of a standard (5.0, 3.1.1 or V3.1) that the catalog quotes and no rule or
    reading records."""

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
    #: the name in READINGS (or, for distribution, DISTRIBUTION_READINGS) that switches it
    reading: str | None = None
    witness: str | None = None  # the theorem whose counterexample separates the readings
    #: keys of the rules that embody the choice (wire, flow or distribution rules)
    rules: tuple[str, ...] = ()
    examples: tuple[Example, ...] = ()  # hand-written bytes and their verdicts (5.0)
    traces: tuple[FlowExample, ...] = ()  # hand-written 5.0 traces and their outcomes
    #: hand-written runs of the distribution model under each value of the reading
    scenarios: tuple[Scenario, ...] = ()

    @property
    def the_reading(self) -> Reading | None:
        """The reading that switches it: a wire reading or a distribution reading."""
        if self.reading is None:
            return None
        return READINGS.get(self.reading) or DISTRIBUTION_READINGS.get(self.reading)


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
        scenarios=tuple(load_scenario(e) for e in entry.get("scenarios", ())),
    )


def load(data: Mapping[str, Any]) -> tuple[Ambiguity, ...]:
    """The entries of a parsed catalog, in file order."""
    return tuple(_ambiguity(entry) for entry in data["ambiguity"])


def load_standard(data: Mapping[str, Any]) -> tuple[Passage, ...]:
    """The catalog's ``[[standard]]`` passages: sentences it quotes that no rule does."""
    return tuple(Passage(source=p["source"], text=p["text"]) for p in data.get("standard", ()))


_COMMENT = r"(?: \(non-normative comment\))?"
_SECTION_50 = re.compile(r"MQTT 5\.0 (?:\(OASIS\), )?section (\d+(?:\.\d+)*)" + _COMMENT + "$")
_ID_50 = re.compile(r"MQTT 5\.0 \[MQTT-(\d+(?:\.\d+)*)-\d+\]$")
_SECTION_311 = re.compile(r"MQTT 3\.1\.1 (?:\(OASIS\), )?section (\d+(?:\.\d+)*)" + _COMMENT + "$")
_SECTION_31 = re.compile(r"MQTT V3\.1 (?:section (\d+(?:\.\d+)*)|(Appendix A))$")

#: How each edition's sources are named, for the messages.
SOURCE_PREFIXES = {"5.0": "MQTT 5.0", "3.1.1": "MQTT 3.1.1", "3.1": "MQTT V3.1"}


def _section_50(source: str) -> str | None:
    """The section a 5.0 source names ("MQTT 5.0 section 3.3.2.1", "MQTT 5.0 [MQTT-1.5.5-1]")."""
    match = _SECTION_50.match(source) or _ID_50.match(source)
    return match.group(1) if match else None


def source_section(source: str) -> tuple[str, str] | None:
    """The edition and section a source outside the excerpts names: ("5.0", "3.3.2.1") for
    "MQTT 5.0 section 3.3.2.1", ("3.1.1", "4.6") for "MQTT 3.1.1 section 4.6" (or "MQTT
    3.1.1 (OASIS), section 4.6"), ("3.1", "2.1") for "MQTT V3.1 section 2.1", ("3.1",
    "Appendix A") for "MQTT V3.1 Appendix A"; None for anything else."""
    section = _section_50(source)
    if section is not None:
        return "5.0", section
    match = _SECTION_311.match(source)
    if match:
        return "3.1.1", match.group(1)
    match = _SECTION_31.match(source)
    if match:
        return "3.1", match.group(1) or match.group(2)
    return None


def _squeeze(text: str) -> str:
    return " ".join(text.split())


def _registry() -> tuple[Rule, ...]:
    """Every rule that quotes a standard: wire, flow and distribution rules."""
    return (*RULES.values(), *RULES.flows(), *distribution_rules())


def record(standard: tuple[Passage, ...] = ()) -> dict[tuple[str, str], list[str]]:
    """The project's record of the standards' wording outside the excerpts, by (edition,
    section): every quote of the rules (wire, flow and distribution), every passage of the
    readings (wire and distribution), and ``standard`` (the catalog's own)."""
    found: dict[tuple[str, str], list[str]] = {}
    sources = [(q.source, q.text) for r in _registry() for q in r.quotes]
    readings = (*READINGS.values(), *DISTRIBUTION_READINGS.values())
    sources += [(p.source, p.text) for r in readings for p in r.passages]
    sources += [(p.source, p.text) for p in standard]
    for source, text in sources:
        where = source_section(source)
        if where is not None:
            found.setdefault(where, []).append(_squeeze(text))
    return found


def record_50(standard: tuple[Passage, ...] = ()) -> dict[str, list[str]]:
    """The MQTT 5.0 part of :func:`record`, by section."""
    return {s: texts for (e, s), texts in record(standard).items() if e == "5.0"}


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
    """Every example whose stated verdict is not the model's, every trace whose stated
    outcome is not the model's sessions', and every scenario whose stated outcome is not
    the distribution model's, in words (empty when all hold)."""
    found: list[str] = trace_problems(entries)
    for entry in entries:
        for scenario in entry.scenarios:
            found += scenario_problems(entry.id, entry.reading, scenario)
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
    quote has an English gloss, and every quote of a standard outside the excerpts (with a
    ``source``) is in the project's record of that edition's section (:func:`record`); the
    clause, the reading (a wire or a distribution reading) and the rule keys (wire, flow or
    distribution rules) exist; an entry states at least two readings; an entry with a
    reading says, in ``model``, the reading's default in every edition it applies to; an
    example's configurations exist and its bytes give the stated verdicts, and a trace or a
    scenario gives the stated outcome (:func:`example_problems`). (That the witness
    theorems exist is checked by the tests: the model does not import the proofs.)
    """
    found: list[str] = []
    recorded = record(STANDARD if standard is None else standard)
    keys = {r.key for r in _registry()}
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
        found += [f"{where}: unknown rule key {k!r}" for k in entry.rules if k not in keys]
        for quote in entry.quotes:
            if quote.source is not None:
                at = source_section(quote.source)
                if at is None or quote.lang != "en":
                    named = next(
                        (p for p in SOURCE_PREFIXES.values() if quote.source.startswith(p)),
                        "MQTT 5.0",
                    )
                    found.append(f"{where}: a quote's source is '{named} section <n>' in en: "
                                 f"{quote.source!r}")  # fmt: skip
                elif not quote.text or not any(
                    _squeeze(quote.text) in text for text in recorded.get(at, ())
                ):
                    found.append(
                        f"{where}: not in the project's record of "
                        f"{SOURCE_PREFIXES[at[0]]} section {at[1]}: {quote.text!r}"
                    )
                continue
            if quote.lang not in texts:
                found.append(f"{where}: unknown language {quote.lang!r}")
            elif not quote.text or quote.text not in texts[quote.lang]:
                found.append(f"{where}: not in publish.{quote.lang}.txt: {quote.text!r}")
            if quote.lang != "en" and not (quote.note or "").strip():
                found.append(f"{where}: the {quote.lang} quote {quote.text[:20]!r} has no gloss")
        if entry.reading is not None:
            reading = entry.the_reading
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

#: The passages of the standards the catalog quotes that no rule or reading records.
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
    "record",
    "record_50",
    "source_section",
    "trace_outcome",
    "trace_problems",
]
