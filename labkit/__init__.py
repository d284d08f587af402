"""labkit: the teaching kernel of *MuJoCo by Experiment*.

Every notebook starts with::

    import labkit
    labkit.setup()

``import labkit`` is cheap and does not import MuJoCo: ``setup()`` must choose the GL
backend first.  The public names below are loaded on first use (PEP 562).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS = {
    "setup": "session",
    "BASELINE_MUJOCO": "session",
    "BaselineVersionWarning": "session",
    "GLUnavailable": "gl",
    "load": "models",
    "model_names": "models",
    "model_path": "models",
    "ModelError": "models",
    "compile_error": "models",
    "mujoco_warnings": "messages",
    "control_callback": "callbacks",
    "show": "rendering",
    "snapshot": "rendering",
    "video": "rendering",
    "record": "recording",
    "Recording": "recording",
    "plot": "plotting",
    "figure": "plotting",
    "check": "claims",
    "Claim": "claims",
    "ClaimFailed": "claims",
    "below": "claims",
    "above": "claims",
    "between": "claims",
    "header": "sources",
    "engine": "sources",
    "doc": "sources",
    "issue": "sources",
    "seed": "sources",
    "fmt": "formatting",
    "Source": "sources",
    "SourceError": "sources",
    "exercise": "exercises",
    "trace": "actuation",
    "explain": "actuation",
    "ExerciseFailed": "exercises",
}

__all__ = sorted(_EXPORTS)


_MODULES = frozenset({
    "actuation", "callbacks", "claims", "cli", "contact", "doctor", "exercises", "formatting",
    "gl", "grasp", "kinematic", "messages", "models", "plotting",
    "recording", "rendering", "reporting", "session", "solver", "sources",
})


def __getattr__(name: str) -> Any:
    if name in _MODULES:  # labkit.exercises etc. work without an explicit import
        return importlib.import_module(f"labkit.{name}")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'labkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"labkit.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


if TYPE_CHECKING:  # for editors and type checkers only
    # ruff: noqa: F401
    from .actuation import explain, trace
    from .callbacks import control_callback
    from .claims import Claim, ClaimFailed, above, below, between, check
    from .exercises import ExerciseFailed, exercise
    from .formatting import fmt
    from .gl import GLUnavailable
    from .messages import mujoco_warnings
    from .models import ModelError, compile_error, load, model_names, model_path
    from .plotting import figure, plot
    from .recording import Recording, record
    from .rendering import show, snapshot, video
    from .session import BASELINE_MUJOCO, BaselineVersionWarning, setup
    from .sources import Source, SourceError, doc, engine, header, issue, seed
