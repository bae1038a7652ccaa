"""A client check: what pubproof's server does (and asks the driver to do), and the judge
that reads the evidence."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pubproof.model.editions import Edition
from pubproof.probe.clients.context import ClientContext
from pubproof.probe.clients.judge import ClientJudge

Run = Callable[[ClientContext], None]
Rules = Callable[[Edition], tuple[str, ...]]


def fixed(*rule_ids: str) -> Rules:
    """The same rule ids in every edition."""
    return lambda edition: rule_ids


@dataclass(frozen=True, slots=True)
class ClientCheck:
    """One entry of the client catalog."""

    id: str
    title: str
    rules: Rules
    run: Run
    judge: ClientJudge

    def rules_for(self, edition: Edition) -> tuple[str, ...]:
        """The rule ids the check rests on in ``edition``."""
        return self.rules(edition)
