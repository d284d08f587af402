"""``labkit student``: student copies with solutions replaced by stubs, nothing leaked,
nbconvert's preprocessors for the clearing, nbgrader metadata on answer and feedback cells."""

from __future__ import annotations

import ast
import hashlib
import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from trees import tree_hashes

from labkit.classroom import student
from labkit.classroom.notebooks import course_notebooks
from labkit.exercises import answers as kinds
from labkit.exercises import chapter_specs, core

COURSE = course_notebooks()
START = next(p for p in COURSE if p.stem.startswith("00_"))
MARKER = re.compile(r"^\s*#+\s*(BEGIN|END) (SOLUTION|HIDDEN TESTS)\s*$")
NBGRADER_ID = re.compile(r"^[a-zA-Z0-9_\-]*$")  # nbgrader 0.9's schema (nbgraderformat/v3.json)


def sha(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


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


@pytest.fixture(autouse=True, scope="module")
def toy_exercises():
    """Exercises 97.1 and 97.2, registered for the synthetic notebooks below."""
    core.checker("97.1", "Multiply", points=2, answers={"secret_value": kinds.NUMBER})(lambda ex: None)
    core.checker("97.2", "Doubling", points=1, answers={"whole_cell_answer": kinds.array()})(lambda ex: None)
    yield
    del core._REGISTRY["97.1"], core._REGISTRY["97.2"]


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
        assert set(cell.metadata) <= {"tags", "editable", "deletable", "slideshow", "nbgrader"}
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
    # one stub per solution region: a statement raising labkit.exercises.NotAnswered that names
    # the exercise whose feedback cell follows it
    reference = [s.id for s in chapter_specs(int(source.stem[:2]))]
    stubs = []
    for index, cell in enumerate(copy.cells):
        if cell.cell_type == "code" and student.STUB in cell.source:
            feedback = next(c for c in copy.cells[index:] if student.exercise_calls(c.source))
            number = student.exercise_calls(feedback.source)[0].id
            raised = [node.exc for node in ast.walk(ast.parse(cell.source)) if isinstance(node, ast.Raise)]
            assert [(ast.unparse(r.func), r.args[0].value.split(" · ")[0]) for r in raised] \
                == [("labkit.exercises.NotAnswered", f"Exercise {number}")], cell.source
            stubs.append(number)
    regions = sum(line.strip() == "### BEGIN SOLUTION"
                  for c in original.cells for line in c.source.splitlines())
    assert len(stubs) == regions
    assert sorted(set(stubs)) == sorted(reference), "every exercise has an answer stub"
    # Run All goes past a feedback cell (tagged raises-exception), never past an answer stub
    tagged = [c for c in copy.cells if student.FEEDBACK_TAG in c.metadata.get("tags", [])]
    feedback = [c for c in copy.cells if c.cell_type == "code" and student.exercise_calls(c.source)
                and student.STUB not in c.source]
    assert tagged == feedback and len(feedback) == len(reference)
    assert not any(student.FEEDBACK_TAG in c.metadata.get("tags", []) for c in original.cells)


def role(cell) -> tuple[str, str] | None:
    """("answer" | "feedback", exercise id) of a cell, from its nbgrader grade id."""
    return student.parse_grade_id(cell.metadata.get("nbgrader", {}).get("grade_id", ""))


def test_in_a_student_copy_run_all_goes_past_wrong_answers(copies, tmp_path):
    """Chapter 00's student copy with wrong answers to 0.1 and 0.2, run in a fresh kernel by
    nbclient (which, like JupyterLab's Run All, goes on past a cell tagged raises-exception):
    both show their feedback and fail, and the run goes on to 0.3, answered as the reference
    answers it, which passes.  (The reference chapter stops at a wrong answer:
    tests/test_exercises.py.)"""
    from labkit.classroom.notebooks import execute

    path, _ = copies[START.stem]
    nb = nbformat.read(path, as_version=4)
    reference = nbformat.read(START, as_version=4)
    answers = {role(c)[1]: c for c in nb.cells if role(c) and role(c)[0] == "answer"}
    assert sorted(answers) == [s.id for s in chapter_specs(0)] == ["0.1", "0.2", "0.3"]
    answers["0.1"].source = "tip_height = 3.0                 # wrong: not where the bob is"
    answers["0.2"].source = "long_period = 1.0                # wrong: not the measured period"
    answers["0.3"].source = next(c.source for c in reference.cells if role(c) == ("answer", "0.3"))
    nbformat.write(nb, tmp_path / START.name)
    run = execute(tmp_path / START.name, env={"LABKIT_PICTURES": "off"})   # feedback, not pictures
    assert run.error is None, run.error
    code_cells = [c for c in run.notebook.cells if c.cell_type == "code" and c.source.strip()]
    assert all(c.execution_count is not None for c in code_cells), "every cell ran"
    feedback = {role(c)[1]: c for c in run.notebook.cells if role(c) and role(c)[0] == "feedback"}
    for number in ("0.1", "0.2"):
        errors = [o for o in feedback[number].outputs if o.output_type == "error"]
        assert [(e.ename, e.evalue.split(" · ")[0]) for e in errors] \
            == [("ExerciseFailed", f"✘ Exercise {number}")], feedback[number].outputs
    shown = [o.data["text/plain"] for o in feedback["0.3"].outputs if o.output_type == "display_data"]
    assert len(shown) == 1 and shown[0].startswith("✔ Exercise 0.3 "), feedback["0.3"].outputs
    assert not any(o.output_type == "error" for o in feedback["0.3"].outputs)


def test_cli_student_copy_runs_to_its_first_exercise_and_stops_there(tmp_path, cli):
    source = tmp_path / "course" / START.name   # a private copy: nobody else rewrites it meanwhile
    source.parent.mkdir()
    shutil.copyfile(START, source)
    before = sha(source)
    status, out = cli("student", source, tmp_path / "class", "--check")
    assert status == 0, out
    assert sha(source) == before
    assert f"✔ {tmp_path / 'class' / START.name} ← {source}" in out
    first = chapter_specs(0)[0].id
    assert f"✔ runs up to its first exercise and stops there with NotAnswered: Exercise {first}" \
        in out
    assert "1 student notebooks written to" in out


def test_student_refuses_to_write_over_or_inside_its_sources(tmp_path, cli):
    src = tmp_path / "course"
    src.mkdir()
    nb = notebook(code("### BEGIN SOLUTION\nanswer = 42 * 1000\n### END SOLUTION"),
                  code('labkit.exercise("97.1")'))
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
    assert "raise labkit.exercises.NotAnswered" in (out / "99_tiny.ipynb").read_text()
    assert tree_hashes(src) == before


def test_regions_hidden_tests_outputs_metadata_and_attachments():
    answer = code("setup = 1\n### BEGIN SOLUTION\nsecret_value = 12345 * 678\n### END SOLUTION\n"
                  "print('done')",
                  outputs=[nbformat.v4.new_output("stream", text="8369910\n")], execution_count=3,
                  metadata={"nbgrader": {"solution": True, "grade_id": "secret_value = 12345 * 678"},
                            "tags": ["keep-me"], "collapsed": False})
    function = code("def double(q):\n    ### BEGIN SOLUTION\n    return q * 2  # twice\n    ### END SOLUTION")
    feedback = code('labkit.exercise("97.1")\n'
                    '### BEGIN HIDDEN TESTS\n'
                    'assert double(21) == 42, "hidden check of double(21)"\n'
                    '### END HIDDEN TESTS')
    prose = markdown("Why?\n### BEGIN SOLUTION\nBecause the multiplication table says so.\n### END SOLUTION",
                     attachments={"a.png": {"image/png": "c2VjcmV0"}})
    tagged = code("whole_cell_answer = [1, 2, 3, 4]", metadata={"tags": ["solution"]})
    hidden = code("assert secret_value == 8369910, 'hidden cell'", metadata={"tags": ["hidden-tests"]})
    shown = code('labkit.exercise("97.2")')
    nb = notebook(answer, function, feedback, prose, tagged, hidden, shown)
    nb.metadata["widgets"] = {"state": {"value": "secret_value = 12345 * 678"}}
    original = json.dumps(nb)
    made = student.student_notebook(nb)
    assert json.dumps(nb) == original, "the input notebook is not modified"
    cells = made.notebook.cells
    assert len(cells) == 6, "the hidden-tests cell is dropped"
    assert cells[0].source.startswith(f"setup = 1\n{student.STUB}\"Exercise 97.1 · Multiply: ")
    assert cells[0].source.endswith("(set secret_value)\")\nprint('done')")
    assert cells[0].outputs == [] and cells[0].execution_count is None
    assert dict(cells[0].metadata) == {"tags": ["keep-me"], "nbgrader": {
        "grade": False, "solution": True, "locked": False, "grade_id": "answer-97_1", "schema_version": 3}}
    assert cells[1].metadata["nbgrader"]["grade_id"] == "answer-97_1-2", "nbgrader refuses duplicate ids"
    assert cells[2].metadata["nbgrader"] == {"grade": True, "solution": False, "locked": True,
                                            "grade_id": "feedback-97_1", "points": 2.0, "schema_version": 3}
    assert [i for i, c in enumerate(cells) if student.FEEDBACK_TAG in c.metadata.get("tags", [])] \
        == [2, 5], "the feedback cells, and only they, let Run All go on past a wrong answer"
    assert cells[1].source.startswith(f'def double(q):\n    {student.STUB}"Exercise 97.1 · ')
    compile(cells[1].source, "stub", "exec")
    assert "HIDDEN" not in cells[2].source and "hidden check" not in cells[2].source
    assert cells[2].source.rstrip() == 'labkit.exercise("97.1")'
    assert cells[3].source == "Why?\nYOUR ANSWER HERE" and "attachments" not in cells[3]
    assert cells[4].source.startswith(f"{student.STUB}\"Exercise 97.2 · Doubling")
    assert "tags" not in cells[4].metadata and cells[4].metadata["nbgrader"]["grade_id"] == "answer-97_2"
    ids = [c.metadata["nbgrader"]["grade_id"] for c in cells if "nbgrader" in c.metadata]
    assert all(NBGRADER_ID.match(i) for i in ids) and len(set(ids)) == len(ids), ids
    assert set(made.notebook.metadata) == {"kernelspec"}
    assert (made.stubs, made.hidden, made.outputs_cleared, made.attachments_removed) == (4, 2, 1, 1)
    assert made.exercises == ["97.1", "97.1", "97.2", "97.2"]
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
                  code('labkit.exercise("97.2")'))
    made = student.student_notebook(nb)
    assert made.public_lines == ['"<freejoint/>",']
    assert "0.123" not in json.dumps(made.notebook)


# -- nbgrader: grade ids, partial credit, the kernel -------------------------------------------------
@pytest.mark.parametrize("kind, number, part, made", [
    ("answer", "0.1", 1, "answer-0_1"), ("feedback", "10.12", 1, "feedback-10_12"),
    ("answer", "3.2", 2, "answer-3_2-2")])
def test_grade_ids_are_valid_for_nbgrader_and_read_back(kind, number, part, made):
    assert student.grade_id(kind, number, part) == made and NBGRADER_ID.match(made)
    assert student.parse_grade_id(made) == (kind, number)
    assert student.parse_grade_id(made.replace("_", ".", 1)) == (kind, number), "old ids are still read"


@pytest.mark.parametrize("value", ["", "answer", "answer-3", "cell-1234abcd", "answers-3_2", "feedback-3_2x",
                                   "answer-3.2.1", " answer-3_2"])
def test_other_grade_ids_are_not_exercises(value):
    assert student.parse_grade_id(value) is None


@pytest.mark.parametrize("kind, number, part", [("hint", "1.1", 1), ("answer", "1", 1), ("answer", "a.b", 1),
                                                ("answer", "1.1", 0)])
def test_grade_id_refuses_what_it_cannot_make(kind, number, part):
    with pytest.raises(ValueError):
        student.grade_id(kind, number, part)


def test_labkit_grade_finds_answer_cells_by_new_and_old_grade_ids():
    from labkit.classroom import grading

    def answer(source, ident):
        return code(source, metadata={"nbgrader": {"grade_id": ident}})

    nb = notebook(answer("tip_height = 1", "answer-0_1"), answer("long_period = 2", "answer-0.2"),
                  answer("damping = 0.5", "answer-0_3-2"), code("x = 1"))
    collect, notes = grading.prepare(nb, chapter_specs(0))
    sources = [c.source for c in nb.cells]
    assert [s.split("collect(")[-1] for s in sources[1:6:2]] == ['"0.1")', '"0.2")', '"0.3")']
    assert collect == [1, 3, 5, 7]
    assert sum("is missing; its answers were read right after its answer cell" in n for n in notes) == 3


@pytest.fixture
def graded_exercise():
    """Exercise 97.3: 3 points, `speed` close to 2 and positive, and a hidden requirement
    that fails; its checker also writes to stderr three ways."""
    import os
    import sys
    import warnings

    def check(ex):
        ex.close("speed", 2.0, tol=1e-9)
        ex.require(ex.has("speed") and ex.value("speed") > 0, "speed is positive")
        if ex.hidden:
            ex.require(False, "a hidden test", hidden=True)
        warnings.warn("a warning inside the checker", RuntimeWarning, stacklevel=1)
        print("printed to sys.stderr", file=sys.stderr)
        os.write(2, b"written to file descriptor 2\n")

    core.checker("97.3", "Partial credit", points=3, answers={"speed": kinds.NUMBER})(check)
    yield
    del core._REGISTRY["97.3"]


def feedback_cell(speed):
    """Run `result = exercise("97.3")` as a notebook cell would (its globals hold the answer)."""
    from labkit.exercises import exercise

    namespace = {"exercise": exercise, "speed": speed}
    exec('result = exercise("97.3")', namespace)
    return namespace["result"]


@pytest.mark.parametrize("mode, speed, score", [
    ("autograde", 1.0, 1.0), ("autograde", 2.0, 2.0),   # the hidden requirement counts, as in labkit grade
    ("validate", 1.0, 1.5), ("validate", 2.0, 3.0)])    # what the learner's feedback cell checks
def test_under_nbgrader_the_feedback_cell_returns_its_score_and_writes_nothing_to_stderr(
        graded_exercise, monkeypatch, capfd, mode, speed, score):
    monkeypatch.setenv("NBGRADER_EXECUTION", mode)
    assert feedback_cell(speed) == score
    out, err = capfd.readouterr()
    assert err == "", "nbgrader scores a grade cell with any stderr output 0"
    assert out.startswith(f"{'✔' if score == 3 else '✘'} Exercise 97.3 · Partial credit: {score:g}/3 points")
    for written in ("a warning inside the checker", "printed to sys.stderr", "written to file descriptor 2"):
        assert written in out


@pytest.mark.filterwarnings("ignore:a warning inside the checker")
def test_elsewhere_the_feedback_cell_raises_and_returns_nothing_as_before(graded_exercise, monkeypatch,
                                                                          capfd):
    from labkit.exercises import ExerciseFailed

    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    assert feedback_cell(2.0) is None
    with pytest.raises(ExerciseFailed, match=re.escape("1.5/3 points")):
        feedback_cell(1.0)
    monkeypatch.setenv("NBGRADER_EXECUTION", "something-else")
    with pytest.raises(ExerciseFailed):
        feedback_cell(1.0)
    assert "written to file descriptor 2" in capfd.readouterr().err, "outside nbgrader stderr is untouched"


def test_a_missing_kernel_is_named_with_the_command_that_registers_it():
    assert student.kernel_problem([notebook()]) is None, "python3 is registered in every environment"
    nb = notebook()
    nb.metadata["kernelspec"].update(name="no-such-kernel-here", display_name="No Such Kernel")
    problem = student.kernel_problem([nb, notebook()])
    assert "no-such-kernel-here" in problem and "No such kernel" in problem
    assert "-m ipykernel install --sys-prefix --name no-such-kernel-here --display-name 'No Such Kernel'" \
        in problem
