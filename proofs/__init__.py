"""pubproof.proofs: named theorems over the model, checked with Z3, each with mutants.

- :mod:`~pubproof.proofs.registry`: ``Theorem``, ``Result``, mutants, and ``theorem(...)``
- :mod:`~pubproof.proofs.catalog`: the modules that hold theorems; ``load()``
- :mod:`~pubproof.proofs.wire`: the wire-format theorems (Remaining Length, first bytes,
  PUBLISH fields, editions and readings)

``pubproof prove`` runs them. The protocol (QoS flow) theorems register the same way.
"""
