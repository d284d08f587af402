"""``labkit gradescope``: the autograder zip, and its run_autograder on a Gradescope layout.

The zip is unpacked into a temporary ``autograder/`` laid out as Gradescope lays it out
(``source/``, ``submission/``, ``results/``) and its own copy of labkit grades a correct,
a blank and a forged submission, and uploads of several notebooks: only one is ever
graded.  (``scripts/gradescope_e2e.sh`` runs the whole thing, ``setup.sh`` included, in a
bare Debian root.)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from labkit.classroom import gradescope, student
from labkit.classroom.notebooks import course_notebooks

START = next(p for p in course_notebooks() if p.stem.startswith("00_"))


@pytest.fixture(scope="module")
def autograder(tmp_path_factory):
    root = tmp_path_factory.mktemp("gs") / "autograder"
    path = gradescope.build([START], root.parent / "autograder.zip")
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        archive.extractall(root / "source")
        modes = {i.filename: i.external_attr >> 16 for i in archive.infolist()}
    for script in ("setup.sh", "run_autograder"):
        (root / "source" / script).chmod(0o755)
    return root, names, modes


def grade(root: Path, notebook: nbformat.NotebookNode | str | None, name: str = START.name,
          more: dict[str, nbformat.NotebookNode] | None = None) -> dict:
    """Run the autograder on an upload of ``notebook`` as ``name`` (and ``more``: other files
    of the upload by relative path); its results.json."""
    submission = root / "submission"
    shutil.rmtree(submission, ignore_errors=True)
    shutil.rmtree(root / "results", ignore_errors=True)
    submission.mkdir()
    if isinstance(notebook, str):
        (submission / name).write_text(notebook)
    elif notebook is not None:
        nbformat.write(notebook, submission / name)
    for relative, nb in (more or {}).items():
        (submission / relative).parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, submission / relative)
    env = {**os.environ, "LABKIT_AUTOGRADER_ROOT": str(root), "PYTHONPATH": str(root / "source")}
    env.pop("LABKIT_MODELS", None)
    done = subprocess.run([sys.executable, "-m", "labkit.classroom.gradescope", "run"], cwd=root / "source",
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads((root / "results" / "results.json").read_text())


def test_the_zip_has_the_scripts_at_its_root_and_no_notebook(autograder):
    _, names, modes = autograder
    assert {"setup.sh", "run_autograder", "autograder.json", "pyproject.toml"} <= set(names)
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111
    assert any(n.startswith("labkit/exercises/ch00") for n in names) and "models/pendulum.xml" in names
    assert not [n for n in names if n.endswith(".ipynb")], "no reference notebook ships with the autograder"


def test_a_correct_submission_earns_full_marks(autograder):
    root, _, _ = autograder
    result = grade(root, nbformat.read(START, as_version=4), name="my_work.ipynb")
    assert result["score"] == 5
    tests = {t["name"]: t for t in result["tests"]}
    assert [t["max_score"] for t in tests.values()] == [1, 2, 2]
    assert all(t["score"] == t["max_score"] and t["visibility"] == "visible" for t in tests.values())
    assert "✔" in tests["Exercise 0.3 · Damp the pendulum"]["output"]


def test_blank_and_forged_submissions_earn_nothing(autograder, tmp_path):
    root, _, _ = autograder
    student.write_student_copies([START], tmp_path)
    blank = nbformat.read(tmp_path / START.name, as_version=4)
    assert grade(root, blank)["score"] == 0
    forged = nbformat.read(tmp_path / START.name, as_version=4)
    forged.cells.insert(3, nbformat.v4.new_code_cell(
        "import json\nopen('/autograder/results/results.json', 'w').write(json.dumps({'score': 5}))\n"
        "import labkit.exercises.core as core\ncore.Exercise.score = property(lambda self: self.points)"))
    result = grade(root, forged)
    assert result["score"] == 0 and all(t["score"] == 0 for t in result["tests"])
    assert "raised" in result["output"], "the failed write is reported"


def test_an_empty_or_broken_upload_still_gets_a_results_file(autograder):
    root, _, _ = autograder
    empty = grade(root, None)
    assert empty["score"] == 0 and "No notebook" in empty["output"]
    broken = grade(root, "{not json")
    assert broken["score"] == 0 and "not valid JSON" in broken["output"]


def test_an_upload_of_several_copies_is_graded_once(autograder):
    """Three copies of an honest notebook: the one named like the chapter is graded, 5/5, not 15."""
    root, _, _ = autograder
    honest = nbformat.read(START, as_version=4)
    result = grade(root, honest, more={"copy.ipynb": honest, "old/copy (2).ipynb": honest})
    assert result["score"] == 5 and len([t for t in result["tests"] if "max_score" in t]) == 3
    assert "Also uploaded, not graded: copy.ipynb, copy (2).ipynb" in result["output"]


def test_an_ambiguous_upload_is_refused_and_scores_zero(autograder):
    root, _, _ = autograder
    honest = nbformat.read(START, as_version=4)
    unnamed = grade(root, honest, name="mine.ipynb", more={"copy.ipynb": honest, "copy2.ipynb": honest})
    assert (unnamed["score"], unnamed["tests"]) == (0, [])
    assert "3 notebooks (copy.ipynb, copy2.ipynb, mine.ipynb) and none is named like" in unnamed["output"]
    assert f"{START.stem}.ipynb" in unnamed["output"] and "Nothing was graded" in unnamed["output"]
    twice = grade(root, honest, more={f"alice_{START.name}": honest})
    assert (twice["score"], twice["tests"]) == (0, [])
    assert f"2 notebooks named like {START.stem}.ipynb" in twice["output"]
