"""nbgrader, for real: nbgrader's own command line (``generate_assignment``, ``validate``,
``autograde``) on chapter 00, in a temporary course directory with its own
``nbgrader_config.py`` and database.

The chapter goes into ``source/`` as committed; three submissions are autograded: the
reference (full marks), the ``labkit student`` copy left blank (0) and a partly right one,
which must get, exercise by exercise, the points ``labkit grade`` gives the same notebook in
its sandbox.  The feedback cells earn partial credit in nbgrader's convention: under
``NBGRADER_EXECUTION`` ``labkit.exercise`` returns the score as the cell's result.
"""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from submissions import lean_chapter

from labkit.classroom import grading
from labkit.classroom.notebooks import course_notebooks
from labkit.classroom.student import grade_id, parse_grade_id, write_student_copies
from labkit.exercises import chapter_specs

nbgrader_api = pytest.importorskip(
    "nbgrader.api", reason="nbgrader comes with the test extra: pip install -e '.[test]' (./run.sh test)")

CHAPTER = lean_chapter(0)   # chapter 00 without the lessons its exercises do not need (tests/submissions.py)
ASSIGNMENT = "ch00"
POINTS = {s.id: s.points for s in chapter_specs(0)}
# the partly right submission: exercise 0.1 as the reference answers it, 0.2 and 0.3 wrong
PARTLY_RIGHT = {
    "0.2": "long_period = 2 * np.pi * np.sqrt(L / g)   # the point-mass formula\n",
    "0.3": "damping = 0.0\n",
}
STUDENTS = ("reference", "blank", "partly_right")


def nbgrader(course: Path, *args: str) -> subprocess.Popen[str]:
    """Start ``nbgrader ARGS`` (this environment's) in ``course``; :func:`finish` waits for it."""
    bin_dir = str(Path(sys.executable).parent)
    return subprocess.Popen([sys.executable, "-m", "nbgrader", *args], cwd=course, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ | {
                                # nbgrader's gradebook runs the `alembic` command: it must be on PATH
                                "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
                                # no user nbgrader configuration: only the course's own
                                "JUPYTER_CONFIG_DIR": str(course / ".jupyter")})


def finish(run: subprocess.Popen[str], timeout: float = 600) -> str:
    """Wait for a :func:`nbgrader` command and return its stdout (its log goes to stderr);
    fail the test when it exits non-zero or logs an error."""
    out, err = run.communicate(timeout=timeout)
    command = " ".join(run.args[2:])
    assert run.returncode == 0, f"{command} exited {run.returncode}:\n{(out + err)[-4000:]}"
    assert "ERROR" not in err, f"{command} logged an error:\n{err[-4000:]}"
    return out


def answer_cell(nb, number: str):
    return next(c for c in nb.cells
                if parse_grade_id(c.metadata.get("nbgrader", {}).get("grade_id", "")) == ("answer", number))


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> dict[str, Any]:
    """A course directory with the chapter as source and three submissions, autograded;
    the output of ``nbgrader validate`` on two of them; and ``labkit grade``'s grading of
    the partly right one."""
    from jupyter_client.kernelspec import KernelSpecManager

    kernel = nbformat.read(CHAPTER, as_version=4).metadata.kernelspec.name
    assert kernel in KernelSpecManager().find_kernel_specs(), (
        f"the chapters' kernel {kernel!r} is not registered in this environment: run ./run.sh test, or "
        f"{sys.executable} -m ipykernel install --sys-prefix --name {kernel}")
    root = tmp_path_factory.mktemp("nbgrader-course")
    (root / ".jupyter").mkdir()
    # a cell of the chapter can take longer than nbgrader's default of 30 s on a busy machine
    (root / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        f"c.CourseDirectory.root = {str(root)!r}\n"
        "c.CourseDirectory.course_id = 'mujoco-by-experiment'\n"
        f"c.CourseDirectory.db_url = {'sqlite:///' + str(root / 'gradebook.db')!r}\n"
        "c.Execute.timeout = 300\n")
    source = root / "source" / ASSIGNMENT
    source.mkdir(parents=True)
    shutil.copyfile(CHAPTER, source / CHAPTER.name)
    submitted = {s: root / "submitted" / s / ASSIGNMENT / CHAPTER.name for s in STUDENTS}
    for path in submitted.values():
        path.parent.mkdir(parents=True)
    shutil.copyfile(CHAPTER, submitted["reference"])
    write_student_copies([CHAPTER], submitted["blank"].parent)
    partly = nbformat.read(CHAPTER, as_version=4)
    for number, answer in PARTLY_RIGHT.items():
        answer_cell(partly, number).source = answer
    nbformat.write(partly, submitted["partly_right"])

    # validate needs neither the release nor the database, and labkit grade needs no nbgrader:
    # they run beside generate_assignment (each command spends seconds importing nbgrader)
    running = [nbgrader(root, "validate", str(submitted["reference"]), str(submitted["partly_right"])),
               nbgrader(root, "generate_assignment", ASSIGNMENT)]
    try:
        (labkit,) = grading.grade([submitted["partly_right"]], root / "labkit-grades", jobs=1,
                                  use_sandbox=True)
        validated, _ = finish(running[0]), finish(running[1])
        assert (root / "release" / ASSIGNMENT / CHAPTER.name).is_file()
        finish(nbgrader(root, "autograde", ASSIGNMENT))
    finally:
        for run in running:
            if run.poll() is None:
                run.kill()
                run.communicate()
    return {"root": root, "validate": validated, "labkit": labkit}


def nbgrader_scores(course: dict[str, Any], student: str) -> dict[str, float]:
    """Points per exercise that nbgrader's gradebook holds for ``student``'s chapter."""
    with nbgrader_api.Gradebook(f"sqlite:///{course['root'] / 'gradebook.db'}") as gradebook:
        notebook = gradebook.find_submission_notebook(CHAPTER.stem, ASSIGNMENT, student)
        scores = {}
        for grade in notebook.grades:
            kind, number = parse_grade_id(grade.name)
            assert kind == "feedback" and grade.max_score == POINTS[number]
            scores[number] = grade.score
    return scores


def test_committed_grade_ids_are_valid_for_nbgrader():
    """Every grade id of every chapter passes nbgrader's own metadata validator (schema
    pattern, no duplicates), and names its exercise."""
    from nbgrader.nbgraderformat import MetadataValidator

    for path in course_notebooks():
        nb = nbformat.read(path, as_version=4)
        MetadataValidator().validate_nb(nb)
        ids = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells if "nbgrader" in c.metadata]
        specs = chapter_specs(int(path.stem[:2]))
        assert sorted(ids) == sorted([grade_id(k, s.id) for s in specs for k in ("answer", "feedback")]), path


def test_autograde_gives_the_reference_full_marks_and_the_blank_copy_nothing(course):
    assert nbgrader_scores(course, "reference") == POINTS
    assert nbgrader_scores(course, "blank") == dict.fromkeys(POINTS, 0.0)


def test_autograde_gives_the_partly_right_copy_the_points_labkit_grade_gives(course):
    """nbgrader's points equal labkit grade's, exercise by exercise (labkit grade: in its
    sandbox, answers scored in a separate process), and so do the totals of nbgrader's
    gradebook (what ``nbgrader export`` writes)."""
    labkit = course["labkit"]
    assert labkit.status == "ok" and labkit.sandboxed, labkit.problems
    expected = {e.id: e.score for e in labkit.exercises}
    assert 0 < labkit.total < labkit.points, "the submission is partly right"
    assert nbgrader_scores(course, "partly_right") == expected
    with nbgrader_api.Gradebook(f"sqlite:///{course['root'] / 'gradebook.db'}") as gradebook:
        totals = {s: gradebook.find_submission(ASSIGNMENT, s).score for s in STUDENTS}
    assert totals == {"reference": sum(POINTS.values()), "blank": 0.0, "partly_right": labkit.total}


def test_autograded_feedback_cells_show_the_feedback_and_the_score_as_their_result(course):
    path = course["root"] / "autograded" / "partly_right" / ASSIGNMENT / CHAPTER.name
    graded = nbformat.read(path, as_version=4)
    cells = {c.metadata["nbgrader"]["grade_id"]: c for c in graded.cells
             if c.metadata.get("nbgrader", {}).get("grade")}
    assert sorted(cells) == [grade_id("feedback", n) for n in sorted(POINTS)]
    scores = {e.id: e.score for e in course["labkit"].exercises}
    for number, cell in ((parse_grade_id(g)[1], c) for g, c in cells.items()):
        # nbgrader: an error or any stderr output scores 0, an execute_result that many points
        assert [o.output_type for o in cell.outputs] == ["display_data", "execute_result"], cell.outputs
        score = scores[number]
        assert cell.outputs[0].data["text/plain"].startswith(
            f"{'✔' if score == POINTS[number] else '✘'} Exercise {number} · ")
        assert f": {score:g}/{POINTS[number]:g} points" in cell.outputs[0].data["text/plain"]
        assert cell.outputs[1].data["text/plain"] == str(score)


def test_validate_passes_the_reference_and_names_what_the_partly_right_copy_misses(course):
    out = course["validate"]
    reference, partly = out.split("Success! Your notebook passes all the tests.\n")
    assert "failed" not in reference, out
    assert partly.lstrip().startswith("VALIDATION FAILED ON 2 CELL(S)!"), out
    failed = [block.split("The error was:")[0] for block in partly.split("The following cell failed:")[1:]]
    assert ['labkit.exercise("0.2")' in failed[0], 'labkit.exercise("0.3")' in failed[1]] == [True, True], out


def test_in_a_kernel_nothing_the_feedback_cell_writes_reaches_stderr(tmp_path, monkeypatch):
    """In a real kernel (ipykernel forwards file descriptor 2 as a stderr stream), a checker
    that warns and writes to stderr leaves the feedback cell without stderr output under
    nbgrader, and nbgrader's own ``determine_grade`` gives it its partial credit (1 of 2);
    elsewhere the cell behaves as before (it raises, and nbgrader would give 0)."""
    from nbclient import NotebookClient
    from nbgrader.utils import determine_grade

    setup = nbformat.v4.new_code_cell(
        "import os, sys, warnings\n"
        "import labkit\n"
        "from labkit.exercises import answers, core\n"
        "def check(ex):\n"
        "    ex.close('speed', 2.0, tol=1e-9)\n"
        "    ex.require(True, 'the answer is read')\n"
        "    warnings.warn('a warning inside the checker', RuntimeWarning, stacklevel=1)\n"
        "    print('printed to sys.stderr', file=sys.stderr)\n"
        "    os.write(2, b'written to file descriptor 2\\n')\n"
        "core.checker('97.4', 'In a kernel', points=2, answers={'speed': answers.NUMBER})(check)\n"
        "speed = 1.0")
    feedback = nbformat.v4.new_code_cell('labkit.exercise("97.4")', metadata={"nbgrader": {
        "grade": True, "solution": False, "locked": True, "grade_id": grade_id("feedback", "97.4"),
        "points": 2.0, "schema_version": 3}})
    cells = {}
    for mode in ("autograde", ""):
        nb = nbformat.v4.new_notebook(cells=copy.deepcopy([setup, feedback]))
        monkeypatch.setenv("NBGRADER_EXECUTION", mode)  # the kernel inherits it, as from nbgrader
        NotebookClient(nb, kernel_name="python3", allow_errors=True, timeout=120,
                       resources={"metadata": {"path": str(tmp_path)}}).execute()
        cells[mode] = nb.cells[1]
    shown = cells["autograde"].outputs
    assert [(o.output_type, o.get("name", "")) for o in shown] == [
        ("display_data", ""), ("stream", "stdout"), ("execute_result", "")], shown
    assert shown[2].data["text/plain"] == "1.0"
    assert all(text in shown[1].text for text in ("a warning inside", "sys.stderr", "file descriptor 2"))
    assert determine_grade(cells["autograde"]) == (1.0, 2.0)
    kinds = [(o.output_type, o.get("name", "")) for o in cells[""].outputs]
    assert ("error", "") in kinds and ("stream", "stderr") in kinds, "elsewhere: it raises, stderr as before"
    assert determine_grade(cells[""]) == (0, 2.0)
