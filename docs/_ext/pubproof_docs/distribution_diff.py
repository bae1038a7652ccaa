"""The distribution part of the edition-diff page: MQTT 3.1 -> 3.1.1 -> 5.0 for a server's
behaviour across sessions.

- **Rule by rule**, from the registry's distribution rules (``RULES.distributions()``): for
  each pair of adjacent editions, the rules whose id changes, the rules that appear or go,
  and where one edition's rule stands for another's with another strength or wording (a 3.1
  rule ``<key>-31`` and the 3.1.1 rule ``<key>``; a 5.0 rule ``dist50.<x>`` and the rule
  ``dist.<x>`` of the editions before).
- **What changes a model of a broker**: the distribution index's list of the differences
  (note (b) of ``docs/data/distribution-index.md``, its words), and for those a run of the
  model shows, a **witness**: the same events given to the distribution model in both
  editions (:func:`pubproof.model.ambiguity_scenarios.run`, the scenario runner of the
  ambiguity catalog), its two outcomes computed while the page is built.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pubproof.model.ambiguity_scenarios import Scenario, load_scenario, run
from pubproof.model.distribution_readings import DISTRIBUTION_READINGS
from pubproof.model.editions import Edition
from pubproof.model.rules import RULES, Rule
from pubproof_docs.context import Context, dist_index_path
from pubproof_docs.pages_trace import need, paraphrase
from pubproof_docs.rst import esc, heading, list_table, literal
from pubproof_docs.trace import need_id

V31, V311, V50 = Edition.V31, Edition.V311, Edition.V50
PAIRS = ((V31, V311), (V311, V50))


@dataclass(frozen=True, slots=True, kw_only=True)
class Witness:
    """Events that the distribution model handles otherwise in two editions."""

    title: str
    editions: tuple[Edition, Edition]
    scenario: Scenario
    item: int | None = None  # the difference of the distribution index it shows

    def outcomes(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The model's outcome in each of the two editions, with their default readings."""
        a, b = self.editions
        return run(self.scenario, {}, a), run(self.scenario, {}, b)


def _witness(
    title: str, editions: tuple[Edition, Edition], steps: list[dict[str, Any]], **kw: Any
) -> Witness:
    config = kw.pop("config", {})
    scenario = load_scenario(
        {"note": title, "edition": editions[0].value, "steps": steps, "expect": {},
         "config": config}
    )  # fmt: skip
    return Witness(title=title, editions=editions, scenario=scenario, **kw)


#: The witnesses: events written by hand, their outcomes computed by the model.
WITNESSES: tuple[Witness, ...] = (
    _witness(
        "a filter that starts with a wildcard, a topic name that starts with '$'",
        (V31, V311),
        [
            {"connect": "c"},
            {"subscribe": "c", "filters": [{"filter": "#", "qos": 0}]},
            {"publish": "p", "topic": "$SYS/load", "qos": 0},
        ],
    ),
    _witness(
        "a QoS 0 message published while a persistent session's client is away",
        (V31, V311),
        [
            {"connect": "c", "clean": False},
            {"subscribe": "c", "filters": [{"filter": "a", "qos": 1}]},
            {"disconnect": "c"},
            {"publish": "p", "topic": "a", "qos": 0},
            {"connect": "c", "clean": False},
        ],
    ),
    _witness(
        "CleanSession 0 / Clean Start 0 without a Session Expiry Interval: does the session "
        "outlive its connection?",
        (V311, V50),
        [
            {"connect": "c", "clean": False},
            {"subscribe": "c", "filters": [{"filter": "a", "qos": 1}]},
            {"disconnect": "c"},
            {"publish": "p", "topic": "a", "qos": 1},
            {"connect": "c", "clean": False},
        ],
        item=1,
    ),
    _witness(
        "a server without wildcard subscriptions refuses a/+",
        (V311, V50),
        [{"connect": "c"}, {"subscribe": "c", "filters": [{"filter": "a/+", "qos": 1}]}],
        config={"wildcard_subscriptions": False},
        item=9,
    ),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Difference:
    """One item of the distribution index's note (b)."""

    number: int
    title: str
    text: str


_ITEM = re.compile(r"^(\d+)\. \*\*(.+?)\*\*\s*(.*)$")


def differences(path: Path) -> list[Difference]:
    """The numbered items of note (b) of the distribution index, "edition differences that
    change a broker model", in the index's words."""
    text = path.read_text(encoding="utf-8")
    start = text.index("### (b)")
    end = text.index("\n## ", start)
    found: list[Difference] = []
    for line in text[start:end].splitlines():
        match = _ITEM.match(line)
        if match:
            number, title, rest = match.groups()
            found.append(Difference(number=int(number), title=title.rstrip("."), text=rest))
        elif found and line.startswith("   ") and line.strip():
            last = found[-1]
            found[-1] = Difference(
                number=last.number, title=last.title, text=f"{last.text} {line.strip()}"
            )
    return found


def _rule_cell(ctx: Context, rule: Rule, edition: Edition) -> str:
    prefix = "R50_" if edition is V50 else "R_"
    node = ctx.trace.rules.get(need_id(prefix, rule.key))
    name = need(node.need) if node is not None else literal(rule.key)
    return f"{name} {literal(rule.ids[edition])} ({esc(rule.strength.value)})"


def _counterpart(rule: Rule, edition: Edition) -> Rule | None:
    """The rule of ``edition`` that says what ``rule`` says there: ``<key>-31`` <-> ``<key>``,
    ``dist50.<x>`` <-> ``dist.<x>``."""
    keys = {r.key: r for r in RULES.distributions()}
    candidates = [rule.key.removesuffix("-31"), rule.key + "-31"]
    if rule.key.startswith("dist50."):
        candidates.append("dist." + rule.key.removeprefix("dist50."))
    elif rule.key.startswith("dist."):
        candidates.append("dist50." + rule.key.removeprefix("dist."))
    for key in candidates:
        other = keys.get(key)
        if other is not None and other is not rule and edition in other.ids:
            return other
    return None


def _rule_changes(ctx: Context, a: Edition, b: Edition) -> str:
    renamed, replaced, new, gone = [], [], [], []
    for rule in RULES.distributions():
        in_a, in_b = a in rule.ids, b in rule.ids
        if in_a and in_b:
            if rule.ids[a] != rule.ids[b]:
                renamed.append([literal(rule.key), esc(rule.title),
                                f"{literal(rule.ids[a])} → {literal(rule.ids[b])}"])  # fmt: skip
        elif in_b:
            other = _counterpart(rule, a)
            if other is not None and b not in other.ids:
                replaced.append([_rule_cell(ctx, other, a), _rule_cell(ctx, rule, b),
                                 esc(rule.title)])  # fmt: skip
            else:
                new.append(f"{_rule_cell(ctx, rule, b)}: {esc(rule.title)}")
        elif in_a and _counterpart(rule, b) is None:
            gone.append(f"{_rule_cell(ctx, rule, a)}: {esc(rule.title)}")
    out = [
        f"{len(replaced)} rules of {a.value} stand for a rule of {b.value} worded or bound "
        f"otherwise, {len(new)} are stated first in {b.value}, {len(gone)} have no {b.value} "
        f"counterpart, and {len(renamed)} keep their rule under another id.\n"
    ]
    if replaced:
        out.append(list_table([f"in {a.value}", f"in {b.value}", f"what {b.value} says"],
                              replaced, widths=[30, 30, 40]))  # fmt: skip
    if new:
        out.append(f".. rubric:: Stated first in {b.value}\n")
        if a is V31:
            out.append(
                "MQTT 3.1 is silent on these: where the model needs one for a 3.1 server it "
                "applies the 3.1.1 rule and cites its 3.1.1 id, unless a reading says what 3.1 "
                "leaves open (``dollar-topics``, ``retained-qos-31``, ``retained-empty-31``).\n"
            )
        out.extend(f"- {item}" for item in new)
        out.append("")
    if gone:
        out.append(f".. rubric:: Not in {b.value}\n")
        out.extend(f"- {item}" for item in gone)
        out.append("")
    if renamed:
        out.append(".. rubric:: The same rule, another id\n")
        out.append(list_table(["rule", "what it says", "id"], renamed, widths=[28, 50, 22]))
    return "\n".join(out)


def _witness_block(witness: Witness) -> str:
    a, b = witness.editions
    first, second = witness.outcomes()
    steps = [
        [str(i), literal(json.dumps(dict(step), ensure_ascii=False))]
        for i, step in enumerate(witness.scenario.steps, start=1)
    ]
    server = ", ".join(f"{k}={v}" for k, v in witness.scenario.config.items())
    out = [f"**Witness**: {esc(witness.title)}" + (f" (server: {esc(server)})" if server else "")]
    out.append("")
    out.append(list_table(["step", "event"], steps, widths=[8, 92]))
    out.append(
        list_table(
            [f"MQTT {a.value} (this build)", f"MQTT {b.value} (this build)"],
            [["\n".join(f"- {literal(x)}" for x in first) or "nothing",
              "\n".join(f"- {literal(x)}" for x in second) or "nothing"]],
            widths=[50, 50],
        )
    )  # fmt: skip
    return "\n".join(out)


def section(ctx: Context) -> str:
    """The distribution part of the edition diff."""
    out = [heading("Distribution: a server across sessions", "-")]
    out.append(
        "The distribution rules (``RULES.distributions()``, ``pubproof.model."
        "distribution_rules``) and the readings of distribution, edition by edition; then the "
        "differences the distribution index lists as changing a model of a broker, with a "
        "witness where the same events give the distribution model another outcome in the "
        "two editions (computed while this page was built, each edition with its default "
        "readings).\n"
    )
    rows = []
    for edition in (V31, V311, V50):
        count = sum(edition in r.ids for r in RULES.distributions())
        readings = [n for n, r in DISTRIBUTION_READINGS.items() if r.applies_to(edition)]
        rows.append([edition.value, str(count), ", ".join(literal(n) for n in readings) or "—"])
    out.append(
        list_table(
            ["edition", "distribution rules", "readings of distribution"], rows, widths=[12, 18, 70]
        )
    )
    out.append(
        "The readings' defaults per edition (a dash where the reading is no switch in that "
        "edition); each is an entry of the :doc:`ambiguity catalog <ambiguity-catalog>` with a "
        "scenario that parts its values.\n"
    )
    out.append(
        list_table(
            ["reading", "question", "3.1", "3.1.1", "5.0"],
            [
                [f":ref:`{name} <reading-{name}>`", esc(reading.question),
                 *(literal(reading.defaults[e]) if e in reading.defaults else "—"
                   for e in (V31, V311, V50))]
                for name, reading in DISTRIBUTION_READINGS.items()
            ],
            widths=[16, 48, 12, 12, 12],
        )
    )  # fmt: skip
    for a, b in PAIRS:
        out.append(heading(f"Distribution rules, MQTT {a.value} → {b.value}", "~"))
        out.append(_rule_changes(ctx, a, b))
        for witness in WITNESSES:
            if witness.editions == (a, b) and witness.item is None:
                out.append(_witness_block(witness))
    out.append(heading("What changes a model of a broker, MQTT 3.1.1 → 5.0", "~"))
    out.append(
        "The distribution index's list (note (b) of ``docs/data/distribution-index.md``, its "
        "words), with the model's witness where the same events show the change.\n"
    )
    for item in differences(dist_index_path(ctx.docs)):
        out.append(f"**{item.number}. {esc(item.title)}.** {paraphrase(item.text)}\n")
        for witness in WITNESSES:
            if witness.item == item.number:
                out.append(_witness_block(witness))
    return "\n".join(out)
