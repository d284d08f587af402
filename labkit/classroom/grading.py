"""Grade submitted notebooks: answers collected in a sandbox, scored by labkit outside it.

``labkit grade SUBMISSIONS... --out DIR`` writes ``DIR/scores.csv``, ``DIR/scores.json``,
``DIR/grades.csv`` (for an LMS gradebook such as Canvas) and ``DIR/feedback_<student>.md``.

**Trust model.** A submission never grades itself.  For each one:

1. *Prepare* (outside the sandbox).  The chapter comes from the file name
   (``05_solver_parameters.ipynb``, ``alice_05_solver_parameters.ipynb``) or, failing
   that, from the exercise ids inside.  Every call ``labkit.exercise("N.M")`` in the
   submission becomes ``labkit.exercises.collect("N.M")``: instead of checking, it hands
   the answer variables over as JSON data.  An exercise whose feedback cell was deleted
   is collected right after its answer cell (nbgrader ``grade_id``), or at the end of
   the notebook, and the report says so.
2. *Run* (in the sandbox, :mod:`.sandbox`): the notebook runs in a fresh IPython shell, as an
   unprivileged user, with no network, a read-only system, a private working folder and
   no view of reference notebooks, other submissions or the grader's files.  Only the
   answers payloads of the collection cells are read back (:mod:`.runner`): JSON,
   size-capped, never pickled.
3. *Score* (a separate fresh process that runs no student code, :mod:`.scorer`): the
   instructor's labkit checks each exercise's answers with the checker of
   ``labkit.exercises.chNN``, hidden requirements included.

Nothing a notebook does (write files, patch labkit, redefine helpers, edit limits, print
fake feedback) reaches step 3 except the values of its answer variables.  What the
sandbox does not prevent: a student can still submit someone else's answers, and a
notebook can use its share of CPU and memory up to the limits.

``--no-sandbox`` skips step 2's sandbox (for submissions you trust, or machines without
bubblewrap); every report then carries a warning.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..exercises import Spec, chapter_specs
from . import launch, reports, sandbox
from .reports import STATUS_OK, UNSANDBOXED, ExerciseScore, GradedSubmission, num, write_reports
from .student import exercise_calls

__all__ = [
    "ExerciseScore",
    "GradedSubmission",
    "Submission",
    "add_commands",
    "find_submissions",
    "grade",
    "prepare",
]

_CHAPTER = re.compile(r"(?:^|[_\- ])(?P<name>(?P<chapter>\d\d)_[A-Za-z0-9_]+)$")


# -- submissions --------------------------------------------------------------------------------
@dataclass
class Submission:
    """One submitted notebook, whose it is, and which chapter it answers."""

    path: Path
    student: str
    notebook: str  # the chapter notebook's name, e.g. "05_solver_parameters"
    chapter: int | None
    problem: str = ""  # why it cannot be graded, found before running


def _expand(paths: Iterable[Path | str], skip: Path | None) -> list[Path]:
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found += sorted(
                p
                for p in path.rglob("*.ipynb")
                if p.is_file()
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
                and not (skip and p.resolve().is_relative_to(skip))
            )
        elif path.is_file():
            found.append(path)
        else:
            raise FileNotFoundError(f"no such submission file or folder: {path}")
    return list(dict.fromkeys(found))


def _chapter_of_content(path: Path) -> int | None:
    """The chapter most exercise ids in the file belong to (None if it has none or is unreadable)."""
    try:
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError, AttributeError):
        return None
    ids = []
    for cell in cells if isinstance(cells, list) else []:
        if not isinstance(cell, dict):
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        ids += [c.id for c in exercise_calls(source)]
        grade_id = str(cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", ""))
        ids += re.findall(r"(\d+)\.\d+", grade_id)[:1]
    chapters = [int(i.split(".")[0]) for i in ids if re.match(r"^\d+(\.\d+)?$", i)]
    return max(set(chapters), key=chapters.count) if chapters else None


def _chapter_name(chapter: int) -> str:
    """The course notebook's name for ``chapter`` ("05_solver_parameters"), or "chapter_05"
    where the course folder is not at hand (a Gradescope autograder ships none)."""
    from .notebooks import course_notebooks

    return next(
        (p.stem for p in course_notebooks() if p.stem.startswith(f"{chapter:02d}_")), f"chapter_{chapter:02d}"
    )


def find_submissions(
    paths: Iterable[Path | str], *, chapter: int | None = None, skip: Path | None = None
) -> list[Submission]:
    """The submissions in ``paths`` (files, or folders searched recursively).

    A file named like a chapter (``05_solver_parameters.ipynb``) in a folder belongs to
    the folder's student; ``alice_05_solver_parameters.ipynb`` to ``alice``; any other file
    to its stem, its chapter read from its exercise ids (or ``chapter``).  Raises
    ``ValueError`` when one student has two submissions of one chapter.
    """
    subs = []
    for path in _expand(paths, skip):
        match = _CHAPTER.search(path.stem)
        if match and (chapter is None or int(match["chapter"]) == chapter):
            name, number = match["name"], int(match["chapter"])
            rest = path.stem[: match.start("name")].rstrip("_- ")
            student = rest or path.resolve().parent.name
        else:
            number = chapter if chapter is not None else _chapter_of_content(path)
            student = path.stem
            name = _chapter_name(number) if number is not None else path.stem
        problem = (
            ""
            if number is not None and chapter_specs(number)
            else (
                f"cannot tell which chapter {path.name} answers: name it like its chapter "
                "(e.g. 05_solver_parameters.ipynb) or pass --chapter"
            )
        )
        subs.append(Submission(path, student, name, number, problem))
    seen: dict[tuple[str, str], Path] = {}
    for sub in subs:
        key = (sub.student, sub.notebook)
        if key in seen:
            raise ValueError(
                f"two submissions of {sub.notebook} for student {sub.student!r}: "
                f"{seen[key]} and {sub.path}; rename one"
            )
        seen[key] = sub.path
    return subs


# -- preparing a submission --------------------------------------------------------------------
def _call_pattern(number: str) -> re.Pattern[str]:
    return re.compile(r"(?:\b[\w.]+\.)?\bexercise\(\s*(['\"])" + re.escape(number) + r"\1\s*\)")


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
            if grade_id == f"answer-{number}":
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


def grade_one(
    sub: Submission,
    *,
    timeout: float,
    cell_timeout: float | None,
    max_output: int,
    use_sandbox: bool,
    limits: sandbox.Limits,
) -> GradedSubmission:
    """Prepare, run (sandboxed), collect and score one submission."""
    import nbformat

    start = time.perf_counter()
    specs = chapter_specs(sub.chapter) if sub.chapter is not None else []
    graded = GradedSubmission(
        sub.student,
        sub.notebook,
        str(sub.path),
        STATUS_OK,
        [ExerciseScore(s.id, s.title, s.points) for s in specs],
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
    try:
        text = sub.path.read_text(encoding="utf-8")
        json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return fail(
            "invalid notebook",
            f"the file is not valid JSON ({exc}); nothing could be run",
            "the submission is not a valid notebook file",
        )
    try:
        nb = nbformat.reads(text, as_version=4)
        if not isinstance(nb.get("cells"), list):
            raise ValueError("it has no list of cells")
        collect, notes = prepare(nb, specs)
    except Exception as exc:  # nbformat raises many kinds for a broken notebook
        return fail(
            "invalid notebook",
            f"the file is not a readable notebook ({type(exc).__name__}: {exc}); nothing could be run",
            "the submission is not a valid notebook file",
        )
    graded.problems += notes
    lines = launch.run_notebook(
        nb,
        sub.notebook,
        collect,
        timeout=timeout,
        cell_timeout=cell_timeout,
        max_output=max_output,
        use_sandbox=use_sandbox,
        limits=limits,
    )
    answers = _answers(lines, specs, collect[-1])
    records = launch.score_answers(answers, use_sandbox=use_sandbox, limits=limits) if answers else {}
    reports.fill(
        graded,
        nb,
        lines,
        answers,
        records,
        timeout=timeout,
        cell_timeout=cell_timeout,
        max_output=max_output,
    )
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


# -- grading a class ------------------------------------------------------------------------------
def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


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
) -> list[GradedSubmission]:
    """Grade notebooks and write the reports to ``out``; returns the graded submissions
    (sorted by student, then chapter).

    timeout / cell_timeout: seconds per notebook / per cell (``None``: no cell limit);
    jobs: submissions run at once (default: available cores); max_output: MB of output
    kept per notebook; use_sandbox: False only for trusted submissions (every report then
    says so); echo: called with one line per finished submission.
    Raises :class:`~labkit.classroom.sandbox.SandboxUnavailable` when the sandbox cannot start.
    """
    out = Path(out)
    if use_sandbox:
        sandbox.check()
    subs = find_submissions(submissions, chapter=chapter, skip=out.resolve())
    if not subs:
        raise FileNotFoundError("no submitted notebooks found in " + ", ".join(map(str, submissions)))
    workers = max(1, min(jobs or _cores(), len(subs)))
    limits = limits or sandbox.Limits(processes=256 * workers)
    hashes = {sub.path: _digest(sub.path) for sub in subs}
    results: list[GradedSubmission] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {
            pool.submit(
                grade_one,
                sub,
                timeout=timeout,
                cell_timeout=cell_timeout,
                max_output=int(max_output * (1 << 20)),
                use_sandbox=use_sandbox,
                limits=limits,
            ): sub
            for sub in subs
        }
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
                        "grader error",
                        [],
                        [f"the grader failed on this submission: {exc!r}"],
                    )
                graded.sandboxed = use_sandbox
                results.append(graded)
                if echo:
                    mark = "✔" if graded.status == STATUS_OK else "✘"
                    echo(
                        f"{mark} {graded.student:<16} {graded.notebook:<28} {num(graded.total)}/"
                        f"{num(graded.points)} points  {graded.status} ({graded.seconds:.1f} s)"
                    )
        except BaseException:  # Ctrl-C: start nothing more, stop what runs
            pool.shutdown(wait=False, cancel_futures=True)
            launch.kill_all()
            raise
    for sub in subs:
        if not sub.path.is_file() or _digest(sub.path) != hashes[sub.path]:  # never expected
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
    )
    return results


# -- command line -----------------------------------------------------------------------------------
def _main(args: argparse.Namespace) -> int:
    if args.no_sandbox:
        print(UNSANDBOXED)
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
    if args.no_sandbox:
        print(UNSANDBOXED)
    changed = any("CHANGED DURING GRADING" in p for g in results for p in g.problems)
    return 1 if changed else 0


def add_commands(subparsers: Any) -> None:
    """Register ``labkit grade`` on labkit's argparse subparsers."""
    parser = subparsers.add_parser(
        "grade",
        help="grade submitted notebooks in a sandbox: a score table and a feedback file per student",
        description="Run every submitted notebook in a bubblewrap sandbox to collect its answers, score them "
        "with labkit's checkers in a separate process, and write scores.csv, scores.json, grades.csv and "
        "feedback_<student>.md to --out. Students are named after the folder of a file named like its "
        "chapter (alice/05_solver_parameters.ipynb), the prefix of <student>_<chapter>.ipynb, or the stem.",
    )
    parser.add_argument(
        "submissions",
        nargs="+",
        metavar="SUBMISSION",
        help="submitted notebooks, or folders searched for them",
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
    parser.set_defaults(run=_main)
