"""pubproof.testing: tests generated from the model."""
