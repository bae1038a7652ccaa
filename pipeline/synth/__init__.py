"""Synthetic captures whose right answer is known: test and benchmark inputs, not used by
``pubproof check``.

- :mod:`.pcapwrite`: byte-correct pcap and pcapng writers of TCP traffic (TCP connections
  with sequence numbers, IPv4/IPv6 and link framing, snapshot lengths), which tshark reads;
- :mod:`.generate`: a deterministic generator of large captures of many interleaved MQTT
  3.1.1 connections (``python -m pubproof.pipeline.synth``), with what a capture of real
  TCP shows (cut packets, retransmissions, reordering, IPv6), and the expected counts
  beside it in ``OUT.expected.json``; ``--mqtt5 P`` makes a share of them MQTT 5.0
  (:mod:`.mqtt5`: properties, Topic Aliases, Reason Codes); :mod:`.config` holds what it
  is asked for and what it counts, :mod:`.command` is its command line;
- :mod:`.faults`: the wire and flow faults the generator injects, their rule ids taken
  from the codec and :func:`pubproof.model.replay.replay`, never written by hand;
  :mod:`.injection`: where they and the broker's distribution faults are injected, and
  how they are counted;
- :mod:`.check`: compares a check's ``violations`` (and ``packets``, reconciliation) with
  the expected file and lists every disagreement.
"""

from pubproof.pipeline.synth.command import main
from pubproof.pipeline.synth.config import SynthConfig
from pubproof.pipeline.synth.generate import file_sha256, generate

__all__ = ["SynthConfig", "file_sha256", "generate", "main"]
