"""labkit: the teaching kernel of *MuJoCo by Experiment*.

Every notebook starts with::

    import labkit
    labkit.setup()

``import labkit`` does not import MuJoCo: :func:`setup` chooses the GL backend first.

The names a chapter uses (the code behind each is one hop away, in the module named):

======================================  =====================================================
``setup``, ``BASELINE_MUJOCO``,          session: GL choice, banner, seeds, version check
``BaselineVersionWarning``
``GLUnavailable``                        gl: no headless OpenGL backend works
``load``, ``spec``, ``model_path``,      models: course models, files and MJCF strings, with
``model_names``, ``compile_error``,      errors that name the line and the fix
``ModelError``
``record``, ``Recording``,               recording: signals over time (MuJoCo's named access)
``activation``
``mujoco_warnings``,                     sim: the simulation loop and MuJoCo's two global hooks
``control_callback``
``show``, ``snapshot``, ``video``        rendering: images and videos, headless
``plot``, ``figure``, ``fmt``            display: plots and deterministic number formatting
``check``, ``below``, ``above``,         claims: source-traced assertions
``between``, ``near``, ``Claim``,
``ClaimFailed``
``sweep``, ``axes``                      axes: a rule swept along integrators, cones, solvers,
                                         joint and transmission types, ...: where it stops
``SourceError``                          sources: a cited source that does not resolve
``exercise``, ``ExerciseFailed``,        exercises: feedback from labkit's checkers; an
``given``                                exercise's numbers (a student's own in a handout)
``trace``, ``explain``                   actuation: the force chain of an actuator
``interactive``                          widgets: sliders that redraw a figure, stored with a
                                         picture of it for readers without a kernel
``audit``                                auditing: the course's lessons applied to any model
                                         (``labkit audit MODEL`` on the command line)
======================================  =====================================================

Every exception and warning is defined in labkit/errors.py.  Topic modules are used by
their name: ``labkit.solver`` (solref/solimp, the impedance figures), ``labkit.contact``
(filtering, contact tables), ``labkit.corpus`` (real robot models from two PyPI wheels),
``labkit.kinematic`` (kinematic drive), ``labkit.grasp``
(grasp trials), ``labkit.sim`` (the simulation loop), ``labkit.actuation`` (the force
chain in full, a servo's step response) and ``labkit.exercises`` (answers and their
checkers).  The instructor's
tools live in ``labkit.classroom``, which nothing here imports.
"""

from __future__ import annotations

import importlib

from . import actuation, axes, exercises, sim
from .actuation import explain, trace
from .axes import sweep
from .claims import Claim, ClaimFailed, above, below, between, check, near
from .display import figure, fmt, plot
from .exercises import ExerciseFailed, exercise, given
from .gl import GLUnavailable
from .models import ModelError, compile_error, load, model_names, model_path, spec
from .recording import Recording, activation, record
from .rendering import show, snapshot, video
from .session import BASELINE_MUJOCO, BaselineVersionWarning, setup
from .sim import control_callback, mujoco_warnings
from .sources import SourceError
from .widgets import interactive

__version__ = "0.2.0"

# Topic modules a chapter uses by name are imported on first use: ``import labkit`` then
# costs no more than the names above (measured by scripts/benchmark.py).
_TOPICS = frozenset({"auditing", "contact", "corpus", "grasp", "kinematic", "solver"})


def __getattr__(name: str) -> object:
    if name in _TOPICS:
        return importlib.import_module(f"labkit.{name}")
    if name == "audit":  # the function; its module is labkit.auditing
        return importlib.import_module("labkit.auditing").audit
    raise AttributeError(f"module 'labkit' has no attribute {name!r}")

__all__ = [
    "BASELINE_MUJOCO",
    "BaselineVersionWarning",
    "Claim",
    "ClaimFailed",
    "ExerciseFailed",
    "GLUnavailable",
    "ModelError",
    "Recording",
    "SourceError",
    "above",
    "activation",
    "actuation",
    "audit",
    "axes",
    "below",
    "between",
    "check",
    "compile_error",
    "contact",
    "control_callback",
    "corpus",
    "exercise",
    "exercises",
    "explain",
    "figure",
    "fmt",
    "given",
    "grasp",
    "interactive",
    "kinematic",
    "load",
    "model_names",
    "model_path",
    "mujoco_warnings",
    "near",
    "plot",
    "record",
    "setup",
    "show",
    "sim",
    "snapshot",
    "solver",
    "spec",
    "sweep",
    "trace",
    "video",
]
