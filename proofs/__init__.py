"""pubproof.proofs: named theorems over the model, checked with Z3, each with mutants.

- :mod:`~pubproof.proofs.registry`: ``Theorem``, ``Result``, mutants, and ``theorem(...)``
- :mod:`~pubproof.proofs.catalog`: the modules that hold theorems; ``load()``
- :mod:`~pubproof.proofs.wire`: the wire-format theorems (Remaining Length, first bytes,
  PUBLISH fields, editions and readings; for MQTT 5.0 the ``wire50_*`` modules: its other
  Variable Byte Integers, the property section, the acknowledgements, where it parts from
  3.1.1 and 3.1)

``pubproof prove`` runs them. The protocol (QoS flow) theorems register the same way.
"""
