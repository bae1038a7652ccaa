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
failure).
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import brokers  # noqa: E402
import codec_corpus as corpus_codecs  # noqa: E402

from pubproof import __version__  # noqa: E402
from pubproof.probe.clients.driver import SHIPPED, SPEAKS  # noqa: E402

PUBPROOF = str(Path(sys.executable).parent / "pubproof")
#: how often --check re-runs an implementation whose verdicts differ before it reports them
RETRIES = 2
#: what CI re-runs: the implementations that start in well under a minute
FAST = ("mosquitto", "amqtt", "aedes", "paho-mqtt", "mqttjs", "paho-c", "mqtt-packet",
        "gmqtt-codec", "paho-mqtt-codec", "amqtt-codec")  # fmt: skip


def portable(report: dict[str, Any]) -> dict[str, Any]:
    """The report without this machine's paths (a driver's command line, a traceback in its
    standard error, a message quoting one): the project's folder made relative, the
    temporary folder written ``<tmp>``, the home folder ``~``. Every string of the report
    alike, so that a message still reads as its evidence does."""
    text = json.dumps(report, ensure_ascii=False)
    for local, shown in ((f"{ROOT}/", ""), (f"{tempfile.gettempdir()}/", "<tmp>/"),
                         (f"{Path.home()}/", "~/")):  # fmt: skip
        text = text.replace(json.dumps(local)[1:-1], shown)
    found: dict[str, Any] = json.loads(text)
    return found


def _probe_broker(name: str, edition: str) -> dict[str, Any]:
    with brokers.started(name) as broker:
        argv = [PUBPROOF, "probe", broker.url, "--json", "--quiet", "--edition", edition]
        if broker.max_qos < 2:
            argv += ["--max-qos", str(broker.max_qos)]
        done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=600)
        report: dict[str, Any] = json.loads(done.stdout)
        report["target"] = f"{name} {broker.version}"
        return portable(report)


def _probe_client(name: str, edition: str) -> dict[str, Any]:
    argv = [PUBPROOF, "probe-client", "--driver", name, "--json", "--quiet", "--edition", edition]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=900, cwd=ROOT)
    return portable(json.loads(done.stdout))


def implementations(
    only: list[str], editions: list[str] | None = None
) -> list[tuple[str, str, str]]:
    """(name, kind, edition) of every probe to run (``only``: names to keep; ``editions``:
    the editions to keep)."""
    runs: list[tuple[str, str, str]] = []
    for name, (_, _, speaks, _) in brokers.BROKERS.items():
        if brokers.available(name) is None:
            runs += [(name, "broker", e) for e in speaks]
    for name in SHIPPED:
        runs += [(name, "client", e) for e in SPEAKS[name]]
    return [r for r in runs if (not only or r[0] in only) and (not editions or r[2] in editions)]


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
    only: list[str], runs: int, out: Path | None, editions: list[str] | None = None
) -> dict[str, Any]:
    """Run the matrix; write the evidence under ``out`` (if given); the results."""
    rows: list[dict[str, Any]] = []
    found: dict[str, dict[str, Any]] = {}
    for name, kind, edition in implementations(only, editions):
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
    for name, (_, codec_editions) in corpus_codecs.CODECS.items():
        if only and f"{name}-codec" not in only and name not in only:
            continue
        for edition in codec_editions:
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
    if args.check:
        committed = json.loads((out / "results.json").read_text(encoding="utf-8"))
        fresh = run(only, 1, None, editions)
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
            rerun = run(again, 1, None, editions)
            rerun["codecs"] = fresh["codecs"]
            still = {d.split(":")[0] for d in compare(committed, rerun)}
            differences = [
                d for d in differences if d.startswith("codec ") or d.split(":")[0] in still
            ]
        for line in differences:
            sys.stdout.write(line + "\n")
        sys.stdout.write(f"{len(fresh['results'])} verdicts re-run, {len(differences)} differ\n")
        return 1 if differences else 0
    results = run(only, args.runs, out, editions)
    narrowed = bool(args.only or editions)
    if narrowed and (out / "results.json").exists():
        committed = json.loads((out / "results.json").read_text(encoding="utf-8"))
        results = merge(committed, results)
    out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(results, ensure_ascii=False, indent=1)
    (out / "results.json").write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
