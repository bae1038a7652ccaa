"""The traceability model: normative statements, the model rules that implement them, and
the theorems and tests that verify those rules, all computed from the registries.

- statements: every MQTT 3.1.1 id of sections 3.3-3.7 in the normative index (Table A),
  every id a rule of :data:`pubproof.model.rules.RULES` carries (3.1.1, 3.1 and project ids)
  and every id the flow tables of :mod:`pubproof.model.flows` cite; and, keyed apart by
  edition (``5.0:<id>``, need ``S50_...``: 5.0 reuses 3.1.1's numbers for other
  statements), every MQTT 5.0 id of sections 1.5.4, 1.5.5, 2.2.1, 3.3-3.7, 4.3, 4.4 and 4.9
  in Table B, the 5.0 MQTT-2.2.2-1, and every id the rules carry for 5.0 (their 5.0 id; for
  the rules that exist in 5.0 alone, their ``also`` ids too), the 5.0 flow rules' included;
  and every statement of distribution in the distribution index (Table C, MQTT 3.1.1, and
  Table D, MQTT 5.0: sections 3.1.2.4, 3.8 to 3.11, 4.4 to 4.8), with every id the
  distribution rules carry (``RULES.distributions()``: 3.1, 3.1.1, 5.0 and project ids);
- model rules: each registry rule, wire and distribution alike, once for 3.1 and 3.1.1
  (need ``R_<key>``) and once for 5.0 (``R50_<key>``) as far as it exists there; each 5.0
  flow rule
  (:mod:`pubproof.model.flow_rules50`, what the 5.0 flow tables and sessions cite); and for
  each 3.1.1 flow table each id its entries cite (the entries are the implementation of
  that id in that table);
- theorems: :mod:`pubproof.proofs` registry, with the status of the latest run; a theorem
  verifies the model rules whose ids it names in an edition it covers, and counts only
  when its status is the one it expects;
- tests: every test function in ``tests/`` whose string constants name a rule id or a rule
  key (verifies that rule), or a theorem id (checks that theorem); a key or an id that
  stands for statements of both 5.0 and the older editions counts for the 5.0 rule when
  the test names 5.0 (``"5.0"`` or ``V50``) and for the older one unless it names 5.0
  alone; the tests that run the vector corpus (they call ``check_corpus``) verify every
  rule the corpus has cases for in that rule's editions.

A statement is *covered* when a model rule implements it and a passing theorem or a test
verifies that rule. The site's build fails on a statement that is neither covered nor
listed out of scope with a reason.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pubproof.model import flows
from pubproof.model.distribution_rules import distribution_rules
from pubproof.model.editions import Edition
from pubproof.model.rules import RULES, Rule
from pubproof.proofs.catalog import load as load_theorems
from pubproof_docs.data import IndexEntry, OutOfScope, ProveRun, statement_key
from pubproof_docs.sources import Span, TestFunction, rule_definition, table_entries, test_functions

_ID_TOKEN = re.compile(r"(?<![\w.-])(MQTT-\d+(?:\.\d+)*-\d+|PP(?:31|311|50)?-[\w.-]*[\w])(?![\w-])")

V50 = Edition.V50
OLDER = frozenset({Edition.V31, Edition.V311})

#: The MQTT 5.0 sections whose Table B statements are traced (the wire format of "MQTT 5.0,
#: part 1" and the flows of part 2), and the related ids of other sections traced with them.
SECTIONS_50 = ("1.5.4", "1.5.5", "2.2.1", "3.3", "3.4", "3.5", "3.6", "3.7", "4.3", "4.4", "4.9")
RELATED_50 = ("MQTT-2.2.2-1",)

#: The flow tables shown and traced: (name in model/flows.py, QoS 2 method, title).
FLOW_TABLES: tuple[tuple[str, str | None, str], ...] = (
    ("SENDER", None, "sender table"),
    ("UNDEFINED_SENDER", None, "sender: undefined pairs"),
    ("RECEIVER_COMMON", None, "receiver table (both methods)"),
    ("RECEIVER_METHOD", "A", "receiver table, Method A"),
    ("RECEIVER_METHOD", "B", "receiver table, Method B"),
    ("UNDEFINED_RECEIVER", None, "receiver: undefined pairs"),
)


def need_id(prefix: str, name: str) -> str:
    """A sphinx-needs id: upper case, letters, digits and ``_`` (a ``.`` would name a part)."""
    return prefix + re.sub(r"[^A-Z0-9]+", "_", name.upper()).strip("_")


def section_of(rule_id: str) -> str:
    """The section a rule id names: ``MQTT-3.3.1-4`` -> 3.3.1, ``PP31-3.3-x`` -> 3.3,
    ``PP31-A-x`` -> Appendix A (of MQTT 3.1)."""
    match = re.match(r"MQTT-([\d.]+)-\d+$|PP(?:31|311|50)?-([\d.]+|A)-", rule_id)
    if not match:
        return "scope"
    section = match.group(1) or match.group(2)
    return "Appendix A" if section == "A" else section


def edition_of(rule_id: str) -> str:
    """The edition of an id outside 5.0 (a 5.0 statement is keyed as one: ``5.0:<id>``)."""
    if rule_id.startswith("PP31-"):
        return "3.1"
    if rule_id.startswith(("MQTT-", "PP311-")):
        return "3.1.1"
    return "all"


def key_50(rule_id: str) -> str:
    """The statement key of a 5.0 id (a project id shared by every edition stays itself)."""
    return rule_id if rule_id.startswith("PP-") else statement_key(rule_id, "5.0")


@dataclass(kw_only=True)
class Statement:
    ref: str  # the id as the standard (or the project) writes it
    key: str  # the key in Trace.statements: ref, or "5.0:<ref>" for a 5.0 statement
    need: str
    section: str
    edition: str
    strength: str
    binds: str
    text: str  # paraphrase from the index, or the rule's title / the table's comment
    origin: str  # where the statement was taken from
    implemented_by: list[str] = field(default_factory=list)  # model rule needs
    out_of_scope: OutOfScope | None = None

    @property
    def title(self) -> str:
        if self.edition == "5.0":
            return f"{self.ref} (MQTT 5.0): {self.text}"
        return f"{self.ref}: {self.text}"


@dataclass(kw_only=True)
class ModelRule:
    need: str
    title: str
    implements: list[str]  # statement keys
    spans: list[Span]
    ids: tuple[str, ...] = ()  # the ids as written (what theorems and tests name)
    editions: frozenset[Edition] = OLDER  # the editions this node stands for
    key: str | None = None  # registry key, for a registry rule
    table: str | None = None  # flow table title, for a table's entries
    rule: Rule | None = None
    verified_by: list[str] = field(default_factory=list)  # theorem and test needs
    corpus_cases: int = 0


@dataclass(kw_only=True)
class TheoremNode:
    id: str
    need: str
    statement: str
    rules: tuple[str, ...]
    method: str
    expected: str
    status: str
    seconds: float
    verifies: list[str] = field(default_factory=list)  # model rule needs

    @property
    def as_expected(self) -> bool:
        return self.status == self.expected


@dataclass(kw_only=True)
class TestNode:
    function: TestFunction
    need: str
    verifies: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)  # theorem needs
    corpus: bool = False

    @property
    def nodeid(self) -> str:
        return self.function.nodeid


@dataclass(kw_only=True)
class Trace:
    statements: dict[str, Statement]  # by key (ref, or "5.0:<ref>")
    rules: dict[str, ModelRule]  # by need id
    theorems: dict[str, TheoremNode]  # by theorem id
    tests: dict[str, TestNode]  # by need id
    corpus_by_rule_id: Counter[tuple[str, str]]  # by (edition, rule id)
    problems: list[str]

    def covered(self, statement: Statement) -> bool:
        return any(self.rule_verified(self.rules[r]) for r in statement.implemented_by)

    def rule_verified(self, rule: ModelRule) -> bool:
        return bool(rule.verified_by)

    def uncovered(self) -> list[Statement]:
        return [
            s for s in self.statements.values() if not self.covered(s) and s.out_of_scope is None
        ]

    def rules_for_key(self, key: str) -> ModelRule:
        """The registry rule's node for 3.1 and 3.1.1, or its 5.0 node for a 5.0-only rule."""
        return self.rules.get(need_id("R_", key)) or self.rules[need_id("R50_", key)]

    def flow_rules_for(self, rule_id: str) -> list[ModelRule]:
        return [r for r in self.rules.values() if r.table is not None and rule_id in r.implements]

    def statements_of(self, edition: str) -> list[Statement]:
        """The statements of one edition ("5.0") or of the older ones (any other value)."""
        return [s for s in self.statements.values() if (s.edition == "5.0") == (edition == "5.0")]


def _older_ids(rule: Rule) -> list[str]:
    """The ids the rule carries in 3.1 and 3.1.1, with ``also`` (which are 3.1.1 ids when
    the rule exists there)."""
    ids = [i for e, i in rule.ids.items() if e in OLDER]
    return list(dict.fromkeys([*ids, *rule.also])) if ids else []


def _ids_50(rule: Rule) -> list[str]:
    """The ids the rule carries in 5.0: its 5.0 id and, for a rule that exists in 5.0
    alone, its ``also`` ids (the labelled 5.0 statements that bind the same thing)."""
    if V50 not in rule.ids:
        return []
    alone = not any(e in OLDER for e in rule.ids)
    return list(dict.fromkeys([rule.ids[V50], *(rule.also if alone else ())]))


def _names_rule(
    function: TestFunction, node: ModelRule, shared_ids: set[str], shared_keys: set[str]
) -> bool:
    """Whether a test names ``node`` (its ids, or its key). An id or a key that stands for
    rules of both 5.0 and the older editions counts for the 5.0 node when the test names
    5.0 (``"5.0"``, ``V50``), and for the older node unless the test names 5.0 alone; a test
    parametrized over every edition names them all."""
    mentioned = {i for text in function.strings for i in _ID_TOKEN.findall(text)}
    every = function.all_editions  # parametrized over every edition
    names_50 = every or "5.0" in function.strings or "V50" in function.names
    names_older = every or bool(
        {"3.1", "3.1.1"} & function.strings or {"V31", "V311"} & function.names
    )
    in_context = names_50 if V50 in node.editions else names_older or not names_50
    if any(i not in shared_ids or in_context for i in mentioned.intersection(node.ids)):
        return True
    return node.key in function.strings and (node.key not in shared_keys or in_context)


#: Where the registry's rules are defined, and the function each file registers them with:
#: the wire rules, then the distribution rules of 3.1, 3.1.1 and 5.0, then those of 5.0 alone.
RULE_FILES: tuple[tuple[str, str], ...] = (
    ("wire_rules.py", "rule"),
    ("distribution_rules.py", "dist"),
    ("distribution_rules50.py", "dist50"),
)


def registry_rules() -> list[Rule]:
    """Every rule of the registry the trace shows by key: the wire rules (the mapping) and
    the distribution rules (``Kind.DISTRIBUTION``), in the order registered."""
    return [*RULES.values(), *distribution_rules()]


def _definition(root: Path, key: str) -> Span:
    """The lines of ``model/`` that register the rule ``key``."""
    for name, call in RULE_FILES:
        try:
            return rule_definition(root / "model" / name, key, call=call)
        except LookupError:
            continue
    files = ", ".join(name for name, _ in RULE_FILES)
    raise LookupError(f"no definition of the rule {key!r} in model/ ({files})")


def _flow_table(name: str, method: str | None) -> Mapping[object, object]:
    table = getattr(flows, name)
    if method is not None:
        table = table[flows.Method(method)]
    return table  # type: ignore[no-any-return]


def _cited(entry: object) -> tuple[str, ...]:
    return tuple(getattr(entry, "rules", ()))


def build(
    *,
    root: Path,
    index: Mapping[str, IndexEntry],
    index_50: Mapping[str, IndexEntry],
    dist_index: Mapping[str, IndexEntry],
    dist_index_50: Mapping[str, IndexEntry],
    out_of_scope: Mapping[str, OutOfScope],
    prove: ProveRun,
) -> Trace:
    """The whole traceability model of the project at ``root``: ``index`` and ``index_50``
    are Tables A and B of the normative index, ``dist_index`` and ``dist_index_50`` Tables
    C and D of the distribution index (a row of Table A or B wins over the same id's row of
    C or D, which repeats it)."""
    problems: list[str] = []
    statements: dict[str, Statement] = {}

    def statement(ref: str, text: str, origin: str, strength: str = "", binds: str = "") -> None:
        if ref in statements:
            return
        entry = index.get(ref) or dist_index.get(ref)
        if entry is not None:
            origin = "normative index (Table A)" if ref in index else "distribution index (Table C)"
        statements[ref] = Statement(
            ref=ref,
            key=ref,
            need=need_id("S_", ref),
            section=entry.section if entry else section_of(ref),
            edition=edition_of(ref),
            strength=entry.strength if entry else strength,
            binds=entry.binds if entry else binds,
            text=entry.paraphrase if entry else text,
            origin=origin,
        )

    def statement_50(ref: str, text: str, origin: str, strength: str = "", binds: str = "") -> None:
        key = key_50(ref)
        if key != statement_key(ref, "5.0"):  # a project id of every edition
            statement(ref, text, origin, strength, binds)
            return
        if key in statements:
            return
        entry = index_50.get(ref) or dist_index_50.get(ref)
        if entry is not None:
            origin = (
                "normative index (Table B, MQTT 5.0)"
                if ref in index_50
                else "distribution index (Table D, MQTT 5.0)"
            )
        paraphrase = entry.paraphrase if entry else text
        if entry and entry.paraphrase.startswith("Same ") and ref in index:
            # a row for a range of ids "as 3.1.1": that id's own paraphrase from Table A
            paraphrase = f"{index[ref].paraphrase} ({entry.paraphrase.rstrip('.')})"
        statements[key] = Statement(
            ref=ref,
            key=key,
            need=need_id("S50_", ref),
            section=entry.section if entry else section_of(ref),
            edition="5.0",
            strength=entry.strength if entry else strength,
            binds=entry.binds if entry else binds,
            text=paraphrase,
            origin=origin,
        )

    for ref, entry in index.items():
        if entry.section.split(".")[0] == "3" and entry.section[:3] in {
            "3.3", "3.4", "3.5", "3.6", "3.7"
        }:  # fmt: skip
            statement(ref, entry.paraphrase, "normative index")

    from pubproof.model.clauses import CLAUSES

    for clause in CLAUSES:
        for ref in clause.normative_ids:
            statement(ref, f"named by the clause {clause.title!r}", f"clause {clause.id}")

    for ref, entry in index_50.items():
        if ref in RELATED_50 or any(
            entry.section == s or entry.section.startswith(s + ".") for s in SECTIONS_50
        ):
            statement_50(ref, entry.paraphrase, "normative index")

    # distribution: every statement of Tables C and D
    for ref, entry in dist_index.items():
        statement(ref, entry.paraphrase, "distribution index")
    for ref, entry in dist_index_50.items():
        statement_50(ref, entry.paraphrase, "distribution index")

    rules: dict[str, ModelRule] = {}
    for rule in registry_rules():
        key = rule.key
        try:
            spans = [_definition(root, key)]
        except LookupError as error:
            problems.append(str(error))
            spans = []
        ids = _older_ids(rule)
        for ref in ids:
            statement(ref, rule.title, f"rule {key}", rule.strength.value, rule.binds.value)
        if ids:
            rules[need_id("R_", key)] = ModelRule(
                need=need_id("R_", key),
                title=f"rule {key}: {rule.title}",
                implements=ids,
                spans=spans,
                ids=tuple(ids),
                editions=frozenset(e for e in rule.ids if e in OLDER),
                key=key,
                rule=rule,
            )
        ids = _ids_50(rule)
        if ids and RULES.by_id(ids[0], V50) is not rule:  # the exact, edition-keyed look-up
            problems.append(f"{ids[0]} names another rule than {key} in 5.0")
        for ref in ids:
            statement_50(ref, rule.title, f"rule {key}", rule.strength.value, rule.binds.value)
        if ids:
            rules[need_id("R50_", key)] = ModelRule(
                need=need_id("R50_", key),
                title=f"rule {key} (MQTT 5.0): {rule.title}",
                implements=[key_50(i) for i in ids],
                spans=spans,
                ids=tuple(ids),
                editions=frozenset({V50}),
                key=key,
                rule=rule,
            )

    flow_rules50 = root / "model" / "flow_rules50.py"
    for flow_rule in RULES.flows():
        if V50 not in flow_rule.ids:
            continue
        ref = flow_rule.ids[V50]
        try:
            spans = [rule_definition(flow_rules50, flow_rule.key, call="_flow")]
        except LookupError as error:
            problems.append(str(error))
            spans = []
        statement_50(
            ref,
            flow_rule.title,
            f"flow rule {flow_rule.key}",
            flow_rule.strength.value,
            flow_rule.binds.value,
        )
        rules[need_id("R50_", flow_rule.key)] = ModelRule(
            need=need_id("R50_", flow_rule.key),
            title=f"flow rule {flow_rule.key} (MQTT 5.0): {flow_rule.title}",
            implements=[key_50(ref)],
            spans=spans,
            ids=(ref,),
            editions=frozenset({V50}),
            key=flow_rule.key,
            rule=flow_rule,
        )

    # the 3.1.1 flow rules the distribution model cites besides the flow tables (the session
    # of 3.1.2.4 and 4.1, the DUP of a forwarded copy, re-sending on reconnect)
    flow_rules311 = root / "model" / "flow_rules.py"
    for flow_rule in RULES.flows():
        ids = _older_ids(flow_rule)
        if not ids:
            continue
        try:
            spans = [rule_definition(flow_rules311, flow_rule.key, call="_flow")]
        except LookupError as error:
            problems.append(str(error))
            spans = []
        for ref in ids:
            statement(ref, flow_rule.title, f"flow rule {flow_rule.key}",
                      flow_rule.strength.value, flow_rule.binds.value)  # fmt: skip
        rules[need_id("R_", flow_rule.key)] = ModelRule(
            need=need_id("R_", flow_rule.key),
            title=f"flow rule {flow_rule.key}: {flow_rule.title}",
            implements=ids,
            spans=spans,
            ids=tuple(ids),
            editions=frozenset(e for e in flow_rule.ids if e in OLDER),
            key=flow_rule.key,
            rule=flow_rule,
        )

    flows_py = root / "model" / "flows.py"
    for name, method, title in FLOW_TABLES:
        table = _flow_table(name, method)
        cited = list(dict.fromkeys(ref for entry in table.values() for ref in _cited(entry)))
        for ref in cited:
            spans = table_entries(flows_py, name, ref, method)
            if not spans:
                problems.append(f"{title}: no entry found in the source for {ref}")
            notes = [getattr(entry, "note", "") for entry in table.values() if ref in _cited(entry)]
            statement(ref, next((n for n in notes if n), f"cited by the {title}"), title)
            label = f"{name}{'-' + method if method else ''}-{ref}"
            rules[need_id("F_", label)] = ModelRule(
                need=need_id("F_", label),
                title=f"{title}: the entries citing {ref}",
                implements=[ref],
                spans=spans,
                ids=(ref,),
                table=title,
            )

    for rule_node in rules.values():
        for ref in rule_node.implements:
            statements[ref].implemented_by.append(rule_node.need)

    for key, reason in out_of_scope.items():
        if key not in statements:
            problems.append(f"out-of-scope.toml names {key}, which is not a traced statement")
        else:
            statements[key].out_of_scope = reason

    theorems: dict[str, TheoremNode] = {}
    for registered in load_theorems():
        proved = prove.theorems.get(registered.id)
        if proved is None:
            problems.append(
                f"theorem {registered.id} is not in {prove.path}: the prove run is stale"
            )
            continue
        node = TheoremNode(
            id=registered.id,
            need=need_id("TH_", registered.id),
            statement=registered.statement,
            rules=registered.rules,
            method=proved.method,
            expected=proved.expected,
            status=proved.status,
            seconds=proved.seconds,
        )
        named = set(registered.rules)
        covers = set(registered.editions)
        node.verifies = [
            r.need for r in rules.values() if named.intersection(r.ids) and covers & r.editions
        ]
        theorems[registered.id] = node
        if node.as_expected:
            for rule_need in node.verifies:
                rules[rule_need].verified_by.append(node.need)

    corpus = Counter[tuple[str, str]]()
    for line in (root / "vectors" / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        if case.get("rule"):
            corpus[case.get("edition", ""), case["rule"]] += 1
    for rule_node in rules.values():
        if rule_node.key is not None:
            rule_node.corpus_cases = sum(
                corpus[e.value, ref] for e in rule_node.editions for ref in rule_node.ids
            )

    # ids and keys that stand for statements of 5.0 and of the older editions at once
    shared_ids = {i for r in rules.values() if V50 not in r.editions for i in r.ids} & {
        i for r in rules.values() if V50 in r.editions for i in r.ids
    }
    shared_keys = {
        r.key
        for r in registry_rules()
        if need_id("R_", r.key) in rules and need_id("R50_", r.key) in rules
    }

    tests: dict[str, TestNode] = {}
    by_key = [r for r in rules.values() if r.key is not None]
    for function in test_functions(root / "tests"):
        verifies = [
            r.need for r in rules.values() if _names_rule(function, r, shared_ids, shared_keys)
        ]
        checks = [t.need for t in theorems.values() if t.id in function.strings]
        corpus_run = "check_corpus" in function.calls
        if corpus_run:
            verifies += [r.need for r in by_key if r.corpus_cases and r.need not in verifies]
        if not verifies and not checks:
            continue
        test = TestNode(
            function=function,
            need=need_id("TE_", f"{function.path.stem}-{function.name}"),
            verifies=verifies,
            checks=checks,
            corpus=corpus_run,
        )
        tests[test.need] = test
        for rule_need in verifies:
            rules[rule_need].verified_by.append(test.need)

    for key, reason in out_of_scope.items():
        st = statements.get(key)
        if st is not None and any(rules[r].verified_by for r in st.implemented_by):
            problems.append(
                f"out-of-scope.toml lists {key}, but the model implements and verifies it"
            )
        elif st is not None and reason.kind == "statement" and st.implemented_by:
            problems.append(
                f"out-of-scope.toml lists {key} as outside the model, but the model implements it"
                " (list it as [[unverified]])"
            )
    return Trace(
        statements=statements,
        rules=rules,
        theorems=theorems,
        tests=tests,
        corpus_by_rule_id=corpus,
        problems=problems,
    )


def by_section(statements: Iterable[Statement]) -> list[Statement]:
    def key(s: Statement) -> tuple[int, list[int], str]:
        order = {"3.1.1": 0, "3.1": 1, "all": 2, "5.0": 3}[s.edition]
        # an appendix (and the scope) after the numbered sections
        numbers = [int(p) for p in s.section.split(".") if p.isdigit()] or [99]
        return order, numbers, s.key

    return sorted(statements, key=key)
