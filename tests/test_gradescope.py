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
from submissions import lean_chapter

from labkit.classroom import gradescope, student
from labkit.exercises import chapter_specs
from labkit.exercises.variants import derive, read_secret

START = lean_chapter(0)   # chapter 00 as the grader's tests hand it in (tests/submissions.py)


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
          more: dict[str, nbformat.NotebookNode] | None = None, email: str | list[str] | None = None) -> dict:
    """Run the autograder on an upload of ``notebook`` as ``name`` (and ``more``: other files
    of the upload by relative path; ``email``: the submitter in submission_metadata.json);
    its results.json."""
    metadata = root / "submission_metadata.json"
    metadata.unlink(missing_ok=True)
    if email is not None:     # as Gradescope writes it (fields trimmed to those used)
        users = [{"email": e, "id": 7 + i, "name": "A Student"} for i, e in enumerate(
            [email] if isinstance(email, str) else email)]
        metadata.write_text(json.dumps({"id": 1, "users": users}))
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


# -- variants: the secret in the zip, the submitter from Gradescope's metadata ---------------------------
ALICE, BOB = "alice@uni.edu", "bob@uni.edu"


@pytest.fixture(scope="module")
def varied(tmp_path_factory):
    root = tmp_path_factory.mktemp("gsv") / "autograder"
    secret = root.parent / "secret"
    secret.write_text("the gradescope test's secret, 0123456789\n")
    roster = root.parent / "roster.csv"
    roster.write_text(f"login\n{ALICE}\n{BOB}\n")
    path = gradescope.build([START], root.parent / "autograder.zip", secret=secret, roster=roster)
    with zipfile.ZipFile(path) as archive:
        archive.extractall(root / "source")
        mode = archive.getinfo(gradescope.SECRET).external_attr >> 16
    (root / "source" / gradescope.SECRET).chmod(mode & 0o777)
    alice = student.with_variant(nbformat.read(START, as_version=4), ALICE, read_secret(secret))
    return root, alice, mode, read_secret(secret)


def test_the_secret_ships_readable_by_root_only_outside_the_sandboxed_package(varied):
    root, _, mode, secret = varied
    assert mode & 0o777 == 0o600 and (root / "source" / gradescope.SECRET).read_bytes().strip() == secret
    assert json.loads((root / "source" / "autograder.json").read_text())["variants"] is True


def test_each_submitter_is_graded_on_their_own_numbers(varied):
    root, alice, _, secret = varied
    assert all(derive(secret, ALICE, s.id, s.params) != derive(secret, BOB, s.id, s.params)
               for s in chapter_specs(0))
    mine = grade(root, alice, email=ALICE)
    assert mine["score"] == 5 and "VARIANT" not in mine["output"]
    copied = grade(root, alice, email=BOB)
    assert copied["score"] < 5 / 2 and copied["output"].count("VARIANT CHANGED") == 3
    published = grade(root, nbformat.read(START, as_version=4), email=ALICE)
    assert published["score"] == 0 and "the copy's numbers are the published numbers" in published["output"]


def test_the_e_mail_address_ignores_case_and_a_group_is_graded_on_its_handout(varied):
    root, alice, _, _ = varied
    shouted = grade(root, alice, email=ALICE.upper())
    assert shouted["score"] == 5 and "VARIANT" not in shouted["output"]
    group = grade(root, alice, email=[BOB, ALICE])          # Bob uploads, Alice's handout
    assert group["score"] == 5 and f"graded on the numbers of {ALICE}" in group["output"]


def test_a_submitter_on_no_roster_line_is_not_graded(varied):
    root, alice, _, _ = varied
    result = grade(root, alice, email="eve@uni.edu")
    assert (result["score"], result["tests"]) == (0, []) and "not on this course's roster" in result["output"]


def test_the_published_solution_code_is_named_in_the_result(varied):
    root, alice, _, _ = varied
    result = grade(root, alice, email=ALICE)
    assert result["output"].count("PUBLISHED SOLUTION") == 2
    names = json.loads((root / "source" / "autograder.json").read_text())["solutions"]["0"]
    assert set(names) == {"0.1", "0.2", "0.3"} and all(len(k) == 64 for v in names.values() for k in v)


def test_without_a_submitter_nothing_is_graded(varied):
    root, alice, _, _ = varied
    result = grade(root, alice)
    assert (result["score"], result["tests"]) == (0, []) and "who submitted" in result["output"]


def test_a_submission_cannot_read_the_secret(varied):
    root, alice, _, secret = varied
    thief = json.loads(json.dumps(alice), object_hook=nbformat.NotebookNode)
    where = root / "source" / gradescope.SECRET
    thief.cells.insert(3, nbformat.v4.new_code_cell(f"print(open({str(where)!r}).read())"))
    result = grade(root, thief, email=ALICE)
    assert secret.decode() not in json.dumps(result) and "raised FileNotFoundError" in result["output"]
