"""The command-line reference (from ``pubproof.main.parser()``) and the API reference
(autodoc of every module of the documented packages), generated at build time."""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil

from pubproof.main import parser
from pubproof_docs.context import GENERATED, Context
from pubproof_docs.rst import heading, indent

CLI_DOC = f"{GENERATED}/cli"
API_DOC = f"{GENERATED}/api/index"

#: The packages whose API is documented, with a line on each.
API_PACKAGES = {
    "pubproof.model": "the executable specification: rules, editions and readings, the wire "
    "format, the flow tables, sessions, replay, the texts and their clauses",
    "pubproof.reference": "the fast sans-IO codec and session engine",
    "pubproof.judge": "the model applied to traffic: findings, packet descriptions, the link "
    "judge compiled from the flow tables, the close judge",
    "pubproof.proofs": "the theorem registry and the Z3 encodings",
    "pubproof.pipeline": "captured traffic checked against the model: capture reading, TCP "
    "reassembly, framing, judging, the python and Spark engines, tables and reports",
    "pubproof.probe": "the live broker probe: its checks, clients, judges and reports",
}


def _subcommands(top: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in top._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _help(command: argparse.ArgumentParser) -> str:
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "96"  # argparse wraps to the terminal: fix it for the page
    try:
        return command.format_help()
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous


def cli_page() -> str:
    top = parser()
    out = [heading("Command-line reference", "=")]
    out.append(
        "Generated at build time from ``pubproof.main.parser()``: the help of ``pubproof`` and "
        "of every subcommand, exactly as ``--help`` prints it.\n"
    )
    out.append(heading("pubproof", "-"))
    out.append(".. code-block:: text\n\n" + indent(_help(top), 3) + "\n")
    for name, command in _subcommands(top).items():
        out.append(f".. _cli-{name}:\n")
        out.append(heading(f"pubproof {name}", "-"))
        out.append(".. code-block:: text\n\n" + indent(_help(command), 3) + "\n")
    return "\n".join(out)


def modules(package: str) -> list[str]:
    """The public modules of ``package`` (names not starting with ``_``), sorted."""
    found = importlib.import_module(package)
    return sorted(
        f"{package}.{m.name}"
        for m in pkgutil.iter_modules(found.__path__)
        if not m.name.startswith("_")
    )


def api_pages() -> dict[str, str]:
    pages = {}
    index = [heading("API reference", "="), "From the docstrings, by ``sphinx.ext.autodoc``.\n"]
    index.append(".. toctree::\n   :maxdepth: 1\n")
    for package, about in API_PACKAGES.items():
        docname = f"{GENERATED}/api/{package}"
        index.append(f"   {package}")
        body = [heading(package, "="), f"{about[0].upper()}{about[1:]}.\n"]
        body.append(f".. automodule:: {package}\n   :no-members:\n")
        for module in modules(package):
            body.append(heading(module, "-"))
            body.append(f".. automodule:: {module}\n   :members:\n   :show-inheritance:\n")
        pages[docname] = "\n".join(body)
    pages[API_DOC] = "\n".join(index) + "\n"
    return pages


def pages(ctx: Context) -> dict[str, str]:
    return {CLI_DOC: cli_page(), **api_pages()}
