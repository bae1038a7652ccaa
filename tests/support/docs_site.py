"""Shared by the docs tests: the built site (built with scripts/docs when missing, never
skipped) and the docs extension's package on the import path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "build" / "site"
EXT = ROOT / "docs" / "_ext"
if str(EXT) not in sys.path:
    sys.path.insert(0, str(EXT))


def built_site() -> Path:
    """``build/site``, built by ``scripts/docs`` first if it is not there."""
    if not (SITE / "_generated" / "clauses.html").is_file():
        subprocess.run([str(ROOT / "scripts" / "docs")], cwd=ROOT, check=True)
    return SITE
