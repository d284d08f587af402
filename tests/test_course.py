"""Structural rules every committed chapter notebook must follow.

nbval (run over course/ by the same pytest command) re-executes each notebook and
compares its outputs; these tests check what nbval does not: conventions, budgets
that can be read from the file, and the claim/exercise counts the chapters promise.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import nbformat
import pytest

from labkit.classroom.notebooks import course_notebooks
from labkit.session import KERNEL

NOTEBOOKS = course_notebooks()
MIN_CHECKS = {"01_mjcf_foundations": 20, "02_units_frames_compiler": 20,
              "03_actuators_force": 25, "04_actuators_limits_state": 25,
              "05_solver_parameters": 20, "06_contacts_filtering": 20, "07_contact_tuning": 20,
              "08_kinematic_drive": 15, "09_capstone": 10, "10_stability_scale": 25,
              "11_audit_real_robot": 15}
MIN_EXERCISES_BY_CHAPTER = {"03_actuators_force": 4, "04_actuators_limits_state": 4}
MIN_EXERCISES = 3


def outputs(nb):
    for cell in nb.cells:
        if cell.cell_type == "code":
            yield from cell.outputs


def texts(nb):
    for out in outputs(nb):
        if out.output_type in ("display_data", "execute_result"):
            yield out.data.get("text/plain", "")


@pytest.fixture(params=NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def notebook(request):
    return request.param, nbformat.read(request.param, as_version=4)


def test_there_are_chapters():
    assert [p.stem[:2] for p in NOTEBOOKS[:3]] == ["00", "01", "02"]


def test_first_code_cell_starts_labkit(notebook):
    """The first code cell ends in ``import labkit`` + ``labkit.setup()``; before them it only
    installs the course in a hosted runtime (its exact text: tests/test_cloud.py) and imports
    nothing that loads MuJoCo."""
    _, nb = notebook
    first = next(c for c in nb.cells if c.cell_type == "code")
    assert first.source.endswith("import labkit\nlabkit.setup()")
    before = first.source.removesuffix("import labkit\nlabkit.setup()")
    assert not re.search(r"^\s*(import|from)\s+(mujoco|labkit)\b", before, re.M)
    assert nb.metadata.kernelspec.name == KERNEL


def test_committed_executed_and_small(notebook):
    path, nb = notebook
    code = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    assert all(c.execution_count is not None for c in code), "run `labkit execute` before committing"
    counts = [c.execution_count for c in code]
    assert counts == list(range(1, len(code) + 1)), "executed top to bottom in one fresh kernel"
    assert not any("execution" in c.metadata for c in code), "timestamps: re-run `labkit execute`"
    assert path.stat().st_size <= 2 * 1024 * 1024, "notebooks stay under 2 MB"


def test_no_errors_or_stderr_in_outputs(notebook):
    _, nb = notebook
    for out in outputs(nb):
        assert out.output_type != "error", out.get("evalue")
        assert not (out.output_type == "stream" and out.name == "stderr"), out.text


def test_no_cell_lets_an_error_pass(notebook):
    """A wrong reference answer or a failing claim must fail nbval and CI, so no cell carries
    the tag or comment with which nbval, nbclient and Run All accept an error (only student
    copies tag their feedback cells ``raises-exception``: tests/test_student.py)."""
    _, nb = notebook
    for cell in nb.cells:
        tags = set(cell.metadata.get("tags", []))
        assert not tags & {"raises-exception", "nbval-raises-exception"}, cell.source[:80]
        assert "NBVAL_RAISES_EXCEPTION" not in cell.source, cell.source[:80]


def test_every_claim_cites_a_source(notebook):
    _, nb = notebook
    claims = [t for t in texts(nb) if t.startswith(("✔ ", "✘ ")) and "Exercise" not in t[:12]]
    assert claims, "every chapter checks its claims"
    for claim in claims:
        assert "\n    sources: " in claim, f"claim without sources: {claim.splitlines()[0]}"


def test_claim_and_exercise_counts(notebook):
    path, nb = notebook
    passed = [t for t in texts(nb) if t.startswith("✔ ") and not t.startswith("✔ Exercise")]
    assert len(passed) >= MIN_CHECKS.get(path.stem, 1)
    graded = [t for t in texts(nb) if re.match(r"✔ Exercise \S+ .*: (\S+)/\1 points", t)]
    wanted = MIN_EXERCISES_BY_CHAPTER.get(path.stem, MIN_EXERCISES)
    assert len(graded) >= wanted, f"at least {wanted} exercises, each solved for full marks"


def test_solution_regions_are_well_formed(notebook):
    _, nb = notebook
    regions = 0
    for cell in nb.cells:
        lines = [line.strip() for line in cell.source.splitlines()]
        begins = [i for i, line in enumerate(lines) if line == "### BEGIN SOLUTION"]
        ends = [i for i, line in enumerate(lines) if line == "### END SOLUTION"]
        assert len(begins) == len(ends), "BEGIN/END SOLUTION markers come in pairs"
        assert all(b < e for b, e in zip(begins, ends, strict=True))
        if begins:
            assert cell.cell_type == "code"
        regions += len(begins)
    assert regions >= MIN_EXERCISES


def test_answer_and_feedback_cells_carry_nbgrader_metadata(notebook):
    """Every exercise has its answer cell(s) and one locked feedback cell with its points, as
    nbgrader expects (stamped by labkit.classroom.student.nbgrader_metadata)."""
    import copy

    from labkit.classroom.student import grade_id, nbgrader_metadata
    from labkit.exercises import chapter_specs

    path, nb = notebook
    stamped = copy.deepcopy(nb)
    ids = nbgrader_metadata(stamped)
    found = [c.metadata.get("nbgrader") for c in nb.cells]
    assert [c.metadata.get("nbgrader") for c in stamped.cells] == found, \
        "run nbgrader_metadata on the notebook (labkit execute keeps it)"
    specs = chapter_specs(int(path.stem[:2]))
    assert ids == [s.id for s in specs]
    grade_ids = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells if "nbgrader" in c.metadata]
    for s in specs:
        assert grade_ids.count(grade_id("feedback", s.id)) == 1 and grade_id("answer", s.id) in grade_ids
    points = {c.metadata["nbgrader"]["grade_id"]: c.metadata["nbgrader"].get("points") for c in nb.cells
              if c.metadata.get("nbgrader", {}).get("grade")}
    assert points == {grade_id("feedback", s.id): s.points for s in specs}


def test_sources_are_cited_so_a_reader_can_follow_them(notebook):
    """No citation names an internal file number ("seed 004"): documents are cited through
    the references page, by a key that exists there."""
    from labkit.sources import _references

    path, nb = notebook
    text = "\n".join(c.source for c in nb.cells) + "\n".join(t for t in texts(nb))
    assert not re.search(r"\bseed (document )?0\d\d\b", text, re.I), "cite documents by their reference key"
    page = (path.parent / "references.md").read_text(encoding="utf-8")
    for key in set(re.findall(r"ref:([a-z0-9-]+)|references\.md#([a-z0-9-]+)", text)):
        key = next(k for k in key if k)
        assert key in _references() and f'id="{key}"' in page, f"unknown reference {key!r}"


def test_every_cited_issue_has_its_topic(notebook):
    """An issue prints with the one topic labkit/data/issues.tsv gives it: a chapter that
    cites a new issue adds its line there."""
    from labkit.sources import _issue_topics

    _, nb = notebook
    cited = {int(n) for c in nb.cells if c.cell_type == "code" for n in re.findall(r'"#(\d+)"', c.source)}
    missing = sorted(cited - _issue_topics().keys())
    assert not missing, f"add these issues to labkit/data/issues.tsv: {missing}"


def _notebook_stats():
    """scripts/notebook_stats.py, the maintainers' measure of notebook code (not a package module)."""
    path = Path(__file__).parents[1] / "scripts" / "notebook_stats.py"
    spec = importlib.util.spec_from_file_location("notebook_stats", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_notebook_code_is_lesson_not_bookkeeping():
    stats = _notebook_stats()
    per_notebook = {path.stem: stats.stats(path) for path in NOTEBOOKS}
    long = {name: helpers for name, (*_, helpers) in per_notebook.items() if helpers}
    assert not long, f"helpers over {stats.MAX_HELPER_LINES} lines belong in labkit: {long}"
    code = sum(code for _, code, _, _, _ in per_notebook.values())
    inside = sum(inside for _, _, inside, _, _ in per_notebook.values())
    assert inside / code <= stats.MAX_CHECK_SHARE, (
        f"{inside / code:.1%} of the code (tokens) sits inside check(...) calls: move the "
        "measurement and the prediction into named variables above the check")


def test_code_cells_are_at_most_100_characters_wide():
    """JupyterLab cuts longer lines off and the site scrolls them sideways: ruff's E501 at 100
    on every code cell (pyproject.toml's per-file ignores lift it for course/, hence the
    override)."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "E501",
                          "--line-length", "100", "--config", "lint.per-file-ignores={}",
                          "--output-format", "concise", *map(str, NOTEBOOKS)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, f"code lines over 100 characters:\n{run.stdout[-4000:]}{run.stderr}"
