"""The teaching notebooks: valid, committed without outputs, built to render, and runnable.

The docs build executes the notebooks (myst-nb) and renders them with their outputs; these
tests keep the committed files in the shape that build needs (nbformat-valid, no stored
outputs, one title, heading levels that do not skip, no paths of one machine), and the slow
test runs each one top to bottom in a fresh kernel, as a reader would after ``scripts/setup``.
"""

from __future__ import annotations

import itertools
import re
import time
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "notebooks"
EXPECTED = (
    "01-anatomy-of-a-publish.ipynb",
    "02-qos-flows.ipynb",
    "03-proving-with-z3.ipynb",
    "04-editions-and-ambiguities.ipynb",
    "05-checking-a-capture.ipynb",
    "06-flow-control-and-topic-aliases.ipynb",
    "07-retained-messages-and-topic-filters.ipynb",
)
NOTEBOOKS = sorted(FOLDER.glob("*.ipynb"))
#: the longest a notebook may take on the CI machine (the brief asks for about 60 s)
BUDGET_SECONDS = 180


# nbformat ships py.typed but leaves read, write and the v4 constructors unannotated:
# their calls carry a targeted ignore[no-untyped-call].
def _read(path: Path) -> nbformat.NotebookNode:
    notebook = nbformat.read(path, as_version=nbformat.NO_CONVERT)  # type: ignore[no-untyped-call]
    assert isinstance(notebook, nbformat.NotebookNode)
    return notebook


def test_the_seven_notebooks_are_there() -> None:
    assert [p.name for p in NOTEBOOKS] == list(EXPECTED)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_valid_nbformat_with_a_python_kernel(path: Path) -> None:
    notebook = _read(path)
    nbformat.validate(notebook)
    assert notebook.nbformat == 4
    assert notebook.metadata["kernelspec"]["name"] == "python3"
    assert notebook.metadata["kernelspec"]["language"] == "python"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_without_outputs(path: Path) -> None:
    """The docs build executes the notebooks: stored outputs would only go stale."""
    for index, cell in enumerate(_read(path).cells):
        if cell.cell_type == "code":
            assert cell.outputs == [], f"cell {index} has stored outputs"
            assert cell.execution_count is None, f"cell {index} has an execution count"
        assert "widgets" not in cell.metadata, f"cell {index} stores widget state"


def _headings(path: Path) -> list[tuple[int, str]]:
    found = []
    for cell in _read(path).cells:
        if cell.cell_type != "markdown":
            continue
        fenced = False
        for line in cell.source.splitlines():
            if line.startswith("```"):
                fenced = not fenced
            match = re.match(r"(#{1,6}) (.+)", line)
            if match and not fenced:
                found.append((len(match.group(1)), match.group(2)))
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_one_title_and_heading_levels_that_do_not_skip(path: Path) -> None:
    """The site's page title is the notebook's one top heading; a skipped level is a
    warning in the docs build, and the build treats warnings as errors."""
    headings = _headings(path)
    assert headings and headings[0][0] == 1, "the notebook starts with a '# title' heading"
    assert [level for level, _ in headings].count(1) == 1, "exactly one top-level heading"
    for (before, _), (level, text) in itertools.pairwise(headings):
        assert level <= before + 1, f"heading {text!r} skips a level"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_paths_of_one_machine(path: Path) -> None:
    """Notebooks find the repository from their own folder, never from a fixed path."""
    for cell in _read(path).cells:
        assert "/work/" not in cell.source and "/tmp/" not in cell.source


def test_the_headings_check_bites(tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook()  # type: ignore[no-untyped-call]
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# Title\n\n### skipped a level")  # type: ignore[no-untyped-call]
    ]
    path = tmp_path / "bad.ipynb"
    nbformat.write(notebook, path)  # type: ignore[no-untyped-call]
    with pytest.raises(AssertionError, match="skips a level"):
        test_one_title_and_heading_levels_that_do_not_skip(path)


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_runs_top_to_bottom(path: Path) -> None:
    """Execute in a fresh kernel from the notebook's folder, as the docs build does: no
    error, nothing on standard error, within the time budget."""
    from nbclient import NotebookClient

    notebook = _read(path)
    client = NotebookClient(
        notebook,
        timeout=BUDGET_SECONDS,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    start = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - start
    assert seconds < BUDGET_SECONDS, f"{path.name} took {seconds:.0f} s"
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            assert output.output_type != "error", f"cell {index}: {output.get('ename')}"
            if output.output_type == "stream":
                assert output.name != "stderr", f"cell {index} wrote to stderr: {output.text}"
