"""pubproof: the executable formal model and the reference implementation of MQTT PUBLISH.

- :mod:`pubproof.model`: the specification as readable, executable rules
- :mod:`pubproof.reference`: the fast sans-IO codec, tested equal to the model
- :mod:`pubproof.proofs`: Z3 proofs over the model
- ``pubproof`` (this package's :mod:`~pubproof.main`): the command line
"""

import os as _os

__version__ = "0.1.0"

if _os.environ.get("PUBPROOF_PURE") == "1":
    # the Python source, not the compiled build: installed here, before any compiled
    # module (the pipeline's, the reference codec's, the judges') can be imported
    from pubproof.pipeline.compiled import prefer_source

    prefer_source()
