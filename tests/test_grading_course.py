"""``labkit grade`` on the course itself: every chapter's reference solutions, graded in the
sandbox and scored outside it, earn full marks, and the grader names them as the published
solutions.  (Its own module, so that this run and test_grading's class run can go to two
test workers.)"""

from __future__ import annotations

import shutil

import pytest
from trees import tree_hashes

from labkit.classroom import grading
from labkit.classroom.notebooks import course_notebooks
from labkit.exercises import chapter_specs

COURSE = course_notebooks()


@pytest.fixture(scope="module")
def course_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("grading") / "solutions"
    folder.mkdir()
    for path in COURSE:
        shutil.copyfile(path, folder / path.name)
    before = tree_hashes(folder)
    results = grading.grade([folder], folder.parent / "out", timeout=300, cell_timeout=120, jobs=2)
    assert tree_hashes(folder) == before
    return {g.notebook: g for g in results}


@pytest.mark.parametrize("source", COURSE, ids=[p.stem for p in COURSE])
def test_the_solutions_earn_full_marks_on_every_exercise(course_run, source):
    graded = course_run[source.stem]
    # the reference is the published solution: every exercise with two lines to tell it by is named
    named = [n for n, keys in grading.published_solutions(int(source.stem[:2])).items() if len(keys) >= 2]
    assert graded.copied == named and len(named) >= len(graded.exercises) - 2, graded.copied
    assert graded.status == "ok" and len(graded.problems) == len(named), graded.problems
    assert [e.id for e in graded.exercises] == [s.id for s in chapter_specs(int(source.stem[:2]))]
    for e in graded.exercises:
        assert (e.status, e.score) == ("passed", e.points), (e.id, e.messages)
    assert graded.total == graded.points > 0


