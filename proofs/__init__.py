"""pubproof.proofs: Z3 theorems over the model (see the protocol issue; not built yet)."""
