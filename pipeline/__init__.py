"""pubproof.pipeline: captured MQTT traffic checked against the model, at scale (PySpark).

``pubproof check CAPTURE_OR_DIR... --out DIR`` (:mod:`pubproof.check_command`) runs
:func:`pubproof.pipeline.run.check` (:mod:`.run`: plan, run an engine, write and
reconcile). The stages, each a module with one job:

- :mod:`.capture`: pcap/pcapng readers; the driver's header walk plans byte-range splits
  on record boundaries, workers read their ranges (frames numbered as tshark does);
- :mod:`.dissect`: link layer (Ethernet/VLAN, SLL, SLL2, null/loop, raw), IPv4/IPv6, TCP;
- :mod:`.source`: the reading stage: frames keyed by (capture, 4-tuple) or quarantined;
- :mod:`.connection`: the per-connection function both engines share (4-tuple reuse, the
  steps below in order), built on :mod:`.detect` (which connections are MQTT, which end is
  the client), :mod:`.reassembly` (TCP, streamed, memory bounded by the out-of-order
  window), :mod:`.framing` (fixed headers; resynchronisation after gaps), :mod:`.describe`
  (the codec, control packets), the link judges over both ends (:mod:`.fast`: the
  compiled twins of :mod:`pubproof.judge`'s, with :mod:`.fast.layout`, the layout tricks
  the per-packet path shares, and why), the close judge of :mod:`pubproof.judge`,
  :mod:`.trail` (a finding's evidence) and :mod:`.rows` (the rows it writes, one named
  tuple per table);
- :mod:`.engine_python` (one process, no Spark imported) and :mod:`.engine_spark` (one
  Spark job: a secondary sort by (capture, 4-tuple, frame), the same trackers in
  ``mapPartitionsWithIndex``), with its helpers:

  - :mod:`.shuffle`: what the job shuffles: a 4-tuple's consecutive frames in chunks,
    pickled once by the C pickler, keyed by their first frame so that sorting the chunks
    gives the frames in frame order;
  - :mod:`.staging`: the workers' rows written straight to sorted Parquet runs under the
    output directory, named by partition and run so a retried task rewrites the same files;
  - :mod:`.spark_daemon`: the Python worker daemon of a local master, which imports the
    installed PySpark (compiled once) instead of Spark's ``pyspark.zip`` and preloads the
    pipeline's task code before it forks;

- :mod:`.tables` (columns and sort orders), :mod:`.output` (Parquet; the python engine
  streams rows into sorted runs merged at the end), :mod:`.summary` (per implementation
  endpoint and rule: the count and the first example, chosen by (capture, frame, offset),
  never by which worker saw it first), :mod:`.reconcile` (nothing lost: frames and bytes),
  :mod:`.report` (HTML, rule titles from the project's registries), :mod:`.progress`
  (files, bytes, frames and the rate on standard error).

Test and benchmark inputs whose right answer is known (not used by ``pubproof check``) are
the subpackage :mod:`.synth` (the pcap writers, the generator of synthetic captures, the
faults it injects and the comparison with the expected answer).

Layers: the pipeline imports the model, the reference codec and the judges
(:mod:`pubproof.judge`); nothing imports the pipeline but the command line, and it imports
nothing of the probe (``tests/test_layers.py``).
"""
