"""Exercises: answers as data, checked by code in labkit, with immediate feedback.

A notebook poses an exercise in three cells: the question (markdown), the learner's
answer cell (the reference answer between ``### BEGIN SOLUTION`` and ``### END SOLUTION``
lines, the nbgrader convention) and a feedback cell::

    labkit.exercise("1.3")

The feedback cell reads the exercise's declared answer variables (here ``rho``) from the
notebook, turns them into JSON data, and runs the exercise's checker from
``labkit.exercises.ch01`` on that data: requirements met and missed, a hint, points.  A
missed requirement raises :class:`ExerciseFailed`, so a wrong reference solution fails
CI; in a notebook its error output is one line, under the feedback box, with no
traceback.  ``labkit grade`` runs the very same checker on the same data, collected from
the student's sandboxed kernel by :func:`collect` and scored in a separate process, so
nothing a student writes in the notebook can change how an answer is scored.

Under nbgrader (``nbgrader autograde`` or ``validate``) the feedback cell follows
nbgrader's convention for partial credit instead: it shows the feedback and returns the
score as the cell's result, which nbgrader takes as the cell's points (see
:func:`exercise`).

A lesson cell that uses an answer not written yet (in a practice copy, say) fails with a
NameError; after :func:`labkit.setup` it is shown as one line naming the exercise whose
answer the name is (:func:`explain_missing_answers`), not as a traceback.

Checkers live in one module per chapter (``ch00`` … ``ch11``); see :mod:`.core` for how
one is written and :mod:`.answers` for the kinds of answer.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
import warnings
from collections.abc import Iterator
from typing import Any

from .. import reporting
from ..display import fmt
from .answers import encode
from .core import Exercise, ExerciseFailed, NotAnswered, Param, Spec, chapter_specs, checker, spec
from .variants import copy_of, given, numbers_in

__all__ = [
    "ANSWERS_MIME",
    "NBGRADER_MODES",
    "Exercise",
    "ExerciseFailed",
    "NotAnswered",
    "Param",
    "Spec",
    "answers_of",
    "chapter_specs",
    "checker",
    "collect",
    "exercise",
    "explain_missing_answers",
    "given",
    "nbgrader_mode",
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


NBGRADER_MODES = ("autograde", "validate")
"""The values nbgrader gives ``NBGRADER_EXECUTION`` while it runs a notebook."""


def nbgrader_mode() -> str | None:
    """``"autograde"`` or ``"validate"`` while nbgrader runs the notebook, else None.

    nbgrader sets ``NBGRADER_EXECUTION`` in its own process around the execution
    (``utils.setenv(NBGRADER_EXECUTION='autograde')`` in ``nbgrader/converters/autograde.py``,
    ``NBGRADER_EXECUTION='validate'`` in ``nbgrader/validator.py``, nbgrader 0.9), and the
    kernel it starts inherits the environment.
    """
    mode = os.environ.get("NBGRADER_EXECUTION", "")
    return mode if mode in NBGRADER_MODES else None


def exercise(number: str) -> float | None:
    """Check exercise ``number`` (e.g. ``"1.3"``) on the calling notebook's answers and
    show the feedback.

    Raises :class:`ExerciseFailed` (its message is the feedback) when a requirement is
    not met; returns None, so the cell shows only the feedback.  In a notebook the feedback
    is shown once, as the box: the cell's error output is one line naming the exercise and
    its score, with no traceback (:meth:`ExerciseFailed._render_traceback_`).  The cell
    still fails, which stops Run All, nbval and CI on a wrong reference solution; the
    learner's copy (``labkit student``) tags its feedback cells ``raises-exception``, so
    there Run All goes on to the next cells.

    Under nbgrader (:func:`nbgrader_mode`) it never raises for an answer: it shows the
    feedback and returns the score, a float, as the cell's result, because nbgrader gives a
    grade cell whose result is a number that many points, and 0 for an error or any stderr
    output (``determine_grade`` in ``nbgrader/utils.py``).  ``autograde`` also runs the
    hidden requirements, as ``labkit grade`` does, so both give the same points;
    ``validate`` runs what the learner's own feedback cell runs.

    Example: ``labkit.exercise("1.3")`` in the cell after the answer cell.
    """
    __tracebackhide__ = True
    namespace = sys._getframe(1).f_globals  # the notebook's namespace: where answers live
    mode = nbgrader_mode()
    if mode is not None:
        return _nbgrader_feedback(number, namespace, hidden=mode == "autograde")
    found = spec(number)
    graded = found.grade(answers_of(number, namespace), values=numbers_in(namespace, found.id))
    reporting.publish(graded.text(), graded._repr_html_())
    if not graded.passed:
        # the box above is the feedback; in IPython the error shows only this line (see
        # ExerciseFailed._render_traceback_), elsewhere the message is the whole feedback
        shown = (f"Exercise {graded.number} is not solved yet ({fmt(graded.score)}/"
                 f"{fmt(graded.points)} points): the feedback above says what to change")
        raise ExerciseFailed(graded.text(), shown=shown)
    return None


def _nbgrader_feedback(number: str, namespace: dict[str, Any], *, hidden: bool) -> float:
    """Score exercise ``number`` as ``labkit grade`` does, show the feedback, return the score."""
    with _stderr_kept() as written:
        found = spec(number)  # importing the chapter's checkers may warn too
        try:
            answers = answers_of(number, namespace)
        except Exception as exc:  # as in labkit grade: answers that cannot be read score as missing
            answers = {"__error__": f"{type(exc).__name__}: {exc}"[:500]}
        # nbgrader runs no labkit code outside the student's kernel, so it can only check the
        # numbers the copy carries; `labkit grade` and Gradescope derive them from the secret
        graded = found.grade(answers, hidden=hidden, values=numbers_in(namespace, found.id))
    reporting.publish(graded.text(), graded._repr_html_())
    if written:
        # shown on stdout: on stderr it would cost the exercise all its points
        print("while checking, this was written to stderr:\n" + "\n".join(written).rstrip())
    return float(graded.score)


@contextlib.contextmanager
def _stderr_kept() -> Iterator[list[str]]:
    """Keep what is written to stderr inside the block (Python's ``sys.stderr``, warnings,
    and C libraries writing to file descriptor 2, which ipykernel forwards as a stderr
    stream) and put it in the yielded list when the block ends.

    nbgrader scores a grade cell 0 as soon as it has any stderr output, so a numpy
    ``RuntimeWarning`` or a MuJoCo message inside a checker must not reach stderr there.
    """
    written: list[str] = []
    buffer = io.StringIO()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no file descriptor 2 (a detached process): nothing to redirect
        saved = None
    with tempfile.TemporaryFile() as low:
        if saved is not None:
            os.dup2(low.fileno(), 2)
        try:
            with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stderr(buffer):
                yield written
        finally:
            if saved is not None:
                os.dup2(saved, 2)
                os.close(saved)
            low.seek(0)
            written += [text for text in (buffer.getvalue(), low.read().decode(errors="replace")) if text]
            written += [warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line)
                        for w in caught]


def collect(number: str) -> None:
    """Hand exercise ``number``'s answers to the grader (used by ``labkit grade``, which
    puts this call where the feedback cell stood): they are displayed as
    :data:`ANSWERS_MIME` output, which the grader's runner reads."""
    namespace = sys._getframe(1).f_globals
    try:
        payload = {"exercise": number, "answers": answers_of(number, namespace)}
    except Exception as exc:  # an answer whose conversion crashes is an answer that failed
        payload = {"exercise": number, "error": f"{type(exc).__name__}: {exc}"[:500]}
    try:  # the numbers the copy claims: only compared with the student's own, never scored on
        claimed = numbers_in(namespace, number)
        payload["variant"] = json.loads(json.dumps(claimed, allow_nan=False)) if claimed else None
        payload["copy"] = copy_of(namespace)         # whose handout it says it is
    except (TypeError, ValueError, OverflowError):
        payload["variant"] = {"__error__": "the copy's numbers cannot be read"}
    from IPython.display import display

    display({ANSWERS_MIME: payload, "text/plain": f"[answers of exercise {number} collected]"}, raw=True)


# -- a lesson cell that uses an answer not written yet -------------------------------------------
def _chapters() -> list[int]:
    """The chapters that have checkers here (modules ``chNN``)."""
    import pkgutil

    return sorted(int(m.name[2:]) for m in pkgutil.iter_modules(__path__)
                  if m.name[:2] == "ch" and m.name[2:].isdigit())


def _current_chapter() -> int | None:
    """The chapter of the notebook this kernel runs, where the environment says which:
    ``LABKIT_NOTEBOOK`` (labkit's runs) or ``JPY_SESSION_NAME`` (JupyterLab's kernels)."""
    for key in ("LABKIT_NOTEBOOK", "JPY_SESSION_NAME"):
        stem = os.path.basename(os.environ.get(key, ""))
        if stem[:2].isdigit():
            return int(stem[:2])
    return None


def _answer_owners(name: str) -> list[Spec]:
    """The exercises whose answer variables include ``name``: only the current notebook's
    chapter's where the environment names it (:func:`_current_chapter`; a lesson variable of
    one chapter may be another chapter's answer), else every chapter's."""
    current = _current_chapter()
    chapters = [current] if current is not None else _chapters()
    return [s for c in chapters for s in chapter_specs(c) if name in s.answers]


def _missing_answer(shell: Any, etype: type, value: BaseException, tb: Any,
                    tb_offset: int | None = None) -> None:
    """IPython's handler for NameError (:func:`explain_missing_answers`)."""
    name = getattr(value, "name", None)
    # a global name that is not defined: not an UnboundLocalError (a subclass) nor a closure's
    # free variable, which are about a function's own variables
    unbound = (etype is NameError and isinstance(name, str)
               and str(value) == f"name '{name}' is not defined")
    owners = _answer_owners(name) if unbound else []
    if not owners:
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset, running_compiled_code=True)
        return
    shell._get_exc_info((etype, value, tb))   # sys.last_*: %debug and %tb see this error
    which = " or ".join(f"exercise {s.id} · {s.title}" for s in owners)
    shell._showtraceback(etype, value, [
        f"NameError: this cell uses `{name}`, the answer to {which}: write that answer "
        f"(and run its cell) first"])


def explain_missing_answers() -> bool:
    """Show a NameError whose name is an exercise's answer variable as one line that names
    the exercise (``NameError: this cell uses `answer`, the answer to exercise 9.4 · ...``)
    instead of a traceback; any other NameError shows as before.  The cell still fails.
    :func:`labkit.setup` calls it.  False (nothing changed) outside IPython."""
    if "IPython" not in sys.modules:
        return False
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        return False
    shell.set_custom_exc((NameError,), _missing_answer)
    return True
