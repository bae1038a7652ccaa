"""The vector corpus (vectors/corpus.jsonl) against every codec we can install.

Each decode vector's bytes go to the codec alone (a fresh parser per vector); the codec's
answer is compared with the model's verdict:

- ``accepted``: the model rejects the bytes (malformed, a violation, incomplete) and the
  codec handed back a packet all the same;
- ``rejected``: the model accepts the bytes and the codec raised, or gave no packet;
- ``decoded-differently``: both accept, the fields differ (type, topic, payload, QoS,
  packet identifier, DUP, RETAIN; in 5.0 the Reason Code and the properties too).

The codecs (:data:`CODECS`, each saying whether it can run here), driven as
benchmarks/bench_codec.py drives them (the same adapters, :mod:`peer_codecs`): the parsers
inside paho-mqtt, gmqtt and amqtt (Python, in this process) and mqtt-packet (npm, through
interop/codecs/mqtt_packet.js). ``python interop/codec_corpus.py`` prints the results as JSON.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from peer_codecs import (
    Bytes,
    Codec,
    amqtt_codec,
    canonical_properties,
    gmqtt_codec,
    paho_codec,
    record_of_p,
)

from pubproof.model import wire as model_wire
from pubproof.model.editions import Edition, Limits
from pubproof.probe.clients.shipped import PROBE_EXTRA, distribution_version, npm_version

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

ACCEPTS = "ok"


def vectors(edition: str) -> list[dict[str, Any]]:
    """The corpus's decode vectors of one edition."""
    with (ROOT / "vectors" / "corpus.jsonl").open(encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines if line.strip()]
    return [r for r in rows if r["op"] == "decode" and r["edition"] == edition]


def _expected(vector: Mapping[str, Any], v5: bool) -> list[Any]:
    return [record_of_p(p, v5) for p in vector.get("packets") or []]


Decode = Callable[[bytes, bool], list[Any]]  # bytes, 5.0? -> records (raises if rejected)


def _python_codec(make: Callable[[], Codec]) -> Decode:
    codec = make()

    def decode(data: bytes, v5: bool) -> list[Any]:
        return list(codec.records(Bytes(name="vector", data=data, v5=v5)))

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
        return (*record, None, canonical_properties(properties)) if v5 else record
    record = (p["type"], None, None, None, p.get("packet_id"), None, None)
    if v5:
        return (*record, p.get("reason_code", 0), canonical_properties(properties))
    return record


def _before_failure(vector: Mapping[str, Any], v5: bool) -> list[Any]:
    """The records of the packets the model decodes before the one it rejects."""
    edition = Edition.V50 if v5 else Edition.V311
    limits = Limits(**vector["limits"]) if vector.get("limits") else None
    data = bytes.fromhex(vector["hex"])
    verdict = model_wire.decode(data, edition, vector.get("reading"), limits)
    return [record_of_p(p, v5) for p in verdict.packets]


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


@dataclass(frozen=True, slots=True, kw_only=True)
class CorpusCodec:
    """A codec the corpus runs against."""

    name: str
    #: the editions it is judged in (those whose properties it parses)
    editions: tuple[str, ...]
    #: what installs it, said when it is missing
    install: str
    #: its version here; None when it is not installed
    version: Callable[[], str | None]
    #: its adapter (:mod:`peer_codecs`); None: mqtt-packet, run in node
    make: Callable[[], Codec] | None

    def available(self) -> str | None:
        """Why the codec cannot run here (naming what installs it), or None."""
        if self.make is None and shutil.which("node") is None:
            return f"node is not on PATH ({self.install})"
        return f"{self.name} is not installed ({self.install})" if self.version() is None else None


REGISTRY = (
    CorpusCodec(name="mqtt-packet", editions=("3.1.1", "5.0"), install="npm ci in interop/",
                version=npm_version("mqtt-packet", HERE), make=None),
    CorpusCodec(name="paho-mqtt", editions=("3.1.1", "5.0"), install=PROBE_EXTRA,
                version=distribution_version("paho-mqtt"), make=paho_codec),
    CorpusCodec(name="gmqtt", editions=("3.1.1",), install=PROBE_EXTRA,
                version=distribution_version("gmqtt"), make=gmqtt_codec),
    CorpusCodec(name="amqtt", editions=("3.1.1",), install=PROBE_EXTRA,
                version=distribution_version("amqtt"), make=amqtt_codec),
)  # fmt: skip
#: the codecs by name
CODECS: dict[str, CorpusCodec] = {codec.name: codec for codec in REGISTRY}


def run_codec(name: str, edition: str) -> dict[str, Any]:
    """The codec against the corpus's decode vectors of one edition: counts, and every
    disagreement with its rule and what the codec did."""
    v5 = edition == "5.0"
    every = vectors(edition)
    batch = [v for v in every if v["rule"] not in OUT_OF_SCOPE]
    results: Iterator[tuple[dict[str, Any], list[Any] | None, str | None]]
    make = CODECS[name].make
    if make is None:
        rows = _mqtt_packet_records(batch, v5)

        def from_js() -> Iterator[tuple[dict[str, Any], list[Any] | None, str | None]]:
            for v in batch:
                row = rows[v["id"]]
                records = [_record_of_js(p, v5) for p in row["packets"]]
                yield v, records, row["error"]

        results = from_js()
    else:
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
        "version": CODECS[name].version() or "?",
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
    for name, codec in CODECS.items():
        for edition in codec.editions:
            try:
                out.append(run_codec(name, edition))
            except Exception as failure:
                out.append({"implementation": name, "edition": edition, "error": str(failure)})
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
