"""The recording machine's folders, kept out of the evidence.

What a driver and its library print names folders of the machine that ran them: the
driver's command line (the Python interpreter, the node script), and a traceback on
standard error (the library in ``site-packages``, the standard library, the driver module
in the installed package, the npm packages under ``interop/``). The evidence is committed and
shared (``docs/matrix/evidence/``, ``pubproof probe-client --json``), so each such folder is
written as a placeholder saying what it is, at recording time (:mod:`.driver`):

- the running interpreter -> ``python``; ``site-packages`` -> ``<site-packages>``; the
  standard library -> ``<stdlib>``; pubproof's packages -> ``<pubproof>``,
  ``<pubproof>/probe``, ...; ``interop/`` -> ``<interop>``, the checkout above it ->
  ``<checkout>``; the virtual environment -> ``<venv>``; Python's installation ->
  ``<python>``; the home folder -> ``~``; the temporary folder -> ``<tmp>``.

The longest folder wins (``site-packages`` inside the virtual environment is
``<site-packages>``, not ``<venv>/lib/...``), and a folder is replaced only where a path
starts (a topic name that happens to contain one is not touched: only the command line,
standard error and the driver's own error messages pass through here). Nothing a verdict
rests on is changed: the judges read packets and events, not paths.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import site
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pubproof.probe.clients.shipped import interop_folder

#: pubproof's subpackages whose folders get a placeholder of their own (every layout of the
#: install: one tree, or the checkout's folders under ``pip install -e .``)
SUBPACKAGES = ("model", "reference", "judge", "proofs", "probe", "pipeline")
#: a folder starts a path: nothing of a path before it (a topic name ``a/tmp/b`` is not
#: the temporary folder), and after it the path goes on or ends
_BEFORE = r"(?<![\w./~-])"
_AFTER = r"""(?=[/\\"'\s:,;()\[\]]|$)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalPaths:
    """Folders of one machine, each with the placeholder written instead."""

    #: (absolute folder or file, placeholder)
    folders: tuple[tuple[str, str], ...]
    _pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _placeholders: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for folder, _ in self.folders:
            if not os.path.isabs(folder) or len(Path(folder).parts) < 2:
                raise ValueError(f"not a folder to replace: {folder!r}")
        placeholders = dict(sorted(self.folders, key=lambda pair: -len(pair[0])))
        alternatives = "|".join(re.escape(folder) for folder in placeholders)
        object.__setattr__(self, "_placeholders", placeholders)
        object.__setattr__(self, "_pattern", re.compile(f"{_BEFORE}(?:{alternatives}){_AFTER}"))

    def hide(self, text: str) -> str:
        """``text`` with every folder of this machine written as its placeholder."""
        return self._pattern.sub(lambda found: self._placeholders[found.group(0)], text)

    def hide_all(self, texts: Sequence[str]) -> list[str]:
        """:meth:`hide` of each (a command line)."""
        return [self.hide(text) for text in texts]


def _package_folder(name: str) -> str | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return str(next(iter(spec.submodule_search_locations)))


def _usable(path: str) -> bool:
    return bool(path) and os.path.isabs(path) and len(Path(path).parts) >= 2


@functools.cache
def here() -> LocalPaths:
    """This machine's folders (computed once per process)."""
    paths = sysconfig.get_paths()
    pairs: list[tuple[str, str]] = [(sys.executable, "python")]
    sites = [*site.getsitepackages(), site.getusersitepackages()]
    pairs += [(p, "<site-packages>") for p in (*sites, paths["purelib"], paths["platlib"])]
    pairs += [(paths["stdlib"], "<stdlib>"), (os.path.dirname(os.__file__), "<stdlib>")]
    for sub in ("", *SUBPACKAGES):
        folder = _package_folder(f"pubproof.{sub}" if sub else "pubproof")
        if folder:
            pairs.append((folder, f"<pubproof>/{sub}" if sub else "<pubproof>"))
    interop = interop_folder()
    if interop is not None:
        pairs += [(str(interop), "<interop>"), (str(interop.parent), "<checkout>")]
    if sys.prefix != sys.base_prefix:
        pairs.append((sys.prefix, "<venv>"))
    pairs += [(sys.base_prefix, "<python>"), (os.path.expanduser("~"), "~")]
    pairs.append((tempfile.gettempdir(), "<tmp>"))
    # each as given and with its links resolved (a traceback names the path Python used)
    both = {(os.path.abspath(p), what) for p, what in pairs if _usable(p)}
    both |= {(os.path.realpath(p), what) for p, what in pairs if _usable(p)}
    unique: dict[str, str] = {}
    for path, what in sorted(both):
        unique.setdefault(path, what)  # a folder named twice keeps its first placeholder
    return LocalPaths(folders=tuple(unique.items()))
