"""Every exception and warning a learner meets from labkit, in one place.

Each message says what is wrong and what to do; the modules raising them import them
from here.
"""

from __future__ import annotations

__all__ = ["BaselineVersionWarning", "ClaimFailed", "CorpusUnavailable", "DriftError", "ExerciseFailed",
           "GLUnavailable", "ModelError", "NotAnswered", "SourceError", "TraceMismatch"]


class GLUnavailable(RuntimeError):
    """No OpenGL backend can render on this machine; the message says how to fix it."""


class BaselineVersionWarning(UserWarning):
    """The running MuJoCo is not the course's baseline; claims may not hold."""


class ModelError(ValueError):
    """An MJCF model could not be found or compiled; the message says where and why.

    mujoco: MuJoCo's own compiler message, as MuJoCo wrote it ("" when the model was not
    found); line: the MJCF line it points at, if any.
    """

    def __init__(self, message: str, mujoco: str = "", line: int | None = None):
        super().__init__(message)
        self.mujoco = mujoco
        self.line = line


class SourceError(LookupError):
    """A cited source does not exist in the installed MuJoCo (or is malformed)."""


class ClaimFailed(AssertionError):
    """A course claim did not hold on the running MuJoCo."""


class ExerciseFailed(AssertionError):
    """An exercise answer did not meet a requirement; the message is the feedback.

    The message, ``str(exc)``, is the whole feedback: it is what plain Python and pytest
    print, and what a notebook's error output carries as ``evalue`` (``labkit execute``,
    nbclient's ``CellExecutionError`` and the grader report that).  In IPython the feedback
    is shown once: IPython asks an exception with a ``_render_traceback_`` method for the
    lines to show in place of its traceback (``InteractiveShell.showtraceback``), and this
    one returns ``shown`` (set by :func:`labkit.exercise`, which has just displayed the
    feedback box: one line that names the exercise and its score) or, when the feedback
    was not displayed, the message itself; never labkit's frames.  The cell still fails,
    so Run All, nbval and CI stop there unless the cell is tagged ``raises-exception``.
    """

    def __init__(self, message: str = "", *, shown: str | None = None) -> None:
        super().__init__(message)
        self.shown = shown

    def _render_traceback_(self) -> list[str]:
        """The lines IPython shows for this exception instead of a traceback (never empty:
        JupyterLab shows ``ename: evalue``, the whole feedback again, for an empty one)."""
        if self.shown:
            return [self.shown]
        lines = str(self).splitlines() or [""]
        return [f"{type(self).__name__}: {lines[0]}", *lines[1:]]


class NotAnswered(NotImplementedError):
    """An exercise's answer cell still holds its stub; the message says what to write.

    A student or practice copy (``labkit student``, ``labkit practice``) replaces each
    reference solution by ``raise labkit.exercises.NotAnswered("Exercise N.M · <title>:
    replace this line with your answer (set x)")``.  In IPython it shows as that one line,
    with no traceback (``_render_traceback_``, as :class:`ExerciseFailed`); the cell still
    fails, so Run All stops there unless the cell is tagged ``raises-exception`` (practice
    copies tag their answer cells).  A subclass of ``NotImplementedError``: code that
    catches the builtin catches it too.
    """

    def _render_traceback_(self) -> list[str]:
        """The one line IPython shows instead of a traceback: ``NotAnswered: <message>``."""
        lines = str(self).splitlines() or ["this exercise is not answered yet"]
        return [f"{type(self).__name__}: {lines[0]}", *lines[1:]]


class TraceMismatch(AssertionError):
    """A stage of the force chain that labkit recomputed disagrees with MuJoCo's own array."""


class DriftError(RuntimeError):
    """``labkit drift`` cannot run a MuJoCo version (pip cannot install it, or its log is
    unreadable); the message gives the reason."""


class CorpusUnavailable(RuntimeError):
    """The real-model corpus (labkit.corpus) is neither cached nor downloadable; the message
    says how to get it."""
