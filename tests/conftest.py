"""Shared test settings: Hypothesis profiles and the spec excerpts' location."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, settings

# "ci" is the default: enough examples to matter, within the CI budget on 2 cores.
settings.register_profile(
    "ci", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile(
    "deep", max_examples=20_000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

ROOT = Path(__file__).resolve().parent.parent
SPEC = Path(os.environ.get("PUBPROOF_SPEC_DIR", ROOT / "model" / "texts"))
