"""The vector corpus (vectors/corpus.jsonl) against every codec we can install.

Each decode vector's bytes go to the codec alone (a fresh parser per vector); the codec's
answer is compared with the model's verdict:

- ``accepted``: the model rejects the bytes (malformed, a violation, incomplete) and the
  codec handed back a packet all the same;
- ``rejected``: the model accepts the bytes and the codec raised, or gave no packet;
- ``decoded-differently``: both accept, the fields differ (type, topic, payload, QoS,
  packet identifier, DUP, RETAIN; in 5.0 the Reason Code and the properties too).

The codecs, driven as benchmarks/bench_codec.py drives them: the parsers inside paho-mqtt,
gmqtt and amqtt (Python, in this process) and mqtt-packet (npm, through
interop/codecs/mqtt_packet.js). ``python interop/codec_corpus.py`` prints the results as JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from importlib.metadata import version
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_codec as bench  # noqa: E402  (benchmarks/ is not a package)

from pubproof.model import wire as model_wire  # noqa: E402
from pubproof.model.editions import Edition, Limits  # noqa: E402

ACCEPTS = "ok"


def vectors(edition: str) -> list[dict[str, Any]]:
    """The corpus's decode vectors of one edition."""
    with (ROOT / "vectors" / "corpus.jsonl").open(encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines if line.strip()]
    return [r for r in rows if r["op"] == "decode" and r["edition"] == edition]


def _expected(vector: Mapping[str, Any], v5: bool) -> list[Any]:
    return [bench.record_of_p(p, v5) for p in vector.get("packets") or []]


Decode = Callable[[bytes, bool], list[Any]]  # bytes, 5.0? -> records (raises if rejected)


def _python_codec(make: Callable[[], Any]) -> Decode:
    codec = make()

    def decode(data: bytes, v5: bool) -> list[Any]:
        stream = types.SimpleNamespace(
            data=data, v5=v5, edition=Edition.V50 if v5 else Edition.V311, name="vector"
        )
        return list(codec.records(stream))

    return decode


def _mqtt_packet_records(batch: list[dict[str, Any]], v5: bool) -> dict[str, Any]:
    lines = "".join(
        json.dumps({"id": v["id"], "hex": v["hex"], "version": 5 if v5 else 4}) + "\n"
        for v in batch
    )
    done = subprocess.run(
        ["node", str(HERE / "codecs" / "mqtt_packet.js")],
        input=lines, capture_output=True, text=True, check=True,
        env={**os.environ, "DEBUG": ""},
    )  # fmt: skip
    return {row["id"]: row for row in map(json.loads, done.stdout.splitlines())}


def _record_of_js(p: Mapping[str, Any], v5: bool) -> Any:
    properties = dict(p.get("properties") or {})
    if "user_properties" in properties:
        properties["user_properties"] = [
            (name, text) for name, texts in properties["user_properties"] for text in texts
        ]
    if p["type"] == "PUBLISH":
        record: tuple[Any, ...] = ("PUBLISH", p["topic"], bytes.fromhex(p["payload_hex"]),
                                   p["qos"], p.get("packet_id"), p["dup"], p["retain"])  # fmt: skip
        return (*record, None, bench.canonical_properties(properties)) if v5 else record
    record = (p["type"], None, None, None, p.get("packet_id"), None, None)
    if v5:
        return (*record, p.get("reason_code", 0), bench.canonical_properties(properties))
    return record


def _before_failure(vector: Mapping[str, Any], v5: bool) -> list[Any]:
    """The records of the packets the model decodes before the one it rejects."""
    edition = Edition.V50 if v5 else Edition.V311
    limits = Limits(**vector["limits"]) if vector.get("limits") else None
    data = bytes.fromhex(vector["hex"])
    verdict = model_wire.decode(data, edition, vector.get("reading"), limits)
    return [bench.record_of_p(p, v5) for p in verdict.packets]


def _outcome(
    vector: Mapping[str, Any], got: list[Any] | None, error: str | None, v5: bool
) -> str | None:
    """How the codec disagrees with the model on a vector, or None."""
    if vector["verdict"] != ACCEPTS:
        # the codec may hand back the packets before the rejected one, as the model does
        before = _before_failure(vector, v5)
        return "accepted" if got and len(got) > len(before) else None
    expected = _expected(vector, v5)
    if error is not None or got is None or len(got) < len(expected):
        return "rejected"
    return None if got == expected else "decoded-differently"


#: vectors outside what the corpus judges codecs on: packet types pubproof does not model
OUT_OF_SCOPE = frozenset({"PP-scope-packet-type"})


def _npm_version(package: str) -> str:
    manifest = HERE / "node_modules" / package / "package.json"
    found: str = json.loads(manifest.read_text())["version"]
    return found


CODECS: dict[str, tuple[Callable[[], str], tuple[str, ...]]] = {
    "mqtt-packet": (lambda: _npm_version("mqtt-packet"), ("3.1.1", "5.0")),
    "paho-mqtt": (lambda: version("paho-mqtt"), ("3.1.1", "5.0")),
    "gmqtt": (lambda: version("gmqtt"), ("3.1.1",)),
    "amqtt": (lambda: version("amqtt"), ("3.1.1",)),
}  # fmt: skip


def run_codec(name: str, edition: str) -> dict[str, Any]:
    """The codec against the corpus's decode vectors of one edition: counts, and every
    disagreement with its rule and what the codec did."""
    v5 = edition == "5.0"
    every = vectors(edition)
    batch = [v for v in every if v["rule"] not in OUT_OF_SCOPE]
    results: Iterator[tuple[dict[str, Any], list[Any] | None, str | None]]
    if name == "mqtt-packet":
        rows = _mqtt_packet_records(batch, v5)

        def from_js() -> Iterator[tuple[dict[str, Any], list[Any] | None, str | None]]:
            for v in batch:
                row = rows[v["id"]]
                records = [_record_of_js(p, v5) for p in row["packets"]]
                yield v, records, row["error"]

        results = from_js()
    else:
        make = {"paho-mqtt": bench.paho_codec, "gmqtt": bench.gmqtt_codec,
                "amqtt": bench.amqtt_codec}[name]  # fmt: skip
        decode = _python_codec(make)

        def from_python() -> Iterator[tuple[dict[str, Any], list[Any] | None, str | None]]:
            for v in batch:
                try:
                    yield v, decode(bytes.fromhex(v["hex"]), v5), None
                except Exception as failure:  # the codec's rejection, whatever its type
                    yield v, None, f"{type(failure).__name__}: {failure}"[:200]

        results = from_python()
    disagreements = []
    for vector, got, error in results:
        outcome = _outcome(vector, got, error, v5)
        if outcome is None:
            continue
        disagreements.append({
            "vector": vector["id"], "rule": vector["rule"], "model": vector["verdict"],
            "codec": outcome, "hex": vector["hex"][:200], "reading": vector.get("reading"),
            "detail": error or (repr(got)[:300] if got else "no packet"),
        })  # fmt: skip
    by_rule = Counter((str(d["rule"]), d["codec"]) for d in disagreements)
    return {
        "implementation": name,
        "version": CODECS[name][0](),
        "edition": edition,
        "vectors": len(batch),
        "out_of_scope": len(every) - len(batch),
        "agree": len(batch) - len(disagreements),
        "by_rule": [
            {"rule": rule, "codec": how, "count": count}
            for (rule, how), count in sorted(by_rule.items())
        ],
        "disagreements": disagreements,
    }


def main() -> int:
    out = []
    for name, (_, editions) in CODECS.items():
        for edition in editions:
            try:
                out.append(run_codec(name, edition))
            except Exception as failure:
                out.append({"implementation": name, "edition": edition, "error": str(failure)})
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
