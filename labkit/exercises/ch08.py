"""Checkers of chapter 08 (kinematic drive) on ``models/hand.xml``, and the constants and
measurements the chapter shares with them: the glove vector :data:`GLOVE`, the fist goal
:data:`CLOSE` and :func:`finger_gaps`.  The checkers read nothing but the learner's answers.

Units: hinge joints in rad (rates rad/s), the lift slide in m; distances in m.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType

import mujoco
import numpy as np

from .. import kinematic
from ..display import fmt
from ..models import load
from .answers import INTEGER, NUMBER, mapping
from .core import Exercise, ExerciseFailed, checker

__all__ = ["CLOSE", "FORWARD", "GLOVE", "close_time", "finger_gaps", "glove_targets", "projected_close",
           "reversed_channels"]

CLOSE = MappingProxyType({"index_mcp": 1.5, "index_pip": 1.6, "middle_mcp": 1.5, "middle_pip": 1.6,
                          "thumb_mcp": 1.4})
"""The fist: every flexion leader at its upper limit (rad); mimic joints follow."""

GLOVE = (51, 200, 90, 180, 60, 255, 10)
"""Exercise 8.1's glove commands, 0–255, in the driver's channel order (``Driver.active``:
lift, index_mcp, index_pip, middle_mcp, middle_pip, thumb_yaw, thumb_mcp)."""

FORWARD = ("lift", "thumb_yaw")
"""The channels that run forwards (0 = bottom of the range); every flexion is reversed (255 = open)."""


def reversed_channels(active: Sequence[str]) -> list[bool]:
    """For each channel named in ``active``: True if it runs backwards (a flexion)."""
    return [name not in FORWARD for name in active]


def glove_targets(commands: Sequence[float] = GLOVE) -> dict[str, float]:
    """The joint targets (rad, m for the lift) the hand's driver maps ``commands`` to: one per
    driven joint, mimic joints included."""
    model, data = load("hand")
    driver = kinematic.Driver(model, data)
    return driver.command(list(commands), reverse=reversed_channels(driver.active))


@checker("8.1", "Map a command vector to joint targets", points=2, answers={"targets": mapping(NUMBER)})
def _glove(ex: Exercise) -> None:
    expected = glove_targets()
    answer = ex.value("targets")
    keys_right = set(answer) == set(expected)
    ex.require(keys_right, "`targets` is a dict with one entry per driven joint (10, mimic joints included)",
               failure=f"its keys are {sorted(answer)}",
               hint="the mimic joints are the couplings' followers: apply them after the active joints")
    if keys_right:
        wrong = [n for n in expected if not np.isclose(answer[n], expected[n], rtol=1e-9, atol=1e-12)]
        ex.require(not wrong, "every target is right", failure=f"wrong for: {', '.join(wrong)}",
                   hint="reversed channels: target = hi − c/255·(hi − lo); lift and thumb_yaw run forwards; "
                        "a mimic is ratio × its leader")


def close_time(slew: float, limit: float = 4.0) -> float:
    """Seconds the hand's driver needs, without projection, to apply :data:`CLOSE` from the
    open hand with every hinge slewed at ``slew`` rad/s; a close slower than ``limit``
    seconds is stopped there and reported as ``limit``."""
    model, data = load("hand")
    driver = kinematic.Driver(model, data, slew=float(slew), project=False)
    driver.set_goal(CLOSE)
    steps, most = 0, round(limit / driver.dt)
    while driver.applied != driver.goal and steps < most:
        driver.step()
        steps += 1
    return steps * driver.dt


@checker("8.2", "Choose a slew rate for a gentle close", points=2, answers={"gentle_slew": NUMBER})
def _gentle(ex: Exercise) -> None:
    slew = ex.value("gentle_slew")
    if slew <= 0:
        raise ExerciseFailed(f"`gentle_slew` = {fmt(slew)}: a slew rate is a speed in rad/s and must be "
                             "positive")
    seconds = close_time(slew)
    ex.require(0.8 <= seconds <= 1.0, "a full close takes 0.8–1.0 s",
               failure=f"it takes {fmt(seconds, unit='s')}" + (" or more" if seconds >= 4.0 else ""),
               hint="time = range / rate for each joint; the joint with the longest range arrives last")


FINGERS = ("index", "middle", "thumb")


def finger_gaps(model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
    """Distance (m) from each finger (index, middle, thumb: the nearest of the geoms whose name
    starts with the finger's name) to the rod, as ``mj_geomDistance`` measures it (negative:
    overlap; 0.05 when farther than 5 cm).  Shape (3,)."""
    rod, out = model.geom("rod").id, []
    for finger in FINGERS:
        geoms = [g for g in range(model.ngeom) if model.geom(g).name.startswith(finger)]
        out.append(min(mujoco.mj_geomDistance(model, data, g, rod, 0.05, np.zeros(6)) for g in geoms))
    return np.array(out)


MAX_ITERATIONS = 64


def projected_close(tolerance: float, iterations: int, steps: int = 300) -> tuple[float, np.ndarray, int]:
    """Close the hand on the rod at 5 rad/s for ``steps`` steps with projection (``tolerance``
    m, ``iterations`` halvings); return the worst penetration of any step (m), the final
    :func:`finger_gaps` (m, shape (3,)) and the most evaluations one step cost."""
    model, data = load("hand")
    tuned = kinematic.Driver(model, data, tolerance=float(tolerance), iterations=int(iterations))
    tuned.set_goal(CLOSE)
    runs = tuned.run(steps)
    return (max(r.penetration for r in runs), finger_gaps(model, data), max(r.evaluations for r in runs))


@checker("8.3", "Tolerance and iterations for a projection budget", points=3,
         answers={"tolerance": NUMBER, "iterations": INTEGER})
def _projection(ex: Exercise) -> None:
    tolerance, iterations = ex.value("tolerance"), ex.value("iterations")
    if tolerance < 0:
        raise ExerciseFailed(f"`tolerance` = {fmt(tolerance)}: it is a penetration depth in metres, ≥ 0")
    if not 0 <= iterations <= MAX_ITERATIONS:
        raise ExerciseFailed(f"`iterations` = {iterations}: choose a whole number from 0 to {MAX_ITERATIONS} "
                             "(a blocked joint costs 1 + iterations trials per step)")
    worst, gaps, most = projected_close(tolerance, iterations)
    ex.require(worst <= 1e-4, "penetration never exceeds 0.1 mm",
               failure=f"it reached {fmt(worst * 1000)} mm",
               hint="the tolerance is the depth the fingers rest at")
    ex.require(np.all(np.abs(gaps) <= 1.5e-4), "every finger ends within 0.15 mm of the rod",
               failure=f"distances {fmt(gaps * 1000)} mm",
               hint="too few halvings stop a finger short of contact")
    ex.require(most <= 40, "no step costs more than 40 evaluations", failure=f"the worst step cost {most}",
               hint="a blocked joint costs 1 + iterations trials; five can be blocked at once")
