"""``labkit practice``: a self-learner's blank copies of the chapters, made once and never
overwritten, reset and reveal with a backup first, and Run All going on past blank and wrong
answers while the reference chapter still stops at a wrong one.

Everything runs on a scratch course (chapters 00 and 09, the pages they link to) and scratch
practice folders; the repository's course/ and practice/ are never touched.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from labkit.classroom import practice, student
from labkit.classroom.notebooks import course_dir, course_notebooks, execute
from labkit.errors import NotAnswered
from labkit.exercises import chapter_specs, spec

COURSE = course_notebooks()
START = next(p for p in COURSE if p.stem.startswith("00_"))
CAPSTONE = next(p for p in COURSE if p.stem.startswith("09_"))  # a lesson cell uses an answer
MARKER = re.compile(r"^\s*#+\s*(BEGIN|END) (SOLUTION|HIDDEN TESTS)\s*$")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def regions(nb) -> dict[int, list[str]]:
    """Cell index → the lines inside its solution regions (the reference's answers)."""
    found = {}
    for index, cell in enumerate(nb.cells):
        inside, lines = False, []
        for line in cell.source.splitlines():
            if MARKER.match(line):
                inside = MARKER.match(line).group(1) == "BEGIN"
            elif inside:
                lines.append(line)
        if lines:
            found[index] = lines
    return found


def secrets(nb) -> list[str]:
    """Solution lines (whitespace removed, ≥ 8 characters) the notebook shows nowhere else."""
    inside = [re.sub(r"\s+", "", line) for lines in regions(nb).values() for line in lines]
    outside = []
    for index, cell in enumerate(nb.cells):
        region = set(regions(nb).get(index, []))
        outside += [re.sub(r"\s+", "", line) for line in cell.source.splitlines()
                    if line not in region and not MARKER.match(line)]
    visible = "\n".join(outside)
    return [s for s in inside if len(s) >= 8 and s not in visible]


def strings(node):
    """Every string of a notebook's JSON (sources, outputs, metadata, keys)."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield key
            yield from strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from strings(value)


def reference_answer(reference, number: str) -> int:
    """The index of the reference cell that holds exercise ``number``'s solution."""
    marked = nbformat.from_dict(json.loads(json.dumps(reference)))
    student.nbgrader_metadata(marked)
    return next(i for i, c in enumerate(marked.cells) if role(c) == ("answer", number))


def role(cell) -> tuple[str, str] | None:
    return student.parse_grade_id(cell.metadata.get("nbgrader", {}).get("grade_id", ""))


def cell_of(nb, kind: str, number: str, part: int = 0):
    return [c for c in nb.cells if role(c) == (kind, number)][part]


def tags(cell) -> list[str]:
    return cell.metadata.get("tags", [])


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A scratch course folder: chapters 00 and 09 and the pages the chapters link to."""
    folder = tmp_path_factory.mktemp("repository") / "course"
    folder.mkdir()
    for source in (START, CAPSTONE):
        shutil.copyfile(source, folder / source.name)
    for page in practice.LINKED_PAGES:
        shutil.copyfile(course_dir() / page, folder / page)
    return folder


@pytest.fixture(scope="module")
def pristine(course):
    """The practice folder as the first ``./run.sh lab`` leaves it, and init's report."""
    folder = course.parent / "practice"
    return folder, practice.init(folder, course)


@pytest.fixture
def folder(pristine, course, tmp_path):
    """A private copy of the pristine practice folder, its links remade by a second init."""
    mine = course.parent / f"practice-{tmp_path.name}"
    shutil.copytree(pristine[0], mine, ignore=lambda d, names: [
        n for n in names if (Path(d) / n).is_symlink()])
    practice.init(mine, course)
    return mine


def test_init_writes_blank_copies_with_no_solution_and_links_the_references(pristine, course):
    folder, report = pristine
    assert sorted(report.added) == [START.name, CAPSTONE.name] and not report.kept
    assert "2 blank chapter(s)" in str(report) and "reference" in str(report)
    for source in (START, CAPSTONE):
        reference = nbformat.read(source, as_version=4)
        path = folder / source.name
        text = re.sub(r"\s+", "", "\n".join(strings(json.loads(path.read_text()))))
        hidden = secrets(reference)
        assert hidden, "the chapter has solutions"
        assert not [s for s in hidden if s in text], "no solution line survives"
        assert "BEGIN SOLUTION" not in path.read_text()
        copy = nbformat.read(path, as_version=4)
        ids = [s.id for s in chapter_specs(int(source.name[:2]))]
        answers = [c for c in copy.cells if role(c) and role(c)[0] == "answer"]
        feedback = [c for c in copy.cells if role(c) and role(c)[0] == "feedback"]
        assert [role(c)[1] for c in feedback] == ids
        for cell in answers:          # a stub, which Run All goes past
            raised = [ast.unparse(n.exc.func) for n in ast.walk(ast.parse(cell.source))
                      if isinstance(n, ast.Raise)]
            assert raised == ["labkit.exercises.NotAnswered"], cell.source
        assert all(practice.RUN_ON in tags(c) for c in answers + feedback)
        assert all(c.outputs == [] for c in copy.cells if c.cell_type == "code")
        assert not any(practice.RUN_ON in tags(c) for c in reference.cells), \
            "the reference stops at a wrong answer"
    capstone = nbformat.read(folder / CAPSTONE.name, as_version=4)
    uses = [c for c in capstone.cells if c.cell_type == "code" and not role(c)
            and re.search(r"\brun\(answer\b", c.source)]
    assert uses and all(practice.RUN_ON in tags(c) for c in uses), "a cell using 9.4's answer"
    lessons = [c for c in capstone.cells if c.cell_type == "code" and not role(c)]
    assert len([c for c in lessons if practice.RUN_ON in tags(c)]) == len(uses)
    # the reference chapters are one click away, and the chapters' own links work
    assert (folder / practice.REFERENCE_LINK).samefile(course)
    assert not Path(os.readlink(folder / practice.REFERENCE_LINK)).is_absolute()
    for path in folder.glob("*.ipynb"):
        for cell in nbformat.read(path, as_version=4).cells:
            for link in re.findall(r"\]\(([^)#\s]+)", cell.source if cell.cell_type == "markdown"
                                   else ""):
                if link.startswith(("http:", "https:", "mailto:")):
                    continue
                chapter = re.fullmatch(r"\d\d_\w+\.ipynb", link)   # a practice copy, as this
                where = course_dir() if chapter else folder        # scratch course has 2 only
                assert (where / link).exists(), f"{path.name} links to {link}"


def test_lesson_cells_that_use_a_blank_answer_let_run_all_go_on_too():
    """Cells reading a name only an answer binds, directly, in a function or through another
    such cell, are tagged; a name a lesson cell binds again is no longer the answer's."""
    code = nbformat.v4.new_code_cell
    nb = nbformat.v4.new_notebook(cells=[
        code("x = 1"),
        code("### BEGIN SOLUTION\ntip_height = 0.25 + x\n### END SOLUTION"),
        code('labkit.exercise("0.1")'),
        code("z = tip_height + 1"),                      # 3: uses the answer
        code("w = [z for _ in range(2)]"),               # 4: uses what 3 binds
        code("def f():\n    return w"),                  # 5: inside a function
        code("print(x)"),                                # 6: a lesson's own name
        code("tip_height = 5.0"),                        # 7: bound again by a lesson
        code("print(tip_height)")])                      # 8: fine now
    made = practice.practice_notebook(nb)
    tagged = [i for i, c in enumerate(made.cells) if practice.RUN_ON in tags(c)]
    assert tagged == [1, 2, 3, 4, 5]


def test_a_second_init_overwrites_nothing_and_says_once_that_a_reference_changed(tmp_path):
    course = tmp_path / "course"
    course.mkdir()
    shutil.copyfile(START, course / START.name)
    folder = tmp_path / "practice"
    practice.init(folder, course)
    mine = folder / START.name
    nb = nbformat.read(mine, as_version=4)
    cell_of(nb, "answer", "0.1").source = "tip_height = 0.25   # my try"
    nb.cells[0].source += "\n\nMy own note."
    nbformat.write(nb, mine)
    before = mine.read_bytes()
    again = practice.init(folder, course)
    assert (again.added, again.kept, again.notes) == ([], [START.name], [])
    assert mine.read_bytes() == before
    # a chapter that is new in course/ is added, the others stay as they are
    shutil.copyfile(CAPSTONE, course / CAPSTONE.name)
    assert practice.init(folder, course).added == [CAPSTONE.name]
    assert mine.read_bytes() == before
    # the reference changes: the copy is kept, and the terminal says so, once
    reference = nbformat.read(course / START.name, as_version=4)
    reference.cells[0].source += "\n\nA new paragraph."
    nbformat.write(reference, course / START.name)
    told = practice.init(folder, course)
    assert len(told.notes) == 1 and told.notes[0].startswith(START.name)
    assert "left as it is" in told.notes[0] and "labkit practice reset 00" in told.notes[0]
    assert mine.read_bytes() == before
    assert practice.init(folder, course).notes == [], "said once"
    assert mine.read_bytes() == before


def test_reset_an_exercise_blanks_only_its_answer_and_a_chapter_all_after_a_backup(folder, course):
    path = folder / START.name
    blank = nbformat.read(path, as_version=4)
    nb = nbformat.read(path, as_version=4)
    cell_of(nb, "answer", "0.1").source = "tip_height = 3.0"
    cell_of(nb, "answer", "0.2").source = "long_period = 1.0"
    nb.cells[0].source += "\n\nMy own note."
    nbformat.write(nb, path)
    edited = path.read_bytes()
    said = practice.reset("0.1", folder, course)
    backups = sorted((folder / practice.BACKUP).glob("*.ipynb"))
    assert len(backups) == 1 and backups[0].read_bytes() == edited
    assert backups[0].name.startswith(START.stem + "-") and backups[0].name in said
    now = nbformat.read(path, as_version=4)
    assert cell_of(now, "answer", "0.1").source == cell_of(blank, "answer", "0.1").source
    assert cell_of(now, "answer", "0.2").source == "long_period = 1.0", "other answers are kept"
    assert now.cells[0].source.endswith("My own note."), "and so is everything else"
    assert len(now.cells) == len(blank.cells)
    assert "already blank" in practice.reset("0.1", folder, course)
    assert len(list((folder / practice.BACKUP).glob("*.ipynb"))) == 1, "nothing to save"
    before = path.read_bytes()
    said = practice.reset("00", folder, course)
    backups = sorted((folder / practice.BACKUP).glob("*.ipynb"), key=lambda p: p.stat().st_mtime_ns)
    assert len(backups) == 2 and backups[-1].read_bytes() == before and backups[-1].name in said
    assert [c.source for c in nbformat.read(path, as_version=4).cells] \
        == [c.source for c in blank.cells]
    assert practice.init(folder, course).notes == [], "the new copy is of the current reference"


def test_reveal_puts_the_marked_reference_solution_under_the_kept_answer(folder, course):
    path = folder / START.name
    nb = nbformat.read(path, as_version=4)
    cell_of(nb, "answer", "0.3").source = "damping = 1.0   # my guess"
    nbformat.write(nb, path)
    said = practice.reveal("0.3", folder, course)
    assert "marked Revealed" in said
    now = nbformat.read(path, as_version=4)
    answer = next(i for i, c in enumerate(now.cells) if role(c) == ("answer", "0.3"))
    shown = now.cells[answer + 1]
    assert now.cells[answer].source == "damping = 1.0   # my guess", "the learner's answer stays"
    assert role(now.cells[answer + 2]) == ("feedback", "0.3"), "it still checks the answer"
    assert shown.cell_type == "markdown" and practice.REVEALED_TAG in tags(shown)
    assert shown.source.startswith("**Revealed: the reference solution of Exercise 0.3")
    reference = nbformat.read(START, as_version=4)
    region = regions(reference)[reference_answer(reference, "0.3")]
    assert region and all(line in shown.source for line in region), "the solution, every line"
    before = path.read_bytes()
    assert "already revealed" in practice.reveal("0.3", folder, course)
    assert path.read_bytes() == before
    practice.reset("0.3", folder, course)
    after = nbformat.read(path, as_version=4)
    assert not any(practice.REVEALED_TAG in tags(c) for c in after.cells)
    assert student.STUB in cell_of(after, "answer", "0.3").source


def test_errors_say_what_to_do(cli, course, tmp_path, monkeypatch):
    monkeypatch.setenv("LABKIT_COURSE", str(course))
    monkeypatch.setenv(practice.PRACTICE_ENV, str(tmp_path / "practice"))
    status, out = cli("practice", "reset", "0.1")
    assert status == 2 and "no practice copies yet" in out
    assert "./run.sh lab" in out and "labkit practice init" in out
    assert cli("practice", "init")[0] == 0
    status, out = cli("practice", "reveal", "0.9")
    titles = [f"{s.id} · {s.title}" for s in chapter_specs(0)]
    assert status == 2 and "no exercise 0.9" in out and all(t in out for t in titles)
    status, out = cli("practice", "reset", "13")
    assert status == 2 and "no chapter 13" in out and START.stem in out and CAPSTONE.stem in out
    status, out = cli("practice", "reveal", "00")
    assert status == 2 and "one exercise, such as 0.1" in out
    status, out = cli("practice", "reset", "five")
    assert status == 2 and "neither a chapter" in out
    broken = tmp_path / "practice" / START.name
    broken.write_text("{ not a notebook")
    status, out = cli("practice", "reset", "0.1")
    assert status == 2 and "cannot be read" in out and "labkit practice reset 00" in out
    assert broken.read_text() == "{ not a notebook", "left as it is"
    status, out = cli("practice", "reset", "00")
    assert status == 0, out
    (saved,) = (tmp_path / "practice" / practice.BACKUP).glob("*.ipynb")
    assert saved.read_text() == "{ not a notebook" and saved.name in out
    assert nbformat.read(broken, as_version=4).cells


def test_labkit_practice_lab_serves_the_practice_folder_and_opens_chapter_00(pristine):
    folder, _ = pristine
    command = practice.lab_command(folder, ["--port=9000"])
    assert f"--ServerApp.root_dir={folder.resolve()}" in command
    assert f"--LabApp.default_url=/lab/tree/{START.name}" in command
    assert command[-1] == "--port=9000", "the learner's arguments come last and win"


def test_a_blank_answer_shows_one_line_and_no_traceback():
    stub = NotAnswered("Exercise 0.1 · Read where the bob is now: replace this line with your "
                       "answer (set tip_height)")
    assert isinstance(stub, NotImplementedError)
    assert stub._render_traceback_() == [f"NotAnswered: {stub}"]


def exercise_section(reference):
    """A chapter of the reference's first code cell and every cell from its first exercise's
    question on: the real exercise cells, without the lessons' run time."""
    first = next(c for c in reference.cells if c.cell_type == "code")
    question = next(i for i, c in enumerate(reference.cells)
                    if c.cell_type == "markdown" and re.search(r"\*\*Exercise \d+\.1\b", c.source))
    return nbformat.v4.new_notebook(metadata=reference.metadata,
                                    cells=[first, *reference.cells[question:]])


def test_in_a_practice_copy_run_all_goes_past_blank_and_wrong_answers(tmp_path, monkeypatch):
    """Chapter 00's exercises in a practice copy, 0.1 wrong and 0.2 and 0.3 blank, run in a
    fresh kernel by nbclient (which, like JupyterLab's Run All, goes on past a cell tagged
    raises-exception) without LABKIT_MODELS: every cell runs, each exercise shows its feedback
    box once and a one-line error, each blank answer one line, and no traceback anywhere.
    (The whole chapter runs so in JupyterLab: tests/test_browser_practice.py.)"""
    monkeypatch.delenv("LABKIT_MODELS", raising=False)   # models load from any folder
    nb = practice.practice_notebook(exercise_section(nbformat.read(START, as_version=4)))
    cell_of(nb, "answer", "0.1").source = "tip_height = 3.0   # wrong: not where the bob is"
    nbformat.write(nb, tmp_path / START.name)
    run = execute(tmp_path / START.name)
    assert run.error is None, run.error
    code = [c for c in run.notebook.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code), "every cell ran"
    for number in ("0.1", "0.2", "0.3"):
        feedback = cell_of(run.notebook, "feedback", number)
        boxes = [o.data["text/plain"] for o in feedback.outputs if o.output_type == "display_data"]
        (error,) = [o for o in feedback.outputs if o.output_type == "error"]
        assert len(boxes) == 1 and boxes[0].startswith(f"✘ Exercise {number} · ")
        assert [ANSI.sub("", line) for line in error.traceback] == [
            f"Exercise {number} is not solved yet (0/{spec(number).points:g} points): the "
            "feedback above says what to change"]
        answer = cell_of(run.notebook, "answer", number)
        shown = [o for o in answer.outputs if o.output_type == "error"]
        if number == "0.1":
            assert shown == []
            continue
        assert [(e.ename, e.traceback) for e in shown] \
            == [("NotAnswered", [f"NotAnswered: {shown[0].evalue}"])]
        assert shown[0].evalue.startswith(f"Exercise {number} · ")
    texts = [line for c in code for o in c.outputs for line in o.get("traceback", [])]
    assert not any("Traceback" in t or "File " in t for t in texts), texts


def test_the_reference_still_stops_at_a_wrong_answer_where_the_practice_copy_goes_on(tmp_path):
    """The reference chapter's own cells around exercise 0.1, with a wrong answer: run as they
    stand, the feedback cell fails and the run stops (nbval, CI); as a practice copy the run
    goes on, and check_student_copy confirms that of the blank practice copy."""
    reference = nbformat.read(START, as_version=4)
    first = next(c for c in reference.cells if c.cell_type == "code")
    answer = reference.cells[reference_answer(reference, "0.1")]
    feedback = next(c for c in reference.cells if student.exercise_calls(c.source)
                    and student.exercise_calls(c.source)[0].id == "0.1")
    mini = nbformat.v4.new_notebook(metadata=reference.metadata)
    mini.cells = [first, answer, feedback, nbformat.v4.new_code_cell("after = 1")]
    blank = practice.practice_notebook(mini)
    nbformat.write(blank, tmp_path / "practice.ipynb")
    ok, what = student.check_student_copy(tmp_path / "practice.ipynb")
    assert ok and what.startswith("runs to the end; its first exercise shows NotAnswered: "
                                  "Exercise 0.1"), what
    mini.cells[1] = nbformat.v4.new_code_cell("tip_height = 3.0   # wrong")
    nbformat.write(mini, tmp_path / "reference.ipynb")
    stopped = execute(tmp_path / "reference.ipynb")
    assert stopped.error and stopped.error.startswith("ExerciseFailed: ✘ Exercise 0.1 ")
    assert stopped.notebook.cells[-1].execution_count is None, "the reference run stops there"
