"""pubproof: the executable formal model and the reference implementation of MQTT PUBLISH.

- :mod:`pubproof.model`: the specification as readable, executable rules
- :mod:`pubproof.reference`: the fast sans-IO codec, tested equal to the model
- :mod:`pubproof.proofs`: Z3 proofs over the model
- ``pubproof`` (this package's :mod:`~pubproof.main`): the command line
"""

__version__ = "0.1.0"
