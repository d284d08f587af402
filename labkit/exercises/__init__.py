"""Exercises: answers as data, checked by code in labkit, with immediate feedback.

A notebook poses an exercise in three cells: the question (markdown), the learner's
answer cell (the reference answer between ``### BEGIN SOLUTION`` and ``### END SOLUTION``
lines, the nbgrader convention) and a feedback cell::

    labkit.exercise("1.3")

The feedback cell reads the exercise's declared answer variables (here ``rho``) from the
notebook, turns them into JSON data, and runs the exercise's checker from
``labkit.exercises.ch01`` on that data: requirements met and missed, a hint, points.  A
missed requirement raises :class:`ExerciseFailed`, so a wrong reference solution fails
CI.  ``labkit grade`` runs the very same checker on the same data, collected from the
student's sandboxed kernel by :func:`collect` and scored in a separate process, so
nothing a student writes in the notebook can change how an answer is scored.

Checkers live in one module per chapter (``ch00`` … ``ch09``); see :mod:`.core` for how
one is written and :mod:`.answers` for the kinds of answer.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from .. import reporting
from .answers import encode
from .core import Exercise, ExerciseFailed, Spec, chapter_specs, checker, spec

__all__ = [
    "ANSWERS_MIME",
    "Exercise",
    "ExerciseFailed",
    "Spec",
    "answers_of",
    "chapter_specs",
    "checker",
    "collect",
    "exercise",
    "spec",
]

ANSWERS_MIME = "application/vnd.labkit.answers+json"
"""The output type in which :func:`collect` hands answers to the grader."""


def answers_of(number: str, namespace: dict[str, Any]) -> dict[str, Any]:
    """Exercise ``number``'s answers in ``namespace`` as JSON data, read back from JSON
    (so that a notebook's feedback and the grader see identical values)."""
    found = spec(number)
    data = {name: encode(kind, namespace, name) for name, kind in found.answers.items()}
    return json.loads(json.dumps(data))


def exercise(number: str) -> None:
    """Check exercise ``number`` (e.g. ``"1.3"``) on the calling notebook's answers and
    show the feedback.

    Raises :class:`ExerciseFailed` (its message is the feedback) when a requirement is
    not met.  (Nothing is returned, so the cell shows only the feedback.)

    Example: ``labkit.exercise("1.3")`` in the cell after the answer cell.
    """
    __tracebackhide__ = True
    namespace = sys._getframe(1).f_globals  # the notebook's namespace: where answers live
    graded = spec(number).grade(answers_of(number, namespace))
    reporting.publish(graded.text(), graded._repr_html_())
    if not graded.passed:
        raise ExerciseFailed(graded.text())


def collect(number: str) -> None:
    """Hand exercise ``number``'s answers to the grader (used by ``labkit grade``, which
    puts this call where the feedback cell stood): they are displayed as
    :data:`ANSWERS_MIME` output, which the grader's runner reads."""
    namespace = sys._getframe(1).f_globals
    try:
        payload = {"exercise": number, "answers": answers_of(number, namespace)}
    except Exception as exc:  # an answer whose conversion crashes is an answer that failed
        payload = {"exercise": number, "error": f"{type(exc).__name__}: {exc}"[:500]}
    from IPython.display import display

    display({ANSWERS_MIME: payload, "text/plain": f"[answers of exercise {number} collected]"}, raw=True)
