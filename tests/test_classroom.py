"""The classroom side: ``labkit student`` (student copies) and ``labkit grade`` (the grader).

Student copies of every course notebook are checked statically (no solution text, one
stub per solution region naming its exercise, nothing else left that could carry an
answer); chapter 00's copy also runs in a fresh kernel and must stop at its first exercise.
Two grader runs carry the slow part: the course run grades every course notebook (the
solutions earn full marks on every exercise); the adversarial run grades, in one run
through the command line, submissions of chapter 00 that are correct, partly correct (and
edit a feedback cell to grant themselves points), not JSON, raising, looping, calling
sys.exit, killing their kernel, and deleting files while flooding their output.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import csv
import hashlib
import io
import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from labkit import grading, student
from labkit.notebooks import course_notebooks

COURSE = course_notebooks()
START = next(p for p in COURSE if p.stem.startswith("00_"))
MARKER = re.compile(r"^\s*#+\s*(BEGIN|END) (SOLUTION|HIDDEN TESTS)\s*$")


def sha(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def tree_hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): sha(p) for p in sorted(folder.rglob("*")) if p.is_file()}


def cli(*argv: str) -> tuple[int, str]:
    """Run a command through a parser built with the modules' add_commands, as labkit's CLI will."""
    parser = argparse.ArgumentParser(prog="labkit")
    commands = parser.add_subparsers(dest="command", required=True)
    student.add_commands(commands)
    grading.add_commands(commands)
    args = parser.parse_args([str(a) for a in argv])
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        status = args.run(args)
    return status, buffer.getvalue()


def strings(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield key
            yield from strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from strings(value)


def secret_lines(nb) -> list[str]:
    """Solution and hidden-test lines (whitespace removed, ≥ 8 characters) that the notebook
    does not also show outside its regions: a student copy may contain none of them."""
    inside, outside = [], []
    for cell in nb.cells:
        region = False
        for line in cell.source.splitlines():
            if MARKER.match(line):
                region = MARKER.match(line).group(1) == "BEGIN"
            elif region:
                inside.append(re.sub(r"\s+", "", line))
            else:
                outside.append(re.sub(r"\s+", "", line))
    visible = "\n".join(outside)
    return [s for s in inside if len(s) >= 8 and s not in visible]


def code(source, **kw):
    return nbformat.v4.new_code_cell(source, **kw)


def markdown(source, **kw):
    return nbformat.v4.new_markdown_cell(source, **kw)


def notebook(*cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = list(cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


# -- student copies of the course ------------------------------------------------------------------
@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    out = tmp_path_factory.mktemp("student")
    before = {p: sha(p) for p in COURSE}
    written = student.write_student_copies(COURSE, out)
    assert {p: sha(p) for p in COURSE} == before, "the sources must never be modified"
    return {made.source.stem: (path, made) for path, made in written}


@pytest.mark.parametrize("source", COURSE, ids=[p.stem for p in COURSE])
def test_student_copy_has_no_solution_text_and_a_stub_per_exercise(copies, source):
    path, _ = copies[source.stem]
    original = nbformat.read(source, as_version=4)
    copy = nbformat.read(path, as_version=4)
    text = [re.sub(r"\s+", "", s) for s in strings(json.loads(path.read_text()))]
    secrets = secret_lines(original)
    assert secrets, "the chapter has solutions"
    leaked = [s for s in secrets if any(s in t for t in text)]
    assert not leaked, f"solution text in the student copy: {leaked[:3]}"
    assert "BEGIN SOLUTION" not in path.read_text()
    assert set(copy.metadata) <= {"kernelspec", "language_info"}
    for cell in copy.cells:
        assert "attachments" not in cell
        assert set(cell.metadata) <= {"tags", "editable", "deletable", "slideshow"}
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
    # one stub per solution region: a statement raising NotImplementedError that names the
    # exercise whose feedback cell follows it
    reference = [e.id for e in grading.reference_exercises(source)]
    stubs = []
    for index, cell in enumerate(copy.cells):
        if "raise NotImplementedError(" in cell.source:
            feedback = next(c for c in copy.cells[index:] if student.exercise_calls(c.source))
            number = student.exercise_calls(feedback.source)[0].id
            raised = [node.exc for node in ast.walk(ast.parse(cell.source)) if isinstance(node, ast.Raise)]
            assert [(r.func.id, r.args[0].value.split(" · ")[0]) for r in raised] \
                == [("NotImplementedError", f"Exercise {number}")], cell.source
            stubs.append(number)
    regions = sum(line.strip() == "### BEGIN SOLUTION"
                  for c in original.cells for line in c.source.splitlines())
    assert len(stubs) == regions
    assert sorted(set(stubs)) == sorted(reference), "every exercise has an answer stub"


def test_cli_student_copy_runs_to_its_first_exercise_and_stops_there(tmp_path):
    source = tmp_path / "course" / START.name   # a private copy: nobody else rewrites it meanwhile
    source.parent.mkdir()
    shutil.copyfile(START, source)
    before = sha(source)
    status, out = cli("student", source, tmp_path / "class", "--check")
    assert status == 0, out
    assert sha(source) == before
    assert f"✔ {tmp_path / 'class' / START.name} ← {source}" in out
    first = grading.reference_exercises(START)[0].id
    assert f"✔ runs up to its first exercise and stops there with NotImplementedError: Exercise {first}" \
        in out
    assert "1 student notebooks written to" in out


def test_student_refuses_to_write_over_or_inside_its_sources(tmp_path):
    src = tmp_path / "course"
    src.mkdir()
    nb = notebook(code("### BEGIN SOLUTION\nanswer = 42 * 1000\n### END SOLUTION"),
                  code('with labkit.exercise("9.1", "t", points=1) as ex:\n    ex.equal("answer", 42000)'))
    nbformat.write(nb, src / "99_tiny.ipynb")
    before = tree_hashes(src)
    for out in (src, src / "student"):
        status, text = cli("student", src, out)
        assert status == 2 and "refusing to write student copies into" in text
        status, text = cli("student", src / "99_tiny.ipynb", out)
        assert status == 2 and "refusing" in text
    assert tree_hashes(src) == before
    out = tmp_path / "class"
    assert cli("student", src, out)[0] == 0
    (out / "99_tiny.ipynb").write_text("changed")
    status, text = cli("student", src, out)
    assert status == 2 and "refusing to overwrite" in text and "--force" in text
    assert (out / "99_tiny.ipynb").read_text() == "changed"
    assert cli("student", src, out, "--force")[0] == 0
    assert "raise NotImplementedError" in (out / "99_tiny.ipynb").read_text()
    assert tree_hashes(src) == before


def test_regions_hidden_tests_outputs_metadata_and_attachments():
    answer = code("setup = 1\n### BEGIN SOLUTION\nsecret_value = 12345 * 678\n### END SOLUTION\n"
                  "print('done')",
                  outputs=[nbformat.v4.new_output("stream", text="8369910\n")], execution_count=3,
                  metadata={"nbgrader": {"solution": True, "grade_id": "secret_value = 12345 * 678"},
                            "tags": ["keep-me"], "collapsed": False})
    function = code("def double(q):\n    ### BEGIN SOLUTION\n    return q * 2  # twice\n    ### END SOLUTION")
    feedback = code('with labkit.exercise("3.1", "Multiply", points=2) as ex:\n'
                    '    ex.equal("secret_value", 8369910)\n'
                    '    ### BEGIN HIDDEN TESTS\n'
                    '    ex.require(double(21) == 42, "hidden check of double(21)")\n'
                    '    ### END HIDDEN TESTS')
    prose = markdown("Why?\n### BEGIN SOLUTION\nBecause the multiplication table says so.\n### END SOLUTION",
                     attachments={"a.png": {"image/png": "c2VjcmV0"}})
    tagged = code("whole_cell_answer = [1, 2, 3, 4]", metadata={"tags": ["solution"]})
    hidden = code("assert secret_value == 8369910, 'hidden cell'", metadata={"tags": ["hidden-tests"]})
    shown = code('with labkit.exercise("3.2", "Doubling", points=1) as ex:\n'
                 '    ex.require(double(2) == 4, "d")')
    nb = notebook(answer, function, feedback, prose, tagged, hidden, shown)
    nb.metadata["widgets"] = {"state": {"value": "secret_value = 12345 * 678"}}
    original = json.dumps(nb)
    made = student.student_notebook(nb)
    assert json.dumps(nb) == original, "the input notebook is not modified"
    cells = made.notebook.cells
    assert len(cells) == 6, "the hidden-tests cell is dropped"
    assert cells[0].source.startswith("setup = 1\nraise NotImplementedError(\"Exercise 3.1 · Multiply: ")
    assert cells[0].source.endswith("(set secret_value)\")\nprint('done')")
    assert cells[0].outputs == [] and cells[0].execution_count is None
    assert dict(cells[0].metadata) == {"tags": ["keep-me"]}
    assert cells[1].source.startswith('def double(q):\n    raise NotImplementedError("Exercise 3.1 · ')
    compile(cells[1].source, "stub", "exec")
    assert "HIDDEN" not in cells[2].source and "hidden check" not in cells[2].source
    assert cells[2].source.rstrip().endswith('ex.equal("secret_value", 8369910)')
    assert cells[3].source == "Why?\nYOUR ANSWER HERE" and "attachments" not in cells[3]
    assert cells[4].source.startswith("raise NotImplementedError(\"Exercise 3.2 · Doubling")
    assert "tags" not in cells[4].metadata
    assert set(made.notebook.metadata) == {"kernelspec"}
    assert (made.stubs, made.hidden, made.outputs_cleared, made.attachments_removed) == (4, 2, 1, 1)
    assert made.exercises == ["3.1", "3.1", "3.2", "3.2"]
    text = json.dumps(made.notebook)
    for leaked in ("12345", "8369910\\n", "q * 2", "multiplication table", "c2VjcmV0", "[1, 2, 3, 4]",
                   "hidden cell"):
        assert leaked not in text


@pytest.mark.parametrize("source, why", [
    ("### BEGIN SOLUTION\nx = 1", "is never closed"),
    ("x = 1\n### END SOLUTION", "without a matching BEGIN"),
    ("### BEGIN SOLUTION\n### BEGIN HIDDEN TESTS\n### END HIDDEN TESTS\n### END SOLUTION", "cannot nest"),
    ("x = 1  ### BEGIN SOLUTION\ny = 2\n### END SOLUTION", "not a marker line"),
    ('xml = """\n### BEGIN SOLUTION\n<body/>\n### END SOLUTION\n"""', "inside a string"),
    ("if True:\n### BEGIN SOLUTION\n    x = 1\n### END SOLUTION", "not valid Python"),
])
def test_malformed_markers_are_refused(source, why):
    with pytest.raises(student.StudentCopyError, match=why):
        student.student_notebook(notebook(code(source)))


def test_a_surviving_solution_line_refuses_the_copy_and_writes_nothing(tmp_path):
    nb = notebook(code("### BEGIN SOLUTION\nanswer = 6 * 7 * 1000\n### END SOLUTION",
                       metadata={"tags": ["answer = 6 * 7 * 1000"]}))
    with pytest.raises(student.SolutionLeak, match="answer=6"):
        student.student_notebook(nb)
    (tmp_path / "src").mkdir()
    nbformat.write(nb, tmp_path / "src" / "leaky.ipynb")
    with pytest.raises(student.SolutionLeak):
        student.write_student_copies([tmp_path / "src" / "leaky.ipynb"], tmp_path / "out")
    assert not (tmp_path / "out" / "leaky.ipynb").exists()


def test_solution_lines_the_notebook_shows_anyway_are_reported_not_refused():
    nb = notebook(markdown('A list such as `["<freejoint/>", ...]` builds the body.'),
                  code('### BEGIN SOLUTION\nparts = [\n    "<freejoint/>",\n'
                       '    \'<geom size="0.123"/>\',\n]\n### END SOLUTION'),
                  code('with labkit.exercise("4.1", "Free", points=1) as ex:\n    ex.require(parts, "f")'))
    made = student.student_notebook(nb)
    assert made.public_lines == ['"<freejoint/>",']
    assert "0.123" not in json.dumps(made.notebook)


# -- who is who, and restoring the reference's cells ------------------------------------------------
def test_submission_names_and_references(tmp_path):
    chapter = START.stem
    for relative in (f"alice/{chapter}.ipynb", f"bob_{chapter}.ipynb", f"carol-{chapter}.ipynb",
                     "dave.ipynb", ".ipynb_checkpoints/x.ipynb"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("{}")
    found = {s.student: s for s in grading.find_submissions([tmp_path])}
    assert set(found) == {"alice", "bob", "carol", "dave"}
    assert all(found[n].reference == START for n in ("alice", "bob", "carol"))
    assert found["dave"].reference is None and "pass --reference" in found["dave"].problem
    with_reference = {s.student for s in grading.find_submissions([tmp_path], reference=START)}
    assert with_reference == {"alice", "bob", "carol", "dave"}
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "dave.ipynb").write_text("{}")
    with pytest.raises(ValueError, match="two submissions"):
        grading.find_submissions([tmp_path], reference=START)


def test_edited_feedback_and_hidden_tests_come_back_from_the_reference():
    reference = notebook(
        code("### BEGIN SOLUTION\nk = 3\n### END SOLUTION", id="answer"),
        code('with labkit.exercise("5.1", "k", points=1) as ex:\n    ex.equal("k", 3)\n'
             '    ### BEGIN HIDDEN TESTS\n    ex.require(k > 0, "k is positive")\n    ### END HIDDEN TESTS',
             id="feedback"),
        code("assert k == 3", metadata={"tags": ["hidden-tests"]}, id="hidden"),
        code('with labkit.exercise("5.2", "j", points=1) as ex:\n    ex.equal("k", 3)', id="second"))
    handed_out = student.student_notebook(reference).notebook
    assert [c.id for c in handed_out.cells] == ["answer", "feedback", "second"]
    submission = json.loads(json.dumps(handed_out), object_hook=nbformat.NotebookNode)
    submission.cells[0].source = "k = 3"
    submission.cells[2].source = ('with labkit.exercise("5.2", "j", points=1) as ex:\n'
                                  '    ex.require(True, "free")')
    notes = grading.restore_reference_cells(submission, reference)
    assert notes == ["the feedback cell of exercise 5.2 was edited; the original was run instead"]
    assert [c.id for c in submission.cells] == ["answer", "feedback", "hidden", "second"]
    assert [c.source for c in submission.cells[1:]] == [c.source for c in reference.cells[1:]]
    assert submission.cells[0].source == "k = 3"


# -- the grader on the course -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def course_run(tmp_path_factory):
    # the solutions are the course notebooks; they are graded as copies (student "solutions")
    # so that the hash check cannot be upset by someone re-executing the course meanwhile
    folder = tmp_path_factory.mktemp("grading") / "solutions"
    folder.mkdir()
    for path in COURSE:
        shutil.copyfile(path, folder / path.name)
    before = tree_hashes(folder)
    results = grading.grade([folder], folder.parent / "out", timeout=300, cell_timeout=120)
    assert tree_hashes(folder) == before
    return {(g.student, g.notebook): g for g in results}


@pytest.mark.parametrize("source", COURSE, ids=[p.stem for p in COURSE])
def test_the_solutions_earn_full_marks_on_every_exercise(course_run, source):
    graded = course_run[("solutions", source.stem)]
    assert graded.reference == str(source)
    assert graded.status == "ok" and graded.problems == [], graded.problems
    assert [e.id for e in graded.exercises] == [e.id for e in grading.reference_exercises(source)]
    for e in graded.exercises:
        assert (e.status, e.score) == ("passed", e.points), (e.id, e.messages)
    assert graded.total == graded.points > 0


# -- the grader against adversarial submissions ---------------------------------------------------------
ANSWERS = {  # student -> {answer cell (0, 1, 2 for exercises 0.1-0.3): new source; None: the stub}
    "correct": {},
    "partial": {1: "long_period = 3.0", 2: None},
    "raises": {0: "tip_height = 1 / 0"},
    "loop": {1: "while True:\n    pass"},
    "exits": {0: "import sys\nsys.exit(3)"},
    "crashes": {1: "import os\nos._exit(7)"},
    "deletes": {0: "import os\nfor name in os.listdir('.'):\n    os.remove(name)\n"
                   "for _ in range(600):\n    print('spam' * 2500)\n"
                   "tip_height = fresh_data.site('tip').xpos[2]"},
}


@pytest.fixture(scope="module")
def adversarial(tmp_path_factory, copies):
    root = tmp_path_factory.mktemp("adversarial")
    subs = root / "submissions"
    cells = copies[START.stem][1].notebook.cells
    stubs = [c.source for c in cells if "raise NotImplementedError(" in c.source]
    for name, edits in ANSWERS.items():
        nb = nbformat.read(START, as_version=4)
        answers = [c for c in nb.cells if "### BEGIN SOLUTION" in c.source]
        for index, source in edits.items():
            answers[index].source = stubs[index] if source is None else source
        if name == "partial":  # also rewrites the feedback cell of 0.2 to grant itself the points
            cell = next(c for c in nb.cells if 'exercise("0.2"' in c.source)
            cell.source = 'with labkit.exercise("0.2", "mine", points=2) as ex:\n    ex.require(True, "free")'
        (subs / name).mkdir(parents=True)
        nbformat.write(nb, subs / name / START.name)
    (subs / "garbled").mkdir()
    (subs / "garbled" / START.name).write_text('{"cells": [ this is not json')
    before = tree_hashes(subs)
    status, out = cli("grade", subs, "--out", root / "out", "--cell-timeout", "5", "--timeout", "60",
                      "--max-output", "2")
    assert tree_hashes(subs) == before, "submissions are byte-identical after grading"
    report = json.loads((root / "out" / "scores.json").read_text())
    return status, out, {s["student"]: s for s in report["submissions"]}, root / "out"


def scores(sub):
    return [sub["exercises"][i]["score"] for i in ("0.1", "0.2", "0.3")]


def problems(sub):
    return "\n".join(sub["problems"])


def test_grade_writes_a_table_a_json_report_and_feedback_per_student(adversarial):
    status, out, report, folder = adversarial
    assert status == 0, out
    assert set(report) == {*ANSWERS, "garbled"}
    with open(folder / "scores.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == ["student", "notebook", "0.1", "0.2", "0.3", "total", "points", "status"]
    table = {r["student"]: r for r in rows}
    assert (table["correct"]["total"], table["correct"]["points"]) == ("5", "5")
    assert table["garbled"]["status"] == "invalid notebook"
    for name in report:
        text = (folder / f"feedback_{name}.md").read_text()
        assert text.startswith(f"# Feedback for {name}\n") and "### " in text
        assert re.search(rf"^[✔✘] {name} +{START.stem} ", out, re.M), f"no report line for {name}"


def test_correct_and_partial_answers_get_their_scores(adversarial):
    _, _, report, _ = adversarial
    assert scores(report["correct"]) == [1, 2, 2] and report["correct"]["problems"] == []
    partial = report["partial"]
    assert scores(partial) == [1, 0, 0] and partial["status"] == "ok"
    assert "`long_period` = 3 s is not right" in partial["exercises"]["0.2"]["messages"][0]
    # the student copy's stub fails with its exercise's own message
    assert any(m.startswith("not answered yet") and "(Exercise 0.3 · Damp the pendulum)" in m
               for m in partial["exercises"]["0.3"]["messages"]), partial["exercises"]["0.3"]


def test_an_edited_feedback_cell_is_replaced_by_the_reference(adversarial):
    _, _, report, _ = adversarial
    assert report["partial"]["exercises"]["0.2"]["score"] == 0
    assert "feedback cell of exercise 0.2 was edited" in problems(report["partial"])


def test_invalid_json_is_reported_and_scores_zero(adversarial):
    _, out, report, _ = adversarial
    garbled = report["garbled"]
    assert garbled["status"] == "invalid notebook" and scores(garbled) == [0, 0, 0]
    assert "not valid JSON" in problems(garbled) and "not valid JSON" in out


def test_a_raising_cell_costs_only_its_exercise(adversarial):
    _, _, report, _ = adversarial
    assert scores(report["raises"]) == [0, 2, 2]
    assert "raised ZeroDivisionError: division by zero" in problems(report["raises"])
    assert any("ZeroDivisionError" in m for m in report["raises"]["exercises"]["0.1"]["messages"])


def test_an_infinite_loop_times_out_and_later_exercises_score_zero(adversarial):
    _, _, report, _ = adversarial
    loop = report["loop"]
    assert loop["status"] == "timed out" and scores(loop) == [1, 0, 0]
    assert "timed out in cell" in problems(loop) and "5 s cell limit" in problems(loop)
    assert [loop["exercises"][i]["status"] for i in ("0.2", "0.3")] == ["timed out", "timed out"]


def test_sys_exit_is_reported_and_grading_goes_on(adversarial):
    _, _, report, _ = adversarial
    assert scores(report["exits"]) == [0, 2, 2] and report["exits"]["status"] == "ok"
    assert "called sys.exit(3)" in problems(report["exits"])


def test_a_killed_kernel_is_reported_and_later_exercises_score_zero(adversarial):
    _, _, report, _ = adversarial
    crash = report["crashes"]
    assert crash["status"] == "kernel died" and scores(crash) == [1, 0, 0]
    assert "the kernel died in cell" in problems(crash) and "exit code 7" in problems(crash)
    assert crash["exercises"]["0.3"]["status"] == "kernel died"


def test_deleting_files_and_flooding_output_are_reported_without_costing_points(adversarial):
    _, _, report, _ = adversarial
    assert scores(report["deletes"]) == [1, 2, 2]
    assert f"deleted files in its working directory: {START.name}" in problems(report["deletes"])
    assert "more than 2 MB of output" in problems(report["deletes"])
