"""The sphinx-needs warning that fails the build on an uncovered statement.

It reads the needs' links as sphinx-needs resolved them (not the extension's own
computation): a ``stmt`` need is covered when one of the ``rule`` needs in its
``implements_back`` has, in its ``verifies_back``, a ``test`` need or a ``thm`` need whose
status says it reached its expected status in the latest run (``proved``, or ``refuted, as
expected``; a theorem that did not is ``FAILED: ...``); otherwise
it must carry an ``out_of_scope`` reason.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx
from sphinx_needs.api.configuration import add_warning
from sphinx_needs.config import NeedsSphinxConfig
from sphinx_needs.data import SphinxNeedsData

#: The statuses of a theorem need that reached its expected status
#: (:func:`pubproof_docs.pages_theorems.status_words`).
AS_EXPECTED = ("proved", "refuted, as expected")

#: The running application (sphinx-needs calls warning checks with the need alone).
APP: list[Sphinx] = []


def _verifier_counts(need: Any) -> bool:
    if need["type"] == "test":
        return True
    return bool(need["type"] == "thm" and need["status"] in AS_EXPECTED)


def uncovered_statement(need: Any, log: Any) -> bool:
    """True for a statement that is neither covered nor given a reason (a build warning)."""
    if need["type"] != "stmt" or need.get("out_of_scope"):
        return False
    needs = SphinxNeedsData(APP[0].env).get_needs_view()
    for rule_id in need["implements_back"]:
        rule = needs.get(rule_id)
        if rule is None:
            continue
        for verifier_id in rule["verifies_back"]:
            verifier = needs.get(verifier_id)
            if verifier is not None and _verifier_counts(verifier):
                return False
    log.warning(f"statement {need['label']} ({need['id']}) has no coverage and no reason")
    return True


def register(app: Sphinx) -> None:
    """Register the check with sphinx-needs (once per process: its registry is global)."""
    APP[:] = [app]
    if "uncovered-statement" not in NeedsSphinxConfig(app.config).warnings:
        add_warning(app, "uncovered-statement", function=uncovered_statement)
