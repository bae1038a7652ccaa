"""The evidence of ``pubproof probe-client`` is shared (``docs/matrix/evidence/``): what a
driver prints is recorded with the recording machine's folders written as placeholders, and
no committed evidence names one."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pubproof.probe.clients.driver import Driver, Plan
from pubproof.probe.clients.local_paths import LocalPaths, here

ROOT = Path(__file__).resolve().parent.parent
MATRIX = ROOT / "docs" / "matrix"
#: where a path starts with a folder of a machine (a traceback's file, a command line): the
#: usual homes of checkouts, users, interpreters and temporary files, and a drive letter
LOCAL = re.compile(
    r"""(?:^|[\s"'(=:\[])(?:/(?:work|tmp|root|home|Users|private|var/folders|opt|usr/local)/"""
    r"""|[A-Za-z]:\\)"""
)


def _record(entries: list[dict[str, Any]]) -> Any:
    def record(event: str, **fields: Any) -> None:
        entries.append({"event": event, **fields})

    return record


def test_a_driver_is_recorded_without_the_folders_of_this_machine() -> None:
    """The command line (this interpreter) and standard error (a traceback through the
    standard library) as the evidence keeps them."""
    entries: list[dict[str, Any]] = []
    code = "import json; json.loads('{')"  # a traceback that names json/decoder.py
    plan = Plan(url="mqtt://127.0.0.1:1", client_id="pp", edition="3.1.1")
    driver = Driver([sys.executable, "-c", code], plan, _record(entries))
    driver.start()
    end = time.monotonic() + 30
    while not driver.exited() and time.monotonic() < end:
        time.sleep(0.05)
    driver.stop()
    start, finish = entries[0], entries[-1]
    assert start["event"] == "driver-start" and start["argv"][0] == "python"
    assert finish["event"] == "driver-exit" and finish["on_its_own"]
    assert 'File "<stdlib>/json/decoder.py"' in finish["stderr"], finish["stderr"]
    text = json.dumps(entries)
    for folder in (sys.executable, sys.prefix, sys.base_prefix, str(ROOT)):
        assert folder not in text, folder
    assert not LOCAL.search(text), text


def test_a_folder_is_replaced_only_where_a_path_starts() -> None:
    paths = LocalPaths(
        folders=(("/srv/a", "<checkout>"), ("/srv/a/.venv", "<venv>"), ("/tmp", "<tmp>"))
    )
    assert paths.hide('File "/srv/a/.venv/lib/x.py"') == 'File "<venv>/lib/x.py"'
    assert paths.hide("/srv/a/b.js:3:1 /srv/a") == "<checkout>/b.js:3:1 <checkout>"
    # not a folder of the machine: another folder sharing the prefix, a topic name
    assert paths.hide("/srv/ab /tmpfoo pubproof/tmp/x") == "/srv/ab /tmpfoo pubproof/tmp/x"
    with pytest.raises(ValueError, match="not a folder"):
        LocalPaths(folders=(("/", "<root>"),))


def test_this_machines_folders_are_known() -> None:
    names = dict(here().folders)
    assert names[os.path.abspath(sys.executable)] == "python"
    assert names[str(ROOT / "interop")] == "<interop>"
    assert "<pubproof>/probe" in names.values() and "<site-packages>" in names.values()


def test_no_committed_evidence_names_a_folder_of_the_machine_that_recorded_it() -> None:
    files = [MATRIX / "results.json", *sorted((MATRIX / "evidence").glob("*.json"))]
    assert len(files) > 10
    for path in files:
        text = path.read_text(encoding="utf-8")
        found = LOCAL.search(text)
        assert found is None, f"{path.name}: {text[found.start() : found.start() + 120]}"
        assert str(ROOT) not in text, path.name
