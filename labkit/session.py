"""``labkit.setup()``: the first call of every notebook."""

from __future__ import annotations

import os
import platform
import random
import sys
import warnings
from dataclasses import dataclass

from . import display, gl
from .errors import BaselineVersionWarning

__all__ = ["BASELINE_MUJOCO", "BaselineVersionWarning", "Session", "setup"]

#: The MuJoCo version every claim in the course was written against and checked on.
BASELINE_MUJOCO = "3.17.0"


KERNEL = "mujoco-by-experiment"
"""The Jupyter kernel the course notebooks name (``./run.sh`` installs it)."""




@dataclass(frozen=True)
class Session:
    """What :func:`setup` chose.

    labkit, mujoco, baseline: version strings.
    backend: the GL backend (see :class:`labkit.gl.Backend`).
    renderer: the OpenGL renderer string (``"unavailable"`` when rendering is not).
    seed: the seed given to numpy's and Python's global RNGs.
    rng: a fresh ``numpy.random.Generator`` seeded with ``seed``.
    """

    labkit: str
    mujoco: str
    baseline: str
    backend: gl.Backend
    renderer: str
    seed: int
    rng: object

    @property
    def banner(self) -> str:
        version = f"MuJoCo {self.mujoco}"
        if self.mujoco != self.baseline:
            version += f" (NOT the course baseline {self.baseline})"
        else:
            version += " (baseline)"
        return (
            f"labkit {self.labkit} · {version} · Python {platform.python_version()} · "
            f"GL {self.backend.name}: {self.renderer}"
        )

    def __repr__(self) -> str:
        return f"<labkit session: {self.banner}>"

    def _ipython_display_(self) -> None:
        # setup() already printed the banner; as a cell's value, show nothing more.
        pass


def _renderer_string(backend: gl.Backend) -> str:
    """Create a throw-away GL context and read GL_RENDERER from it."""
    if not backend.usable:
        return "unavailable"
    import mujoco

    if not hasattr(mujoco, "GLContext"):
        return "unavailable (mujoco.GLContext missing: MUJOCO_GL/PYOPENGL_PLATFORM mismatch?)"
    try:
        context = mujoco.GLContext(1, 1)
        context.make_current()
        name = gl.renderer_name(backend)
        context.free()
    except Exception as exc:  # any driver failure becomes a readable banner entry
        return f"unavailable ({type(exc).__name__}: {exc})"
    return name or "unavailable (no current GL context)"


def setup(*, seed: int = 0, precision: int = 4, quiet: bool = False) -> Session:
    """Prepare a notebook: GL backend, print precision, RNG seeds, alt text on figures, a
    one-line banner.

    Call it before anything imports ``mujoco``.  ``seed`` seeds numpy's and Python's
    global RNGs; ``precision`` is numpy's print precision (digits).  Prints the banner
    unless ``quiet``; warns (does not fail) when MuJoCo is not the baseline version.

    Example: ``import labkit; labkit.setup()`` as a notebook's first cell.
    """
    __tracebackhide__ = True
    if "mujoco" in sys.modules and "MUJOCO_GL" not in os.environ and platform.system() == "Linux":
        warnings.warn(
            "mujoco was imported before labkit.setup(), so labkit could not choose a GL "
            "backend; rendering may fail. Restart the kernel and run labkit.setup() first.",
            stacklevel=2,
        )
    backend = gl.choose()
    import mujoco
    import numpy as np

    from . import __version__

    np.set_printoptions(precision=precision, suppress=True)
    display.show_figures()   # matplotlib Figures shown with alt text (labkit.display)
    from .exercises import explain_missing_answers

    explain_missing_answers()   # an answer not yet written: one line naming it, not a traceback
    np.random.seed(seed)
    random.seed(seed)
    session = Session(
        labkit=__version__,
        mujoco=mujoco.__version__,
        baseline=BASELINE_MUJOCO,
        backend=backend,
        renderer=_renderer_string(backend),
        seed=seed,
        rng=np.random.default_rng(seed),
    )
    if not quiet:
        print(session.banner)
    if session.mujoco != BASELINE_MUJOCO:
        warnings.warn(
            f"This course is checked against MuJoCo {BASELINE_MUJOCO}, but {session.mujoco} is "
            f"running; some claims may fail. Reinstall with ./run.sh (or pip install "
            f"mujoco=={BASELINE_MUJOCO}).",
            BaselineVersionWarning,
            stacklevel=2,
        )
    for fix in backend.fixes:
        warnings.warn(fix, stacklevel=2)
    if not backend.usable:
        warnings.warn(gl.failure_message(backend), stacklevel=2)
    return session
