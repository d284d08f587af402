"""Exercises with immediate, specific feedback and points.

A notebook poses an exercise in three cells: the question (markdown), the learner's
answer (code, with the reference answer between ``### BEGIN SOLUTION`` and
``### END SOLUTION`` lines, the nbgrader convention), and a feedback cell::

    with labkit.exercise("1.1", "Mass of a default box", points=2) as ex:
        ex.close("box_mass", model.body_mass[1], rtol=1e-6, unit="kg",
                 hint="size holds half-lengths", mistakes={6.0: "..."})

Requirements read the learner's variables by name from the notebook, so a missing
answer gets "you have not defined box_mass yet" instead of a NameError.  When any
requirement fails, the feedback is shown and :class:`ExerciseFailed` is raised, so a
wrong reference solution fails CI.  With ``LABKIT_GRADES=path`` each graded exercise is
appended to that file as one JSON line (exercise, points, score, per-requirement
results): the grader reads it.
"""

from __future__ import annotations

import html
import math
import sys
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import numpy as np

from . import reporting
from .formatting import fmt

__all__ = ["Exercise", "ExerciseFailed", "exercise"]

_MISSING = object()


class ExerciseFailed(AssertionError):
    """An exercise answer did not meet a requirement; the message is the feedback."""


@dataclass
class Result:
    """One requirement of an exercise: what was asked, whether it was met, and why not."""

    requirement: str
    passed: bool
    weight: float
    message: str = ""
    hint: str = ""


class Exercise:
    """An exercise being graded; use it as a context manager (see the module docstring)."""

    def __init__(self, number: str, title: str, points: float, namespace: dict[str, Any]):
        self.number = number
        self.title = title
        self.points = points
        self.results: list[Result] = []
        self._namespace = namespace

    # -- reading the learner's answer ----------------------------------------------
    def value(self, name: str) -> Any:
        """The learner's variable ``name`` (raises :class:`ExerciseFailed` if undefined)."""
        value = self._namespace.get(name, _MISSING)
        if value is _MISSING or value is Ellipsis:
            raise ExerciseFailed(
                f"you have not defined `{name}` yet: write your answer in the cell above "
                f"(it should assign `{name}`) and run it"
            )
        return value

    def _missing(self, name: str, requirement: str, weight: float) -> bool:
        value = self._namespace.get(name, _MISSING)
        if value is _MISSING or value is Ellipsis:
            self.results.append(Result(
                requirement, False, weight,
                f"you have not defined `{name}` yet: assign it in the answer cell above and run it"))
            return True
        return False

    # -- requirements ----------------------------------------------------------------
    def close(self, name: str, target: Any, *, rtol: float = 1e-6, atol: float = 0.0,
              unit: str = "", hint: str = "", mistakes: dict[float, str] | None = None,
              weight: float = 1.0, requirement: str | None = None) -> bool:
        """Require the learner's number (or array) ``name`` to be close to ``target``.

        rtol/atol: relative/absolute tolerance (the larger applies).  ``mistakes`` maps
        typical wrong answers to a specific explanation, shown when the answer is one.
        The target is never shown to the learner.
        """
        requirement = requirement or f"`{name}` has the right value"
        if self._missing(name, requirement, weight):
            return False
        value = self._namespace[name]
        try:
            got = np.asarray(value, dtype=float)
            want = np.asarray(target, dtype=float)
        except (TypeError, ValueError):
            self.results.append(Result(requirement, False, weight,
                                       f"`{name}` should be a number, got {type(value).__name__}",
                                       hint))
            return False
        if got.shape != want.shape:
            self.results.append(Result(
                requirement, False, weight,
                f"`{name}` should have shape {want.shape}, but has shape {got.shape}", hint))
            return False
        ok = bool(np.all(np.abs(got - want) <= np.maximum(atol, rtol * np.abs(want))))
        message = ""
        if not ok:
            message = f"`{name}` = {fmt(value, unit=unit)} is not right"
            for wrong, why in (mistakes or {}).items():
                if got.shape == () and math.isclose(float(got), wrong, rel_tol=1e-3, abs_tol=1e-12):
                    message += f": {why}"
                    break
        self.results.append(Result(requirement, ok, weight, message, "" if ok else hint))
        return ok

    def equal(self, name: str, target: Any, *, hint: str = "", weight: float = 1.0,
              requirement: str | None = None) -> bool:
        """Require the learner's ``name`` to equal ``target`` exactly (counts, names, tuples)."""
        requirement = requirement or f"`{name}` has the right value"
        if self._missing(name, requirement, weight):
            return False
        value = self._namespace[name]
        if isinstance(value, np.ndarray) or isinstance(target, np.ndarray):
            ok = bool(np.array_equal(np.asarray(value), np.asarray(target)))
        else:
            ok = bool(value == target)
        message = "" if ok else f"`{name}` = {fmt(value)} is not right"
        self.results.append(Result(requirement, ok, weight, message, "" if ok else hint))
        return ok

    def require(self, condition: bool, requirement: str, *, failure: str = "",
                hint: str = "", weight: float = 1.0) -> bool:
        """Require a condition on the learner's answer, e.g. a measured behaviour.

        requirement: what is asked, in words; failure: what was observed instead.
        """
        ok = bool(condition)
        self.results.append(Result(requirement, ok, weight, "" if ok else (failure or "not met"),
                                   "" if ok else hint))
        return ok

    # -- scoring and feedback -----------------------------------------------------------
    @property
    def score(self) -> float:
        """Points earned: ``points`` times the weight share of requirements met."""
        total = sum(r.weight for r in self.results)
        if not total:
            return 0.0
        earned = sum(r.weight for r in self.results if r.passed)
        return round(self.points * earned / total, 2)

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(r.passed for r in self.results)

    def text(self) -> str:
        head = f"Exercise {self.number} · {self.title}: {fmt(self.score)}/{fmt(self.points)} points"
        lines = [("✔ " if self.passed else "✘ ") + head]
        for r in self.results:
            lines.append(f"  {'✔' if r.passed else '✘'} {r.requirement}")
            if r.message:
                lines.append(f"      {r.message}")
            if r.hint:
                lines.append(f"      hint: {r.hint}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        color = "#2e7d32" if self.passed else "#c62828"
        items = []
        for r in self.results:
            extra = "".join(
                f"<div style='margin-left:1.5em'>{label}{html.escape(t)}</div>"
                for label, t in (("", r.message), ("<i>hint:</i> ", r.hint)) if t)
            items.append(f"<div>{'✔' if r.passed else '✘'} {html.escape(r.requirement)}{extra}</div>")
        return (
            f'<div style="border:1px solid {color};border-left:6px solid {color};padding:4px 8px;'
            f'margin:4px 0;font-family:sans-serif;font-size:90%"><b style="color:{color}">'
            f'Exercise {html.escape(self.number)} · {html.escape(self.title)}: '
            f'{fmt(self.score)}/{fmt(self.points)} points</b>{"".join(items)}</div>'
        )

    def record(self) -> dict[str, Any]:
        """The grading outcome as a JSON-serialisable dict (the grades-log format)."""
        return {
            "notebook": reporting.notebook_name(),
            "exercise": self.number,
            "title": self.title,
            "points": self.points,
            "score": self.score,
            "results": [{"requirement": r.requirement, "passed": r.passed, "message": r.message}
                        for r in self.results],
        }

    def __enter__(self) -> Exercise:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> bool:
        __tracebackhide__ = True
        if error is not None and not isinstance(error, Exception):
            return False  # KeyboardInterrupt, SystemExit: not the learner's answer
        if error is not None:
            reason = str(error) if isinstance(error, ExerciseFailed) else (
                f"checking your answer raised {type(error).__name__}: {error}")
            self.results.append(Result("your answer can be checked", False,
                                       max(1.0, sum(r.weight for r in self.results)), reason))
        if not self.results:
            raise RuntimeError(f"exercise {self.number} states no requirement to grade")
        reporting.append("LABKIT_GRADES", self.record())
        reporting.show(self.text(), self._repr_html_())
        if not self.passed:
            raise ExerciseFailed(self.text()) from None
        return error is None


def exercise(number: str, title: str, *, points: float = 1) -> Exercise:
    """Start grading exercise ``number`` (e.g. ``"1.2"``) worth ``points``.

    Use as ``with labkit.exercise(...) as ex:`` and state requirements with
    :meth:`Exercise.close`, :meth:`Exercise.equal` and :meth:`Exercise.require`; the
    learner's variables are read from the namespace of the calling cell.
    """
    if points <= 0:
        raise ValueError("an exercise must be worth a positive number of points")
    namespace = sys._getframe(1).f_globals  # the notebook's namespace: where answers live
    return Exercise(str(number), title, points, namespace)
