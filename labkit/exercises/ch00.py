"""Checkers of chapter 00 (start here): the pendulum of ``models/pendulum.xml``."""

from __future__ import annotations

import mujoco
import numpy as np

from .. import models
from ..display import fmt
from ..models import load
from ..recording import record
from .answers import NUMBER
from .core import Exercise, checker

RELEASE = 0.5          # rad: the keyframe "tilted"
LONG_ROD = 2.0         # m: exercise 0.2's bob hangs this far below the hinge


def _pendulum_facts() -> tuple[float, float, float]:
    """(L, I, g) of the course pendulum: bob depth (m), inertia about the hinge (kg·m²),
    gravity (m/s²), read from the compiled model."""
    model, _ = load("pendulum")
    length = -model.geom("bob").pos[2]
    return float(length), float(model.dof_M0[0]), float(-model.opt.gravity[2])


def _period(model: mujoco.MjModel, data: mujoco.MjData, seconds: float) -> float:
    """Mean period (s) of the hinge ``swing`` from its zero crossings over ``seconds``."""
    swing = record(model, data, {"angle": data.joint("swing").qpos}, duration=seconds)
    return float(np.diff(swing.crossings("angle")).mean())


@checker("0.1", "Read a site position with named access", points=1, answers={"tip_height": NUMBER})
def _read_site(ex: Exercise) -> None:
    length, _, _ = _pendulum_facts()
    _, data = load("pendulum", keyframe="tilted")
    hinge = data.joint("swing").qpos[0]
    ex.close("tip_height", -length * np.cos(hinge), rtol=1e-9, unit="m",
             hint="data.site(name).xpos holds the site's world position (x, y, z)",
             mistakes={-length: "that is the height of the bob when it hangs straight down",
                       length * np.sin(hinge): "that is the sideways (x) offset, not the height"})


def long_pendulum() -> tuple[mujoco.MjModel, mujoco.MjData]:
    """The course pendulum with its bob 2 m below the hinge, at the tilted keyframe."""
    spec = models.spec("pendulum")
    spec.geom("bob").pos = spec.site("tip").pos = [0, 0, -LONG_ROD]
    spec.geom("rod").fromto = [0, 0, 0, 0, 0, -LONG_ROD]
    spec.geom("floor").pos = [0, 0, -LONG_ROD - 0.2]      # the floor out of the way
    return load(spec, keyframe="tilted")


@checker("0.2", "Predict the period of a longer pendulum", points=2, answers={"long_period": NUMBER})
def _long_period(ex: Exercise) -> None:
    _, _, gravity = _pendulum_facts()
    measured = _period(*long_pendulum(), 7.0)
    short = _period(*load("pendulum", keyframe="tilted"), 3.0)
    # 0.5 %: the answer is a prediction by hand; the amplitude-series error is ~2e-5
    ex.close("long_period", measured, rtol=5e-3, unit="s",
             hint="the period grows with √L, and a 0.5 rad release is not a small angle",
             mistakes={2 * np.pi * np.sqrt(LONG_ROD / gravity): "that is the small-angle period of a point "
                       "mass; a 0.5 rad release swings noticeably slower",
                       2 * short: "the period does not double with a 4× longer rod"})


@checker("0.3", "Damp the pendulum", points=2, answers={"damping": NUMBER})
def _damp(ex: Exercise) -> None:
    damping = ex.value("damping")
    ex.require(damping >= 0, "the damping coefficient is not negative", failure=f"it is {fmt(damping)}",
               hint="negative damping feeds energy in")
    if damping < 0:
        return
    model, data = load("pendulum", keyframe="tilted")
    period = _period(model, data, 3.0)
    model, data = load("pendulum", keyframe="tilted")
    model.dof_damping[model.joint("swing").dofadr[0]] = damping
    swing = record(model, data, {"angle": data.joint("swing").qpos}, duration=3.0)
    # the amplitude at 3 s: the largest |angle| in the last half period (it holds one extremum)
    ratio = np.abs(swing["angle"][swing.t > 3.0 - period / 2]).max() / RELEASE
    ex.require(0.4 <= ratio <= 0.6, "amplitude after 3 s is 40–60 % of the release angle",
               failure=f"it is {fmt(100 * ratio)} %",
               hint="more damping decays faster; the decay rate is b/(2I) with I ≈ m L²")
