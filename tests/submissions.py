"""A chapter as the grader's tests hand it in: its exercises, and only the lessons they need.

The grader's tests (test_grading, test_gradescope, test_grading_isolation, ...) submit
chapter 00 dozens of times, correct, blank, broken and forged, to test the grader, not the
chapter.  They submit :func:`lean` copies: the first code cell (which starts labkit), the
exercises' cells, and of the lesson cells only those that define a name a kept cell reads
(found with :mod:`symtable`, back to front).  Chapter 00 then runs in a
third of its time, and the tests with cell or hold time limits do not depend on how fast the
machine renders its lessons.  The chapters as they are, every lesson cell run, are graded in
test_grading_course.py (and executed by nbval).
"""

from __future__ import annotations

import atexit
import functools
import shutil
import symtable
import tempfile
from pathlib import Path

import nbformat

from labkit.classroom.notebooks import course_notebooks

MARKS = ("labkit.given(", "labkit.exercise(", "### BEGIN SOLUTION")


def _names(source: str) -> tuple[set[str], set[str]] | None:
    """(names the cell binds, names it reads) at its top level, the globals its functions
    and comprehensions read included; None if the cell is not plain Python."""
    try:
        table = symtable.symtable(source, "<cell>", "exec")
    except SyntaxError:
        return None
    bound = {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported()}
    read: set[str] = set()
    scopes = [table]
    while scopes:
        scope = scopes.pop()
        read |= {s.get_name() for s in scope.get_symbols()
                 if s.is_referenced() and (scope is table or s.is_global())}
        scopes += scope.get_children()
    return bound, read


def lean(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``notebook`` without the lesson cells its exercises do not need: it keeps
    the markdown, the first code cell, every exercise's cells (those holding one of
    :data:`MARKS`) and, back to front, each code cell that binds a name a kept cell reads."""
    cells = notebook.cells
    code = [i for i, c in enumerate(cells) if c.cell_type == "code"]
    keep = {i for i, c in enumerate(cells) if c.cell_type != "code"} | {code[0]}
    needed: set[str] = set()
    for i in reversed(code[1:]):
        names = _names(cells[i].source)
        exercise = any(m in cells[i].source for m in MARKS)
        if exercise or names is None or names[0] & needed:   # not Python (a magic): kept
            keep.add(i)
            needed |= names[1] if names else set()
    copy = nbformat.from_dict(dict(notebook))
    copy.cells = [nbformat.from_dict(dict(c)) for i, c in enumerate(cells) if i in keep]
    return copy


@functools.cache
def lean_chapter(number: int) -> Path:
    """A lean copy of course chapter ``number``, under its own name, in a scratch folder
    (removed at exit)."""
    source = next(p for p in course_notebooks() if p.stem.startswith(f"{number:02d}_"))
    folder = Path(tempfile.mkdtemp(prefix="labkit-lean-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    nbformat.write(lean(nbformat.read(source, as_version=4)), folder / source.name)
    return folder / source.name
