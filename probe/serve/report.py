"""What a broker leaves when it stops: a summary per client (packets each way, findings by
rule) and the probe's HTML report with each finding and the trace it rests on.

The HTML report is :func:`pubproof.probe.html_report.render`'s page: each finding is one
"check" of the report, its id the client and the finding's number, its verdict the
finding's, its evidence the connection's trace up to the finding (the packets each way,
as ``pubproof decode`` reads them, with the bytes).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pubproof.judge.findings import PASS
from pubproof.probe.html_report import render
from pubproof.probe.report import CheckResult, Report
from pubproof.probe.serve.live import LiveFinding, Reporter


def summary(reporter: Reporter, *, seconds: float, dropped: int) -> dict[str, Any]:
    """The summary as JSON-ready data."""
    return {
        "seconds": round(seconds, 3),
        "clients": [t.to_json() for _, t in sorted(reporter.tallies.items())],
        "findings": dict(sorted(reporter.total.items())),
        "notices": dict(sorted(reporter.notices.items())),
        "copies_dropped": dropped,
    }


def summary_text(data: Mapping[str, Any]) -> str:
    """The summary as lines of text."""
    lines = [f"pubproof serve: {len(data['clients'])} client(s) in {data['seconds']:.1f} s"]
    for client in data["clients"]:
        who = client["client_id"] or "(before CONNECT)"
        lines.append(
            f"  {who}: {client['connections']} connection(s), {client['packets_in']} packets "
            f"in, {client['packets_out']} out"
        )
        for item in client["findings"]:
            if item["verdict"] != PASS:
                lines.append(f"    {item['count']} x {item['verdict']} {item['rule']}")
    found = ", ".join(f"{n} {v}" for v, n in data["findings"].items() if v != PASS)
    lines.append(f"  findings: {found or 'none'}")
    for key, count in data["notices"].items():
        lines.append(f"  notice {key}: {count}")
    if data["copies_dropped"]:
        lines.append(f"  copies dropped to keep within --max-queued: {data['copies_dropped']}")
    return "\n".join(lines)


def html(findings: list[LiveFinding], *, target: str, edition: str,
         readings: Mapping[str, str], seconds: float) -> str:  # fmt: skip
    """The HTML report of the findings kept."""
    checks = []
    for number, live in enumerate(findings, 1):
        finding = live.finding
        who = live.client_id or live.conn
        checks.append(
            CheckResult(
                id=f"{who}#{number}",
                title=f"{live.conn} at {live.t:.3f} s: {live.words() or 'finding'}",
                rules=finding.rules,
                verdict=finding.verdict,
                evidence=live.trace or finding.evidence,
                message=finding.message,
                source=finding.source,
                seconds=0.0,
                rule_verdicts=dict.fromkeys(finding.rules, finding.verdict),
                provoked=finding.provoked,
            )
        )
    report = Report(target=target, edition=edition, readings=dict(readings),
                    checks=tuple(checks), seconds=round(seconds, 3))  # fmt: skip
    return render(report)


def write_outputs(
    reporter: Reporter, *, seconds: float, dropped: int, target: str, edition: str,
    readings: Mapping[str, str], html_path: Path | None, json_path: Path | None,
) -> dict[str, Any]:  # fmt: skip
    """Write the summary (and the HTML report) where asked; the summary."""
    data = summary(reporter, seconds=seconds, dropped=dropped)
    if json_path is not None:
        json_path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    if html_path is not None:
        page = html(reporter.kept, target=target, edition=edition, readings=readings,
                    seconds=seconds)  # fmt: skip
        html_path.write_text(page, encoding="utf-8")
    return data
