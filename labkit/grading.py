"""Grade a folder of submitted notebooks, safely, several at once.

``labkit grade SUBMISSIONS... --out DIR`` runs every submitted notebook (files or folders
of ``.ipynb``) and writes ``DIR/scores.csv``, ``DIR/scores.json`` and one
``DIR/feedback_<student>.md`` per student.

**What is graded.** The exercises, their titles and points come from the *reference*
notebook (``--reference``; by default the course notebook of the same name as the
submission).  Every reference exercise gets a score; one that never ran scores 0 with the
reason.  Before running, each feedback cell of the submission (a code cell that calls
``labkit.exercise("N.M", ...)``) is replaced by the reference's cell for that exercise, as
nbgrader does for its grade cells: edited feedback cells do not count and hidden tests
removed from the student copy run again.  Reference cells tagged ``hidden-tests`` are put
back after the cell they follow in the reference (matched by cell id).

**Who is who.** ``<folder>/<chapter>.ipynb`` (a file named like its reference) belongs to
student ``<folder>``; ``<student>_<chapter>.ipynb`` or ``<student>-<chapter>.ipynb`` to
``<student>``; any other file, e.g. ``alice.ipynb`` with ``--reference``, to its stem.

**How it runs.** Each submission is copied into a fresh temporary working directory (the
kernel's cwd) with its own copy of the course models (``LABKIT_MODELS`` points at it) and
runs in its own worker process and its own kernel, ``--jobs`` at a time (default: the
available cores).  Cells run in order with errors allowed, so a failing cell does not stop
later exercises; each cell has ``--cell-timeout`` seconds and the whole notebook
``--timeout``; output beyond ``--max-output`` MB is dropped.  The graded results are the
``LABKIT_GRADES`` lines the feedback cells write.  A submission that is not valid JSON,
raises, calls ``sys.exit``, loops forever (timeout: the kernel is killed, later exercises
score 0 "timed out"), kills its kernel (``os._exit``), deletes files in its working
directory or floods its output gets a line saying so, and does not change another
submission's run or score.  Submitted files are read, never written (their hashes are
compared after grading).

**What it writes.** ``scores.csv``: one row per submission (``student, notebook``, one
column per exercise id, ``total, points, status``).  ``scores.json``: ``settings`` and a
list of ``submissions``, each with student, notebook, file, reference, status, problems,
seconds, total, points and ``exercises`` (id → title, points, score, status, messages;
status is passed, failed, not run, timed out, kernel died or not graded).
``feedback_<student>.md``: the problems and every exercise's feedback, per chapter.

This isolates accidents, not attacks: a submission runs as the instructor's user, and code
in a kernel can forge its own grade lines.  Run untrusted submissions in a container.
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

__all__ = [
    "ExerciseScore",
    "GradedSubmission",
    "ReferenceExercise",
    "Submission",
    "add_commands",
    "find_submissions",
    "grade",
    "reference_exercises",
    "restore_reference_cells",
]

GRACE = 30.0          # s a worker may overrun the notebook limit before it is killed
LOG_LIMIT = 4 << 20   # bytes of a grades log that are read
STATUS_OK = "ok"


# -- what is graded -------------------------------------------------------------------------
@dataclass(frozen=True)
class ReferenceExercise:
    """An exercise the reference notebook defines, with the cell that grades it."""

    id: str
    title: str
    points: float
    cell: int


def reference_exercises(path: Path | str) -> list[ReferenceExercise]:
    """The exercises of a reference notebook, in order (ids, titles and points)."""
    import nbformat

    from .student import exercise_calls

    nb = nbformat.read(Path(path), as_version=4)
    found: dict[str, ReferenceExercise] = {}
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for call in exercise_calls(cell.source):
            if call.points is None:
                raise ValueError(f"{path}: exercise {call.id} has no literal points=...; the grader "
                                 "reads points from the reference notebook's source")
            found.setdefault(call.id, ReferenceExercise(call.id, call.title, call.points, index))
    return list(found.values())


@dataclass
class Submission:
    """One submitted notebook, whose it is, and what it is graded against."""

    path: Path
    student: str
    reference: Path | None
    problem: str = ""       # why it cannot be graded, found before running

    @property
    def notebook(self) -> str:
        return self.reference.stem if self.reference else self.path.stem


def _expand(paths: Iterable[Path | str], skip: Path | None) -> list[Path]:
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.ipynb") if p.is_file()
                            and not any(part.startswith(".") for part in p.relative_to(path).parts)
                            and not (skip and p.resolve().is_relative_to(skip)))
        elif path.is_file():
            found.append(path)
        else:
            raise FileNotFoundError(f"no such submission file or folder: {path}")
    return list(dict.fromkeys(found))


def _whose(path: Path, chapter: str) -> str:
    stem = path.stem
    if stem == chapter:
        return path.resolve().parent.name
    for sep in ("_", "-", " "):
        if stem.endswith(sep + chapter) and len(stem) > len(chapter) + 1:
            return stem[: -len(chapter) - 1]
    return stem


def find_submissions(paths: Iterable[Path | str], reference: Path | str | None = None, *,
                     skip: Path | None = None) -> list[Submission]:
    """The submissions in ``paths`` (files, or folders searched recursively), with their
    students and references (see the module docstring for the naming rule).

    Raises ``ValueError`` when two submissions are the same student's for the same chapter.
    """
    from .notebooks import course_notebooks

    course = {p.stem: p for p in course_notebooks()}
    subs = []
    for path in _expand(paths, skip):
        if reference is not None:
            ref: Path | None = Path(reference)
        else:
            ref = course.get(path.stem) or next(
                (p for stem, p in sorted(course.items(), key=lambda kv: -len(kv[0]))
                 if re.search(rf"(^|[_\- ]){re.escape(stem)}$", path.stem)), None)
        problem = "" if ref else (
            f"no reference notebook for {path.name}: name it like its chapter "
            f"(e.g. {next(iter(course), 'NN_chapter')}.ipynb) or pass --reference")
        subs.append(Submission(path, _whose(path, ref.stem) if ref else path.stem, ref, problem))
    seen: dict[tuple[str, str], Path] = {}
    for sub in subs:
        key = (sub.student, sub.notebook)
        if key in seen:
            raise ValueError(f"two submissions of {sub.notebook} for student {sub.student!r}: "
                             f"{seen[key]} and {sub.path}; rename one")
        seen[key] = sub.path
    return subs


# -- results ------------------------------------------------------------------------------------
@dataclass
class ExerciseScore:
    """The grade of one exercise of one submission."""

    id: str
    title: str
    points: float
    score: float = 0.0
    status: str = "not run"    # passed, failed, not run, timed out, kernel died, not graded
    messages: list[str] = field(default_factory=list)


@dataclass
class GradedSubmission:
    """Everything the grader found out about one submission."""

    student: str
    notebook: str
    file: str
    reference: str
    status: str                      # ok, timed out, kernel died, invalid notebook, ...
    exercises: list[ExerciseScore]
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

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


# -- preparing a submission ------------------------------------------------------------------------
def _differs(a: str, b: str) -> bool:
    return re.sub(r"\s+", "", a) != re.sub(r"\s+", "", b)


def restore_reference_cells(sub_nb: Any, ref_nb: Any) -> list[str]:
    """Put the reference's feedback cells and hidden-test cells into a submission (in place;
    outputs are cleared) and return notes on the feedback cells that had been edited."""
    import nbformat

    from .student import HIDDEN_TAGS, StudentCopyError, exercise_calls, has_solution, student_notebook

    feedback: dict[str, Any] = {}
    for cell in ref_nb.cells:
        if cell.cell_type == "code" and not has_solution(cell.source):
            for call in exercise_calls(cell.source)[:1]:
                feedback.setdefault(call.id, cell)
    try:
        handed_out = {c.get("id"): c.source for c in student_notebook(ref_nb).notebook.cells}
    except StudentCopyError:
        handed_out = {}
    notes = []
    for cell in sub_nb.cells:
        if cell.get("cell_type") != "code":
            continue
        calls = exercise_calls(cell.source)
        if calls and calls[0].id in feedback:
            ref = feedback[calls[0].id]
            if _differs(cell.source, ref.source) and _differs(cell.source, handed_out.get(ref.get("id"), "")):
                notes.append(f"the feedback cell of exercise {calls[0].id} was edited; the original "
                             "was run instead")
            cell.source = ref.source
    ids = [c.get("id") for c in sub_nb.cells]
    for index, cell in enumerate(ref_nb.cells):
        if set(cell.get("metadata", {}).get("tags", [])) & HIDDEN_TAGS:
            if cell.get("id") in ids:
                continue
            anchor = ref_nb.cells[index - 1].get("id") if index else None
            at = ids.index(anchor) + 1 if anchor in ids else len(sub_nb.cells)
            sub_nb.cells.insert(at, nbformat.from_dict({**cell, "outputs": [], "execution_count": None}))
            ids.insert(at, cell.get("id"))
    for cell in sub_nb.cells:
        if cell.get("cell_type") == "code":
            cell["outputs"], cell["execution_count"] = [], None
    return notes


def _snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink()}


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- running one submission (parent side) --------------------------------------------------------------
_RUNNING: set[subprocess.Popen] = set()
_LOCK = threading.Lock()


def _kill_group(pid: int | None) -> None:
    """Kill a worker's or kernel's whole session (each runs as its own group leader)."""
    if pid:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _run(sub: Submission, exercises: list[ReferenceExercise], *, timeout: float, cell_timeout: float | None,
         models: Path, max_output: int, keep: Path | None) -> GradedSubmission:
    import nbformat

    start = time.perf_counter()
    graded = GradedSubmission(sub.student, sub.notebook, str(sub.path), str(sub.reference or ""),
                              STATUS_OK, [ExerciseScore(e.id, e.title, e.points) for e in exercises])

    def fail(status: str, problem: str, reason: str) -> GradedSubmission:
        graded.status = status
        graded.problems.append(problem)
        for e in graded.exercises:
            e.status, e.messages = "not graded", [reason]
        graded.seconds = time.perf_counter() - start
        return graded

    if sub.problem:
        return fail("no reference", sub.problem, sub.problem)
    try:
        text = sub.path.read_text(encoding="utf-8")
        json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return fail("invalid notebook", f"the file is not valid JSON ({exc}); nothing could be run",
                    "the submission is not a valid notebook file")
    try:
        sub_nb = nbformat.reads(text, as_version=4)
        ref_nb = nbformat.read(sub.reference, as_version=4)
        if not isinstance(sub_nb.get("cells"), list):
            raise ValueError("it has no list of cells")
        notes = restore_reference_cells(sub_nb, ref_nb)
    except Exception as exc:  # nbformat raises many kinds for a broken notebook
        return fail("invalid notebook", f"the file is not a readable notebook ({type(exc).__name__}: "
                    f"{exc}); nothing could be run", "the submission is not a valid notebook file")
    graded.problems += notes

    sandbox = Path(tempfile.mkdtemp(prefix="labkit-sandbox-"))
    state = Path(tempfile.mkdtemp(prefix="labkit-grader-"))
    try:
        work = sandbox / "work"
        work.mkdir()
        shutil.copytree(models, sandbox / "models")
        notebook = work / f"{sub.notebook}.ipynb"
        nbformat.write(sub_nb, notebook)
        before = {f"work/{k}": v for k, v in _snapshot(work).items()}
        before |= {f"models/{k}": v for k, v in _snapshot(sandbox / "models").items()}
        spec = {
            "notebook": str(notebook), "cwd": str(work), "state": str(state),
            "timeout": timeout, "cell_timeout": cell_timeout, "max_output": max_output,
            "keep": bool(keep),
        }
        (state / "spec.json").write_text(json.dumps(spec))
        env = {k: v for k, v in os.environ.items()
               if k not in ("LABKIT_CLAIMS", "JPY_SESSION_NAME", "JPY_PARENT_PID")}
        env.update(LABKIT_GRADES=str(state / "grades.jsonl"), LABKIT_MODELS=str(sandbox / "models"),
                   LABKIT_NOTEBOOK=sub.notebook, PYTHONUNBUFFERED="1")
        package = str(Path(__file__).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package, env.get("PYTHONPATH")) if p)
        with open(state / "worker.log", "wb") as log:
            worker = subprocess.Popen([sys.executable, "-m", "labkit.grading", str(state / "spec.json")],
                                      cwd=state, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                      stderr=subprocess.STDOUT, start_new_session=True)
            with _LOCK:
                _RUNNING.add(worker)
            try:
                worker.wait(timeout=timeout + GRACE)
                killed = False
            except subprocess.TimeoutExpired:
                _kill_group(worker.pid)
                worker.wait()
                killed = True
            finally:
                with _LOCK:
                    _RUNNING.discard(worker)
                _kill_group(_read_pid(state / "kernel.pid"))   # and whatever it started
        result = _load(state / "result.json")
        progress = _read_pid(state / "progress")
        if killed:
            result = {"status": "timed out", "cell": progress, "limit": "notebook"}
        elif result is None:
            tail = (state / "worker.log").read_bytes()[-600:].decode("utf-8", "replace").strip()
            result = {"status": "grader error", "cell": progress,
                      "message": f"the grader's worker stopped (exit code {worker.returncode})"
                                 + (f": {tail.splitlines()[-1]}" if tail else "")}
        after = {f"work/{k}": v for k, v in _snapshot(work).items()}
        after |= {f"models/{k}": v for k, v in _snapshot(sandbox / "models").items()}
        records = _records(state / "grades.jsonl")
        if keep and (state / "executed.ipynb").is_file():
            keep.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(state / "executed.ipynb", keep / f"{_safe(sub.student)}__{sub.notebook}.ipynb")
    finally:
        shutil.rmtree(sandbox, ignore_errors=True)
        shutil.rmtree(state, ignore_errors=True)

    for verb, paths in (("deleted", [k for k in before if k not in after]),
                        ("changed", [k for k in before if k in after and before[k] != after[k]])):
        cwd = [k.removeprefix("work/") for k in paths if k.startswith("work/")]
        copies = [k for k in paths if not k.startswith("work/")]
        if cwd:
            graded.problems.append(f"the notebook {verb} files in its working directory: {', '.join(cwd)} "
                                   "(it ran on a copy: the submission itself is unchanged)")
        if copies:
            graded.problems.append(f"the notebook {verb} its copy of the course models: {', '.join(copies)} "
                                   "(the course's models are unchanged)")
    _score(graded, exercises, sub_nb, result, records, timeout, cell_timeout, max_output)
    graded.seconds = time.perf_counter() - start
    return graded


def _load(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _records(path: Path) -> list[dict[str, Any]]:
    try:
        with open(path, "rb") as handle:
            data = handle.read(LOG_LIMIT)
    except OSError:
        return []
    records = []
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and "exercise" in record:
            records.append(record)
    return records


def _head(source: str) -> str:
    line = next((s.strip() for s in source.splitlines() if s.strip() and not s.strip().startswith("#")), "")
    return line if len(line) <= 60 else line[:57] + "..."


def _score(graded: GradedSubmission, exercises: list[ReferenceExercise], nb: Any,
           result: dict[str, Any], records: list[dict[str, Any]], timeout: float,
           cell_timeout: float | None, max_output: int) -> None:
    from .student import exercise_calls

    status = result.get("status", "grader error")
    stop = result.get("cell")
    feedback_cell = {}
    for index, cell in enumerate(nb.cells):
        if cell.get("cell_type") == "code":
            for call in exercise_calls(cell.source):
                feedback_cell.setdefault(call.id, index)
    errors = {e["cell"]: e for e in result.get("errors", [])}

    def where(index: int | None) -> str:
        if not isinstance(index, int) or not 0 <= index < len(nb.cells):
            return "its start"
        head = _head(nb.cells[index].source)
        return f"cell {index + 1}" + (f" (`{head}`)" if head else "")

    # problems of the run as a whole
    if status == "timed out":
        limit = result.get("limit")
        why = (f"ran longer than the {_num(cell_timeout or 0)} s cell limit" if limit == "cell"
               else f"the notebook ran past its {_num(timeout)} s time limit")
        at = f" in {where(stop)}" if isinstance(stop, int) else ""
        graded.problems.append(f"timed out{at}: {why}; its kernel was killed and the exercises after it "
                               "score 0")
    elif status == "kernel died":
        code = result.get("exit_code")
        exit_code = f" (exit code {code})" if code is not None else ""
        graded.problems.append(f"the kernel died in {where(stop)}{exit_code}: the notebook called os._exit, "
                               "crashed or ran out of memory; the exercises after it score 0")
    elif status == "grader error":
        graded.problems.append(result.get("message", "the grader could not run the notebook"))
    if result.get("truncated"):
        graded.problems.append(f"the notebook printed more than {max_output >> 20} MB of output; the rest "
                               "was dropped")
    for index, error in sorted(errors.items()):
        name, value = error.get("ename", "Error"), error.get("evalue", "")
        if name == "ExerciseFailed":
            continue
        if name == "NotImplementedError" and value.startswith("Exercise"):
            continue   # an exercise not answered yet: its own feedback says so
        if name == "SystemExit":
            graded.problems.append(f"{where(index)} called sys.exit({value}): that cell stopped there, "
                                   "the kernel went on")
        else:
            graded.problems.append(f"{where(index)} raised {name}: {value}"[:300])

    # each exercise
    latest = {}
    for record in records:
        latest[str(record.get("exercise"))] = record
    known = {e.id for e in exercises}
    unknown = sorted(set(latest) - known)
    if unknown:
        graded.problems.append("ignored grades of exercises the reference does not define: "
                               + ", ".join(unknown))
    previous = -1
    for ex, score in zip(exercises, graded.exercises, strict=True):
        index = feedback_cell.get(ex.id)
        answer_errors = [(i, e) for i, e in sorted(errors.items())
                         if index is not None and previous < i < index and e.get("ename") != "ExerciseFailed"]
        previous = index if index is not None else previous
        record = latest.get(ex.id)
        if record is not None:
            try:
                got, out_of = float(record.get("score", 0)), float(record.get("points") or ex.points)
            except (TypeError, ValueError):
                got, out_of = 0.0, ex.points
            score.score = round(min(max(got * ex.points / out_of if out_of > 0 else 0.0, 0.0), ex.points), 2)
            score.status = "passed" if score.score == ex.points else "failed"
            for r in record.get("results", []) if isinstance(record.get("results"), list) else []:
                if isinstance(r, dict):
                    mark = "✔" if r.get("passed") else "✘"
                    message = f": {r['message']}" if r.get("message") else ""
                    score.messages.append(f"{mark} {r.get('requirement', '')}{message}")
        elif index is None:
            score.messages.append(f"its feedback cell (labkit.exercise(\"{ex.id}\", ...)) is missing from "
                                  "the submission")
        elif status in ("timed out", "kernel died", "grader error") and (stop is None or index >= stop):
            score.status = status if status != "grader error" else "not run"
            score.messages.append(
                {"timed out": "not reached: the notebook timed out before its feedback cell",
                 "kernel died": "not reached: the kernel died before its feedback cell"}
                .get(status, "not reached: the grader could not finish the notebook"))
        elif index in errors:
            e = errors[index]
            score.messages.append(f"its feedback cell raised {e.get('ename')}: {e.get('evalue')}"[:300])
        else:
            score.messages.append("its feedback cell ran but graded nothing")
        for i, e in answer_errors:
            value = str(e.get("evalue", ""))
            if e.get("ename") == "NotImplementedError" and value.startswith("Exercise"):
                score.messages.append(f"not answered yet: cell {i + 1} still raises NotImplementedError "
                                      f"({value.split(':')[0]})")
            else:
                score.messages.append(f"{where(i)} raised {e.get('ename')}: {e.get('evalue')}"[:300])
    graded.status = {"ok": STATUS_OK}.get(status, status)


# -- the worker (one process per submission) ------------------------------------------------------------
def _work(spec_path: str) -> int:
    """Run one prepared notebook (``python -m labkit.grading SPEC``) and write result.json."""
    import resource

    import nbformat
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    spec = json.loads(Path(spec_path).read_text())
    state = Path(spec["state"])
    with contextlib.suppress(ValueError, OSError):  # no file (output, video, log) beyond 1 GiB
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 30, 1 << 30))
    deadline = time.monotonic() + float(spec["timeout"])
    cell_limit = spec["cell_timeout"]
    max_output = int(spec["max_output"])
    nb = nbformat.read(spec["notebook"], as_version=4)
    result: dict[str, Any] = {"status": "ok", "errors": [], "truncated": False}
    used: dict[str, float] = {}

    class Client(NotebookClient):
        budget = max_output

        def output(self, outs, msg, display_id, cell_index):  # type: ignore[override]
            content = msg.get("content", {})
            data = content.get("data", {}).values()
            size = len(content.get("text", "")) + sum(len(v) if isinstance(v, str) else len(json.dumps(v))
                                                      for v in data)
            size += sum(len(t) for t in content.get("traceback", []))
            if size > self.budget:
                if not result["truncated"]:
                    outs.append(nbformat.v4.new_output(
                        "stream", name="stderr", text=f"[labkit grade: output beyond {max_output >> 20} MB "
                                                      "dropped]\n"))
                result["truncated"] = True
                self.budget = 0
                return None
            self.budget -= size
            return super().output(outs, msg, display_id, cell_index)

    def timeout_for(cell: Any) -> int:
        remaining = deadline - time.monotonic()
        limit = remaining if cell_limit is None else min(float(cell_limit), remaining)
        used["limit"] = limit
        used["kind"] = "cell" if cell_limit is not None and float(cell_limit) <= remaining else "notebook"
        return max(1, int(limit + 0.999))

    def executed(cell: Any, cell_index: int, execute_reply: dict[str, Any]) -> None:
        content = (execute_reply or {}).get("content", {})
        if content.get("status") == "error":
            result["errors"].append({"cell": cell_index, "ename": str(content.get("ename", ""))[:200],
                                     "evalue": str(content.get("evalue", ""))[:1000]})

    sockets = Path(tempfile.mkdtemp(prefix="lk-"))   # short: IPC socket paths are limited to ~100 bytes
    manager = AsyncKernelManager(kernel_name="python3", transport="ipc", ip=str(sockets / "k"))
    client = Client(nb, km=manager, timeout_func=timeout_for, allow_errors=True, record_timing=False,
                    shutdown_kernel="immediate", interrupt_on_timeout=False, kernel_name="python3",
                    on_cell_executed=executed, resources={"metadata": {"path": spec["cwd"]}})
    try:
        with client.setup_kernel(cwd=spec["cwd"]):
            pid = getattr(manager.provisioner, "pid", None)
            if pid:
                (state / "kernel.pid").write_text(str(pid))
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                (state / "progress").write_text(str(index))
                if deadline - time.monotonic() <= 0:
                    result.update(status="timed out", cell=index, limit="notebook")
                    break
                try:
                    client.execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
                except CellTimeoutError:
                    result.update(status="timed out", cell=index, limit=used.get("kind", "cell"))
                    break
                except DeadKernelError:
                    process = getattr(manager.provisioner, "process", None)
                    code = process.poll() if process is not None else None
                    result.update(status="kernel died", cell=index, exit_code=code)
                    break
    except DeadKernelError:  # died while starting or shutting down
        result.setdefault("cell", None)
        if result["status"] == "ok":
            result.update(status="kernel died")
    except Exception as exc:
        result.update(status="grader error", message=f"the grader could not run it: {type(exc).__name__}: "
                      f"{exc}"[:500])
    finally:
        _kill_group(_read_pid(state / "kernel.pid"))
        shutil.rmtree(sockets, ignore_errors=True)
    if spec.get("keep"):
        with contextlib.suppress(Exception):  # an unwritable executed notebook loses only this copy
            nbformat.write(nb, state / "executed.ipynb")
    (state / "result.json").write_text(json.dumps(result))
    return 0


# -- grading a class -------------------------------------------------------------------------------------
def _safe(name: str) -> str:
    return re.sub(r"[^\w.-]+", "_", name).strip("._") or "student"


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def grade(submissions: Iterable[Path | str], out: Path | str, *, reference: Path | str | None = None,
          timeout: float = 600, cell_timeout: float | None = 120, jobs: int | None = None,
          models: Path | str | None = None, max_output: float = 16, keep_executed: bool = False,
          echo: Callable[[str], None] | None = None) -> list[GradedSubmission]:
    """Grade notebooks and write ``scores.csv``, ``scores.json`` and ``feedback_<student>.md``
    to ``out``; returns the graded submissions (sorted by student, then chapter).

    timeout / cell_timeout: seconds per notebook / per cell (``None``: no cell limit);
    jobs: submissions run at once (default: available cores); models: the course models
    each run gets a copy of (default: labkit's models folder); max_output: MB of output
    kept per notebook; keep_executed: also save each executed notebook in
    ``out/executed/``; echo: called with one line per finished submission.
    """
    from .models import models_dir

    out = Path(out)
    subs = find_submissions(submissions, reference, skip=out.resolve())
    if not subs:
        raise FileNotFoundError("no submitted notebooks found in " + ", ".join(map(str, submissions)))
    models = Path(models) if models else models_dir()
    references: dict[Path, list[ReferenceExercise]] = {}
    for sub in subs:
        if sub.reference and sub.reference not in references:
            references[sub.reference] = reference_exercises(sub.reference)
    hashes = {sub.path: _digest(sub.path) for sub in subs}
    keep = out / "executed" if keep_executed else None
    workers = max(1, min(jobs or _cores(), len(subs)))
    results: list[GradedSubmission] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(_run, sub, references.get(sub.reference, []) if sub.reference else [],
                               timeout=timeout, cell_timeout=cell_timeout, models=models,
                               max_output=int(max_output * (1 << 20)), keep=keep): sub for sub in subs}
        try:
            for future in concurrent.futures.as_completed(futures):
                sub = futures[future]
                try:
                    graded = future.result()
                except Exception as exc:  # a grader bug must not lose the other students
                    graded = GradedSubmission(sub.student, sub.notebook, str(sub.path), str(sub.reference),
                                              "grader error", [ExerciseScore(e.id, e.title, e.points,
                                                                             status="not graded")
                                                               for e in references.get(sub.reference, [])],
                                              [f"the grader failed on this submission: {exc!r}"])
                results.append(graded)
                if echo:
                    mark = "✔" if graded.status == STATUS_OK else "✘"
                    echo(f"{mark} {graded.student:<16} {graded.notebook:<28} {_num(graded.total)}/"
                         f"{_num(graded.points)} points  {graded.status} ({graded.seconds:.1f} s)")
        except BaseException:   # Ctrl-C: start nothing more, stop what runs
            pool.shutdown(wait=False, cancel_futures=True)
            with _LOCK:
                for worker in _RUNNING:
                    _kill_group(worker.pid)
            raise
    for sub in subs:
        if not sub.path.is_file() or _digest(sub.path) != hashes[sub.path]:  # never expected
            graded = next(g for g in results if g.file == str(sub.path))
            graded.problems.append("THE SUBMITTED FILE CHANGED DURING GRADING (the grader never writes "
                                   "it: something else did)")
    results.sort(key=lambda g: (g.student, g.notebook))
    from . import __version__

    _write(results, out, labkit=__version__, timeout=timeout, cell_timeout=cell_timeout,
           max_output_mb=max_output, jobs=workers, reference=str(reference) if reference else "per file")
    return results


def _write(results: Sequence[GradedSubmission], out: Path, **settings: Any) -> None:
    out.mkdir(parents=True, exist_ok=True)
    columns = list(dict.fromkeys(e.id for g in results for e in g.exercises))
    with open(out / "scores.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "notebook", *columns, "total", "points", "status"])
        for g in results:
            scores = {e.id: _num(e.score) for e in g.exercises}
            writer.writerow([g.student, g.notebook, *(scores.get(c, "") for c in columns),
                             _num(g.total), _num(g.points), g.status])
    report = {"settings": settings, "submissions": [g.as_dict() for g in results]}
    (out / "scores.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n",
                                     encoding="utf-8")
    by_student: dict[str, list[GradedSubmission]] = {}
    for g in results:
        by_student.setdefault(g.student, []).append(g)
    for student, graded in by_student.items():
        (out / f"feedback_{_safe(student)}.md").write_text(_feedback(student, graded), encoding="utf-8")


def _feedback(student: str, graded: Sequence[GradedSubmission]) -> str:
    lines = [f"# Feedback for {student}", ""]
    for g in graded:
        lines += [f"## {g.notebook}: {_num(g.total)}/{_num(g.points)} points", "",
                  f"Graded file: `{Path(g.file).name}` · run: {g.status} ({g.seconds:.1f} s)", ""]
        if g.problems:
            lines += ["Problems:", "", *[f"- {p}" for p in g.problems], ""]
        for e in g.exercises:
            mark = {"passed": "✔", "failed": "✘"}.get(e.status, "·")
            lines += [f"### {mark} Exercise {e.id} · {e.title}: {_num(e.score)}/{_num(e.points)} "
                      f"({e.status})", ""]
            lines += [f"- {m}" for m in e.messages] + [""]
    return "\n".join(lines).rstrip() + "\n"


# -- command line -------------------------------------------------------------------------------------
def _main(args: argparse.Namespace) -> int:
    try:
        results = grade(args.submissions, args.out, reference=args.reference, timeout=args.timeout,
                        cell_timeout=args.cell_timeout or None, jobs=args.jobs, models=args.models,
                        max_output=args.max_output, keep_executed=args.keep_executed, echo=print)
    except (FileNotFoundError, ValueError) as exc:
        print(f"labkit grade: {exc}")
        return 2
    for g in results:
        for problem in g.problems:
            print(f"  {g.student} · {g.notebook}: {problem}")
    students = len({g.student for g in results})
    print(f"\n{len(results)} submissions of {students} students graded: {Path(args.out) / 'scores.csv'}, "
          f"scores.json and {students} feedback_<student>.md files in {args.out}")
    changed = any("CHANGED DURING GRADING" in p for g in results for p in g.problems)
    return 1 if changed else 0


def add_commands(subparsers: Any) -> None:
    """Register ``labkit grade`` on labkit's argparse subparsers."""
    parser = subparsers.add_parser(
        "grade", help="grade submitted notebooks: a score table and a feedback file per student",
        description="Run every submitted notebook in its own kernel, on a copy, several at once, and "
        "write scores.csv, scores.json and feedback_<student>.md to --out. Students are named after "
        "the folder of a file named like its chapter (alice/00_start_here.ipynb), the prefix of "
        "<student>_<chapter>.ipynb, or else the file's stem.")
    parser.add_argument("submissions", nargs="+", metavar="SUBMISSION",
                        help="submitted notebooks, or folders searched for them")
    parser.add_argument("--out", required=True, help="folder for scores.csv, scores.json and feedback")
    parser.add_argument("--reference", help="the solution notebook that defines the exercises "
                        "(default: the course notebook of the same name)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per notebook (default 600)")
    parser.add_argument("--cell-timeout", type=float, default=120,
                        help="seconds per cell, 0 for none (default 120)")
    parser.add_argument("--jobs", type=int, help="notebooks run at once (default: the available cores)")
    parser.add_argument("--models", help="course models each run gets a copy of (default: labkit's)")
    parser.add_argument("--max-output", type=float, default=16, help="MB of output kept per notebook")
    parser.add_argument("--keep-executed", action="store_true",
                        help="also save the executed notebooks in OUT/executed")
    parser.set_defaults(run=_main)


if __name__ == "__main__":
    sys.exit(_work(sys.argv[1]))
