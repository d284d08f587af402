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
import contextlib
import csv
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..exercises import Spec, chapter_specs
from . import sandbox
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

GRACE = 30.0  # s the sandbox may overrun the notebook limit before it is killed
SCORE_TIMEOUT = 120.0  # s for scoring one exercise
REPORT_LIMIT = 8 << 20  # bytes of runner report read
STATUS_OK = "ok"
UNSANDBOXED = (
    "WARNING: graded WITHOUT a sandbox (--no-sandbox): the submissions ran with the grader's "
    "rights and could read and write its files"
)
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


# -- results ----------------------------------------------------------------------------------
@dataclass
class ExerciseScore:
    """The grade of one exercise of one submission."""

    id: str
    title: str
    points: float
    score: float = 0.0
    status: str = "not run"  # passed, failed, not answered, not run, timed out, kernel died, not graded
    messages: list[str] = field(default_factory=list)
    hidden_messages: list[str] = field(default_factory=list)  # results of hidden requirements


@dataclass
class GradedSubmission:
    """Everything the grader found out about one submission."""

    student: str
    notebook: str
    file: str
    status: str  # ok, timed out, kernel died, invalid notebook, ...
    exercises: list[ExerciseScore]
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    sandboxed: bool = True

    @property
    def total(self) -> float:
        return round(sum(e.score for e in self.exercises), 2)

    @property
    def points(self) -> float:
        return round(sum(e.points for e in self.exercises), 2)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["exercises"] = {e["id"]: {k: v for k, v in e.items() if k != "id"} for e in data["exercises"]}
        data.update(total=self.total, points=self.points)
        return data


def _num(x: float) -> str:
    return f"{x:g}"


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


# -- running one submission ---------------------------------------------------------------------
_RUNNING: set[subprocess.Popen] = set()
_LOCK = threading.Lock()


def _kill(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _paths() -> tuple[Path, Path]:
    """labkit's package folder and the course models folder."""
    from ..models import models_dir

    return Path(__file__).resolve().parent.parent, models_dir().resolve()


def _environment(models: Path, notebook: str) -> dict[str, str]:
    """The sandbox's whole environment: the grader's own labkit first on the path."""
    package, _ = _paths()
    env = {
        "PYTHONPATH": str(package.parent),
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(sandbox.INSIDE),
        "LANG": "C.UTF-8",
        "MPLCONFIGDIR": "/tmp/matplotlib",
        # Mesa finds no cache folder for nobody: without one every GL context compiles its
        # shaders again (~0.25 s each, half of a chapter's rendering)
        "MESA_SHADER_CACHE_DIR": "/tmp/mesa_shader_cache",
        "MPLBACKEND": "agg",
        "IPYTHONDIR": "/tmp/ipython",
        "JUPYTER_RUNTIME_DIR": "/tmp/jupyter",
        "LABKIT_MODELS": str(models),
        "LABKIT_NOTEBOOK": notebook,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
    }
    for key in ("MUJOCO_GL", "PYOPENGL_PLATFORM", "LABKIT_CHROMIUM"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


def _launch(
    argv: list[str],
    *,
    work: Path,
    use_sandbox: bool,
    env: dict[str, str],
    limits: sandbox.Limits,
    stdin: int | None = subprocess.DEVNULL,
    stderr: Any = subprocess.DEVNULL,
) -> tuple[subprocess.Popen, Path | None]:
    package, models = _paths()
    if use_sandbox:
        sandbox.prepare_work(work)
        argv, stage = sandbox.command(argv, work=work, readonly=[package, models], env=env)
    else:
        stage = None
        env = {**env, "HOME": str(work)}
    process = subprocess.Popen(
        argv,
        cwd=work,
        env=env,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=stderr,
        start_new_session=True,
        preexec_fn=sandbox.preexec(limits),
    )
    with _LOCK:
        _RUNNING.add(process)
    return process, stage


def _finish(process: subprocess.Popen, stage: Path | None) -> None:
    _kill(process)
    process.wait()
    with _LOCK:
        _RUNNING.discard(process)
    if stage:
        shutil.rmtree(stage, ignore_errors=True)


def _run_notebook(
    nb: Any,
    notebook: str,
    collect: list[int],
    *,
    timeout: float,
    cell_timeout: float | None,
    max_output: int,
    use_sandbox: bool,
    limits: sandbox.Limits,
) -> list[dict[str, Any]]:
    """Run a prepared notebook in the sandbox; the runner's report lines."""
    import nbformat

    _, models = _paths()
    work = Path(tempfile.mkdtemp(prefix="labkit-work-"))
    lines: list[dict[str, Any]] = []
    try:
        path = work / f"{notebook}.ipynb"
        nbformat.write(nb, path)
        inside = sandbox.INSIDE if use_sandbox else work
        spec = {
            "notebook": str(inside / path.name),
            "cwd": str(inside),
            "timeout": timeout,
            "cell_timeout": cell_timeout,
            "max_output": max_output,
            "collect": collect,
        }
        (work / ".runner.json").write_text(json.dumps(spec))
        argv = [sys.executable, "-m", "labkit.classroom.runner", str(inside / ".runner.json")]
        with tempfile.TemporaryFile() as log:
            process, stage = _launch(
                argv,
                work=work,
                use_sandbox=use_sandbox,
                limits=limits,
                env=_environment(models, notebook),
                stderr=log,
            )
            reader = threading.Thread(target=_read_lines, args=(process.stdout, lines), daemon=True)
            reader.start()
            try:
                process.wait(timeout=timeout + GRACE)
            except subprocess.TimeoutExpired:
                lines.append({"status": "timed out", "limit": "notebook", "killed": True})
            finally:
                _finish(process, stage)
                reader.join(timeout=5)
            if not any("status" in line for line in lines):
                if any(set(line) == {"cell"} for line in lines):   # it died inside the notebook
                    lines.append({"status": "kernel died", "exit_code": process.returncode})
                else:
                    log.seek(0)
                    tail = log.read()[-2000:].decode("utf-8", "replace").strip().splitlines()
                    lines.append({"status": "runner error",
                                  "message": f"the notebook runner stopped (exit code {process.returncode})"
                                  + (f": {tail[-1]}" if tail else "")})
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return lines


def _read_lines(stream: Any, into: list[dict[str, Any]], limit: int = REPORT_LIMIT) -> None:
    read = 0
    for raw in stream:
        read += len(raw)
        if read > limit:
            into.append({"status": "runner error", "message": "the runner's report exceeded its size limit"})
            break
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict):
            into.append(record)
    with contextlib.suppress(Exception):
        for _ in stream:  # drain, so the runner never blocks on a full pipe
            pass


def score_answers(
    answers: dict[str, Any],
    *,
    use_sandbox: bool = True,
    hidden: bool = True,
    limits: sandbox.Limits | None = None,
) -> dict[str, dict[str, Any]]:
    """Score answer data (``{exercise id: {name: data}}``) in fresh processes that run no
    student code; returns ``{exercise id: record}`` (see :meth:`Exercise.record`), with
    ``{"error": why}`` for an exercise whose checker crashed or ran past its time."""
    _, models = _paths()
    limits = limits or sandbox.Limits()
    pending = list(answers)
    results: dict[str, dict[str, Any]] = {}
    while pending:
        request = json.dumps({"answers": {n: answers[n] for n in pending}, "hidden": hidden})
        work = Path(tempfile.mkdtemp(prefix="labkit-score-"))
        got: list[dict[str, Any]] = []
        try:
            process, stage = _launch(
                [sys.executable, "-s", "-m", "labkit.classroom.scorer"],
                work=work,
                use_sandbox=use_sandbox,
                env=_environment(models, "scorer"),
                limits=limits,
                stdin=subprocess.PIPE,
            )
            reader = threading.Thread(target=_read_lines, args=(process.stdout, got), daemon=True)
            reader.start()
            try:
                process.stdin.write(request.encode())
                process.stdin.close()
            except BrokenPipeError:
                pass
            started = time.monotonic()
            try:
                while process.poll() is None:
                    scored = len([g for g in got if "exercise" in g])
                    if time.monotonic() - started > SCORE_TIMEOUT * (scored + 1):
                        break
                    time.sleep(0.02)
            finally:
                _finish(process, stage)
                reader.join(timeout=5)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        for record in got:
            number = str(record.get("exercise"))
            if number in pending and number not in results:
                results[number] = record
        pending = [n for n in pending if n not in results]
        if pending:  # the first unscored exercise crashed or hung its checker: skip it, go on
            results[pending[0]] = {
                "error": f"checking this answer crashed or took longer than {SCORE_TIMEOUT:g} s; it scores 0"
            }
            pending = pending[1:]
    return results


def _head(source: str) -> str:
    line = next((s.strip() for s in source.splitlines() if s.strip() and not s.strip().startswith("#")), "")
    return line if len(line) <= 60 else line[:57] + "..."


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
    lines = _run_notebook(
        nb,
        sub.notebook,
        collect,
        timeout=timeout,
        cell_timeout=cell_timeout,
        max_output=max_output,
        use_sandbox=use_sandbox,
        limits=limits,
    )
    answers, origin = _answers(lines, specs)
    records = score_answers(answers, use_sandbox=use_sandbox, limits=limits) if answers else {}
    _report(
        graded,
        nb,
        lines,
        answers,
        origin,
        records,
        timeout=timeout,
        cell_timeout=cell_timeout,
        max_output=max_output,
    )
    graded.seconds = time.perf_counter() - start
    return graded


def _answers(lines: list[dict[str, Any]], specs: Sequence[Spec]) -> tuple[dict[str, Any], dict[str, int]]:
    """The answers of each exercise: the last payload before the final collection cell, or
    that cell's when nothing earlier collected it."""
    known = {s.id for s in specs}
    payloads = [
        (line.get("cell", -1), line["answers"]) for line in lines if isinstance(line.get("answers"), dict)
    ]
    last_cell = max((cell for cell, _ in payloads), default=-1)
    answers: dict[str, Any] = {}
    origin: dict[str, int] = {}
    for final in (False, True):
        for cell, payload in payloads:
            number = str(payload.get("exercise"))
            if number not in known or (cell == last_cell) != final or (final and number in answers):
                continue
            if isinstance(payload.get("answers"), dict):
                answers[number] = payload["answers"]
            else:
                answers[number] = {"__error__": str(payload.get("error", "the answers could not be read"))}
            origin[number] = cell
    return answers, origin


def _report(
    graded: GradedSubmission,
    nb: Any,
    lines: list[dict[str, Any]],
    answers: dict[str, Any],
    origin: dict[str, int],
    records: dict[str, dict[str, Any]],
    *,
    timeout: float,
    cell_timeout: float | None,
    max_output: int,
) -> None:
    status_line = next((line for line in reversed(lines) if "status" in line), {"status": "runner error"})
    status = status_line["status"]
    stop = status_line.get("cell")
    if stop is None and status != STATUS_OK:
        stop = max(
            (line["cell"] for line in lines if isinstance(line.get("cell"), int) and set(line) == {"cell"}),
            default=None,
        )
    errors = {line["error"]["cell"]: line["error"] for line in lines if isinstance(line.get("error"), dict)}

    def where(index: Any) -> str:
        if not isinstance(index, int) or not 0 <= index < len(nb.cells):
            return "its start"
        head = _head(nb.cells[index].source)
        return f"cell {index + 1}" + (f" (`{head}`)" if head else "")

    if status == "timed out":
        why = (
            f"ran longer than the {_num(cell_timeout or 0)} s cell limit"
            if status_line.get("limit") == "cell"
            else f"the notebook ran past its {_num(timeout)} s time limit"
        )
        at = f" in {where(stop)}" if isinstance(stop, int) else ""
        graded.problems.append(
            f"timed out{at}: {why}; its kernel was stopped and the exercises after it score 0"
        )
    elif status == "kernel died":
        code = status_line.get("exit_code")
        graded.problems.append(
            f"the kernel died in {where(stop)}"
            + (f" (exit code {code})" if code is not None else "")
            + ": the notebook called os._exit, crashed or ran out of memory; the exercises "
            "after it score 0"
        )
    elif status != STATUS_OK:
        graded.problems.append(status_line.get("message", "the grader could not run the notebook"))
    if any(line.get("truncated") for line in lines):
        graded.problems.append(
            f"the notebook printed more than {max_output >> 20} MB of output; the rest was dropped"
        )
    for index, error in sorted(errors.items()):
        name, value = error.get("ename", "Error"), str(error.get("evalue", ""))
        if name == "NotImplementedError" and value.startswith("Exercise"):
            continue  # an exercise not answered yet: its own score says so
        if name == "SystemExit":
            graded.problems.append(
                f"{where(index)} called sys.exit({value}): that cell stopped there, the kernel went on"
            )
        else:
            graded.problems.append(f"{where(index)} raised {name}: {value}"[:300])
    graded.status = status if status in (STATUS_OK, "timed out", "kernel died") else "runner error"

    unanswered = {
        i
        for i, e in errors.items()
        if e.get("ename") == "NotImplementedError" and str(e.get("evalue", "")).startswith("Exercise")
    }
    for score in graded.exercises:
        record = records.get(score.id)
        data = answers.get(score.id)
        if data is None:
            score.status = {"timed out": "timed out", "kernel died": "kernel died"}.get(status, "not run")
            score.messages.append(
                {
                    "timed out": "not reached: the notebook timed out before its answers were read",
                    "kernel died": "not reached: the kernel died before its answers were read",
                }.get(status, "its answers could not be read")
            )
            continue
        if "__error__" in data:
            score.status = "failed"
            score.messages.append(f"reading the answers failed: {data['__error__']}")
            continue
        if record is None or "error" in record:
            score.status = "failed"
            score.messages.append((record or {}).get("error", "it could not be scored"))
            continue
        points = score.points
        score.score = round(min(max(float(record.get("score", 0)), 0.0), points), 2)
        all_missing = all(isinstance(v, dict) and v.get("missing") for v in data.values())
        score.status = (
            "passed"
            if score.score == points
            else "not answered"
            if all_missing and score.score == 0
            else "failed"
        )
        for r in record.get("results", []):
            mark = "✔" if r.get("passed") else "✘"
            text = f"{mark} {r.get('requirement', '')}" + (f": {r['message']}" if r.get("message") else "")
            (score.hidden_messages if r.get("hidden") else score.messages).append(text)
        stubs = [
            i for i in unanswered if str(errors[i].get("evalue", "")).startswith(f"Exercise {score.id} ")
        ]
        if all_missing and stubs:
            score.messages.insert(
                0, f"not answered yet: cell {stubs[0] + 1} still raises NotImplementedError"
            )


# -- grading a class ------------------------------------------------------------------------------
def _safe(name: str) -> str:
    return re.sub(r"[^\w.-]+", "_", name).strip("._") or "student"


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
                        f"{mark} {graded.student:<16} {graded.notebook:<28} {_num(graded.total)}/"
                        f"{_num(graded.points)} points  {graded.status} ({graded.seconds:.1f} s)"
                    )
        except BaseException:  # Ctrl-C: start nothing more, stop what runs
            pool.shutdown(wait=False, cancel_futures=True)
            with _LOCK:
                for process in _RUNNING:
                    _kill(process)
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


def write_reports(results: Sequence[GradedSubmission], out: Path, **settings: Any) -> None:
    """Write scores.csv, scores.json, grades.csv and feedback_<student>.md to ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    columns = list(dict.fromkeys(e.id for g in results for e in g.exercises))
    with open(out / "scores.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "notebook", *columns, "total", "points", "status"])
        for g in results:
            scores = {e.id: _num(e.score) for e in g.exercises}
            writer.writerow(
                [
                    g.student,
                    g.notebook,
                    *(scores.get(c, "") for c in columns),
                    _num(g.total),
                    _num(g.points),
                    g.status,
                ]
            )
    _gradebook(results, out / "grades.csv")
    report = {"settings": settings, "submissions": [g.as_dict() for g in results]}
    if not settings.get("sandbox", True):
        report["warning"] = UNSANDBOXED
    (out / "scores.json").write_text(
        json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    by_student: dict[str, list[GradedSubmission]] = {}
    for g in results:
        by_student.setdefault(g.student, []).append(g)
    for student, graded in by_student.items():
        (out / f"feedback_{_safe(student)}.md").write_text(feedback(student, graded), encoding="utf-8")


def _gradebook(results: Sequence[GradedSubmission], path: Path) -> None:
    """A gradebook CSV in the layout Canvas imports: one row per student, one column per
    chapter, a "Points Possible" row; students are matched by their login (the
    submission folder's or file prefix's name)."""
    chapters = sorted({g.notebook for g in results})
    possible = {c: max(g.points for g in results if g.notebook == c) for c in chapters}
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *chapters])
        writer.writerow(["Points Possible", "", "", "", "", *(_num(possible[c]) for c in chapters)])
        students = sorted({g.student for g in results})
        for student in students:
            totals = {g.notebook: _num(g.total) for g in results if g.student == student}
            writer.writerow([student, "", "", student, "", *(totals.get(c, "") for c in chapters)])


def feedback(student: str, graded: Sequence[GradedSubmission], *, hidden: bool = True) -> str:
    """A student's feedback as Markdown (``hidden``: include hidden-test results)."""
    lines = [f"# Feedback for {student}", ""]
    for g in graded:
        lines += [
            f"## {g.notebook}: {_num(g.total)}/{_num(g.points)} points",
            "",
            f"Graded file: `{Path(g.file).name}` · run: {g.status} ({g.seconds:.1f} s)",
            "",
        ]
        if not g.sandboxed:
            lines += [f"**{UNSANDBOXED}**", ""]
        if g.problems:
            lines += ["Problems:", "", *[f"- {p}" for p in g.problems], ""]
        for e in g.exercises:
            mark = {"passed": "✔", "failed": "✘"}.get(e.status, "·")
            lines += [
                f"### {mark} Exercise {e.id} · {e.title}: {_num(e.score)}/{_num(e.points)} ({e.status})",
                "",
            ]
            lines += [f"- {m}" for m in e.messages]
            lines += [f"- (hidden test) {m}" for m in e.hidden_messages] if hidden else []
            lines += [""]
    return "\n".join(lines).rstrip() + "\n"


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
