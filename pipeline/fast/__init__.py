"""pubproof.pipeline.fast: the capture pipeline's compiled per-packet link judges."""
