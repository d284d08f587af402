"""Each exercise's reference solution is collapsed behind "Show solution" on the site.

The chapters tag their solution cells ``hide-cell`` (scripts/tag_solutions.py writes the tags;
site/conf.py labels myst-nb's toggle for such a cell); tests/test_site.py checks the built
pages.  Here: the tagging itself, and that the committed chapters carry exactly those tags.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from labkit.classroom import notebooks
from labkit.classroom.notebooks import SOLUTION_TOGGLE, course_notebooks, tag_solutions
from labkit.classroom.student import student_notebook

ROOT = Path(__file__).resolve().parent.parent


def _notebook() -> nbformat.NotebookNode:
    cells = [nbformat.v4.new_markdown_cell("Exercise 0.1: the answer"),
             nbformat.v4.new_code_cell("### BEGIN SOLUTION\nanswer = 42\n### END SOLUTION"),
             nbformat.v4.new_code_cell('labkit.exercise("0.1")'),
             nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["solution"]}),
             nbformat.v4.new_code_cell("y = 2", metadata={"tags": [SOLUTION_TOGGLE, "keep"]}),
             nbformat.v4.new_code_cell("z = 3", metadata={"tags": [SOLUTION_TOGGLE]})]
    return nbformat.v4.new_notebook(cells=cells)


def test_solution_cells_are_tagged_and_no_other_cell_is():
    nb = _notebook()
    assert notebooks.solution_cells(nb) == [1, 3]      # a marked region; a cell tagged "solution"
    assert tag_solutions(nb) == {"tagged": [1, 3], "untagged": [4, 5]}
    tags = [cell.metadata.get("tags") for cell in nb.cells]
    assert tags == [None, [SOLUTION_TOGGLE], None, ["solution", SOLUTION_TOGGLE], ["keep"], None]
    assert tag_solutions(nb) == {"tagged": [], "untagged": []}, "a second run changes nothing"


def _script():
    """scripts/tag_solutions.py as a module (its main() runs here, without a new Python)."""
    import importlib.util

    path = ROOT / "scripts" / "tag_solutions.py"
    spec = importlib.util.spec_from_file_location("tag_solutions", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_script_checks_then_writes(tmp_path, capsys):
    path = tmp_path / "00_x.ipynb"
    nbformat.write(_notebook(), path)
    before = path.read_bytes()
    script = _script()
    assert script.main(["--check", str(path)]) == 1
    assert "[1, 3]" in capsys.readouterr().out
    assert path.read_bytes() == before, "--check writes nothing"
    assert script.main([str(path)]) == 0
    assert [c.metadata.get("tags") for c in nbformat.read(path, as_version=4).cells][1] == [
        SOLUTION_TOGGLE]
    assert script.main(["--check", str(path)]) == 0


def test_a_student_copy_shows_no_solution_behind_the_tag():
    nb = _notebook()
    tag_solutions(nb)
    copy = student_notebook(nb).notebook
    answer = copy.cells[1]
    # the toggle's tag may stay on the blank answer cell (it collapses nothing secret) ...
    assert "answer = 42" not in answer.source and "Exercise 0.1" in answer.source
    # ... and the "solution" tag, which would make the cell a solution again, does not
    assert all("solution" not in c.metadata.get("tags", []) for c in copy.cells)


@pytest.mark.parametrize("path", course_notebooks(), ids=[p.stem for p in course_notebooks()])
def test_every_chapter_collapses_exactly_its_solutions(path):
    nb = nbformat.read(path, as_version=4)
    changed = tag_solutions(nb)
    assert changed == {"tagged": [], "untagged": []}, (
        f"cells {changed['tagged']} are solutions without the {SOLUTION_TOGGLE!r} tag, cells "
        f"{changed['untagged']} carry it but are no solutions: run "
        ".venv/bin/python scripts/tag_solutions.py")
