"""The distribution core against the distribution model, side by side, step by step: the
comparison machine of ``support/distribution_comparison.py`` run for each edition, its
readings and the server's limits (``CASES``)."""

from __future__ import annotations

from typing import Any

import pytest
from support.distribution_comparison import CASES, comparison_machine, scaled

from pubproof.model.editions import Edition


@pytest.mark.parametrize(
    ("edition", "readings", "limits"),
    CASES,
    ids=[f"{e.value}-{'-'.join(r.values()) or 'defaults'}-{len(lim)}limits" for e, r, lim in CASES],
)
def test_the_core_agrees_with_the_model(
    edition: Edition, readings: dict[str, str], limits: dict[str, Any]
) -> None:
    machine = comparison_machine(edition, readings, limits)
    machine.TestCase.settings = scaled(60)
    machine.TestCase().runTest()
