"""The distribution theorems: importing this module registers them all.

What a server does with messages across sessions (issue 34), proved on encodings of the
model's own tables and graphs, or explored over every interleaving of a small world, each
cross-checked with the model and every counterexample a trace of the server model:

- :mod:`~pubproof.proofs.distribution_matching`: the laws of topic matching (a literal
  filter, ``#``, ``+``, the ``$`` rule) for every filter and topic name up to four levels,
  and the witness of reading ``dollar-topics``;
- :mod:`~pubproof.proofs.distribution_retained`: the retained store holds the last retained
  message with a payload, or none, after any sequence of inputs; and 3.1's "may delete";
- :mod:`~pubproof.proofs.distribution_forwarding`: the QoS and RETAIN of every copy, from
  the decision graphs; :mod:`~pubproof.proofs.distribution_witnesses`: where the readings
  of overlapping subscriptions and of 3.1's retained QoS part;
- :mod:`~pubproof.proofs.distribution_ordering`: the order of 4.6 kept for every
  interleaving, and the orders the texts do not promise.

Each comes with mutants (a patched table or graph, a broken meaning, a server that sends in
another order) that its check must kill.
"""

from __future__ import annotations

# isort: off
# Import order is registration order: matching first (everything rests on it), then the
# retained store, forwarding, the readings' witnesses and ordering.
from pubproof.proofs.distribution_matching import MATCHING_THEOREMS
from pubproof.proofs.distribution_retained import RETAINED_THEOREMS
from pubproof.proofs.distribution_forwarding import FORWARDING_THEOREMS
from pubproof.proofs.distribution_witnesses import WITNESS_THEOREMS
from pubproof.proofs.distribution_ordering import ORDERING_THEOREMS
# isort: on

DISTRIBUTION_THEOREMS = [
    *MATCHING_THEOREMS,
    *RETAINED_THEOREMS,
    *FORWARDING_THEOREMS,
    *WITNESS_THEOREMS,
    *ORDERING_THEOREMS,
]

#: The order of a run (catalog.load), whatever imported a theorem module first.
THEOREM_ORDER = DISTRIBUTION_THEOREMS

__all__ = ["DISTRIBUTION_THEOREMS", "THEOREM_ORDER"]
