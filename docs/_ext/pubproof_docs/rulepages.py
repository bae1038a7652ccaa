"""Each rule id's page on the site: the statement on the traceability page.

A rule id is written as the standard (``MQTT-3.3.1-4``) or the project (``PP31-3.3-topic-empty``)
writes it; MQTT 5.0 reuses 3.1.1's numbers for other statements, so the same id names two
statements, and which one a citation means depends on the edition it was judged under.
"""

from __future__ import annotations

from pubproof_docs.context import GENERATED, Context


def rule_pages(ctx: Context) -> dict[str, str]:
    """Statement key (``MQTT-3.3.1-4``, ``5.0:MQTT-3.3.1-4``) -> its URL from the site's root."""
    return {
        key: f"{GENERATED}/traceability.html#{statement.need}"
        for key, statement in ctx.trace.statements.items()
    }


def key_of(rule: str, edition: str, pages: dict[str, str]) -> str | None:
    """The statement key a rule id cited under ``edition`` stands for, if the site has it:
    a 5.0 citation names the 5.0 statement, a 3.1 or 3.1.1 one the older editions'."""
    key = f"5.0:{rule}" if edition == "5.0" else rule
    return key if key in pages else None
