"""Grade submitted notebooks: answers collected in a sandbox, scored by labkit outside it.

``labkit grade SUBMISSIONS... --out DIR`` writes ``DIR/scores.csv``, ``DIR/scores.json``,
``DIR/grades.csv`` (for an LMS gradebook such as Canvas) and ``DIR/feedback_<student>.md``.

**Who is who.** A student is an entry at the top of a folder named on the command line: the
folder ``alice/`` (everything below it, up to :data:`MAX_DEPTH` folders deep, is alice's) or
the file prefix of ``alice_05_solver_parameters.ipynb``.  A file named only like its chapter
directly in the named folder belongs to that folder.  So ``mallory/bob/05_solver_parameters.ipynb`` is
mallory's, never bob's; two notebooks of one chapter for one student are a *conflict*,
reported for that student (neither is graded), and the rest of the class is graded.

**Trust model.** A submission never grades itself.  For each one:

1. *Prepare* (outside the sandbox).  The chapter comes from the file name
   (``05_solver_parameters.ipynb``, ``alice_05_solver_parameters.ipynb``) or, failing
   that, from the exercise ids inside.  Every call ``labkit.exercise("N.M")`` in the
   submission becomes ``labkit.exercises.collect("N.M")``: instead of checking, it hands
   the answer variables over as JSON data.  An exercise whose feedback cell was deleted
   is collected right after its answer cell (nbgrader ``grade_id``), or at the end of
   the notebook, and the report says so.  The grader's own process reads student files
   only within bounds: folders walked to a fixed depth and count without following links,
   notebooks up to :data:`MAX_NOTEBOOK` bytes, patterns that run in linear time.
2. *Run* (in the sandbox, :mod:`.sandbox`): the notebook runs in a fresh IPython shell, as a
   uid of its own, with no network, a read-only system, private size-limited folders, a
   cgroup (or rlimits) of its own, and no view of reference notebooks, other submissions or
   the grader's files.  Only the answers payloads of the collection cells are read back
   (:mod:`.runner`): JSON, size-capped, never pickled.
3. *Score* (a separate fresh process that runs no student code, :mod:`.scorer`): the
   instructor's labkit checks each exercise's answers with the checker of
   ``labkit.exercises.chNN``, hidden requirements included.

Nothing a notebook does (write files, patch labkit, redefine helpers, edit limits, print
fake feedback, fork, fill memory or disks) reaches step 3 except the values of its answer
variables, or costs another submission anything.  A runner or scorer that cannot start is
a *grader error* (its own status, a line in the report and on the console), never a 0.
**Variants.** With the instructor's secret (``--secret FILE``, and ``--roster roster.csv``
to refuse anyone not on it), each student's numbers are derived again from their login
(the student folder or file prefix) and the secret (:mod:`labkit.exercises.variants`), and
the answers are scored against those; the numbers the copy carries are only compared with
them, and a copy whose numbers differ is reported as a changed variant.  A neighbour's
answers, or the published ones, are answers to other numbers.
What the sandbox does not prevent: a student can still submit someone else's work; with
variants, it answers someone else's numbers.

``--no-sandbox`` skips step 2's sandbox (for submissions you trust, or machines without
bubblewrap); every report then carries a warning.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import functools
import hashlib
import itertools
import json
import math
import os
import re
import secrets
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..exercises import Spec, chapter_specs
from ..exercises.variants import derive, fingerprint, normal_login
from . import launch, reports, sandbox
from .reports import (
    STATUS_CONFLICT,
    STATUS_GRADER_ERROR,
    STATUS_NOT_ON_ROSTER,
    STATUS_OK,
    UNSANDBOXED,
    ExerciseScore,
    GradedSubmission,
    num,
    write_reports,
)
from .student import code_line_key, parse_grade_id, solution_fingerprints

__all__ = [
    "ExerciseScore",
    "GradedSubmission",
    "Submission",
    "add_commands",
    "find_submissions",
    "grade",
    "named_like",
    "notebooks_under",
    "prepare",
]

_CHAPTER = re.compile(r"(?:^|[_\- ])(?P<name>(?P<chapter>\d\d)_[A-Za-z0-9_]+)$")
# bounds on what the grader's own process reads of student files (see the trust model)
MAX_NOTEBOOK = 32 << 20  # bytes of one notebook (the course's own, outputs and all, are under 1 MB)
MAX_DEPTH = 8  # folder levels walked below a student's folder
MAX_ENTRIES = 10_000  # files and folders looked at in one student's folder
MAX_CLASS = 200_000  # entries looked at in all the folders named on the command line
MAX_CELLS = 5_000  # cells read to tell a notebook's chapter from its exercise ids
_ID_CALL = re.compile(r"\bexercise\(\s*['\"](\d{1,3})\.\d{1,3}['\"]")  # linear: anchored on a literal


# -- submissions --------------------------------------------------------------------------------
@dataclass
class Submission:
    """One submitted notebook, whose it is, and which chapter it answers."""

    path: Path
    student: str
    notebook: str  # the chapter notebook's name, e.g. "05_solver_parameters"
    chapter: int | None
    problem: str = ""  # why it cannot be graded, found before running
    notes: list[str] = field(default_factory=list)  # said in its report, found before running
    others: list[Path] = field(default_factory=list)  # more notebooks of this chapter: a conflict


def _visible(entry: os.DirEntry[str]) -> bool:
    """Not hidden (``.ipynb_checkpoints``, ``.git``) and not a link: links are never followed."""
    return not entry.name.startswith(".") and not entry.is_symlink()


def _entries(folder: Path, most: int) -> list[os.DirEntry[str]]:
    """At most ``most`` entries of ``folder`` (a folder may hold millions), in name order."""
    with os.scandir(folder) as scan:
        return sorted(itertools.islice(scan, most), key=lambda e: e.name)


def _walk(folder: Path, *, depth: int, budget: list[int], skip: Path | None) -> Iterator[Path]:
    """The notebooks in ``folder``, in name order, to ``depth`` levels, taking one from
    ``budget[0]`` per entry looked at (it stops at 0)."""
    try:
        entries = _entries(folder, max(budget[0], 0) + 1)
    except OSError:
        return
    for entry in entries:
        budget[0] -= 1
        if budget[0] < 0:
            return
        if not _visible(entry):
            continue
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            if depth > 0 and not (skip and path.resolve() == skip):
                yield from _walk(path, depth=depth - 1, budget=budget, skip=skip)
        elif entry.name.endswith(".ipynb") and entry.is_file(follow_symlinks=False):
            yield path


def _student_notebooks(folder: Path, skip: Path | None) -> tuple[list[Path], list[str], int]:
    """The notebooks in ``folder`` and below, within bounds; notes on what was left out; and
    how many entries were looked at."""
    budget = [MAX_ENTRIES]
    found = list(_walk(folder, depth=MAX_DEPTH, budget=budget, skip=skip))
    notes = []
    if budget[0] < 0:
        notes.append(
            f"only the first {MAX_ENTRIES} files and folders of {folder.name}/ were looked at; "
            "anything past them was not graded"
        )
    return found, notes, MAX_ENTRIES - max(budget[0], 0)


def notebooks_under(folder: Path, *, skip: Path | None = None) -> tuple[list[Path], list[str]]:
    """The notebooks in ``folder`` and below (bounded: :data:`MAX_DEPTH` levels,
    :data:`MAX_ENTRIES` entries, no links, no hidden entries), and notes on what was left out."""
    found, notes, _ = _student_notebooks(folder, skip)
    return found, notes


def _chapter_of_content(path: Path) -> int | None:
    """The chapter most exercise ids in the file belong to (None if it has none, is unreadable
    or is larger than :data:`MAX_NOTEBOOK`)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_NOTEBOOK + 1)
        cells = json.loads(data).get("cells", []) if len(data) <= MAX_NOTEBOOK else []
    except (OSError, ValueError, RecursionError, AttributeError):
        return None
    chapters = []
    for cell in cells[:MAX_CELLS] if isinstance(cells, list) else []:
        if not isinstance(cell, dict):
            continue
        source = cell.get("source", "")
        source = "".join(map(str, source)) if isinstance(source, list) else str(source)
        chapters += [int(n) for n in _ID_CALL.findall(source)]
        metadata = cell.get("metadata")
        nbgrader = metadata.get("nbgrader") if isinstance(metadata, dict) else None
        parsed = (
            parse_grade_id(str(nbgrader.get("grade_id", ""))[:100]) if isinstance(nbgrader, dict) else None
        )
        if parsed and re.fullmatch(r"\d+\.\d+", parsed[1]):
            chapters.append(int(parsed[1].split(".")[0]))
    return max(set(chapters), key=chapters.count) if chapters else None


def _chapter_name(chapter: int) -> str:
    """The course notebook's name for ``chapter`` ("05_solver_parameters"), or "chapter_05"
    where the course folder is not at hand (a Gradescope autograder ships none)."""
    from .notebooks import course_notebooks

    return next(
        (p.stem for p in course_notebooks() if p.stem.startswith(f"{chapter:02d}_")), f"chapter_{chapter:02d}"
    )


def named_like(path: Path, chapter: int | None = None) -> tuple[str, int, str] | None:
    """(chapter notebook name, chapter, the file-name prefix) of a file named like a chapter
    (``alice_05_solver_parameters.ipynb``), or None; with ``chapter``, only that chapter."""
    match = _CHAPTER.search(path.stem)
    if not match or (chapter is not None and int(match["chapter"]) != chapter):
        return None
    return match["name"], int(match["chapter"]), path.stem[: match.start("name")].rstrip("_- ")


def _owned(
    folder: Path, skip: Path | None, budget: list[int]
) -> Iterator[tuple[str | None, Path, list[str]]]:
    """(student, notebook, notes) for each notebook in a folder named on the command line:
    a top-level folder is a student (None: a file directly in ``folder``, named by its own name)."""
    try:
        entries = _entries(folder, max(budget[0], 0) + 1)
    except OSError as exc:
        raise FileNotFoundError(f"cannot read the submissions folder {folder}: {exc.strerror}") from exc
    for entry in entries:
        budget[0] -= 1
        if not _visible(entry):
            continue
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            if skip and path.resolve() == skip:
                continue
            found, notes, looked_at = _student_notebooks(path, skip)
            budget[0] -= looked_at
            for notebook in found:
                yield entry.name, notebook, notes
        elif entry.name.endswith(".ipynb") and entry.is_file(follow_symlinks=False):
            yield None, path, []
        if budget[0] < 0:
            raise ValueError(
                f"{folder} holds more than {MAX_CLASS} files and folders: name the folder of one "
                "class's submissions (one folder or file per student)"
            )


def _submission(path: Path, student: str | None, folder_name: str, chapter: int | None) -> Submission:
    """The submission at ``path``, of ``student`` (None: a file directly in a named folder,
    whose prefix names its student, or else the folder ``folder_name`` or its own stem)."""
    named = named_like(path, chapter)
    if named:
        name, number, prefix = named
        student = student or prefix or folder_name
    else:
        number = chapter if chapter is not None else _chapter_of_content(path)
        student = student or path.stem
        name = _chapter_name(number) if number is not None else path.stem
    problem = (
        ""
        if number is not None and chapter_specs(number)
        else (
            f"cannot tell which chapter {path.name} answers: name it like its chapter "
            "(e.g. 05_solver_parameters.ipynb) or pass --chapter"
        )
    )
    return Submission(path, student, name, number, problem)


def _conflicts(subs: list[Submission]) -> list[Submission]:
    """One submission per student and chapter: more files of one chapter become a conflict on
    the first (reported, not graded), so that the rest of the class is still graded."""
    kept: dict[tuple[str, str], Submission] = {}
    for sub in subs:
        first = kept.setdefault((sub.student, sub.notebook), sub)
        if first is not sub:
            first.others.append(sub.path)
    return list(kept.values())


def find_submissions(
    paths: Iterable[Path | str], *, chapter: int | None = None, skip: Path | None = None
) -> list[Submission]:
    """The submissions in ``paths`` (files, or folders of submissions).

    In a folder, each top-level folder is a student's (``alice/``: every notebook below it is
    alice's, up to :data:`MAX_DEPTH` folders deep), and each top-level file belongs to its prefix
    (``alice_05_solver_parameters.ipynb``), or, named only like its chapter, to the folder
    itself, or else to its stem (its chapter then read from its exercise ids, or ``chapter``).
    A file named on the command line is read as if it were at the top of its folder.  Links
    and hidden entries are skipped; folders are walked within bounds (:data:`MAX_DEPTH`,
    :data:`MAX_ENTRIES`).  Two notebooks of one chapter for one student are returned as one
    submission with ``others`` set: a conflict.
    """
    subs = []
    budget = [MAX_CLASS]
    for path in map(Path, paths):
        if path.is_dir():
            for student, notebook, notes in _owned(path, skip, budget):
                sub = _submission(notebook, student, path.resolve().name, chapter)
                sub.notes += notes
                subs.append(sub)
        elif path.is_file():
            subs.append(_submission(path, None, path.resolve().parent.name, chapter))
        else:
            raise FileNotFoundError(f"no such submission file or folder: {path}")
    return _conflicts(subs)


# -- preparing a submission --------------------------------------------------------------------
def _call_pattern(number: str) -> re.Pattern[str]:
    r"""``exercise("N.M")``, with any dotted prefix (``labkit.exercise``): the prefix may start
    only where no name or dot precedes it, which keeps the search linear in the cell's length
    (an optional ``[\w.]+`` that could start anywhere made it quadratic on long names)."""
    return re.compile(r"(?<![\w.])(?:\w+\.)*exercise\(\s*(['\"])" + re.escape(number) + r"\1\s*\)")


def prepare(nb: Any, specs: Sequence[Spec]) -> tuple[list[int], list[str]]:
    """Turn a submission (an nbformat node, changed in place) into one that collects answers.

    Every ``exercise("N.M")`` call becomes a collection call; an exercise without one is
    collected after its answer cell or at the end.  Outputs are cleared.  Returns the
    indices of the cells that collect, and notes for the report.
    """
    import nbformat

    notes: list[str] = []
    collect = "__import__('labkit.exercises').exercises.collect"
    where: dict[str, list[int]] = {s.id: [] for s in specs}
    answer_cells: dict[str, list[int]] = {s.id: [] for s in specs}
    for index, cell in enumerate(nb.cells):
        if cell.get("cell_type") != "code":
            continue
        cell["outputs"], cell["execution_count"] = [], None
        grade_id = str(cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", ""))
        for number in where:
            pattern = _call_pattern(number)
            if pattern.search(cell.source):
                cell.source = pattern.sub(f'{collect}("{number}")', cell.source)
                where[number].append(index)
            if parse_grade_id(grade_id) == ("answer", number):
                answer_cells[number].append(index)
    for number, found in answer_cells.items():
        if len(found) > 1:
            notes.append(
                f"the answer cell of exercise {number} appears {len(found)} times; the value "
                "its variables hold when the answers are read counts"
            )
    inserts: list[tuple[int, str]] = []
    for number, cells in where.items():
        if len(cells) > 1:
            notes.append(
                f"the feedback cell of exercise {number} appears {len(cells)} times; the answers "
                "read at the last one count"
            )
        if cells:
            continue
        if answer_cells[number]:
            inserts.append((answer_cells[number][-1] + 1, number))
            notes.append(
                f"the feedback cell of exercise {number} is missing; its answers were read right "
                "after its answer cell"
            )
        else:
            inserts.append((len(nb.cells), number))
            notes.append(
                f"exercise {number} has neither its answer cell nor its feedback cell; its answers "
                "were read at the end of the notebook"
            )
    for at, number in sorted(inserts, reverse=True):
        nb.cells.insert(at, nbformat.v4.new_code_cell(f'{collect}("{number}")'))
    # a last cell collects everything again: used only for exercises nothing collected earlier
    nb.cells.append(nbformat.v4.new_code_cell("\n".join(f'{collect}("{s.id}")' for s in specs)))
    indices = [i for i, c in enumerate(nb.cells) if c.get("cell_type") == "code" and collect in c.source]
    return indices, notes


def _read_notebook(path: Path) -> tuple[Any, str]:
    """The notebook at ``path`` (an nbformat node) and "", or None and why it cannot be run.
    Read within bounds: at most :data:`MAX_NOTEBOOK` bytes reach the JSON parser."""
    import nbformat

    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_NOTEBOOK + 1)
    except OSError as exc:
        return None, f"the file could not be read ({exc.strerror}); nothing could be run"
    if len(data) > MAX_NOTEBOOK:
        return None, (
            f"the file is larger than {MAX_NOTEBOOK >> 20} MB, more than any notebook of the course "
            "(clear its outputs: Edit → Clear Outputs of All Cells, then save); nothing could be run"
        )
    try:
        text = data.decode("utf-8")
        json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        why = "it is nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        return None, f"the file is not valid JSON ({why}); nothing could be run"
    try:
        nb = nbformat.reads(text, as_version=4)
        if not isinstance(nb.get("cells"), list):
            raise ValueError("it has no list of cells")
    except Exception as exc:  # nbformat raises many kinds for a broken notebook
        return (
            None,
            f"the file is not a readable notebook ({type(exc).__name__}: {exc}); nothing could be run",
        )
    return nb, ""


def _conflict(sub: Submission) -> str:
    files = ", ".join(str(p) for p in [sub.path, *sub.others])
    return (
        f"{1 + len(sub.others)} notebooks of {sub.notebook} were submitted for {sub.student}: {files}. "
        "None was graded: keep only the one to grade in the student's folder and grade again"
    )


def grade_one(
    sub: Submission,
    *,
    timeout: float,
    cell_timeout: float | None,
    max_output: int,
    use_sandbox: bool,
    limits: sandbox.Limits,
    secret: bytes | None = None,
    roster: Sequence[str] | None = None,
    partners: Sequence[str] = (),
    published: Mapping[str, Sequence[str]] | None = None,
) -> GradedSubmission:
    """Prepare, run (sandboxed), collect and score one submission (``secret``: the
    instructor's, from which the student's numbers are derived; ``roster``: the logins
    that may be graded, None for anyone; ``partners``: the other logins of a group
    submission, whose handout it may be; ``published``: each exercise's reference-solution
    lines as :func:`~.student.code_line_key` keys, to report answers that are the published
    solution's code)."""
    start = time.perf_counter()
    specs = chapter_specs(sub.chapter) if sub.chapter is not None else []
    known = roster is None or normal_login(sub.student) in {normal_login(r) for r in roster}
    graded = GradedSubmission(
        sub.student,
        sub.notebook,
        str(sub.path),
        STATUS_OK,
        [ExerciseScore(s.id, s.title, s.points) for s in specs],
        list(sub.notes),
        sandboxed=use_sandbox,
    )

    def fail(status: str, problem: str, reason: str) -> GradedSubmission:
        graded.status = status
        graded.problems.append(problem)
        for e in graded.exercises:
            e.status, e.messages = "not graded", [reason]
        graded.seconds = time.perf_counter() - start
        return graded

    if sub.problem:
        return fail("unknown chapter", sub.problem, sub.problem)
    if not known:
        graded.variant = "not graded"
        return fail(STATUS_NOT_ON_ROSTER, f"{sub.student!r} is not a login of the roster, so their own "
                    "numbers are unknown; rename the folder or file prefix to the student's login",
                    "not graded: the student is not on the roster")
    if sub.others:
        return fail(
            STATUS_CONFLICT,
            _conflict(sub),
            "not graded: more than one notebook of this chapter was submitted (see the problems)",
        )
    nb, problem = _read_notebook(sub.path)
    if nb is None:
        return fail("invalid notebook", problem, "the submission is not a valid notebook file")
    try:
        collect, notes = prepare(nb, specs)
    except Exception as exc:  # a notebook nbformat accepts but whose cells are odd
        return fail(
            "invalid notebook",
            f"the file is not a readable notebook ({type(exc).__name__}: {exc}); nothing could be run",
            "the submission is not a valid notebook file",
        )
    graded.problems += notes
    _report_copies(graded, nb, published or {})
    # the unseen inputs of code answers (exercise 4.3's drawn layout) come from a seed drawn
    # here, per submission: no published record or neighbour's notebook can know it
    seed = secrets.randbelow(1 << 62)
    try:
        lines = launch.run_notebook(
            nb,
            sub.notebook,
            collect,
            timeout=timeout,
            cell_timeout=cell_timeout,
            max_output=max_output,
            use_sandbox=use_sandbox,
            limits=limits,
            seed=seed,
        )
        answers = _answers(lines, specs, collect[-1])
        copy, claimed = _claimed(lines, collect[-1])
        login = _whose(sub.student, partners, copy)
        own = ({s.id: derive(secret, login, s.id, s.params, s.valid) for s in specs if s.params}
               if secret is not None else {})
        records = (
            launch.score_answers(answers, use_sandbox=use_sandbox, limits=limits, seed=seed, values=own)
            if answers
            else {}
        )
    except launch.GraderError as exc:
        return fail(
            STATUS_GRADER_ERROR, f"GRADER ERROR: {exc}", "not graded: the grader failed (see the problems)"
        )
    reports.fill(
        graded, nb, lines, answers, records, timeout=timeout, cell_timeout=cell_timeout, max_output=max_output
    )
    _compare_variants(graded, specs, claimed, own, secret, copy, login)
    graded.seconds = time.perf_counter() - start
    return graded


def _answers(lines: list[dict[str, Any]], specs: Sequence[Spec], final: int) -> dict[str, Any]:
    """Each exercise's answers: the last payload collected where its feedback cell stood,
    or else the one the final collection cell (index ``final``) read at the end."""
    known = {s.id for s in specs}
    answers: dict[str, Any] = {}
    late: dict[str, Any] = {}
    for line in lines:
        payload = line.get("answers")
        if not isinstance(payload, dict) or str(payload.get("exercise")) not in known:
            continue
        data = payload.get("answers")
        if not isinstance(data, dict):
            data = {"__error__": str(payload.get("error", "the answers could not be read"))}
        (late if line.get("cell") == final else answers)[str(payload["exercise"])] = data
    return {**late, **answers}


def _claimed(lines: list[dict[str, Any]], final: int) -> tuple[dict[str, str] | None, dict[str, Any]]:
    """Whose handout the copy says it is (``{"login", "made_with"}`` or None) and the numbers
    it carried for each exercise, as its collection cells reported them (read, never trusted)."""
    copy: dict[str, str] | None = None
    claimed: dict[str, Any] = {}
    for line in sorted(lines, key=lambda line: line.get("cell") == final, reverse=True):
        payload = line.get("answers")
        if isinstance(payload, dict) and "exercise" in payload:
            claimed[str(payload["exercise"])] = payload.get("variant")
            said = payload.get("copy")
            if copy is None and isinstance(said, dict):
                copy = {k: str(said.get(k, ""))[:200] for k in ("login", "made_with")}
    return copy, claimed


def _report_copies(graded: GradedSubmission, nb: Any, published: Mapping[str, Sequence[str]]) -> None:
    """Name the exercises whose answer holds at least half (and at least two) of the published
    solution's lines, word for word: the score stands (the lines may be a fair method, and a
    short one is everyone's), the instructor decides."""
    submitted = {key for cell in nb.cells if cell.get("cell_type") == "code"
                 for line in str(cell.get("source", "")).splitlines() if (key := code_line_key(line))}
    for number, keys in published.items():
        hits = sum(key in submitted for key in keys)
        if len(keys) >= 2 and hits >= max(2, len(keys) / 2):
            graded.copied.append(number)
            graded.problems.append(f"PUBLISHED SOLUTION in exercise {number}: {hits} of the {len(keys)} "
                                   "lines of its published solution appear word for word; the score stands, "
                                   "look at the notebook")


def published_solutions(chapter: int | None) -> dict[str, list[str]]:
    """The published solution lines (as keys) of the course chapter ``chapter`` that this
    labkit's repository holds (:func:`~.notebooks.course_notebooks`), or {} where it holds none."""
    from .notebooks import course_notebooks

    if chapter is None:
        return {}
    try:
        path = next(p for p in course_notebooks() if p.name.startswith(f"{chapter:02d}_"))
        stat = path.stat()
        found = _fingerprints(str(path), stat.st_mtime_ns, stat.st_size)
    except (StopIteration, OSError, ValueError):
        return {}
    return {number: list(keys) for number, keys in found.items()}


@functools.lru_cache(maxsize=16)
def _fingerprints(path: str, mtime_ns: int, size: int) -> dict[str, list[str]]:
    """:func:`solution_fingerprints` of the notebook at ``path`` as it is at that time and
    size (making the student copy it compares with takes about a second)."""
    import nbformat

    return solution_fingerprints(nbformat.read(path, as_version=4))


def _whose(student: str, partners: Sequence[str], copy: dict[str, str] | None) -> str:
    """The login whose numbers grade the submission: the student's, or, in a group submission,
    the partner's whose handout the copy says it is."""
    said = normal_login(copy["login"]) if copy else ""
    return next((p for p in partners if normal_login(p) == said), student)


def _same(said: Any, value: float) -> bool:
    """Whether a number the copy reports (any JSON) is ``value``."""
    try:
        return (isinstance(said, int | float) and not isinstance(said, bool)
                and abs(float(said) - value) <= 1e-12 * max(1.0, abs(value)))
    except OverflowError:   # an integer too large for a float: certainly not the value
        return False


def _compare_variants(graded: GradedSubmission, specs: Sequence[Spec], claimed: dict[str, Any],
                      own: dict[str, dict[str, float]], secret: bytes | None,
                      copy: dict[str, str] | None, login: str) -> None:
    """Report numbers in the copy that are not the student's own (they were never scored on)."""
    if secret is None:
        if any(claimed.get(s.id) for s in specs):
            graded.problems.append("this copy carries a student's own numbers, but the grader was given no "
                                   "--secret: it was graded on the published numbers")
        return
    graded.variant = "own"
    if login != graded.student:
        graded.problems.append(f"a group submission: graded on the numbers of {login}, whose handout it is")
    if copy and copy["made_with"] and copy["made_with"] != fingerprint(secret):
        graded.variant = "other secret"
        graded.problems.append(
            f"this copy was made with another secret (fingerprint {copy['made_with']}; this grader's is "
            f"{fingerprint(secret)}): if every copy says so, pass the secret the handouts were made with; "
            "it was graded on the numbers this secret gives")
        return
    if copy and normal_login(copy["login"]) != normal_login(login):
        graded.problems.append(f"this copy is the handout of {copy['login']!r}, not of {login!r}")
    for s in specs:
        if not s.params:
            continue
        mine, reported = own[s.id], claimed.get(s.id)
        said = reported if isinstance(reported, dict) else {}
        if all(_same(said.get(n), v) for n, v in mine.items()):
            continue
        graded.variant = "changed"
        shown = ", ".join(f"{n} = {s.params[n].show(said[n]) if _finite(said[n]) else 'unreadable'}"
                          if n in said else f"{n} missing" for n in mine) if said else "the published numbers"
        theirs = ", ".join(f"{n} = {s.params[n].show(v)}" for n, v in mine.items())
        graded.problems.append(f"VARIANT CHANGED in exercise {s.id}: the copy's numbers are {shown}, but "
                               f"this student's own are {theirs}; it was graded on the student's own numbers")


def _finite(value: Any) -> bool:
    try:
        return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(float(value))
    except OverflowError:
        return False


# -- grading a class ------------------------------------------------------------------------------
def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _digest(path: Path) -> str:
    """The file's SHA-256, read a piece at a time (a submission may be any size)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _memory_share(workers: int) -> int:
    """MiB of memory for each of ``workers`` sandboxes: 6 GiB, or less where this machine's
    memory, shared out, holds less (so that sandboxes at their limits cannot make the kernel
    kill an honest one, or the grader)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") >> 20
    except (ValueError, OSError):  # pragma: no cover - not Linux
        return sandbox.Limits().memory_mb
    return max(1024, min(sandbox.Limits().memory_mb, int(total * 0.8) // workers))


def _line(graded: GradedSubmission) -> str:
    """The console line of a finished submission."""
    mark = "✔" if graded.status == STATUS_OK else "✘"
    return (
        f"{mark} {graded.student:<16} {graded.notebook:<28} {num(graded.total)}/{num(graded.points)} points  "
        f"{graded.status} ({graded.seconds:.1f} s)"
    )


def _grade_all(
    subs: list[Submission], workers: int, echo: Callable[[str], None] | None, **settings: Any
) -> list[GradedSubmission]:
    """Grade ``subs`` with ``workers`` at once (``settings``: :func:`grade_one`'s)."""
    results: list[GradedSubmission] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        published = {c: published_solutions(c) for c in {sub.chapter for sub in subs}}
        futures = {pool.submit(grade_one, sub, published=published[sub.chapter], **settings): sub
                   for sub in subs}
        try:
            for future in concurrent.futures.as_completed(futures):
                sub = futures[future]
                try:
                    graded = future.result()
                except Exception as exc:  # a grader bug must not lose the other students
                    graded = GradedSubmission(
                        sub.student,
                        sub.notebook,
                        str(sub.path),
                        STATUS_GRADER_ERROR,
                        [],
                        [
                            f"GRADER ERROR: the grader failed on this submission ({exc!r}); "
                            "grade it again, and report the error if it stays"
                        ],
                    )
                graded.sandboxed = settings["use_sandbox"]
                results.append(graded)
                if echo:
                    echo(_line(graded))
        except BaseException:  # Ctrl-C: start nothing more, stop what runs
            pool.shutdown(wait=False, cancel_futures=True)
            launch.kill_all()
            raise
    return results


def grade(
    submissions: Iterable[Path | str],
    out: Path | str,
    *,
    chapter: int | None = None,
    timeout: float = 600,
    cell_timeout: float | None = 120,
    jobs: int | None = None,
    max_output: float = 16,
    use_sandbox: bool = True,
    limits: sandbox.Limits | None = None,
    echo: Callable[[str], None] | None = None,
    secret: bytes | None = None,
    roster: Sequence[str] | None = None,
) -> list[GradedSubmission]:
    """Grade notebooks and write the reports to ``out``; returns the graded submissions
    (sorted by student, then chapter).

    secret: the instructor's (see :mod:`labkit.exercises.variants`): each student's numbers
    are derived from it and their login, and the answers scored on those (None: the
    published numbers); roster: the logins that may be graded (others are "not on roster").

    timeout / cell_timeout: seconds per notebook / per cell (``None``: no cell limit);
    jobs: submissions run at once (default: available cores); max_output: MB of output
    kept per notebook; use_sandbox: False only for trusted submissions (every report then
    says so); limits: each sandbox's (default: :class:`~.sandbox.Limits`, memory shared out
    by jobs); echo: called with one line per finished submission.
    Raises :class:`~labkit.classroom.sandbox.SandboxUnavailable` when the sandbox cannot start.
    """
    out = Path(out)
    if use_sandbox:
        sandbox.check()
    subs = find_submissions(submissions, chapter=chapter, skip=out.resolve())
    if not subs:
        raise FileNotFoundError("no submitted notebooks found in " + ", ".join(map(str, submissions)))
    workers = max(1, min(jobs or _cores(), len(subs)))
    limits = limits or sandbox.Limits(memory_mb=_memory_share(workers))
    files = [p for sub in subs for p in (sub.path, *sub.others)]
    hashes = {path: _digest(path) for path in files}
    isolation = sandbox.isolation(limits, contain=use_sandbox)
    if echo:
        echo(f"limits: {isolation}")
    results = _grade_all(
        subs,
        workers,
        echo,
        timeout=timeout,
        cell_timeout=cell_timeout,
        max_output=int(max_output * (1 << 20)),
        use_sandbox=use_sandbox,
        limits=limits,
        secret=secret,
        roster=None if roster is None else list(roster),
    )
    for sub in subs:
        if any(not p.is_file() or _digest(p) != hashes[p] for p in (sub.path, *sub.others)):  # never expected
            graded = next(g for g in results if g.file == str(sub.path))
            graded.problems.append(
                "THE SUBMITTED FILE CHANGED DURING GRADING (the grader never writes it: something else did)"
            )
    results.sort(key=lambda g: (g.student, g.notebook))
    from .. import __version__

    write_reports(
        results,
        out,
        labkit=__version__,
        timeout=timeout,
        cell_timeout=cell_timeout,
        max_output_mb=max_output,
        jobs=workers,
        sandbox=use_sandbox,
        isolation=isolation,
    )
    return results


# -- command line -----------------------------------------------------------------------------------
def _main(args: argparse.Namespace) -> int:
    from ..exercises.variants import RosterError, SecretError, instructor_files

    if args.no_sandbox:
        print(UNSANDBOXED)
    try:
        secret, roster = instructor_files(args.secret, args.roster)
    except (SecretError, RosterError) as exc:
        print(f"labkit grade: {exc}")
        return 2
    try:
        results = grade(
            args.submissions,
            args.out,
            chapter=args.chapter,
            timeout=args.timeout,
            cell_timeout=args.cell_timeout or None,
            jobs=args.jobs,
            max_output=args.max_output,
            use_sandbox=not args.no_sandbox,
            echo=print,
            secret=secret,
            roster=roster,
        )
    except (FileNotFoundError, ValueError, sandbox.SandboxUnavailable) as exc:
        print(f"labkit grade: {exc}")
        return 2
    for g in results:
        for problem in g.problems:
            print(f"  {g.student} · {g.notebook}: {problem}")
    students = len({g.student for g in results})
    print(
        f"\n{len(results)} submissions of {students} students graded: {Path(args.out) / 'scores.csv'}, "
        f"scores.json, grades.csv (for an LMS gradebook) and {students} feedback_<student>.md files "
        f"in {args.out}"
    )
    failed = [g for g in results if g.status == STATUS_GRADER_ERROR]
    if failed:
        print(
            f'✘ {len(failed)} submissions were NOT graded because the grader failed (status "grader error", '
            "score 0 is not a grade): "
            + ", ".join(f"{g.student} · {g.notebook}" for g in failed)
            + ". Grade those files again (labkit grade FILE... --out OTHER_FOLDER)."
        )
    conflicts = [g for g in results if g.status == STATUS_CONFLICT]
    if conflicts:
        print(
            f'✘ {len(conflicts)} students submitted one chapter twice (status "conflict", not graded): '
            + ", ".join(f"{g.student} · {g.notebook}" for g in conflicts)
            + ". Keep one file each and grade again."
        )
    if args.no_sandbox:
        print(UNSANDBOXED)
    changed = any("CHANGED DURING GRADING" in p for g in results for p in g.problems)
    return 1 if changed or failed else 0


def add_commands(subparsers: Any) -> None:
    """Register ``labkit grade`` on labkit's argparse subparsers."""
    parser = subparsers.add_parser(
        "grade",
        help="grade submitted notebooks in a sandbox: a score table and a feedback file per student",
        description="Run every submitted notebook in a bubblewrap sandbox to collect its answers, score them "
        "with labkit's checkers in a separate process, and write scores.csv, scores.json, grades.csv and "
        "feedback_<student>.md to --out. In a folder of submissions, each top-level folder is one student "
        "(alice/, with every notebook up to 8 folders below it: mallory/bob/05_x.ipynb is mallory's) "
        "and each top-level file is its prefix's (alice_05_solver_parameters.ipynb), or, named only like "
        "its chapter, the folder's, or else its stem's. Two notebooks of one chapter for one student are a "
        "conflict: reported, neither graded. Exit status 1 if the grader failed on any submission.",
    )
    parser.add_argument(
        "submissions",
        nargs="+",
        metavar="SUBMISSION",
        help="submitted notebooks, or folders of submissions (one folder or file prefix per student)",
    )
    parser.add_argument("--out", required=True, help="folder for the reports")
    parser.add_argument(
        "--chapter",
        type=int,
        help="the chapter every submission answers (default: from each file's name or content)",
    )
    parser.add_argument("--timeout", type=float, default=600, help="seconds per notebook (default 600)")
    parser.add_argument(
        "--cell-timeout", type=float, default=120, help="seconds per cell, 0 for none (default 120)"
    )
    parser.add_argument("--jobs", type=int, help="notebooks run at once (default: the available cores)")
    parser.add_argument("--max-output", type=float, default=16, help="MB of output kept per notebook")
    parser.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run submissions without the sandbox (only for work you trust; every report carries a warning)",
    )
    parser.add_argument("--secret", metavar="FILE",
                        help="the instructor's secret the handouts were made with: each student is graded "
                        "on their own numbers, derived from it and their login")
    parser.add_argument("--roster", metavar="CSV",
                        help="the roster the handouts were made from (a `login` column): anyone else is "
                        "not graded")
    parser.set_defaults(run=_main)
