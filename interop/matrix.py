"""The conformance matrix: every broker, client and codec we can install, judged by pubproof.

``python interop/matrix.py [--only NAME...] [--out DIR] [--runs N]`` starts every broker
(:mod:`brokers`) and probes it in every edition it speaks, probes every client library
through its shipped driver (``pubproof probe-client``), runs the vector corpus against every
codec (:mod:`codec_corpus`), and writes under ``DIR`` (default ``docs/matrix``):

- ``results.json``: the date, pubproof's version, every implementation with its kind,
  version and editions, and one row per (implementation, edition, check): ``version``,
  ``verdict``,
  ``rules``, ``rule_verdicts``, ``message``, ``evidence`` (the file and anchor of its
  trace), ``stable`` (false when the runs gave different verdicts); and the codecs'
  disagreements with the corpus, by rule;
- ``evidence/IMPLEMENTATION-EDITION.json``: each probe's full report (``pubproof probe
  --json`` shape), the trace of every verdict, without this machine's paths
  (:func:`portable`).

``--rejudge`` contacts nothing: it judges every committed trace again with the model as it
is now and rewrites the verdicts, per-rule verdicts and messages that changed, printing
each changed verdict (after a change to a judge: the committed matrix stays what its
evidence shows).

``--edition E...`` runs only those editions (e.g. ``--edition 5.0``). A run narrowed by
``--only`` or ``--edition`` merges into the committed ``results.json``: the rows, evidence
and codecs of what it re-ran are replaced, everything else is kept as committed.

With ``--runs 2`` (the default) every probe runs twice; a check whose verdict differs
between the runs is kept with ``stable: false`` (its first verdict) and the comparison
(``--check``) leaves it out. A check seen to flip in later ``--check`` runs is marked so by
hand in ``results.json``, with the verdicts seen (``observed``). ``--check`` re-runs the
selected implementations and exits 1 when a stable verdict differs from the committed
``results.json`` in the first run and in each of ``RETRIES`` re-runs of that implementation
(a verdict that flips once under load is timing, reported on standard error, not a
failure). ``--check`` also exits 1 when a committed implementation of the selection cannot
be probed again here (not installed: each is named, with why and what installs it) or when
a committed verdict has no counterpart in the fresh run, unless it is left out with ``--skip
NAME...`` (an implementation's name in ``results.json``, e.g. ``rabbitmq`` or
``mqtt-packet-codec``): a check that probes nothing never passes.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import brokers  # noqa: E402
import codec_corpus as corpus_codecs  # noqa: E402

from pubproof import __version__  # noqa: E402
from pubproof.probe.clients.shipped import SHIPPED  # noqa: E402

PUBPROOF = str(Path(sys.executable).parent / "pubproof")
#: how often --check re-runs an implementation whose verdicts differ before it reports them
RETRIES = 2
#: what CI re-runs: the implementations that start in well under a minute
FAST = ("mosquitto", "amqtt", "aedes", "paho-mqtt", "mqttjs", "paho-c", "mqtt-packet",
        "gmqtt-codec", "paho-mqtt-codec", "amqtt-codec")  # fmt: skip


def _probe_broker(name: str, edition: str) -> dict[str, Any]:
    config = brokers.BROKERS[name].config50 if edition == "5.0" else ()
    with brokers.started(name, config) as running:
        argv = [PUBPROOF, "probe", running.url, "--json", "--quiet", "--edition", edition]
        if running.broker.max_qos < 2:
            argv += ["--max-qos", str(running.broker.max_qos)]
        done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=600)
        report: dict[str, Any] = json.loads(done.stdout)
        report["target"] = f"{name} {running.version}"
        return report


def _probe_client(name: str, edition: str) -> dict[str, Any]:
    argv = [PUBPROOF, "probe-client", "--driver", name, "--json", "--quiet", "--edition", edition]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=900, cwd=ROOT)
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def chosen(implementation: str, kind: str, only: Sequence[str], skip: Sequence[str]) -> bool:
    """Whether the selection (``only``: names to keep, all if empty; ``skip``: names to
    leave out) holds an implementation, by its name in ``results.json`` (a codec's ends in
    ``-codec``; ``only`` also takes a codec's own name, as ``--fast`` does)."""
    names = (implementation, implementation.removesuffix("-codec")) if kind == "codec" else ()
    return (not only or implementation in only or any(n in only for n in names)) and (
        implementation not in skip
    )


def candidates(
    only: Sequence[str], editions: Sequence[str] | None = None, skip: Sequence[str] = ()
) -> Iterator[tuple[str, str, tuple[str, ...], str | None]]:
    """(name, kind, editions, why it cannot run here or None) of every broker, client and
    codec of the selection (``editions``: the editions to keep); a codec's name ends in
    ``-codec``."""
    registries = (("broker", brokers.BROKERS), ("client", SHIPPED))
    entries = [(name, kind, e.editions, e.available) for kind, r in registries
               for name, e in r.items()]  # fmt: skip
    entries += [(f"{name}-codec", "codec", c.editions, c.available)
                for name, c in corpus_codecs.CODECS.items()]  # fmt: skip
    for name, kind, speaks, available in entries:
        kept = tuple(e for e in speaks if not editions or e in editions)
        if kept and chosen(name, kind, only, skip):
            yield name, kind, kept, available()


def implementations(
    only: Sequence[str], editions: Sequence[str] | None = None, skip: Sequence[str] = ()
) -> list[tuple[str, str, str]]:
    """(name, kind, edition) of every probe to run: the brokers and clients of the
    selection that can run here."""
    return [
        (name, kind, edition)
        for name, kind, speaks, why in candidates(only, editions, skip)
        if kind != "codec" and why is None
        for edition in speaks
    ]


def _rows(
    name: str, kind: str, edition: str, reports: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    first = reports[0]
    version = first["target"].split()[-1]
    others = [{c["id"]: c["verdict"] for c in r["checks"]} for r in reports[1:]]
    rows = []
    for check in first["checks"]:
        stable = all(o.get(check["id"]) == check["verdict"] for o in others)
        rows.append({
            "implementation": name, "kind": kind, "version": version, "edition": edition,
            "check": check["id"], "title": check["title"], "verdict": check["verdict"],
            "rules": check["rules"], "rule_verdicts": check.get("rule_verdicts", {}),
            "provoked": check.get("provoked", []), "message": check["message"],
            "evidence": f"evidence/{name}-{edition}.json#{check['id']}", "stable": stable,
        })  # fmt: skip
    return rows


def run(
    only: Sequence[str],
    runs: int,
    out: Path | None,
    editions: Sequence[str] | None = None,
    skip: Sequence[str] = (),
) -> dict[str, Any]:
    """Run the matrix; write the evidence under ``out`` (if given); the results. What
    cannot run here is said on standard error and left out."""
    rows: list[dict[str, Any]] = []
    found: dict[str, dict[str, Any]] = {}
    missing = {name: why for name, _, _, why in candidates(only, editions, skip) if why}
    for name, why in missing.items():
        sys.stderr.write(f"not probed here: {name}: {why}\n")
    for name, kind, edition in implementations(only, editions, skip):
        probe = _probe_broker if kind == "broker" else _probe_client
        reports = [probe(name, edition) for _ in range(runs)]
        target = reports[0]["target"]
        version = target.split()[-1]
        entry = found.setdefault(name, {"implementation": name, "kind": kind,
                                        "version": version, "editions": []})  # fmt: skip
        entry["editions"].append(edition)
        rows += _rows(name, kind, edition, reports)
        sys.stderr.write(f"{name} {version} MQTT {edition}: {len(reports[0]['checks'])} checks\n")
        if out is not None:
            (out / "evidence").mkdir(parents=True, exist_ok=True)
            text = json.dumps(reports[0], ensure_ascii=False, indent=None)
            (out / "evidence" / f"{name}-{edition}.json").write_text(text + "\n")
    codecs = []
    for name, codec in corpus_codecs.CODECS.items():
        if not chosen(f"{name}-codec", "codec", only, skip) or f"{name}-codec" in missing:
            continue
        for edition in codec.editions:
            if editions and edition not in editions:
                continue
            result = corpus_codecs.run_codec(name, edition)
            sys.stderr.write(
                f"codec {name} MQTT {edition}: {result['agree']}/{result['vectors']}\n"
            )
            codecs.append(result)
            entry = found.setdefault(
                f"{name}-codec",
                {"implementation": f"{name}-codec", "kind": "codec",
                 "version": result["version"], "editions": []},
            )  # fmt: skip
            entry["editions"].append(edition)
    return {
        "date": datetime.date.today().isoformat(),
        "pubproof": __version__,
        "implementations": list(found.values()),
        "results": rows,
        "codecs": codecs,
    }


def merge(committed: dict[str, Any], fresh: dict[str, Any]) -> dict[str, Any]:
    """The committed results with what ``fresh`` re-ran put in their place: rows by
    (implementation, edition), codecs by (implementation, edition), each implementation's
    editions joined (its version the fresh one)."""
    ran = {(r["implementation"], r["edition"]) for r in fresh["results"]}
    rows = [r for r in committed["results"] if (r["implementation"], r["edition"]) not in ran]
    codecs_ran = {(c["implementation"], c["edition"]) for c in fresh["codecs"]}
    codecs = [
        c for c in committed["codecs"] if (c["implementation"], c["edition"]) not in codecs_ran
    ]
    found = {i["implementation"]: dict(i) for i in committed["implementations"]}
    for entry in fresh["implementations"]:
        was = found.get(entry["implementation"])
        if was is None:
            found[entry["implementation"]] = entry
            continue
        was["version"] = entry["version"]
        was["editions"] = [*was["editions"], *(e for e in entry["editions"]
                                              if e not in was["editions"])]  # fmt: skip
    return {
        **fresh,
        "implementations": list(found.values()),
        "results": [*rows, *fresh["results"]],
        "codecs": [*codecs, *fresh["codecs"]],
    }


def compare(committed: dict[str, Any], fresh: dict[str, Any]) -> list[str]:
    """Every stable verdict of ``committed`` that ``fresh`` gives otherwise."""

    def key(r: Mapping[str, Any]) -> tuple[str, str, str]:
        return (r["implementation"], r["edition"], r["check"])

    now = {key(r): r for r in fresh["results"]}
    differences = []
    for row in committed["results"]:
        new = now.get(key(row))
        if new is None or not row.get("stable", True) or not new.get("stable", True):
            continue
        if new["verdict"] != row["verdict"]:
            differences.append(
                f"{'/'.join(key(row))}: committed {row['verdict']}, now {new['verdict']}"
            )
    old_codecs = {(c["implementation"], c["edition"]): c for c in committed["codecs"]}
    for c in fresh["codecs"]:
        was = old_codecs.get((c["implementation"], c["edition"]))
        if was is not None and was["by_rule"] != c["by_rule"]:
            differences.append(
                f"codec {c['implementation']} {c['edition']}: disagreements by rule differ"
            )
    return differences


def unprobed(
    committed: dict[str, Any],
    fresh: dict[str, Any],
    only: Sequence[str],
    editions: Sequence[str],
    skip: Sequence[str],
) -> list[str]:
    """Every committed verdict of the selection that ``fresh`` did not give again: one line
    per (implementation, edition) that was not probed at all (why, where it cannot run
    here), one per check missing from a probe that ran, one per codec run missing."""
    why = {name: reason for name, _, _, reason in candidates(only, editions, skip) if reason}
    ran = {(r["implementation"], r["edition"]) for r in fresh["results"]}
    checks = {(r["implementation"], r["edition"], r["check"]) for r in fresh["results"]}
    lines: list[str] = []
    for row in committed["results"]:
        name, edition = row["implementation"], row["edition"]
        if not chosen(name, row["kind"], only, skip) or (editions and edition not in editions):
            continue
        if (name, edition) not in ran:
            line = f"{name}/{edition}: committed, not probed again: {why.get(name, 'no verdicts')}"
            if line not in lines:
                lines.append(line)
        elif (name, edition, row["check"]) not in checks:
            lines.append(f"{name}/{edition}/{row['check']}: committed {row['verdict']}, "
                         "not in this run")  # fmt: skip
    codecs_ran = {(c["implementation"], c["edition"]) for c in fresh["codecs"]}
    for c in committed["codecs"]:
        name, edition = f"{c['implementation']}-codec", c["edition"]
        if not chosen(name, "codec", only, skip) or (editions and edition not in editions):
            continue
        if (c["implementation"], edition) not in codecs_ran:
            lines.append(f"{name}/{edition}: committed, not run again: {why.get(name, 'no run')}")
    return lines


def rejudge_committed(out: Path, only: list[str], editions: list[str]) -> list[str]:
    """Judge every committed trace again with the model as it is now, contacting nothing:
    each check's verdict, per-rule verdicts and message in ``evidence/*.json`` and in
    ``results.json`` are rewritten where the model now says otherwise (after a change to a
    judge; a row's ``stable`` is kept: both runs saw the same behaviour). Returns one line
    per change."""
    from pubproof.model.editions import Edition
    from pubproof.probe import rejudge
    from pubproof.probe.clients import rejudge_client

    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    kinds = {i["implementation"]: i["kind"] for i in results["implementations"]}
    rows = {(r["implementation"], r["edition"], r["check"]): r for r in results["results"]}
    changes: list[str] = []
    for path in sorted((out / "evidence").glob("*.json")):
        report = json.loads(path.read_text(encoding="utf-8"))
        name = path.stem.removesuffix(f"-{report['edition']}")
        if (only and name not in only) or (editions and report["edition"] not in editions):
            continue
        edition = Edition(report["edition"])
        touched = False
        for check in report["checks"]:
            if check["verdict"] == "not-applicable":
                continue  # decided by what the target declared, not by a judge
            again = (
                rejudge_client(check["id"], check["evidence"], edition, report["readings"])
                if kinds[name] == "client"
                else rejudge(check["id"], check["evidence"], edition, report["readings"])
            )
            new = {"verdict": again.verdict, "rules": list(again.rules),
                   "rule_verdicts": dict(again.rule_verdicts),
                   "provoked": list(again.provoked), "message": again.message,
                   "source": again.source}  # fmt: skip
            if all(check.get(k) == v for k, v in new.items()):
                continue
            where = f"{name}/{report['edition']}/{check['id']}"
            if check["verdict"] != again.verdict:
                changes.append(f"{where}: {check['verdict']} -> {again.verdict}")
            charged_before = _charged(check.get("rule_verdicts", {}))
            charged_now = _charged(again.rule_verdicts)
            if charged_before != charged_now:
                dropped = sorted(charged_before - charged_now)
                added = sorted(charged_now - charged_before)
                changes.append(f"{where}: charges " + ", ".join(
                    [*(f"-{r}" for r in dropped), *(f"+{r}" for r in added)]
                ))  # fmt: skip
            check.update(new)
            touched = True
            row = rows.get((name, report["edition"], check["id"]))
            if row is not None:
                row.update({k: v for k, v in new.items() if k in row or k == "provoked"})
        if touched:
            text = json.dumps(report, ensure_ascii=False, indent=None)
            path.write_text(text + "\n", encoding="utf-8")
    text = json.dumps(results, ensure_ascii=False, indent=1)
    (out / "results.json").write_text(text + "\n", encoding="utf-8")
    return changes


def _charged(rule_verdicts: Mapping[str, str]) -> set[str]:
    """The rules a row charges the implementation with: those judged worse than a pass
    or a toleration."""
    return {r for r, v in rule_verdicts.items() if v not in ("pass", "tolerated", "not-applicable")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", default=[], help="implementations to run")
    parser.add_argument("--runs", type=int, default=2, help="runs of every probe (default 2)")
    parser.add_argument("--out", default=str(ROOT / "docs" / "matrix"), help="where to write")
    parser.add_argument("--check", action="store_true", help="compare with the committed results")
    parser.add_argument("--fast", action="store_true", help="only what starts in under a minute")
    parser.add_argument("--edition", nargs="+", default=[], help="only these editions")
    parser.add_argument(
        "--skip", nargs="+", default=[], metavar="NAME",
        help="leave these implementations out (--check: not probed, not compared)",
    )  # fmt: skip
    parser.add_argument(
        "--rejudge", action="store_true",
        help="judge the committed traces again with the current model (nothing contacted)",
    )  # fmt: skip
    args = parser.parse_args()
    editions = list(args.edition)
    only = list(args.only) or (list(FAST) if args.fast else [])
    out = Path(args.out)
    if args.rejudge:
        changes = rejudge_committed(out, list(args.only), editions)
        for line in changes:
            sys.stdout.write(line + "\n")
        verdicts = sum(": charges " not in line for line in changes)
        charges = len(changes) - verdicts
        sys.stdout.write(f"{verdicts} verdicts changed, {charges} rows charged otherwise\n")
        return 0
    skip = list(args.skip)
    if args.check:
        committed = json.loads((out / "results.json").read_text(encoding="utf-8"))
        fresh = run(only, 1, None, editions, skip)
        differences = compare(committed, fresh)
        for attempt in range(RETRIES):
            # a verdict that differs once may be timing (amqtt's wire.pubrec-length flips
            # under load): the implementations with a difference run again, and only a
            # difference every run shows is reported
            again = sorted({d.split("/")[0] for d in differences if not d.startswith("codec ")})
            if not again:
                break
            for line in differences:
                sys.stderr.write(f"differs (run {attempt + 1}): {line}\n")
            sys.stderr.write(f"re-running {', '.join(again)} (attempt {attempt + 2})\n")
            rerun = run(again, 1, None, editions, skip)
            rerun["codecs"] = fresh["codecs"]
            still = {d.split(":")[0] for d in compare(committed, rerun)}
            differences = [
                d for d in differences if d.startswith("codec ") or d.split(":")[0] in still
            ]
        gaps = unprobed(committed, fresh, only, editions, skip)
        for line in [*differences, *gaps]:
            sys.stdout.write(line + "\n")
        sys.stdout.write(
            f"{len(fresh['results'])} verdicts re-run, {len(differences)} differ, "
            f"{len(gaps)} committed not re-run" + (" (--skip NAME leaves one out)" if gaps else "")
            + "\n"
        )  # fmt: skip
        return 1 if differences or gaps else 0
    results = run(only, args.runs, out, editions, skip)
    narrowed = bool(args.only or editions or skip)
    if narrowed and (out / "results.json").exists():
        committed = json.loads((out / "results.json").read_text(encoding="utf-8"))
        results = merge(committed, results)
    out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(results, ensure_ascii=False, indent=1)
    (out / "results.json").write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
