#!/usr/bin/env python
"""Coverage-guided fuzzing of the reference codec against the model, in all three editions.

    python benchmarks/fuzz_codec.py --runs 10000000 --findings DIR    # atheris (libFuzzer)
    python benchmarks/fuzz_codec.py --engine random --runs 100000     # no atheris needed

Every input is one case: its first ``HEADER`` bytes choose the setting, the rest is the
byte stream.

====  ===========================================================================
byte  meaning
====  ===========================================================================
0     bits 0-6: the edition (``value % 3``: 3.1, 3.1.1, 5.0); bit 7: take packets
      with ``Decoder.next_packet()`` instead of iterating (the iterator's fast path)
1, 2  one bit per reading that applies to the edition (readings sorted by name):
      0 is the edition's default, 1 the other value
3, 4  MQTT 5.0: the Topic Alias Maximum (big-endian)
5, 6  MQTT 5.0: the Maximum Packet Size (big-endian; 0: none, 0xFFFF: 4,294,967,295)
7     bit 7: feed the stream one byte at a time; else bits 0-6 and bytes 8, 9 are the
      gaps between three cut points (the stream is fed in four chunks)
====  ===========================================================================

A missing header byte counts as 0, so the shortest inputs are 3.1 streams with the default
readings. The reference (``pubproof.reference.Decoder``) is fed the chunks and closed; the
model (``pubproof.model.wire.decode``) judges the whole stream. A **disagreement** is any
difference: the packets (``reference.to_p`` against the model's ``P``), or the error's
rule, offset, kind or Reason Code. A **foreign exception** is anything the reference raises
that is not a ``pubproof.reference.ProtocolError``, or anything the model raises at all.
Each finding is saved under ``--findings DIR`` (the input, and a ``.txt`` saying what
differed) and counted; the run goes on.

The seed corpus is every decode vector of ``vectors/corpus.jsonl`` with its edition,
readings and limits in the header, whole and cut in the middle. With atheris, libFuzzer
grows the corpus in ``--corpus DIR`` from those seeds; ``--engine random`` runs the same
comparison on random bytes and on mutations of the seeds (byte flips, insertions,
deletions, truncations, splices), which needs nothing beyond the standard library and is
what ``tests/test_fuzz_smoke.py`` runs.

At the end (and every ``--progress`` inputs) it prints the inputs run, executions per
second, disagreements and foreign exceptions; it exits 1 if there was any finding.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported for real by ``Comparator.load``, after atheris's hook is set
    from pubproof.model.editions import Edition, Limits

HEADER = 10
ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "vectors" / "corpus.jsonl"
MAX_LEN = 512  # libFuzzer's -max_len: long enough for several packets with properties


@dataclass(frozen=True, slots=True)
class Setting:
    """What the header of an input chose."""

    edition: Edition
    readings: dict[str, str]
    limits: Limits | None  # 5.0 only
    chunks: tuple[slice, ...] | None  # None: one byte at a time
    next_packet: bool

    def describe(self) -> str:
        limits = self.limits
        return (
            f"edition {self.edition.value}, readings {self.readings}, "
            + (
                f"limits (topic_alias_maximum={limits.topic_alias_maximum}, "
                f"maximum_packet_size={limits.maximum_packet_size}), "
                if limits is not None
                else ""
            )
            + ("byte by byte" if self.chunks is None else f"chunks {self.chunks}")
            + (", next_packet()" if self.next_packet else ", iteration")
        )


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a decoder made of a stream: packets as ``P``, then the error, if any."""

    packets: list[Any]
    error: tuple[str, int | None, str, int | None] | None  # rule, offset, kind, Reason Code


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str  # "disagreement" or "foreign-exception"
    detail: str


@dataclass
class Stats:
    runs: int = 0
    disagreements: int = 0
    foreign_exceptions: int = 0
    started: float = field(default_factory=time.perf_counter)

    @property
    def findings(self) -> int:
        return self.disagreements + self.foreign_exceptions

    def line(self) -> str:
        elapsed = time.perf_counter() - self.started
        rate = self.runs / elapsed if elapsed else 0.0
        return (
            f"runs {self.runs:,}  exec/s {rate:,.0f}  elapsed {elapsed:,.0f} s  "
            f"disagreements {self.disagreements}  foreign exceptions {self.foreign_exceptions}"
        )


class Comparator:
    """The comparison of one input; built by ``load`` (which imports pubproof, so that
    atheris can instrument it when ``load`` runs inside ``atheris.instrument_imports``)."""

    def __init__(self) -> None:
        from pubproof.model import wire
        from pubproof.model.editions import READINGS, Edition, Limits
        from pubproof.reference import NEED_DATA, Decoder, ProtocolError, to_p

        self._model_decode = wire.decode
        self._decoder = Decoder
        self._need_data = NEED_DATA
        self._protocol_error = ProtocolError
        self._to_p = to_p
        self._limits = Limits
        self.editions: tuple[Edition, ...] = (Edition.V31, Edition.V311, Edition.V50)
        self.v50 = Edition.V50
        #: per edition, its readings sorted by name: (name, default, the other value)
        self.readings: dict[Edition, list[tuple[str, str, str]]] = {}
        for edition in self.editions:
            table = []
            for name in sorted(READINGS):
                reading = READINGS[name]
                if reading.applies_to(edition):
                    default = reading.defaults[edition]
                    (other,) = [v for v in reading.values if v != default]
                    table.append((name, default, other))
            self.readings[edition] = table

    # --- the header ----------------------------------------------------------------------

    def setting(self, data: bytes) -> tuple[Setting, bytes]:
        h = data[:HEADER].ljust(HEADER, b"\0")
        stream = data[HEADER:]
        edition = self.editions[(h[0] & 0x7F) % 3]
        bits = h[1] | h[2] << 8
        readings = {
            name: other if bits >> i & 1 else default
            for i, (name, default, other) in enumerate(self.readings[edition])
        }
        limits = None
        if edition is self.v50:
            size = h[5] << 8 | h[6]
            limits = self._limits(
                topic_alias_maximum=h[3] << 8 | h[4],
                maximum_packet_size=None if size == 0 else 0xFFFF_FFFF if size == 0xFFFF else size,
            )
        chunks: tuple[slice, ...] | None = None
        if not h[7] & 0x80:
            a = h[7]
            b = a + h[8]
            c = b + h[9]
            chunks = (slice(0, a), slice(a, b), slice(b, c), slice(c, None))
        return Setting(edition, readings, limits, chunks, bool(h[0] & 0x80)), stream

    def describe(self, data: bytes) -> str:
        """The setting an input's header chose, in words."""
        return self.setting(data)[0].describe()

    def header(
        self,
        edition: Edition,
        readings: Mapping[str, str] | None = None,
        limits: Mapping[str, int | None] | None = None,
        cut: int = 0,
    ) -> bytes:
        """The header of an input with this setting (fed in two chunks, cut at ``cut``)."""
        bits = 0
        for i, (name, default, _) in enumerate(self.readings[edition]):
            if (readings or {}).get(name, default) != default:
                bits |= 1 << i
        alias = size = 0
        if edition is self.v50 and limits:
            alias = min(limits.get("topic_alias_maximum") or 0, 0xFFFF)
            wanted = limits.get("maximum_packet_size")
            size = 0 if wanted is None else min(wanted, 0xFFFE)
        cut = min(cut, 0x7F)
        return bytes(
            (
                self.editions.index(edition),
                bits & 0xFF,
                bits >> 8,
                alias >> 8,
                alias & 0xFF,
                size >> 8,
                size & 0xFF,
                cut,
                0,
                0,
            )
        )

    # --- the two sides -------------------------------------------------------------------

    def reference(self, stream: bytes, setting: Setting) -> Outcome:
        kwargs: dict[str, Any] = {"edition": setting.edition, "readings": setting.readings}
        if setting.limits is not None:
            kwargs["limits"] = setting.limits
        decoder = self._decoder(**kwargs)
        to_p = self._to_p
        packets: list[Any] = []
        chunks = (
            [stream[i : i + 1] for i in range(len(stream))]
            if setting.chunks is None
            else [stream[s] for s in setting.chunks]
        )
        try:
            for chunk in chunks:
                decoder.feed(chunk)
                if setting.next_packet:
                    while (packet := decoder.next_packet()) is not self._need_data:
                        packets.append(to_p(packet))  # type: ignore[arg-type]
                else:
                    packets.extend(to_p(p) for p in decoder)
            decoder.close()
        except self._protocol_error as error:
            code = getattr(error, "reason_code", None)
            return Outcome(packets, (error.rule, error.offset, error.kind, code))
        return Outcome(packets, None)

    def model(self, stream: bytes, setting: Setting) -> Outcome:
        if setting.limits is not None:
            verdict = self._model_decode(
                stream, setting.edition, setting.readings, limits=setting.limits
            )
        else:
            verdict = self._model_decode(stream, setting.edition, setting.readings)
        f = verdict.failure
        error = None if f is None else (f.rule, f.offset, f.kind, getattr(f, "reason_code", None))
        return Outcome(list(verdict.packets), error)

    def judge(self, data: bytes) -> Finding | None:
        """None if the reference and the model agree on this input, else what went wrong."""
        setting, stream = self.setting(data)
        try:
            ours = self.reference(stream, setting)
        except Exception as error:
            return Finding("foreign-exception", f"reference raised {error!r}")
        try:
            theirs = self.model(stream, setting)
        except Exception as error:
            return Finding("foreign-exception", f"model raised {error!r}")
        if ours == theirs:
            return None
        lines = []
        if ours.error != theirs.error:
            lines.append(f"error: reference {ours.error} != model {theirs.error}")
        if ours.packets != theirs.packets:
            for i, (a, b) in enumerate(zip(ours.packets, theirs.packets, strict=False)):
                if a != b:
                    lines.append(f"packet {i}: reference {a} != model {b}")
                    break
            if len(ours.packets) != len(theirs.packets):
                lines.append(f"packets: reference {len(ours.packets)}, model {len(theirs.packets)}")
        return Finding("disagreement", "; ".join(lines))


# --- seeds and mutations -----------------------------------------------------------------


def seeds(comparator: Comparator, corpus: Path = CORPUS) -> list[bytes]:
    """Every decode vector of the corpus as an input, whole and cut in the middle."""
    by_name = {e.value: e for e in comparator.editions}
    out: list[bytes] = []
    seen: set[bytes] = set()
    with corpus.open(encoding="utf-8") as lines:
        for line in lines:
            vector = json.loads(line)
            if vector.get("op") != "decode":
                continue
            edition = by_name[vector["edition"]]
            stream = bytes.fromhex(vector["hex"])
            for cut in (0, len(stream) // 2):
                data = (
                    comparator.header(edition, vector.get("reading"), vector.get("limits"), cut)
                    + stream
                )
                if data not in seen:
                    seen.add(data)
                    out.append(data)
    return out


def mutate(rng: random.Random, data: bytes, pool: Sequence[bytes]) -> bytes:
    """One to four random edits of ``data`` (the header included)."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        what = rng.randrange(7)
        at = rng.randrange(len(out) + 1)
        if what == 0 and out:  # flip bits of one byte
            at = min(at, len(out) - 1)
            out[at] ^= 1 << rng.randrange(8)
        elif what == 1 and out:  # set a byte to an interesting value
            at = min(at, len(out) - 1)
            out[at] = rng.choice((0x00, 0x01, 0x7F, 0x80, 0xFF, 0x23, 0x26, 0x0B, 0xC0, 0xED))
        elif what == 2:  # insert random bytes
            out[at:at] = rng.randbytes(rng.randint(1, 4))
        elif what == 3 and out:  # delete a few bytes
            del out[at : at + rng.randint(1, 4)]
        elif what == 4:  # truncate
            del out[at:]
        elif what == 5 and pool:  # splice the tail of another input (after its header)
            other = rng.choice(pool)
            out[at:] = other[HEADER + rng.randrange(max(1, len(other) - HEADER)) :]
        else:  # duplicate a run (repeated properties, packets)
            end = min(len(out), at + rng.randint(1, 12))
            out[end:end] = out[at:end]
    return bytes(out[:MAX_LEN])


def random_inputs(rng: random.Random, pool: Sequence[bytes]) -> Iterable[bytes]:
    """Random cases forever: a third random bytes, the rest mutated seeds."""
    while True:
        if not pool or rng.random() < 0.3:
            yield rng.randbytes(HEADER) + rng.randbytes(rng.randint(0, 48))
        else:
            yield mutate(rng, rng.choice(pool), pool)


# --- running -----------------------------------------------------------------------------


class Recorder:
    """Counts the runs and findings, saves each finding, prints progress."""

    def __init__(self, findings: Path | None, progress: int, limit: int | None = None) -> None:
        self.stats = Stats()
        self.findings = findings
        self.progress = progress
        self.limit = limit
        self.first: list[tuple[bytes, Finding]] = []
        if findings is not None:
            findings.mkdir(parents=True, exist_ok=True)

    def record(self, data: bytes, finding: Finding | None, describe: Callable[[], str]) -> None:
        stats = self.stats
        stats.runs += 1
        if finding is not None:
            if finding.kind == "disagreement":
                stats.disagreements += 1
            else:
                stats.foreign_exceptions += 1
            if len(self.first) < 20:
                self.first.append((data, finding))
            if self.findings is not None:
                name = f"{finding.kind}-{hashlib.sha1(data).hexdigest()[:16]}"
                (self.findings / f"{name}.bin").write_bytes(data)
                (self.findings / f"{name}.txt").write_text(
                    f"{finding.kind}: {finding.detail}\n{describe()}\ninput: {data.hex()}\n",
                    encoding="utf-8",
                )
            print(f"FINDING {finding.kind}: {finding.detail} (input {data.hex()})", flush=True)
        if self.progress and stats.runs % self.progress == 0:
            print(stats.line(), flush=True)
        if self.limit is not None and stats.runs == self.limit:
            self.summary()

    def summary(self) -> None:
        print(f"FINAL {self.stats.line()}", flush=True)


def run_random(
    comparator: Comparator, runs: int, seed: int, pool: Sequence[bytes], recorder: Recorder
) -> None:
    rng = random.Random(seed)
    for count, data in enumerate(random_inputs(rng, pool)):
        if count >= runs:
            break
        finding = comparator.judge(data)
        recorder.record(data, finding, partial(comparator.describe, data))


def run_atheris(args: argparse.Namespace) -> None:
    import atheris  # type: ignore[import-not-found, import-untyped, unused-ignore]

    with atheris.instrument_imports(include=["pubproof"]):
        comparator = Comparator()
    corpus = Path(args.corpus)
    corpus.mkdir(parents=True, exist_ok=True)
    if not any(corpus.iterdir()):
        for data in seeds(comparator):
            (corpus / hashlib.sha1(data).hexdigest()).write_bytes(data)
    recorder = Recorder(args.findings, args.progress, args.runs)

    def one_input(data: bytes) -> None:
        finding = comparator.judge(data)
        recorder.record(data, finding, partial(comparator.describe, data))
        if recorder.stats.runs == args.runs and recorder.stats.findings:
            os._exit(1)  # libFuzzer would exit 0: a finding never stops it

    # libFuzzer ends the process itself after -runs; the recorder prints the summary on
    # the last run. Findings do not stop it (one_input never raises).
    atheris.Setup(
        [
            sys.argv[0],
            f"-runs={args.runs}",
            f"-max_len={args.max_len}",
            f"-seed={args.seed}",
            "-print_final_stats=1",
            # where libFuzzer writes an input that crashed the harness itself
            f"-artifact_prefix={args.findings or Path('.')}/",
            str(corpus),
        ],
        one_input,
    )
    atheris.Fuzz()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100_000, help="inputs to run")
    parser.add_argument(
        "--engine",
        choices=("atheris", "random"),
        default="atheris",
        help="atheris (coverage-guided; pip install atheris) or random (seeds mutated)",
    )
    parser.add_argument("--findings", type=Path, help="directory to save failing inputs in")
    parser.add_argument(
        "--corpus",
        default="/tmp/pubproof-fuzz-corpus",
        help="atheris's working corpus (seeded from vectors/corpus.jsonl when empty)",
    )
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--max-len", type=int, default=MAX_LEN, help="largest input (atheris)")
    parser.add_argument(
        "--progress", type=int, default=100_000, help="print the counts every N inputs"
    )
    args = parser.parse_args(argv)
    if args.engine == "atheris":
        run_atheris(args)  # does not return
        return 2
    comparator = Comparator()
    pool = seeds(comparator)
    recorder = Recorder(args.findings, args.progress)
    print(f"{len(pool):,} seeds from {CORPUS.name}; {args.runs:,} inputs", flush=True)
    run_random(comparator, args.runs, args.seed, pool, recorder)
    recorder.summary()
    return 1 if recorder.stats.findings else 0


if __name__ == "__main__":
    sys.exit(main())
