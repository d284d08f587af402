"""What the grader writes: per-exercise scores, the reports, the gradebook, the feedback.

``write_reports`` writes ``scores.csv`` (one row per submission), ``scores.json`` (the
settings and every submission with its exercises and problems), ``grades.csv`` (Canvas's
gradebook import layout) and one ``feedback_<student>.md`` per student.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "STATUS_CONFLICT",
    "STATUS_GRADER_ERROR",
    "STATUS_NOT_ON_ROSTER",
    "STATUS_OK",
    "UNSANDBOXED",
    "ExerciseScore",
    "GradedSubmission",
    "feedback",
    "fill",
    "num",
    "write_reports",
]

STATUS_OK = "ok"
STATUS_GRADER_ERROR = "grader error"  # the grader failed (its runner or scorer never ran): not a score
STATUS_CONFLICT = "conflict"  # two notebooks of one chapter for one student: neither was graded
STATUS_NOT_ON_ROSTER = "not on roster"  # a login the roster lacks: its own numbers are unknown
MAX_PROBLEMS = 40  # problems listed per submission: a notebook cannot grow its report without bound
UNSANDBOXED = (
    "WARNING: graded WITHOUT a sandbox (--no-sandbox): the submissions ran with the grader's "
    "rights and could read and write its files"
)


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
    status: str  # ok, timed out, kernel died, invalid notebook, conflict, grader error, ...
    exercises: list[ExerciseScore]
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    sandboxed: bool = True
    variant: str = "published"  # whose numbers were graded: "published", "own", or "changed" (see variants)
    copied: list[str] = field(default_factory=list)  # exercises whose answer is the published solution's code

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


def num(x: float) -> str:
    return f"{x:g}"


def _safe(name: str) -> str:
    return re.sub(r"[^\w.-]+", "_", name).strip("._") or "student"


def write_reports(results: Sequence[GradedSubmission], out: Path, **settings: Any) -> None:
    """Write scores.csv, scores.json, grades.csv and feedback_<student>.md to ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    columns = list(dict.fromkeys(e.id for g in results for e in g.exercises))
    with open(out / "scores.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "notebook", *columns, "total", "points", "status"])
        for g in results:
            scores = {e.id: num(e.score) for e in g.exercises}
            writer.writerow(
                [
                    g.student,
                    g.notebook,
                    *(scores.get(c, "") for c in columns),
                    num(g.total),
                    num(g.points),
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
        writer.writerow(["Points Possible", "", "", "", "", *(num(possible[c]) for c in chapters)])
        students = sorted({g.student for g in results})
        for student in students:
            totals = {g.notebook: num(g.total) for g in results if g.student == student}
            writer.writerow([student, "", "", student, "", *(totals.get(c, "") for c in chapters)])


def feedback(student: str, graded: Sequence[GradedSubmission], *, hidden: bool = True) -> str:
    """A student's feedback as Markdown (``hidden``: include hidden-test results)."""
    lines = [f"# Feedback for {student}", ""]
    for g in graded:
        lines += [
            f"## {g.notebook}: {num(g.total)}/{num(g.points)} points",
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
                f"### {mark} Exercise {e.id} · {e.title}: {num(e.score)}/{num(e.points)} ({e.status})",
                "",
            ]
            lines += [f"- {m}" for m in e.messages]
            lines += [f"- (hidden test) {m}" for m in e.hidden_messages] if hidden else []
            lines += [""]
    return "\n".join(lines).rstrip() + "\n"


def _head(source: str) -> str:
    line = next((s.strip() for s in source.splitlines() if s.strip() and not s.strip().startswith("#")), "")
    return line if len(line) <= 60 else line[:57] + "..."


def _errors(lines: list[dict[str, Any]], cells: int) -> dict[int, dict[str, str]]:
    """The runner's error records by cell, kept only where they name a cell of the notebook
    (the notebook can write to the report channel: a forged record must not add problems
    without bound or break the report)."""
    errors = {}
    for line in lines:
        error = line.get("error")
        if isinstance(error, dict) and isinstance(error.get("cell"), int) and 0 <= error["cell"] < cells:
            errors[error["cell"]] = {
                "ename": str(error.get("ename", "Error"))[:200],
                "evalue": str(error.get("evalue", ""))[:1000],
            }
    return errors


def _where(nb: Any, index: Any) -> str:
    if not isinstance(index, int) or not 0 <= index < len(nb.cells):
        return "its start"
    head = _head(nb.cells[index].source)
    return f"cell {index + 1}" + (f" (`{head}`)" if head else "")


def _run_problem(
    nb: Any, lines: list[dict[str, Any]], *, timeout: float, cell_timeout: float | None
) -> tuple[str, str | None]:
    """The run's status, and the problem it makes (None for a run that ended well)."""
    status_line = next((line for line in reversed(lines) if "status" in line), {"status": "runner error"})
    status = str(status_line["status"])
    stop = status_line.get("cell")
    if stop is None and status != STATUS_OK:
        stop = max(
            (line["cell"] for line in lines if isinstance(line.get("cell"), int) and set(line) == {"cell"}),
            default=None,
        )
    if status == "timed out":
        why = (
            f"ran longer than the {num(cell_timeout or 0)} s cell limit"
            if status_line.get("limit") == "cell"
            else f"the notebook ran past its {num(timeout)} s time limit"
        )
        at = f" in {_where(nb, stop)}" if isinstance(stop, int) else ""
        return status, f"timed out{at}: {why}; its kernel was stopped and the exercises after it score 0"
    if status == "kernel died":
        code = status_line.get("exit_code")
        return status, (
            f"the kernel died in {_where(nb, stop)}"
            + (f" (exit code {code})" if code is not None else "")
            + ": the notebook called os._exit, crashed or ran out of memory; the exercises after it "
            "score 0"
        )
    if status != STATUS_OK:
        return "runner error", str(status_line.get("message", "the grader could not run the notebook"))[:500]
    return status, None


def _unanswered(error: dict[str, str]) -> bool:
    """An exercise's stub still raising (``NotAnswered``; ``NotImplementedError`` in copies made
    by earlier labkit versions): its own score says so, it is no problem of the run."""
    return error["ename"] in ("NotAnswered", "NotImplementedError") and error["evalue"].startswith("Exercise")


def _error_problems(nb: Any, errors: dict[int, dict[str, str]]) -> list[str]:
    problems = []
    for index, error in sorted(errors.items()):
        name, value = error["ename"], error["evalue"]
        if _unanswered(error):
            continue
        if name == "SystemExit":
            problems.append(
                f"{_where(nb, index)} called sys.exit({value}): that cell stopped there, the kernel went on"
            )
        else:
            problems.append(f"{_where(nb, index)} raised {name}: {value}"[:300])
    return problems


def _score(
    score: ExerciseScore, data: Any, record: dict[str, Any] | None, status: str, stubs: list[int]
) -> None:
    """Fill one exercise from its collected ``data`` and the scorer's ``record``."""
    if data is None:
        score.status = {"timed out": "timed out", "kernel died": "kernel died"}.get(status, "not run")
        score.messages.append(
            {
                "timed out": "not reached: the notebook timed out before its answers were read",
                "kernel died": "not reached: the kernel died before its answers were read",
            }.get(status, "its answers could not be read")
        )
        return
    if "__error__" in data:
        score.status = "failed"
        score.messages.append(f"reading the answers failed: {str(data['__error__'])[:500]}")
        return
    try:
        value = float((record or {})["score"])
    except (KeyError, TypeError, ValueError):
        score.status = "failed"
        score.messages.append(str((record or {}).get("error", "it could not be scored")))
        return
    score.score = round(min(max(value, 0.0), score.points), 2)
    all_missing = all(isinstance(v, dict) and v.get("missing") for v in data.values())
    score.status = (
        "passed"
        if score.score == score.points
        else "not answered"
        if all_missing and score.score == 0
        else "failed"
    )
    for r in record.get("results", []):
        mark = "✔" if r.get("passed") else "✘"
        text = f"{mark} {r.get('requirement', '')}" + (f": {r['message']}" if r.get("message") else "")
        (score.hidden_messages if r.get("hidden") else score.messages).append(text)
    if all_missing and stubs:
        score.messages.insert(0, f"not answered yet: cell {stubs[0] + 1} still raises its stub (NotAnswered)")


def fill(
    graded: GradedSubmission,
    nb: Any,
    lines: list[dict[str, Any]],
    answers: dict[str, Any],
    records: dict[str, dict[str, Any]],
    *,
    timeout: float,
    cell_timeout: float | None,
    max_output: int,
) -> None:
    """Fill ``graded`` from a run: the runner's report ``lines`` on the prepared notebook
    ``nb``, the collected ``answers`` and the scorer's ``records``; limits for the messages."""
    status, problem = _run_problem(nb, lines, timeout=timeout, cell_timeout=cell_timeout)
    graded.status = status
    graded.problems += [problem] if problem else []
    if any(line.get("truncated") for line in lines):
        graded.problems.append(
            f"the notebook printed more than {max_output >> 20} MB of output; the rest was dropped"
        )
    errors = _errors(lines, len(nb.cells))
    graded.problems += _error_problems(nb, errors)
    if len(graded.problems) > MAX_PROBLEMS:
        more = len(graded.problems) - MAX_PROBLEMS
        graded.problems[MAX_PROBLEMS:] = [f"... and {more} more problems of the same kinds"]
    for score in graded.exercises:
        stubs = [
            i for i, e in errors.items() if _unanswered(e) and e["evalue"].startswith(f"Exercise {score.id} ")
        ]
        _score(score, answers.get(score.id), records.get(score.id), status, stubs)
