"""pubproof.pipeline: captured MQTT traffic checked against the model, at scale (PySpark).

``pubproof check CAPTURE_OR_DIR... --out DIR`` (:mod:`pubproof.check_command`) runs
:func:`pubproof.pipeline.run.check`. The stages, each a module with one job:

- :mod:`.capture`: pcap/pcapng readers; the driver's header walk plans byte-range splits
  on record boundaries, workers read their ranges (frames numbered as tshark does);
- :mod:`.dissect`: link layer (Ethernet/VLAN, SLL, SLL2, null/loop, raw), IPv4/IPv6, TCP;
- :mod:`.source`: the reading stage: frames keyed by (capture, 4-tuple) or quarantined;
- :mod:`.connection`: the per-connection function both engines share (roles, 4-tuple
  reuse, which connections are MQTT), built on :mod:`.reassembly` (TCP, streamed, memory
  bounded by the out-of-order window), :mod:`.framing` (fixed headers; resynchronisation
  after gaps), :mod:`.describe` (the codec, control packets) and :mod:`.flow_judge` (the
  flow tables, both ends; it finds what :mod:`.judge`, two
  :class:`pubproof.probe.judge_link.LinkJudge`, finds, at a fraction of the cost);
- :mod:`.engine_python` (one process) and :mod:`.engine_spark` (secondary sort by
  (capture, 4-tuple, frame), the same trackers in ``mapPartitions``);
- :mod:`.tables` (columns and sort orders), :mod:`.output` (Parquet; the python engine
  streams rows into sorted runs merged at the end), :mod:`.summary`,
  :mod:`.reconcile` (nothing lost: frames and bytes), :mod:`.report` (HTML),
  :mod:`.progress`.

Layers: the pipeline imports the model, the reference codec and the probe's framing and
judging helpers; nothing imports the pipeline but the command line.
"""
